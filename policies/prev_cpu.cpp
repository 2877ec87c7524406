// prev_cpu: the WF_PREV_CPU idea from the FUSE wakeup threads: a wakee goes back to the CPU it
// last ran on, keeping its cache, instead of following the waker or an idle-CPU scan. Mode
// "always" returns prev whenever it is allowed; "if_idle" only when prev is idle (otherwise the
// kernel's path runs). Wins when the wakee's working set is large and prev is free; loses when
// prev is busy (the wakee queues behind another task).
#include "kernel/sched.h"
#include "policies/registry.h"

namespace wakesim {

namespace {
class PrevCpu final : public WakePolicy {
public:
    explicit PrevCpu(bool only_idle) : only_idle_(only_idle) {}
    std::string name() const override { return "prev_cpu"; }
    int early(const SelectCtx& c) override {
        if (!c.p.allowed.test(c.prev)) return -1;
        if (only_idle_ && !c.sched.usable(c.prev)) return -1;
        return c.prev;
    }

private:
    bool only_idle_;
};
}  // namespace

const PolicyKind& prev_cpu_policy() {
    static const PolicyKind k{
        "prev_cpu", "the wakee goes back to its previous CPU (WF_PREV_CPU idea)", "FUSE wakeup threads",
        {{"mode", ParamType::choice, "always", 0, 0, {"always", "if_idle"}, "always return prev, or only when prev is idle"}},
        false,
        [](const ParamValues& v) -> std::unique_ptr<WakePolicy> {
            return std::make_unique<PrevCpu>(v.choice("mode") == "if_idle");
        }};
    return k;
}

}  // namespace wakesim
