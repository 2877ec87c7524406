#include "experiment/check.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "experiment/report.h"
#include "experiment/stats.h"
#include "input/input_error.h"
#include "input/json_input.h"

namespace wakesim {

namespace {

using json = nlohmann::json;

bool numeric(const MetricDef& d) { return d.type == MetricType::integer || d.type == MetricType::real; }

using Key = std::pair<std::string, std::string>;

std::map<Key, std::vector<const RunRecord*>> by_group(const std::vector<RunRecord>& runs) {
    std::map<Key, std::vector<const RunRecord*>> g;
    for (const auto& r : runs) g[{r.case_name, r.policy}].push_back(&r);
    return g;
}

double round6(double x) { return std::round(x * 1e6) / 1e6; }

}  // namespace

json baseline_json(const Scenario& sc, const std::vector<RunRecord>& runs) {
    json j;
    j["wakesim_baseline"] = kSchemaVersion;
    j["scenario"] = sc.name;
    j["benchmark_hash"] = sc.bench_hash;
    j["seeds"] = sc.seeds;
    json groups = json::array();
    std::vector<Key> order;
    const auto g = by_group(runs);
    for (const auto& r : runs)
        if (order.empty() || order.back() != Key{r.case_name, r.policy}) order.push_back({r.case_name, r.policy});
    for (const Key& k : order) {
        json x;
        x["case"] = k.first;
        x["policy"] = k.second;
        json ms = json::object();
        for (const MetricDef& d : metric_table()) {
            if (!numeric(d)) continue;
            std::vector<double> v;
            json values = json::array();
            for (const auto* r : g.at(k)) {
                v.push_back(r->result.metrics.get(d.id));
                values.push_back(round6(v.back()));
            }
            const SampleStats s = sample_stats(v);
            ms[d.name] = {{"values", values}, {"mean", round6(s.mean)}, {"sd", round6(s.sd)}, {"ci95", round6(s.ci95)}};
        }
        x["metrics"] = ms;
        groups.push_back(x);
    }
    j["groups"] = groups;
    return j;
}

std::string baseline_text(const json& b) {
    std::string out = "{\n";
    out += "  \"wakesim_baseline\": " + b.at("wakesim_baseline").dump() + ",\n";
    out += "  \"scenario\": " + b.at("scenario").dump() + ",\n";
    if (b.contains("benchmark_hash")) out += "  \"benchmark_hash\": " + b.at("benchmark_hash").dump() + ",\n";
    out += "  \"seeds\": " + b.at("seeds").dump() + ",\n";
    out += "  \"groups\": [";
    const json& groups = b.at("groups");
    for (size_t i = 0; i < groups.size(); ++i) {
        const json& g = groups[i];
        out += std::string(i ? "," : "") + "\n    {\"case\": " + g.at("case").dump() + ", \"policy\": " + g.at("policy").dump() +
               ", \"metrics\": {";
        bool first = true;
        for (const auto& [name, m] : g.at("metrics").items()) {
            out += std::string(first ? "" : ",") + "\n      " + json(name).dump() + ": " + m.dump();
            first = false;
        }
        out += "\n    }}";
    }
    out += "\n  ]\n}\n";
    return out;
}

std::vector<uint64_t> baseline_seeds(const json& b, const std::string& file, const Scenario& sc) {
    if (!b.is_object() || !b.contains("wakesim_baseline"))
        throw InputError(file, "", "expected a baseline file written by `wakesim baseline`");
    JsonNode(b, file).check_keys({"wakesim_baseline", "scenario", "benchmark_hash", "seeds", "groups"});
    if (b["wakesim_baseline"] != kSchemaVersion)
        throw InputError(file, "/wakesim_baseline", "expected " + std::to_string(kSchemaVersion) +
                                                        " (the baseline format this wakesim reads), got " +
                                                        b["wakesim_baseline"].dump());
    if (!b.contains("scenario") || b["scenario"] != sc.name)
        throw InputError(file, "/scenario", "expected the baseline of scenario " + quote_for_message(sc.name) + ", got " +
                                                (b.contains("scenario") ? b["scenario"].dump() : std::string("none")));
    // Baselines recorded before the hash was kept name their scenario only.
    if (b.contains("benchmark_hash") && b["benchmark_hash"] != sc.bench_hash)
        throw InputError(file, "/benchmark_hash",
                         "expected the baseline of " + quote_for_message(sc.name) + " as it is now (" + sc.bench_hash +
                             "); it was recorded with another machine, workload, task groups, cases or run settings: "
                             "record it again with `wakesim baseline`");
    if (!b.contains("seeds") || !b["seeds"].is_array() || b["seeds"].empty())
        throw InputError(file, "/seeds", "expected the seeds the baseline ran");
    std::vector<uint64_t> seeds;
    for (size_t i = 0; i < b["seeds"].size(); ++i) {
        if (!b["seeds"][i].is_number_unsigned()) throw InputError(file, "/seeds/" + std::to_string(i), "expected a seed");
        seeds.push_back(b["seeds"][i].get<uint64_t>());
        for (size_t k = 0; k < i; ++k)
            if (seeds[k] == seeds[i])
                throw InputError(file, "/seeds/" + std::to_string(i), "expected each seed once; " +
                                                                          std::to_string(seeds[i]) + " is seed " +
                                                                          std::to_string(k) + " too");
    }
    if (!b.contains("groups") || !b["groups"].is_array()) throw InputError(file, "/groups", "expected an array");
    return seeds;
}

CheckResult check_against(const Scenario& sc, const std::vector<RunRecord>& runs, const json& b,
                          const std::string& file, const CheckOptions& opt) {
    std::vector<std::pair<Metric, double>> checked;
    for (const MetricDef& d : metric_table())
        if (d.shown.summary && numeric(d) && d.better != Better::neither) checked.emplace_back(d.id, kDefaultTolerancePct);
    for (const auto& [m, pct] : opt.tolerances) {
        bool found = false;
        for (auto& c : checked)
            if (c.first == m) {
                c.second = pct;
                found = true;
            }
        if (!found) checked.emplace_back(m, pct);
    }
    const auto g = by_group(runs);
    CheckResult result;
    std::vector<CheckRow>& rows = result.rows;
    std::map<Key, size_t> seen;  // group -> its index in the baseline
    for (size_t gi = 0; gi < b["groups"].size(); ++gi) {
        const json& x = b["groups"][gi];
        const std::string where = "/groups/" + std::to_string(gi);
        if (!x.contains("case") || !x["case"].is_string() || !x.contains("policy") || !x["policy"].is_string() ||
            !x.contains("metrics") || !x["metrics"].is_object())
            throw InputError(file, where, "expected {\"case\", \"policy\", \"metrics\"}");
        const Key k{x["case"].get<std::string>(), x["policy"].get<std::string>()};
        auto it = g.find(k);
        if (it == g.end())
            throw InputError(file, where, "expected a case and policy the scenario has; it has no " +
                                              quote_for_message(k.first) + " x " + quote_for_message(k.second));
        if (const auto [at, fresh] = seen.emplace(k, gi); !fresh)
            throw InputError(file, where, "expected each case and policy once; " + quote_for_message(k.first) + " x " +
                                              quote_for_message(k.second) + " is /groups/" + std::to_string(at->second) +
                                              " too");
        for (const auto& [m, pct] : checked) {
            const MetricDef& d = metric_def(m);
            const std::string mp = where + "/metrics/" + d.name + "/values";
            if (!x["metrics"].contains(d.name) || !x["metrics"][d.name].contains("values") ||
                !x["metrics"][d.name]["values"].is_array())
                throw InputError(file, mp, "expected the metric's values per seed");
            std::vector<double> before, now;
            for (const auto& v : x["metrics"][d.name]["values"]) {
                if (!v.is_number()) throw InputError(file, mp, "expected numbers");
                before.push_back(v.get<double>());
            }
            if (before.size() != sc.seeds.size())
                throw InputError(file, mp, "expected " + std::to_string(sc.seeds.size()) + " values, one per seed of /seeds; got " +
                                               std::to_string(before.size()));
            // The baseline rounds to 6 decimals: so does the comparison.
            for (const auto* r : it->second) now.push_back(round6(r->result.metrics.get(m)));
            CheckRow row;
            row.case_name = k.first;
            row.policy = k.second;
            row.metric = m;
            row.tolerance = pct;
            const SampleStats sb = sample_stats(before), sn = sample_stats(now);
            row.before = sb.mean;
            row.now = sn.mean;
            const double diff = sn.mean - sb.mean;
            row.delta_pct = sb.mean != 0 ? 100.0 * diff / std::fabs(sb.mean) : (diff == 0 ? 0.0 : INFINITY);
            const WelchResult w = welch_test(now, before);
            row.tested = w.defined;
            row.p = w.defined ? w.p : (diff == 0 ? 1.0 : 0.0);
            // A metric without a direction: any change counts as the worse one.
            const bool worse = d.better == Better::higher ? diff < 0 : d.better == Better::lower ? diff > 0 : diff != 0;
            const bool directed = d.better != Better::neither;
            const bool significant = w.defined ? w.p < 0.05 : diff != 0;
            if (diff == 0 && before == now)
                row.status = "same";
            else if (!significant)
                row.status = "not significant";
            else if (!worse)
                row.status = "better";
            else if (std::fabs(row.delta_pct) <= pct)
                row.status = directed ? "worse within tolerance" : "changed within tolerance";
            else {
                row.status = directed ? "REGRESSION" : "CHANGED";
                row.regression = true;
            }
            rows.push_back(row);
        }
    }
    for (const auto& [k, rs] : g)
        if (!seen.count(k)) result.unchecked.push_back(k.first + " x " + k.second);
    return result;
}

std::string check_report(const Scenario& sc, const std::string& file, const CheckResult& result) {
    const std::vector<CheckRow>& rows = result.rows;
    std::ostringstream os;
    size_t regressions = 0;
    for (const auto& r : rows) regressions += r.regression;
    os << "# check " << sc.name << " against " << file << ": " << rows.size() << " figures, " << regressions
       << (regressions == 1 ? " regression" : " regressions") << "\n";
    os << "# a regression: worse in the metric's direction by more than the tolerance, and significant (Welch's t-test, "
          "p < 0.05; without spread over seeds, any change); for a metric without a direction, a change of either sign "
          "(CHANGED)\n";
    if (!result.unchecked.empty()) {
        os << "# not in the baseline, not checked:";
        for (size_t i = 0; i < result.unchecked.size(); ++i) os << (i ? ", " : " ") << result.unchecked[i];
        os << "\n";
    }
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-16s %-22s %-22s %14s %14s %9s %7s %6s  %s\n", "case", "policy", "metric", "baseline",
                  "now", "Δ%", "p", "tol%", "status");
    os << buf;
    for (const auto& r : rows) {
        char p[32];
        if (r.tested)
            std::snprintf(p, sizeof p, "%.3g", r.p);
        else
            std::snprintf(p, sizeof p, "-");
        std::snprintf(buf, sizeof buf, "%-16s %-22s %-22s %14.6g %14.6g %+8.2f%% %7s %6.1f  %s\n", r.case_name.c_str(),
                      r.policy.c_str(), metric_def(r.metric).name, r.before, r.now, r.delta_pct, p, r.tolerance,
                      r.status.c_str());
        os << buf;
    }
    return os.str();
}

std::pair<Metric, double> parse_tolerance(const std::string& text) {
    const auto eq = text.find('=');
    const std::string expect = "expected METRIC=PCT, a numeric metric of `wakesim list metrics` and a percentage >= 0, got " +
                               quote_for_message(text);
    if (eq == std::string::npos) throw InputError("--tolerance", "", expect);
    const MetricDef* d = find_metric(text.substr(0, eq));
    if (!d || !numeric(*d)) throw InputError("--tolerance", "", expect);
    double pct = 0;
    try {
        size_t used = 0;
        pct = std::stod(text.substr(eq + 1), &used);
        if (used != text.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
        throw InputError("--tolerance", "", expect);
    }
    if (!(pct >= 0) || !std::isfinite(pct)) throw InputError("--tolerance", "", expect);
    return {d->id, pct};
}

}  // namespace wakesim
