#include "experiment/compare.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "experiment/report.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "metrics/metric_format.h"
#include "metrics/metrics.h"

namespace wakesim {

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::baseline: return "baseline";
        case Verdict::no_effect: return "no effect on this workload";
        case Verdict::one_seed: return "one seed: no test";
        case Verdict::same: return "same on every seed";
        case Verdict::better: return "better";
        case Verdict::worse: return "worse";
        case Verdict::different: return "different";
        case Verdict::inconclusive: return "inconclusive";
    }
    return "?";
}

namespace {

constexpr double kAlpha = 0.05;

double value(const RunRecord& r, Metric m) { return r.result.metrics.get(m); }

Verdict direction(Metric m, double diff) {
    switch (metric_def(m).better) {
        case Better::higher: return diff > 0 ? Verdict::better : Verdict::worse;
        case Better::lower: return diff < 0 ? Verdict::better : Verdict::worse;
        case Better::neither: return Verdict::different;
    }
    return Verdict::different;
}

double round6(double x) { return std::round(x * 1e6) / 1e6; }
// A probability keeps 6 significant digits: 1.2e-10 is not 0.
double sig6(double x) { return std::stod(format_number("%.6g", x)); }

}  // namespace

Comparison compare_runs(const Scenario& sc, const std::vector<RunRecord>& runs, const CompareOptions& opt) {
    std::vector<Metric> metrics = opt.metrics;
    if (metrics.empty())
        for (const MetricDef& d : metric_table())
            if (d.shown.summary) metrics.push_back(d.id);
    // The policies and cases in run order.
    std::vector<std::string> cases, policies;
    std::map<std::pair<std::string, std::string>, std::vector<const RunRecord*>> by;
    Comparison c;
    for (const auto& r : runs) {
        auto& v = by[{r.case_name, r.policy}];
        if (v.empty()) {
            bool seen_case = false, seen_pol = false;
            for (const auto& x : cases) seen_case |= x == r.case_name;
            for (const auto& x : policies) seen_pol |= x == r.policy;
            if (!seen_case) cases.push_back(r.case_name);
            if (!seen_pol) policies.push_back(r.policy);
        }
        v.push_back(&r);
        if (cases.size() == 1 && policies.size() == 1) c.seeds.push_back(r.seed);
    }
    if (policies.empty()) return c;
    c.baseline = opt.baseline_policy.empty() ? policies.front() : opt.baseline_policy;
    bool found = false;
    for (const auto& p : policies) found |= p == c.baseline;
    if (!found) {
        std::string list;
        for (const auto& p : policies) list += (list.empty() ? "" : ", ") + quote_for_message(p);
        throw InputError(sc.file, "/policies",
                         "expected --baseline-policy to name a policy that runs: one of " + list + ", got " +
                             quote_for_message(c.baseline));
    }
    std::vector<std::string> order{c.baseline};
    for (const auto& p : policies)
        if (p != c.baseline) order.push_back(p);
    for (const auto& cs : cases) {
        const auto& base = by[{cs, c.baseline}];
        for (const auto& p : order) {
            const auto& mine = by[{cs, p}];
            PolicyComparison pc;
            pc.case_name = cs;
            pc.policy = p;
            pc.baseline = p == c.baseline;
            if (!pc.baseline && mine.size() == base.size()) {
                pc.no_effect = true;
                for (size_t i = 0; i < mine.size(); ++i)
                    pc.no_effect &= mine[i]->seed == base[i]->seed && mine[i]->result.completed == base[i]->result.completed &&
                                    metrics_json(mine[i]->result.metrics) == metrics_json(base[i]->result.metrics);
            }
            for (Metric m : metrics) {
                MetricComparison mc;
                mc.metric = m;
                std::vector<double> a, b;
                for (const auto* r : mine) a.push_back(value(*r, m));
                for (const auto* r : base) b.push_back(value(*r, m));
                mc.stats = sample_stats(a);
                mc.too_few_seeds = interval_crosses_impossible(metric_def(m), mc.stats);
                if (pc.baseline) {
                    mc.verdict = Verdict::baseline;
                    pc.metrics.push_back(mc);
                    continue;
                }
                const SampleStats sb = sample_stats(b);
                mc.welch = welch_test(a, b);
                const double diff = mc.stats.mean - sb.mean;
                if (sb.mean != 0) {
                    mc.has_delta = true;
                    const double scale = 100.0 / std::fabs(sb.mean);
                    mc.delta_pct = diff * scale;
                    mc.delta_lo = mc.welch.defined ? mc.welch.ci95_lo * scale : mc.delta_pct;
                    mc.delta_hi = mc.welch.defined ? mc.welch.ci95_hi * scale : mc.delta_pct;
                    // A metric that cannot be negative cannot fall by more than 100%.
                    if (sb.mean > 0 && mc.stats.mean >= 0 && (metric_def(m).type == MetricType::integer || metric_def(m).type == MetricType::real))
                        mc.delta_lo = std::max(mc.delta_lo, -100.0);
                }
                if (pc.no_effect)
                    mc.verdict = Verdict::no_effect;
                else if (a.size() < 2 || b.size() < 2)
                    mc.verdict = Verdict::one_seed;
                else if (!mc.welch.defined) {  // no spread on either side
                    // A percentile read from the log-linear histogram moves by whole buckets
                    // (1/16 of a power of two): one bucket's step is within its resolution.
                    const auto bucket = [](double v) { return LatencyHistogram::bucket_of(v > 0 ? static_cast<uint64_t>(v) : 0); };
                    const bool within_bucket = metric_def(m).kind == MetricKind::percentile &&
                                               std::abs(bucket(mc.stats.mean) - bucket(sb.mean)) <= 1;
                    mc.verdict = diff == 0 ? Verdict::same : within_bucket ? Verdict::inconclusive : direction(m, diff);
                    mc.within_bucket = within_bucket && diff != 0;
                }
                else if (mc.welch.p < kAlpha)
                    mc.verdict = direction(m, diff);
                else {
                    mc.verdict = Verdict::inconclusive;
                    mc.seeds_needed = seeds_needed(diff, mc.stats.sd, sb.sd);
                }
                pc.metrics.push_back(mc);
            }
            c.rows.push_back(std::move(pc));
        }
    }
    return c;
}

namespace {

constexpr size_t kMaxSeeds = 10000;  // --seeds' limit
std::string fmt(double x) { return format_number("%.6g", x); }
std::string fmt3(double x) { return format_number("%.3g", x); }
std::string fmt_pct(double x) { return format_number("%+.2f%%", x); }

std::string verdict_text(const MetricComparison& m) {
    std::string v = to_string(m.verdict);
    char buf[160];
    if (m.verdict == Verdict::inconclusive && m.within_bucket) {
        v += " (no spread across seeds; one step of the histogram, whose buckets are 6% wide)";
    } else if (m.verdict == Verdict::inconclusive) {
        if (m.welch.diff == 0)
            std::snprintf(buf, sizeof buf, " (p=%.3g; no difference in the means)", m.welch.p);
        else if (m.seeds_needed > kMaxSeeds)
            std::snprintf(buf, sizeof buf, " (p=%.3g; about %zu seeds per policy would detect a difference this size, "
                          "more than --seeds allows: no practical difference)", m.welch.p, m.seeds_needed);
        else
            std::snprintf(buf, sizeof buf, " (p=%.3g; about %zu seeds per policy would detect a difference this size)",
                          m.welch.p, m.seeds_needed);
        v += buf;
    } else if ((m.verdict == Verdict::better || m.verdict == Verdict::worse || m.verdict == Verdict::different)) {
        if (m.welch.defined)
            std::snprintf(buf, sizeof buf, " (p=%.3g)", m.welch.p);
        else
            std::snprintf(buf, sizeof buf, " (no spread across seeds)");
        v += buf;
    } else if (m.verdict == Verdict::one_seed) {
        v += " (run 2 or more seeds)";
    }
    return v;
}

}  // namespace

std::string comparison_table(const Scenario& sc, const Comparison& c) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"case", "policy", "metric", "mean", "±95% CI", "sd", "Δ%", "Δ% 95% CI", "verdict"});
    bool any_too_few = false;
    for (const auto& pc : c.rows)
        for (const auto& m : pc.metrics) {
            std::vector<std::string> r{pc.case_name, pc.policy, metric_def(m.metric).name, fmt(m.stats.mean)};
            if (m.stats.n > 1) {
                r.push_back("±" + fmt3(m.stats.ci95) + (m.too_few_seeds ? " †" : ""));
                r.push_back(fmt3(m.stats.sd));
            } else {
                r.push_back("-");
                r.push_back("-");
            }
            any_too_few |= m.too_few_seeds;
            if (m.has_delta) {
                r.push_back(fmt_pct(m.delta_pct));
                std::string interval = "-";
                if (m.welch.defined) {  // appended piecewise: GCC 12 warns wrongly (-Wrestrict) on "[" + s
                    interval = "[";
                    interval += fmt_pct(m.delta_lo);
                    interval += ", ";
                    interval += fmt_pct(m.delta_hi);
                    interval += "]";
                }
                r.push_back(std::move(interval));
            } else {
                r.push_back("-");
                r.push_back("-");
            }
            r.push_back(verdict_text(m));
            rows.push_back(std::move(r));
        }
    auto width = [](const std::string& s) {  // display width: UTF-8 continuation bytes take none
        size_t n = 0;
        for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
        return n;
    };
    std::vector<size_t> w(rows.front().size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
    std::ostringstream os;
    os << "# " << sc.name << ": each policy against the baseline " << quote_for_message(c.baseline) << ", "
       << c.seeds.size() << (c.seeds.size() == 1 ? " seed" : " seeds") << "\n";
    os << "# mean, ±half-width of its 95% confidence interval (Student's t) and sd over seeds; Δ% = (policy - "
          "baseline) / baseline with the 95% interval of Welch's t; verdict: Welch's t-test, two-sided, p < 0.05, "
          "in the metric's better direction (`wakesim list metrics`)\n";
    for (size_t ri = 0; ri < rows.size(); ++ri) {
        std::string line;
        for (size_t i = 0; i < rows[ri].size(); ++i) {
            const bool left = i < 3 || i == rows[ri].size() - 1;
            const std::string& cell = rows[ri][i];
            const std::string pad(w[i] - width(cell), ' ');
            line += (i ? "  " : "") + (left ? cell + pad : pad + cell);
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        os << line << "\n";
        if (ri == 0) {
            for (size_t i = 0; i < w.size(); ++i) os << (i ? "  " : "") << std::string(w[i], '-');
            os << "\n";
        }
    }
    if (any_too_few) os << "† too few seeds: the 95% interval reaches below 0, which this metric cannot; run more seeds\n";
    return os.str();
}

nlohmann::json comparison_json(const Scenario& sc, const Comparison& c) {
    nlohmann::json j;
    j["schema_version"] = kSchemaVersion;
    j["scenario"] = sc.name;
    j["baseline_policy"] = c.baseline;
    j["seeds"] = c.seeds;
    j["confidence"] = 0.95;
    j["alpha"] = kAlpha;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& pc : c.rows) {
        nlohmann::json r;
        r["case"] = pc.case_name;
        r["policy"] = pc.policy;
        r["baseline"] = pc.baseline;
        r["no_effect"] = pc.no_effect;
        nlohmann::json ms = nlohmann::json::object();
        for (const auto& m : pc.metrics) {
            nlohmann::json x;
            x["mean"] = round6(m.stats.mean);
            x["sd"] = round6(m.stats.sd);
            x["ci95"] = round6(m.stats.ci95);
            x["too_few_seeds"] = m.too_few_seeds;
            x["verdict"] = to_string(m.verdict);
            if (m.has_delta) {
                x["delta_pct"] = round6(m.delta_pct);
                if (m.welch.defined) x["delta_pct_ci95"] = {round6(m.delta_lo), round6(m.delta_hi)};
            }
            if (m.welch.defined) {
                x["welch_t"] = round6(m.welch.t);
                x["welch_df"] = round6(m.welch.df);
                x["p"] = sig6(m.welch.p);
            }
            if (m.within_bucket) x["within_histogram_bucket"] = true;
            else if (m.verdict == Verdict::inconclusive && m.welch.diff == 0)
                x["no_difference_in_means"] = true;  // no number of seeds would tell them apart
            else if (m.verdict == Verdict::inconclusive)
                x["seeds_needed"] = m.seeds_needed;
            ms[metric_def(m.metric).name] = x;
        }
        r["metrics"] = ms;
        rows.push_back(r);
    }
    j["comparisons"] = rows;
    return j;
}

}  // namespace wakesim
