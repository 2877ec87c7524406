// prev_cpu: the WF_PREV_CPU idea from the FUSE wakeup threads: a wakee goes back to the CPU it
// last ran on, keeping its cache, instead of following the waker or an idle-CPU scan. Mode
// "always" returns prev whenever it is allowed; "if_idle" only when prev is idle (otherwise the
// kernel's path runs). Wins when the wakee's working set is large and prev is free; loses when
// prev is busy (the wakee queues behind another task).
#include "policies/registry.h"
#include "kernel/sched.h"

namespace wakesim {

namespace {

class PrevCpuRule final : public PlacementRule {
public:
    explicit PrevCpuRule(bool only_idle) : only_idle_(only_idle) {}
    std::string name() const override { return "prev_cpu"; }
    int early(const SelectCtx& c) const override {
        if (!c.p.allowed.test(c.prev)) return -1;
        if (only_idle_ && !c.sched.usable(c.prev)) return -1;
        return c.prev;
    }

private:
    bool only_idle_;
};

}  // namespace

void apply_prev_cpu(Policy& p, const PolicyArgs& a) {
    p.rules.push_back(std::make_shared<PrevCpuRule>(a.at("mode") == "if_idle"));
}

}  // namespace wakesim
