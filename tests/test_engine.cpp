// The event queue (engine/engine.h): events leave in (time, insertion order) whichever way they
// were queued (the slot for the earliest event or the heap), so a seed reproduces a run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "engine/engine.h"
#include "engine/rng.h"

using namespace wakesim;

namespace {

// Schedules new events while it runs: often the next one (as a CPU's segment end is), sometimes
// a tie with pending events, sometimes far ahead; records the order events leave in.
class Recorder final : public EventTarget {
public:
    explicit Recorder(Engine& e) : e_(e), rng_(7, "engine-test") {}
    void on_event(const Event& ev) override {
        seen.emplace_back(ev.time, ev.seq, ev.a);
        // The event being handled is no longer pending, whichever way it left the queue.
        if (e_.pending() != scheduled - seen.size()) ++pending_wrong;
        if (budget_ == 0) return;
        --budget_;
        const uint64_t r = rng_.below(8);
        const Time at = r < 3   ? e_.now() + 1 + static_cast<Time>(rng_.below(3))  // soon
                        : r < 5 ? e_.now()                                          // a tie at now
                        : r < 6 ? e_.now() - 5                                      // the past: clamped to now
                                : e_.now() + static_cast<Time>(rng_.below(1000));   // anywhere ahead
        e_.schedule(at, target, 0, next_id_++);
        ++scheduled;
        if (r == 7) {  // two at once
            e_.schedule(at, target, 0, next_id_++);
            ++scheduled;
        }
    }
    uint16_t target = 0;
    size_t scheduled = 0;  // by the test and by the handler
    int pending_wrong = 0;
    std::vector<std::tuple<Time, uint64_t, int32_t>> seen;

private:
    Engine& e_;
    RngStream rng_;
    int budget_ = 20000;
    int32_t next_id_ = 1000;
};

}  // namespace

TEST_CASE("Engine: events run in time order, ties in the order they were scheduled, and never in the past", "[engine]") {
    Engine e;
    Recorder r(e);
    r.target = e.add_target(&r);
    for (int i = 0; i < 200; ++i) e.schedule((i * 37) % 50, r.target, 0, i);
    r.scheduled = 200;
    e.run_until(kTimeNever);
    REQUIRE(r.seen.size() > 20000);
    CHECK(r.seen.size() == r.scheduled);  // none lost, none run twice
    CHECK(r.pending_wrong == 0);
    std::vector<int32_t> ids;
    for (const auto& [t, s, a] : r.seen) ids.push_back(a);
    std::sort(ids.begin(), ids.end());
    CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
    for (size_t i = 1; i < r.seen.size(); ++i) {
        const auto& [t0, s0, a0] = r.seen[i - 1];
        const auto& [t1, s1, a1] = r.seen[i];
        INFO("event " << i << ": (" << t0 << ", " << s0 << ") then (" << t1 << ", " << s1 << ")");
        REQUIRE((t0 < t1 || (t0 == t1 && s0 < s1)));
    }
    CHECK(e.pending() == 0);
    CHECK(e.events_processed() == r.seen.size());
}

TEST_CASE("Engine: run_until stops before later events and leaves the clock at the horizon", "[engine]") {
    Engine e;
    Recorder r(e);
    r.target = e.add_target(&r);
    e.schedule(100, r.target, 0, 1);
    e.schedule(5000000, r.target, 0, 2);
    e.run_until(1000);
    CHECK(e.now() == 1000);
    for (const auto& [t, s, a] : r.seen) CHECK(t <= 1000);
    CHECK(e.pending() > 0);
}

// A segment's end joined to the segment before it (CpuExec's overhead_work) is queued early but
// must leave, among events of its time, where the second segment's end would have: after the
// events scheduled before the join point, before those scheduled after it.
namespace {
class Order final : public EventTarget {
public:
    explicit Order(Engine& e) : e_(e) {}
    void on_event(const Event& ev) override {
        order.push_back(ev.a);
        if (ev.a == 1) {  // at t=10: the joined end, as if scheduled at 20
            e_.schedule_as_of(50, e_.virtual_seq(20), target, 0, 100);
            e_.schedule_as_of(50, e_.virtual_seq(20), target, 0, 101);  // a second one, made later
        }
        if (ev.a == 2) e_.schedule(50, target, 0, 200);  // at t=15: before the join point
        if (ev.a == 3) e_.schedule(50, target, 0, 300);  // at t=30: after it
        if (ev.a == 4) e_.schedule(50, target, 0, 400);  // at t=20, the join point itself
    }
    uint16_t target = 0;
    std::vector<int32_t> order;

private:
    Engine& e_;
};
}  // namespace

TEST_CASE("Engine: an event scheduled as of a later time keeps that time's place among ties", "[engine]") {
    Engine e;
    Order o(e);
    o.target = e.add_target(&o);
    e.schedule(10, o.target, 0, 1);
    e.schedule(15, o.target, 0, 2);
    e.schedule(30, o.target, 0, 3);
    e.schedule(20, o.target, 0, 4);
    e.schedule(50, o.target, 0, 5);  // at t=0, before all of them
    e.run_until(kTimeNever);
    // The events at the join point's own nanosecond (400) come after the joined ends: a second
    // segment's end would be scheduled there only once the first segment's end was handled.
    CHECK(o.order == std::vector<int32_t>{1, 2, 4, 3, 5, 200, 100, 101, 400, 300});
    CHECK(e.pending() == 0);
}
