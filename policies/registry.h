// The explicit table of named policies (no self-registering statics). Each policy file defines
// one PolicyKind: name, description, origin, its parameters declared once, and a factory that
// makes the per-run WakePolicy from typed parameter values.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "input/params.h"
#include "kernel/wake_policy.h"

namespace wakesim {

class JsonNode;

struct PolicyKind {
    std::string name;
    std::string description;  // one line
    std::string origin;       // the patch, thread or kernel version it models
    ParamTable params;
    bool rewrites_wake_flags = false;  // overrides site_flags: two such kinds cannot be composed
    std::unique_ptr<WakePolicy> (*make)(const ParamValues& params);
};

// One part of a scenario's policy: a kind with its parameter values.
struct PolicyPart {
    const PolicyKind* kind = nullptr;
    ParamValues params;
};

// A policy as a scenario names it: a label and its parts (one, or several composed). Immutable
// and shared by every run; instantiate() makes the per-run object the scheduler calls.
struct Policy {
    std::string name;
    std::string description;
    std::vector<PolicyPart> parts;

    PolicyRun instantiate() const;
    // "seesaw.variant" -> "two_bits", as the user wrote them or as declared, in part order.
    std::vector<std::pair<std::string, std::string>> param_texts() const;
};

const std::vector<const PolicyKind*>& policy_registry();
const PolicyKind* find_policy(const std::string& name);
std::vector<std::string> policy_names();

// A named policy with default parameters. Throws std::out_of_range if unknown.
Policy make_policy(const std::string& name);
// A scenario's policy entry: "name", {"use": name, "name": label, "params": {...}} or
// {"name": label, "compose": [entries...]}. Errors are InputError with the JSON pointer.
// Compositions nest at most kMaxComposeDepth deep.
inline constexpr size_t kMaxComposeDepth = 8;
Policy policy_from_json(const JsonNode& node);

// docs/policies.md's generated part: one section per policy with its parameter table.
std::string policies_markdown();

}  // namespace wakesim
