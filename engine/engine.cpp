#include "engine/engine.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace wakesim {

uint16_t Engine::add_target(EventTarget* t) {
    if (targets_.size() >= UINT16_MAX) throw std::length_error("too many event targets");
    targets_.push_back(t);
    return static_cast<uint16_t>(targets_.size() - 1);
}

// The heap proper: a binary min-heap on (time, seq), written out because the standard
// algorithms' generic index arithmetic cost about twice as many instructions per level. A pop,
// or a replacement of the root, moves the hole down until the incoming event fits. seq is
// unique (but for a virtual_seq() that wraps, which would take half a million events scheduled as
// of one nanosecond, or a spill of that many into the next), so any correct heap pops the same order.
namespace {

// (time, seq) as one unsigned 128-bit number, read straight from the event's first 16 bytes:
// time >= 0 always (the engine never goes back).
__extension__ typedef unsigned __int128 Key;
static_assert(std::endian::native == std::endian::little && offsetof(Event, seq) == 0 &&
              offsetof(Event, time) == 8, "Event's (seq, time) must read as one little-endian key");
inline Key key(const Event& e) {
    Key k;
    std::memcpy(&k, &e, sizeof k);
    return k;
}

// Moves `ev` up from the hole at index i to its place.
inline void sift_up(Event* h, size_t i, const Event& ev) {
    const Key k = key(ev);
    while (i > 0) {
        const size_t parent = (i - 1) / 2;
        if (key(h[parent]) <= k) break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = ev;
}

// Fills the hole at the root with `ev`: down along the earlier child while that child is earlier
// than `ev`. Mostly `ev` is a new segment end, which settles among the other CPUs' segment ends,
// above the ticks that fill the heap's lower levels; a walk to a leaf and back up cost more.
inline void fill_root(Event* h, size_t n, const Event& ev) {
    // h[n] is the sentinel, so a missing right child never wins. Offsets in bytes: the child of
    // the event at byte offset o is at 2o + 32.
    char* const base = reinterpret_cast<char*>(h);
    const size_t end = n * sizeof(Event);
    const Key k = key(ev);
    size_t hole = 0;
    for (size_t c = sizeof(Event); c < end; c = 2 * hole + sizeof(Event)) {
        const Event* l = reinterpret_cast<const Event*>(base + c);
        if (key(l[1]) < key(l[0])) c += sizeof(Event);
        if (k <= key(*reinterpret_cast<const Event*>(base + c))) break;
        std::memcpy(base + hole, base + c, sizeof(Event));
        hole = c;
    }
    std::memcpy(base + hole, &ev, sizeof(Event));
}

}  // namespace

Engine::Engine() { heap_.push_back(kSentinel); }

void Engine::heap_push(const Event& ev) {
    heap_.back() = ev;  // the sentinel's place
    heap_.push_back(kSentinel);
    sift_up(heap_.data(), heap_.size() - 2, ev);
}

void Engine::heap_pop() {
    Event* h = heap_.data();
    const size_t n = heap_.size() - 2;  // events left; the last one moves into the hole
    const Event last = h[n];
    h[n] = kSentinel;
    heap_.pop_back();
    if (n > 0) fill_root(h, n, last);
}

void Engine::heap_replace_top(const Event& ev) { fill_root(heap_.data(), heap_.size() - 1, ev); }

void Engine::schedule_as_of(Time at, uint64_t vseq, uint16_t target, uint16_t kind, int32_t a, uint32_t b) {
    if (at < now_) at = now_;
    insert(Event{vseq, at, target, kind, a, b});
}

uint64_t Engine::run_until(Time until) {
    uint64_t n = 0;
    stopped_ = false;
    while (!stopped_) {
        Event e;
        if (has_first_) {
            if (first_.time > until) break;
            e = first_;
            has_first_ = false;
        } else {
            if (heap_.size() == 1 || heap_.front().time > until) break;
            e = heap_.front();
            top_done_ = true;
        }
        now_ = e.time;
        cur_seq_ = e.seq;
        try {
            targets_[e.target]->on_event(e);
        } catch (...) {
            drop_done_top();  // the queue stays whole for whoever catches it
            throw;
        }
        drop_done_top();
        ++n;
    }
    last_event_ = now_;
    if (pending() == 0 || (!stopped_ && until != kTimeNever && now_ < until)) {
        if (!stopped_ && until != kTimeNever) now_ = std::max(now_, until);
    }
    processed_ += n;
    return n;
}

}  // namespace wakesim
