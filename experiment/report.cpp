#include "experiment/report.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "metrics/metric_format.h"

namespace wakesim {

bool interval_crosses_impossible(const MetricDef& d, const SeedStats& s) {
    if (d.type != MetricType::integer && d.type != MetricType::real) return false;
    return s.n > 1 && s.lo() < 0 && s.mean >= 0;
}

namespace {

struct Group {
    std::string case_name, policy;
    std::vector<const RunRecord*> runs;
};

std::vector<Group> groups(const std::vector<RunRecord>& runs) {
    std::vector<Group> g;
    for (const auto& r : runs) {
        if (g.empty() || g.back().case_name != r.case_name || g.back().policy != r.policy)
            g.push_back({r.case_name, r.policy, {}});
        g.back().runs.push_back(&r);
    }
    return g;
}

SeedStats stat(const Group& g, Metric m) {
    std::vector<double> v;
    for (const auto* r : g.runs) v.push_back(r->result.metrics.get(m));
    return seed_stats(v);
}

}  // namespace

std::string wakesim_version() { return WAKESIM_VERSION; }

nlohmann::json profile_overrides(const CaseSpec& c) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& l : c.profile.describe())
        if (l.source == "scenario override") o[l.key] = nlohmann::json::parse(l.typed);
    return o;
}

namespace {

const CaseSpec& case_of(const Scenario& sc, const std::string& name) {
    for (const auto& c : sc.cases)
        if (c.name == name) return c;
    throw std::logic_error("report: a run of an unknown case " + name);
}

}  // namespace

nlohmann::json report_json(const Scenario& sc, const std::vector<RunRecord>& runs) {
    nlohmann::json j;
    j["schema_version"] = kSchemaVersion;
    j["wakesim_version"] = wakesim_version();
    j["scenario_hash"] = sc.hash;
    j["scenario"] = sc.name;
    j["description"] = sc.description;
    j["expected"] = sc.expected;
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : sc.cases) {
        nlohmann::json cj;
        cj["name"] = c.name;
        cj["description"] = c.description;
        cj["machine"] = c.topo->name();
        cj["profile"] = c.profile.name;
        cj["workload"] = c.workload.kind;
        cj["features"] = c.sched.features.effective();
        cj["profile_overrides"] = profile_overrides(c);
        cases.push_back(cj);
    }
    j["cases"] = cases;
    nlohmann::json pols = nlohmann::json::array();
    for (const auto& p : sc.policies) {
        nlohmann::json pj;
        pj["name"] = p.name;
        pj["description"] = p.description;
        nlohmann::json params = nlohmann::json::object();
        for (const auto& [name, value] : p.param_texts()) params[name] = value;
        pj["params"] = params;
        pols.push_back(pj);
    }
    j["policies"] = pols;
    nlohmann::json rj = nlohmann::json::array();
    for (const auto& r : runs) {
        nlohmann::json x;
        x["case"] = r.case_name;
        x["policy"] = r.policy;
        x["seed"] = r.seed;
        x["completed"] = r.result.completed;
        if (r.result.stuck) {  // only then: the schema of every finished or limited run is unchanged
            x["stuck"] = true;
            x["blocked"] = r.result.blocked;
        }
        x["metrics"] = metrics_json(r.result.metrics);
        rj.push_back(x);
    }
    j["runs"] = rj;
    nlohmann::json sj = nlohmann::json::array();
    for (const auto& g : groups(runs)) {
        nlohmann::json x;
        x["case"] = g.case_name;
        x["policy"] = g.policy;
        x["seeds"] = g.runs.size();
        for (const MetricDef& d : metric_table()) {
            if (!d.shown.summary) continue;
            const SeedStats s = stat(g, d.id);
            x[d.name] = {{"mean", std::round(s.mean * 1e6) / 1e6},
                         {"sd", std::round(s.sd * 1e6) / 1e6},
                         {"ci95", std::round(s.ci95 * 1e6) / 1e6},
                         {"too_few_seeds", interval_crosses_impossible(d, s)}};
        }
        sj.push_back(x);
    }
    j["summary"] = sj;
    return j;
}

std::string report_table(const Scenario& sc, const std::vector<RunRecord>& runs) {
    // The table's metric columns: column number -> its metrics, in the table's order.
    std::map<int, std::vector<const MetricDef*>> columns;
    for (const MetricDef& d : metric_table())
        if (d.shown.table.column > 0) columns[d.shown.table.column].push_back(&d);
    // Runs without ops (a program without `op` steps) have no per-op figures: their cells say "-",
    // and an "elapsed ms" column (the window, which ends when the last task exited) appears.
    auto no_ops = [](const Group& g) {
        for (const auto* r : g.runs)
            if (r->result.metrics.integer(Metric::ops) > 0) return false;
        return true;
    };
    const std::vector<Group> gs = groups(runs);
    bool elapsed_column = false;
    for (const auto& g : gs) elapsed_column |= no_ops(g);
    // Runs on a machine with an energy model get an "energy mJ" column (energy_mj, docs/metrics.md).
    bool energy_column = false;
    for (const auto& r : runs) energy_column |= r.result.metrics.get(Metric::energy_mj) > 0;
    // Runs whose requesters took FUSE results get the throughput and the request latency (the
    // wake latency column is every wakeup's, not a request's).
    bool fuse_columns = false;
    for (const auto& r : runs) fuse_columns |= r.result.metrics.integer(Metric::fuse_requests) > 0;
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"case", "policy", "seeds"});
    for (const auto& [col, defs] : columns) rows.back().push_back(defs.front()->shown.table.header);
    if (elapsed_column) rows.back().push_back("elapsed ms");
    if (energy_column) rows.back().push_back("energy mJ");
    if (fuse_columns) {
        rows.back().push_back("MiB/s");
        rows.back().push_back("req p50/p99 (us)");
    }
    rows.back().push_back("done");
    char buf[128];
    bool any_spread = false, any_too_few = false;
    auto cell_text = [&](const SeedStats& s, int precision, double divisor, bool with_ci, const MetricDef& d) {
        if (with_ci && s.n > 1) {
            any_spread = true;
            const bool too_few = interval_crosses_impossible(d, s);
            any_too_few |= too_few;
            std::snprintf(buf, sizeof buf, "%.*f ±%.*f%s", precision, s.mean / divisor, precision, s.ci95 / divisor,
                          too_few ? "†" : "");
        }
        else
            std::snprintf(buf, sizeof buf, "%.*f", precision, s.mean / divisor);
        return std::string(buf);
    };
    for (const auto& g : gs) {
        std::vector<std::string> row{g.case_name, g.policy, std::to_string(g.runs.size())};
        const bool per_op_undefined = no_ops(g);
        for (const auto& [col, defs] : columns) {
            std::string cell;
            for (const MetricDef* d : defs) {
                const TableColumn& tc = d->shown.table;
                // A column of several metrics shows their means joined by '/', without the CI.
                const bool per_op = d->id == Metric::usec_per_op || d->id == Metric::ops_per_sec;
                if (!cell.empty()) cell += '/';
                cell += per_op && per_op_undefined ? "-" : cell_text(stat(g, d->id), tc.precision, tc.divisor, defs.size() == 1, *d);
            }
            row.push_back(cell);
        }
        if (elapsed_column) row.push_back(cell_text(stat(g, Metric::sim_time_ns), 3, 1e6, true, metric_def(Metric::sim_time_ns)));
        if (energy_column) row.push_back(cell_text(stat(g, Metric::energy_mj), 2, 1, true, metric_def(Metric::energy_mj)));
        if (fuse_columns) {
            row.push_back(cell_text(stat(g, Metric::mib_per_sec), 1, 1, true, metric_def(Metric::mib_per_sec)));
            row.push_back(cell_text(stat(g, Metric::fuse_latency_ns_p50), 1, 1000.0, false, metric_def(Metric::fuse_latency_ns_p50)) +
                          "/" +
                          cell_text(stat(g, Metric::fuse_latency_ns_p99), 1, 1000.0, false, metric_def(Metric::fuse_latency_ns_p99)));
        }
        bool done = true, stuck = false;
        for (const auto* r : g.runs) {
            done &= r->result.completed;
            stuck |= r->result.stuck;
        }
        row.push_back(done ? "yes" : stuck ? "stuck" : "limit");
        rows.push_back(std::move(row));
    }
    // Widths in bytes, as always ("±" counts 2), except that the "†" mark counts 1 like the
    // character it is, so that a marked cell lines up with the unmarked ones.
    auto width = [](const std::string& cell) {
        size_t marks = 0;
        for (size_t at = cell.find("†"); at != std::string::npos; at = cell.find("†", at + 1)) ++marks;
        return cell.size() - 2 * marks;
    };
    std::vector<size_t> w(rows.front().size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
    std::ostringstream os;
    os << "# " << sc.name;
    if (!sc.description.empty()) os << ": " << sc.description;
    os << "\n";
    if (any_spread)
        os << "# over seeds: mean ±half-width of the 95% confidence interval of the mean (Student's t, n-1 degrees "
              "of freedom); `wakesim compare` gives sd, intervals and Welch's test against a baseline policy\n";
    os << "# wakesim " << wakesim_version() << ", scenario " << sc.hash << "\n";
    for (const auto& c : sc.cases) {
        bool ran = false;
        for (const auto& g : gs) ran |= g.case_name == c.name;
        if (!ran) continue;
        os << "# case " << c.name << ": machine " << c.topo->name() << ", features " << c.sched.features.effective();
        const nlohmann::json o = profile_overrides(c);
        if (!o.empty()) os << ", profile overrides " << o.dump();
        os << "\n";
    }
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        for (size_t i = 0; i < rows[ri].size(); ++i) {
            const bool left = i < 2;
            const std::string& cell = rows[ri][i];
            const std::string pad(w[i] - width(cell), ' ');
            os << (i ? "  " : "") << (left ? cell + pad : pad + cell);
        }
        os << "\n";
        if (ri == 0) {
            for (size_t i = 0; i < w.size(); ++i) os << (i ? "  " : "") << std::string(w[i], '-');
            os << "\n";
        }
    }
    if (any_too_few)
        os << "† too few seeds: the 95% interval reaches below 0, which this metric cannot; run more seeds\n";
    if (!sc.expected.empty()) os << "expected: " << sc.expected << "\n";
    return os.str();
}

namespace {
// RFC 4180: quote a field that holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q(1, '"');
    for (char c : s) {
        if (c == '"') q.push_back('"');
        q.push_back(c);
    }
    q.push_back('"');
    return q;
}
}  // namespace

std::string report_csv(const Scenario& sc, const std::vector<RunRecord>& runs) {
    std::ostringstream os;
    if (runs.empty()) return "";
    const std::vector<Metric> cols = csv_metrics();
    os << "case,machine,policy,seed,completed,stuck";
    for (Metric m : cols) os << "," << metric_def(m).name;
    os << "\n";
    for (const auto& r : runs) {
        os << csv_field(r.case_name) << "," << csv_field(case_of(sc, r.case_name).topo->name()) << "," << csv_field(r.policy)
           << "," << r.seed << "," << (r.result.completed ? 1 : 0)
           << "," << (r.result.stuck ? 1 : 0);
        for (Metric m : cols) os << "," << csv_cell(r.result.metrics, m);
        os << "\n";
    }
    return os.str();
}

std::string report_csv_long(const Scenario& sc, const std::vector<RunRecord>& runs) {
    std::ostringstream os;
    os << "case,machine,policy,seed,metric,cpu,value\n";
    for (const auto& r : runs) {
        const std::string head = csv_field(r.case_name) + "," + csv_field(case_of(sc, r.case_name).topo->name()) + "," +
                                 csv_field(r.policy) + "," + std::to_string(r.seed) + ",";
        // How the run ended, as the wide CSV's first columns: a stuck or time-limited run is no result.
        os << head << "completed,," << (r.result.completed ? 1 : 0) << "\n";
        os << head << "stuck,," << (r.result.stuck ? 1 : 0) << "\n";
        for (const MetricDef& d : metric_table()) {
            const nlohmann::json v = to_json(r.result.metrics.value(d.id));
            if (v.is_array()) {
                for (size_t cpu = 0; cpu < v.size(); ++cpu)
                    os << head << d.name << "," << cpu << "," << csv_field(v[cpu].dump()) << "\n";
            } else if (v.is_object()) {  // a breakdown: one row per part, named metric.part
                for (const auto& [part, x] : v.items())
                    os << head << csv_field(std::string(d.name) + "." + part) << ",," << csv_field(x.dump()) << "\n";
            } else {
                os << head << d.name << ",," << csv_field(v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
            }
        }
    }
    return os.str();
}

namespace {

// A real run creates its tasks inside the timed section: about 25 us per thread
// (`perf bench sched messaging -t -p -g 1 -l 1`: 40 threads in 0.001 s, docs/validation.md).
// Below ten times that, start-up is over a tenth of a real run's Total time.
constexpr Time kStartupPerTask = 25000;
constexpr Time kStartupShare = 10;

// perf's " %14s: %lu.%03lu [sec]": whole milliseconds, truncated.
std::string total_time_line(Time window) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " %14s: %lld.%03lld [sec]\n", "Total time", static_cast<long long>(window / kNsPerSec),
                  static_cast<long long>(window % kNsPerSec / 1000000));
    return buf;
}

// sched-pipe's " %14lf usecs/op" and " %14d ops/sec" (ops/sec truncated).
std::string per_op_lines(Time window, int64_t ops) {
    char buf[128];
    const double usec = static_cast<double>(window) / 1000.0;
    std::snprintf(buf, sizeof buf, " %14f usecs/op\n %14d ops/sec\n", usec / static_cast<double>(ops),
                  static_cast<int>(static_cast<double>(ops) / (usec / 1e6)));
    return buf;
}

}  // namespace

std::string report_perf(const Scenario& sc, const std::vector<RunRecord>& runs, std::string& warning) {
    std::ostringstream os;
    size_t short_runs = 0;
    Time shortest = kTimeNever;
    int shortest_tasks = 0;
    for (const auto& r : runs) {
        const CaseSpec* c = &case_of(sc, r.case_name);
        const WorkloadBuild& w = c->workload;
        const Time window = r.result.metrics.integer(Metric::sim_time_ns);
        const int64_t ops = r.result.metrics.integer(Metric::ops);
        int tasks = 0;
        for (const auto& t : w.tasks) tasks += t.background ? 0 : 1;
        if (window < kStartupShare * kStartupPerTask * tasks) {
            ++short_runs;
            if (window < shortest) {
                shortest = window;
                shortest_tasks = tasks;
            }
        }
        os << "# wakesim: case=" << r.case_name << " policy=" << r.policy << " seed=" << r.seed;
        if (c->warmup_ops || c->warmup_time) os << " (after warm-up)";
        if (r.result.stuck) os << " (stopped: its tasks wait for steps no task will take)";
        else if (!r.result.completed) os << " (stopped at the time limit)";
        os << "\n";
        if (w.kind == "pipe") {
            // sched-pipe.c: processes unless -T; the model was validated against process mode.
            os << "# Running 'sched/pipe' benchmark:\n# Executed " << ops << " pipe operations between two processes\n\n"
               << total_time_line(window) << "\n";
            if (ops > 0) os << per_op_lines(window, ops);
        } else if (w.kind == "messaging") {
            // The model has no process exit: it stands for thread mode (-t), docs/scenarios.md.
            const int64_t groups = w.params.integer("groups"), fds = w.params.integer("fds");
            os << "# Running 'sched/messaging' benchmark:\n# " << fds << " sender and receiver threads per group\n# "
               << groups << " groups == " << groups * 2 * fds << " threads run\n\n"
               << total_time_line(window);
        } else {
            // No perf benchmark: what was measured, in the same units.
            os << "# Running '" << w.kind << "' workload: " << tasks << " tasks, " << ops << " ops\n\n"
               << total_time_line(window);
            if (ops > 0) os << "\n" << per_op_lines(window, ops);
        }
    }
    warning.clear();
    if (short_runs > 0) {
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "wakesim: warning: %zu of %zu runs are shorter than 10x the time a real run takes to create "
                      "their tasks (about 25 us each; shortest %.3f ms with %d tasks): task start-up would dominate "
                      "a real run's Total time; raise loops",
                      short_runs, runs.size(), static_cast<double>(shortest) / 1e6, shortest_tasks);
        warning = buf;
    }
    return os.str();
}

std::string format_number(const char* format, double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, x);
    return buf;
}

}  // namespace wakesim
