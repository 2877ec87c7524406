// Wake flags (kernel/sched/sched.h) and wake sites: the places in a workload that wake a task.
#pragma once
#include <cstdint>
#include <string>

namespace wakesim {

enum WakeFlag : uint32_t {
    WF_EXEC = 0x02,
    WF_FORK = 0x04,
    WF_TTWU = 0x08,
    WF_SYNC = 0x10,
    WF_MIGRATED = 0x20,
    WF_CURRENT_CPU = 0x40,
    WF_RQ_SELECTED = 0x80,
};
std::string wake_flags_to_string(uint32_t f);  // "WF_TTWU|WF_SYNC"

// What a wake site is in the request/reply sense, so a policy can pick its flags per site.
enum class SiteRole : uint8_t {
    generic,  // an ordinary wake (timer, barrier, hog)
    request,  // wakes the side that serves (pipe write to the server, FUSE request queueing)
    reply,    // wakes the side that waits for an answer (FUSE request end)
};

// The FUSE wake sites (fs/fuse/dev.c, dev_uring.c), so a policy can change one of them only.
enum class FuseSite : uint8_t {
    none,
    queue_request,   // fuse_dev_queue_req -> fuse_dev_wake_and_unlock: one idle /dev/fuse worker
    uring_dispatch,  // fuse_uring_dispatch_ent: io_uring task work wakes the queue's ring thread
    request_end,     // fuse_request_end: wake_up(&req->waitq), the requester in request_wait_answer
    bg_unblock,      // fuse_request_end, background branch: wake_up(&fc->blocked_waitq), a throttled submitter
    aio_complete,    // a background request's end callback (fuse_aio_complete -> ki_complete): the
                     // submitter waiting for completions in io_uring_enter or io_getevents
    writeback_end,   // a page's WRITE ends (fuse_writepage_end): the writer waiting for its writeback
};

struct WakeSite {
    std::string name;        // "pipe", "fuse_request_end", ...
    uint32_t kernel_flags;   // what mainline passes here (pipe: WF_SYNC; FUSE reply: 0)
    bool sync_capable;       // the waker is about to sleep, so WF_SYNC would be honest here
    SiteRole role;
    bool iowait = false;     // the wakee slept in io_schedule(): schedutil's iowait boost applies
    FuseSite fuse = FuseSite::none;
    bool fr_uring = false;   // FUSE: the request went through fuse-over-io-uring (FR_URING)
    bool fr_background = false;  // FUSE: a background request (FR_BACKGROUND): the submitter does not wait on it
};

}  // namespace wakesim
