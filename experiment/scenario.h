// Scenario files: a machine, a workload, the policies to compare, run length, warm-up, seeds and
// named cases that override fields (a JSON merge patch). Everything is validated before a run.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policies/registry.h"
#include "hw/machine_profile.h"
#include "metrics/metric_table.h"
#include "kernel/sched.h"
#include "workloads/workloads.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

namespace wakesim {

struct CaseSpec {
    std::string name;
    std::string description;
    std::shared_ptr<const Topology> topo;
    std::shared_ptr<const SchedDomains> domains;
    MachineProfile profile;
    SchedConfig sched;
    WorkloadBuild workload;
    uint64_t warmup_ops = 0;
    Time warmup_time = 0;
    uint64_t ops = 0;        // stop after warm-up + ops (0: when the workload ends)
    Time max_time = 0;
};

// A scenario's "validation" section (experiment/validate.h, docs/validation.md): published
// comparisons that the scenario's runs must reproduce. One row compares two (case, policy) pairs
// by the ratio of one metric, as the publication compares two of its rows.
struct ValidationSide {
    std::string id;          // the publication's row ("C1")
    std::string case_name;   // a case of the scenario
    std::string policy;      // a policy label of the scenario
    double published = 0;    // the published figure, in the metric's unit
};

struct ValidationRow {
    std::string id;          // "C2"
    std::string source;      // the publication: thread title, list, date
    Metric metric = Metric::usec_per_op;
    ValidationSide numerator, denominator;
    double published_ratio = 0;
    double tolerance = 0.20;  // the largest |simulated ratio / published ratio - 1|
    std::string fitted;       // non-empty: what was fitted to these figures, so the row checks a fit, not a prediction
    std::string pointer;      // "/validation/rows/0", for messages
};

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    std::string expected;
    std::vector<CaseSpec> cases;  // without a "cases" key, one case named "default"
    bool has_cases = false;       // the file has a "cases" key
    std::vector<Policy> policies;
    std::vector<uint64_t> seeds;
    std::vector<ValidationRow> validation;  // empty: no "validation" section
    // "fnv1a64:<16 hex digits>" of the scenario document in canonical form (nlohmann's dump:
    // keys sorted, no whitespace), so a report names exactly what it ran: equal for files that
    // differ only in layout or key order.
    std::string hash;
    // The same of what a run measures: the machine, workload, task groups, cases and run settings
    // but seeds. Not the policies, features and sched settings, which are what `wakesim check`
    // tests against a baseline; not the texts.
    std::string bench_hash;
};

// "fnv1a64:..." of a document in canonical form (Scenario::hash).
std::string scenario_hash(const nlohmann::json& doc);
// Reads and validates a scenario file. Errors are InputError (file, JSON pointer, expectation).
// Each name of `wanted` that the file's "policies" lack but the policy registry has is appended
// with its default parameters (`run --policy NAME`).
// Seeds 1..n: a scenario's `"seeds": n` and the command line's `--seeds n`.
std::vector<uint64_t> seeds_up_to(int64_t n);
Scenario load_scenario(const std::string& path, const std::vector<std::string>& wanted = {});
// The same from an already parsed document (`file` is used in messages and to resolve paths).
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file);

// A machine: preset name, topology file, or inline description, with profile overrides.
struct Machine {
    std::shared_ptr<const Topology> topo;
    std::shared_ptr<const SchedDomains> domains;
    MachineProfile profile;
};
Machine machine_from_json(const class JsonNode& node, const std::string& base_dir);

}  // namespace wakesim
