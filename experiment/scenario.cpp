#include "experiment/scenario.h"

#include <filesystem>
#include <optional>
#include <set>

#include "experiment/validate.h"
#include "policies/registry.h"
#include "input/json_input.h"

namespace wakesim {

namespace {

constexpr int64_t kMaxRunTime = 3600LL * kNsPerSec;
constexpr Time kDefaultMaxTime = 60LL * kNsPerSec;

std::string dir_of(const std::string& file) {
    auto p = std::filesystem::path(file).parent_path();
    return p.empty() ? std::string(".") : p.string();
}

// The machine file a string names: a machine of the machines directory, or a file path (with a '/'
// or ending in .json), relative to the scenario's folder.
MachineFile machine_file_named(const JsonNode& node, const std::string& base_dir) {
    const std::string s = node.as_string();
    if (s.find('\0') != std::string::npos) node.as_file_name();  // fails: names a file without NUL
    if (!is_machine_path(s)) {
        if (!is_machine_name(s)) {
            const std::string hint = machine_name_hint(s);
            node.fail("expected a machine (" + machine_names_text() + ") or a machine file (\"box.json\"); got " +
                      quote_for_message(s) + (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
        }
        return load_machine_file(machine_path(s));
    }
    const std::string path = std::filesystem::path(s).is_absolute() ? s : base_dir + "/" + s;
    // A path that exists but is not a regular file is refused, with its kind, by the loader.
    if (std::error_code ec; !std::filesystem::exists(path, ec)) node.fail("expected a machine file; " + quote_for_message(path) + " does not exist");
    return load_machine_file(path);
}

}  // namespace

Machine machine_from_json(const JsonNode& node, const std::string& base_dir) {
    Machine m;
    if (node.is_string()) {
        MachineFile f = machine_file_named(node, base_dir);
        m.topo = std::make_shared<Topology>(std::move(f.topo));
        m.profile = std::move(f.profile);
    } else {
        node.require_object();
        node.check_keys({"preset", "topology", "profile", "reclaim_distance"});
        if (node.has("preset") == node.has("topology"))
            node.fail("expected exactly one of \"preset\" (a machine name or file) or \"topology\" (a file or an object)");
        std::optional<MachineProfile> base;
        if (auto p = node.get("preset")) {
            MachineFile f = machine_file_named(*p, base_dir);
            m.topo = std::make_shared<Topology>(std::move(f.topo));
            base = std::move(f.profile);
        } else {
            JsonNode t = node.at("topology");
            if (t.is_string()) {
                std::string path = t.as_file_name();
                if (!std::filesystem::path(path).is_absolute()) path = base_dir + "/" + path;
                nlohmann::json doc = load_json_file(path);
                m.topo = std::make_shared<Topology>(topology_from_json(JsonNode(doc, path)));
            } else {
                m.topo = std::make_shared<Topology>(topology_from_json(t));
            }
        }
        if (auto prof = node.get("profile")) {
            prof->require_object();
            if (auto b = prof->get("base")) base = machine_file_named(*b, base_dir).profile;
            if (!base)
                prof->fail("expected \"base\": the machine whose costs this topology uses (one of: " +
                           machine_names_text() + ", or a machine file)");
            m.profile = std::move(*base);
            m.profile.apply_overrides(*prof);
        } else {
            if (!base) node.fail("expected \"profile\": {\"base\": ...} for a topology that is not a machine's");
            m.profile = std::move(*base);
        }
    }
    // Per-policy clocks over this topology: each CPU in one policy, capacities derived where asked.
    if (const std::string why = cpufreq_policy_mismatch(m.profile, *m.topo); !why.empty()) {
        const bool overridden = node.is_object() && node.has("profile") && node.at("profile").has("cpufreq_policies");
        (overridden ? node.at("profile").at("cpufreq_policies") : node)
            .fail("expected cpufreq policies over the topology's CPUs: " + why);
    }
    if (m.profile.capacities_from_policies()) m.topo = std::make_shared<Topology>(with_policy_capacities(*m.topo, m.profile));
    const int reclaim = node.is_object() ? static_cast<int>(node.int_or("reclaim_distance", 30, 10, 255)) : 30;
    m.domains = std::make_shared<SchedDomains>(SchedDomains::build(*m.topo, reclaim));
    return m;
}

namespace {

CaseSpec parse_case(const nlohmann::json& doc, const std::string& file, const std::string& name,
                    const std::string& description) {
    JsonNode root(doc, file);
    root.require_object();  // its keys are checked by parse_scenario(), a case's "set" there too
    CaseSpec c;
    c.name = name;
    c.description = description;
    Machine m = machine_from_json(root.at("machine"), dir_of(file));
    c.topo = m.topo;
    c.domains = m.domains;
    c.profile = m.profile;
    // The sections after the machine are read independently: every error of each is reported.
    InputErrorCollector errors;
    if (auto f = root.get("features")) {
        errors.attempt([&] {
            f->require_object();
            errors.attempt([&] { f->check_keys(SchedFeatures::names()); });
            for (const auto& k : f->keys())
                errors.attempt([&] { c.sched.features.set_by_name(k, f->at(k).as_bool()); });
        });
    }
    if (auto s = root.get("sched")) {
        errors.attempt([&] {
            s->require_object();
            errors.attempt([&] { s->check_keys({"migration_cost", "base_slice", "sis_scan_at_start", "force_wakeup_preemption"}); });
            errors.attempt(
                [&] { c.sched.migration_cost_ns = s->duration_or("migration_cost", c.sched.migration_cost_ns, 0, kNsPerSec); });
            errors.attempt([&] { c.sched.base_slice_ns = s->duration_or("base_slice", c.sched.base_slice_ns, 100000, kNsPerSec); });
            errors.attempt([&] {
                if (auto v = s->get("sis_scan_at_start")) c.sched.start_sis_scan_full = v->as_enum({"full", "zero"}) == "full";
            });
            errors.attempt([&] {
                if (auto v = s->get("force_wakeup_preemption")) c.sched.force_wakeup_preemption = v->as_bool();
            });
        });
    }
    // Task groups before the workload, whose tasks name them.
    TaskGroups groups;
    const bool groups_read = errors.attempt([&] {
        if (auto g = root.get("groups")) groups = read_groups(*g, *c.topo);
    });
    const bool workload_read = groups_read && errors.attempt([&] {
        c.workload = build_workload(root.at("workload"), c.profile, *c.topo, groups);
    });
    static const nlohmann::json kNoRun = nlohmann::json::object();  // JsonNode keeps a pointer: it must outlive it
    JsonNode run = root.get("run") ? root.at("run") : JsonNode(kNoRun, file, "/run");
    errors.attempt([&] {
        run.require_object();
        errors.attempt([&] { run.check_keys({"ops", "warmup_ops", "warmup", "duration", "seeds"}); });
        errors.attempt([&] {
            c.warmup_ops = static_cast<uint64_t>(run.int_or("warmup_ops", 0, 0, 1000000000));
            c.warmup_time = run.duration_or("warmup", 0, 0, kMaxRunTime);
            if (c.warmup_ops && c.warmup_time)
                run.at("warmup").fail("expected either \"warmup_ops\" or \"warmup\", not both");
        });
        errors.attempt([&] { c.ops = static_cast<uint64_t>(run.int_or("ops", 0, 0, 1000000000)); });
        errors.attempt([&] { c.max_time = run.duration_or("duration", kDefaultMaxTime, 1000, kMaxRunTime); });
        if (workload_read && c.workload.total_ops && c.warmup_ops >= c.workload.total_ops)
            run.at("warmup_ops").fail("expected fewer warm-up ops than the workload performs (" +
                                      std::to_string(c.workload.total_ops) + ")");
    });
    errors.finish();
    return c;
}

}  // namespace

std::string scenario_hash(const nlohmann::json& doc) {
    uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
    for (const unsigned char c : doc.dump()) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "fnv1a64:";
    for (int shift = 60; shift >= 0; shift -= 4) out += kHex[(h >> shift) & 0xF];
    return out;
}

std::vector<uint64_t> seeds_up_to(int64_t n) {
    std::vector<uint64_t> seeds;
    for (int64_t i = 1; i <= n; ++i) seeds.push_back(static_cast<uint64_t>(i));
    return seeds;
}

Scenario parse_scenario(const nlohmann::json& doc, const std::string& file) {
    JsonNode root(doc, file);
    root.require_object();
    InputErrorCollector errors;  // every bad key, policy, case and section, each error on its own line
    errors.attempt([&] {
        root.check_keys({"name", "description", "expected", "machine", "features", "sched", "groups", "workload", "policies",
                         "run", "cases", "validation"});
    });
    Scenario sc;
    sc.file = file;
    sc.hash = scenario_hash(doc);
    if (doc.is_object()) {
        nlohmann::json d = nlohmann::json::object();
        for (const char* k : {"machine", "workload", "groups", "cases", "run"})
            if (doc.contains(k)) d[k] = doc[k];
        if (d.contains("run") && d["run"].is_object()) d["run"].erase("seeds");
        sc.bench_hash = scenario_hash(d);
    }
    errors.attempt([&] { sc.name = root.string_or("name", std::filesystem::path(file).stem().string()); });
    errors.attempt([&] { sc.description = root.string_or("description", ""); });
    errors.attempt([&] { sc.expected = root.string_or("expected", ""); });
    // Policies.
    std::set<std::string> labels;
    errors.attempt([&] {
        JsonNode pols = root.at("policies");
        pols.require_array();
        if (pols.size() == 0) pols.fail("expected at least one policy");
        for (size_t i = 0; i < pols.size(); ++i) errors.attempt([&] {
            Policy p = policy_from_json(pols[i]);
            if (!labels.insert(p.name).second)
                pols[i].fail("expected a unique policy label, " + quote_for_message(p.name) + " appears twice");
            sc.policies.push_back(std::move(p));
        });
    });
    // Seeds.
    errors.attempt([&] {
        auto run = root.get("run");
        if (!run) return;
        run->require_object();
        if (auto seeds = run->get("seeds")) {
            if (seeds->is_array()) {
                if (seeds->size() == 0) seeds->fail("expected at least one seed");
                std::set<uint64_t> seen;
                for (size_t i = 0; i < seeds->size(); ++i) {
                    const auto seed = static_cast<uint64_t>((*seeds)[i].as_int(0, INT64_MAX));
                    if (!seen.insert(seed).second)
                        (*seeds)[i].fail("expected distinct seeds, " + std::to_string(seed) + " appears twice");
                    sc.seeds.push_back(seed);
                }
            } else {
                sc.seeds = seeds_up_to(seeds->as_int(1, 10000));
            }
        }
    });
    if (sc.seeds.empty()) sc.seeds.push_back(1);
    // Cases: each is the base document with a merge patch applied.
    nlohmann::json base = doc;
    base.erase("cases");
    base.erase("validation");
    if (auto cases = root.get("cases")) {
        sc.has_cases = true;
        const bool listed = errors.attempt([&] {
            cases->require_array();
            if (cases->size() == 0) cases->fail("expected at least one case (or no \"cases\" key)");
        });
        std::set<std::string> names;
        std::set<std::string> shared_seen;
        for (size_t i = 0; listed && i < cases->size(); ++i) errors.attempt([&] {
            JsonNode cn = (*cases)[i];
            cn.require_object();
            cn.check_keys({"name", "description", "set"});
            const std::string name = cn.at("name").as_string();
            if (name.empty()) cn.at("name").fail("expected a non-empty case name");
            if (!names.insert(name).second) cn.at("name").fail("expected a unique case name, " + quote_for_message(name) + " appears twice");
            nlohmann::json merged = base;
            if (auto set = cn.get("set")) {
                set->require_object();
                for (const char* k : {"policies", "cases", "name", "description", "expected", "validation"})
                    if (set->has(k))
                        set->at(k).fail("expected a case to override only machine, features, sched, groups, workload or run");
                set->check_keys({"machine", "features", "sched", "groups", "workload", "run"});
                if (set->has("run") && set->at("run").has("seeds"))
                    set->at("run").at("seeds").fail("expected seeds to be set for the whole scenario, not per case");
                merged.merge_patch(set->raw());
            }
            InputErrorCollector case_errors;
            case_errors.attempt([&] { sc.cases.push_back(parse_case(merged, file, name, cn.string_or("description", ""))); });
            try {
                case_errors.finish();
            } catch (const InputError& caught) {
                std::vector<InputError> each;
                size_t more = 0;  // errors past the shown ones, for the "N more" line
                if (const auto* many = dynamic_cast<const InputErrors*>(&caught)) {
                    each = many->all();
                    more = many->more();
                } else {
                    each.push_back(caught);
                }
                bool any_new = false;
                for (const InputError& e : each) {
                    // Point into the case's "set" when the bad value came from there.
                    const std::string ptr = e.pointer();
                    const std::string set_ptr = cn.pointer() + "/set" + ptr;
                    bool from_set = false;
                    if (cn.has("set") && e.file() == file) {  // not for an error inside a machine file
                        try {
                            // A value the set gives (not an object it only adds keys to, such as a
                            // "workload" missing its "kind" in the base as well).
                            const nlohmann::json& set = cn.at("set").raw();
                            const nlohmann::json::json_pointer jp(ptr);
                            from_set = !ptr.empty() && set.contains(jp) && !set.at(jp).is_object();
                        } catch (...) {
                            from_set = false;
                        }
                    }
                    // An error of the shared part shows in every case: report it once, for the first.
                    // One in a case's own "set" is that case's, whatever the others set.
                    if (!shared_seen.insert(e.file() + "\n" + (from_set ? set_ptr : ptr) + "\n" + e.expected()).second) continue;
                    any_new = true;
                    errors.add(InputError(e.file(), from_set ? set_ptr : ptr,
                                          e.expected() + (from_set ? "" : " (in case " + quote_for_message(name) + ")")));
                }
                if (any_new) errors.add_unreported(more);  // a shared part's errors counted once
            }
        });
    } else {
        errors.attempt([&] { sc.cases.push_back(parse_case(base, file, "default", "")); });
    }
    errors.finish();
    if (auto v = root.get("validation")) sc.validation = parse_validation_section(*v, sc);
    return sc;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& wanted) {
    nlohmann::json doc = load_json_file(path);
    Scenario sc = parse_scenario(doc, path);
    std::set<std::string> have;
    for (const Policy& p : sc.policies) have.insert(p.name);
    bool added = false;
    for (const std::string& w : wanted) {
        if (have.count(w) != 0 || find_policy(w) == nullptr) continue;  // an unknown name: run_scenario says so
        doc["policies"].push_back(w);
        have.insert(w);
        added = true;
    }
    return added ? parse_scenario(doc, path) : sc;  // parsed again, so the hash covers what runs
}

}  // namespace wakesim
