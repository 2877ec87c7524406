// `wakesim compare`: each policy of a scenario against a baseline policy, case by case, over the
// scenario's seeds. Per metric: mean, standard deviation and 95% confidence interval (Student's
// t) of each side; Δ% = (policy - baseline) / baseline with its 95% interval (Welch's interval of
// the difference of means, over the baseline's mean); Welch's t-test (two-sided, alpha 0.05) for
// the verdict, which uses the metric table's "better" direction; when the test is inconclusive,
// the seeds per policy a difference of the observed size would need (80% power). A policy whose
// runs give the baseline's metrics exactly, seed by seed, is reported as having no effect on the
// workload: none of its wake sites or hooks changed a decision.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/stats.h"
#include "metrics/metric_table.h"

namespace wakesim {

struct CompareOptions {
    std::string baseline_policy;  // empty: the first policy run
    std::vector<Metric> metrics;  // empty: the metrics the report summarises
};

enum class Verdict { baseline, no_effect, one_seed, same, better, worse, different, inconclusive };
const char* to_string(Verdict v);

struct MetricComparison {
    Metric metric = Metric::usec_per_op;
    SampleStats stats;             // this policy's runs
    bool too_few_seeds = false;    // the interval reaches a value the metric cannot take
    bool has_delta = false;        // a baseline row has none; a baseline mean of 0 neither
    double delta_pct = 0, delta_lo = 0, delta_hi = 0;
    WelchResult welch;
    Verdict verdict = Verdict::baseline;
    size_t seeds_needed = 0;       // with Verdict::inconclusive
    bool within_bucket = false;    // inconclusive: a percentile one histogram step apart, no spread
};

struct PolicyComparison {
    std::string case_name, policy;
    bool baseline = false;
    bool no_effect = false;  // every seed's metrics equal the baseline's
    std::vector<MetricComparison> metrics;
};

struct Comparison {
    std::string baseline;
    std::vector<uint64_t> seeds;
    std::vector<PolicyComparison> rows;  // case by case; the baseline first in each case
};

// `runs` as run_scenario returns them. InputError (naming the scenario file) for a baseline
// policy that was not run.
Comparison compare_runs(const Scenario& sc, const std::vector<RunRecord>& runs, const CompareOptions& opt);

std::string comparison_table(const Scenario& sc, const Comparison& c);
nlohmann::json comparison_json(const Scenario& sc, const Comparison& c);

}  // namespace wakesim
