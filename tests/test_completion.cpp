// A run whose foreground tasks all exited is complete, with or without `op` steps. rt-app style
// programs count no ops: their window ends when the last task exits, and the table says what was
// measured (the elapsed time) instead of 0 usec/op.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"

using namespace wakesim;

namespace {

// Two tasks of a 4-CPU machine: `a` computes 2 ms and signals `b`, which computes 1 ms; both exit.
// With `with_op` each task counts an op at its end.
Scenario no_op_scenario(bool with_op, const std::string& extra_run = "") {
    const std::string op = with_op ? R"(, {"op": 1})" : "";
    return parse_scenario(nlohmann::json::parse(R"({
      "name": "rtapp",
      "machine": {"topology": {"name": "flat4", "cores_per_cluster": 4}, "profile": {"base": "kvm-2vcpu"}},
      "workload": {"kind": "program", "channels": {"go": {}},
        "tasks": [
          {"name": "a", "program": [{"run": "2ms"}, {"post": "go"})" + op + R"(]},
          {"name": "b", "program": [{"wait": "go"}, {"run": "1ms"})" + op + R"(]}
        ]},
      "policies": ["plain"],
      "run": {"duration": "1s")" + extra_run + R"(}
    })"),
                          "rtapp.json");
}

}  // namespace

TEST_CASE("A program without op steps is complete when its tasks exit, the window ends at the last exit", "[run]") {
    const Scenario sc = no_op_scenario(false);
    const RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
    CHECK(r.completed);
    CHECK(r.metrics.integer(Metric::ops) == 0);
    const int64_t window = r.metrics.integer(Metric::sim_time_ns);
    INFO("window " << window << " ns");
    CHECK(window >= 3000000);  // 2 ms, then 1 ms after the wakeup
    CHECK(window < 4000000);   // not the 1 s limit
    CHECK(r.sim_time == window);
}

TEST_CASE("With op steps the window still ends at the last op", "[run]") {
    const Scenario sc = no_op_scenario(true);
    const RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
    CHECK(r.completed);
    CHECK(r.metrics.integer(Metric::ops) == 2);
    CHECK(r.metrics.get(Metric::usec_per_op) > 1000.0);
}

TEST_CASE("A program cut by the time limit is not complete", "[run]") {
    Scenario sc = no_op_scenario(false);
    sc.cases[0].max_time = 1000000;  // 1 ms: a is still computing
    const RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
    CHECK_FALSE(r.completed);
    CHECK(r.metrics.integer(Metric::sim_time_ns) == 1000000);
}

TEST_CASE("The table shows the elapsed time, not 0 usec/op, for runs without ops", "[report]") {
    Scenario sc = no_op_scenario(false);
    sc.seeds = {1, 2};
    const auto runs = run_scenario(sc, RunOptions{});
    const std::string t = report_table(sc, runs);
    INFO(t);
    CHECK(t.find("elapsed ms") != std::string::npos);
    CHECK(t.find(" yes") != std::string::npos);
    CHECK(t.find("limit") == std::string::npos);
    // The usec/op and ops/s cells say "-", not 0.
    CHECK(std::regex_search(t, std::regex(R"(\ndefault +plain +2 +- +- )")));
}
