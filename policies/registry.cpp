#include "policies/registry.h"

#include <stdexcept>

#include "input/json_input.h"

namespace wakesim {

// Each policy's file defines its kind; adding a policy adds one line here and one below.
const PolicyKind& plain_policy();
const PolicyKind& wf_sync_policy();
const PolicyKind& no_sync_policy();
const PolicyKind& seccomp_current_cpu_policy();
const PolicyKind& seesaw_policy();
const PolicyKind& reciprocal_sync_policy();
const PolicyKind& eas_sync_bias_policy();
const PolicyKind& prev_cpu_policy();
const PolicyKind& migrate_disable_wait_policy();
const PolicyKind& sched_idle_server_policy();
const PolicyKind& fuse_wake_same_cpu_policy();
const PolicyKind& fuse_sync_request_policy();
const PolicyKind& fuse_bg_next_cpu_policy();
const PolicyKind& fuse_bg_retries_policy();
const PolicyKind& fuse_bg_random_policy();
const PolicyKind& fuse_bg_numa_policy();

const std::vector<const PolicyKind*>& policy_registry() {
    static const std::vector<const PolicyKind*> r = {
        &plain_policy(),
        &wf_sync_policy(),
        &no_sync_policy(),
        &seccomp_current_cpu_policy(),
        &seesaw_policy(),
        &reciprocal_sync_policy(),
        &eas_sync_bias_policy(),
        &prev_cpu_policy(),
        &migrate_disable_wait_policy(),
        &sched_idle_server_policy(),
        &fuse_wake_same_cpu_policy(),
        &fuse_sync_request_policy(),
        &fuse_bg_next_cpu_policy(),
        &fuse_bg_retries_policy(),
        &fuse_bg_random_policy(),
        &fuse_bg_numa_policy(),
    };
    return r;
}

const PolicyKind* find_policy(const std::string& name) {
    for (const PolicyKind* k : policy_registry())
        if (k->name == name) return k;
    return nullptr;
}

std::vector<std::string> policy_names() {
    std::vector<std::string> n;
    for (const PolicyKind* k : policy_registry()) n.push_back(k->name);
    return n;
}

PolicyRun Policy::instantiate() const {
    PolicyRun run;
    for (const PolicyPart& part : parts) run.rules.push_back(part.kind->make(part.params));
    return run;
}

std::vector<std::pair<std::string, std::string>> Policy::param_texts() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const PolicyPart& part : parts)
        for (const ParamSpec& s : part.kind->params) out.emplace_back(part.kind->name + "." + s.name, part.params.written(s.name));
    return out;
}

namespace {

// Names a policy once had: refused with what to write instead, not silently taken for another.
struct RetiredName {
    const char* name;
    const char* instead;
};
constexpr RetiredName kRetired[] = {
    {"wf_current_cpu",
     "\"seccomp_current_cpu\" (WF_CURRENT_CPU at request and reply sites on every transport: seccomp's synchronous "
     "user notification, which this name meant) or \"fuse_wake_same_cpu\" (the FUSE patch 'fuse: Wake requests on the "
     "same cpu': WF_CURRENT_CPU on the reply wake of io-uring requests only)"},
};

const PolicyKind& lookup(const JsonNode& n) {
    if (n.is_string())
        for (const RetiredName& r : kRetired)
            if (n.as_string() == r.name)
                n.fail("policy \"" + std::string(r.name) + "\" was renamed; did you mean " + r.instead + "?");
    return *find_policy(n.as_enum(policy_names()));
}

Policy single(const PolicyKind& k, ParamValues params, std::string label, std::string description) {
    Policy p;
    p.name = std::move(label);
    p.description = std::move(description);
    p.parts.push_back({&k, std::move(params)});
    return p;
}

}  // namespace

Policy make_policy(const std::string& name) {
    const PolicyKind* k = find_policy(name);
    if (!k) throw std::out_of_range(name);
    return single(*k, default_params(k->params), k->name, k->description);
}

namespace {

// `depth`: how many compositions enclose `node`; checked before recursing into the next one.
Policy policy_from_json_at(const JsonNode& node, size_t depth) {
    if (node.is_string()) return make_policy(lookup(node).name);
    node.require_object();
    if (node.has("compose")) {
        node.check_keys({"name", "compose", "description"});
        if (depth >= kMaxComposeDepth)
            node.at("compose").fail("expected compositions nested at most " + std::to_string(kMaxComposeDepth) +
                                    " deep");
        Policy p;
        p.name = node.at("name").as_string();
        if (p.name.empty()) node.at("name").fail("expected a non-empty policy label");
        JsonNode list = node.at("compose");
        list.require_array();
        if (list.size() == 0) list.fail("expected at least one policy to compose");
        std::string desc;
        const PolicyKind* flags_kind = nullptr;
        for (size_t i = 0; i < list.size(); ++i) {
            Policy part = policy_from_json_at(list[i], depth + 1);
            for (PolicyPart& pp : part.parts) {
                if (pp.kind->rewrites_wake_flags) {
                    if (flags_kind && flags_kind != pp.kind)
                        list[i].fail("policies that set different wake flags (wf_sync, seccomp_current_cpu) cannot be composed");
                    flags_kind = pp.kind;
                }
                p.parts.push_back(std::move(pp));
            }
            desc += (i ? " + " : "") + part.name;
        }
        p.description = node.string_or("description", "composition of " + desc);
        return p;
    }
    node.check_keys({"name", "use", "params", "description"});
    const PolicyKind& k = lookup(node.at("use"));
    std::string label = node.string_or("name", k.name);
    if (label.empty()) node.at("name").fail("expected a non-empty policy label");
    ParamValues params = default_params(k.params);
    if (auto given = node.get("params")) {
        given->require_object();
        if (k.params.empty() && !given->keys().empty()) given->fail("policy " + k.name + " takes no parameters");
        params = read_params(*given, k.params);
    }
    return single(k, std::move(params), std::move(label), node.string_or("description", k.description));
}

}  // namespace

Policy policy_from_json(const JsonNode& node) { return policy_from_json_at(node, 0); }

std::string policies_markdown() {
    std::string out = "| policy | what it does | parameters (type, default, range) | origin |\n|---|---|---|---|\n";
    for (const PolicyKind* k : policy_registry()) {
        std::string params;
        for (const ParamSpec& s : k->params) {
            const std::string range = s.range_text();
            params += (params.empty() ? "" : "<br>") + ("`" + s.name + "` (" + s.type_text() + ", default `" +
                                                        s.default_value + "`" + (range.empty() ? "" : ", " + range) +
                                                        "): " + s.help);
        }
        out += "| `" + k->name + "` | " + k->description + " | " + (params.empty() ? "none" : params) + " | " + k->origin +
               " |\n";
    }
    return out;
}

}  // namespace wakesim
