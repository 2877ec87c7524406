// The explicit table of named policies (no self-registering statics): name, one-line
// description, origin, parameters declared once, and how each sets up a Policy.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kernel/wake_policy.h"

namespace wakesim {

class JsonNode;

struct PolicyParamSpec {
    std::string name;
    std::string default_value;
    std::vector<std::string> choices;  // empty: a duration ("10ms")
    std::string help;
};

using PolicyArgs = std::map<std::string, std::string>;

struct PolicyEntry {
    std::string name;
    std::string description;
    std::string origin;  // patch or thread
    std::vector<PolicyParamSpec> params;
    void (*apply)(Policy& p, const PolicyArgs& args);
};

const std::vector<PolicyEntry>& policy_registry();
const PolicyEntry* find_policy(const std::string& name);
std::vector<std::string> policy_names();

// A named policy with default parameters. Throws std::out_of_range if unknown.
Policy make_policy(const std::string& name);
// A scenario's policy entry: "name", {"use": name, "name": label, "params": {...}} or
// {"name": label, "compose": [entries...]}. Errors are InputError with the JSON pointer.
Policy policy_from_json(const JsonNode& node);

// Each policy file's set-up function.
void apply_plain(Policy& p, const PolicyArgs& a);
void apply_wf_sync(Policy& p, const PolicyArgs& a);
void apply_wf_current_cpu(Policy& p, const PolicyArgs& a);
void apply_seesaw(Policy& p, const PolicyArgs& a);
void apply_reciprocal_sync(Policy& p, const PolicyArgs& a);
void apply_prev_cpu(Policy& p, const PolicyArgs& a);
void apply_migrate_disable_wait(Policy& p, const PolicyArgs& a);
void apply_sched_idle_server(Policy& p, const PolicyArgs& a);

}  // namespace wakesim
