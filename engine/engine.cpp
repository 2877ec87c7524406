#include "engine/engine.h"

#include <algorithm>
#include <stdexcept>

namespace wakesim {

uint16_t Engine::add_target(EventTarget* t) {
    if (targets_.size() >= UINT16_MAX) throw std::length_error("too many event targets");
    targets_.push_back(t);
    return static_cast<uint16_t>(targets_.size() - 1);
}

void Engine::schedule(Time at, uint16_t target, uint16_t kind, int32_t a, uint32_t b) {
    if (at < now_) at = now_;  // the past is not reachable; keeps causality
    heap_.push_back(Event{at, seq_++, target, kind, a, b});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
}

uint64_t Engine::run_until(Time until) {
    uint64_t n = 0;
    stopped_ = false;
    while (!heap_.empty() && !stopped_) {
        if (heap_.front().time > until) break;
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        Event e = heap_.back();
        heap_.pop_back();
        now_ = e.time;
        targets_[e.target]->on_event(e);
        ++n;
    }
    if (heap_.empty() || (!stopped_ && until != kTimeNever && now_ < until)) {
        if (!stopped_ && until != kTimeNever) now_ = std::max(now_, until);
    }
    processed_ += n;
    return n;
}

}  // namespace wakesim
