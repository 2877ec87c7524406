// Runs a scenario's cases x policies x seeds, in parallel when asked; results come back in the
// scenario's order whatever the thread count, so output is byte-identical.
#pragma once
#include <functional>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "experiment/scenario.h"
#include "experiment/simulation.h"

namespace wakesim {

struct RunRecord {
    std::string case_name;
    std::string policy;
    uint64_t seed = 0;
    RunResult result;
};

struct RunOptions {
    std::vector<std::string> cases;     // empty: all
    std::vector<std::string> policies;  // empty: all
    int jobs = 1;
    std::string trace_path;             // empty: no trace
    std::string report_path;            // -o's file: no run's trace may be written over it
    TraceWindow trace_window;           // the simulated time each trace covers
    TraceFormat trace_format = TraceFormat::ftrace;
    bool check_invariants = false;
    bool force = false;  // overwrite existing trace files
    // Called after each finished run with the runs done and the total (from a worker thread,
    // one call at a time); empty: none.
    std::function<void(size_t done, size_t total)> progress;
    uint64_t max_memory = 0;  // bytes the parallel runs may need together (0: default_memory_budget())
    bool quiet = false;       // no warning or progress line on stderr for long sets of runs
};

// Throws InputError for an unknown case or policy name in the filter.
std::vector<RunRecord> run_scenario(const Scenario& sc, const RunOptions& opt);

// The scenario's case (what: "case") or policy ("policy") named `want` as a command-line option
// gave it; an InputError at /cases or /policies listing the names otherwise.
const CaseSpec& scenario_case(const Scenario& sc, const std::string& want);
const Policy& scenario_policy(const Scenario& sc, const std::string& want);

// Refuses (InputError naming the scenario file and the case) a case whose estimated memory
// (experiment/estimate.h) times `parallel` runs is over `budget` bytes (0: the default budget).
void check_memory_budget(const Scenario& sc, const CaseSpec& c, int parallel, uint64_t budget);

RunSpec make_run_spec(const Scenario& sc, const CaseSpec& c, const Policy& p, uint64_t seed);

// Closes `f`, a file written with stdio; an earlier failed write or a failed final flush is an
// InputError naming `name` ("cannot write <what>: No space left on device").
void close_written(std::FILE* f, const std::string& name, const std::string& what);

// run_simulation(spec) for case `c` and policy `p` of `sc`; a run whose simulated time stands
// still (costs of 0 ns) is an InputError naming the scenario file.
RunResult run_case(const Scenario& sc, const CaseSpec& c, const Policy& p, const RunSpec& spec);

// Runs `worker` on min(jobs, items) threads, or on this thread when that is 1, and waits for
// them; each worker takes items from a shared counter until none is left.
void run_on_threads(int jobs, size_t items, const std::function<void()>& worker);

}  // namespace wakesim
