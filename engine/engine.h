// The discrete-event engine: integer-nanosecond time, one event queue, ties broken by insertion
// order. It knows nothing of schedulers or workloads: events are routed to registered targets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace wakesim {

using Time = int64_t;  // simulated nanoseconds
inline constexpr Time kNsPerUs = 1000;
inline constexpr Time kNsPerMs = 1000 * 1000;
inline constexpr Time kNsPerSec = 1000 * 1000 * 1000;
inline constexpr Time kTimeNever = INT64_MAX;

// A plain record kept in the heap; payload meaning belongs to the target.
struct Event {
    Time time;
    uint64_t seq;     // insertion order: the deterministic tie-break
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

class Engine {
public:
    Time now() const { return now_; }
    uint16_t add_target(EventTarget* t);
    void schedule(Time at, uint16_t target, uint16_t kind, int32_t a = 0, uint32_t b = 0);
    // Runs events with time <= until (or until stop() or the queue empties). Returns events run.
    uint64_t run_until(Time until);
    void stop() { stopped_ = true; }
    bool stopped() const { return stopped_; }
    size_t pending() const { return heap_.size(); }
    uint64_t events_processed() const { return processed_; }
    void reserve(size_t n) { heap_.reserve(n); }

private:
    // The heap's order: a function object, so that the standard heap algorithms inline it.
    struct Later {
        bool operator()(const Event& x, const Event& y) const {
            return x.time != y.time ? x.time > y.time : x.seq > y.seq;
        }
    };
    std::vector<Event> heap_;
    std::vector<EventTarget*> targets_;
    Time now_ = 0;
    uint64_t seq_ = 0;
    uint64_t processed_ = 0;
    bool stopped_ = false;
};

}  // namespace wakesim
