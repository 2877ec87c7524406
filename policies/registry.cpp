#include "policies/registry.h"

#include <stdexcept>

#include "input/json_input.h"

namespace wakesim {

const std::vector<PolicyEntry>& policy_registry() {
    static const std::vector<PolicyEntry> r = {
        {"plain", "today's kernel (v6.19): mainline flags at every wake site", "mainline", {}, apply_plain},
        {"wf_sync", "WF_SYNC at every sync-capable wake site", "long-standing WF_SYNC hint (wake_up_sync)", {}, apply_wf_sync},
        {"wf_current_cpu", "WF_CURRENT_CPU at request and reply wake sites: wake on the waker's CPU",
         "seccomp sync mode (Vagin, 2023); 'fuse: Wake requests on the same cpu' (Schubert, Oct 2025)", {},
         apply_wf_current_cpu},
        {"seesaw", "marked requester/processor pairs wake on the waker's CPU",
         "RFC 'fuse uring / wake_up on the same core' (Danton, Schubert, 2023)",
         {{"variant", "two_bits", {"one_bit", "two_bits", "pair_id", "time_window"}, "how the pair is recognised"},
          {"window", "40ms", {}, "time_window variant: how long after the requester's mark the rule applies (RFC: 10 jiffies)"}},
         apply_seesaw},
        {"reciprocal_sync", "non-SMT WF_SYNC ping-pong pairs stay on the waker's CPU",
         "[PATCH v4] sched/fair: Preserve wake-affine CPU for non-SMT reciprocal sync wakeups (Kaushik, Aug 2026)",
         {}, apply_reciprocal_sync},
        {"prev_cpu", "the wakee goes back to its previous CPU (WF_PREV_CPU idea)", "FUSE wakeup threads",
         {{"mode", "always", {"always", "if_idle"}, "always return prev, or only when prev is idle"}}, apply_prev_cpu},
        {"migrate_disable_wait", "a requester cannot migrate while it waits for its reply",
         "FUSE wakeup threads: migrate_disable() in request_wait_answer", {}, apply_migrate_disable_wait},
        {"sched_idle_server", "server threads run SCHED_IDLE", "fuse-over-io-uring ring thread discussion", {},
         apply_sched_idle_server},
    };
    return r;
}

const PolicyEntry* find_policy(const std::string& name) {
    for (const auto& e : policy_registry())
        if (e.name == name) return &e;
    return nullptr;
}

std::vector<std::string> policy_names() {
    std::vector<std::string> n;
    for (const auto& e : policy_registry()) n.push_back(e.name);
    return n;
}

namespace {

PolicyArgs default_args(const PolicyEntry& e) {
    PolicyArgs a;
    for (const auto& p : e.params) {
        if (p.choices.empty())
            a[p.name + "_ns"] = std::to_string(parse_duration_ns(p.default_value));
        else
            a[p.name] = p.default_value;
        a["~" + p.name] = p.default_value;
    }
    return a;
}

void record_params(Policy& p, const PolicyEntry& e, const PolicyArgs& a) {
    for (const auto& ps : e.params) p.params.push_back({e.name + "." + ps.name, a.at("~" + ps.name), ps.help});
}

// Merges `part` into `into`: flags mode (one non-kernel mode at most), rules, attributes.
void merge(Policy& into, const Policy& part, const JsonNode& where) {
    if (part.site_mode != SiteFlagMode::kernel) {
        if (into.site_mode != SiteFlagMode::kernel && into.site_mode != part.site_mode)
            where.fail("policies that set different wake flags (wf_sync, wf_current_cpu) cannot be composed");
        into.site_mode = part.site_mode;
    }
    into.rules.insert(into.rules.end(), part.rules.begin(), part.rules.end());
    into.server_sched_idle |= part.server_sched_idle;
    into.migrate_disable_wait |= part.migrate_disable_wait;
    into.seesaw_requester_bits |= part.seesaw_requester_bits;
    into.seesaw_server_bits |= part.seesaw_server_bits;
    into.params.insert(into.params.end(), part.params.begin(), part.params.end());
}

const PolicyEntry& lookup(const JsonNode& n) {
    const std::string name = n.as_enum(policy_names());
    return *find_policy(name);
}

}  // namespace

Policy make_policy(const std::string& name) {
    const PolicyEntry* e = find_policy(name);
    if (!e) throw std::out_of_range(name);
    Policy p;
    p.name = e->name;
    p.description = e->description;
    PolicyArgs a = default_args(*e);
    e->apply(p, a);
    record_params(p, *e, a);
    return p;
}

Policy policy_from_json(const JsonNode& node) {
    if (node.is_string()) return make_policy(lookup(node).name);
    node.require_object();
    if (node.has("compose")) {
        node.check_keys({"name", "compose", "description"});
        Policy p;
        p.name = node.at("name").as_string();
        if (p.name.empty()) node.at("name").fail("expected a non-empty policy label");
        JsonNode parts = node.at("compose");
        parts.require_array();
        if (parts.size() == 0) parts.fail("expected at least one policy to compose");
        std::string desc;
        for (size_t i = 0; i < parts.size(); ++i) {
            Policy part = policy_from_json(parts[i]);
            merge(p, part, parts[i]);
            desc += (i ? " + " : "") + part.name;
        }
        p.description = node.string_or("description", "composition of " + desc);
        return p;
    }
    node.check_keys({"name", "use", "params", "description"});
    const PolicyEntry& e = lookup(node.at("use"));
    Policy p;
    p.name = node.string_or("name", e.name);
    if (p.name.empty()) node.at("name").fail("expected a non-empty policy label");
    p.description = node.string_or("description", e.description);
    PolicyArgs a = default_args(e);
    if (auto params = node.get("params")) {
        params->require_object();
        std::vector<std::string> allowed;
        for (const auto& ps : e.params) allowed.push_back(ps.name);
        if (allowed.empty() && !params->keys().empty())
            params->fail("policy " + e.name + " takes no parameters");
        params->check_keys(allowed);
        for (const auto& ps : e.params) {
            auto v = params->get(ps.name);
            if (!v) continue;
            if (ps.choices.empty()) {
                a[ps.name + "_ns"] = std::to_string(v->as_duration_ns(1, 3600LL * 1000000000LL));
                a["~" + ps.name] = v->as_string();
            } else {
                a[ps.name] = v->as_enum(ps.choices);
                a["~" + ps.name] = a[ps.name];
            }
        }
    }
    e.apply(p, a);
    record_params(p, e, a);
    return p;
}

}  // namespace wakesim
