// reciprocal_sync: "[PATCH v4] sched/fair: Preserve wake-affine CPU for non-SMT reciprocal sync
// wakeups" (Shubhang Kaushik, Ampere, Aug 2026; not merged). In the affine branch of
// select_task_rq_fair: a WF_SYNC wakeup on a non-SMT system, where wake_affine() chose the
// waker's CPU, the wakee last woke the waker, and the waker is the only runnable task there,
// returns the waker's CPU before select_idle_sibling(). On asymmetric systems only if the wakee
// fits. Wins for strict ping-pong pairs on idle non-SMT LLCs (perf bench sched pipe on Altra:
// 3.985 -> 3.187 us/op); never fires with SMT active.
#include "kernel/sched.h"
#include "policies/registry.h"

namespace wakesim {

namespace {
class ReciprocalSync final : public WakePolicy {
public:
    std::string name() const override { return "reciprocal_sync"; }
    int after_wake_affine(const SelectCtx& c, int new_cpu) override {
        const Scheduler& s = c.sched;
        if (!c.sync || !c.waker || s.domains().smt_active() || new_cpu != c.this_cpu) return -1;
        if (c.p.last_wakee != c.waker->id) return -1;
        if (s.nr_running(c.this_cpu) - s.nr_delayed(c.this_cpu) != 1) return -1;
        if (s.domains().asym_active() && !s.task_fits_cpu(c.p, c.this_cpu)) return -1;
        return c.this_cpu;
    }
};
}  // namespace

const PolicyKind& reciprocal_sync_policy() {
    static const PolicyKind k{
        "reciprocal_sync", "non-SMT WF_SYNC ping-pong pairs stay on the waker's CPU",
        "[PATCH v4] sched/fair: Preserve wake-affine CPU for non-SMT reciprocal sync wakeups (Kaushik, Aug 2026)", {},
        false, [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<ReciprocalSync>(); }};
    return k;
}

}  // namespace wakesim
