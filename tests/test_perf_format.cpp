// `wakesim run --format perf`: per run, the lines perf bench prints, so results paste next to
// real runs. The reference outputs below are real runs, captured on the development machine:
//
//   $ perf bench sched pipe -l 10000                      # perf 6.1.192, 2026-11-30
//   # Running 'sched/pipe' benchmark:
//   # Executed 10000 pipe operations between two processes
//
//        Total time: 0.037 [sec]
//
//          3.704100 usecs/op
//            269971 ops/sec
//
//   $ perf bench sched messaging -t -p -g 1 -l 10         # perf 6.1.192, 2026-11-30
//   # Running 'sched/messaging' benchmark:
//   # 20 sender and receiver threads per group
//   # 1 groups == 40 threads run
//
//        Total time: 0.004 [sec]
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"

using namespace wakesim;

namespace {

const char* const kRealPipe =
    "# Running 'sched/pipe' benchmark:\n"
    "# Executed 10000 pipe operations between two processes\n"
    "\n"
    "     Total time: 0.037 [sec]\n"
    "\n"
    "       3.704100 usecs/op\n"
    "         269971 ops/sec\n";

const char* const kRealMessaging =
    "# Running 'sched/messaging' benchmark:\n"
    "# 20 sender and receiver threads per group\n"
    "# 1 groups == 40 threads run\n"
    "\n"
    "     Total time: 0.004 [sec]\n";

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> v;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);) v.push_back(l);
    return v;
}

// The line with each number (and the padding before it) replaced by N: what must agree between a
// real and a simulated run.
std::string shape(const std::string& line) { return std::regex_replace(line, std::regex(R"( *\d+(\.\d+)?)"), "N"); }

// Right-aligned numbers keep perf's column: the last character of each line stays in place.
void check_same_format(const std::string& simulated, const char* real) {
    const auto s = split(simulated);
    const auto r = split(real);
    REQUIRE(s.size() == r.size() + 1);  // + the "# wakesim: case=..." line
    CHECK(s[0].rfind("# wakesim: case=", 0) == 0);
    for (size_t i = 0; i < r.size(); ++i) {
        INFO("real: \"" << r[i] << "\"\nwakesim: \"" << s[i + 1] << "\"");
        CHECK(shape(s[i + 1]) == shape(r[i]));
        if (r[i].find("usecs/op") != std::string::npos || r[i].find("ops/sec") != std::string::npos ||
            r[i].find("Total time") != std::string::npos)
            CHECK(s[i + 1].size() == r[i].size());
    }
}

std::string perf_of(const std::string& workload, const std::string& run, std::string& warning) {
    const Scenario sc = parse_scenario(nlohmann::json::parse(R"({
      "name": "perf",
      "machine": {"topology": {"name": "flat4", "cores_per_cluster": 4}, "profile": {"base": "kvm-2vcpu"}},
      "workload": )" + workload + R"(,
      "policies": ["plain"],
      "run": )" + run + R"(
    })"),
                                       "perf.json");
    return report_perf(sc, run_scenario(sc, RunOptions{}), warning);
}

}  // namespace

TEST_CASE("Format perf: prints sched pipe's lines, words and units per run", "[report][perf]") {
    std::string warning;
    const std::string out = perf_of(R"({"kind": "pipe", "loops": 10000})", R"({"seeds": [1]})", warning);
    INFO(out);
    check_same_format(out, kRealPipe);
    CHECK(out.find("# wakesim: case=default policy=plain seed=1\n") == 0);
    CHECK(out.find("# Executed 10000 pipe operations between two processes\n") != std::string::npos);
    CHECK(warning.empty());
    // usecs/op and ops/sec agree with each other and with Total time.
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"(Total time: (\d+\.\d+) \[sec\]\n\n +(\d+\.\d+) usecs/op\n +(\d+) ops/sec)")));
    const double usec_per_op = std::stod(m[2].str());
    CHECK(std::stod(m[3].str()) == Approx(1e6 / usec_per_op).epsilon(1e-4));
    CHECK(std::stod(m[1].str()) == Approx(usec_per_op * 10000 / 1e6).margin(0.0011));
}

TEST_CASE("Format perf: prints sched messaging's lines per run (thread mode)", "[report][perf]") {
    std::string warning;
    const std::string out = perf_of(R"({"kind": "messaging", "groups": 1, "fds": 20, "loops": 10})",
                                    R"({"seeds": [1, 2]})", warning);
    INFO(out);
    const auto second = out.find("# wakesim: case=default policy=plain seed=2\n");
    REQUIRE(second != std::string::npos);
    check_same_format(out.substr(0, second), kRealMessaging);
    check_same_format(out.substr(second), kRealMessaging);
    CHECK(out.find("# 1 groups == 40 threads run\n") != std::string::npos);
    // 40 tasks in under 10 ms: a real run this short is mostly task creation.
    CHECK(warning.rfind("wakesim: warning: 2 of 2 runs are shorter than", 0) == 0);
    CHECK(warning.find('\n') == std::string::npos);
}

TEST_CASE("Format perf: gives a program run's elapsed time", "[report][perf]") {
    std::string warning;
    const std::string out = perf_of(R"({"kind": "program", "channels": {"go": {}}, "tasks": [
        {"name": "a", "program": [{"run": "20ms"}, {"post": "go"}]},
        {"name": "b", "program": [{"wait": "go"}, {"run": "10ms"}]}]})",
                                    R"({"seeds": [1], "duration": "1s"})", warning);
    INFO(out);
    CHECK(out.find("# Running 'program' workload: 2 tasks, 0 ops\n\n     Total time: 0.030 [sec]\n") !=
          std::string::npos);
    CHECK(out.find("usecs/op") == std::string::npos);
    CHECK(out.find("time limit") == std::string::npos);
    CHECK(warning.empty());
}
