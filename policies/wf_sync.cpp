// wf_sync: WF_SYNC at every sync-capable wake site ("the waker is about to sleep"). Only a hint:
// wake_affine_idle() then prefers the waker's CPU when the waker is alone there, but
// select_idle_sibling() still moves the wakee to an idle prev or scan hit. Wins when the LLC is
// busy (the pair stacks instead of waiting for a remote CPU); changes little on an idle LLC.
#include "policies/registry.h"

namespace wakesim {

namespace {
class WfSync final : public WakePolicy {
public:
    std::string name() const override { return "wf_sync"; }
    uint32_t site_flags(const WakeSite& site, uint32_t flags) const override {
        return site.sync_capable ? (flags | WF_SYNC) : flags;
    }
};
}  // namespace

const PolicyKind& wf_sync_policy() {
    static const PolicyKind k{"wf_sync", "WF_SYNC at every sync-capable wake site",
                              "long-standing WF_SYNC hint (wake_up_sync)", {}, true,
                              [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<WfSync>(); }};
    return k;
}

}  // namespace wakesim
