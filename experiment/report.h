// Output formats for a scenario's runs: an aligned table (default), JSON (schema_version 1), CSV
// and perf bench's text. Over several seeds the table and the JSON summary give the mean, the standard
// deviation and a 95% confidence interval (Student's t); the table's header says so.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/stats.h"

namespace wakesim {

inline constexpr int kSchemaVersion = 1;

using SeedStats = SampleStats;  // experiment/stats.h: mean, sd, 95% CI half-width
inline SeedStats seed_stats(const std::vector<double>& v) { return sample_stats(v); }

// Every numeric metric of the table is a count, a time, a rate or a ratio of such: none can be
// below 0. An interval over seeds that reaches below 0 says the sample is too small.
bool interval_crosses_impossible(const MetricDef& d, const SeedStats& s);

// The project's version (CMake's project version), as reports and --version print it.
std::string wakesim_version();
// A case's profile values that its scenario overrides, as the scenario writes them
// ({"syscall": "100ns"}); empty when it takes its machine's profile as it is.
nlohmann::json profile_overrides(const CaseSpec& c);

// Every report names what produced it: wakesim's version, the scenario's hash, and per case the
// machine, the effective scheduler features and the profile overrides.
nlohmann::json report_json(const Scenario& sc, const std::vector<RunRecord>& runs);
std::string report_table(const Scenario& sc, const std::vector<RunRecord>& runs);
// One row per run: case, machine, policy, seed, completed, then the scalar metrics.
std::string report_csv(const Scenario& sc, const std::vector<RunRecord>& runs);
// `--format csv-long` (tidy data for pandas/LISA): one row per value, columns case, machine,
// policy, seed, metric, cpu, value; cpu is empty for a run-wide metric and the CPU number for each
// element of a per-CPU one.
std::string report_csv_long(const Scenario& sc, const std::vector<RunRecord>& runs);
// `--format perf`: per run, the lines `perf bench sched pipe` / `perf bench sched messaging` print
// (a program run: its Total time), after a `#` line naming case, policy and seed, so results paste
// next to real runs. `warning` gets one line (else "") when runs are so short that a real run's
// task creation would dominate them.
std::string report_perf(const Scenario& sc, const std::vector<RunRecord>& runs, std::string& warning);

// One number through a printf format with a single double conversion ("%.3g", "%+.2f%%").
std::string format_number(const char* format, double x);

}  // namespace wakesim
