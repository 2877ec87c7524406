// seccomp_current_cpu: WF_CURRENT_CPU at request and reply wake sites, on every transport
// (select_task_rq_fair returns this_cpu before wake_wide and the domain walk, when the waker's CPU
// is allowed). This is the seccomp user-notification synchronous mode: Andrei Vagin, "seccomp: add
// the synchronous mode for seccomp_unotify" (2023), where both the notification to the supervisor
// and its reply wake on the current CPU (__wake_up_on_current_cpu / complete_on_current_cpu). It is
// not the FUSE patch "fuse: Wake requests on the same cpu" (Bernd Schubert, Oct 2025), which sets
// WF_CURRENT_CPU only on the reply wake of a request that went through io-uring:
// fuse_wake_same_cpu. (This policy was called wf_current_cpu; that name is refused, naming both.)
// Wins for strict request/reply handoffs (no IPI, warm caches, one CPU at high frequency); loses
// when the waker keeps running after the wake (the wakee then waits on a busy CPU).
#include "policies/registry.h"

namespace wakesim {

namespace {
class SeccompCurrentCpu final : public WakePolicy {
public:
    std::string name() const override { return "seccomp_current_cpu"; }
    uint32_t site_flags(const WakeSite& site, uint32_t flags) const override {
        if (site.role != SiteRole::request && site.role != SiteRole::reply) return flags;
        return (flags & ~uint32_t{WF_SYNC}) | WF_CURRENT_CPU;
    }
};
}  // namespace

const PolicyKind& seccomp_current_cpu_policy() {
    static const PolicyKind k{
        "seccomp_current_cpu", "WF_CURRENT_CPU at request and reply wake sites on every transport (seccomp user notification): wake on the waker's CPU",
        "'seccomp: add the synchronous mode for seccomp_unotify' (Vagin, 2023); not the FUSE patch (fuse_wake_same_cpu)", {}, true,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<SeccompCurrentCpu>(); }};
    return k;
}

}  // namespace wakesim
