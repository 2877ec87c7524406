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
    const Scenario sc = parse_scenario(d, "test.json");
    RunSpec spec = make_run_spec(sc, sc.cases.front(), sc.policies.front(), sc.seeds.front());
    spec.check_invariants = true;
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* f = open_memstream(&buf, &len);
    REQUIRE(f);
    spec.trace = f;
    const RunResult r = run_simulation(spec);
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
