// Task programs in rt-app's vocabulary (run, sleep, post/wait on channels, resume/suspend a task,
// barrier, loop), interpreted as a TaskDriver. The benchmark workloads (pipe, messaging, hogs)
// are generators of these programs.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "kernel/sched.h"
#include "sim/cpu_exec.h"
#include "sim/run_control.h"
#include "workloads/fuse/fuse_conn.h"
#include "workloads/index_fifo.h"

namespace wakesim {

struct Op {
    enum Kind : uint8_t {
        run, post, wait, resume, suspend, sleep, barrier, loop_begin, loop_end, count_op, exit,
        fuse_request,  // a: FUSE channel, b: FuseOp (0: the channel's READ), ns: server work; one request
        fuse_worker,   // a: FUSE channel; a /dev/fuse worker's loop, forever
        fuse_ring,     // a: FUSE channel, b: queue; a ring thread's loop, forever
        fuse_watchdog,  // a: FUSE channel; libfuse's teardown watchdog polling the device, forever
        fuse_aio,      // a: FUSE channel, b: iodepth, ns: I/Os, bytes: per op; an async job's I/O loop
        timer,         // a: timer, ns: period; sleep to the timer's next expiry (rt-app's timer event)
        sleep_until,   // ns: offset from the workload's start; a task's start delay (rt-app's delay)
        draw,          // ns..ns2: bytes drawn uniformly from the task's seeded stream (the `extract` kind)
    };
    Kind kind = run;
    int64_t ns = 0;    // run: work; wait: cost before blocking; sleep: duration
    int64_t ns2 = 0;   // wait: cost after the token arrives; run, fuse_request: more work per KiB drawn
    int32_t a = 0;     // channel, task, barrier index; loop count (0 = forever)
    int32_t b = 0;     // loop_end: index of its loop_begin; loop_begin: > a, the count is drawn in [a, b];
                       // barrier: 1 for the task that releases the others once all have arrived
    uint32_t bytes = 0;  // count_op: payload bytes
    uint8_t sub = 0;     // fuse_aio: the FuseOp of its requests; count_op: 1 counts the bytes drawn since the last op;
                         // wait: kCountsOnTake counts an op of `bytes` when the task has its token;
                         // fuse_request: kCountsOnTake counts an op of `bytes` at the request's reply;
                         // kSyscallEntry / kSyscallExit: the first / last request of its system call
    static constexpr uint8_t kCountsOnTake = 1;
    static constexpr uint8_t kSyscallEntry = kFuseCallEntry;
    static constexpr uint8_t kSyscallExit = kFuseCallExit;
    static constexpr uint8_t kOwnSyscall = kSyscallEntry | kSyscallExit;
};

// Program text: a list of Ops that every instance of a task shares (a `count: 100000` task holds
// its program once, not 100,000 times). A value type: copying shares the list, and a change to a
// shared list copies it first, so builders write it as a vector and instances never pay for it.
class Code {
public:
    Code() = default;
    Code(std::initializer_list<Op> ops) : ops_(std::make_shared<std::vector<Op>>(ops)) {}
    explicit Code(std::vector<Op> ops) : ops_(std::make_shared<std::vector<Op>>(std::move(ops))) {}
    void push_back(const Op& op) { own().push_back(op); }
    size_t size() const { return ops_ ? ops_->size() : 0; }
    bool empty() const { return size() == 0; }
    const Op* data() const { return ops_ ? ops_->data() : nullptr; }
    const Op& operator[](size_t i) const { return (*ops_)[i]; }
    const Op& front() const { return ops_->front(); }
    const Op* begin() const { return data(); }
    const Op* end() const { return data() + size(); }
    // Bytes of the shared list (counted once however many instances share it).
    size_t bytes() const { return ops_ ? ops_->capacity() * sizeof(Op) : 0; }

private:
    std::vector<Op>& own() {
        if (!ops_) ops_ = std::make_shared<std::vector<Op>>();
        else if (ops_.use_count() > 1) ops_ = std::make_shared<std::vector<Op>>(*ops_);
        return *ops_;
    }
    std::shared_ptr<std::vector<Op>> ops_;
};

// A counting channel with wait queues: a pipe, a socket, a request queue. A post hands its token
// straight to the first waiting reader (exclusive wake), else the token waits in the channel.
struct Channel {
    std::string name;
    int64_t capacity = 0;  // tokens the channel holds before writers block; 0: unbounded
    WakeSite read_site;    // how a post wakes a waiting reader
    WakeSite write_site;   // how a read wakes a writer blocked on a full channel
    int64_t shared_bytes = 0;  // data both sides touch (pipe buffer and state): warm only where last touched
    int64_t shared_lines = 0;  // the object's own lines each read or write moves from the last CPU (pipe_lines)
    // A pipe's buffers: tokens (small writes merged into one page) per buffer, and buffers. With
    // them, a writer blocks when every buffer is used and the last is full, and a reader wakes
    // it only when it frees a buffer (pipe_read(), v6.14+); capacity is then their product.
    // 0: a plain token count.
    int64_t slot_tokens = 0;
    int64_t slots = 0;
    // A FUSE connection instead of a token channel: only the fuse_* steps use it.
    std::shared_ptr<const FuseConnDef> fuse{};
};

// A periodic timer that program tasks sleep on (rt-app's timer resource): its next expiry starts
// at the first user's start and advances by the step's period at each use.
struct TimerDef {
    std::string name;
    bool absolute = false;  // an overrun keeps the grid (later periods catch up); else restarts from now
    bool shared = false;    // one timer for every task using it; else one per task instance
};

struct ProgramTask {
    TaskSpec spec;
    int64_t delay = 0;  // ns after the workload's start before the first step (its timers count from then)
    Code code;  // shared between the instances of one task
    bool background = false;  // hogs and noise: the run ends when the other tasks have exited
    bool deferred = false;    // created, started later by its FUSE connection (a libfuse pool worker)
    // The benchmark's main thread, forked first: it computes on the parent CPU while the driver
    // forks the other tasks (its first step, a run, lasts until the last fork), then goes on.
    bool launcher = false;
};

class ProgramDriver final : public TaskDriver {
public:
    ProgramDriver(std::vector<ProgramTask> tasks, std::vector<Channel> channels, std::vector<int> barrier_sizes,
                  RunControl& ctl, std::vector<TimerDef> timers = {});
    // Creates the tasks and starts them from `at`, forked from `parent_cpu` one after another
    // (a seeded gap in [gap_min, gap_max) apart, as a launcher forks them: WorkloadBuild's fork gap).
    void setup(CpuExec& s, Time at, int parent_cpu, uint64_t seed, int64_t gap_min, int64_t gap_max);
    // Pieces of work next_action() joins into one segment at most; 1 joins none (a test compares).
    static inline int join_limit = 64;

    Action next_action(Task& t) override;
    void on_timer(int task, uint32_t cookie) override;
    void switched_out(const Task& t) override;
    // Takes back every write planned ahead that has not begun (at a measurement window's edge).
    void settle_all();
    // Every foreground task has exited (background hogs and noise never do).
    bool all_exited() const { return exited_ == foreground_; }
    // The foreground tasks that have not exited and what each waits for, for a run left with
    // nothing to happen: `a (waits on channel "x"), b (at a barrier)`; eight at most.
    std::string blocked_text() const;
    // Tokens queued and waiters, for invariant checks: every post is consumed or still queued.
    int64_t tokens(int ch) const { return chans_[static_cast<size_t>(ch)].tokens; }
    int64_t posts(int ch) const { return chans_[static_cast<size_t>(ch)].posts; }
    int64_t takes(int ch) const { return chans_[static_cast<size_t>(ch)].takes; }
    int nr_channels() const { return static_cast<int>(chans_.size()); }
    // The FUSE connection of channel `ch`, nullptr for a token channel.
    const FuseConn* fuse_conn(int ch) const { return fuse_[static_cast<size_t>(ch)].get(); }
    // What the `draw` steps and drawn loop counts drew, for tests: every draw lies in its range and
    // the same seed draws the same values.
    struct DrawStats {
        uint64_t counts = 0, sizes = 0;    // loop counts and sizes drawn
        int64_t count_min = 0, count_max = 0, count_sum = 0;
        int64_t size_min = 0, size_max = 0, size_sum = 0;
    };
    const DrawStats& draws() const { return draws_; }

private:
    // A FIFO of program tasks threaded through wait_next_: head and tail, -1 when empty.
    struct WaitList {
        int head = -1, tail = -1;
        bool empty() const { return head < 0; }
    };
    struct ChanState {
        Channel def;
        int64_t tokens = 0;
        int64_t posts = 0, takes = 0;
        WaitList readers, writers;
        int64_t pages = 0, head_fill = 0, tail_left = 0;  // buffers in use (slot_tokens > 0)
        // A write checked and its lines pulled ahead of the work before it (next_action): by whom
        // (-1: none), the CPU that had touched the lines before, what the pull cost and the
        // write's work (pull included), to be taken back if the writer has not begun it when
        // another task uses the channel or the writer leaves its CPU.
        int ahead_ctx = -1;
        int ahead_prev_last = -1;
        int64_t ahead_pull = 0, ahead_ns = 0;
    };
    struct LoopFrame {
        int32_t start;
        int64_t left;  // -1: forever
    };
    struct Ctx {
        int task_id = -1;  // scheduler task id
        size_t pc = 0;
        uint8_t phase = 0;
        bool granted = false;
        bool write_slept = false;  // blocked on a full pipe since its last post (wake_next_writer)
        bool suspended = false;
        bool peer_wait = false;   // asleep until another program task acts (block_on_peer())
        bool background = false;  // its definition's
        int64_t resume_pending = 0;
        std::vector<LoopFrame> loops;
        Code code;  // shares the task definition's list
        const Op* ops = nullptr;  // code's steps and their count, fixed once set-up is done
        size_t nops = 0;
        Time base = 0;            // the workload's start plus the task's delay: where its timers start
        int32_t timer_slot = -1;  // its first per-instance timer in timer_states_, -1: none
        int32_t rng = -1;         // its stream in rngs_ when its program draws, -1: none
        int64_t drawn = 0;        // bytes of its last `draw`
        int64_t drawn_since_op = 0;  // bytes drawn since its last counted op
        int32_t ahead_chan = -1;     // the channel of its write planned ahead, -1: none
    };
    struct Barrier {
        int size = 0, arrived = 0;
        std::vector<int> waiting;
        int releaser = -1;  // a releasing task (Op b = 1) waiting for the others to arrive
        std::vector<int> releasing;  // the waiters of the last round, woken one after another
        size_t release_next = 0;     // the next of them to wake
    };
    // The barrier opens: its waiters are woken by the releasing task one at a time (next_action).
    static void begin_release(Barrier& b) {
        b.arrived = 0;
        b.releasing.swap(b.waiting);
        b.waiting.clear();
        b.release_next = 0;
    }
    // A sleep that only another program task can end (a post, a take, a barrier's last arrival,
    // a resume), and the wake that ends it: counted, so that a workload whose foreground tasks
    // all sleep so, or have exited, is known to be deadlocked however busy hogs, noise or a FUSE
    // server keep the CPUs.
    Action block_on_peer(Ctx& c) {
        if (!c.peer_wait && !c.background) {
            c.peer_wait = true;
            if (++peer_waits_ + exited_ == foreground_) check_deadlock();
        }
        return Action::Block();
    }
    void wake_peer(int ctx, const WakeSite& site);
    void check_deadlock();
    struct TimerState {
        Time next = 0;
        bool started = false;
    };
    TimerState& timer_state(const Ctx& c, int32_t timer);
    bool take_token(ChanState& c);
    void settle_ahead(int chan);  // undoes the channel's write planned ahead unless it has begun
    static void put_token(ChanState& c);
    static bool write_blocks(const ChanState& c);
    void enqueue(WaitList& q, int ctx);
    int dequeue(WaitList& q);

    CpuExec* s_ = nullptr;
    RunControl& ctl_;
    std::vector<ProgramTask> defs_;
    std::vector<ChanState> chans_;
    std::vector<std::unique_ptr<FuseConn>> fuse_;  // by channel
    std::vector<Barrier> barriers_;
    std::vector<TimerDef> timers_;
    std::vector<int32_t> timer_index_;       // by timer: its slot (shared) or its offset in a task's block
    int32_t per_instance_timers_ = 0;
    std::vector<TimerState> timer_states_;   // the shared timers, then each using instance's block
    Time start_ = 0;                         // the workload's start: time zero of every timer
    std::vector<RngStream> rngs_;     // one per drawing task: its draws do not depend on the others'
    DrawStats draws_;
    std::vector<Ctx> ctx_;            // by program task index
    std::vector<int> wait_next_;      // by program task index: the next task in its wait list
    std::vector<uint8_t> waiting_;    // by program task index: in a wait list now
    std::vector<int> by_task_id_;     // scheduler id -> program index
    int exited_ = 0;
    int foreground_ = 0;
    int peer_waits_ = 0;       // foreground tasks asleep in block_on_peer()
    bool deadlocked_ = false;  // reported once
    // A FUSE server's threads start first and the clients once every one of them has gone to
    // sleep waiting for requests: the mount exists, idle, before its clients run.
    int servers_pending_ = 0;
    std::vector<char> awaiting_sleep_;                       // by ctx: a server not yet asleep
    std::vector<std::pair<size_t, Time>> deferred_starts_;  // clients: ctx, fork time after the last server sleeps
    int start_cpu_ = 0;
    Time first_client_fork_ = 0;  // when the first client would have forked without waiting
    void servers_settled();
    WakeSite timer_site_{"timer", 0, false, SiteRole::generic};
    WakeSite generic_site_{"resume", 0, false, SiteRole::generic};
};

}  // namespace wakesim
