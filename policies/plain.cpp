// plain: today's kernel (v6.19). Every wake site passes the flags mainline passes (pipes WF_SYNC,
// FUSE request and reply plain wake_up), and select_task_rq_fair runs unmodified.
#include "policies/registry.h"

namespace wakesim {

namespace {
class Plain final : public WakePolicy {
public:
    std::string name() const override { return "plain"; }
};
}  // namespace

const PolicyKind& plain_policy() {
    static const PolicyKind k{"plain", "today's kernel (v6.19): mainline flags at every wake site", "mainline", {}, false,
                              [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<Plain>(); }};
    return k;
}

}  // namespace wakesim
