// no_sync: WF_SYNC dropped at every wake site, the opposite of wf_sync. It models the experiment
// of a reviewer in the reciprocal-sync thread ("sched/fair: Preserve wake-affine CPU for non-SMT
// reciprocal sync wakeups", LKML, Aug 2026) who turned every wake_up_interruptible_sync_poll()
// into the plain variant: pipes wake without the hint, so wake_affine_idle() no longer takes the
// waker's CPU when the waker is alone there, and wake_affine_weight() no longer discounts the
// waker's load. Loses where the hint stacked a pair that should stack (a busy LLC); on an idle
// LLC it changes little, since select_idle_sibling() already moved the wakee to an idle CPU.
#include "policies/registry.h"

namespace wakesim {

namespace {
class NoSync final : public WakePolicy {
public:
    std::string name() const override { return "no_sync"; }
    uint32_t site_flags(const WakeSite&, uint32_t flags) const override { return flags & ~static_cast<uint32_t>(WF_SYNC); }
};
}  // namespace

const PolicyKind& no_sync_policy() {
    static const PolicyKind k{"no_sync", "WF_SYNC dropped at every wake site (pipes wake as plain wake_up)",
                              "the no-sync experiment of the reciprocal-sync thread (LKML, Aug 2026)", {}, true,
                              [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<NoSync>(); }};
    return k;
}

}  // namespace wakesim
