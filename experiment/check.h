// `wakesim baseline` and `wakesim check`: a regression check for CI. A baseline file records, for
// each (case, policy) of a scenario, every numeric metric's value on each seed with its mean, sd
// and 95% interval. `check` runs the scenario again on the baseline's seeds and compares each
// checked metric: a regression is a change in the metric's worse direction (the metric table's
// "better" field) that is larger than the tolerance and significant: Welch's t-test at p < 0.05,
// or, when neither side varies over seeds (a deterministic simulation), any change at all.
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
    std::string status;   // "same", "better", "worse within tolerance", "not significant", "REGRESSION"
    bool regression = false;
};

// The seeds the baseline file records (to run the scenario on). InputError for a file that is
// not a baseline of this scenario.
std::vector<uint64_t> baseline_seeds(const nlohmann::json& baseline, const std::string& file, const Scenario& sc);

std::vector<CheckRow> check_against(const Scenario& sc, const std::vector<RunRecord>& runs, const nlohmann::json& baseline,
                                    const std::string& baseline_file, const CheckOptions& opt);
std::string check_report(const Scenario& sc, const std::string& baseline_file, const std::vector<CheckRow>& rows);

// "METRIC=PCT" (PCT >= 0); InputError naming the option otherwise.
std::pair<Metric, double> parse_tolerance(const std::string& text);

}  // namespace wakesim
