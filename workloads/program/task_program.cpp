#include "workloads/program/task_program.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "engine/rng.h"
#include "input/json_input.h"

namespace wakesim {

namespace {
void note_draw(uint64_t& n, int64_t& lo, int64_t& hi, int64_t& sum, int64_t v) {
    lo = n == 0 ? v : std::min(lo, v);
    hi = n == 0 ? v : std::max(hi, v);
    sum += v;
    ++n;
}
}  // namespace

ProgramDriver::ProgramDriver(std::vector<ProgramTask> tasks, std::vector<Channel> channels,
                             std::vector<int> barrier_sizes, RunControl& ctl, std::vector<TimerDef> timers)
    : ctl_(ctl), defs_(std::move(tasks)), timers_(std::move(timers)) {
    const size_t n = defs_.size();
    // A channel's wait queues are lists threaded through the tasks (a task blocks on one channel
    // at a time): a slot per task in all, not a slot per task on every channel, which for
    // messaging's groups x fds pipes was groups x fds x tasks.
    wait_next_.assign(n, -1);
    waiting_.assign(n, 0);
    for (auto& c : channels) {
        ChanState st;
        st.def = std::move(c);
        chans_.push_back(std::move(st));
    }
    fuse_.resize(chans_.size());
    int shared_key = static_cast<int>(chans_.size());  // shared-data keys after the channels'
    for (size_t i = 0; i < chans_.size(); ++i)
        if (chans_[i].def.fuse) {
            // The requests each task may have in flight on this connection.
            std::vector<int> depth(n, 0);
            for (size_t t = 0; t < n; ++t)
                for (const Op& op : defs_[t].code) {
                    if (op.a != static_cast<int32_t>(i)) continue;
                    if (op.kind == Op::fuse_request) depth[t] = std::max(depth[t], 1);
                    if (op.kind == Op::fuse_aio) depth[t] = std::max(depth[t], static_cast<int>(op.b));
                }
            fuse_[i] = std::make_unique<FuseConn>(chans_[i].def.fuse, depth, shared_key);
            shared_key += fuse_[i]->slots();
        }
    // Shared timers get a slot each; per-instance timers an offset in each user's block.
    int32_t shared = 0;
    for (const TimerDef& t : timers_) timer_index_.push_back(t.shared ? shared++ : per_instance_timers_++);
    timer_states_.resize(static_cast<size_t>(shared));
    for (int b : barrier_sizes) {
        Barrier bar;
        bar.size = b;
        bar.waiting.reserve(std::min(n, static_cast<size_t>(std::max(b, 1))));  // all but the last arrive and wait
        barriers_.push_back(std::move(bar));
    }
}

void ProgramDriver::setup(CpuExec& s, Time at, int parent_cpu, uint64_t seed, int64_t gap_min, int64_t gap_max) {
    s_ = &s;
    start_ = at;
    for (auto& f : fuse_)
        if (f) f->attach(s, seed);
    ctx_.resize(defs_.size());
    const Op* last_code = nullptr;  // instances of one task are consecutive: count its loops once
    size_t depth = 0;
    for (size_t i = 0; i < defs_.size(); ++i) {
        Ctx& c = ctx_[i];
        foreground_ += defs_[i].background ? 0 : 1;
        c.background = defs_[i].background;
        c.task_id = s.add_task(defs_[i].spec);
        c.code = defs_[i].code;
        if (c.code.data() != last_code) {
            last_code = c.code.data();
            depth = 0;
            for (const Op& op : c.code) depth += op.kind == Op::loop_begin ? 1 : 0;
        }
        c.loops.reserve(depth);
        c.base = at + defs_[i].delay;
        for (const Op& op : c.code)
            if (op.kind == Op::timer && !timers_[static_cast<size_t>(op.a)].shared) {
                c.timer_slot = static_cast<int32_t>(timer_states_.size());
                timer_states_.resize(timer_states_.size() + static_cast<size_t>(per_instance_timers_));
                break;
            }
        if (by_task_id_.size() <= static_cast<size_t>(c.task_id)) by_task_id_.resize(static_cast<size_t>(c.task_id) + 1, -1);
        by_task_id_[static_cast<size_t>(c.task_id)] = static_cast<int>(i);
        for (const Op& op : c.code)
            if (op.kind == Op::draw || (op.kind == Op::loop_begin && op.b > op.a)) {
                c.rng = static_cast<int32_t>(rngs_.size());
                rngs_.emplace_back(seed ^ ((i + 1) * 0x9e3779b97f4a7c15ull), "workload.draw");
                break;
            }
    }
    // Fork times: one after another from the parent CPU, a seeded gap apart. A FUSE server's
    // threads come first wherever the workload lists them: the mount exists before its clients.
    if (gap_min < 0 || gap_max <= gap_min) throw std::logic_error("fork gap range is empty");
    RngStream rng(seed, "workload.fork");
    std::vector<Time> fork_at(ctx_.size(), at);
    Time t = at;
    const auto fuse_server = [&](size_t i) {
        const Code& code = defs_[i].code;
        return !code.empty() && (code[0].kind == Op::fuse_worker || code[0].kind == Op::fuse_ring ||
                                 code[0].kind == Op::fuse_watchdog);
    };
    std::vector<size_t> order;  // started in this order too: forks in one nanosecond keep it
    for (const bool servers : {true, false})
        for (size_t i = 0; i < ctx_.size(); ++i) {
            if (defs_[i].deferred || fuse_server(i) != servers) continue;
            order.push_back(i);
            fork_at[i] = t;
            t += gap_min + static_cast<Time>(rng.below(static_cast<uint64_t>(gap_max - gap_min)));
        }
    for (size_t i = 0; i < ctx_.size(); ++i) {
        Ctx& c = ctx_[i];
        if (defs_[i].launcher) {
            // The parent is busy creating the others until the last fork (a clone's work).
            if (i != 0 || c.code.empty() || c.code[0].kind != Op::run)
                throw std::logic_error("the launcher must be the first task and start with a run step");
            std::vector<Op> ops(c.code.begin(), c.code.end());
            ops[0].ns = *std::max_element(fork_at.begin(), fork_at.end()) - at + 1000;
            c.code = Code(std::move(ops));
        }
        c.ops = c.code.data();
        c.nops = c.code.size();
        if (defs_[i].deferred) {
            const Op& first = c.code.front();
            if (first.kind != Op::fuse_worker || !fuse_[static_cast<size_t>(first.a)])
                throw std::logic_error("a deferred task must be a FUSE worker");
            fuse_[static_cast<size_t>(first.a)]->add_spare_worker(c.task_id);
        }
    }
    // The clients wait for the servers' threads to sleep (not with a launcher, whose run spans
    // every fork).
    bool launcher = false;
    for (const auto& d : defs_) launcher |= d.launcher;
    awaiting_sleep_.assign(ctx_.size(), 0);
    start_cpu_ = parent_cpu;
    for (const size_t i : order) {
        if (!launcher && fuse_server(i)) {
            awaiting_sleep_[i] = 1;
            ++servers_pending_;
        }
        if (servers_pending_ > 0 && !fuse_server(i)) {
            if (deferred_starts_.empty()) first_client_fork_ = fork_at[i];
            deferred_starts_.emplace_back(i, fork_at[i] - first_client_fork_);
            continue;
        }
        s.start_task(ctx_[i].task_id, fork_at[i], parent_cpu);
    }
}

// The last server thread went to sleep: the clients fork, a gap apart as they would have.
void ProgramDriver::servers_settled() {
    const Time now = s_->now();
    for (const auto& [i, offset] : deferred_starts_) {
        ctx_[i].base += now - first_client_fork_;  // its timers count from its start
        s_->start_task(ctx_[i].task_id, now + offset, start_cpu_);
    }
    deferred_starts_.clear();
}

ProgramDriver::TimerState& ProgramDriver::timer_state(const Ctx& c, int32_t timer) {
    const auto t = static_cast<size_t>(timer);
    const int32_t slot = timers_[t].shared ? timer_index_[t] : c.timer_slot + timer_index_[t];
    return timer_states_[static_cast<size_t>(slot)];
}

void ProgramDriver::enqueue(WaitList& q, int ctx) {
    if (waiting_[static_cast<size_t>(ctx)])
        throw std::logic_error("program task " + std::to_string(ctx) + " queued on two channels at once");
    waiting_[static_cast<size_t>(ctx)] = 1;
    wait_next_[static_cast<size_t>(ctx)] = -1;
    if (q.tail >= 0) wait_next_[static_cast<size_t>(q.tail)] = ctx;
    else q.head = ctx;
    q.tail = ctx;
}

int ProgramDriver::dequeue(WaitList& q) {
    const int ctx = q.head;
    q.head = wait_next_[static_cast<size_t>(ctx)];
    if (q.head < 0) q.tail = -1;
    waiting_[static_cast<size_t>(ctx)] = 0;
    return ctx;
}

bool ProgramDriver::take_token(ChanState& c) {
    if (c.tokens == 0) return false;
    --c.tokens;
    ++c.takes;
    // pipe_read(): a reader that frees space in a full pipe wakes one blocked writer; with
    // buffers, only when it releases a whole one while all were in use (pipe_update_tail()).
    bool room = true;
    if (c.def.slot_tokens > 0) {
        const bool was_full = c.pages >= c.def.slots;
        room = false;
        if (--c.tail_left == 0) {
            --c.pages;
            room = was_full;
            c.tail_left = c.pages == 0 ? 0 : c.pages == 1 ? c.head_fill : c.def.slot_tokens;
            if (c.pages == 0) c.head_fill = 0;
        }
    }
    if (room && !c.writers.empty()) wake_peer(dequeue(c.writers), c.def.write_site);
    return true;
}

// A post that finds no reader waiting queues its token; in a pipe, it is merged into the last
// buffer while that has room, else it takes a new one (pipe_write()).
void ProgramDriver::put_token(ChanState& c) {
    ++c.tokens;
    if (c.def.slot_tokens == 0) return;
    if (c.pages == 0) {
        c.pages = c.head_fill = c.tail_left = 1;
    } else if (c.head_fill < c.def.slot_tokens) {
        ++c.head_fill;
        if (c.pages == 1) ++c.tail_left;
    } else {
        ++c.pages;
        c.head_fill = 1;
    }
}

// pipe_write() sleeps when no buffer is free and the last one cannot take the message.
bool ProgramDriver::write_blocks(const ChanState& c) {
    if (c.def.slot_tokens > 0) return c.pages >= c.def.slots && c.head_fill >= c.def.slot_tokens;
    return c.def.capacity > 0 && c.tokens >= c.def.capacity;
}

// Work that ends in no action of its own (a `run` step, the cost after a read) is not returned
// at once: the steps after it go on, and the work of the next step that has one joins it in one
// segment, since nothing can happen between the two (a reschedule, a tick or an interrupt stops
// the segment wherever it is). Steps without effects on others are passed that way (loops and
// draws; a counted op is not: its time is what a run measures). A write is planned ahead:
// its check for room and the pull of the pipe's lines are made at the start of the joined
// segment, and taken back (ChanState::ahead_ctx) if another task uses the channel, or the writer
// leaves its CPU, before the writer gets to it; so each happens in the order it would without
// the joining, and the joining changes the number of events, not what they do. At most
// join_limit pieces of work are joined.

Action ProgramDriver::next_action(Task& t) {
    Ctx& c = ctx_[static_cast<size_t>(by_task_id_[static_cast<size_t>(t.id)])];
    int64_t joined = 0;  // work passed without returning, which runs before the next step's
    int joined_runs = 0;
    // The first joined piece ends with a return to user space (a read's copy-out, a FUSE reply's
    // teardown, a write's return): a reschedule asked for meanwhile takes effect there (CpuExec).
    int64_t first = 0;
    const auto join = [&](int64_t ns) {
        if (joined == 0) first = ns;
        joined += ns;
    };
    const auto joined_run = [&](int64_t total) {
        Action a = Action::Run(total);
        if (joined > 0 && total > first) a.first = static_cast<int32_t>(std::min<int64_t>(first, INT32_MAX));
        return a;
    };
    for (uint64_t steps = 0;; ++steps) {
        if (steps > 10000000)
            throw std::runtime_error("task " + t.comm +
                                     " loops without spending time or blocking (e.g. it posts to the channel it waits on)");
        if (c.pc >= c.nops) {
            if (joined > 0) return joined_run(joined);
            if (!c.background) {
                if (++exited_ == foreground_) ctl_.finish();
                else check_deadlock();  // it was the one the others waited for
            }
            return Action::Exit();
        }
        const Op& op = c.ops[c.pc];
        // A step with effects on others, or one that reads the clock, comes after the joined work
        // (each such case returns it first).
        switch (op.kind) {
            case Op::run:
                if (c.phase == 0) {
                    const int64_t ns = op.ns + c.drawn * op.ns2 / 1024;
                    if (ns > 0) {
                        if (++joined_runs < join_limit) {
                            join(ns);
                            ++c.pc;
                            break;
                        }
                        c.phase = 1;
                        return joined_run(joined + ns);
                    }
                }
                c.phase = 0;
                ++c.pc;
                break;
            case Op::post: {
                ChanState& ch = chans_[static_cast<size_t>(op.a)];
                const int self = static_cast<int>(&c - ctx_.data());
                if (ch.ahead_ctx == self) {  // its own write planned ahead, now due: it stands
                    ch.ahead_ctx = -1;
                    c.ahead_chan = -1;
                } else if (ch.ahead_ctx >= 0) {
                    settle_ahead(op.a);
                }
                if (write_blocks(ch)) {
                    if (joined > 0) return joined_run(joined);  // checked again when that is done
                    c.phase = 0;
                    c.write_slept = true;
                    enqueue(ch.writers, self);
                    return block_on_peer(c);  // retried from the start when woken
                }
                if (c.phase == 0) {
                    // The write itself (op.ns: pipe_write() up to its wakeup) with the pull of the
                    // pipe's lines and data from the CPU that used it last: both before the wakeup.
                    Hardware& hw = s_->hardware();
                    const int prev_last = joined > 0 ? hw.shared_last(op.a) : -1;
                    const int64_t pull = hw.touch_shared(op.a, ch.def.shared_bytes, s_->driving_cpu(), ch.def.shared_lines);
                    const int64_t ns = op.ns + pull;
                    if (joined > 0) {
                        ch.ahead_ctx = self;
                        ch.ahead_prev_last = prev_last;
                        ch.ahead_pull = pull;
                        ch.ahead_ns = ns;
                        c.ahead_chan = op.a;
                        c.phase = 1;
                        return joined_run(joined + ns);
                    }
                    if (ns > 0) {
                        c.phase = 1;
                        return Action::Run(ns);
                    }
                }
                c.phase = 0;
                ++ch.posts;
                if (!ch.readers.empty()) {
                    const int r = dequeue(ch.readers);
                    ctx_[static_cast<size_t>(r)].granted = true;
                    ++ch.takes;
                    wake_peer(r, ch.def.read_site);
                } else {
                    put_token(ch);
                }
                // pipe_write(): a writer that had slept passes the wakeup on while there is room.
                if (c.write_slept) {
                    c.write_slept = false;
                    if (ch.def.slot_tokens > 0 && !write_blocks(ch) && !ch.writers.empty())
                        wake_peer(dequeue(ch.writers), ch.def.write_site);
                }
                ++c.pc;
                break;
            }
            case Op::wait: {
                ChanState& ch = chans_[static_cast<size_t>(op.a)];
                if (c.phase == 0) {
                    c.phase = 1;
                    if (op.ns > 0 || joined > 0) return joined_run(joined + op.ns);
                }
                if (c.phase == 1) {
                    if (ch.ahead_ctx >= 0) settle_ahead(op.a);
                    if (take_token(ch)) {
                        c.phase = 3;
                    } else {
                        c.phase = 2;
                        enqueue(ch.readers, static_cast<int>(&c - ctx_.data()));
                        return block_on_peer(c);
                    }
                }
                if (c.phase == 2) {
                    if (!c.granted) return block_on_peer(c);  // not our token yet
                    c.granted = false;
                    c.phase = 3;
                }
                if (c.phase == 3) {
                    if (op.sub == Op::kCountsOnTake) ctl_.count_op(op.bytes);  // its message: perf's op
                    if (ch.ahead_ctx >= 0) settle_ahead(op.a);
                    c.phase = 4;
                    // Reading the data pulls its lines from the CPU that wrote them.
                    const int64_t after = op.ns2 + s_->hardware().touch_shared(op.a, ch.def.shared_bytes, s_->driving_cpu(), ch.def.shared_lines);
                    if (after > 0) {
                        if (++joined_runs >= join_limit) return joined_run(joined + after);
                        join(after);
                    }
                }
                c.phase = 0;
                ++c.pc;
                break;
            }
            case Op::resume: {
                if (joined > 0) return joined_run(joined);
                Ctx& target = ctx_[static_cast<size_t>(op.a)];
                if (target.suspended) {
                    target.suspended = false;
                    wake_peer(op.a, generic_site_);
                } else {
                    ++target.resume_pending;
                }
                ++c.pc;
                break;
            }
            case Op::suspend:
                if (joined > 0) return joined_run(joined);
                if (c.phase == 0) {
                    if (c.resume_pending > 0) {
                        --c.resume_pending;
                        ++c.pc;
                        break;
                    }
                    c.phase = 1;
                    c.suspended = true;
                    return block_on_peer(c);
                }
                if (c.suspended) return block_on_peer(c);
                c.phase = 0;
                ++c.pc;
                break;
            case Op::sleep:
                if (joined > 0) return joined_run(joined);
                if (c.phase == 0) {
                    c.phase = 1;
                    s_->arm_timer(c.task_id, s_->now() + op.ns, 0);
                    return Action::Block();
                }
                if (c.phase == 1) return Action::Block();  // timer not fired yet
                c.phase = 0;
                ++c.pc;
                break;
            case Op::timer:
                if (joined > 0) return joined_run(joined);
                // rt-app's timer event (src/rt-app.c, run_event): advance the expiry by the period;
                // sleep to it if it is ahead, else go on at once, and a relative timer restarts from now.
                if (c.phase == 0) {
                    TimerState& ts = timer_state(c, op.a);
                    if (!ts.started) {
                        ts.started = true;
                        ts.next = c.base;
                    }
                    ts.next += op.ns;
                    if (s_->now() < ts.next) {
                        c.phase = 1;
                        s_->arm_timer(c.task_id, ts.next, 0);
                        return Action::Block();
                    }
                    if (!timers_[static_cast<size_t>(op.a)].absolute) ts.next = s_->now();
                    ++c.pc;
                    break;
                }
                if (c.phase == 1) return Action::Block();  // not expired yet
                c.phase = 0;
                ++c.pc;
                break;
            case Op::sleep_until:
                if (joined > 0) return joined_run(joined);
                if (c.phase == 0) {
                    if (s_->now() >= start_ + op.ns) {
                        ++c.pc;
                        break;
                    }
                    c.phase = 1;
                    s_->arm_timer(c.task_id, start_ + op.ns, 0);
                    return Action::Block();
                }
                if (c.phase == 1) return Action::Block();
                c.phase = 0;
                ++c.pc;
                break;
            case Op::barrier: {
                if (joined > 0) return joined_run(joined);
                // A barrier's last arrival releases the others. A releasing task (the benchmark's
                // main thread writing the start pipe) releases them itself: when a worker comes
                // last, it wakes only the releaser.
                Barrier& b = barriers_[static_cast<size_t>(op.a)];
                const int self = static_cast<int>(&c - ctx_.data());
                if (c.phase == 0) {
                    if (++b.arrived == b.size) {
                        if (b.releaser >= 0 && op.b == 0) {
                            const int r = b.releaser;
                            b.releaser = -1;
                            ctx_[static_cast<size_t>(r)].phase = 2;
                            wake_peer(r, generic_site_);
                            c.phase = 1;
                            b.waiting.push_back(self);
                            return block_on_peer(c);
                        }
                        begin_release(b);
                        c.phase = 3;
                    } else {
                        c.phase = 1;
                        if (op.b == 1)
                            b.releaser = self;
                        else
                            b.waiting.push_back(self);
                        return block_on_peer(c);
                    }
                }
                if (c.phase == 1) return block_on_peer(c);
                if (c.phase == 2) {  // woken: a participant goes on, a releaser opens the barrier
                    if (op.b == 0) {
                        c.phase = 0;
                        ++c.pc;
                        break;
                    }
                    begin_release(b);
                    c.phase = 3;
                }
                // The release, one wakeup per action: __wake_up_common() wakes the waiters in turn,
                // each try_to_wake_up() paid on this CPU before the next (the action's overhead),
                // with the wait queue's lock held, so the early wakees run while the later ones
                // are placed and none preempts the releaser before it is done.
                if (b.release_next < b.releasing.size()) {
                    const int w = b.releasing[b.release_next++];
                    ctx_[static_cast<size_t>(w)].phase = 2;
                    wake_peer(w, generic_site_);
                    return Action::RunAtomic(0);
                }
                b.releasing.clear();
                c.phase = 0;
                ++c.pc;
                break;
            }
            case Op::loop_begin: {
                int64_t n = op.a > 0 ? op.a : -1;
                if (op.b > op.a) {  // a drawn count in [a, b]
                    n = op.a + static_cast<int64_t>(rngs_[static_cast<size_t>(c.rng)].below(static_cast<uint64_t>(op.b - op.a + 1)));
                    note_draw(draws_.counts, draws_.count_min, draws_.count_max, draws_.count_sum, n);
                }
                c.loops.push_back({static_cast<int32_t>(c.pc + 1), n});
                ++c.pc;
                break;
            }
            case Op::draw:
                c.drawn = op.ns + static_cast<int64_t>(rngs_[static_cast<size_t>(c.rng)].below(static_cast<uint64_t>(op.ns2 - op.ns + 1)));
                c.drawn_since_op += c.drawn;
                note_draw(draws_.sizes, draws_.size_min, draws_.size_max, draws_.size_sum, c.drawn);
                ++c.pc;
                break;
            case Op::loop_end: {
                LoopFrame& f = c.loops.back();
                if (f.left > 0) --f.left;
                if (f.left != 0) {
                    c.pc = static_cast<size_t>(f.start);
                } else {
                    c.loops.pop_back();
                    ++c.pc;
                }
                break;
            }
            case Op::count_op:
                if (joined > 0) return joined_run(joined);
                if (op.sub == 1) {
                    ctl_.count_op(static_cast<uint64_t>(c.drawn_since_op));
                    c.drawn_since_op = 0;
                } else {
                    ctl_.count_op(op.bytes);
                }
                ++c.pc;
                break;
            case Op::exit:
                if (joined > 0) return joined_run(joined);
                c.pc = c.nops;
                break;
            case Op::fuse_request: {
                FuseConn& conn = *fuse_[static_cast<size_t>(op.a)];
                // b: the opcode, ns: its server work; b = 0 is the connection's READ (fio).
                // ns2: the data copies per KiB of the bytes drawn last (a WRITE of a drawn size).
                FuseReqArgs args =
                    op.b == 0 ? FuseReqArgs{} : FuseReqArgs{static_cast<FuseOp>(op.b), 0, op.ns + c.drawn * op.ns2 / 1024};
                args.call = op.sub;  // its kSyscallEntry and kSyscallExit bits
                // A request starts with work of no effect (the system call's entry, the submit),
                // which joins the work before it; its effects come at that work's end.
                const bool join_submit = joined > 0 && c.phase == 0 && conn.submit_work(args.call) > 0;
                if (joined > 0 && !join_submit) return joined_run(joined);
                Action a = Action::Block();
                int64_t tail = 0;  // the work after a reply: it joins what follows
                if (conn.request(static_cast<int>(&c - ctx_.data()), c.task_id, c.phase, a, args, tail))
                    return join_submit ? joined_run(joined + a.ns) : a;
                if (op.sub & Op::kCountsOnTake) ctl_.count_op(op.bytes);  // fio's I/O: done at its reply
                ++c.pc;
                if (tail > 0) {
                    if (++joined_runs >= join_limit) return joined_run(joined + tail);
                    join(tail);
                }
                break;
            }
            case Op::fuse_aio: {
                if (joined > 0) return joined_run(joined);
                Action a = Action::Block();
                int reaped = 0;
                // sub: the opcode (READ or WRITE), ns2: its server work, ns: I/Os, b: iodepth.
                const FuseReqArgs args{static_cast<FuseOp>(op.sub), 0, op.ns2};
                const bool more = fuse_[static_cast<size_t>(op.a)]->aio(static_cast<int>(&c - ctx_.data()), c.task_id,
                                                                       op.ns, args, c.phase, a, reaped);
                for (int k = 0; k < reaped; ++k) ctl_.count_op(op.bytes);
                if (more) return a;
                ++c.pc;
                break;
            }
            case Op::fuse_worker:
                if (joined > 0) return joined_run(joined);
                return fuse_[static_cast<size_t>(op.a)]->worker(static_cast<int>(&c - ctx_.data()), c.task_id, c.phase);
            case Op::fuse_watchdog:
                if (joined > 0) return joined_run(joined);
                return fuse_[static_cast<size_t>(op.a)]->watchdog(c.phase);
            case Op::fuse_ring:
                if (joined > 0) return joined_run(joined);
                return fuse_[static_cast<size_t>(op.a)]->ring_thread(static_cast<int>(&c - ctx_.data()), c.task_id, op.b,
                                                                     c.phase);
        }
    }
}

void ProgramDriver::settle_ahead(int chan) {
    ChanState& ch = chans_[static_cast<size_t>(chan)];
    Ctx& w = ctx_[static_cast<size_t>(ch.ahead_ctx)];
    if (s_->take_back_work(w.task_id, ch.ahead_ns)) {
        s_->hardware().untouch_shared(chan, ch.ahead_prev_last, ch.ahead_pull);
        w.phase = 0;  // the write is checked and its lines pulled when the writer gets there
    }
    w.ahead_chan = -1;
    ch.ahead_ctx = -1;
}

void ProgramDriver::settle_all() {
    for (size_t ch = 0; ch < chans_.size(); ++ch)
        if (chans_[ch].ahead_ctx >= 0) settle_ahead(static_cast<int>(ch));
}

void ProgramDriver::switched_out(const Task& t) {
    const auto id = static_cast<size_t>(t.id);
    if (id >= by_task_id_.size() || by_task_id_[id] < 0) return;
    const auto ci = static_cast<size_t>(by_task_id_[id]);
    const Ctx& c = ctx_[ci];
    if (c.ahead_chan >= 0) settle_ahead(c.ahead_chan);
    if (servers_pending_ > 0 && awaiting_sleep_[ci] && t.state == TaskState::sleeping) {
        awaiting_sleep_[ci] = 0;
        if (--servers_pending_ == 0) servers_settled();
    }
}

void ProgramDriver::wake_peer(int ctx, const WakeSite& site) {
    Ctx& c = ctx_[static_cast<size_t>(ctx)];
    if (c.peer_wait) {
        c.peer_wait = false;
        --peer_waits_;
    }
    s_->wake(c.task_id, site);
}

// Background tasks (hogs, noise, a FUSE server's threads) take no step that wakes a program
// task's peer wait, so once every foreground task sleeps in one or has exited, none ever wakes.
// Where the sleepers all loop forever and some task has exited, they are servers left waiting for
// clients that are done: the workload has finished. Otherwise it is deadlocked.
void ProgramDriver::check_deadlock() {
    if (deadlocked_ || peer_waits_ == 0 || peer_waits_ + exited_ != foreground_) return;
    deadlocked_ = true;
    bool served = exited_ > 0;
    for (size_t i = 0; i < ctx_.size() && served; ++i) {
        const Ctx& c = ctx_[i];
        if (!c.peer_wait) continue;
        served = std::any_of(c.loops.begin(), c.loops.end(), [](const LoopFrame& f) { return f.left < 0; });
    }
    if (served) ctl_.finish();
    else ctl_.deadlock();
}

void ProgramDriver::on_timer(int task, uint32_t) {
    Ctx& c = ctx_[static_cast<size_t>(by_task_id_[static_cast<size_t>(task)])];
    const Op::Kind k = c.ops[c.pc].kind;
    if ((k == Op::sleep || k == Op::timer || k == Op::sleep_until) && c.phase == 1) {
        c.phase = 2;
        s_->wake(task, timer_site_);
    }
}

std::string ProgramDriver::blocked_text() const {
    std::string out;
    int listed = 0, more = 0;
    for (size_t i = 0; i < ctx_.size(); ++i) {
        const Ctx& c = ctx_[i];
        if (defs_[i].background || c.task_id < 0) continue;
        const Task& t = s_->sched().task(c.task_id);
        if (t.state == TaskState::exited) continue;
        if (listed == 8) {
            ++more;
            continue;
        }
        std::string what = t.state == TaskState::sleeping ? "asleep" : "runnable";
        if (c.suspended) {
            what = "suspended, never resumed";
        } else if (c.pc < c.nops) {
            const Op& op = c.ops[c.pc];
            if (op.kind == Op::wait) what = "waits on channel " + quote_for_message(chans_[static_cast<size_t>(op.a)].def.name);
            else if (op.kind == Op::post) what = "waits to post to the full channel " + quote_for_message(chans_[static_cast<size_t>(op.a)].def.name);
            else if (op.kind == Op::barrier) {
                const Barrier& b = barriers_[static_cast<size_t>(op.a)];
                what = "waits at a barrier short of tasks: " + std::to_string(b.arrived) + " of its " +
                       std::to_string(b.size) + " participants arrived";
            }
        }
        out += (listed++ == 0 ? "" : ", ") + t.comm + " (" + what + ")";
    }
    if (more > 0) out += " and " + std::to_string(more) + " more";
    return out;
}

}  // namespace wakesim
