// schedutil's iowait boost (kernel/sched/cpufreq_schedutil.c, sugov_iowait_boost): a task that keeps waking from I/O waits
// raises its CPU's frequency although its utilisation is low.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"

using namespace wakesim;

namespace {

// A reader on CPU 2 submits an I/O and waits; a "device" task on CPU 9 (another package's clock
// is not involved: e5-2650-2s CPUs 0-7 and 16-23 share package 0) completes it 100 us later.
nlohmann::json io_scenario(bool iowait) {
    const std::string flag = iowait ? "true" : "false";
    return nlohmann::json::parse(R"({
      "machine": "e5-2650-2s",
      "workload": {"kind": "program",
        "channels": {"submit": {}, "complete": {"wake": {"name": "io_done", "iowait": )" + flag + R"(}}},
        "tasks": [
          {"name": "reader", "cpus": "2", "program": [{"loop": 3000, "do": [{"run": "5us"}, {"post": "submit"}, {"wait": "complete"}, {"op": 4096}]}]},
          {"name": "device", "cpus": "9", "program": [{"loop": 3000, "do": [{"wait": "submit"}, {"sleep": "100us"}, {"post": "complete"}]}]}
        ]},
      "policies": ["plain"],
      "run": {"warmup_ops": 500}
    })");
}

int64_t busy_freq_cpu2(const nlohmann::json& doc) {
    Scenario sc = parse_scenario(doc, "iowait.json");
    RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
    REQUIRE(r.completed);
    return r.metrics.per_cpu_integers(Metric::cpu_freq_khz).at(2);
}

}  // namespace

TEST_CASE("A task woken from I/O wait gets schedutil's iowait boost: its CPU clocks higher than without", "[hardware]") {
    const int64_t plain = busy_freq_cpu2(io_scenario(false));
    const int64_t boosted = busy_freq_cpu2(io_scenario(true));
    INFO("without boost " << plain << " kHz, with boost " << boosted << " kHz");
    CHECK(plain == 1200000);  // 5 us of work per 105 us: utilisation ~5%, lowest OPP
    CHECK(boosted > plain);
}
