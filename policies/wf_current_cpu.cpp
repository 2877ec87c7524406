// wf_current_cpu: WF_CURRENT_CPU at request and reply wake sites (select_task_rq_fair returns
// this_cpu before wake_wide and the domain walk, when the waker's CPU is allowed). Origin: Andrei
// Vagin's seccomp series (2023, __wake_up_on_current_cpu / complete_on_current_cpu); proposed for
// the FUSE reply wake in "fuse: Wake requests on the same cpu" (Bernd Schubert, Oct 2025).
// Wins for strict request/reply handoffs (no IPI, warm caches, one CPU at high frequency); loses
// when the waker keeps running after the wake (the wakee then waits on a busy CPU).
#include "policies/registry.h"

namespace wakesim {

namespace {
class WfCurrentCpu final : public WakePolicy {
public:
    std::string name() const override { return "wf_current_cpu"; }
    uint32_t site_flags(const WakeSite& site, uint32_t flags) const override {
        if (site.role != SiteRole::request && site.role != SiteRole::reply) return flags;
        return (flags & ~uint32_t{WF_SYNC}) | WF_CURRENT_CPU;
    }
};
}  // namespace

const PolicyKind& wf_current_cpu_policy() {
    static const PolicyKind k{
        "wf_current_cpu", "WF_CURRENT_CPU at request and reply wake sites: wake on the waker's CPU",
        "seccomp sync mode (Vagin, 2023); 'fuse: Wake requests on the same cpu' (Schubert, Oct 2025)", {}, true,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<WfCurrentCpu>(); }};
    return k;
}

}  // namespace wakesim
