// The short run that the trace tests trace (test_trace.cpp: ftrace text, test_perfetto.cpp:
// Perfetto's protobuf), and the trace file it writes.
#pragma once
#include <catch2/catch.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"

namespace wakesim::tracetest {

// CPU 0: `hog` computes for ever; `ticker` sleeps 100 us and runs 20 us, so its wakeups preempt
// the hog (prev_state=R+). CPU 1: `pinger` and `ponger` ping-pong over channels.
inline Scenario trace_scenario() {
    return parse_scenario(nlohmann::json::parse(R"({
      "name": "trace",
      "machine": {"topology": {"name": "flat4", "cores_per_cluster": 4}, "profile": {"base": "kvm-2vcpu"}},
      "workload": {"kind": "program", "channels": {"ping": {}, "pong": {}},
        "tasks": [
          {"name": "hog", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
          {"name": "ticker", "cpus": "0", "program": [{"loop": 0, "do": [{"sleep": "100us"}, {"run": "20us"}]}]},
          {"name": "pinger", "cpus": "1-3", "program": [{"loop": 0, "do": [{"post": "ping"}, {"wait": "pong"}, {"op": 1}]}]},
          {"name": "ponger", "cpus": "1-3", "program": [{"loop": 0, "do": [{"wait": "ping"}, {"run": "5us"}, {"post": "pong"}]}]}
        ]},
      "policies": ["plain"],
      "run": {"duration": "20ms", "warmup": "2ms"}
    })"),
                          "trace.json");
}

// The bytes of the trace file of a run.
inline std::string run_traced(RunSpec spec, TraceWindow window = {}, TraceFormat format = TraceFormat::ftrace) {
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    spec.trace = f;
    spec.trace_window = window;
    spec.trace_format = format;
    run_simulation(spec);
    std::rewind(f);
    std::string bytes;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, n);
    std::fclose(f);
    return bytes;
}

// The bytes of the trace file of trace_scenario()'s run.
inline std::string traced_bytes(TraceWindow window = {}, TraceFormat format = TraceFormat::ftrace) {
    const Scenario sc = trace_scenario();
    return run_traced(make_run_spec(sc, sc.cases[0], sc.policies[0], 1), window, format);
}

}  // namespace wakesim::tracetest
