// migrate_disable_wait: the requester calls migrate_disable() while it waits for its reply (an
// idea from the FUSE threads), so select_task_rq() skips the fair class and the reply wakes it on
// the CPU it slept on. Wins when the requester's CPU stays free; loses when something else runs
// there (the requester cannot escape to an idle CPU).
#include "policies/registry.h"

namespace wakesim {

namespace {
class MigrateDisableWait final : public WakePolicy {
public:
    std::string name() const override { return "migrate_disable_wait"; }
    void on_block(Task& t, Time) override {
        if (t.role == TaskRole::requester) t.migration_disabled = true;
    }
    void on_run(Task& t, Time) override {
        if (t.role == TaskRole::requester) t.migration_disabled = false;
    }
};
}  // namespace

const PolicyKind& migrate_disable_wait_policy() {
    static const PolicyKind k{"migrate_disable_wait", "a requester cannot migrate while it waits for its reply",
                              "FUSE wakeup threads: migrate_disable() in request_wait_answer", {}, false,
                              [](const ParamValues&) -> std::unique_ptr<WakePolicy> {
                                  return std::make_unique<MigrateDisableWait>();
                              }};
    return k;
}

}  // namespace wakesim
