// sched_idle_server: server threads (FUSE ring threads, pipe servers) run SCHED_IDLE. A CPU that
// runs only SCHED_IDLE tasks counts as idle for placement (sched_idle_cpu), and any normal wakee
// preempts them at once. Discussed for fuse-over-io-uring ring threads. Wins when requesters
// should never wait behind servers; loses when the server's work is on the critical path.
#include "policies/registry.h"

namespace wakesim {

namespace {
class SchedIdleServer final : public WakePolicy {
public:
    std::string name() const override { return "sched_idle_server"; }
    void on_task_created(Task& t) override {
        if (t.role == TaskRole::server) t.policy = SchedPolicy::idle;
    }
};
}  // namespace

const PolicyKind& sched_idle_server_policy() {
    static const PolicyKind k{"sched_idle_server", "server threads run SCHED_IDLE",
                              "fuse-over-io-uring ring thread discussion", {}, false,
                              [](const ParamValues&) -> std::unique_ptr<WakePolicy> {
                                  return std::make_unique<SchedIdleServer>();
                              }};
    return k;
}

}  // namespace wakesim
