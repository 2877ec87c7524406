// `wakesim validate`: runs validation scenarios (scenarios/validation/, docs/validation.md) and
// compares each published ratio of two configurations with the simulated one.
//
// A validation scenario is an ordinary scenario with a "validation" section. Each row names two
// (case, policy) pairs of the scenario, the metric compared and the published ratio; the
// simulated ratio is the mean of the metric over the scenario's seeds for the numerator over
// that for the denominator (the output also gives each seed's own ratio and in how many seeds the
// rule below holds). A row passes when
//   - the direction is right: the simulated ratio is on the same side of 1 as the published one,
//     or, when the published ratio is within the tolerance of 1 ("no material change"), the
//     simulated one is within the tolerance of 1 too; and
//   - the magnitude is right: |simulated / published - 1| <= tolerance; and
//   - every run of both pairs completed.
// A row may say that its figures were fitted ("fitted": what was fitted to them): it then checks
// the fit, not a prediction, and the output marks it so.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/scenario.h"
#include "input/json_input.h"

namespace wakesim {

// Reads and checks a scenario's "validation" section against the scenario's cases and policies.
// Errors are InputError with the pointer of the bad value.
std::vector<ValidationRow> parse_validation_section(const JsonNode& node, const Scenario& sc);

// The directory `wakesim validate` reads when given none: share/wakesim/scenarios/validation next
// to the program's bin/ when installed, else the source tree's scenarios/validation.
std::string default_validation_dir();

// The scenario files that ARGS name: a directory stands for its *.json files (sorted by name).
// No ARGS: default_validation_dir(). InputError for a missing path or an empty directory.
std::vector<std::string> validation_files(const std::vector<std::string>& args);

// Loads validation scenarios: each must have a "validation" section; row ids must be unique
// across all of them.
std::vector<Scenario> load_validation_scenarios(const std::vector<std::string>& files);

struct ValidationResult {
    std::string scenario;  // the scenario's name
    std::string file;
    ValidationRow row;
    double numerator = 0, denominator = 0;  // simulated: the metric's mean over the seeds
    size_t seeds = 0;
    double simulated_ratio = 0;
    // The ratio of each seed's runs (numerator and denominator ran with the same seed), in the
    // scenario's seed order, and in how many of them the row would pass on that seed's runs
    // alone (the rule above, both runs completed): a verdict that holds in every seed is not the
    // luck of the seeds chosen.
    std::vector<double> ratio_by_seed;
    size_t seeds_passing = 0;
    double error = 0;          // simulated_ratio / published_ratio - 1
    bool no_material_change = false;  // |published_ratio - 1| <= tolerance
    bool direction_ok = false, magnitude_ok = false, completed = false;
    bool pass = false;
};

// Runs the (case, policy) pairs the rows need, each over the scenario's seeds, on `jobs` threads;
// the results are the same for any `jobs`. A denominator whose metric is 0 is an InputError.
std::vector<ValidationResult> run_validation(const std::vector<Scenario>& scenarios, int jobs);

// The pass rule on its own (also used by the tests).
struct RowVerdict {
    double error = 0;
    bool no_material_change = false, direction_ok = false, magnitude_ok = false;
};
RowVerdict judge_ratio(double published_ratio, double simulated_ratio, double tolerance);

std::string validation_table(const std::vector<ValidationResult>& results);
std::string validation_markdown(const std::vector<ValidationResult>& results);
nlohmann::json validation_json(const std::vector<ValidationResult>& results);

}  // namespace wakesim
