// wakesim command line: run, explain, validate, list, topo. Thin: everything lives in the libraries.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "policies/registry.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/validate.h"
#include "kernel/features.h"
#include "metrics/metric_format.h"
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

// `list workloads`: each kind and its description; -v or --markdown: every parameter table too,
// from the declarations docs/scenarios.md embeds; --markdown NAME: that one table.
int list_workloads(bool verbose, bool markdown, const std::string& table) {
    if (!table.empty()) {
        if (!markdown) throw std::runtime_error("a table name (" + table + ") goes with --markdown");
        const ParamSection* s = find_workload_section(table);
        if (!s) {
            std::vector<std::string> names;
            for (const auto& x : workload_param_sections()) names.push_back(x.name);
            std::string list;
            for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
            const std::string hint = nearest_name(table, names);
            throw std::runtime_error("unknown workload table \"" + table + "\"; expected one of: " + list +
                                     (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
        }
        std::fputs(section_markdown(*s).c_str(), stdout);
        return 0;
    }
    if (!verbose && !markdown) {
        for (const auto& w : workload_kinds()) std::printf("%-12s %s\n", w.kind.c_str(), w.description.c_str());
        return 0;
    }
    bool first = true;
    for (const auto& s : workload_param_sections()) {
        std::printf("%s### %s\n\n%s", first ? "" : "\n", s.title.c_str(), section_markdown(s).c_str());
        first = false;
    }
    return 0;
}

int list_cmd(const std::string& what, bool markdown) {
    if (what == "policies" && markdown) {
        std::fputs(policies_markdown().c_str(), stdout);
    } else if (what == "policies") {
        for (const PolicyKind* k : policy_registry()) {
            std::printf("%-22s %s\n", k->name.c_str(), k->description.c_str());
            std::printf("%-22s   origin: %s\n", "", k->origin.c_str());
            for (const ParamSpec& p : k->params) {
                const std::string range = p.range_text();
                std::printf("%-22s   param %s = %s (%s%s%s): %s\n", "", p.name.c_str(), p.default_value.c_str(),
                            p.type_text().c_str(), range.empty() ? "" : " ", range.c_str(), p.help.c_str());
            }
        }
    } else if (what == "machines") {
        std::vector<MachineFile> all;  // every file read before anything is printed: an error is one line
        for (const auto& name : machine_names()) all.push_back(load_machine_file(machine_path(name)));
        std::printf("machine files in %s (docs/machines.md):\n", machines_dir().c_str());
        for (const MachineFile& m : all) {
            const std::string& name = m.profile.name;
            std::printf("%s: %s (%d CPUs)\n  profile source: %s\n", name.c_str(), m.topo.description().c_str(),
                        m.topo.nr_cpus(), m.profile.source.c_str());
            print_profile(m.profile, "    ");
        }
    } else if (what == "features") {
        for (const auto& f : feature_table())
            std::printf("%-24s %-3s %s\n", f.name, f.default_on ? "on" : "off", f.why);
    } else if (what == "metrics") {
        std::fputs((markdown ? metrics_markdown() : metrics_list_text()).c_str(), stdout);
    }
    return 0;
}

// `topo show`'s argument: a machine name, a machine file or a topology file (no profile).
struct ShownMachine {
    Topology topo;
    std::optional<MachineProfile> profile;
};

ShownMachine load_topo_arg(const std::string& arg) {
    if (is_machine_name(arg)) {
        MachineFile m = load_machine_file(machine_path(arg));
        return {std::move(m.topo), std::move(m.profile)};
    }
    if (!is_machine_path(arg) && !std::filesystem::exists(arg)) {
        const std::string hint = nearest_name(arg, machine_names());
        throw InputError(arg, "", "expected a machine (" + machine_names_text() +
                                      "), a machine file or a topology JSON file" +
                                      (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
    }
    nlohmann::json doc = load_json_file(arg);
    const JsonNode node(doc, arg);
    if (doc.is_object() && doc.contains("topology")) {
        MachineFile m = machine_file_from_json(node);
        return {std::move(m.topo), std::move(m.profile)};
    }
    return {topology_from_json(node), std::nullopt};
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
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + quote_for_message(n);
    const std::string hint = nearest_name(want, names);
    throw InputError(file, "", std::string("unknown ") + what + " " + quote_for_message(want) + "; expected one of: " +
                                   list + (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
}

// `--trace-window FROM:TO`: two durations with units, FROM < TO.
TraceWindow parse_trace_window(const std::string& text) {
    const auto colon = text.find(':');
    const std::string expect = "--trace-window: expected FROM:TO, two durations with units such as 0ms:10ms, got \"" + text + "\"";
    if (colon == std::string::npos) throw std::runtime_error(expect);
    TraceWindow w;
    try {
        w.from = parse_duration_ns(text.substr(0, colon));
        w.to = parse_duration_ns(text.substr(colon + 1));
    } catch (const std::exception& e) {
        throw std::runtime_error(expect + " (" + e.what() + ")");
    }
    if (w.from < 0 || w.to <= w.from) throw std::runtime_error(expect + " (FROM must be before TO)");
    return w;
}

}  // namespace

// The command; main() adds the check that what it printed was written.
static int wakesim_main(int argc, char** argv) {
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
    run->add_option("--format", format, "table, json, csv or perf (perf bench's lines per run)")
        ->check(CLI::IsMember({"table", "json", "csv", "perf"}));
    run->add_option("--trace", trace_path, "write ftrace-style sched events (one file per run)");
    std::string trace_window;
    run->add_option("--trace-window", trace_window, "trace only simulated time FROM:TO, e.g. 0ms:10ms");
    run->add_option("-o,--out", out_path, "write the report to this file instead of stdout");
    run->add_option("-j,--jobs", jobs, "runs in parallel (results are identical for any value)")->check(CLI::Range(1, 256));
    run->add_flag("--force", force, "overwrite existing output files");
    run->add_flag("--check-invariants", check, "check scheduler invariants at the end of each run");
    std::string max_memory;
    bool quiet = false;
    run->add_option("--max-memory", max_memory,
                    "refuse runs whose estimated memory (all parallel runs together) is over SIZE, e.g. 8GiB "
                    "(default: half of this machine's RAM)");
    run->add_flag("-q,--quiet", quiet, "no warning or progress line on stderr for sets of runs estimated to take long");

    auto* explain = app.add_subcommand("explain", "print the decision path of one wakeup");
    std::string ex_case, ex_policy;
    uint64_t ex_wakeup = 1;
    int64_t ex_seed = 0;  // a scenario's seeds are integers in [0, 2^63-1]
    explain->add_option("scenario", scenario_path, "scenario JSON file")->required();
    explain->add_option("--case", ex_case, "case name (default: the first)");
    explain->add_option("--policy", ex_policy, "policy label (default: the first)");
    explain->add_option("--wakeup", ex_wakeup, "which wakeup, counting select_task_rq calls from 1")->check(CLI::Range(uint64_t{1}, uint64_t{1000000000000}));
    auto* ex_seed_opt = explain->add_option("--seed", ex_seed, "seed (default: the scenario's first)")
                            ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()));

    auto* validate = app.add_subcommand(
        "validate", "run the validation scenarios and compare their ratios with the published ones (exit 1 if a row fails)");
    std::vector<std::string> val_paths;
    std::string val_format = "table";
    int val_jobs = 1;
    validate->add_option("paths", val_paths,
                         "validation scenario files or directories (default: the installed share/wakesim/scenarios/"
                         "validation, else the source tree's scenarios/validation)");
    validate->add_option("--format", val_format, "table, json or markdown (docs/validation.md's table)")
        ->check(CLI::IsMember({"table", "json", "markdown"}));
    validate->add_option("-j,--jobs,--threads", val_jobs, "runs in parallel (results are identical for any value)")
        ->check(CLI::Range(1, 256));

    auto* list = app.add_subcommand("list", "list policies, workloads, machines, scheduler features or metrics");
    std::string what, list_table;
    bool list_verbose = false, list_markdown = false;
    list->add_option("what", what, "policies | workloads | machines | features | metrics")
        ->required()
        ->check(CLI::IsMember({"policies", "workloads", "machines", "features", "metrics"}));
    list->add_option("table", list_table, "workloads --markdown: only this table (pipe, program.task, hogs, ...)");
    list->add_flag("-v,--verbose", list_verbose, "workloads: every parameter table");
    list->add_flag("--markdown", list_markdown, "the Markdown that docs/ carries (policies, workloads, metrics)");

    auto* topo = app.add_subcommand("topo", "show a topology and its sched domains, or import one from sysfs");
    topo->require_subcommand(1);
    auto* show = topo->add_subcommand("show", "print a machine's CPUs, sched domains and profile");
    std::string topo_arg;
    bool topo_json = false;
    show->add_option("machine", topo_arg, "machine name, machine file or topology JSON file")->required();
    show->add_flag("--json", topo_json, "print JSON");
    auto* import = topo->add_subcommand("import", "read a copy of /sys/devices/system/cpu and print its JSON");
    std::string import_dir;
    import->add_option("dir", import_dir, "directory (a copy of /sys/devices/system/cpu)")->required();

    std::string machines;
    for (auto* sub : {run, explain, validate, list, show})
        sub->add_option("--machines", machines,
                        "directory of machine files (default: $WAKESIM_MACHINES, else the installed "
                        "share/wakesim/machines, else the source tree's machines/)");

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
        if (!machines.empty()) set_machines_dir(machines);
        if (*list) {
            if (what == "workloads") return list_workloads(list_verbose, list_markdown, list_table);
            if (list_verbose || !list_table.empty())
                throw std::runtime_error("-v and a table name go with \"list workloads\"");
            if (list_markdown && what != "policies" && what != "metrics")
                throw std::runtime_error("--markdown goes with \"list policies\", \"list workloads\" or \"list metrics\"");
            return list_cmd(what, list_markdown);
        }
        if (*show) {
            const ShownMachine shown = load_topo_arg(topo_arg);
            const Topology& t = shown.topo;
            SchedDomains sd = SchedDomains::build(t);
            if (topo_json) {
                nlohmann::json j;
                j["topology"] = t.to_json();
                j["sched_domains"] = sd.to_json();
                if (shown.profile) {
                    nlohmann::json pj = nlohmann::json::array();
                    for (const auto& l : shown.profile->describe())
                        pj.push_back({{"name", l.name}, {"value", l.value}, {"unit", l.unit}, {"help", l.help}, {"source", l.source}});
                    j["profile"] = pj;
                }
                std::cout << j.dump(2) << "\n";
            } else {
                std::printf("%s: %s\n%d CPUs, %d NUMA nodes, SMT %s, clusters %s, asym capacity %s\n", t.name().c_str(),
                            t.description().c_str(), t.nr_cpus(), t.nr_nodes(), t.smt_present() ? "yes" : "no",
                            t.has_clusters() ? "yes" : "no", t.asym_capacity() ? "yes" : "no");
                std::cout << sd.describe(t);
                if (shown.profile) {
                    std::printf("profile %s (source: %s)\n", shown.profile->name.c_str(), shown.profile->source.c_str());
                    print_profile(*shown.profile, "  ");
                }
            }
            return 0;
        }
        if (*import) {
            Topology t = import_sysfs(import_dir);
            std::cout << t.to_json().dump(2) << "\n";
            return 0;
        }
        if (*validate) {
            const auto results = run_validation(load_validation_scenarios(validation_files(val_paths)), val_jobs);
            std::string text;
            if (val_format == "json")
                text = validation_json(results).dump(2) + "\n";
            else if (val_format == "markdown")
                text = validation_markdown(results);
            else
                text = validation_table(results);
            std::fwrite(text.data(), 1, text.size(), stdout);  // checked in main()
            for (const auto& r : results)
                if (!r.pass) return 1;
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
            check_memory_budget(sc, *c, 1, 0);  // the default budget, as `run` checks it
            RunSpec spec =
                make_run_spec(sc, *c, *p, ex_seed_opt->count() ? static_cast<uint64_t>(ex_seed) : sc.seeds.front());
            WakeExplain ex;
            spec.explain = &ex;
            spec.explain_wakeup = ex_wakeup;
            RunResult r = run_case(sc, *c, *p, spec);
            if (!ex.captured())
                throw InputError(scenario_path, "",
                                 "expected --wakeup at most " +
                                     std::to_string(r.metrics.integer(Metric::select_pinned) +
                                                    r.metrics.integer(Metric::wakeups)) +
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
        if (!trace_window.empty()) {
            if (trace_path.empty()) throw std::runtime_error("--trace-window goes with --trace");
            opt.trace_window = parse_trace_window(trace_window);
        }
        opt.check_invariants = check;
        opt.force = force;
        opt.quiet = quiet;
        if (!max_memory.empty()) {
            int64_t bytes = -1;
            try {
                bytes = parse_size_bytes(max_memory);
            } catch (const std::exception&) {
            }
            if (bytes <= 0)
                throw InputError("--max-memory", "", "expected a size such as 512MiB or 8GiB, got " + quote_for_message(max_memory));
            opt.max_memory = static_cast<uint64_t>(bytes);
        }
        auto runs = run_scenario(sc, opt);
        std::string text;
        if (format == "json")
            text = report_json(sc, runs).dump(2) + "\n";
        else if (format == "csv")
            text = report_csv(runs);
        else if (format == "perf") {
            std::string warning;
            text = report_perf(sc, runs, warning);
            if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
        }
        else
            text = report_table(sc, runs);
        if (out_path.empty()) {
            std::fwrite(text.data(), 1, text.size(), stdout);  // checked in main()
        } else {
            std::FILE* f = std::fopen(out_path.c_str(), "w");
            if (!f) throw InputError(out_path, "", "cannot open the output file for writing");
            std::fwrite(text.data(), 1, text.size(), f);
            close_written(f, out_path, "the output file");
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

int main(int argc, char** argv) {
    const int rc = wakesim_main(argc, argv);
    // stdout is buffered: a full disk or a closed pipe shows only at the last flush.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        if (rc == 0)
            std::fprintf(stderr, "wakesim: error: <stdout>: /: cannot write the output: %s\n",
                         errno ? std::strerror(errno) : "an earlier write failed");
        return rc == 0 ? 2 : rc;
    }
    return rc;
}
