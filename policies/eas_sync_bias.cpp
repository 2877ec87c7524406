// eas_sync_bias: "NOUPSTREAM: ANDROID: sched: Unconditionally honor sync flag for energy-aware
// wakeups" (Chris Redpath, Arm, 2019-03-27, in the Android common kernels; its sync
// hint taken from Juri Lelli's "sched/fair: add tunable to force selection at cpu granularity").
// Inside find_energy_efficient_cpu, once the root domain is known not to be overutilized and
// before any energy estimate: a WF_SYNC wakeup whose waker is alone on its runqueue returns the
// waker's CPU, if the wakee is allowed there and fits it (task_fits_cpu(), uclamp included).
// Mainline feec ignores WF_SYNC. "Alone" counts runnable tasks as wake_affine_idle() does since
// delayed dequeue (nr_running - delayed == 1). It acts only where the wake carries WF_SYNC: pipe
// writes, or the /dev/fuse request wake when composed with `fuse_sync_request`.
// Wins: a binder- or pipe-style request/reply pair stays on one CPU, no idle CPU is woken, and the
// cache stays warm. Loses: a wakee that would fit a cheaper (little) CPU runs on the waker's big
// one, and a waker that does not sleep right after the wake shares its CPU with the wakee.
#include "kernel/sched.h"
#include "policies/registry.h"

namespace wakesim {

namespace {
class EasSyncBias final : public WakePolicy {
public:
    std::string name() const override { return "eas_sync_bias"; }
    int in_feec(const SelectCtx& c) override {
        const Scheduler& s = c.sched;
        if (!c.sync || !c.waker) return -1;
        if (s.nr_running(c.this_cpu) - s.nr_delayed(c.this_cpu) != 1) return -1;
        if (!c.p.allowed.test(c.this_cpu) || !s.task_fits_cpu(c.p, c.this_cpu)) return -1;
        return c.this_cpu;
    }
};
}  // namespace

const PolicyKind& eas_sync_bias_policy() {
    static const PolicyKind k{
        "eas_sync_bias",
        "EAS: a WF_SYNC wakee goes to the waker's CPU when the waker runs alone there and the wakee fits it",
        "'NOUPSTREAM: ANDROID: sched: Unconditionally honor sync flag for energy-aware wakeups' (Chris Redpath, "
        "2019; Android common kernels)",
        {}, false /* places only: composes with a flag policy such as fuse_sync_request */,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<EasSyncBias>(); }};
    return k;
}

}  // namespace wakesim
