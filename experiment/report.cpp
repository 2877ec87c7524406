#include "experiment/report.h"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "metrics/metric_format.h"

namespace wakesim {

SeedStats seed_stats(const std::vector<double>& v) {
    SeedStats s;
    s.n = v.size();
    if (v.empty()) return s;
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    if (v.size() < 2) return s;
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    boost::math::students_t dist(static_cast<double>(v.size() - 1));
    const double t = boost::math::quantile(boost::math::complement(dist, 0.025));
    s.ci95 = t * sd / std::sqrt(static_cast<double>(v.size()));
    return s;
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

nlohmann::json report_json(const Scenario& sc, const std::vector<RunRecord>& runs) {
    nlohmann::json j;
    j["schema_version"] = kSchemaVersion;
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
            x[d.name] = {{"mean", std::round(s.mean * 1e6) / 1e6}, {"ci95", std::round(s.ci95 * 1e6) / 1e6}};
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
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"case", "policy", "seeds"});
    for (const auto& [col, defs] : columns) rows.back().push_back(defs.front()->shown.table.header);
    rows.back().push_back("done");
    char buf[128];
    for (const auto& g : groups(runs)) {
        std::vector<std::string> row{g.case_name, g.policy, std::to_string(g.runs.size())};
        for (const auto& [col, defs] : columns) {
            std::string cell;
            for (const MetricDef* d : defs) {
                const TableColumn& tc = d->shown.table;
                const SeedStats s = stat(g, d->id);
                // A column of several metrics shows their means joined by '/', without the CI.
                if (defs.size() == 1 && s.n > 1)
                    std::snprintf(buf, sizeof buf, "%.*f ±%.*f", tc.precision, s.mean / tc.divisor, tc.precision,
                                  s.ci95 / tc.divisor);
                else
                    std::snprintf(buf, sizeof buf, "%.*f", tc.precision, s.mean / tc.divisor);
                if (!cell.empty()) cell += '/';
                cell += buf;
            }
            row.push_back(cell);
        }
        bool done = true;
        for (const auto* r : g.runs) done &= r->result.completed;
        row.push_back(done ? "yes" : "limit");
        rows.push_back(std::move(row));
    }
    std::vector<size_t> w(rows.front().size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
    std::ostringstream os;
    os << "# " << sc.name;
    if (!sc.description.empty()) os << ": " << sc.description;
    os << "\n";
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        for (size_t i = 0; i < rows[ri].size(); ++i) {
            const bool left = i < 2;
            const std::string& cell = rows[ri][i];
            const std::string pad(w[i] - cell.size(), ' ');
            os << (i ? "  " : "") << (left ? cell + pad : pad + cell);
        }
        os << "\n";
        if (ri == 0) {
            for (size_t i = 0; i < w.size(); ++i) os << (i ? "  " : "") << std::string(w[i], '-');
            os << "\n";
        }
    }
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

std::string report_csv(const std::vector<RunRecord>& runs) {
    std::ostringstream os;
    if (runs.empty()) return "";
    const std::vector<Metric> cols = csv_metrics();
    os << "case,policy,seed,completed";
    for (Metric m : cols) os << "," << metric_def(m).name;
    os << "\n";
    for (const auto& r : runs) {
        os << csv_field(r.case_name) << "," << csv_field(r.policy) << "," << r.seed << "," << (r.result.completed ? 1 : 0);
        for (Metric m : cols) os << "," << csv_cell(r.result.metrics, m);
        os << "\n";
    }
    return os.str();
}

}  // namespace wakesim
