// The program kind's `timer` step and task `delay`: rt-app's timer event (src/rt-app.c, run_event:
// the expiry advances by the period at each use; it sleeps until the expiry when it is ahead, and
// after an overrun a relative timer restarts from now while an absolute one keeps its grid).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "experiment/runner.h"
#include "hw/hardware.h"
#include "kernel/sched.h"
#include "sim/cpu_exec.h"
#include "sim/run_control.h"
#include "sim_test_util.h"
#include "workloads/program/task_program.h"

namespace wakesim::testutil {
namespace {

constexpr Time kMs = 1000000;
constexpr Time kUs = 1000;

// Records when each task's `run` steps start: the start of its periods.
class RecordingDriver final : public TaskDriver {
public:
    RecordingDriver(ProgramDriver& d, const Engine& e) : inner_(d), engine_(e) {}
    Action next_action(Task& t) override {
        const Action a = inner_.next_action(t);
        if (a.kind == Action::run) runs[t.comm].push_back(engine_.now());
        return a;
    }
    void on_timer(int task, uint32_t cookie) override { inner_.on_timer(task, cookie); }
    std::map<std::string, std::vector<Time>> runs;

private:
    ProgramDriver& inner_;
    const Engine& engine_;
};

// A program scenario run as experiment/simulation.cpp runs it, with the run starts recorded.
struct ProgramSim {
    explicit ProgramSim(const std::string& workload, int cpus = 2)
        : sc(parse_scenario(doc(R"({"machine": )" + flat(cpus) + R"(, "workload": )" + workload +
                                R"(, "policies": ["plain"]})"),
                            "test.json")),
          spec(make_run_spec(sc, sc.cases.front(), sc.policies.front(), sc.seeds.front())),
          policy(spec.policy.instantiate()),
          hw(engine, *spec.topo, spec.profile),
          sched(engine, *spec.topo, *spec.domains, spec.profile, policy, spec.sched, hw, spec.seed),
          cpus_(engine, sched, hw, spec.profile, spec.seed),
          driver(spec.workload.tasks, spec.workload.channels, spec.workload.barriers, ctl, spec.workload.timers),
          rec(driver, engine) {
        ctl.set_clock(&engine);
        cpus_.set_driver(&rec);
        ctl.set_finish([this] { engine.stop(); });
        driver.setup(cpus_, 0, spec.workload.parent_cpu, spec.seed, spec.workload.fork_gap_min_ns,
                     spec.workload.fork_gap_max_ns);
        engine.run_until(kTimeNever);
        sched.check_invariants();
    }
    Scenario sc;
    RunSpec spec;
    Engine engine;
    PolicyRun policy;
    Hardware hw;
    Scheduler sched;
    CpuExec cpus_;
    RunControl ctl;
    ProgramDriver driver;
    RecordingDriver rec;
};

// Checks that run k started within `slack` after `want[k]`.
void check_starts(const std::vector<Time>& got, const std::vector<Time>& want, Time slack) {
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        INFO("run " << k << " started at " << got[k] << " ns, expected " << want[k] << " ns");
        CHECK(got[k] >= want[k]);
        CHECK(got[k] < want[k] + slack);
    }
}

}  // namespace

TEST_CASE("timer: a 10 ms period wakes the task every 10 ms of simulated time whatever it runs", "[program][timer]") {
    auto periodic = [](const std::string& run) {
        return R"({"kind": "program", "timers": {"tick": {"mode": "absolute"}},
                   "tasks": [{"name": "rt", "cpus": "1", "program": [{"loop": 20, "do": [{"run": ")" + run +
               R"("}, {"timer": "tick", "period": "10ms"}]}]}]})";
    };
    for (const std::string run : {"3ms", "7ms"}) {
        INFO("run " << run << " per period");
        ProgramSim sim(periodic(run));
        const std::vector<Time>& starts = sim.rec.runs["rt"];
        REQUIRE(starts.size() == 20);
        // The first period starts at the fork; each next one at the next 10 ms boundary since
        // the workload's start, plus the timer wakeup's latency (no drift accumulates).
        std::vector<Time> want;
        for (int k = 0; k < 20; ++k) want.push_back(k * 10 * kMs);
        check_starts(starts, want, 100 * kUs);
    }
    // The same with a sleep of period - run: each period adds the wakeup's latency, and it adds up.
    ProgramSim slept(R"({"kind": "program", "tasks": [{"name": "rt", "cpus": "1",
        "program": [{"loop": 20, "do": [{"run": "3ms"}, {"sleep": "7ms"}]}]}]})");
    ProgramSim timed(periodic("3ms"));
    CHECK(slept.rec.runs["rt"].back() - 190 * kMs > timed.rec.runs["rt"].back() - 190 * kMs);
}

TEST_CASE("timer: after an overrun an absolute timer catches up back to back, a relative one restarts from now",
          "[program][timer]") {
    // rt-app's doc/tutorial.txt example: a 20 ms period whose third run takes 30 ms.
    auto overrun = [](const std::string& mode) {
        return R"({"kind": "program", "timers": {"t": {"mode": ")" + mode + R"("}},
                   "tasks": [{"name": "rt", "cpus": "1", "program": [
                     {"loop": 2, "do": [{"run": "10ms"}, {"timer": "t", "period": "20ms"}]},
                     {"run": "30ms"}, {"timer": "t", "period": "20ms"},
                     {"loop": 3, "do": [{"run": "10ms"}, {"timer": "t", "period": "20ms"}]}]}]})";
    };
    // Absolute: the expiries stay at 20, 40, 60, 80, 100, 120 ms. The 30 ms run (40-70 ms) misses
    // 60; the next run starts at once (70-80 ms) and reaches 80 just late, so the one after starts
    // at once too (80-90 ms), and the task is back on the grid at 100 ms.
    ProgramSim abs(overrun("absolute"));
    check_starts(abs.rec.runs["rt"], {0, 20 * kMs, 40 * kMs, 70 * kMs, 80 * kMs, 100 * kMs}, 200 * kUs);
    // Relative: the overrun restarts the timer at 70 ms; the next expiries are 90 and 110 ms.
    ProgramSim rel(overrun("relative"));
    check_starts(rel.rec.runs["rt"], {0, 20 * kMs, 40 * kMs, 70 * kMs, 90 * kMs, 110 * kMs}, 200 * kUs);
}

TEST_CASE("timer: a shared timer advances at every user's step, a per-instance one per task instance", "[program][timer]") {
    // Two instances on one 10 ms timer: each use moves it on by 10 ms, so between them they wake
    // every 10 ms and each instance every 20 ms (rt-app's note on timers shared across instances).
    ProgramSim shared(R"({"kind": "program", "timers": {"tick": {"shared": true}},
        "tasks": [{"name": "w", "count": 2, "program": [{"loop": 4, "do": [{"run": "1ms"}, {"timer": "tick", "period": "10ms"}]}]}]})");
    std::vector<Time> all = shared.rec.runs["w-0"];
    all.insert(all.end(), shared.rec.runs["w-1"].begin(), shared.rec.runs["w-1"].end());
    std::sort(all.begin(), all.end());
    REQUIRE(all.size() == 8);
    // Both start at the fork; then the expiries 10, 20, ..., 60 ms are handed out one per use.
    check_starts({all.begin() + 2, all.end()}, {10 * kMs, 20 * kMs, 30 * kMs, 40 * kMs, 50 * kMs, 60 * kMs}, 200 * kUs);
    // Per instance: each instance has its own grid of 10 ms.
    ProgramSim own(R"({"kind": "program", "timers": {"tick": {}},
        "tasks": [{"name": "w", "count": 2, "program": [{"loop": 4, "do": [{"run": "1ms"}, {"timer": "tick", "period": "10ms"}]}]}]})");
    for (const char* w : {"w-0", "w-1"}) {
        INFO(w);
        check_starts({own.rec.runs[w].begin() + 1, own.rec.runs[w].end()}, {10 * kMs, 20 * kMs, 30 * kMs}, 200 * kUs);
    }
}

TEST_CASE("timer: a task's delay starts it later by a timer wakeup, and its timers count from then", "[program][timer]") {
    ProgramSim sim(R"({"kind": "program", "timers": {"tick": {"mode": "absolute"}},
        "tasks": [{"name": "late", "delay": "25ms", "program": [{"loop": 3, "do": [{"run": "2ms"}, {"timer": "tick", "period": "10ms"}]}]},
                  {"name": "early", "program": [{"run": "1ms"}]}]})");
    check_starts(sim.rec.runs["late"], {25 * kMs, 35 * kMs, 45 * kMs}, 200 * kUs);
    CHECK(sim.rec.runs["early"].front() < 1 * kMs);
}

TEST_CASE("timer: the step and the declaration are checked like every other step", "[program][timer]") {
    auto error_of = [](const std::string& workload) -> std::string {
        try {
            parse_scenario(doc(R"({"machine": )" + flat(2) + R"(, "workload": )" + workload + R"(, "policies": ["plain"]})"),
                           "t.json");
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    };
    const std::string task = R"("tasks": [{"name": "a", "program": [{"loop": 2, "do": [{"run": "1ms"}, )";
    CHECK(error_of(R"({"kind": "program", )" + task + R"({"timer": "t", "period": "1ms"}]}]}]})") ==
          "t.json: /workload/tasks/0/program/0/do/1/timer: expected a timer declared in the program's \"timers\" object (it declares none), got \"t\"");
    CHECK(error_of(R"({"kind": "program", "timers": {"tick": {}}, )" + task + R"({"timer": "tik", "period": "1ms"}]}]}]})")
              .find("/workload/tasks/0/program/0/do/1/timer: ") != std::string::npos);
    CHECK(error_of(R"({"kind": "program", "timers": {"tick": {}}, )" + task + R"({"timer": "tick"}]}]}]})") ==
          "t.json: /workload/tasks/0/program/0/do/1: expected \"period\": the timer's period for this step, e.g. \"10ms\"");
    CHECK(error_of(R"({"kind": "program", "timers": {"tick": {}}, )" + task + R"({"timer": "tick", "period": "0ms"}]}]}]})")
              .find("/workload/tasks/0/program/0/do/1/period: expected a duration in [1ns, 3600s]") != std::string::npos);
    CHECK(error_of(R"({"kind": "program", "timers": {"tick": {}}, )" + task + R"({"timer": "tick", "period": "1ms", "mode": "absolute"}]}]}]})")
              .find("/workload/tasks/0/program/0/do/1/mode: unknown key \"mode\"") != std::string::npos);
    CHECK(error_of(R"({"kind": "program", "timers": {"tick": {"mode": "periodic"}}, )" + task + R"({"timer": "tick", "period": "1ms"}]}]}]})")
              .find("/workload/timers/tick/mode: expected one of: relative, absolute") != std::string::npos);
    // A loop whose only time is a timer step is not a spin: each use moves the expiry on.
    CHECK(error_of(R"({"kind": "program", "timers": {"tick": {}}, "tasks": [{"name": "a", "program": [{"loop": 3, "do": [{"timer": "tick", "period": "1ms"}]}]}]})") == "");
}

}  // namespace wakesim::testutil
