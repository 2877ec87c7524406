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
