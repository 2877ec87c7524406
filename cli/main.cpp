// wakesim command line: run, explain, list, topo. Thin: everything lives in the libraries.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "policies/registry.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "kernel/features.h"
#include "sim/wake_explain.h"
#include "workloads/workloads.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

using namespace wakesim;

namespace {

void print_profile(const MachineProfile& p, const char* indent) {
    for (const auto& l : p.describe())
        std::printf("%s%-28s %-12s %-6s %s\n%s%-28s   source: %s\n", indent, l.name.c_str(), l.value.c_str(), l.unit.c_str(),
                    l.help.c_str(), indent, "", l.source.c_str());
}

int list_cmd(const std::string& what) {
    if (what == "policies") {
        for (const auto& e : policy_registry()) {
            std::printf("%-22s %s\n", e.name.c_str(), e.description.c_str());
            std::printf("%-22s   origin: %s\n", "", e.origin.c_str());
            for (const auto& p : e.params) {
                std::string choices;
                for (const auto& c : p.choices) choices += (choices.empty() ? "" : "|") + c;
                std::printf("%-22s   param %s = %s%s%s: %s\n", "", p.name.c_str(), p.default_value.c_str(),
                            choices.empty() ? " (duration)" : " (", choices.empty() ? "" : (choices + ")").c_str(),
                            p.help.c_str());
            }
        }
    } else if (what == "workloads") {
        for (const auto& w : workload_kinds()) std::printf("%-12s %s\n", w.kind.c_str(), w.description.c_str());
    } else if (what == "machines") {
        for (const auto& t : topology_presets()) {
            MachineProfile p = make_machine_profile(t.name);
            Topology topo = make_topology_preset(t.name);
            std::printf("%s: %s (%d CPUs)\n  profile source: %s\n", t.name.c_str(), t.description.c_str(),
                        topo.nr_cpus(), p.source.c_str());
            print_profile(p, "    ");
        }
    } else if (what == "features") {
        for (const auto& f : feature_table())
            std::printf("%-24s %-3s %s\n", f.name, f.default_on ? "on" : "off", f.why);
    }
    return 0;
}

Topology load_topo_arg(const std::string& arg) {
    if (is_topology_preset(arg)) return make_topology_preset(arg);
    if (!std::filesystem::exists(arg)) {
        std::vector<std::string> names;
        for (const auto& p : topology_presets()) names.push_back(p.name);
        std::string hint = nearest_name(arg, names);
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        throw InputError(arg, "", "expected a machine preset (" + list + ") or a topology JSON file" +
                                      (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
    }
    nlohmann::json doc = load_json_file(arg);
    return topology_from_json(JsonNode(doc, arg));
}

void refuse_overwrite(const std::string& path, bool force) {
    if (path.empty() || force || !std::filesystem::exists(path)) return;
    throw InputError(path, "", "expected a file that does not exist yet; pass --force to overwrite it");
}

// The element of `have` named `want` (case or policy of the scenario), or an InputError naming them.
template <class T>
const T& pick_named(const std::vector<T>& have, const std::string& want, const std::string& file, const char* what) {
    std::vector<std::string> names;
    for (const auto& x : have) {
        if (x.name == want) return x;
        names.push_back(x.name);
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string hint = nearest_name(want, names);
    throw InputError(file, "", std::string("unknown ") + what + " \"" + want + "\"; expected one of: " + list +
                                   (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"wakesim: a deterministic simulator of Linux task-wakeup placement"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "wakesim 0.1.0 (models Linux v6.19 fair-class wake placement)");

    auto* run = app.add_subcommand("run", "run a scenario: compare its policies over its cases and seeds");
    std::string scenario_path, format = "table", trace_path, out_path;
    std::vector<std::string> policies, cases;
    int seeds = 0, jobs = 1;
    bool force = false, check = false;
    run->add_option("scenario", scenario_path, "scenario JSON file")->required();
    run->add_option("--policy", policies, "run only these policies (repeatable)");
    run->add_option("--case", cases, "run only these cases (repeatable)");
    run->add_option("--seeds", seeds, "run seeds 1..N instead of the scenario's seeds")->check(CLI::Range(1, 10000));
    run->add_option("--format", format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
    run->add_option("--trace", trace_path, "write ftrace-style sched events (one file per run)");
    run->add_option("-o,--out", out_path, "write the report to this file instead of stdout");
    run->add_option("-j,--jobs", jobs, "runs in parallel (results are identical for any value)")->check(CLI::Range(1, 256));
    run->add_flag("--force", force, "overwrite existing output files");
    run->add_flag("--check-invariants", check, "check scheduler invariants at the end of each run");

    auto* explain = app.add_subcommand("explain", "print the decision path of one wakeup");
    std::string ex_case, ex_policy;
    uint64_t ex_wakeup = 1, ex_seed = 0;
    explain->add_option("scenario", scenario_path, "scenario JSON file")->required();
    explain->add_option("--case", ex_case, "case name (default: the first)");
    explain->add_option("--policy", ex_policy, "policy label (default: the first)");
    explain->add_option("--wakeup", ex_wakeup, "which wakeup, counting select_task_rq calls from 1")->check(CLI::Range(uint64_t{1}, uint64_t{1000000000000}));
    explain->add_option("--seed", ex_seed, "seed (default: the scenario's first)");

    auto* list = app.add_subcommand("list", "list policies, workloads, machines or scheduler features");
    std::string what;
    list->add_option("what", what, "policies | workloads | machines | features")
        ->required()
        ->check(CLI::IsMember({"policies", "workloads", "machines", "features"}));

    auto* topo = app.add_subcommand("topo", "show a topology and its sched domains, or import one from sysfs");
    topo->require_subcommand(1);
    auto* show = topo->add_subcommand("show", "print a machine's CPUs, sched domains and profile");
    std::string topo_arg;
    bool topo_json = false;
    show->add_option("machine", topo_arg, "preset name or topology JSON file")->required();
    show->add_flag("--json", topo_json, "print JSON");
    auto* import = topo->add_subcommand("import", "read a copy of /sys/devices/system/cpu and print its JSON");
    std::string import_dir;
    import->add_option("dir", import_dir, "directory (a copy of /sys/devices/system/cpu)")->required();

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "wakesim: error: %s\n", e.what());
        return 2;
    }

    try {
        if (*list) return list_cmd(what);
        if (*show) {
            Topology t = load_topo_arg(topo_arg);
            SchedDomains sd = SchedDomains::build(t);
            if (topo_json) {
                nlohmann::json j;
                j["topology"] = t.to_json();
                j["sched_domains"] = sd.to_json();
                if (is_machine_profile(t.name())) {
                    MachineProfile p = make_machine_profile(t.name());
                    nlohmann::json pj = nlohmann::json::array();
                    for (const auto& l : p.describe())
                        pj.push_back({{"name", l.name}, {"value", l.value}, {"unit", l.unit}, {"help", l.help}, {"source", l.source}});
                    j["profile"] = pj;
                }
                std::cout << j.dump(2) << "\n";
            } else {
                std::printf("%s: %s\n%d CPUs, %d NUMA nodes, SMT %s, clusters %s, asym capacity %s\n", t.name().c_str(),
                            t.description().c_str(), t.nr_cpus(), t.nr_nodes(), t.smt_present() ? "yes" : "no",
                            t.has_clusters() ? "yes" : "no", t.asym_capacity() ? "yes" : "no");
                std::cout << sd.describe(t);
                if (is_machine_profile(t.name())) {
                    MachineProfile p = make_machine_profile(t.name());
                    std::printf("profile %s (source: %s)\n", p.name.c_str(), p.source.c_str());
                    print_profile(p, "  ");
                }
            }
            return 0;
        }
        if (*import) {
            Topology t = import_sysfs(import_dir);
            std::cout << t.to_json().dump(2) << "\n";
            return 0;
        }
        Scenario sc = load_scenario(scenario_path);
        if (seeds > 0) {
            sc.seeds.clear();
            for (int i = 1; i <= seeds; ++i) sc.seeds.push_back(static_cast<uint64_t>(i));
        }
        if (*explain) {
            const CaseSpec* c = ex_case.empty() ? &sc.cases.front() : &pick_named(sc.cases, ex_case, scenario_path, "case");
            const Policy* p =
                ex_policy.empty() ? &sc.policies.front() : &pick_named(sc.policies, ex_policy, scenario_path, "policy");
            RunSpec spec = make_run_spec(sc, *c, *p, ex_seed ? ex_seed : sc.seeds.front());
            WakeExplain ex;
            spec.explain = &ex;
            spec.explain_wakeup = ex_wakeup;
            RunResult r = run_simulation(spec);
            if (!ex.captured())
                throw InputError(scenario_path, "",
                                 "expected --wakeup at most " +
                                     std::to_string(r.metrics.value("select.pinned", 0ULL) +
                                                    r.metrics.value("wakeups", 0ULL)) +
                                     " (the select_task_rq calls this run makes), got " + std::to_string(ex_wakeup));
            std::printf("wakeup #%llu  case=%s policy=%s seed=%llu\n", static_cast<unsigned long long>(ex_wakeup),
                        c->name.c_str(), p->name.c_str(), static_cast<unsigned long long>(spec.seed));
            for (const auto& l : ex.lines()) std::printf("  %s\n", l.c_str());
            return 0;
        }
        refuse_overwrite(out_path, force);
        refuse_overwrite(trace_path, force);
        RunOptions opt;
        opt.cases = cases;
        opt.policies = policies;
        opt.jobs = jobs;
        opt.trace_path = trace_path;
        opt.check_invariants = check;
        opt.force = force;
        auto runs = run_scenario(sc, opt);
        std::string text;
        if (format == "json")
            text = report_json(sc, runs).dump(2) + "\n";
        else if (format == "csv")
            text = report_csv(runs);
        else
            text = report_table(sc, runs);
        if (out_path.empty()) {
            std::fwrite(text.data(), 1, text.size(), stdout);
        } else {
            std::FILE* f = std::fopen(out_path.c_str(), "w");
            if (!f) throw InputError(out_path, "", "cannot open the output file for writing");
            std::fwrite(text.data(), 1, text.size(), f);
            std::fclose(f);
        }
        return 0;
    } catch (const InputError& e) {
        std::fprintf(stderr, "wakesim: error: %s\n", e.what());
        return 2;
    } catch (const std::logic_error& e) {
        std::fprintf(stderr, "wakesim: internal error: %s\n", e.what());
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wakesim: error: %s\n", e.what());
        return 2;
    }
}
