// fuse_sync_request: "fuse: give wakeup hints to the scheduler" (Pradeep P V K, Dec 2021; carried
// in Android) and its 2026 rework "... for synchronous requests" (Xuewen Yan, RFC): a synchronous
// request is marked FR_SYNC_WAKEUP in __fuse_request_send, and fuse_dev_queue_req then wakes the
// /dev/fuse worker with wake_up_sync (WF_SYNC), since the requester sleeps in
// request_wait_answer right after. Only a hint: the FIFO exclusive wake still picks the worker
// that has waited longest, and select_idle_sibling() still prefers an idle CPU. Meant for
// big.LITTLE phones, where the worker otherwise stays on a little core. io-uring requests and
// the reply wake are unchanged.
#include "policies/registry.h"

namespace wakesim {

namespace {
class FuseSyncRequest final : public WakePolicy {
public:
    std::string name() const override { return "fuse_sync_request"; }
    uint32_t site_flags(const WakeSite& site, uint32_t flags) const override {
        // Only synchronous requests carry FR_SYNC_WAKEUP; background ones (flush_bg_queue) do not.
        if (site.fuse != FuseSite::queue_request || site.fr_background) return flags;
        return flags | WF_SYNC;
    }
};
}  // namespace

const PolicyKind& fuse_sync_request_policy() {
    static const PolicyKind k{
        "fuse_sync_request", "WF_SYNC on the /dev/fuse request wake of a synchronous request (FR_SYNC_WAKEUP)",
        "'fuse: give wakeup hints to the scheduler' (Pradeep P V K, 2021); RFC '... for synchronous requests' "
        "(Xuewen Yan, 2026)",
        {}, false  /* adds one flag at one FUSE site: composes with the others */,
        [](const ParamValues&) -> std::unique_ptr<WakePolicy> { return std::make_unique<FuseSyncRequest>(); }};
    return k;
}

}  // namespace wakesim
