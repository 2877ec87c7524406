// wakesim command line: run, explain, validate, calibrate, list, topo. Thin: everything lives in the libraries.
#include <CLI/CLI.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "policies/registry.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "experiment/check.h"
#include "experiment/compare.h"
#include "experiment/report.h"
#include "experiment/rtapp_import.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/sweep.h"
#include "experiment/plot.h"
#include "experiment/calibrate.h"
#include "experiment/validate.h"
#include "kernel/features.h"
#include "metrics/metric_format.h"
#include "sim/wake_explain.h"
#include "workloads/workloads.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

using namespace wakesim;

namespace {

// Each parameter as a scenario's "machine": {"profile": {...}} takes it ("syscall": "100ns"), its
// meaning and its source.
void print_profile(const MachineProfile& p, const char* indent) {
    for (const auto& l : p.describe()) {
        const std::string typed = "\"" + l.key + "\": " + l.typed;
        std::printf("%s%-34s %s\n%s%-34s source: %s\n", indent, typed.c_str(), l.help.c_str(), indent, "", l.source.c_str());
    }
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

int list_cmd(const std::string& what, bool markdown, bool verbose) {
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
        // Every file is read before anything is printed; each bad one is a line of its own.
        std::vector<MachineFile> all;
        InputErrorCollector errors;
        for (const auto& name : machine_names()) errors.attempt([&] { all.push_back(load_machine_file(machine_path(name))); });
        errors.finish();
        std::printf("machine files in %s (docs/machines.md):\n", machines_dir().c_str());
        for (const MachineFile& m : all) {
            const std::string& name = m.profile.name;
            if (!verbose) {  // one line each; -v: the profile too
                std::printf("%s: %s (%d CPUs)\n", name.c_str(), m.topo.description().c_str(), m.topo.nr_cpus());
                continue;
            }
            std::printf("%s: %s (%d CPUs)\n  profile source: %s\n", name.c_str(), m.topo.description().c_str(),
                        m.topo.nr_cpus(), m.profile.source.c_str());
            print_profile(m.profile, "    ");
        }
    } else if (what == "features" && markdown) {
        std::fputs(features_markdown().c_str(), stdout);
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
        const std::string hint = machine_name_hint(arg);
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

// Checked before any run, so that a long set of runs is not lost to a path it cannot write: an
// existing file only with --force, and a file that can be created or written.
void refuse_overwrite(const std::string& path, bool force) {
    if (path.empty()) return;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (fs::exists(st)) {
        if (fs::is_directory(st)) throw InputError(path, "", "is a directory; expected a file to write");
        // Only a regular file holds what a user wrote: /dev/null, /dev/stdout or a pipe does not.
        if (!force && fs::is_regular_file(st))
            throw InputError(path, "", "expected a file that does not exist yet; pass --force to overwrite it");
        if (::access(path.c_str(), W_OK) != 0) throw InputError(path, "", "cannot be written: " + std::string(std::strerror(errno)));
        return;
    }
    const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    if (!fs::is_directory(dir, ec))
        throw InputError(path, "", "expected a file in an existing directory; " + dir.string() + " is not one");
    if (::access(dir.c_str(), W_OK) != 0)
        throw InputError(path, "", "cannot be created in " + dir.string() + ": " + std::string(std::strerror(errno)));
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

// A report to stdout (its write is checked in main()) or to `path`, failing on a failed write.
void write_output(const std::string& text, const std::string& path) {
    if (path.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return;
    }
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw InputError(path, "", "cannot open the output file for writing");
    std::fwrite(text.data(), 1, text.size(), f);
    close_written(f, path, "the output file");
}

// Progress on stderr for runs and sweeps that take more than 2 seconds: on a terminal, a bar with
// the runs done, elapsed time and ETA, rewritten in place every second; otherwise a plain line
// every 10 seconds. Debian 12 packages no C++ progress-bar library, hence these lines.
class Progress {
public:
    Progress(std::string what, bool quiet) : what_(std::move(what)), quiet_(quiet), tty_(isatty(fileno(stderr)) != 0) {}
    void operator()(size_t done, size_t total) {
        if (quiet_ || total == 0) return;
        const auto now = std::chrono::steady_clock::now();
        const double el = std::chrono::duration<double>(now - start_).count();
        if (!printed_ && (done == total || el < 2.0)) return;  // short: nothing
        if (printed_ && done < total && now - last_ < std::chrono::seconds(tty_ ? 1 : 10)) return;
        last_ = now;
        printed_ = true;
        const double eta = done > 0 ? el / static_cast<double>(done) * static_cast<double>(total - done) : 0;
        std::string bar;
        if (tty_) {
            const size_t width = 30, full = done * width / total;
            bar = "[" + std::string(full, '#') + std::string(width - full, '.') + "] ";
        }
        std::fprintf(stderr, "%swakesim: %s: %s%zu/%zu runs, %.0f s elapsed, ETA %.0f s%s", tty_ ? "\r" : "",
                     what_.c_str(), bar.c_str(), done, total, el, eta, tty_ && done < total ? "" : "\n");
        std::fflush(stderr);
    }

private:
    std::string what_;
    bool quiet_, tty_;
    bool printed_ = false;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// A CLI11 check that a value is one of `choices`, with the near miss suggested (ignoring case):
// `list polices` -> expected one of: policies, ...; got "polices" (did you mean "policies"?).
CLI::Validator one_of(std::vector<std::string> choices) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    return CLI::Validator(
        [choices, list](std::string& v) -> std::string {
            if (std::find(choices.begin(), choices.end(), v) != choices.end()) return {};
            const std::string hint = nearest_name(v, choices);
            return "expected one of: " + list + "; got " + quote_for_message(v) +
                   (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)");
        },
        "{" + list + "}");
}

// A CLI11 check that a value is a whole number in [lo, hi], in wakesim's words:
// `--seeds 0` -> --seeds: expected a whole number from 1 to 10000; got "0".
template <typename T>
CLI::Validator whole_in(T lo, T hi) {
    const bool open = hi == std::numeric_limits<T>::max();
    const std::string range = open ? "of at least " + std::to_string(lo) : "from " + std::to_string(lo) + " to " + std::to_string(hi);
    return CLI::Validator(
        [lo, hi, range](std::string& v) -> std::string {
            T x{};
            const char* end = v.data() + v.size();
            const auto [p, ec] = std::from_chars(v.data(), end, x);
            if (!v.empty() && ec == std::errc() && p == end && x >= lo && x <= hi) return {};
            return "expected a whole number " + range + "; got " + quote_for_message(v);
        },
        open ? "INT >= " + std::to_string(lo) : "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

// compare, baseline and check print no `done` column: a run that ended at its time limit, before
// the workload finished, is said once here (`run`'s table marks it "limit").
void warn_cut_short(const std::vector<RunRecord>& runs) {
    size_t cut = 0;
    for (const auto& r : runs) cut += !r.result.completed && !r.result.stuck;  // stuck runs were named already
    if (cut > 0)
        std::fprintf(stderr,
                     "wakesim: warning: %zu of %zu runs ended at the time limit (run.duration) before the workload "
                     "finished: their figures cover that time only\n",
                     cut, runs.size());
}

// The deepest subcommand the command line selected (the app itself when none).
const CLI::App* selected_command(const CLI::App& app) {
    const CLI::App* at = &app;
    for (bool deeper = true; deeper;) {
        deeper = false;
        for (const CLI::App* sub : at->get_subcommands()) {
            at = sub;
            deeper = true;
            break;
        }
    }
    return at;
}

// CLI11's own message as one line in wakesim's words: an unknown option is named with the
// nearest option of its subcommand ("--seed 3" -> did you mean "--seeds"?); the rest keep
// CLI11's text, on one line.
std::string usage_error_text(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
    std::string text = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
        const CLI::App* cmd = selected_command(app);
        const std::string where = cmd == &app ? std::string("wakesim") : "wakesim " + cmd->get_name();
        std::vector<std::string> names;
        for (const CLI::App* a = cmd; a != nullptr; a = a->get_parent())
            for (const CLI::Option* o : a->get_options()) {
                for (const auto& l : o->get_lnames()) names.push_back("--" + l);
                for (const auto& sn : o->get_snames()) names.push_back("-" + sn);
            }
        for (int i = 1; i < argc; ++i) {
            std::string arg = argv[i];
            if (arg.size() < 2 || arg[0] != '-' || arg == "--") continue;
            if (const auto eq = arg.find('='); eq != std::string::npos) arg.resize(eq);
            if (std::find(names.begin(), names.end(), arg) != names.end()) continue;
            std::vector<std::string> longs;
            for (const auto& n : names)
                if (n.rfind("--", 0) == 0) longs.push_back(n);
            const std::string hint = nearest_name(arg, longs);
            return "unknown option " + quote_for_message(arg) + " for " + where +
                   (hint.empty() ? "; see " + where + " --help" : "; did you mean " + quote_for_message(hint) + "?");
        }
        // Words beyond the command's positionals (a second scenario file, a stray value).
        if (const auto colon = text.find(": "); colon != std::string::npos) {
            std::string words;
            std::istringstream in(text.substr(colon + 2));
            for (std::string w; in >> w;) words += (words.empty() ? "" : " ") + quote_for_message(w);
            return where + ": expected no more arguments; got " + words + "; see " + where + " --help";
        }
    }
    // An option given more often than it takes values: "--y: At Most 1 required but received 2".
    static constexpr std::string_view kAtMostOnce = ": At Most 1 required but received ";
    if (const auto at = text.find(kAtMostOnce); at != std::string::npos)
        return text.substr(0, at) + ": expected once; given " + text.substr(at + kAtMostOnce.size()) + " times";
    // A missing positional or subcommand: say which command wants what, and where the help is.
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        const CLI::App* cmd = selected_command(app);
        std::string where;
        for (const CLI::App* a = cmd; a != nullptr && a != &app; a = a->get_parent())
            where = a->get_name() + (where.empty() ? "" : " ") + where;
        const std::string help = "; see wakesim " + (where.empty() ? "" : where + " ") + "--help";
        const std::string lead = where.empty() ? "" : where + ": ";
        if (text == "A subcommand is required") {
            std::string subs;
            std::vector<std::string> names;
            for (const CLI::App* sub : cmd->get_subcommands({})) {
                subs += (subs.empty() ? "" : ", ") + sub->get_name();
                names.push_back(sub->get_name());
            }
            // The word where the subcommand should be: after the command's own name (or first).
            int at = 1;
            for (int i = 1; i < argc && cmd != &app; ++i)
                if (cmd->get_name() == argv[i]) {
                    at = i + 1;
                    break;
                }
            if (at < argc && argv[at][0] != '-') {
                const std::string hint = nearest_name(argv[at], names);
                return lead + "expected a subcommand, one of: " + subs + "; got " + quote_for_message(argv[at]) +
                       (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)") + help;
            }
            return lead + "expected a subcommand (" + subs + ")" + help;
        }
        if (const auto at = text.find(" is required"); at != std::string::npos && at + 12 == text.size()) {
            const std::string name = text.substr(0, at);
            for (const CLI::Option* o : cmd->get_options())
                if (o->get_name() == name && o->get_lnames().empty() && o->get_snames().empty())
                    return lead + "missing " + name + ": " + o->get_description() + help;
        }
    }
    // A positional's name is CLI11's prefix: `list polices` reads better as "list: ...".
    if (text.rfind("what: ", 0) == 0) text = "list: " + text.substr(6);
    for (char& c : text)
        if (c == '\n') c = ' ';
    return text;
}

// `wakesim explain`: the decision path of one select_task_rq call, and what followed it.
struct ExplainArgs {
    std::string case_name, policy, wakee, after;
    uint64_t wakeup = 1;
    bool seed_given = false;
    int64_t seed = 0;
};

int explain_command(const Scenario& sc, const ExplainArgs& a) {
    const CaseSpec* c = a.case_name.empty() ? &sc.cases.front() : &scenario_case(sc, a.case_name);
    const Policy* p = a.policy.empty() ? &sc.policies.front() : &scenario_policy(sc, a.policy);
    check_memory_budget(sc, *c, 1, 0);  // the default budget, as `run` checks it
    RunSpec spec =
        make_run_spec(sc, *c, *p, a.seed_given ? static_cast<uint64_t>(a.seed) : sc.seeds.front());
    Time after = 0;
    if (!a.after.empty()) {
        try {
            after = parse_duration_ns(a.after);
        } catch (const std::exception& e) {
            throw std::runtime_error(std::string("--after: ") + e.what());
        }
        if (after < 0) throw std::runtime_error("--after: expected a time of 0 or more, got " + quote_for_message(a.after));
    }
    // Which select_task_rq call: counted directly, or found by a first run when the
    // wakeups are filtered (runs are deterministic, so the second run meets the same call).
    uint64_t call = a.wakeup, skipped = 0;
    if (!a.wakee.empty() || after > 0) {
        WakeFinder find(a.wakee, after, a.wakeup);
        RunSpec first = spec;
        first.find = &find;
        run_case(sc, *c, *p, first);
        if (!find.found()) {
            std::string wanted = a.wakee.empty() ? std::string("wakeups")
                                                : "wakeups of " + quote_for_message(a.wakee);
            if (after > 0) wanted += " at or after " + format_duration(after);
            if (find.matches() > 0)
                throw std::runtime_error(
                    "--wakeup: expected at most " + std::to_string(find.matches()) + " (the " + wanted +
                    " in this run that went through select_task_rq" +
                    (find.skipped() ? "; " + std::to_string(find.skipped()) +
                                          " more needed no placement: ttwu_runnable(), the wakee still on its runqueue"
                                    : std::string()) +
                    "), got " + std::to_string(a.wakeup));
            std::string names;
            const auto& woken = find.woken();
            for (size_t i = 0; i < woken.size() && i < 8; ++i) names += (i ? ", " : "") + quote_for_message(woken[i]);
            if (woken.size() > 8) names += " and " + std::to_string(woken.size() - 8) + " more";
            const std::string hint = a.wakee.empty() ? std::string() : nearest_name(a.wakee, woken);
            throw std::runtime_error(
                std::string(a.wakee.empty() ? "--after" : "--wakee") + ": no " + wanted + " in this run" +
                (woken.empty() ? std::string(" (no task is woken then)")
                               : "; tasks woken: " + names +
                                     (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)")));
        }
        call = find.found();
        skipped = find.skipped();
    }
    WakeExplain ex(true);
    spec.explain = &ex;
    spec.explain_wakeup = call;
    RunResult r = run_case(sc, *c, *p, spec);
    if (!ex.captured() && r.select_calls == 0)
        throw std::runtime_error("explain: this run places no wakeup (no select_task_rq call): nothing to explain");
    if (!ex.captured())
        throw std::runtime_error("--wakeup: expected at most " + std::to_string(r.select_calls) +
                                 " (the select_task_rq calls this run makes), got " + std::to_string(a.wakeup));
    const Time at = ex.at();
    std::printf("wakeup #%llu at %lld.%09lld s  case=%s policy=%s seed=%llu\n", static_cast<unsigned long long>(call),
                static_cast<long long>(at / 1000000000), static_cast<long long>(at % 1000000000), c->name.c_str(),
                p->name.c_str(), static_cast<unsigned long long>(spec.seed));
    if (skipped)
        std::printf("  (%llu wakeup%s before it needed no placement and %s not counted: ttwu_runnable(), the wakee "
                    "still on its runqueue, delayed or not yet asleep)\n",
                    static_cast<unsigned long long>(skipped), skipped == 1 ? "" : "s", skipped == 1 ? "is" : "are");
    for (const auto& l : ex.lines()) std::printf("  %s\n", l.c_str());
    return 0;
}

}  // namespace

// The command; main() adds the check that what it printed was written.
static int wakesim_main(int argc, char** argv) {
    CLI::App app{"wakesim: a deterministic simulator of Linux task-wakeup placement"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "wakesim " + wakesim_version() + " (models Linux v6.19 fair-class wake placement)");

    auto* run = app.add_subcommand("run", "run a scenario: compare its policies over its cases and seeds");
    std::string scenario_path, format = "table", trace_path, out_path;
    std::vector<std::string> policies, cases;
    int seeds = 0, jobs = 1;
    bool force = false, check = false;
    run->add_option("scenario", scenario_path, "scenario JSON file")->required();
    run->add_option("--policy", policies,
                    "run only these policies (repeatable); a policy of `wakesim list policies` that the scenario lacks "
                    "is added with its default parameters");
    run->add_option("--case", cases, "run only these cases (repeatable)");
    int64_t one_seed = -1;
    auto* seeds_opt = run->add_option("--seeds", seeds, "run seeds 1..N instead of the scenario's seeds")->check(whole_in(1, 10000));
    run->add_option("--seed", one_seed, "run only this seed")
        ->check(whole_in(int64_t{0}, std::numeric_limits<int64_t>::max()))
        ->excludes(seeds_opt);
    run->add_option("--format", format,
                    "table, json, csv, csv-long (one row per value: case, machine, policy, seed, metric, cpu, value) "
                    "or perf (perf bench's lines per run)")
        ->check(one_of({"table", "json", "csv", "csv-long", "perf"}));
    run->add_option("--trace", trace_path,
                    "write the sched and power events (one file per run): ftrace text, or Perfetto's protobuf "
                    "for a FILE ending in .perfetto-trace or .pftrace");
    std::string trace_window, trace_format;
    run->add_option("--trace-window", trace_window, "trace only simulated time FROM:TO, e.g. 0ms:10ms");
    run->add_option("--trace-format", trace_format,
                    "ftrace (the kernel's trace file text) or perfetto (Perfetto's protobuf trace); default: "
                    "by the --trace FILE's extension")
        ->check(one_of({"ftrace", "perfetto"}));
    run->add_option("-o,--out", out_path, "write the report to this file instead of stdout");
    run->add_option("-j,--jobs", jobs, "runs in parallel (results are identical for any value)")->check(whole_in(1, 256));
    run->add_flag("--force", force, "overwrite existing output files");
    run->add_flag("--check-invariants", check, "check scheduler invariants at the end of each run");
    std::string max_memory;
    run->add_option("--max-memory", max_memory,
                    "refuse runs whose estimated memory (all parallel runs together) is over SIZE, e.g. 8GiB "
                    "(default: half of this machine's RAM)");
    bool run_quiet = false;
    run->add_flag("-q,--quiet", run_quiet,
                  "no progress lines on stderr (shown for runs longer than 2 s) and no warning for sets of runs "
                  "estimated to take long; warnings about the results (a stuck run, runs too short, an empty trace) "
                  "still show");

    auto* compare = app.add_subcommand(
        "compare", "compare each policy with a baseline policy over seeds: mean, sd, 95% CI, Δ% and Welch's t-test");
    std::string baseline_policy;
    std::vector<std::string> cmp_metrics;
    compare->add_option("scenario", scenario_path, "scenario JSON file")->required();
    compare->add_option("--policy", policies,
                        "run only these policies (repeatable); a policy of `wakesim list policies` that the scenario "
                        "lacks is added with its default parameters");
    compare->add_option("--case", cases, "run only these cases (repeatable)");
    auto* cmp_seeds_opt =
        compare->add_option("--seeds", seeds, "run seeds 1..N instead of the scenario's seeds")->check(whole_in(1, 10000));
    compare->add_option("--seed", one_seed, "run only this seed")
        ->check(whole_in(int64_t{0}, std::numeric_limits<int64_t>::max()))
        ->excludes(cmp_seeds_opt);
    compare->add_option("--baseline-policy", baseline_policy, "the policy the others are compared with (default: the first)");
    compare->add_option("--metric", cmp_metrics, "compare these metrics (repeatable; default: the summarised ones)");
    compare->add_option("--format", format, "table or json")->check(one_of({"table", "json"}));
    compare->add_flag("-q,--quiet", run_quiet, "no progress lines on stderr");
    compare->add_option("-j,--jobs", jobs, "runs in parallel (results are identical for any value)")->check(whole_in(1, 256));

    auto* sweep = app.add_subcommand("sweep", "run a sweep file's points x cases x policies x seeds into JSON Lines");
    std::string sweep_path, shard = "1/1";
    bool resume = false, quiet = false;
    sweep->add_option("sweep", sweep_path, "sweep JSON file (docs/sweeps.md)")->required();
    sweep->add_option("-o,--out", out_path, "the JSON Lines output, one line per finished run")->required();
    sweep->add_option("-j,--jobs", jobs, "runs in parallel (the output is identical for any value)")->check(whole_in(1, 256));
    sweep->add_flag("--resume", resume, "keep the runs already in the output and run the others");
    sweep->add_flag("--force", force, "overwrite an existing output");
    sweep->add_option("--shard", shard, "run only shard K of N (runs numbered i with i mod N = K-1)");
    sweep->add_flag("-q,--quiet", quiet, "no progress lines on stderr");

    auto* merge = app.add_subcommand("merge", "join the JSON Lines outputs of one sweep's shards, in run order");
    std::vector<std::string> merge_files;
    merge->add_option("files", merge_files, "shard outputs")->required();
    merge->add_option("-o,--out", out_path, "write to this file instead of stdout");
    merge->add_flag("--force", force, "overwrite an existing output");

    auto* plot = app.add_subcommand("plot", "plot a metric against a sweep axis with 95% CI error bars (gnuplot)");
    std::vector<std::string> plot_files;
    PlotOptions popt;
    bool plot_script_only = false;
    plot->add_option("files", plot_files, "sweep outputs (JSON Lines)")->required();
    plot->add_option("--x", popt.x, "the axis on the x axis: its JSON pointer or last part")->required();
    plot->add_option("--y", popt.y, "the metric on the y axis")->required();
    plot->add_option("--by", popt.by, "one line per: policy (default), case, or another axis");
    plot->add_option("--case", popt.only_case, "plot the runs of this case only");
    plot->add_option("--policy", popt.only_policy, "plot the runs of this policy only");
    plot->add_option("-o,--out", popt.out, "the figure: FILE.svg or FILE.png")->required();
    plot->add_flag("--script", plot_script_only, "print the gnuplot script instead of running gnuplot");
    plot->add_flag("--force", force, "overwrite an existing figure");

    auto* baseline = app.add_subcommand("baseline", "record a scenario's metrics per seed for `wakesim check`");
    baseline->add_option("scenario", scenario_path, "scenario JSON file")->required();
    baseline->add_option("-o,--out", out_path, "the baseline file")->required();
    baseline->add_option("--seeds", seeds, "run seeds 1..N instead of the scenario's seeds")->check(whole_in(1, 10000));
    baseline->add_option("-j,--jobs", jobs, "runs in parallel (results are identical for any value)")->check(whole_in(1, 256));
    baseline->add_flag("--force", force, "overwrite an existing baseline");
    baseline->add_flag("-q,--quiet", run_quiet, "no progress lines on stderr");

    auto* check_cmd = app.add_subcommand(
        "check", "run a scenario and compare it with a baseline: exit 1 on a significant regression beyond tolerance");
    std::string baseline_path;
    std::vector<std::string> tolerances;
    check_cmd->add_option("scenario", scenario_path, "scenario JSON file")->required();
    check_cmd->add_option("--baseline", baseline_path, "a file written by `wakesim baseline`")->required();
    check_cmd->add_option("--tolerance", tolerances, "METRIC=PCT: allowed worsening in percent (default 5; repeatable)");
    check_cmd->add_flag("-q,--quiet", run_quiet, "no progress lines on stderr");
    check_cmd->add_option("-j,--jobs", jobs, "runs in parallel (results are identical for any value)")->check(whole_in(1, 256));

    auto* explain = app.add_subcommand("explain", "print the decision path of one wakeup");
    std::string ex_case, ex_policy;
    uint64_t ex_wakeup = 1;
    int64_t ex_seed = 0;  // a scenario's seeds are integers in [0, 2^63-1]
    explain->add_option("scenario", scenario_path, "scenario JSON file")->required();
    explain->add_option("--case", ex_case, "case name (default: the first)");
    explain->add_option("--policy", ex_policy,
                        "policy label (default: the first); a policy of `wakesim list policies` that the scenario "
                        "lacks, with its default parameters");
    std::string ex_wakee, ex_after;
    explain->add_option("--wakeup", ex_wakeup,
                        "which wakeup, counting select_task_rq calls from 1 (those that --wakee and --after select)")
        ->check(whole_in(uint64_t{1}, uint64_t{1000000000000}));
    explain->add_option("--wakee", ex_wakee, "count only wakeups of the task of this name (as the trace names it)");
    explain->add_option("--after", ex_after, "count only wakeups at or after this simulated time, e.g. 5ms (default 0)");
    auto* ex_seed_opt = explain->add_option("--seed", ex_seed, "seed (default: the scenario's first)")
                            ->check(whole_in(int64_t{0}, std::numeric_limits<int64_t>::max()));

    auto* validate = app.add_subcommand(
        "validate", "run the validation scenarios and compare their ratios with the published ones (exit 1 if a row fails)");
    std::vector<std::string> val_paths;
    std::string val_format = "table";
    int val_jobs = 1;
    validate->add_option("paths", val_paths,
                         "validation scenario files or directories (default: the installed share/wakesim/scenarios/"
                         "validation, else the source tree's scenarios/validation)");
    validate->add_option("--format", val_format, "table, json or markdown (docs/validation.md's table)")
        ->check(one_of({"table", "json", "markdown"}));
    validate->add_option("-j,--jobs,--threads", val_jobs, "runs in parallel (results are identical for any value)")
        ->check(whole_in(1, 256));
    validate->add_option("--seeds", seeds,
                         "run seeds 1..N of every validation scenario instead of its own (does a verdict hold over more?)")
        ->check(whole_in(1, 10000));

    auto* calib = app.add_subcommand(
        "calibrate", "fit a machine's profile parameters to measurements of that machine (weighted least squares)");
    std::string calib_file, calib_out, calib_format = "table";
    int calib_jobs = 1;
    bool calib_force = false;
    calib->add_option("file", calib_file, "calibration file: machine, measurements, parameters with bounds (docs/calibrate.md)")
        ->required();
    calib->add_option("-o,--out", calib_out, "write the refitted machine file here (its name is the new machine's)");
    calib->add_flag("--force", calib_force, "overwrite an existing machine file");
    calib->add_option("--format", calib_format, "table or json")->check(one_of({"table", "json"}));
    calib->add_option("-j,--jobs,--threads", calib_jobs, "runs in parallel (results are identical for any value)")
        ->check(whole_in(1, 256));

    auto* list = app.add_subcommand("list", "list policies, workloads, machines, scheduler features or metrics");
    std::string what, list_table;
    bool list_verbose = false, list_markdown = false;
    list->add_option("what", what, "policies | workloads | machines | features | metrics")
        ->required()
        ->check(one_of({"policies", "workloads", "machines", "features", "metrics"}));
    list->add_option("table", list_table, "workloads --markdown: only this table (pipe, program.task, hogs, ...)");
    list->add_flag("-v,--verbose", list_verbose, "workloads: every parameter table; machines: every profile value and its source");
    list->add_flag("--markdown", list_markdown, "the Markdown that docs/ carries (policies, workloads, features, metrics)");

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

    auto* import_cmd = app.add_subcommand("import", "turn another tool's workload description into a scenario");
    import_cmd->require_subcommand(1);
    auto* rtapp = import_cmd->add_subcommand("rtapp", "an rt-app JSON workload -> a scenario with a program workload");
    std::string rtapp_file, rtapp_out, rtapp_machine = "altra-80";
    bool rtapp_force = false;
    rtapp->add_option("file", rtapp_file, "rt-app JSON file")->required();
    rtapp->add_option("-o,--out", rtapp_out, "write the scenario to this file instead of stdout");
    rtapp->add_option("--machine", rtapp_machine, "the scenario's machine (default altra-80)");
    rtapp->add_flag("--force", rtapp_force, "overwrite an existing output file");

    std::string machines;
    for (auto* sub : {run, compare, sweep, baseline, check_cmd, explain, validate, calib, list, show})
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
        std::fprintf(stderr, "wakesim: error: %s\n", usage_error_text(app, e, argc, argv).c_str());
        return 2;
    }

    try {
        if (!machines.empty()) set_machines_dir(machines);
        if (*list) {
            if (what == "workloads") return list_workloads(list_verbose, list_markdown, list_table);
            if (!list_table.empty()) throw std::runtime_error("a table name goes with \"list workloads --markdown\"");
            if (list_verbose && what != "machines")
                throw std::runtime_error("-v goes with \"list workloads\" or \"list machines\"");
            if (list_markdown && what != "policies" && what != "metrics" && what != "features")
                throw std::runtime_error(
                    "--markdown goes with \"list policies\", \"list workloads\", \"list features\" or \"list metrics\"");
            return list_cmd(what, list_markdown, list_verbose);
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
                        pj.push_back({{"name", l.name}, {"value", l.value}, {"unit", l.unit}, {"help", l.help}, {"source", l.source},
                                      {"key", l.key}, {"typed", nlohmann::json::parse(l.typed)}});
                    j["profile"] = pj;
                }
                std::cout << j.dump(2) << "\n";
            } else {
                std::printf("%s: %s\n%d CPUs, %d NUMA node%s, SMT %s, clusters %s, asym capacity %s\n", t.name().c_str(),
                            t.description().c_str(), t.nr_cpus(), t.nr_nodes(), t.nr_nodes() == 1 ? "" : "s", t.smt_present() ? "yes" : "no",
                            t.has_clusters() ? "yes" : "no", t.asym_capacity() ? "yes" : "no");
                std::cout << sd.describe(t);
                if (shown.profile) {
                    std::printf("profile %s (source: %s)\n", shown.profile->name.c_str(), shown.profile->source.c_str());
                    print_profile(*shown.profile, "  ");
                }
            }
            return 0;
        }
        if (*rtapp) {
            refuse_overwrite(rtapp_out, rtapp_force);
            // A machine file as given here (from the current directory) becomes a path from the
            // written scenario's folder, where `run` resolves it; a name must be a machine.
            std::string machine = rtapp_machine;
            if (!is_machine_name(machine)) {
                namespace fs = std::filesystem;
                if (!fs::is_regular_file(machine)) {
                    const std::string hint = machine_name_hint(machine);
                    throw InputError("--machine", "", "expected a machine (" + machine_names_text() +
                                                          ") or a machine file, got " + quote_for_message(machine) +
                                                          (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
                }
                if (!rtapp_out.empty()) {
                    const fs::path from = fs::absolute(rtapp_out).parent_path();
                    machine = fs::absolute(machine).lexically_normal().lexically_relative(from).string();
                }
            }
            const std::string text = import_rtapp(rtapp_file, machine).dump(2) + "\n";
            write_output(text, rtapp_out);
            return 0;
        }
        if (*import) {
            Topology t = import_sysfs(import_dir);
            std::cout << t.to_json().dump(2) << "\n";
            return 0;
        }
        if (*calib) {
            refuse_overwrite(calib_out, calib_force);
            const CalibSpec spec = load_calibration(calib_file);
            // --force overwrites an earlier refit, never the files the fit reads.
            if (!calib_out.empty()) {
                std::error_code ec;
                const auto out = std::filesystem::weakly_canonical(calib_out, ec);
                for (const std::string& in : {calib_file, spec.machine_path})
                    if (out == std::filesystem::weakly_canonical(in, ec))
                        throw InputError(calib_out, "", "expected another file than " + quote_for_message(in) +
                                                            ", which this calibration reads");
            }
            const CalibResult result = calibrate(spec, calib_jobs);
            const std::string text = calib_format == "json" ? calibration_json(result).dump(2) + "\n" : calibration_table(result);
            std::fwrite(text.data(), 1, text.size(), stdout);  // checked in main()
            if (!calib_out.empty()) write_output(calibrated_machine(result, calib_out).dump(2) + "\n", calib_out);
            return 0;
        }
        if (*validate) {
            std::vector<Scenario> scenarios = load_validation_scenarios(validation_files(val_paths));
            if (seeds > 0)
                for (Scenario& sc : scenarios) sc.seeds = seeds_up_to(seeds);
            const auto results = run_validation(scenarios, val_jobs);
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
        if (*sweep) {
            SweepOptions so;
            parse_shard(shard, so.shard_k, so.shard_n);
            so.jobs = jobs;
            so.out = out_path;
            if (resume && force)
                throw InputError("--resume", "", "expected --resume or --force, not both: --resume keeps the output's runs, "
                                                 "--force discards them");
            so.resume = resume;
            so.force = force;
            const Sweep sw = load_sweep(sweep_path);
            Progress progress("sweep " + sw.name, quiet);
            const SweepTally t = run_sweep(sw, so, std::ref(progress));
            if (!quiet)
                std::fprintf(stderr, "wakesim: sweep %s: %zu runs in this shard, %zu kept from the output, %zu run\n",
                             sw.name.c_str(), t.total, t.kept, t.ran);
            return 0;
        }
        if (*plot) {
            const std::string script = plot_script(plot_files, popt);
            if (plot_script_only) {  // writes no figure: an existing one is no obstacle
                std::fwrite(script.data(), 1, script.size(), stdout);  // checked in main()
                return 0;
            }
            refuse_overwrite(popt.out, force);
            if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
                throw std::runtime_error("plot: gnuplot not found; install Debian's gnuplot-nox (scripts/install-deps.sh)");
            std::FILE* gp = ::popen("gnuplot", "w");
            if (!gp) throw std::runtime_error("plot: cannot start gnuplot");
            std::fwrite(script.data(), 1, script.size(), gp);
            const int status = ::pclose(gp);
            if (status != 0 || !std::filesystem::exists(popt.out))
                throw std::runtime_error("plot: gnuplot failed (" +
                                         (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                                            : std::string("killed or not started")) +
                                         "; its message is above)");
            return 0;
        }
        if (*merge) {
            refuse_overwrite(out_path, force);
            size_t missing = 0;
            const std::string text = merge_sweep_outputs(merge_files, &missing);
            write_output(text, out_path);
            if (missing > 0)  // a shard's output not given, or a shard not finished: the result is partial
                std::fprintf(stderr, "wakesim: merge: warning: %zu of the sweep's runs are in none of the files (a shard missing or unfinished?)\n",
                             missing);
            return 0;
        }
        std::vector<std::string> wanted = policies;  // a registered policy the file lacks is added
        if (!ex_policy.empty()) wanted.push_back(ex_policy);
        Scenario sc = *check_cmd ? load_scenario(scenario_path) : load_scenario(scenario_path, wanted);
        if (*check_cmd) {
            CheckOptions co;
            for (const auto& t : tolerances) co.tolerances.push_back(parse_tolerance(t));
            const nlohmann::json b = load_json_file(baseline_path);
            sc.seeds = baseline_seeds(b, baseline_path, sc);
            RunOptions opt;
            opt.progress = Progress(sc.name, run_quiet);
            opt.quiet = run_quiet;  // the run-time estimate too
            opt.jobs = jobs;
            const auto runs = run_scenario(sc, opt);
            warn_cut_short(runs);
            const CheckResult result = check_against(sc, runs, b, baseline_path, co);
            const std::string text = check_report(sc, baseline_path, result);
            std::fwrite(text.data(), 1, text.size(), stdout);  // checked in main()
            for (const auto& r : result.rows)
                if (r.regression) return 1;
            return 0;
        }
        if (seeds > 0) sc.seeds = seeds_up_to(seeds);
        if (one_seed >= 0) sc.seeds = {static_cast<uint64_t>(one_seed)};
        if (*baseline) {
            refuse_overwrite(out_path, force);
            RunOptions opt;
            opt.progress = Progress(sc.name, run_quiet);
            opt.quiet = run_quiet;  // the run-time estimate too
            opt.jobs = jobs;
            const auto runs = run_scenario(sc, opt);
            warn_cut_short(runs);
            const std::string text = baseline_text(baseline_json(sc, runs));
            std::FILE* f = std::fopen(out_path.c_str(), "w");
            if (!f) throw InputError(out_path, "", "cannot open the baseline file for writing");
            std::fwrite(text.data(), 1, text.size(), f);
            close_written(f, out_path, "the baseline file");
            return 0;
        }
        if (*compare) {
            CompareOptions copt;
            copt.baseline_policy = baseline_policy;
            for (const auto& name : cmp_metrics) {
                const MetricDef* d = find_metric(name);
                if (!d || (d->type != MetricType::integer && d->type != MetricType::real)) {
                    std::vector<std::string> names;
                    for (const MetricDef& x : metric_table())
                        if (x.type == MetricType::integer || x.type == MetricType::real) names.push_back(x.name);
                    const std::string hint = nearest_name(name, names);
                    throw std::runtime_error("--metric: expected a numeric metric of `wakesim list metrics`, got " +
                                             quote_for_message(name) +
                                             (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
                }
                if (std::find(copt.metrics.begin(), copt.metrics.end(), d->id) == copt.metrics.end())
                    copt.metrics.push_back(d->id);  // a metric named twice is one row
            }
            RunOptions opt;
            opt.progress = Progress(sc.name, run_quiet);
            opt.quiet = run_quiet;
            opt.cases = cases;
            opt.policies = policies;
            opt.jobs = jobs;
            const auto runs = run_scenario(sc, opt);
            warn_cut_short(runs);
            const Comparison cmp = compare_runs(sc, runs, copt);
            const std::string text =
                format == "json" ? comparison_json(sc, cmp).dump(2) + "\n" : comparison_table(sc, cmp);
            std::fwrite(text.data(), 1, text.size(), stdout);  // checked in main()
            return 0;
        }
        if (*explain) {
            // An empty filter (an unset shell variable) would silently explain another wakeup.
            for (const char* name : {"--wakee", "--after"})
                if (const auto* o = explain->get_option(name); o->count() > 0 && o->as<std::string>().empty())
                    throw InputError(name, "", std::string("expected ") + (name[2] == 'w' ? "a task name" : "a time such as 5ms") +
                                                   ", got an empty string");
            return explain_command(sc, {ex_case, ex_policy, ex_wakee, ex_after, ex_wakeup, ex_seed_opt->count() > 0, ex_seed});
        }
        // An empty name (an unset shell variable) would silently mean "none".
        for (const auto* o : {run->get_option("--trace"), run->get_option("-o"), run->get_option("--trace-window")})
            if (o->count() > 0 && o->as<std::string>().empty())
                throw InputError(o->get_name(), "", "expected a file name or window, got an empty string");
        refuse_overwrite(out_path, force);
        refuse_overwrite(trace_path, force);
        RunOptions opt;
        opt.progress = Progress(sc.name, run_quiet);
        opt.cases = cases;
        opt.policies = policies;
        opt.jobs = jobs;
        opt.trace_path = trace_path;
        opt.report_path = out_path;
        if (!trace_window.empty()) {
            if (trace_path.empty()) throw std::runtime_error("--trace-window goes with --trace");
            opt.trace_window = parse_trace_window(trace_window);
        }
        if (!trace_format.empty() && trace_path.empty()) throw std::runtime_error("--trace-format goes with --trace");
        opt.trace_format = trace_format == "perfetto" ? TraceFormat::perfetto
                           : trace_format == "ftrace" ? TraceFormat::ftrace
                                                      : trace_format_for_path(trace_path.c_str());
        opt.check_invariants = check;
        opt.force = force;
        opt.quiet = run_quiet;
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
            text = report_csv(sc, runs);
        else if (format == "csv-long")
            text = report_csv_long(sc, runs);
        else if (format == "perf") {
            std::string warning;
            text = report_perf(sc, runs, warning);
            if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
        }
        else
            text = report_table(sc, runs);
        write_output(text, out_path);
        return 0;
    } catch (const InputError& e) {
        // One line per error: several when a file has several mistakes (InputErrors).
        const std::string text = e.what();
        for (size_t at = 0; at <= text.size();) {
            const size_t end = std::min(text.find('\n', at), text.size());
            std::fprintf(stderr, "wakesim: error: %s\n", text.substr(at, end - at).c_str());
            at = end + 1;
        }
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
    // A report of up to 64 KiB reaches a file or pipe in one write at exit, so that a failed
    // write is seen there with its errno ("No space left on device").
    static char out_buf[1 << 16];
    if (!isatty(fileno(stdout))) std::setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
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
