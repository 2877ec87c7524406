#include "experiment/runner.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <mutex>
#include <thread>

#include "experiment/estimate.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "sim/cpu_exec.h"

namespace wakesim {

void check_memory_budget(const Scenario& sc, const CaseSpec& c, int parallel, uint64_t budget) {
    const bool given = budget != 0;
    if (!given) budget = default_memory_budget();
    const RunEstimate e = estimate_run(c.workload, c.topo ? c.topo->nr_cpus() : 1, 0, 0);
    const uint64_t need = e.memory_bytes * static_cast<uint64_t>(std::max(parallel, 1));
    if (need <= budget) return;
    std::string what = "about " + format_bytes(e.memory_bytes) + " (" + std::to_string(e.tasks) + " tasks, " +
                       std::to_string(e.channels) + " channels)";
    if (parallel > 1) what += " x " + std::to_string(parallel) + " parallel runs";
    throw InputError(sc.file, "/workload",
                     "expected a workload within the memory budget of " + format_bytes(budget) +
                         (given ? " (--max-memory)" : " (half of this machine's RAM)") + "; case " +
                         quote_for_message(c.name) + " needs " + what +
                         "; raise the limit with --max-memory SIZE (e.g. 64GiB), use fewer --jobs, or shrink the workload");
}

RunSpec make_run_spec(const Scenario& sc, const CaseSpec& c, const Policy& p, uint64_t seed) {
    (void)sc;
    RunSpec r;
    r.topo = c.topo.get();
    r.domains = c.domains.get();
    r.profile = c.profile;
    r.sched = c.sched;
    r.policy = p;
    r.workload = c.workload;
    r.seed = seed;
    r.warmup_ops = c.warmup_ops;
    r.warmup_time = c.warmup_time;
    r.stop_ops = c.ops ? (c.warmup_time ? c.ops : c.warmup_ops + c.ops) : 0;
    r.max_time = c.max_time;
    return r;
}

RunResult run_case(const Scenario& sc, const CaseSpec& c, const Policy& p, const RunSpec& spec) {
    try {
        RunResult r = run_simulation(spec);
        // A workload that finished its ops without simulated time passing (every cost it pays is
        // 0) has no per-op figure: 0 us/op and 0 ops/s would be reported as if measured.
        if (r.completed && r.metrics.integer(Metric::ops) > 0 && r.metrics.integer(Metric::sim_time_ns) == 0)
            throw TimeStandsStill(0, "the workload's ops took no simulated time");
        return r;
    } catch (const TimeStandsStill& e) {
        // The input is at fault: the costs it gave let a workload loop at one instant.
        throw InputError(sc.file, "/machine",
                         "expected machine costs that let simulated time pass; it stood still at " +
                             format_duration(e.at()) + " (" + e.what() + ") in case " + quote_for_message(c.name) +
                             ", policy " + quote_for_message(p.name) + ", seed " + std::to_string(spec.seed));
    }
}

void close_written(std::FILE* f, const std::string& name, const std::string& what) {
    const bool failed_before = std::ferror(f) != 0;
    errno = 0;
    const bool failed_close = std::fclose(f) != 0;
    if (failed_before || failed_close)
        throw InputError(name, "", "cannot write " + what + ": " +
                                       (errno ? std::strerror(errno) : "an earlier write failed"));
}

namespace {

// A name as the file it reaches: symbolic links followed (even to a file not there yet), then
// the absolute path with "." and ".." resolved.
std::filesystem::path file_reached(std::filesystem::path p) {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
        const fs::path target = fs::read_symlink(p, ec);
        if (ec) break;
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    return fs::weakly_canonical(fs::absolute(p, ec), ec);
}

// Whether writing to both names writes one file (a device such as /dev/null loses nothing).
bool same_file(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(a, ec) && !fs::is_regular_file(a, ec)) return false;
    if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
    return a == b || file_reached(a) == file_reached(b);
}

constexpr double kLongRunSeconds = 10;  // estimated wall time above which a set of runs warns

// Whether a --case or --policy filter (empty: all) keeps the name.
bool selected(const std::vector<std::string>& filter, const std::string& name) {
    return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// seesaw's pair_id variant acts only between tasks with the same non-zero pair id: a workload
// without such a pair runs it as plain, which a comparison would report as "no effect".
void warn_unpaired_seesaw(const Scenario& sc, const RunOptions& opt) {
    for (const auto& c : sc.cases) {
        if (!selected(opt.cases, c.name)) continue;
        std::map<uint32_t, int> ids;
        for (const ProgramTask& t : c.workload.tasks)
            if (t.spec.pair_id != 0) ++ids[t.spec.pair_id];
        const bool paired = std::any_of(ids.begin(), ids.end(), [](const auto& kv) { return kv.second > 1; });
        if (paired) continue;
        for (const auto& p : sc.policies) {
            if (!selected(opt.policies, p.name)) continue;
            for (const auto& [key, value] : p.param_texts())
                if (key == "seesaw.variant" && value == "pair_id")
                    std::fprintf(stderr,
                                 "wakesim: warning: case %s, policy %s: seesaw's pair_id variant finds no two tasks with "
                                 "the same pair id in this workload (a program task sets one with \"pair\"), so it acts as plain\n",
                                 quote_for_message(c.name).c_str(), quote_for_message(p.name).c_str());
        }
    }
}

struct Job {
    const CaseSpec* c;
    const Policy* p;
    uint64_t seed;
};

std::string trace_name(const std::string& base, const Job& j, bool many) {
    if (!many) return base;
    std::string suffix = "." + j.c->name + "." + j.p->name + ".s" + std::to_string(j.seed);
    for (auto& ch : suffix)  // case and policy labels may contain them; a NUL would cut the name
        if (ch == '/' || ch == ' ' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '_';
    auto dot = base.rfind('.');
    auto slash = base.rfind('/');
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return base.substr(0, dot) + suffix + base.substr(dot);
    return base + suffix;
}

// The case or policy an option names; where the file declares them, the names it has and the
// nearest when it names none (of those, and of `elsewhere_names`, the names the command
// `elsewhere` prints).
template <class T>
const T& find_named(const Scenario& sc, const std::vector<T>& have, const char* what, const char* key,
                    const std::string& want, const std::vector<std::string>& elsewhere_names = {},
                    const std::string& elsewhere = "") {
    std::vector<std::string> names;
    for (const auto& x : have) {
        if (x.name == want) return x;
        names.push_back(x.name);
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + quote_for_message(n);
    names.insert(names.end(), elsewhere_names.begin(), elsewhere_names.end());
    const std::string hint = nearest_name(want, names);
    throw InputError(sc.file, key,
                     std::string("--") + what + " " + quote_for_message(want) + " names no " + what +
                         " of the scenario" +
                         (elsewhere.empty() ? "; expected one of: " + list
                                            : " nor of `" + elsewhere + "`; expected one of the scenario's (" + list +
                                                  ") or a name that `" + elsewhere + "` prints") +
                         (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
}

}  // namespace

const CaseSpec& scenario_case(const Scenario& sc, const std::string& want) {
    if (!sc.has_cases && want != sc.cases.front().name)
        throw InputError(sc.file, "/",
                         "--case " + quote_for_message(want) +
                             " names no case: the scenario has no \"cases\", so its one case is \"default\"");
    return find_named(sc, sc.cases, "case", "/cases", want);
}

const Policy& scenario_policy(const Scenario& sc, const std::string& want) {
    return find_named(sc, sc.policies, "policy", "/policies", want, policy_names(), "wakesim list policies");
}

std::vector<RunRecord> run_scenario(const Scenario& sc, const RunOptions& opt) {
    for (const auto& w : opt.cases) scenario_case(sc, w);
    for (const auto& w : opt.policies) scenario_policy(sc, w);

    std::vector<Job> jobs;
    for (const auto& c : sc.cases) {
        if (!selected(opt.cases, c.name)) continue;
        for (const auto& p : sc.policies) {
            if (!selected(opt.policies, p.name)) continue;
            for (uint64_t s : sc.seeds) jobs.push_back({&c, &p, s});
        }
    }
    // Two runs must never write one trace file: labels that differ only in what the file name
    // replaces ("a b" and "a_b", or a NUL and what follows) are refused.
    if (!opt.trace_path.empty() && jobs.size() > 1) {
        std::map<std::string, const Job*> seen;
        for (const Job& j : jobs) {
            const std::string name = trace_name(opt.trace_path, j, true);
            auto [it, fresh] = seen.try_emplace(name, &j);
            if (fresh) continue;
            const Job& o = *it->second;
            throw InputError(sc.file, "/cases",
                             "expected case and policy names that give each run its own trace file; case " +
                                 quote_for_message(o.c->name) + " policy " + quote_for_message(o.p->name) + " and case " +
                                 quote_for_message(j.c->name) + " policy " + quote_for_message(j.p->name) +
                                 " would both write " + quote_for_message(name));
        }
    }
    // The report written over a trace (or the reverse) loses one of them, however the two are spelled.
    if (!opt.trace_path.empty() && !opt.report_path.empty())
        for (const Job& j : jobs) {
            const std::string name = trace_name(opt.trace_path, j, jobs.size() > 1);
            if (!same_file(opt.report_path, name)) continue;
            const std::string what = name == opt.trace_path
                                         ? "--trace " + quote_for_message(name)
                                         : "the trace of case " + quote_for_message(j.c->name) + " policy " +
                                               quote_for_message(j.p->name) + " seed " + std::to_string(j.seed) + ", " +
                                               quote_for_message(name) + ",";
            throw InputError("--trace", "", "expected another file than -o's: " + what + " is the file -o names (" +
                                                quote_for_message(opt.report_path) + ")");
        }
    if (!opt.trace_path.empty() && !opt.force)
        for (const Job& j : jobs) {
            const std::string name = trace_name(opt.trace_path, j, jobs.size() > 1);
            std::error_code ec;  // only a regular file holds what a user wrote: /dev/null does not
            if (std::filesystem::is_regular_file(name, ec))
                throw InputError(name, "", "the trace file exists; pass --force to overwrite it");
        }
    const int parallel = std::max(1, std::min<int>(opt.jobs, static_cast<int>(jobs.size())));
    for (const auto& c : sc.cases)
        if (selected(opt.cases, c.name)) check_memory_budget(sc, c, parallel, opt.max_memory);
    warn_unpaired_seesaw(sc, opt);
    // A warning and a progress line when the runs will take long.
    double seconds = 0;
    {
        std::vector<double> by_case;
        for (const auto& c : sc.cases) {
            const uint64_t stop = c.ops ? (c.warmup_time ? c.ops : c.warmup_ops + c.ops) : 0;
            by_case.push_back(estimate_run(c.workload, c.topo ? c.topo->nr_cpus() : 1, stop, c.max_time).seconds);
        }
        for (const Job& j : jobs) seconds += by_case[static_cast<size_t>(j.c - sc.cases.data())];
        seconds /= parallel;
    }
    const bool progress = !opt.quiet && seconds > kLongRunSeconds;
    if (progress)
        std::fprintf(stderr, "wakesim: warning: %zu runs estimated at about %.0f s (%d in parallel); --quiet hides this\n",
                     jobs.size(), seconds, parallel);
    std::atomic<size_t> done{0};
    std::vector<RunRecord> out(jobs.size());
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    std::mutex progress_mu;
    size_t finished = 0;
    auto worker = [&] {
        for (size_t i = next++; i < jobs.size() && !failed; i = next++) {
            try {
                const Job& j = jobs[i];
                RunSpec spec = make_run_spec(sc, *j.c, *j.p, j.seed);
                spec.check_invariants = opt.check_invariants;
                std::FILE* tf = nullptr;
                std::string trace_file;
                if (!opt.trace_path.empty()) {
                    trace_file = trace_name(opt.trace_path, j, jobs.size() > 1);
                    tf = std::fopen(trace_file.c_str(), "wb");
                    if (!tf) throw InputError(trace_file, "", "cannot open the trace file for writing");
                    spec.trace = tf;
                    spec.trace_window = opt.trace_window;
                    spec.trace_format = opt.trace_format;
                }
                RunResult r;
                try {
                    r = run_case(sc, *j.c, *j.p, spec);
                } catch (...) {
                    if (tf) std::fclose(tf);
                    throw;
                }
                // A full disk shows only here: fwrite buffers, and the last flush is fclose's.
                if (tf) close_written(tf, trace_file, "the trace file");
                if (r.stuck) {  // a deadlock in the workload, not a slow run: say who waits for what
                    std::lock_guard<std::mutex> lock(progress_mu);
                    std::fprintf(stderr,
                                 "wakesim: warning: case %s, policy %s, seed %llu: stuck at %.3f ms of simulated "
                                 "time, before the workload finished: %s\n",
                                 quote_for_message(j.c->name).c_str(), quote_for_message(j.p->name).c_str(),
                                 static_cast<unsigned long long>(j.seed), static_cast<double>(r.ended_at) / 1e6,
                                 r.blocked.c_str());
                }
                if (tf && r.trace_entries == 0) {  // say why, not leave the user with a file of headers
                    std::lock_guard<std::mutex> lock(progress_mu);
                    if (opt.trace_window.from >= r.ended_at)
                        std::fprintf(stderr,
                                     "wakesim: warning: %s holds no events: the run ended at %.3f ms of simulated "
                                     "time, before --trace-window starts (%.3f ms)\n",
                                     trace_file.c_str(), static_cast<double>(r.ended_at) / 1e6,
                                     static_cast<double>(opt.trace_window.from) / 1e6);
                    else
                        std::fprintf(stderr, "wakesim: warning: %s holds no events: none fell in --trace-window\n",
                                     trace_file.c_str());
                }
                out[i] = RunRecord{j.c->name, j.p->name, j.seed, std::move(r)};
                if (opt.progress) {  // the caller's progress line (a bar with ETA on a terminal)
                    std::lock_guard<std::mutex> lock(progress_mu);
                    opt.progress(++finished, jobs.size());
                } else if (progress) {
                    std::fprintf(stderr, "wakesim: %zu/%zu runs done\n", ++done, jobs.size());
                }
            } catch (...) {
                if (!failed.exchange(true)) failure = std::current_exception();
            }
        }
    };
    run_on_threads(parallel, jobs.size(), worker);
    if (failure) std::rethrow_exception(failure);
    return out;
}

void run_on_threads(int jobs, size_t items, const std::function<void()>& worker) {
    const int n = std::max(1, std::min<int>(jobs, static_cast<int>(items)));
    if (n == 1) {
        worker();
        return;
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
}

}  // namespace wakesim
