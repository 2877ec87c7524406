#include "experiment/validate.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "experiment/report.h"
#include "experiment/runner.h"
#include "input/input_error.h"

namespace wakesim {

namespace fs = std::filesystem;

namespace {

// How far the published ratio may be from the ratio of the published figures: the publications
// round their ratios to two decimals (C2/C1 = 0.80 for 3.187 / 3.985 = 0.7997).
constexpr double kRatioRounding = 0.01;

std::vector<std::string> numeric_metric_names() {
    std::vector<std::string> names;
    for (const MetricDef& d : metric_table())
        if (d.type == MetricType::integer || d.type == MetricType::real) names.push_back(d.name);
    return names;
}

Metric metric_from_json(const JsonNode& n) {
    const std::string name = n.as_string();
    const MetricDef* d = find_metric(name);
    if (d && (d->type == MetricType::integer || d->type == MetricType::real)) return d->id;
    const std::vector<std::string> names = numeric_metric_names();
    const std::string hint = nearest_name(name, names);
    n.fail("expected a numeric metric of the metric table (`wakesim list metrics`: usec_per_op, ops_per_sec, "
           "mib_per_sec, ...), got " + quote_for_message(name) + (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
}

std::string non_empty_string(const JsonNode& n, const char* what) {
    const std::string s = n.as_string();
    if (s.empty()) n.fail(std::string("expected a non-empty ") + what);
    return s;
}

ValidationSide side_from_json(const JsonNode& n, const Scenario& sc) {
    n.require_object();
    InputErrorCollector errors;  // every field of the side
    errors.attempt([&] { n.check_keys({"id", "case", "policy", "published"}); });
    ValidationSide s;
    errors.attempt([&] { s.id = non_empty_string(n.at("id"), "row id of the publication (\"C1\")"); });
    std::vector<std::string> cases, policies;
    for (const auto& c : sc.cases) cases.push_back(c.name);
    for (const auto& p : sc.policies) policies.push_back(p.name);
    errors.attempt([&] { s.case_name = n.at("case").as_enum(cases); });
    errors.attempt([&] { s.policy = n.at("policy").as_enum(policies); });
    errors.attempt([&] {
        s.published = n.at("published").as_double(0, 1e18);
        if (!(s.published > 0)) n.at("published").fail("expected the published figure, a number above 0, got 0");
    });
    errors.finish();
    return s;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace

std::vector<ValidationRow> parse_validation_section(const JsonNode& node, const Scenario& sc) {
    node.require_object();
    // Every mistake of the section, each on its own line: its keys, and each row's fields.
    InputErrorCollector errors;
    errors.attempt([&] { node.check_keys({"source", "rows"}); });
    std::string source;
    errors.attempt([&] { source = non_empty_string(node.at("source"), "source: the publication (thread title, list, date)"); });
    const JsonNode rows = node.at("rows");
    rows.require_array();
    if (rows.size() == 0) rows.fail("expected at least one row");
    std::vector<ValidationRow> out;
    std::set<std::string> ids;
    for (size_t i = 0; i < rows.size(); ++i) errors.attempt([&] {
        const JsonNode r = rows[i];
        r.require_object();
        InputErrorCollector fields;
        fields.attempt([&] { r.check_keys({"id", "source", "metric", "numerator", "denominator", "published_ratio", "tolerance", "fitted"}); });
        ValidationRow row;
        row.pointer = r.pointer();
        fields.attempt([&] {
            row.id = non_empty_string(r.at("id"), "row id (\"C2\")");
            if (!ids.insert(row.id).second)
                r.at("id").fail("expected a unique row id, " + quote_for_message(row.id) + " appears twice");
        });
        fields.attempt([&] { row.source = r.has("source") ? non_empty_string(r.at("source"), "source") : source; });
        fields.attempt([&] {
            if (r.has("fitted")) row.fitted = non_empty_string(r.at("fitted"), "note of what was fitted to this row's figures");
        });
        fields.attempt([&] { row.metric = metric_from_json(r.at("metric")); });
        const bool num = fields.attempt([&] { row.numerator = side_from_json(r.at("numerator"), sc); });
        const bool den = fields.attempt([&] { row.denominator = side_from_json(r.at("denominator"), sc); });
        const bool sides = num && den;
        if (sides)
            fields.attempt([&] {
                if (row.numerator.case_name == row.denominator.case_name && row.numerator.policy == row.denominator.policy)
                    r.at("denominator").fail("expected a (case, policy) pair other than the numerator's (" +
                                             quote_for_message(row.numerator.case_name) + ", " +
                                             quote_for_message(row.numerator.policy) + ")");
                if (row.numerator.id == row.denominator.id)
                    r.at("denominator").at("id").fail("expected a publication row other than the numerator's, " +
                                                      quote_for_message(row.numerator.id));
            });
        fields.attempt([&] {
            const JsonNode pr = r.at("published_ratio");
            row.published_ratio = pr.as_double(0, 1e9);
            if (!(row.published_ratio > 0)) pr.fail("expected a published ratio above 0, got 0");
            if (!sides) return;  // the figures to compare with are not known
            const double figures = row.numerator.published / row.denominator.published;
            if (std::fabs(figures / row.published_ratio - 1) > kRatioRounding) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "expected the ratio of the published figures (%g / %g = %.4f) within 1%%, got %g",
                              row.numerator.published, row.denominator.published, figures, row.published_ratio);
                pr.fail(buf);
            }
        });
        fields.attempt([&] {
            if (auto t = r.get("tolerance")) {
                row.tolerance = t->as_double(-1e18, 1e18);
                if (!(row.tolerance > 0 && row.tolerance <= 1))
                    t->fail("expected a tolerance in (0, 1] (0.20: within 20%), got " + t->raw().dump());
            }
        });
        fields.finish();
        out.push_back(std::move(row));
    });
    errors.finish();
    return out;
}

std::string default_validation_dir() {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const fs::path installed = exe.parent_path().parent_path() / "share" / "wakesim" / "scenarios" / "validation";
        if (fs::is_directory(installed)) return installed.string();
    }
#ifdef WAKESIM_SOURCE_SCENARIOS_DIR
    if (fs::is_directory(WAKESIM_SOURCE_SCENARIOS_DIR "/validation")) return WAKESIM_SOURCE_SCENARIOS_DIR "/validation";
#endif
    throw InputError("scenarios/validation", "",
                     "expected a directory of validation scenarios: give it (wakesim validate DIR); none is "
                     "installed next to the program");
}

std::vector<std::string> validation_files(const std::vector<std::string>& args) {
    const std::vector<std::string> given = args.empty() ? std::vector<std::string>{default_validation_dir()} : args;
    std::vector<std::string> files;
    for (const std::string& a : given) {
        std::error_code ec;
        if (fs::is_directory(a, ec)) {
            std::vector<std::string> in_dir;
            for (const auto& e : fs::directory_iterator(a))
                if (e.path().extension() == ".json" && e.is_regular_file()) in_dir.push_back(e.path().string());
            if (in_dir.empty()) throw InputError(a, "", "expected a directory holding validation scenarios (*.json); it has none");
            std::sort(in_dir.begin(), in_dir.end());
            files.insert(files.end(), in_dir.begin(), in_dir.end());
        } else {
            files.push_back(a);  // the loader names a missing file or one that is not a regular file
        }
    }
    return files;
}

std::vector<Scenario> load_validation_scenarios(const std::vector<std::string>& files) {
    std::vector<Scenario> out;
    std::map<std::string, std::string> seen;  // row id -> file
    for (const std::string& f : files) {
        Scenario sc = load_scenario(f);
        if (sc.validation.empty())
            throw InputError(f, "", "missing required key \"validation\": a validation scenario states the published "
                                    "comparisons it reproduces (docs/validation.md)");
        for (const ValidationRow& r : sc.validation) {
            auto [it, fresh] = seen.emplace(r.id, f);
            if (!fresh)
                throw InputError(f, r.pointer + "/id", "expected row ids unique across the validation scenarios, " +
                                                           quote_for_message(r.id) + " is also in " + it->second);
        }
        out.push_back(std::move(sc));
    }
    return out;
}

RowVerdict judge_ratio(double published_ratio, double simulated_ratio, double tolerance) {
    RowVerdict v;
    v.error = simulated_ratio / published_ratio - 1;
    v.no_material_change = std::fabs(published_ratio - 1) <= tolerance;
    if (v.no_material_change)
        v.direction_ok = std::fabs(simulated_ratio - 1) <= tolerance;
    else
        v.direction_ok = (published_ratio > 1) == (simulated_ratio > 1) && simulated_ratio != 1;
    v.magnitude_ok = std::fabs(v.error) <= tolerance;
    return v;
}

namespace {

struct Pair {
    size_t scenario;
    std::string case_name, policy;
    auto key() const { return std::tie(scenario, case_name, policy); }
    bool operator<(const Pair& o) const { return key() < o.key(); }
};

struct Job {
    size_t pair;
    uint64_t seed;
};

template <class T>
const T& named(const std::vector<T>& v, const std::string& name) {
    for (const auto& x : v)
        if (x.name == name) return x;
    throw std::logic_error("validation: no case or policy " + name);  // parse_validation_section checked
}

}  // namespace

std::vector<ValidationResult> run_validation(const std::vector<Scenario>& scenarios, int jobs) {
    // The distinct (scenario, case, policy) pairs the rows compare, in the order rows name them.
    std::vector<Pair> pairs;
    std::map<Pair, size_t> index;
    auto add = [&](size_t s, const ValidationSide& side) {
        Pair p{s, side.case_name, side.policy};
        if (index.emplace(p, pairs.size()).second) pairs.push_back(p);
    };
    for (size_t s = 0; s < scenarios.size(); ++s)
        for (const ValidationRow& r : scenarios[s].validation) {
            add(s, r.numerator);
            add(s, r.denominator);
        }
    std::vector<Job> work;
    for (size_t i = 0; i < pairs.size(); ++i)
        for (uint64_t seed : scenarios[pairs[i].scenario].seeds) work.push_back({i, seed});

    std::vector<RunResult> results(work.size());
    std::vector<std::exception_ptr> errors(work.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i = next++; i < work.size(); i = next++) {
            try {
                const Pair& p = pairs[work[i].pair];
                const Scenario& sc = scenarios[p.scenario];
                const CaseSpec& c = named(sc.cases, p.case_name);
                const Policy& pol = named(sc.policies, p.policy);
                results[i] = run_case(sc, c, pol, make_run_spec(sc, c, pol, work[i].seed));
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    run_on_threads(jobs, work.size(), worker);
    // The first failure in the jobs' order, whatever the thread count.
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);

    std::vector<ValidationResult> out;
    for (size_t s = 0; s < scenarios.size(); ++s) {
        const Scenario& sc = scenarios[s];
        for (const ValidationRow& row : sc.validation) {
            // The metric's value in each seed (the scenario's seed order), and whether every run
            // completed.
            auto by_seed = [&](const ValidationSide& side, std::vector<bool>& completed) {
                const size_t pi = index.at(Pair{s, side.case_name, side.policy});
                std::vector<double> values;
                for (size_t i = 0; i < work.size(); ++i) {
                    if (work[i].pair != pi) continue;
                    values.push_back(results[i].metrics.get(row.metric));
                    completed.push_back(results[i].completed);
                }
                return values;
            };
            auto mean = [](const std::vector<double>& v) {
                return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
            };
            ValidationResult v;
            v.scenario = sc.name;
            v.file = sc.file;
            v.row = row;
            std::vector<bool> num_done, den_done;
            const std::vector<double> num = by_seed(row.numerator, num_done);
            const std::vector<double> den = by_seed(row.denominator, den_done);
            v.completed = std::all_of(num_done.begin(), num_done.end(), [](bool b) { return b; }) &&
                          std::all_of(den_done.begin(), den_done.end(), [](bool b) { return b; });
            v.seeds = num.size();
            v.numerator = mean(num);
            v.denominator = mean(den);
            if (!(v.denominator > 0))
                throw InputError(sc.file, row.pointer + "/metric",
                                 "expected a metric that is above 0 for the denominator; " +
                                     std::string(metric_def(row.metric).name) + " is 0 for case " +
                                     quote_for_message(row.denominator.case_name) + ", policy " +
                                     quote_for_message(row.denominator.policy));
            v.simulated_ratio = v.numerator / v.denominator;
            const RowVerdict verdict = judge_ratio(row.published_ratio, v.simulated_ratio, row.tolerance);
            v.error = verdict.error;
            v.no_material_change = verdict.no_material_change;
            v.direction_ok = verdict.direction_ok;
            v.magnitude_ok = verdict.magnitude_ok;
            v.pass = v.direction_ok && v.magnitude_ok && v.completed;
            for (size_t k = 0; k < num.size(); ++k) {
                const double r = den[k] > 0 ? num[k] / den[k] : std::numeric_limits<double>::infinity();
                v.ratio_by_seed.push_back(r);
                const RowVerdict one = judge_ratio(row.published_ratio, r, row.tolerance);
                // A seed passes as a row does: its two runs must have completed too.
                v.seeds_passing += one.direction_ok && one.magnitude_ok && num_done[k] && den_done[k];
            }
            out.push_back(std::move(v));
        }
    }
    return out;
}

namespace {

// A row whose figures were fitted checks the fit, not a prediction: it says so.
std::string verdict_text(const ValidationResult& v) {
    const bool fitted = !v.row.fitted.empty();
    if (v.pass) return fitted ? "pass (fitted)" : "pass";
    std::string why;
    if (!v.direction_ok) why += "direction";
    if (!v.magnitude_ok) why += std::string(why.empty() ? "" : ", ") + "magnitude";
    if (!v.completed) why += std::string(why.empty() ? "" : ", ") + "run incomplete";
    if (fitted) why += ", fitted";
    return "FAIL (" + why + ")";
}

// Four significant figures for the simulated figures (3.070, 128.5, 6229); published figures are
// printed as given.
std::string figure(double x) { return format_number(std::fabs(x) >= 1000 ? "%.0f" : "%#.4g", x); }

std::string given(double x) { return format_number("%g", x); }

std::string percent(double x) {
    const std::string p = format_number("%+.1f%%", x * 100);
    return p == "-0.0%" ? "+0.0%" : p;
}

// The lowest and highest of the seeds' own ratios; a single seed has no range.
std::string seed_range(const ValidationResult& v) {
    if (v.ratio_by_seed.size() < 2) return "-";
    const auto [lo, hi] = std::minmax_element(v.ratio_by_seed.begin(), v.ratio_by_seed.end());
    return fixed(*lo, 3) + "-" + fixed(*hi, 3);
}

std::vector<std::string> header() {
    return {"row",   "compared",  "metric",    "published",     "simulated", "published ratio", "simulated ratio",
            "error", "tolerance", "by seed", "seeds passing", "result"};
}

std::vector<std::string> cells(const ValidationResult& v) {
    const ValidationRow& r = v.row;
    const std::string unit = metric_def(r.metric).unit;
    return {r.id,
            r.numerator.id + "/" + r.denominator.id,
            std::string(metric_def(r.metric).name) + " (" + unit + ")",
            given(r.numerator.published) + " / " + given(r.denominator.published),
            figure(v.numerator) + " / " + figure(v.denominator),
            fixed(r.published_ratio, 3) + (v.no_material_change ? " (~1)" : ""),
            fixed(v.simulated_ratio, 3),
            percent(v.error),
            given(r.tolerance * 100) + "%",
            seed_range(v),
            std::to_string(v.seeds_passing) + "/" + std::to_string(v.ratio_by_seed.size()),
            verdict_text(v)};
}

size_t passed(const std::vector<ValidationResult>& results) {
    return static_cast<size_t>(std::count_if(results.begin(), results.end(), [](const auto& v) { return v.pass; }));
}

size_t fitted_rows(const std::vector<ValidationResult>& results) {
    return static_cast<size_t>(std::count_if(results.begin(), results.end(), [](const auto& v) { return !v.row.fitted.empty(); }));
}

// One line per scenario: its name, seeds and the publication of its rows.
std::string sources(const std::vector<ValidationResult>& results) {
    std::string out;
    for (size_t k = 0; k < results.size(); ++k) {
        const ValidationResult& v = results[k];
        if (k > 0 && results[k - 1].file == v.file && results[k - 1].row.source == v.row.source) continue;
        out += v.scenario + " (" + std::to_string(v.seeds) + (v.seeds == 1 ? " seed" : " seeds") + "): " + v.row.source + "\n";
    }
    return out;
}

std::string summary(const std::vector<ValidationResult>& results) {
    const size_t p = passed(results);
    const size_t fitted = fitted_rows(results);
    std::string out = std::to_string(p) + " passed, " + std::to_string(results.size() - p) + " failed";
    if (fitted > 0) out += " (" + std::to_string(fitted) + (fitted == 1 ? " row checks" : " rows check") + " fitted figures, not predictions)";
    return out + "\n";
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    for (size_t at = 0; at < text.size();) {
        const size_t nl = text.find('\n', at);
        lines.push_back(text.substr(at, nl - at));
        at = nl + 1;
    }
    return lines;
}

// Display width: the UTF-8 continuation bytes (of "µs") take no column.
size_t width(const std::string& s) {
    size_t w = 0;
    for (unsigned char c : s) w += (c & 0xC0) != 0x80;
    return w;
}

}  // namespace

std::string validation_table(const std::vector<ValidationResult>& results) {
    std::vector<std::vector<std::string>> rows{header()};
    for (const auto& v : results) rows.push_back(cells(v));
    std::vector<size_t> w(rows.front().size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], width(r[i]));
    std::string out = sources(results) + "\n";
    for (size_t k = 0; k < rows.size(); ++k) {
        std::string line;
        for (size_t i = 0; i < rows[k].size(); ++i) {
            line += rows[k][i];
            if (i + 1 < rows[k].size()) line += std::string(w[i] - width(rows[k][i]) + 2, ' ');
        }
        out += line + "\n";
    }
    return out + summary(results);
}

std::string validation_markdown(const std::vector<ValidationResult>& results) {
    std::string out;
    for (const std::string& line : split_lines(sources(results))) out += "- " + line + "\n";
    out += "\n| scenario |";
    for (const auto& h : header()) out += " " + h + " |";
    out += "\n|---|";
    for (size_t i = 0; i < header().size(); ++i) out += "---|";
    out += "\n";
    for (const auto& v : results) {
        out += "| " + v.scenario + " |";
        for (const auto& c : cells(v)) out += " " + c + " |";
        out += "\n";
    }
    return out + "\n" + summary(results);
}

nlohmann::json validation_json(const std::vector<ValidationResult>& results) {
    auto round6 = [](double x) { return std::round(x * 1e6) / 1e6; };
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& v : results) {
        const ValidationRow& r = v.row;
        auto side = [&](const ValidationSide& s, double simulated) {
            return nlohmann::json{{"id", s.id}, {"case", s.case_name}, {"policy", s.policy},
                                  {"published", s.published}, {"simulated", round6(simulated)}};
        };
        nlohmann::json by_seed = nlohmann::json::array();
        for (double x : v.ratio_by_seed) by_seed.push_back(std::isfinite(x) ? nlohmann::json(round6(x)) : nlohmann::json(nullptr));
        rows.push_back({{"id", r.id},
                        {"scenario", v.scenario},
                        {"source", r.source},
                        {"metric", metric_def(r.metric).name},
                        {"unit", metric_def(r.metric).unit},
                        {"seeds", v.seeds},
                        {"numerator", side(r.numerator, v.numerator)},
                        {"denominator", side(r.denominator, v.denominator)},
                        {"published_ratio", r.published_ratio},
                        {"simulated_ratio", round6(v.simulated_ratio)},
                        {"simulated_ratio_by_seed", by_seed},
                        {"seeds_passing", v.seeds_passing},
                        {"error", round6(v.error)},
                        {"tolerance", r.tolerance},
                        {"no_material_change", v.no_material_change},
                        {"direction_ok", v.direction_ok},
                        {"magnitude_ok", v.magnitude_ok},
                        {"completed", v.completed},
                        {"fitted", r.fitted.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.fitted)},
                        {"pass", v.pass}});
    }
    const size_t p = passed(results);
    return {{"rows", rows}, {"passed", p}, {"failed", results.size() - p}, {"fitted_rows", fitted_rows(results)}};
}

}  // namespace wakesim
