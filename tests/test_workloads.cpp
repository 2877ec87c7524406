// Workload generators behave like the benchmarks they stand for.
#include <cstdio>
#include <set>
#include <sstream>

#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// Runs the scenario's first case, policy and seed with an ftrace-style trace, returned as text.
std::string traced_run(const json& d) {
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* f = open_memstream(&buf, &len);
    REQUIRE(f);
    const Outcome r = simulate(d, "", 0, f);
    std::fclose(f);
    std::string text(buf, len);
    std::free(buf);
    REQUIRE(r.completed);
    return text;
}

std::string field(const std::string& line, const std::string& key) {
    const auto at = line.find(key);
    if (at == std::string::npos) return "";
    const auto end = line.find(' ', at + key.size());
    return line.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size());
}

}  // namespace

TEST_CASE("hackbench workers wait for the start signal: no wakeup before every worker has run", "[workloads]") {
    // sched-messaging.c: each worker writes to the ready pipe and polls the start pipe; the
    // parent writes the start pipe once all are ready. So no message (and no wakeup) happens
    // before all 2 x fds x groups workers have been on a CPU once.
    const std::string text = traced_run(doc(R"({"machine": "kvm-2vcpu",
      "workload": {"kind": "messaging", "groups": 2, "fds": 5, "loops": 3},
      "policies": ["plain"], "run": {"seeds": [1]}})"));
    std::set<std::string> started;
    bool woke = false;
    size_t wakes = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.find("sched_switch:") != std::string::npos) {
            const std::string next = field(line, "next_comm=");
            if (next.rfind("sender-", 0) == 0 || next.rfind("receiver-", 0) == 0) started.insert(next);
        } else if (line.find("sched_waking:") != std::string::npos) {
            if (!woke) {
                INFO("first wakeup: " << line);
                CHECK(started.size() == 20);
            }
            woke = true;
            ++wakes;
        }
    }
    CHECK(woke);
    // The release wakes the 19 workers that arrived before the last one, then messages flow.
    CHECK(wakes > 19);
}

namespace {

// Two CPU-bound tasks pinned to CPU 0 of a 2-CPU flat machine, computing in steps of `step`.
json two_hogs_on_cpu0(const std::string& step, int tick_hz, bool run_to_parity = true) {
    const std::string task = R"(", "cpus": "0", "program": [{"loop": 0, "do": [{"run": ")" + step + R"("}]}]})";
    return doc(R"({"machine": {"topology": {"name": "flat2", "cores_per_cluster": 2},
                               "profile": {"base": "kvm-2vcpu", "tick_hz": )" + std::to_string(tick_hz) + R"(}},
      "features": {"RUN_TO_PARITY": )" + (run_to_parity ? "true" : "false") + R"(},
      "workload": {"kind": "program", "tasks": [{"name": "A)" + task + R"(, {"name": "B)" + task + R"(]},
      "policies": ["plain"], "run": {"duration": "200ms"}})");
}

}  // namespace

TEST_CASE("A used-up slice ends at the next tick, not at the task's own step boundaries (no HRTICK)", "[eevdf]") {
    // The slice is 0.7 ms x (1 + ilog2(2)) = 1.4 ms. update_curr() runs at the tick, so at
    // HZ=250 each hog keeps the CPU for a whole 4 ms tick period, at HZ=1000 for 2 ms, however
    // finely the task's own work is divided.
    for (const char* step : {"50us", "1ms"}) {
        INFO("step " << step);
        const Outcome hz250 = simulate(two_hogs_on_cpu0(step, 250));
        const Outcome hz1000 = simulate(two_hogs_on_cpu0(step, 1000));
        CHECK(hz250.n(Metric::preemptions) >= 48);  // 200 ms / 4 ms, less the first period
        CHECK(hz250.n(Metric::preemptions) <= 51);
        CHECK(hz1000.n(Metric::preemptions) >= 98);  // 200 ms / 2 ms
        CHECK(hz1000.n(Metric::preemptions) <= 101);
    }
}

TEST_CASE("Without RUN_TO_PARITY the running task is protected for one normalised base slice only", "[eevdf]") {
    // set_protect_slice(): 0.7 ms of protection instead of the whole 1.4 ms slice; once it has
    // run out, the next tick's update_curr asks for a new pick and the other hog, now the
    // eligible one, takes the CPU: a switch every 1 ms tick instead of every 2 ms.
    const Outcome parity = simulate(two_hogs_on_cpu0("50us", 1000, true));
    const Outcome no_parity = simulate(two_hogs_on_cpu0("50us", 1000, false));
    CHECK(parity.n(Metric::preemptions) <= 101);
    CHECK(no_parity.n(Metric::preemptions) >= 195);
    CHECK(no_parity.n(Metric::preemptions) <= 201);
}
