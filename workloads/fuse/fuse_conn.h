// One FUSE connection's request transport for synchronous (foreground) requests: the classic
// /dev/fuse input queue shared by a pool of libfuse worker threads, or fuse-over-io-uring with one
// ring thread per queue. The task-program interpreter (workloads/program/) runs three FUSE steps
// through this class: a requester's request (send, sleep in request_wait_answer, wake-up), a
// /dev/fuse worker's endless loop and a ring thread's endless loop. docs/fuse.md describes the flow.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel/wake_flags.h"
#include "sim/cpu_exec.h"
#include "workloads/fuse/fuse_ops.h"
#include "workloads/index_fifo.h"

namespace wakesim {

enum class FuseTransport : uint8_t { dev, uring };

// Per-request CPU work, reference-capacity nanoseconds, as the fio kind's parameters give them.
struct FuseCosts {
    int64_t app_submit = 0;    // requester: syscall entry, VFS, request allocation, queueing
    int64_t app_complete = 0;  // requester after its wake-up: request teardown, syscall exit
    int64_t server_work = 0;   // the filesystem handler (passthrough_hp READ: decode + pread + data copy)
    int64_t dev_read = 0;      // /dev/fuse worker: read (splice) of the request, header copy-in
    int64_t dev_write = 0;     // /dev/fuse worker: writev of the reply, data copy-out to the app's pages
    int64_t writev_return = 0;  // /dev/fuse worker: writev's return up to libfuse's numavail++
    int64_t loop_tail = 0;     // /dev/fuse worker: from numavail++ to the next read's sleep
    int64_t spawn = 0;         // /dev/fuse worker: pthread_create of another worker
    int64_t watchdog = 0;      // libfuse teardown watchdog: a wake's re-poll before it sleeps again
    int64_t uring_task_work = 0;  // ring thread: send_in_task, request copy-in and CQE
    int64_t uring_commit = 0;     // ring thread: COMMIT_AND_FETCH, reply copy-out
    int64_t uring_enter_tail = 0;  // ring thread: from fuse_request_end to its sleep in io_uring_enter
    int64_t shared_bytes = 0;  // the request (fuse_req + args) both sides touch
};

struct FuseConnDef {
    FuseTransport transport = FuseTransport::dev;
    FuseCosts costs;
    int max_threads = 10;       // /dev/fuse: libfuse's pool limit (FUSE_LOOP_MT_DEF_MAX_THREADS)
    int max_idle_threads = -1;  // /dev/fuse: idle workers beyond this exit; -1: never
    bool watchdog = false;      // /dev/fuse: libfuse's teardown watchdog polls the device fd
    bool uring_iowait = true;   // io-uring: a ring thread's CQ wait is an I/O wait (Linux 6.5+)
    std::vector<int> queue_of_cpu;  // io-uring: the queue a request submitted on each CPU uses
    std::vector<int> queue_cpu;     // io-uring: each queue's CPU (its ring thread is pinned there)
};

// What a test or report may check: the transport's own counts.
struct FuseStats {
    uint64_t sent = 0, completed = 0;
    uint64_t worker_wakes = 0;     // /dev/fuse: wakes of an idle worker from fiq->waitq
    uint64_t worker_spurious = 0;  // /dev/fuse: a woken worker found the queue empty
    uint64_t worker_spawns = 0;    // /dev/fuse: workers libfuse started after the first
    uint64_t worker_exits = 0;     // /dev/fuse: idle workers above max_idle_threads that exited
    uint64_t watchdog_wakes = 0;   // /dev/fuse: wakes of the teardown watchdog's poll
    uint64_t ring_wakes = 0;       // io-uring: task-work wakes of a sleeping ring thread
    uint64_t queue_changes = 0;    // io-uring: a requester's request used another queue than its previous one
    uint64_t ring_off_cpu = 0;     // io-uring: a ring thread step ran on another CPU than its queue's
    std::vector<uint64_t> per_queue;  // io-uring: requests sent to each queue
    std::array<uint64_t, kNrFuseOps> per_op{};  // requests sent, by opcode (FuseOp)
    uint64_t background = 0;  // of them sent as background requests (no requester wait)
    uint64_t forgets = 0;     // of them FORGETs (no reply; counted completed when a worker reads them)
};

// One request as a step asks for it: the opcode and the server's work for it (handler and data
// copies); work < 0: FuseCosts::server_work (fio's READ).
struct FuseReqArgs {
    FuseOp op = FuseOp::conn_read;
    int64_t work = -1;
};

// Background requests in flight at most (FUSE_DEFAULT_MAX_BACKGROUND); one more blocks its
// submitter in fuse_get_req until one ends.
inline constexpr int kFuseBgSlots = 12;

class FuseConn {
public:
    // `nr_tasks`: the program's tasks (requests and waiters are indexed by program task).
    FuseConn(std::shared_ptr<const FuseConnDef> def, size_t nr_tasks, int shared_key_base);
    void attach(CpuExec& s) { s_ = &s; }

    // A requester's request of `args.op`: synchronous (__fuse_request_send), background
    // (fuse_simple_background: sent, not waited for) or a FORGET. Returns false when the step is
    // done, else sets `out` to what the requester does next.
    bool request(int self, int task_id, uint8_t& phase, Action& out, FuseReqArgs args = {});
    // A /dev/fuse worker's loop (fuse_session_loop_mt's worker): never ends.
    Action worker(int self, int task_id, uint8_t& phase);
    // libfuse's teardown watchdog: poll() on the device fd for POLLERR only, forever.
    Action watchdog(uint8_t& phase);
    // A worker task created but not started: the pool starts it when it grows (fuse_loop_start_thread).
    void add_spare_worker(int task_id) { spare_.push_back(task_id); }
    // Workers started and idle ones (libfuse's numworker and numavail).
    int workers() const { return numworker_; }
    // A ring thread's loop for queue `q` (libfuse fuse_uring's queue thread): never ends.
    Action ring_thread(int self, int task_id, int q, uint8_t& phase);

    const FuseStats& stats() const { return stats_; }
    const FuseConnDef& def() const { return *def_; }
    // Requests sent and not yet completed.
    uint64_t in_flight() const { return stats_.sent - stats_.completed; }

private:
    using Fifo = IndexFifo;
    struct Req {  // a requester's one synchronous request in flight (by requester), or a background slot
        int owner_task = -1;  // -1: background, nobody waits
        int64_t work = 0;     // the server's handler for it
        int queue = -1;       // io-uring queue it was sent to
        int last_queue = -1;  // the queue of the requester's previous request
        bool finished = false;
    };
    struct Ring {  // one io-uring queue and its ring thread
        Fifo pending;           // requests for the ring thread (bound entries and fuse_req_queue)
        int task_id = -1;
        bool sleeping = false;  // in io_uring_enter's CQ wait
    };
    void send(int self);
    void send_forget(int64_t work);
    void request_end(int r);
    int64_t touch(int r);

    std::shared_ptr<const FuseConnDef> def_;
    CpuExec* s_ = nullptr;
    int shared_key_base_;
    std::vector<Req> reqs_;
    std::vector<int> serving_;  // by server program index: the request it works on
    Fifo fiq_pending_;          // /dev/fuse: fiq->pending
    Fifo fiq_waiters_;          // /dev/fuse: task ids of workers sleeping on fiq->waitq, longest first
    std::vector<Ring> rings_;
    std::vector<int> spare_;  // task ids of workers not running: never started, or exited
    int numworker_ = 1, numavail_ = 1;
    int watchdog_task_ = -1;  // sleeping in poll on fiq->waitq, else -1
    Fifo bg_free_;      // free background slots (request indices after the requesters')
    Fifo bg_blocked_;   // task ids of submitters waiting for one (fc->blocked_waitq)
    int64_t forgets_pending_ = 0, forget_work_ = 0;  // fiq's forget list
    FuseStats stats_;
    WakeSite queue_site_, dispatch_site_, end_site_;
    WakeSite bg_queue_site_, bg_dispatch_site_, forget_site_, bg_unblock_site_;
};

// The FUSE wake sites with their mainline flags (all plain wake_up).
WakeSite fuse_queue_request_site();
WakeSite fuse_uring_dispatch_site(bool iowait = true);
WakeSite fuse_request_end_site(bool fr_uring);

}  // namespace wakesim
