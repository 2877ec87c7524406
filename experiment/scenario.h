// Scenario files: a machine, a workload, the policies to compare, run length, warm-up, seeds and
// named cases that override fields (a JSON merge patch). Everything is validated before a run.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policies/registry.h"
#include "hw/machine_profile.h"
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

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    std::string expected;
    std::vector<CaseSpec> cases;
    std::vector<Policy> policies;
    std::vector<uint64_t> seeds;
};

// Reads and validates a scenario file. Errors are InputError (file, JSON pointer, expectation).
Scenario load_scenario(const std::string& path);
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
