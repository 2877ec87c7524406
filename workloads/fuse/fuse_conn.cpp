#include "workloads/fuse/fuse_conn.h"

#include <utility>

namespace wakesim {

WakeSite fuse_queue_request_site() {
    WakeSite s{"fuse_dev_queue_req", 0, true, SiteRole::request};
    s.fuse = FuseSite::queue_request;
    return s;
}

WakeSite fuse_uring_dispatch_site(bool iowait) {
    WakeSite s{"fuse_uring_dispatch_ent", 0, true, SiteRole::request};
    s.fuse = FuseSite::uring_dispatch;
    s.fr_uring = true;
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

// The wakers of background requests and FORGETs go on running: not sync_capable, and not the
// sites the FUSE policies change.
WakeSite fuse_background_site(std::string name, bool fr_uring) {
    WakeSite s{std::move(name), 0, false, SiteRole::request};
    s.fr_uring = fr_uring;
    return s;
}

FuseConn::FuseConn(std::shared_ptr<const FuseConnDef> def, size_t nr_tasks, int shared_key_base)
    : def_(std::move(def)),
      shared_key_base_(shared_key_base),
      reqs_(nr_tasks + kFuseBgSlots),
      serving_(nr_tasks, -1),
      queue_site_(fuse_queue_request_site()),
      dispatch_site_(fuse_uring_dispatch_site(def_->uring_iowait)),
      end_site_(fuse_request_end_site(def_->transport == FuseTransport::uring)),
      bg_queue_site_(fuse_background_site("fuse_request_queue_background", false)),
      bg_dispatch_site_(fuse_background_site("fuse_uring_queue_bq_req", true)),
      forget_site_(fuse_background_site("fuse_dev_queue_forget", false)),
      bg_unblock_site_{"fuse_request_end_blocked_waitq", 0, false, SiteRole::generic} {
    const size_t slots = nr_tasks + kFuseBgSlots + 1;
    fiq_pending_.buf.assign(slots, -1);
    fiq_waiters_.buf.assign(nr_tasks + 1, -1);
    rings_.resize(def_->queue_cpu.size());
    for (Ring& r : rings_) r.pending.buf.assign(slots, -1);
    stats_.per_queue.assign(def_->queue_cpu.size(), 0);
    bg_free_.buf.assign(kFuseBgSlots, -1);
    for (int i = 0; i < kFuseBgSlots; ++i) bg_free_.push(static_cast<int>(nr_tasks) + i);
    bg_blocked_.buf.assign(nr_tasks + 1, -1);
}

int64_t FuseConn::touch(int r) {
    return s_->hardware().touch_shared(shared_key_base_ + r, def_->costs.shared_bytes, s_->driving_cpu());
}

// fuse_dev_queue_req (/dev/fuse) or fuse_uring_queue_fuse_req (io-uring), from the requester.
// A background request (r >= the requesters) goes the same way from fuse_request_queue_background
// (flush_bg_queue) or fuse_uring_queue_bq_req, with sites whose waker goes on running.
void FuseConn::send(int self) {
    Req& r = reqs_[static_cast<size_t>(self)];
    const bool bg = r.owner_task < 0;
    r.finished = false;
    ++stats_.sent;
    if (def_->transport == FuseTransport::dev) {
        fiq_pending_.push(self);
        // fuse_dev_wake_and_unlock: wake_up() walks fiq->waitq: every non-exclusive waiter (a
        // poll on the device fd sits at the head), then one exclusive waiter, the longest waiting.
        if (watchdog_task_ >= 0) {
            ++stats_.watchdog_wakes;
            s_->wake(std::exchange(watchdog_task_, -1), queue_site_);
        }
        if (!fiq_waiters_.empty()) {
            ++stats_.worker_wakes;
            s_->wake(fiq_waiters_.pop(), bg ? bg_queue_site_ : queue_site_);
        }
        return;
    }
    // fuse_uring_task_to_queue: the queue of the CPU the requester runs on now.
    const int q = def_->queue_of_cpu[static_cast<size_t>(s_->driving_cpu())];
    if (!bg) {
        if (r.last_queue >= 0 && r.last_queue != q) ++stats_.queue_changes;
        r.last_queue = q;
    }
    r.queue = q;
    ++stats_.per_queue[static_cast<size_t>(q)];
    Ring& ring = rings_[static_cast<size_t>(q)];
    ring.pending.push(self);
    // io_uring_cmd_complete_in_task (TWA_SIGNAL): wakes the ring thread if it sleeps in its CQ
    // wait; a running ring thread finds the task work before it would sleep.
    if (ring.sleeping) {
        ring.sleeping = false;
        ++stats_.ring_wakes;
        s_->wake(ring.task_id, bg ? bg_dispatch_site_ : dispatch_site_);
    }
}

// fuse_queue_forget -> fuse_dev_queue_forget: onto fiq's forget list and a wake of fiq->waitq,
// in io-uring mode too (the ring's ops keep the device's send_forget).
void FuseConn::send_forget(int64_t work) {
    ++stats_.sent;
    ++stats_.forgets;
    ++stats_.per_op[static_cast<size_t>(FuseOp::forget)];
    ++forgets_pending_;
    forget_work_ += work;
    if (watchdog_task_ >= 0) {  // the same wake_up of fiq->waitq as for a request
        ++stats_.watchdog_wakes;
        s_->wake(std::exchange(watchdog_task_, -1), forget_site_);
    }
    if (!fiq_waiters_.empty()) {
        ++stats_.worker_wakes;
        s_->wake(fiq_waiters_.pop(), forget_site_);
    }
}

// fuse_request_end, foreground branch: wake_up(&req->waitq).
void FuseConn::request_end(int r) {
    Req& q = reqs_[static_cast<size_t>(r)];
    q.finished = true;
    ++stats_.completed;
    if (q.owner_task >= 0) {
        s_->wake(q.owner_task, end_site_);
        return;
    }
    // FR_BACKGROUND: nobody waits on req->waitq; a submitter blocked on the limit may go on.
    bg_free_.push(r);
    if (!bg_blocked_.empty()) s_->wake(bg_blocked_.pop(), bg_unblock_site_);
}

bool FuseConn::request(int self, int task_id, uint8_t& phase, Action& out, FuseReqArgs args) {
    Req& r = reqs_[static_cast<size_t>(self)];
    const int64_t work = args.work >= 0 ? args.work : def_->costs.server_work;
    switch (phase) {
        case 0:
            phase = 1;
            if (def_->costs.app_submit > 0) {
                out = Action::Run(def_->costs.app_submit);
                return true;
            }
            [[fallthrough]];
        case 1:
            if (fuse_op_send(args.op) == FuseSend::forget) {
                send_forget(work);
                phase = 0;
                return false;
            }
            if (fuse_op_send(args.op) == FuseSend::background) {
                if (bg_free_.empty()) {  // fuse_get_req: fc->blocked, sleep on blocked_waitq
                    bg_blocked_.push(task_id);
                    out = Action::Block();
                    return true;
                }
                const int slot = bg_free_.pop();
                Req& b = reqs_[static_cast<size_t>(slot)];
                b.owner_task = -1;
                b.work = work;
                ++stats_.background;
                ++stats_.per_op[static_cast<size_t>(args.op)];
                send(slot);
                phase = 0;
                return false;
            }
            r.owner_task = task_id;
            r.work = work;
            ++stats_.per_op[static_cast<size_t>(args.op)];
            send(self);
            phase = 2;
            out = Action::Block();  // request_wait_answer
            return true;
        case 2: {
            if (!r.finished) {
                out = Action::Block();
                return true;
            }
            phase = 3;
            const int64_t after = def_->costs.app_complete + touch(self);
            if (after > 0) {
                out = Action::Run(after);
                return true;
            }
            [[fallthrough]];
        }
        default:
            phase = 0;
            return false;
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
                    return Action::Run(c.dev_read + w);
                }
                if (fiq_pending_.empty()) {
                    fiq_waiters_.push(task_id);
                    phase = 3;
                    return Action::Block();
                }
                req = fiq_pending_.pop();
                phase = 1;
                // fuse_do_work: the last idle worker starts another before it handles its request.
                int64_t spawn = 0;
                if (--numavail_ == 0 && numworker_ < def_->max_threads && !spare_.empty()) {
                    ++numworker_;
                    ++numavail_;
                    ++stats_.worker_spawns;
                    s_->start_task(spare_.front(), s_->now() + c.spawn, s_->driving_cpu());
                    spare_.erase(spare_.begin());  // at most max_threads entries, no allocation
                    spawn = c.spawn;
                }
                return Action::Run(spawn + c.dev_read + touch(req) + reqs_[static_cast<size_t>(req)].work + c.dev_write);
            }
            case 1:  // the reply's writev: fuse_dev_do_write -> fuse_request_end
                request_end(req);
                req = -1;
                phase = 4;
                if (c.writev_return > 0) return Action::Run(c.writev_return);
                [[fallthrough]];
            case 4:  // back in fuse_do_work: numavail++, and a surplus idle worker exits
                ++numavail_;
                if (def_->max_idle_threads >= 0 && numavail_ > def_->max_idle_threads) {
                    --numavail_;
                    --numworker_;
                    ++stats_.worker_exits;
                    spare_.push_back(task_id);  // a later spawn forks a new thread in this slot
                    phase = 0;
                    return Action::Exit();
                }
                phase = 2;
                if (c.loop_tail > 0) return Action::Run(c.loop_tail);
                [[fallthrough]];
            case 2:
                phase = 0;
                break;
            case 5:  // after a FORGET batch: no reply to write, back to read
                phase = 2;
                if (c.loop_tail > 0) return Action::Run(c.loop_tail);
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
        if (def_->costs.watchdog > 0) return Action::Run(def_->costs.watchdog);
    }
    watchdog_task_ = s_->driving_task()->id;
    phase = 1;
    return Action::Block();
}

Action FuseConn::ring_thread(int self, int task_id, int q, uint8_t& phase) {
    const FuseCosts& c = def_->costs;
    Ring& ring = rings_[static_cast<size_t>(q)];
    ring.task_id = task_id;
    if (s_->driving_cpu() != def_->queue_cpu[static_cast<size_t>(q)]) ++stats_.ring_off_cpu;
    int& req = serving_[static_cast<size_t>(self)];
    for (;;) {
        switch (phase) {
            case 1:  // COMMIT_AND_FETCH: fuse_uring_commit -> fuse_request_end, then the next request
                request_end(req);
                req = -1;
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
            default:  // in io_uring_enter: run the task work of a dispatched request, or sleep
                if (ring.pending.empty()) {
                    ring.sleeping = true;
                    return Action::Block();
                }
                req = ring.pending.pop();
                phase = 1;
                // send_in_task (copy-in, CQE), the handler in userspace, then the commit's copy-out.
                return Action::Run(c.uring_task_work + touch(req) + reqs_[static_cast<size_t>(req)].work + c.uring_commit);
        }
    }
}

}  // namespace wakesim
