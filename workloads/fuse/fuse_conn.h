// One FUSE connection's request transport: the classic /dev/fuse input queue shared by a pool of
// libfuse worker threads, or fuse-over-io-uring with one ring thread per queue. Requests carry an
// opcode (workloads/fuse/fuse_ops.h) and are foreground (synchronous: the requester sleeps in
// request_wait_answer), background (asynchronous direct I/O from fio's io_uring or libaio engine,
// whose submitter keeps up to iodepth in flight and sleeps until one completes; or a RELEASE nobody
// waits for) or FORGETs (no reply). The task-program interpreter (workloads/program/) runs six FUSE
// steps through this class: a request, an asynchronous job's whole I/O loop, a /dev/fuse worker's
// loop, libfuse's teardown watchdog and a ring thread's loop. docs/fuse.md describes the flow.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "kernel/wake_flags.h"
#include "sim/cpu_exec.h"
#include "workloads/fuse/fuse_ops.h"
#include "workloads/index_fifo.h"

namespace wakesim {

struct RequestTiming;

enum class FuseTransport : uint8_t { dev, uring };
// How the requester waits for its asynchronous requests (fio's ioengine).
enum class AioEngine : uint8_t { io_uring, libaio };

// Per-request CPU work, reference-capacity nanoseconds, as the connection's parameters give them.
struct FuseCosts {
    int64_t syscall = 0;       // the machine's system call entry and exit (profile `syscall`)
    int64_t syscall_entry = 0, syscall_exit = 0;  // its halves: before what a call does, after it
    int64_t app_submit = 0;    // requester: VFS, request allocation, queueing
    int64_t app_complete = 0;  // requester after its wake-up: request teardown
    int64_t server_work = 0;   // the handler of a request that names no work of its own
    int64_t dev_read = 0;      // /dev/fuse worker: read (splice) of the request, header copy-in
    int64_t dev_write = 0;     // /dev/fuse worker: writev of the reply up to fuse_request_end
    int64_t writev_return = 0;  // /dev/fuse worker: writev's return up to libfuse's numavail++
    int64_t loop_tail = 0;     // /dev/fuse worker: from numavail++ to the next read's sleep
    int64_t spawn = 0;         // /dev/fuse worker: pthread_create of another worker
    int64_t watchdog = 0;      // libfuse teardown watchdog: a wake's re-poll before it sleeps again
    int64_t uring_task_work = 0;  // ring thread: send_in_task, request copy-in and CQE
    int64_t uring_commit = 0;     // ring thread: COMMIT_AND_FETCH up to fuse_request_end
    int64_t uring_enter_tail = 0;  // ring thread: from fuse_request_end to its sleep in io_uring_enter
    int64_t aio_submit_call = 0;   // async requester: one submit call (io_uring_enter / io_submit)
    int64_t aio_wait_call = 0;     // async requester: one wait call (io_uring_enter GETEVENTS / io_getevents)
    int64_t aio_reap = 0;          // async requester: per completion reaped (CQE / event, fio's io_u end)
    int64_t shared_bytes = 0;  // the request (fuse_req + args) both sides touch
};

struct FuseConnDef {
    FuseTransport transport = FuseTransport::dev;
    FuseCosts costs;
    int max_threads = 10;       // /dev/fuse: libfuse's pool limit (FUSE_LOOP_MT_DEF_MAX_THREADS)
    int max_idle_threads = -1;  // /dev/fuse: idle workers beyond this exit; -1: never
    bool watchdog = false;      // /dev/fuse: libfuse's teardown watchdog polls the device fd
    bool uring_iowait = true;   // io_uring's CQ wait is an I/O wait (Linux 6.5+)
    bool writeback_iowait = true;  // a writer waits for its page's WRITE in folio_wait_writeback (2025+)
    int uring_q_depth = 8;          // io-uring: ring entries per queue (libfuse's io_uring_q_depth)
    bool uring_reply_batch = true;  // libfuse 3.18+: a ring thread's replies to one CQE batch go out together
    std::vector<int> queue_of_cpu;  // io-uring: the queue a foreground request submitted on each CPU uses
    std::vector<int> queue_cpu;     // io-uring: each queue's CPU (its ring thread is pinned there)
    AioEngine engine = AioEngine::io_uring;  // background requests: how their submitter waits
    int aio_batch_submit = 1;       // fio's iodepth_batch_submit: I/Os per submit call
    int aio_batch_complete = 1;     // fio's iodepth_batch_complete_max: completions per reap
    int max_background = 12;        // fc->max_background (FUSE_DEFAULT_MAX_BACKGROUND)
    int congestion_threshold = 9;   // fc->congestion_threshold (3/4 of max_background)
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
    uint64_t ring_rounds = 0;      // io-uring: CQE rounds of the ring threads (a batch, or one request)
    uint64_t ring_requests = 0;    // io-uring: the requests of those rounds
    uint64_t ring_batched = 0;     // io-uring: requests handled in rounds of two or more (uring_reply_batch)
    std::vector<uint64_t> per_queue;  // io-uring: requests sent to each queue
    std::array<uint64_t, kNrFuseOps> per_op{};  // requests sent, by opcode (FuseOp)
    uint64_t forgets = 0;          // of them FORGETs (no reply; counted completed when a worker reads them)
    // Background requests.
    uint64_t bg_sent = 0;
    uint64_t bg_own_cpu_queue = 0;   // io-uring: queued on the queue of the submitter's CPU
    int max_num_background = 0;      // peak fc->num_background
    int max_active_background = 0;   // peak fc->active_background
    uint64_t blocked_waits = 0;      // a submitter slept on fc->blocked_waitq (max_background reached)
    uint64_t congested = 0;          // a background request queued with num_background >= congestion_threshold
    uint64_t aio_submit_calls = 0;   // io_uring_enter / io_submit calls that submitted
    uint64_t aio_wait_calls = 0;     // io_uring_enter(GETEVENTS) / io_getevents calls to reap
    uint64_t aio_posted_reaps = 0;   // io_uring: reaps of CQEs a submit call posted, without a call
    uint64_t aio_waits = 0;          // a submitter slept waiting for completions
    uint64_t aio_wakes = 0;          // a completion woke it
};

// One request as a step asks for it: the opcode and the server's work for it (handler and data
// copies); work < 0: FuseCosts::server_work.
struct FuseReqArgs {
    FuseOp op = FuseOp::conn_read;
    // The request's place in its system call: kFuseCallEntry, the first request it sends (the
    // entry comes before it); kFuseCallExit, the last (the return to user space comes after it).
    uint8_t call = 0;
    int64_t work = -1;
};
inline constexpr uint8_t kFuseCallEntry = 2, kFuseCallExit = 4;  // Op::kSyscallEntry, kSyscallExit

// Slots for requests nobody waits for (fuse_conn.cpp, FuseConn's constructor): the first
// kFuseOrphanRing are reused in the order they were freed; more in flight take spare slots.
inline constexpr int kFuseOrphanRing = 12;
inline constexpr int kFuseOrphanSlots = 256;  // the queues are sized for them: keep set-up small

class FuseConn {
public:
    // `depth[i]`: the requests program task i may have in flight (1 synchronous, iodepth
    // asynchronous, 0 for servers); requests are indexed by slot, task i's first slot is i.
    FuseConn(std::shared_ptr<const FuseConnDef> def, const std::vector<int>& depth, int shared_key_base);
    void attach(CpuExec& s, uint64_t seed);
    // Request slots (shared-data keys from shared_key_base to shared_key_base + slots() - 1).
    int slots() const { return static_cast<int>(reqs_.size()); }

    // A requester's request of `args.op`: synchronous (__fuse_request_send), background
    // (fuse_simple_background: sent, not waited for) or a FORGET. Returns false when the step is
    // done, else sets `out` to what the requester does next. A synchronous request is done at its
    // reply, and `tail` is set to the work after it (request teardown, the return to user space),
    // for the caller to run with whatever follows; it is left alone otherwise.
    bool request(int self, int task_id, uint8_t& phase, Action& out, FuseReqArgs args, int64_t& tail);
    // A request's start is work with no effect (the system call's entry and app_submit), which
    // the caller may join to the work before it.
    int64_t submit_work(uint8_t call) const {
        return def_->costs.app_submit + ((call & kFuseCallEntry) ? entry_ns() : 0);
    }
    // A system call's entry and exit: its cost split around what it does.
    int64_t entry_ns() const { return def_->costs.syscall_entry; }
    int64_t exit_ns() const { return def_->costs.syscall_exit; }
    // An asynchronous job's I/O loop over `ios` requests of `args` with up to its depth in flight
    // (fio's do_io with an async engine). `reaped` is set to the completions reaped by the step
    // that just ended (the caller counts them as ops). Returns false when every I/O is reaped.
    bool aio(int self, int task_id, int64_t ios, FuseReqArgs args, uint8_t& phase, Action& out, int& reaped);
    // A /dev/fuse worker's loop (fuse_session_loop_mt's worker): never ends, unless
    // max_idle_threads makes it exit.
    Action worker(int self, int task_id, uint8_t& phase);
    // libfuse's teardown watchdog: poll() on the device fd for POLLERR only, forever.
    Action watchdog(uint8_t& phase);
    // A worker task created but not started: the pool starts it when it grows (fuse_loop_start_thread).
    void add_spare_worker(int task_id) { spare_.push_back(task_id); }
    // Workers started (libfuse's numworker).
    int workers() const { return numworker_; }
    // A ring thread's loop for queue `q` (libfuse fuse_uring's queue thread): never ends.
    Action ring_thread(int self, int task_id, int q, uint8_t& phase);

    const FuseStats& stats() const { return stats_; }
    const FuseConnDef& def() const { return *def_; }
    // Requests sent and not yet completed.
    uint64_t in_flight() const { return stats_.sent - stats_.completed; }
    // The requests the connection holds, counted where they are: queued for a server (fiq->pending,
    // fc->bg_queue, the forget list, each ring's request, background and reply lists) or in a server
    // thread's hands. Found independently of the counters, so that a request lost on its way shows as
    // in_flight() != held().
    uint64_t held() const;
    int num_background() const { return num_background_; }
    int active_background() const { return active_background_; }

private:
    using Fifo = IndexFifo;
    struct Req {  // one request slot
        int owner = -1;       // program index of its requester; -1: an orphan slot (nobody waits)
        int64_t work = 0;     // the server's handler for it
        int queue = -1;       // io-uring queue it was sent to
        bool background = false;
        bool writeback = false;  // a page's WRITE its owner waits for (FuseSend::writeback)
        bool finished = false;
        Time sent = 0, taken = 0, ended = 0;  // send, a server thread takes it, fuse_request_end
    };
    struct Submitter {  // a requester's side: its slots and, when asynchronous, its completion queue
        int task_id = -1;
        int last_queue = -1;  // the queue of its previous request
        int depth = 0;
        Fifo free;            // slots not in flight
        Fifo done;            // completed, not yet reaped: io_uring's deferred task work, or libaio's ring
        Fifo posted;          // io_uring: completions the last io_uring_enter posted to the CQ ring
        int in_flight = 0;    // submitted and not reaped
        int64_t submitted = 0, reaped = 0;
        int batch = 0;        // requests left in the current submit call
        int reaping = 0;      // completions of the reap in progress
        bool waiting = false;  // asleep for a completion (io_cqring_wait / read_events)
        bool throttled = false;  // asleep on fc->blocked_waitq
    };
    struct Ring {  // one io-uring queue and its ring thread
        Fifo pending;           // requests for the ring thread (bound entries and fuse_req_queue)
        Fifo bg_pending;        // background requests not yet admitted (fuse_req_bg_queue)
        Fifo batch;             // the CQEs being handled, whose replies wait for the next io_uring_enter
        int active_background = 0;
        int task_id = -1;
        bool sleeping = false;  // in io_uring_enter's CQ wait
    };
    int queue_for(Submitter& sub, bool background);
    Req& start(int slot, bool background);
    Action throttle(int self, uint8_t& phase, uint8_t waiting);
    // One more of a connection count that the run reports too, in its window (metrics.h).
    void tally(uint64_t FuseStats::*own, uint64_t RequestTiming::*window);
    void wake_fiq(const WakeSite& site);
    void wake_ring(Ring& ring, const WakeSite& site);
    int64_t take_round(Ring& ring, size_t n);
    void send(int self, int slot);
    void send_background(int self, int slot);
    void send_forget(int64_t work);
    void flush_bg_queue();
    void flush_ring_bg(Ring& ring);
    void request_end(int slot);
    int64_t touch(int slot);
    void taken(int slot);
    void replied(int slot);

    std::shared_ptr<const FuseConnDef> def_;
    CpuExec* s_ = nullptr;
    int shared_key_base_;
    std::vector<Req> reqs_;
    std::vector<Submitter> subs_;  // by program index
    std::vector<int> serving_;     // by program index: the request slot a server works on
    Fifo orphan_free_;             // free slots for requests nobody waits for: the first kFuseOrphanRing
    std::vector<int> orphan_spare_;  // the others, free (a stack sized at set-up)
    int orphan_spare_from_ = 0;      // the first spare slot
    Fifo fiq_pending_;             // /dev/fuse: fiq->pending
    Fifo fiq_waiters_;             // /dev/fuse: task ids of workers sleeping on fiq->waitq, longest first
    Fifo bg_queue_;                // /dev/fuse: fc->bg_queue
    Fifo blocked_waiters_;         // program indices sleeping on fc->blocked_waitq, longest first
    int num_background_ = 0, active_background_ = 0;
    bool blocked_ = false;         // fc->blocked
    int64_t forgets_pending_ = 0, forget_work_ = 0;  // fiq's forget list
    std::vector<int> spare_;       // task ids of workers not running: never started, or exited
    int numworker_ = 1, numavail_ = 1;
    int watchdog_task_ = -1;       // sleeping in poll on fiq->waitq, else -1
    std::vector<Ring> rings_;
    std::vector<int> nr_reqs_;     // by queue, what the queue hook reads
    RngStream rng_{0, "fuse.queue"};
    FuseStats stats_;
    WakeSite queue_site_, bg_queue_site_, forget_site_, dispatch_site_, bg_dispatch_site_, end_site_, unblock_site_,
        aio_site_, writeback_site_;
};

// The FUSE wake sites with their mainline flags (all plain wake_up). `iowait`: the wakee sleeps in
// io_uring's CQ wait with requests in flight (Linux 6.5+).
WakeSite fuse_queue_request_site(bool background = false);
WakeSite fuse_forget_site();
WakeSite fuse_uring_dispatch_site(bool background = false, bool iowait = true);
WakeSite fuse_request_end_site(bool fr_uring);
WakeSite fuse_bg_unblock_site(bool fr_uring);
WakeSite fuse_aio_complete_site(AioEngine engine, bool fr_uring, bool iowait = true);
WakeSite fuse_writeback_end_site(bool fr_uring, bool iowait = true);

}  // namespace wakesim
