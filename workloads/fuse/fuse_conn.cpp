#include "workloads/fuse/fuse_conn.h"

#include <algorithm>
#include <utility>

namespace wakesim {

WakeSite fuse_queue_request_site(bool background) {
    // A background request reaches fiq->pending from flush_bg_queue; its submitter goes on.
    WakeSite s{background ? "flush_bg_queue" : "fuse_dev_queue_req", 0, !background, SiteRole::request};
    s.fuse = FuseSite::queue_request;
    s.fr_background = background;
    return s;
}

// fuse_queue_forget -> fuse_dev_queue_forget: the evicting task goes on; not a site the FUSE
// policies change.
WakeSite fuse_forget_site() { return WakeSite{"fuse_dev_queue_forget", 0, false, SiteRole::request}; }

WakeSite fuse_uring_dispatch_site(bool background, bool iowait) {
    WakeSite s{background ? "fuse_uring_queue_bq_req" : "fuse_uring_dispatch_ent", 0, !background, SiteRole::request};
    s.fuse = FuseSite::uring_dispatch;
    s.fr_uring = true;
    s.fr_background = background;
    // io_cqring_wait_schedule(): a ring thread that sleeps with its FETCH commands in flight
    // (current_pending_io()) sleeps as in_iowait, so its wake-up carries schedutil's iowait boost.
    s.iowait = iowait;
    return s;
}

WakeSite fuse_request_end_site(bool fr_uring) {
    WakeSite s{"fuse_request_end", 0, true, SiteRole::reply};
    s.fuse = FuseSite::request_end;
    s.fr_uring = fr_uring;
    return s;
}

// fuse_request_end, background branch: wake_up(&fc->blocked_waitq); the completer goes on.
WakeSite fuse_bg_unblock_site(bool fr_uring) {
    WakeSite s{"blocked_waitq", 0, false, SiteRole::generic};
    s.fuse = FuseSite::bg_unblock;
    s.fr_uring = fr_uring;
    s.fr_background = true;
    return s;
}

// The async DIO end callback (fuse_aio_complete_req -> fuse_aio_complete -> ki_complete). io_uring:
// io_complete_rw queues task work on the submitter (TWA_SIGNAL wakes it in io_cqring_wait, which
// counts as iowait while requests are in flight, Linux 6.5+); libaio: aio_complete ->
// wake_up(&ctx->wait) in read_events (not iowait). The completer may have more requests to serve,
// so no sync promise.
WakeSite fuse_aio_complete_site(AioEngine engine, bool fr_uring, bool iowait) {
    const bool uring = engine == AioEngine::io_uring;
    WakeSite s{uring ? "io_req_task_work_add" : "aio_complete", 0, false, SiteRole::reply};
    s.iowait = uring && iowait;
    s.fuse = FuseSite::aio_complete;
    s.fr_uring = fr_uring;
    s.fr_background = true;
    return s;
}

// fuse_writepage_end -> fuse_writepage_finish: folio_end_writeback() wakes a writer in
// folio_wait_writeback() (an io_schedule(): iowait), or wake_up(&fi->page_waitq) one in
// fuse_sync_writes() (before 2025). The waker is where fuse_request_end's reply wake is.
WakeSite fuse_writeback_end_site(bool fr_uring, bool iowait) {
    WakeSite s{"fuse_writepage_end", 0, true, SiteRole::reply};
    s.iowait = iowait;
    s.fuse = FuseSite::writeback_end;
    s.fr_uring = fr_uring;
    s.fr_background = true;
    return s;
}

FuseConn::FuseConn(std::shared_ptr<const FuseConnDef> def, const std::vector<int>& depth, int shared_key_base)
    : def_(std::move(def)),
      shared_key_base_(shared_key_base),
      subs_(depth.size()),
      serving_(depth.size(), -1),
      queue_site_(fuse_queue_request_site(false)),
      bg_queue_site_(fuse_queue_request_site(true)),
      forget_site_(fuse_forget_site()),
      dispatch_site_(fuse_uring_dispatch_site(false, def_->uring_iowait)),
      bg_dispatch_site_(fuse_uring_dispatch_site(true, def_->uring_iowait)),
      end_site_(fuse_request_end_site(def_->transport == FuseTransport::uring)),
      unblock_site_(fuse_bg_unblock_site(def_->transport == FuseTransport::uring)),
      aio_site_(fuse_aio_complete_site(def_->engine, def_->transport == FuseTransport::uring, def_->uring_iowait)),
      writeback_site_(fuse_writeback_end_site(def_->transport == FuseTransport::uring, def_->writeback_iowait)) {
    // Task i's first slot is i (so a synchronous requester's request keeps its shared-data key);
    // deeper requesters' further slots follow, then the orphan slots.
    size_t n = depth.size();
    for (size_t i = 0; i < depth.size(); ++i) n += static_cast<size_t>(std::max(depth[i] - 1, 0));
    // Slots for background requests nobody waits for (a RELEASE on close). The kernel allocates
    // one per request and never holds a RELEASE back (args->force); the model keeps a pool of
    // kFuseOrphanSlots (or max_background, if more), and a sender finding it empty waits as on
    // fc->blocked: a model limit, far beyond what servers leave unanswered. A slot is a request's
    // memory for the cache model: the first kFuseOrphanRing cycle in the order they were freed
    // (as the model always reused them), the rest only while that many are in flight.
    const int orphans = std::max(def_->max_background, kFuseOrphanSlots);
    reqs_.resize(n + static_cast<size_t>(orphans));
    size_t extra = depth.size();
    for (size_t i = 0; i < depth.size(); ++i) {
        Submitter& sub = subs_[i];
        sub.depth = depth[i];
        if (sub.depth <= 0) continue;
        sub.free.buf.assign(static_cast<size_t>(sub.depth) + 1, -1);
        sub.done.buf.assign(static_cast<size_t>(sub.depth) + 1, -1);
        sub.posted.buf.assign(static_cast<size_t>(sub.depth) + 1, -1);
        sub.free.push(static_cast<int>(i));
        reqs_[i].owner = static_cast<int>(i);
        for (int k = 1; k < sub.depth; ++k) {
            reqs_[extra].owner = static_cast<int>(i);
            sub.free.push(static_cast<int>(extra++));
        }
    }
    orphan_free_.buf.assign(static_cast<size_t>(kFuseOrphanRing) + 1, -1);
    for (int k = 0; k < kFuseOrphanRing; ++k) orphan_free_.push(static_cast<int>(n) + k);
    orphan_spare_from_ = static_cast<int>(n) + kFuseOrphanRing;
    orphan_spare_.reserve(static_cast<size_t>(orphans - kFuseOrphanRing));
    for (int k = orphans - 1; k >= kFuseOrphanRing; --k) orphan_spare_.push_back(static_cast<int>(n) + k);
    const size_t all = reqs_.size() + 1;
    fiq_pending_.buf.assign(all, -1);
    fiq_waiters_.buf.assign(depth.size() + 1, -1);
    bg_queue_.buf.assign(all, -1);
    blocked_waiters_.buf.assign(depth.size() + 1, -1);
    rings_.resize(def_->queue_cpu.size());
    for (Ring& r : rings_) {
        r.pending.buf.assign(all, -1);
        r.bg_pending.buf.assign(all, -1);
        r.batch.buf.assign(all, -1);
    }
    nr_reqs_.assign(def_->queue_cpu.size(), 0);
    stats_.per_queue.assign(def_->queue_cpu.size(), 0);
}

void FuseConn::attach(CpuExec& s, uint64_t seed) {
    s_ = &s;
    rng_ = RngStream(seed, "fuse.queue");
}

int64_t FuseConn::touch(int r) {
    return s_->hardware().touch_shared(shared_key_base_ + r, def_->costs.shared_bytes, s_->driving_cpu());
}

// fuse_uring_task_to_queue: the queue of the CPU the requester runs on now; a policy may choose
// another one for a background request.
int FuseConn::queue_for(Submitter& sub, bool background) {
    const int cpu = s_->driving_cpu();
    int q = def_->queue_of_cpu[static_cast<size_t>(cpu)];
    if (background) {
        const Scheduler& sched = s_->sched();
        q = sched.policy().fuse_bg_queue(
            FuseQueueCtx{sched, *s_->driving_task(), cpu, q, def_->queue_cpu, nr_reqs_, rng_});
        if (def_->queue_cpu[static_cast<size_t>(q)] == cpu) ++stats_.bg_own_cpu_queue;
    }
    if (sub.last_queue >= 0 && sub.last_queue != q) {
        tally(&FuseStats::queue_changes, &RequestTiming::queue_changes);
    }
    sub.last_queue = q;
    ++stats_.per_queue[static_cast<size_t>(q)];
    ++nr_reqs_[static_cast<size_t>(q)];
    return q;
}

// fuse_dev_wake_and_unlock: wake_up() walks fiq->waitq: every non-exclusive waiter (a poll on the
// device fd sits at the head), then one exclusive waiter, the worker that has waited longest.
void FuseConn::wake_fiq(const WakeSite& site) {
    if (watchdog_task_ >= 0) {
        ++stats_.watchdog_wakes;
        s_->wake(std::exchange(watchdog_task_, -1), site);
    }
    if (!fiq_waiters_.empty()) {
        ++stats_.worker_wakes;
        s_->wake(fiq_waiters_.pop(), site);
    }
}

// io_uring_cmd_complete_in_task (TWA_SIGNAL): wakes the ring thread if it sleeps in its CQ wait;
// a running ring thread finds the task work before it would sleep.
void FuseConn::wake_ring(Ring& ring, const WakeSite& site) {
    if (!ring.sleeping) return;
    ring.sleeping = false;
    ++stats_.ring_wakes;
    s_->wake(ring.task_id, site);
}

// fuse_get_req(for_background) while fc->blocked: the submitter sleeps exclusively on
// fc->blocked_waitq (a completion's wake clears `throttled`); `phase` becomes `waiting`.
Action FuseConn::throttle(int self, uint8_t& phase, uint8_t waiting) {
    tally(&FuseStats::blocked_waits, &RequestTiming::blocked_waits);
    subs_[static_cast<size_t>(self)].throttled = true;
    blocked_waiters_.push(self);
    phase = waiting;
    return Action::Block();
}

void FuseConn::tally(uint64_t FuseStats::*own, uint64_t RequestTiming::*window) {
    ++(stats_.*own);
    if (Metrics* m = s_->metrics()) ++(m->fuse.*window);
}

// A request slot leaves for the server now.
FuseConn::Req& FuseConn::start(int slot, bool background) {
    Req& r = reqs_[static_cast<size_t>(slot)];
    r.finished = false;
    r.background = background;
    r.sent = s_->now();
    tally(&FuseStats::sent, &RequestTiming::sent);
    return r;
}

// fuse_dev_queue_req (/dev/fuse) or fuse_uring_queue_fuse_req (io-uring), from the requester.
void FuseConn::send(int self, int slot) {
    Req& r = start(slot, false);
    if (def_->transport == FuseTransport::dev) {
        fiq_pending_.push(slot);
        wake_fiq(queue_site_);
        return;
    }
    const int q = queue_for(subs_[static_cast<size_t>(self)], false);
    r.queue = q;
    Ring& ring = rings_[static_cast<size_t>(q)];
    ring.pending.push(slot);
    wake_ring(ring, dispatch_site_);
}

// fuse_queue_forget -> fuse_dev_queue_forget: onto fiq's forget list and a wake of fiq->waitq,
// in io-uring mode too (the ring's ops keep the device's send_forget).
void FuseConn::send_forget(int64_t work) {
    tally(&FuseStats::sent, &RequestTiming::sent);
    ++stats_.forgets;
    ++stats_.per_op[static_cast<size_t>(FuseOp::forget)];
    ++forgets_pending_;
    forget_work_ += work;
    wake_fiq(forget_site_);
}

// flush_bg_queue: admit background requests to fiq->pending while active_background < max.
void FuseConn::flush_bg_queue() {
    while (active_background_ < def_->max_background && !bg_queue_.empty()) {
        ++active_background_;
        stats_.max_active_background = std::max(stats_.max_active_background, active_background_);
        fiq_pending_.push(bg_queue_.pop());
        // fuse_send_one -> fuse_dev_queue_req: the same wake of fiq->waitq.
        wake_fiq(bg_queue_site_);
    }
}

// fuse_uring_flush_bg: admit the queue's background requests while the connection is under
// max_background, and always one per queue (so no queue waits on another's completion).
void FuseConn::flush_ring_bg(Ring& ring) {
    while ((active_background_ < def_->max_background || ring.active_background == 0) && !ring.bg_pending.empty()) {
        ++active_background_;
        ++ring.active_background;
        stats_.max_active_background = std::max(stats_.max_active_background, active_background_);
        ring.pending.push(ring.bg_pending.pop());
    }
}

// fuse_request_queue_background (/dev/fuse) or fuse_uring_queue_bq_req (io-uring).
void FuseConn::send_background(int self, int slot) {
    Req& r = start(slot, true);
    ++stats_.bg_sent;
    // Both: num_background++ under bg_lock; reaching max_background sets fc->blocked, so the next
    // background allocation sleeps in fuse_get_req.
    if (num_background_ >= def_->congestion_threshold) tally(&FuseStats::congested, &RequestTiming::congested);
    if (++num_background_ == def_->max_background) blocked_ = true;
    stats_.max_num_background = std::max(stats_.max_num_background, num_background_);
    if (def_->transport == FuseTransport::dev) {
        bg_queue_.push(slot);
        flush_bg_queue();
        return;
    }
    const int q = queue_for(subs_[static_cast<size_t>(self)], true);
    r.queue = q;
    Ring& ring = rings_[static_cast<size_t>(q)];
    ring.bg_pending.push(slot);
    flush_ring_bg(ring);
    // An admitted request bound to an available entry is dispatched (fuse_uring_dispatch_ent).
    if (!ring.pending.empty()) wake_ring(ring, bg_dispatch_site_);
}

uint64_t FuseConn::held() const {
    uint64_t n = fiq_pending_.size + bg_queue_.size + static_cast<uint64_t>(forgets_pending_);
    for (const Ring& r : rings_) n += r.pending.size + r.bg_pending.size + r.batch.size;
    for (int req : serving_) n += req >= 0 ? 1 : 0;
    return n;
}

// A server thread starts on the request (fuse_dev_do_read's copy, or the ring's task work).
void FuseConn::taken(int slot) { reqs_[static_cast<size_t>(slot)].taken = s_->now(); }

// The requester runs with the result: the request's three spans go to the run's metrics.
void FuseConn::replied(int slot) {
    Metrics* m = s_->metrics();
    if (!m) return;
    const Req& r = reqs_[static_cast<size_t>(slot)];
    const Time now = s_->now();
    RequestTiming& t = m->fuse;
    ++t.requests;
    t.queue.add(r.taken - r.sent);
    t.server.add(r.ended - r.taken);
    t.reply.add(now - r.ended);
    t.total.add(now - r.sent);
}

// fuse_request_end.
void FuseConn::request_end(int slot) {
    Req& q = reqs_[static_cast<size_t>(slot)];
    q.finished = true;
    q.ended = s_->now();
    tally(&FuseStats::completed, &RequestTiming::completed);
    if (def_->transport == FuseTransport::uring) --nr_reqs_[static_cast<size_t>(q.queue)];
    if (!q.background) {  // foreground branch: wake_up(&req->waitq)
        s_->wake(subs_[static_cast<size_t>(q.owner)].task_id, end_site_);
        return;
    }
    // Background branch: release the throttle (one exclusive waiter; the woken one re-checks, and
    // a later completion passes the wake on while the connection is not blocked).
    const bool wake_blocked = num_background_ == def_->max_background ? (blocked_ = false, true) : !blocked_;
    if (wake_blocked && !blocked_waiters_.empty()) {
        Submitter& w = subs_[static_cast<size_t>(blocked_waiters_.pop())];
        w.throttled = false;
        s_->wake(w.task_id, unblock_site_);
    }
    --num_background_;
    --active_background_;
    if (def_->transport == FuseTransport::dev) flush_bg_queue();
    if (q.writeback) {  // args->end = fuse_writepage_end: the writer's wait for the page ends
        q.writeback = false;
        s_->wake(subs_[static_cast<size_t>(q.owner)].task_id, writeback_site_);
        return;
    }
    if (q.owner < 0) {  // a RELEASE: nobody waits for it
        if (slot < orphan_spare_from_)
            orphan_free_.push(slot);
        else
            orphan_spare_.push_back(slot);  // within the reserved size: no allocation
        return;
    }
    // args->end = fuse_aio_complete_req -> fuse_aio_complete -> iocb->ki_complete: the completion
    // lands in the submitter's CQ (aio ring), and wakes it if it waits for one (min_complete = 1).
    Submitter& sub = subs_[static_cast<size_t>(q.owner)];
    sub.done.push(slot);
    if (sub.waiting) {
        sub.waiting = false;
        ++stats_.aio_wakes;
        s_->wake(sub.task_id, aio_site_);
    }
}

bool FuseConn::request(int self, int task_id, uint8_t& phase, Action& out, FuseReqArgs args, int64_t& tail) {
    enum : uint8_t { start, decide, wait_reply, throttled };
    Req& r = reqs_[static_cast<size_t>(self)];
    Submitter& sub = subs_[static_cast<size_t>(self)];
    sub.task_id = task_id;
    const int64_t work = args.work >= 0 ? args.work : def_->costs.server_work;
    switch (phase) {
        case start:
            phase = decide;
            if (const int64_t w = submit_work(args.call); w > 0) {
                out = Action::Run(w);
                return true;
            }
            [[fallthrough]];
        case decide:
            if (fuse_op_send(args.op) == FuseSend::forget) {
                send_forget(work);
                phase = start;
                if (args.call & kFuseCallExit) tail = exit_ns();
                return false;
            }
            if (fuse_op_send(args.op) == FuseSend::writeback) {
                // fuse_send_writepage: fuse_simple_background with args->force, so fc->blocked does
                // not hold it back; the writer then waits for the page's writeback to end, inside
                // close() (write_inode_now with WB_SYNC_ALL, or fuse_sync_writes before 2025).
                r.work = work;
                r.writeback = true;
                ++stats_.per_op[static_cast<size_t>(args.op)];
                send_background(self, self);
                phase = wait_reply;
                out = Action::BlockInSyscall();
                return true;
            }
            if (fuse_op_send(args.op) == FuseSend::background) {
                // fuse_prepare_release sets args->force: fuse_simple_background allocates the
                // request without fuse_get_req, so fc->blocked does not hold a RELEASE back (it
                // still counts in num_background and waits on bg_queue for max_background).
                if (orphan_free_.empty() && orphan_spare_.empty()) {
                    out = throttle(self, phase, throttled);
                    return true;
                }
                int slot;
                if (!orphan_free_.empty()) {
                    slot = orphan_free_.pop();
                } else {
                    slot = orphan_spare_.back();
                    orphan_spare_.pop_back();
                }
                reqs_[static_cast<size_t>(slot)].work = work;
                ++stats_.per_op[static_cast<size_t>(args.op)];
                send_background(self, slot);
                phase = start;
                if (args.call & kFuseCallExit) tail = exit_ns();
                return false;
            }
            r.work = work;
            ++stats_.per_op[static_cast<size_t>(args.op)];
            send(self, self);
            phase = wait_reply;
            out = Action::BlockInSyscall();  // request_wait_answer, in the syscall that queued it
            return true;
        case wait_reply: {
            if (!r.finished) {
                out = Action::BlockInSyscall();
                return true;
            }
            replied(self);
            // Request teardown and the return to user space: the caller runs it with what comes next.
            tail = def_->costs.app_complete + ((args.call & kFuseCallExit) ? exit_ns() : 0) + touch(self);
            phase = start;
            return false;
        }
        default:  // throttled
            if (sub.throttled) {  // not our wake yet
                out = Action::Block();
                return true;
            }
            phase = decide;  // re-check fc->blocked
            return request(self, task_id, phase, out, args, tail);
    }
}

// fio's do_io with an async engine (fio 3.33): while the queue has room, submit the next
// iodepth_batch_submit I/Os in one call (each goes fuse_direct_IO -> fuse_async_req_send ->
// fuse_simple_background in the submitter's context); with the queue full, reap: at least one
// completion and at most iodepth_batch_complete_max (fio's default 1: one, then the freed slot is
// refilled). io_uring's ring is set up with DEFER_TASKRUN, so a completion's task work is run,
// and its CQE posted, only inside the submitter's next io_uring_enter with GETEVENTS: every
// submit call (to_submit, min_complete 0) posts what has arrived, a reap takes posted CQEs
// without a system call, and only an empty CQ ring costs a wait call (io_uring_enter(0, 1,
// GETEVENTS)), which posts what has arrived or sleeps until something does. libaio's completions
// are in its ring at once, and fio reaps them with io_getevents, a wait call every time.
bool FuseConn::aio(int self, int task_id, int64_t ios, FuseReqArgs args, uint8_t& phase, Action& out, int& reaped) {
    enum : uint8_t { start, queue, send_it, throttled, wait_check, woken, reap, reap_done };
    const FuseCosts& c = def_->costs;
    const bool deferred = def_->engine == AioEngine::io_uring;
    Submitter& sub = subs_[static_cast<size_t>(self)];
    sub.task_id = task_id;
    reaped = 0;
    const auto post = [&] {  // io_run_local_work(): the deferred completions reach the CQ ring
        while (!sub.done.empty()) sub.posted.push(sub.done.pop());
    };
    Fifo& ring = deferred ? sub.posted : sub.done;  // what a reap takes
    for (;;) {
        switch (phase) {
            case start:
                if (sub.submitted == ios && sub.reaped == ios) {
                    sub.submitted = sub.reaped = 0;
                    return false;
                }
                if (sub.in_flight < sub.depth && sub.submitted < ios) {
                    sub.batch = static_cast<int>(std::min<int64_t>(
                        {static_cast<int64_t>(sub.depth - sub.in_flight), ios - sub.submitted, def_->aio_batch_submit}));
                    phase = queue;
                    ++stats_.aio_submit_calls;
                    out = Action::Run(c.syscall + c.aio_submit_call);
                    return true;
                }
                // The queue is full (or every I/O is out): reap. io_uring: CQEs already posted
                // need no system call.
                if (deferred && !sub.posted.empty()) {
                    ++stats_.aio_posted_reaps;
                    phase = reap;
                    break;
                }
                phase = wait_check;
                ++stats_.aio_wait_calls;
                out = Action::Run(c.syscall + c.aio_wait_call);
                return true;
            case queue:
                if (sub.batch == 0) {  // the submit call returns, posting what has completed
                    if (deferred) post();
                    phase = start;
                    break;
                }
                phase = send_it;
                out = Action::Run(c.app_submit);  // io_read -> fuse_direct_IO, up to fuse_simple_background
                return true;
            case send_it: {
                // fuse_get_req(for_background): sleep exclusively on fc->blocked_waitq while blocked.
                // (The kernel tests fc->blocked a little before num_background++, so racing
                // submitters can overshoot max_background by a few; here test and queueing are one step.)
                if (blocked_) {
                    out = throttle(self, phase, throttled);
                    return true;
                }
                const int slot = sub.free.pop();
                Req& r = reqs_[static_cast<size_t>(slot)];
                r.owner = self;
                r.work = args.work >= 0 ? args.work : c.server_work;
                ++stats_.per_op[static_cast<size_t>(args.op)];
                ++sub.in_flight;
                ++sub.submitted;
                --sub.batch;
                send_background(self, slot);
                phase = queue;
                break;
            }
            case throttled:
                if (sub.throttled) {  // not our wake yet
                    out = Action::Block();
                    return true;
                }
                phase = send_it;  // re-check fc->blocked
                break;
            case wait_check:  // inside the wait call: what has arrived is posted, or it sleeps
                if (deferred) post();
                if (ring.empty()) {
                    ++stats_.aio_waits;
                    sub.waiting = true;
                    phase = woken;
                    out = Action::Block();
                    return true;
                }
                phase = reap;
                break;
            case woken:  // woken in the wait call by a completion
                if (deferred) post();
                if (ring.empty()) {
                    out = Action::Block();
                    return true;
                }
                phase = reap;
                break;
            case reap: {
                int64_t cost = 0;
                sub.reaping = 0;
                while (!ring.empty() && sub.reaping < def_->aio_batch_complete) {
                    const int slot = ring.pop();
                    replied(slot);
                    cost += c.aio_reap + touch(slot);
                    sub.free.push(slot);
                    ++sub.reaping;
                }
                sub.in_flight -= sub.reaping;
                phase = reap_done;
                out = Action::Run(cost);
                return true;
            }
            default:  // reap_done: the reaped I/Os are done for fio (the caller counts them)
                reaped = sub.reaping;
                sub.reaped += sub.reaping;
                sub.reaping = 0;
                phase = start;
                break;
        }
    }
}

Action FuseConn::worker(int self, int task_id, uint8_t& phase) {
    const FuseCosts& c = def_->costs;
    int& req = serving_[static_cast<size_t>(self)];
    for (;;) {
        switch (phase) {
            case 0: {  // fuse_dev_do_read: take the head of fiq->pending, or sleep exclusively
                if (forgets_pending_ > 0) {  // fuse_read_forget: all queued ones as one BATCH_FORGET
                    const int64_t w = forget_work_;
                    stats_.completed += static_cast<uint64_t>(forgets_pending_);
                    forgets_pending_ = forget_work_ = 0;
                    phase = 5;  // libfuse: a forget leaves numavail alone
                    return Action::Run(exit_ns() + c.dev_read + w);
                }
                if (fiq_pending_.empty()) {
                    fiq_waiters_.push(task_id);
                    phase = 3;
                    return Action::Block();
                }
                req = fiq_pending_.pop();
                taken(req);
                phase = 1;
                // fuse_do_work: the last idle worker starts another before it handles its request.
                int64_t spawn = 0;
                if (--numavail_ == 0 && numworker_ < def_->max_threads && !spare_.empty()) {
                    ++numworker_;
                    ++numavail_;
                    tally(&FuseStats::worker_spawns, &RequestTiming::worker_spawns);
                    s_->start_task(spare_.front(), s_->now() + c.spawn, s_->driving_cpu());
                    spare_.erase(spare_.begin());  // at most max_threads entries, no allocation
                    spawn = c.spawn;
                }
                // read()'s return, the request, writev() up to fuse_request_end.
                return Action::Run(spawn + exit_ns() + c.dev_read + touch(req) + reqs_[static_cast<size_t>(req)].work +
                                   entry_ns() + c.dev_write);
            }
            case 1:  // the reply's writev: fuse_dev_do_write -> fuse_request_end
                request_end(req);
                req = -1;
                phase = 4;
                // The rest of writev, still in the system call: under preempt=none a requester woken
                // onto this CPU waits for the return to user space (the next step).
                if (const int64_t w = c.writev_return + exit_ns(); w > 0) return Action::RunInSyscall(w);
                [[fallthrough]];
            case 4:  // back in fuse_do_work: numavail++, and a surplus idle worker exits (never the last)
                ++numavail_;
                if (def_->max_idle_threads >= 0 && numavail_ > def_->max_idle_threads && numworker_ > 1) {
                    --numavail_;
                    --numworker_;
                    tally(&FuseStats::worker_exits, &RequestTiming::worker_exits);
                    spare_.push_back(task_id);  // a later spawn forks a new thread in this slot
                    phase = 0;
                    return Action::Exit();
                }
                phase = 2;
                if (const int64_t w = c.loop_tail + entry_ns(); w > 0) return Action::Run(w);
                [[fallthrough]];
            case 2:
                phase = 0;
                break;
            case 5:  // after a FORGET batch: no reply to write, back to read
                phase = 2;
                if (const int64_t w = c.loop_tail + entry_ns(); w > 0) return Action::Run(w);
                break;
            default:  // woken from fiq->waitq: re-check the queue (another worker may have taken it)
                phase = 0;
                if (fiq_pending_.empty() && forgets_pending_ == 0) ++stats_.worker_spurious;
                break;
        }
    }
}

Action FuseConn::watchdog(uint8_t& phase) {
    // do_poll(): woken by a request's wake_up, it re-polls the fd, finds no POLLERR and sleeps again.
    if (phase == 1) {
        phase = 0;
        if (const int64_t w = def_->costs.syscall + def_->costs.watchdog; w > 0) return Action::Run(w);
    }
    watchdog_task_ = s_->driving_task()->id;
    phase = 1;
    return Action::Block();
}

// The ring thread takes `n` dispatched requests into its round: each one's task work (copy-in,
// CQE) and handler; the replies wait in `batch` for the round's COMMIT_AND_FETCHes.
int64_t FuseConn::take_round(Ring& ring, size_t n) {
    int64_t cost = 0;
    for (size_t i = 0; i < n; ++i) {
        const int r = ring.pending.pop();
        taken(r);
        cost += def_->costs.uring_task_work + touch(r) + reqs_[static_cast<size_t>(r)].work;
        ring.batch.push(r);
    }
    return cost;
}

Action FuseConn::ring_thread(int self, int task_id, int q, uint8_t& phase) {
    const FuseCosts& c = def_->costs;
    Ring& ring = rings_[static_cast<size_t>(q)];
    ring.task_id = task_id;
    if (s_->driving_cpu() != def_->queue_cpu[static_cast<size_t>(q)]) ++stats_.ring_off_cpu;
    int& req = serving_[static_cast<size_t>(self)];
    // COMMIT_AND_FETCH: fuse_uring_commit -> fuse_uring_req_end -> fuse_request_end
    auto commit = [&] {
        if (reqs_[static_cast<size_t>(req)].background) {
            // fuse_uring_req_end: the queue's background slot is free; admit the next one
            // (before fuse_request_end lowers the connection's count, as mainline does).
            --ring.active_background;
            flush_ring_bg(ring);
        }
        request_end(req);
        req = -1;
    };
    for (;;) {
        switch (phase) {
            case 1:
                commit();
                if (!ring.pending.empty()) {  // fuse_uring_next_fuse_req: fetched inline, no sleep
                    phase = 0;
                    break;
                }
                phase = 2;
                if (c.uring_enter_tail > 0) return Action::Run(c.uring_enter_tail);
                [[fallthrough]];
            case 2:
                phase = 0;
                break;
            case 3:  // a batch's replies, one COMMIT_AND_FETCH after another in one io_uring_enter
                // (whose wakes preempt the ring thread only when the call returns, unless preempt_full)
                if (req >= 0) commit();
                if (!ring.batch.empty()) {
                    req = ring.batch.pop();
                    return Action::RunInSyscall(c.uring_commit);
                }
                if (!ring.pending.empty()) {  // fetched by the commits: the next batch, no sleep
                    phase = 0;
                    break;
                }
                phase = 2;
                if (c.uring_enter_tail > 0) return Action::RunInSyscall(c.uring_enter_tail);
                phase = 0;
                break;
            default: {  // in io_uring_enter: run the task work of a dispatched request, or sleep
                if (ring.pending.empty()) {
                    ring.sleeping = true;
                    return Action::BlockInSyscall();  // io_uring_enter's CQ wait, after its commits
                }
                // A round: the requests the ring thread takes before its next reply leaves, at most
                // one per ring entry (the others wait in fuse_req_queue for a COMMIT_AND_FETCH).
                const size_t depth = static_cast<size_t>(def_->uring_q_depth);
                const size_t round = def_->uring_reply_batch ? std::min(ring.pending.size, depth) : 1;
                ++stats_.ring_rounds;
                stats_.ring_requests += round;
                if (round > 1) stats_.ring_batched += round;
                if (Metrics* m = s_->metrics()) {
                    ++m->fuse.ring_rounds;
                    m->fuse.ring_requests += round;
                }
                // Each round is one io_uring_enter (libfuse's io_uring_submit_and_wait): its return
                // after the wait, and the entry of the next, which sends the round's commits.
                if (!def_->uring_reply_batch) {
                    req = ring.pending.pop();
                    taken(req);
                    phase = 1;
                    // send_in_task (copy-in, CQE), the handler in userspace, then the commit's copy-out.
                    return Action::Run(c.syscall + c.uring_task_work + touch(req) + reqs_[static_cast<size_t>(req)].work +
                                       c.uring_commit);
                }
                // libfuse's fuse_uring_queue_handle_cqes with cqe_processing set: every CQE found is
                // handled before the first reply leaves (fuse_uring_commit_sqe only queues the SQE),
                // then io_uring_submit_and_wait sends them and waits: a round of one too.
                phase = 6;
                return Action::Run(c.syscall + take_round(ring, round));
            }
            case 6: {  // the round's CQEs handled; requests dispatched meanwhile join it
                // libfuse's ring has no DEFER_TASKRUN: a request dispatched to the running ring
                // thread is TWA_SIGNAL task work, run at its next return from a system call (the
                // handlers' preads), and io_uring_for_each_cqe() re-reads the CQ tail, so it is
                // handled in this round, on a free entry, before any reply leaves.
                const size_t depth = static_cast<size_t>(def_->uring_q_depth);
                const size_t room = depth > ring.batch.size ? depth - ring.batch.size : 0;
                const size_t more = std::min(ring.pending.size, room);
                if (more == 0) {
                    phase = 3;
                    break;
                }
                stats_.ring_requests += more;
                stats_.ring_batched += more + (ring.batch.size == 1 ? 1 : 0);
                if (Metrics* m = s_->metrics()) m->fuse.ring_requests += more;
                return Action::Run(take_round(ring, more));
            }
        }
    }
}

}  // namespace wakesim
