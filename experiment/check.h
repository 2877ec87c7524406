// `wakesim baseline` and `wakesim check`: a regression check for CI. A baseline file records, for
// each (case, policy) of a scenario, every numeric metric's value on each seed with its mean, sd
// and 95% interval. `check` runs the scenario again on the baseline's seeds and compares each
// checked metric: a regression is a change in the metric's worse direction (the metric table's
// "better" field) that is larger than the tolerance and significant: Welch's t-test at p < 0.05,
// or, when neither side varies over seeds (a deterministic simulation), any change at all. A
// metric without a direction (wakeups, utilisation) is checked only where --tolerance names it,
// and then a significant change of either sign beyond the tolerance fails. The baseline names
// the scenario and a hash of its benchmark (machine, workload, task groups, cases, run settings):
// a baseline of another benchmark is refused; policies, features and sched settings may differ,
// they are what is checked.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "metrics/metric_table.h"

namespace wakesim {

inline constexpr double kDefaultTolerancePct = 5.0;

nlohmann::json baseline_json(const Scenario& sc, const std::vector<RunRecord>& runs);
// The file's text: one line per metric of each (case, policy), so that a diff names the metrics.
std::string baseline_text(const nlohmann::json& baseline);

struct CheckOptions {
    std::vector<std::pair<Metric, double>> tolerances;  // METRIC=PCT; adds METRIC to the checked ones
};

struct CheckRow {
    std::string case_name, policy;
    Metric metric = Metric::usec_per_op;
    double before = 0, now = 0, delta_pct = 0, p = 1, tolerance = 0;
    bool tested = false;  // Welch's test defined (spread on a side)
    std::string status;   // "same", "better", "worse within tolerance", "not significant", "REGRESSION";
                          // for a metric without a better direction: "changed within tolerance", "CHANGED"
    bool regression = false;
};

struct CheckResult {
    std::vector<CheckRow> rows;
    std::vector<std::string> unchecked;  // "case x policy" groups the scenario has and the baseline lacks
};

// The seeds the baseline file records (to run the scenario on). InputError for a file that is
// not a baseline of this scenario.
std::vector<uint64_t> baseline_seeds(const nlohmann::json& baseline, const std::string& file, const Scenario& sc);

CheckResult check_against(const Scenario& sc, const std::vector<RunRecord>& runs, const nlohmann::json& baseline,
                          const std::string& baseline_file, const CheckOptions& opt);
std::string check_report(const Scenario& sc, const std::string& baseline_file, const CheckResult& result);

// "METRIC=PCT" (PCT >= 0); InputError naming the option otherwise.
std::pair<Metric, double> parse_tolerance(const std::string& text);

}  // namespace wakesim
