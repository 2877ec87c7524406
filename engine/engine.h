// The discrete-event engine: integer-nanosecond time, one event queue, ties broken by the order
// events were scheduled in (or, for an event scheduled as of a later time, would have been). It
// knows nothing of schedulers or workloads: events are routed to registered targets.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wakesim {

using Time = int64_t;  // simulated nanoseconds
inline constexpr Time kNsPerUs = 1000;
inline constexpr Time kNsPerMs = 1000 * 1000;
inline constexpr Time kNsPerSec = 1000 * 1000 * 1000;
inline constexpr Time kTimeNever = INT64_MAX;

// A plain record kept in the queue; payload meaning belongs to the target.
// seq comes first so that on a little-endian machine (seq, time) read as one unsigned 128-bit
// number is the queue's order (engine.cpp).
struct Event {
    uint64_t seq;  // scheduling order (Engine::next_seq()): the deterministic tie-break
    Time time;
    uint16_t target;  // index returned by Engine::add_target
    uint16_t kind;
    int32_t a;
    uint32_t b;
};

class EventTarget {
public:
    virtual ~EventTarget() = default;
    virtual void on_event(const Event& e) = 0;
};

// The queue: the earliest event in a slot of its own, the others in a binary min-heap. A
// simulation mostly schedules the event that comes next (the end of the segment just started),
// which then costs a store and a load instead of a heap insertion and removal; otherwise the slot
// costs one comparison. The slot's event precedes every event in the heap, so events leave in
// (time, seq) order, the same order as a single heap's.
class Engine {
public:
    Engine();
    Time now() const { return now_; }
    // The time of the last event run_until() handled (now() moves on to its `until` when the
    // queue runs dry first).
    Time last_event_time() const { return last_event_; }
    uint16_t add_target(EventTarget* t);
    void schedule(Time at, uint16_t target, uint16_t kind, int32_t a = 0, uint32_t b = 0) {
        if (at < now_) at = now_;  // the past is not reachable; keeps causality
        insert(Event{next_seq(), at, target, kind, a, b});
    }
    // Runs events with time <= until (or until stop() or the queue empties). Returns events run.
    uint64_t run_until(Time until);
    void stop() { stopped_ = true; }
    bool stopped() const { return stopped_; }
    size_t pending() const { return heap_.size() - 1 - (top_done_ ? 1 : 0) + (has_first_ ? 1 : 0); }
    uint64_t events_processed() const { return processed_; }
    void reserve(size_t n) { heap_.reserve(n + 1); }
    // The seq the next event scheduled now takes, taken: seqs grow with the time they are
    // scheduled at (the high bits) and, within a nanosecond, with the order (the low bits).
    uint64_t next_seq() {
        seq_ = std::max(seq_ + 1, now_ < kSeqTimeLimit ? (static_cast<uint64_t>(now_) << kSeqShift) | kSeqOwnBit : 0);
        return seq_;
    }
    // An event with a seq given rather than taken now: from virtual_seq(as_of), it is ordered
    // among equal times as if scheduled at `as_of` (>= now), before what is scheduled then and
    // after the events of that `as_of` made before it (a segment's end joined to the one before
    // it is where the second's would be); from an earlier next_seq(), as if scheduled then.
    void schedule_as_of(Time at, uint64_t vseq, uint16_t target, uint16_t kind, int32_t a = 0, uint32_t b = 0);
    uint64_t virtual_seq(Time as_of) {
        if (as_of >= kSeqTimeLimit) return next_seq();  // past about 2.4 simulated hours: plain order
        return (static_cast<uint64_t>(as_of) << kSeqShift) | (vseq_++ & (kSeqOwnBit - 1));
    }
    // The seq of the event being handled.
    uint64_t current_seq() const { return cur_seq_; }

private:
    static bool before(const Event& x, const Event& y) { return x.time < y.time || (x.time == y.time && x.seq < y.seq); }
    void insert(const Event& ev) {
        if (top_done_) {
            // The event being handled still sits at the heap's root: the new one takes its place
            // (one pass down instead of a pop and a push).
            top_done_ = false;
            if (has_first_ && before(ev, first_)) {
                heap_replace_top(first_);
                first_ = ev;
            } else {
                heap_replace_top(ev);
            }
            return;
        }
        if (has_first_) {
            if (before(ev, first_)) {
                heap_push(first_);
                first_ = ev;
            } else {
                heap_push(ev);
            }
        } else if (heap_.size() == 1 || before(ev, heap_.front())) {
            first_ = ev;
            has_first_ = true;
        } else {
            heap_push(ev);
        }
    }
    void heap_push(const Event& ev);
    void heap_pop();                         // removes the root
    void heap_replace_top(const Event& ev);  // the root leaves, ev comes in
    void drop_done_top() {  // the handled event, if still at the root, leaves it
        if (top_done_) {
            top_done_ = false;
            heap_pop();
        }
    }

    // After the last event of the heap, an event later than any other, so that the pop need not
    // ask whether a right child exists.
    static constexpr Event kSentinel{UINT64_MAX, INT64_MAX, 0, 0, 0, 0};
    Event first_{};
    bool has_first_ = false;
    // The heap's root is the event being handled: the first event scheduled meanwhile replaces
    // it, else it is popped when its handler returns. A handler mostly schedules its target's
    // next event (the end of the segment it starts), so the pop and that push become one pass.
    bool top_done_ = false;
    std::vector<Event> heap_;
    std::vector<EventTarget*> targets_;
    Time now_ = 0;
    Time last_event_ = 0;
    static constexpr int kSeqShift = 20;
    static constexpr uint64_t kSeqOwnBit = uint64_t{1} << (kSeqShift - 1);
    static constexpr Time kSeqTimeLimit = Time{1} << (63 - kSeqShift);
    uint64_t seq_ = 0;
    uint64_t vseq_ = 0;
    uint64_t cur_seq_ = 0;
    uint64_t processed_ = 0;
    bool stopped_ = false;
};

}  // namespace wakesim
