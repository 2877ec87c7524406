#include "engine/engine.h"

#include <algorithm>
#include <stdexcept>

namespace wakesim {

uint16_t Engine::add_target(EventTarget* t) {
    if (targets_.size() >= UINT16_MAX) throw std::length_error("too many event targets");
    targets_.push_back(t);
    return static_cast<uint16_t>(targets_.size() - 1);
}

// The heap proper: the standard binary heap, whose pop descends to a leaf and sifts the last
// event up from there. Its order is an inlined function object.
namespace {

struct Later {
    bool operator()(const Event& x, const Event& y) const { return x.time != y.time ? x.time > y.time : x.seq > y.seq; }
};

}  // namespace

void Engine::heap_push(const Event& ev) {
    heap_.push_back(ev);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
}

Event Engine::heap_pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
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
            if (heap_.empty() || heap_.front().time > until) break;
            e = heap_pop();
        }
        now_ = e.time;
        targets_[e.target]->on_event(e);
        ++n;
    }
    if (pending() == 0 || (!stopped_ && until != kTimeNever && now_ < until)) {
        if (!stopped_ && until != kTimeNever) now_ = std::max(now_, until);
    }
    processed_ += n;
    return n;
}

}  // namespace wakesim
