// Shared helpers of the wake-path and policy tests: small scenarios built as JSON text, run
// through the real loader and simulator, with the explained decision path of one wakeup.
#pragma once
#include <catch2/catch.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"
#include "kernel/wake_explain.h"

namespace wakesim::testutil {

using json = nlohmann::json;

inline json doc(const std::string& text) { return json::parse(text); }

// A machine of one LLC with n CPUs, no SMT, with the 2-vCPU guest's costs.
inline std::string flat(int n) {
    return R"({"topology": {"name": "flat)" + std::to_string(n) + R"(", "cores_per_cluster": )" + std::to_string(n) +
           R"(}, "profile": {"base": "kvm-2vcpu"}})";
}

// A program task pinned to `cpu` that computes forever.
inline std::string hog(const std::string& name, int cpu) {
    return R"({"name": ")" + name + R"(", "cpus": ")" + std::to_string(cpu) +
           R"(", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]})";
}

struct Outcome {
    RunMetrics m;
    bool completed = false;
    std::vector<std::string> lines;  // decision path of the explained select_task_rq call

    uint64_t n(Metric k) const { return static_cast<uint64_t>(m.integer(k)); }
    double util(int cpu) const { return m.per_cpu(Metric::cpu_util, cpu); }
    bool explained() const { return !lines.empty(); }
    std::string line_with(const std::string& text) const {
        for (const auto& l : lines)
            if (l.find(text) != std::string::npos) return l;
        return "";
    }
    bool said(const std::string& text) const { return !line_with(text).empty(); }
    std::string result_line() const {
        for (const auto& l : lines)
            if (l.rfind("result: ", 0) == 0) return l;
        return "";
    }
    // The CPU number after `key` ("prev=cpu", "this_cpu=cpu") in the select_task_rq_fair line.
    int header_cpu(const std::string& key) const {
        const std::string l = line_with("select_task_rq_fair:");
        const auto at = l.find(key);
        return at == std::string::npos ? -1 : std::stoi(l.substr(at + key.size()));
    }
    int result_cpu() const {
        const std::string l = result_line();
        return l.empty() ? -1 : std::stoi(l.substr(std::string("result: cpu").size()));
    }
};

// Runs the scenario's first case with the policy labelled `policy` (default: the first) and its
// first seed, checking the scheduler's invariants at the end. With `explain_nth`, records the
// decision path of that select_task_rq call (1-based, counted from the start of the run). With
// `trace`, writes the run's ftrace-style trace there.
inline Outcome simulate(const json& d, const std::string& policy = "", uint64_t explain_nth = 0,
                        std::FILE* trace = nullptr) {
    const Scenario sc = parse_scenario(d, "test.json");
    const Policy* pol = &sc.policies.front();
    for (const auto& p : sc.policies)
        if (p.name == policy) pol = &p;
    if (!policy.empty() && pol->name != policy) FAIL("no policy labelled " << policy);
    RunSpec spec = make_run_spec(sc, sc.cases.front(), *pol, sc.seeds.front());
    spec.check_invariants = true;
    spec.trace = trace;
    WakeExplain ex;
    if (explain_nth) {
        spec.explain = &ex;
        spec.explain_wakeup = explain_nth;
    }
    const RunResult r = run_simulation(spec);
    return Outcome{r.metrics, r.completed, ex.lines()};
}


}  // namespace wakesim::testutil
