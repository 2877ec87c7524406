#include "experiment/calibrate.h"

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>

#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "hw/machine_profile.h"
#include "input/json_input.h"
#include "topology/topology.h"
#include "workloads/workloads.h"

namespace wakesim {

namespace {

namespace fs = std::filesystem;

// A direction of the weighted Jacobian whose singular value is below this moves the fit by less
// than 0.1 sigma for an e-fold change of the parameters: the measurements do not pin it down.
constexpr double kIdentifiable = 0.1;
constexpr double kNullShare = 0.1;  // see calibrate(): a parameter's share of an unidentified direction
constexpr double kStep = 0.05;  // finite-difference step in log-parameter space (about 5%)
// When the narrow slopes promise a gain no damped step gives, the figures jump at that scale (a
// run's regime that flips with a nanosecond of a cost): the slopes are taken over about 28%
// instead, which follows the trend under the jumps, for the rest of the fit.
constexpr double kWideStep = 0.25;

std::string dir_of(const std::string& file) {
    const fs::path p = fs::path(file).parent_path();
    return p.empty() ? "." : p.string();
}

std::string canonical(const std::string& path) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(path, ec);
    return ec ? path : c.string();
}

// The machine file a scenario's or calibration's "machine" string names (scenario.cpp's rule).
std::string machine_file_of(const JsonNode& n, const std::string& base_dir) {
    const std::string s = n.as_file_name();
    if (!is_machine_path(s)) {
        if (!is_machine_name(s)) {
            const std::string hint = machine_name_hint(s);
            n.fail("expected a machine (" + machine_names_text() + ") or a machine file (\"box.json\"); got " +
                   quote_for_message(s) + (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
        }
        return machine_path(s);
    }
    const std::string path = fs::path(s).is_absolute() ? s : base_dir + "/" + s;
    if (std::error_code ec; !fs::exists(path, ec)) n.fail("expected a machine file; " + quote_for_message(path) + " does not exist");
    return path;
}

// The profile parameters a calibration may fit: every number of the profile, by its JSON key.
struct Numeric {
    std::string key, name, unit;
};
const std::vector<Numeric>& numeric_params() {
    static const std::vector<Numeric> v = [] {
        std::vector<Numeric> out;
        MachineProfile p;
        const auto lines = p.describe();
        for (const auto& info : MachineProfile::params()) {
            if (std::string(info.unit) == "bool" || std::string(info.unit) == "mask") continue;  // not continuous
            for (const auto& l : lines)
                if (l.name == info.name) out.push_back({l.key, l.name, info.unit});
        }
        return out;
    }();
    return v;
}

// "idle_states/N/exit_latency" -> N, or -1.
int idle_state_index(const std::string& key) {
    static const std::string pre = "idle_states/", post = "/exit_latency";
    if (key.size() <= pre.size() + post.size() || key.compare(0, pre.size(), pre) != 0 ||
        key.compare(key.size() - post.size(), post.size(), post) != 0)
        return -1;
    const std::string num = key.substr(pre.size(), key.size() - pre.size() - post.size());
    if (num.empty() || num.size() > 2 || !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return -1;
    return std::stoi(num);
}

std::vector<std::string> param_key_names(const MachineProfile& prof) {
    std::vector<std::string> keys;
    for (const auto& n : numeric_params()) keys.push_back(n.key);
    for (size_t i = 0; i < prof.effective_idle_states().size(); ++i)
        keys.push_back("idle_states/" + std::to_string(i) + "/exit_latency");
    return keys;
}

// The profile key a calibration parameter overrides in a scenario ("idle_states" for a state's
// exit latency).
std::string override_key(const std::string& key) { return idle_state_index(key) >= 0 ? "idle_states" : key; }

double current_value(const MachineProfile& prof, const std::string& key) {
    if (const int i = idle_state_index(key); i >= 0) return static_cast<double>(prof.effective_idle_states()[static_cast<size_t>(i)].exit_ns);
    for (const auto& n : numeric_params())
        if (n.key == key) return static_cast<double>(prof.get(n.name));
    throw std::logic_error("calibrate: no parameter " + key);
}

// A value in the parameter's unit, read as a scenario writes it: a duration for ns, a size in
// whole KiB for KiB, else a count (within the workload's range for a workload's count).
double read_value(const JsonNode& n, const CalibParam& p) {
    if (p.unit == "ns") return static_cast<double>(n.as_duration_ns(1, int64_t{10} * 1000000000));
    if (p.unit == "KiB") {
        const int64_t bytes = n.as_size_bytes(1024, int64_t{1} << 40);
        if (bytes % 1024 != 0) n.fail("expected a whole number of KiB (sizes are fitted in KiB), got " + n.raw().dump());
        return static_cast<double>(bytes / 1024);
    }
    if (p.allowed_max > 0) return static_cast<double>(n.as_int(static_cast<int64_t>(p.allowed_min), static_cast<int64_t>(p.allowed_max)));
    return static_cast<double>(n.as_int(1, 100000));
}

std::string show_value(double v, const std::string& unit) {
    if (unit == "ns") return format_duration(static_cast<int64_t>(std::llround(v)));
    return format_number("%.0f", v) + (unit == "%" ? "%" : unit == "Hz" ? " Hz" : unit.empty() ? "" : " " + unit);
}

// A workload parameter's value as a scenario writes it: "1500ns", "64KiB" or a count.
nlohmann::json workload_value(const CalibParam& p, int64_t v) {
    if (p.unit == "ns") return std::to_string(v) + "ns";
    if (p.unit == "KiB") return std::to_string(v) + "KiB";
    return v;
}

Metric numeric_metric(const JsonNode& n) {
    const std::string name = n.as_string();
    const MetricDef* d = find_metric(name);
    if (d && (d->type == MetricType::integer || d->type == MetricType::real)) return d->id;
    std::vector<std::string> names;
    for (const MetricDef& m : metric_table())
        if (m.type == MetricType::integer || m.type == MetricType::real) names.push_back(m.name);
    const std::string hint = nearest_name(name, names);
    n.fail("expected a numeric metric (`wakesim list metrics`: usec_per_op, ops_per_sec, sim_time_ns, ...), got " +
           quote_for_message(name) + (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
}

// A measured figure in the metric's unit: a number, or a duration when the unit is ns.
double measured(const JsonNode& n, Metric m, const char* what) {
    const bool ns = std::string(metric_def(m).unit) == "ns";
    const double v = ns && n.is_string() ? static_cast<double>(n.as_duration_ns(1, int64_t{3600} * 1000000000))
                                         : n.as_double(0, 1e18);
    if (!(v > 0)) n.fail(std::string("expected the ") + what + ", a number above 0" + (ns ? " or a duration (\"0.78s\")" : ""));
    return v;
}

CalibMeasurement read_measurement(const JsonNode& n, const std::string& calib_dir, const std::string& machine_path) {
    n.require_object();
    n.check_keys({"name", "scenario", "case", "policy", "metric", "value", "spread", "seeds"});
    CalibMeasurement m;
    m.pointer = n.pointer();
    m.name = n.at("name").as_string();
    if (m.name.empty()) n.at("name").fail("expected a non-empty name");
    const JsonNode sn = n.at("scenario");
    std::string path = sn.as_file_name();
    if (!fs::path(path).is_absolute()) path = calib_dir + "/" + path;
    if (std::error_code ec; !fs::exists(path, ec)) sn.fail("expected a scenario file; " + quote_for_message(path) + " does not exist");
    m.scenario_file = path;
    m.scenario = load_json_file(path);
    const Scenario sc = parse_scenario(m.scenario, path);
    // The scenario must run on the machine being fitted: its costs are what moves.
    const JsonNode sroot(m.scenario, path);
    const JsonNode mach = sroot.at("machine");
    std::string its;
    if (mach.is_string())
        its = machine_file_of(mach, dir_of(path));
    else if (mach.is_object() && mach.has("preset"))
        its = machine_file_of(mach.at("preset"), dir_of(path));
    if (canonical(its) != canonical(machine_path))
        sn.fail("expected a scenario on the calibration's machine " + quote_for_message(machine_name_of(machine_path)) +
                " (" + quote_for_message(machine_path) + "); " + quote_for_message(path) + " runs on " +
                (its.empty() ? std::string("its own topology")
                             : quote_for_message(machine_name_of(its)) + " (" + quote_for_message(its) + ")"));
    std::vector<std::string> cases, policies;
    for (const auto& c : sc.cases) cases.push_back(c.name);
    for (const auto& p : sc.policies) policies.push_back(p.name);
    // One of the scenario's names; may be left out when the scenario has only one.
    auto named = [&](const char* key, const std::vector<std::string>& names, const std::string& many) {
        if (auto v = n.get(key)) return v->as_enum(names);
        if (names.size() == 1) return names.front();
        n.fail(std::string("expected \"") + key + "\": the scenario " + many);
    };
    m.case_name = named("case", cases, "has " + std::to_string(cases.size()) + " cases");
    m.policy = named("policy", policies, "compares " + std::to_string(policies.size()) + " policies");
    m.metric = numeric_metric(n.at("metric"));
    m.value = measured(n.at("value"), m.metric, "measured value");
    m.spread = measured(n.at("spread"), m.metric, "spread of the measurement (one standard deviation)");
    if (auto s = n.get("seeds")) {
        s->require_array();
        if (s->size() == 0 || s->size() > 100) s->fail("expected 1 to 100 seeds");
        for (size_t i = 0; i < s->size(); ++i) {
            const auto seed = static_cast<uint64_t>((*s)[i].as_int(0, int64_t{1} << 62));
            // A seed twice would weigh its run twice in the measurement's mean.
            if (std::find(m.seeds.begin(), m.seeds.end(), seed) != m.seeds.end())
                (*s)[i].fail("expected distinct seeds, " + std::to_string(seed) + " appears twice");
            m.seeds.push_back(seed);
        }
    } else {
        m.seeds = sc.seeds;
    }
    return m;
}

// "workload/NAME": a numeric parameter that every measurement's workload declares. Its start is
// the value the scenarios give it (all the same) or its declared default.
void read_workload_param(const JsonNode& kn, CalibParam& p, const std::vector<CalibMeasurement>& ms) {
    p.workload = p.key.substr(std::string("workload/").size());
    bool have = false;
    double value = 0;
    for (const auto& m : ms) {
        const nlohmann::json& w = m.scenario.at("workload");
        const std::string kind = w.is_object() && w.contains("kind") && w["kind"].is_string() ? w["kind"].get<std::string>() : "";
        const WorkloadKind* k = find_workload_kind(kind);
        const ParamSpec* ps = nullptr;
        if (k)
            for (const auto& x : k->params)
                if (x.name == p.workload) ps = &x;
        const auto fittable = [](ParamType t) { return t == ParamType::duration || t == ParamType::integer || t == ParamType::size; };
        if (!ps || !fittable(ps->type)) {
            std::vector<std::string> names;
            if (k)
                for (const auto& x : k->params)
                    if (fittable(x.type)) names.push_back("workload/" + x.name);
            const std::string hint = nearest_name(p.key, names);
            kn.fail("expected a duration, size or count parameter of every measurement's workload; " +
                    quote_for_message(m.name) + "'s workload (" + (kind.empty() ? std::string("no kind") : "kind " + quote_for_message(kind)) +
                    ") has no " + quote_for_message(p.workload) + (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
        }
        // Sizes are fitted in whole KiB (the model's working sets are counted in KiB).
        p.unit = ps->type == ParamType::duration ? "ns" : ps->type == ParamType::size ? "KiB" : "";
        p.allowed_min = ps->type == ParamType::size ? std::ceil(static_cast<double>(ps->min) / 1024) : static_cast<double>(ps->min);
        p.allowed_max = ps->type == ParamType::size ? std::floor(static_cast<double>(ps->max) / 1024) : static_cast<double>(ps->max);
        double v = 0;
        if (w.contains(p.workload)) {
            const JsonNode vn = JsonNode(m.scenario, m.scenario_file).at("workload").at(p.workload);
            // A size runs as whole KiB, rounded down (the workloads' size_bytes / 1024).
            v = ps->type == ParamType::duration ? static_cast<double>(vn.as_duration_ns(0, int64_t{3600} * 1000000000))
                : ps->type == ParamType::size   ? static_cast<double>(vn.as_size_bytes(0, int64_t{1} << 40) / 1024)
                                                : static_cast<double>(vn.as_int(0, int64_t{1} << 40));
        } else {
            const ParamValues d = default_params(k->params);
            v = ps->type == ParamType::duration ? static_cast<double>(d.duration_ns(p.workload))
                : ps->type == ParamType::size   ? static_cast<double>(d.size_bytes(p.workload) / 1024)
                                                : static_cast<double>(d.integer(p.workload));
        }
        if (have && v != value)
            kn.fail("expected one value of " + quote_for_message(p.key) + " in every measurement's scenario, or a \"start\"; " +
                    quote_for_message(m.name) + " has " + show_value(v, p.unit) + ", an earlier one " + show_value(value, p.unit));
        have = true;
        value = v;
        // A case that sets it would override the fit in that case.
        const nlohmann::json& cs = m.scenario.contains("cases") ? m.scenario["cases"] : nlohmann::json::array();
        for (const auto& c : cs)
            if (c.is_object() && c.contains("name") && c["name"] == m.case_name && c.contains("set") && c["set"].is_object() &&
                c["set"].contains("workload") && c["set"]["workload"].is_object() && c["set"]["workload"].contains(p.workload))
                kn.fail("expected scenarios whose measured cases leave " + quote_for_message(p.workload) +
                        " to the workload: case " + quote_for_message(m.case_name) + " of " + quote_for_message(m.name) +
                        " sets it, and this calibration fits it");
    }
    p.start = value;
}

CalibParam read_param(const JsonNode& n, const MachineProfile& prof, const std::vector<CalibMeasurement>& ms) {
    n.require_object();
    n.check_keys({"key", "min", "max", "start"});
    CalibParam p;
    p.pointer = n.pointer();
    const JsonNode kn = n.at("key");
    p.key = kn.as_string();
    const bool workload = p.key.rfind("workload/", 0) == 0;
    const std::vector<std::string> keys = param_key_names(prof);
    if (workload) {
        // Its unit, range and start come from the measurements' scenarios. When none could be
        // read, their errors stand alone: bounds read in a guessed unit would add a false one.
        if (ms.empty()) return p;
        read_workload_param(kn, p, ms);
    } else if (std::find(keys.begin(), keys.end(), p.key) == keys.end()) {
        const std::string hint = nearest_name(p.key, keys);
        kn.fail("expected a number of the machine's profile (ctx_switch, wake_remote, ipi_latency, idle_exit, "
                "refill_llc_ns_per_kib, ..., idle_states/N/exit_latency for N below " +
                std::to_string(prof.effective_idle_states().size()) + ") or workload/NAME, got " + quote_for_message(p.key) +
                (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
    }
    if (!workload) {
        p.unit = "ns";
        for (const auto& x : numeric_params())
            if (x.key == p.key) p.unit = x.unit;
    }
    p.min = read_value(n.at("min"), p);
    p.max = read_value(n.at("max"), p);
    // A workload parameter's fit stays within what the workload accepts.
    if (p.allowed_max > 0) {
        const std::string range = "[" + show_value(p.allowed_min, p.unit) + ", " + show_value(p.allowed_max, p.unit) + "]";
        if (p.min < p.allowed_min) n.at("min").fail("expected a bound within " + quote_for_message(p.workload) + "'s range " + range);
        if (p.max > p.allowed_max) n.at("max").fail("expected a bound within " + quote_for_message(p.workload) + "'s range " + range);
    }
    if (!(p.min < p.max)) n.at("max").fail("expected a bound above \"min\" (" + show_value(p.min, p.unit) + ")");
    if (auto s = n.get("start")) {
        p.start = read_value(*s, p);
        if (p.start < p.min || p.start > p.max)
            s->fail("expected a start within [" + show_value(p.min, p.unit) + ", " + show_value(p.max, p.unit) + "]");
    } else {
        if (!workload) p.start = current_value(prof, p.key);
        if (p.start < p.min || p.start > p.max)
            n.fail(std::string("expected bounds around the ") + (workload ? "workload's" : "machine's") + " value " + show_value(p.start, p.unit) + ", or a \"start\" within [" +
                   show_value(p.min, p.unit) + ", " + show_value(p.max, p.unit) + "]");
    }
    return p;
}

}  // namespace

CalibSpec load_calibration(const std::string& path) {
    const nlohmann::json doc = load_json_file(path);
    const JsonNode root(doc, path);
    root.require_object();
    // Every mistake of the file in one pass: the measurements and parameters need the machine.
    InputErrorCollector errors;
    errors.attempt([&] { root.check_keys({"description", "machine", "measurements", "parameters", "max_iterations"}); });
    errors.attempt([&] {
        if (auto d = root.get("description")) (void)d->as_string();
    });
    CalibSpec spec;
    spec.file = path;
    errors.attempt([&] { spec.max_iterations = static_cast<int>(root.int_or("max_iterations", 20, 1, 200)); });
    std::optional<MachineProfile> prof;
    errors.attempt([&] {
        spec.machine_path = machine_file_of(root.at("machine"), dir_of(path));
        spec.machine_name = machine_name_of(spec.machine_path);
        prof = load_machine_file(spec.machine_path).profile;
    });
    if (!prof) errors.finish();

    const auto list = [&](const char* key, const char* what) -> std::optional<JsonNode> {
        std::optional<JsonNode> out;
        errors.attempt([&] {
            JsonNode n = root.at(key);
            n.require_array();
            if (n.size() == 0) n.fail(std::string("expected at least one ") + what);
            out = n;
        });
        return out;
    };
    const std::optional<JsonNode> ms = list("measurements", "measurement");
    for (size_t i = 0; ms && i < ms->size(); ++i)
        errors.attempt([&] { spec.measurements.push_back(read_measurement((*ms)[i], dir_of(path), spec.machine_path)); });
    const std::optional<JsonNode> ps_node = list("parameters", "parameter to fit");
    if (!ps_node) errors.finish();
    const JsonNode& ps = *ps_node;
    for (size_t i = 0; i < ps.size(); ++i)
        errors.attempt([&] {
            CalibParam p = read_param(ps[i], *prof, spec.measurements);
            for (const auto& q : spec.params)
                if (override_key(q.key) == override_key(p.key) && (q.key == p.key || override_key(p.key) != "idle_states"))
                    ps[i].at("key").fail("expected each parameter once; " + quote_for_message(p.key) + " is already fitted");
            spec.params.push_back(std::move(p));
        });
    errors.finish();
    // A scenario that sets a fitted key itself would override the fit in that one measurement.
    for (size_t i = 0; i < spec.measurements.size(); ++i) {
        const auto& m = spec.measurements[i];
        const nlohmann::json& mach = m.scenario.at("machine");
        if (!mach.is_object() || !mach.contains("profile")) continue;
        for (const auto& p : spec.params)
            if (p.workload.empty() && mach["profile"].contains(override_key(p.key)))
                JsonNode(doc, path, m.pointer + "/scenario")
                    .fail("expected a scenario that leaves " + quote_for_message(override_key(p.key)) +
                          " to the machine: this calibration fits it");
    }
    return spec;
}

namespace {

// The "profile" overrides that give the parameters the values `v`, as a scenario writes them.
nlohmann::json overrides_for(const CalibSpec& spec, const MachineProfile& base, const std::vector<int64_t>& v) {
    MachineProfile p = base;
    for (size_t j = 0; j < spec.params.size(); ++j) {
        const std::string& key = spec.params[j].key;
        if (!spec.params[j].workload.empty()) continue;
        if (const int i = idle_state_index(key); i >= 0) {
            if (p.idle_states.empty()) p.idle_states = p.effective_idle_states();
            p.idle_states[static_cast<size_t>(i)].exit_ns = v[j];
        } else {
            for (const auto& n : numeric_params())
                if (n.key == key) p.set(n.name, v[j]);
        }
    }
    nlohmann::json out = nlohmann::json::object();
    for (const auto& line : p.describe())
        for (const auto& prm : spec.params)
            if (prm.workload.empty() && override_key(prm.key) == line.key) out[line.key] = nlohmann::json::parse(line.typed);
    return out;
}

// The simulated metric of every measurement (mean over its seeds) at each of `points`.
std::vector<std::vector<double>> evaluate(const CalibSpec& spec, const MachineProfile& base,
                                          const std::vector<std::vector<int64_t>>& points, int jobs, size_t& runs) {
    struct Job {
        size_t point, meas;
        uint64_t seed;
    };
    std::vector<Job> work;
    for (size_t p = 0; p < points.size(); ++p)
        for (size_t m = 0; m < spec.measurements.size(); ++m)
            for (uint64_t s : spec.measurements[m].seeds) work.push_back({p, m, s});
    // One scenario per (point, measurement), its machine the calibrated one with the overrides.
    std::vector<Scenario> scenarios(points.size() * spec.measurements.size());
    std::vector<std::exception_ptr> errors(std::max(work.size(), scenarios.size()));
    std::atomic<size_t> next{0};
    run_on_threads(jobs, scenarios.size(), [&] {
        for (size_t i = next++; i < scenarios.size(); i = next++) {
            try {
                const CalibMeasurement& m = spec.measurements[i % spec.measurements.size()];
                nlohmann::json doc = m.scenario;
                nlohmann::json& mach = doc["machine"];
                if (!mach.is_object()) mach = nlohmann::json::object();
                mach["preset"] = fs::absolute(spec.machine_path).string();
                const nlohmann::json ov = overrides_for(spec, base, points[i / spec.measurements.size()]);
                for (auto it = ov.begin(); it != ov.end(); ++it) mach["profile"][it.key()] = it.value();
                const std::vector<int64_t>& v = points[i / spec.measurements.size()];
                for (size_t j = 0; j < spec.params.size(); ++j)
                    if (const CalibParam& p = spec.params[j]; !p.workload.empty())
                        doc["workload"][p.workload] = workload_value(p, v[j]);
                scenarios[i] = parse_scenario(doc, m.scenario_file);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    });
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    std::vector<double> value(work.size());
    next = 0;
    run_on_threads(jobs, work.size(), [&] {
        for (size_t i = next++; i < work.size(); i = next++) {
            try {
                const Job& j = work[i];
                const CalibMeasurement& m = spec.measurements[j.meas];
                const Scenario& sc = scenarios[j.point * spec.measurements.size() + j.meas];
                const CaseSpec* c = nullptr;
                const Policy* pol = nullptr;
                for (const auto& x : sc.cases)
                    if (x.name == m.case_name) c = &x;
                for (const auto& x : sc.policies)
                    if (x.name == m.policy) pol = &x;
                const RunResult r = run_case(sc, *c, *pol, make_run_spec(sc, *c, *pol, j.seed));
                if (!r.completed)
                    throw InputError(spec.file, m.pointer,
                                     "expected a run that completes; case " + quote_for_message(m.case_name) +
                                         " reached its time limit with these parameter values");
                value[i] = r.metrics.get(m.metric);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    });
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    runs += work.size();
    std::vector<std::vector<double>> out(points.size(), std::vector<double>(spec.measurements.size(), 0.0));
    for (size_t i = 0; i < work.size(); ++i)
        out[work[i].point][work[i].meas] += value[i] / static_cast<double>(spec.measurements[work[i].meas].seeds.size());
    return out;
}

}  // namespace

CalibResult calibrate(const CalibSpec& spec, int jobs) {
    const MachineProfile base = load_machine_file(spec.machine_path).profile;
    return calibrate(spec, [&](const std::vector<std::vector<int64_t>>& points, size_t& runs) {
        return evaluate(spec, base, points, jobs, runs);
    });
}

CalibResult calibrate(const CalibSpec& spec, const CalibEvaluator& evaluate) {
    const size_t n = spec.params.size(), m = spec.measurements.size();
    CalibResult res;
    res.spec = &spec;
    Eigen::VectorXd lo(n), hi(n), u(n), y(m), sigma(m);
    for (size_t j = 0; j < n; ++j) {
        lo[j] = std::log(spec.params[j].min);
        hi[j] = std::log(spec.params[j].max);
        u[j] = std::log(spec.params[j].start);
    }
    for (size_t i = 0; i < m; ++i) {
        y[i] = spec.measurements[i].value;
        sigma[i] = spec.measurements[i].spread;
    }
    // Parameter values are whole units (ns, KiB, counts): the point simulated is the rounded one.
    auto values = [&](const Eigen::VectorXd& x) {
        std::vector<int64_t> v(n);
        for (size_t j = 0; j < n; ++j) v[j] = std::max<int64_t>(1, std::llround(std::exp(x[j])));
        return v;
    };
    auto residuals = [&](const std::vector<double>& sim) {
        Eigen::VectorXd r(m);
        for (size_t i = 0; i < m; ++i) r[i] = (sim[i] - y[i]) / sigma[i];
        return r;
    };
    // The Jacobian of the residuals in log-parameter space by forward differences (backward at
    // the upper bound), each column over the step actually taken after rounding.
    auto jacobian = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& r, double fd) {
        std::vector<std::vector<int64_t>> pts;
        std::vector<double> step(n);
        const std::vector<int64_t> v0 = values(x);
        for (size_t j = 0; j < n; ++j) {
            Eigen::VectorXd xs = x;
            xs[j] = x[j] + fd <= hi[j] ? x[j] + fd : x[j] - fd;
            std::vector<int64_t> v = values(xs);
            if (v[j] == v0[j]) v[j] += xs[j] > x[j] ? 1 : -1;  // a step below one unit: one unit
            step[j] = std::log(static_cast<double>(v[j])) - std::log(static_cast<double>(v0[j]));
            pts.push_back(std::move(v));
        }
        const auto sims = evaluate(pts, res.runs);
        res.evaluations += pts.size();
        Eigen::MatrixXd J(m, n);
        for (size_t j = 0; j < n; ++j) J.col(static_cast<Eigen::Index>(j)) = (residuals(sims[j]) - r) / step[j];
        return J;
    };

    std::vector<double> sim = evaluate({values(u)}, res.runs).front();
    res.evaluations += 1;
    const std::vector<double> sim_start = sim;
    Eigen::VectorXd r = residuals(sim);
    double chi2 = r.squaredNorm();
    res.chi2_start = chi2;
    double lambda = 1e-2;
    double fd = kStep;
    for (int it = 0; it < spec.max_iterations; ++it) {
        res.iterations = it + 1;
        const Eigen::MatrixXd J = jacobian(u, r, fd);
        const Eigen::MatrixXd A = J.transpose() * J;
        const Eigen::VectorXd g = J.transpose() * r;
        bool accepted = false;
        double gain = 0, moved = 0, promised = 0;
        for (int tries = 0; tries < 8 && !accepted; ++tries) {
            Eigen::MatrixXd M = A;
            for (size_t j = 0; j < n; ++j) M(j, j) += lambda * A(j, j) + 1e-12;
            const Eigen::VectorXd delta = M.ldlt().solve(-g);
            const Eigen::VectorXd un = delta.cwiseMax(lo - u).cwiseMin(hi - u) + u;
            if (values(un) == values(u)) break;  // the step rounds to nothing: done
            // What the linearised residuals r + J d promise the first step gains: |r|^2 - |r + J d|^2.
            if (tries == 0) promised = -(2 * g.dot(un - u) + (un - u).dot(A * (un - u)));
            const std::vector<double> sn = evaluate({values(un)}, res.runs).front();
            res.evaluations += 1;
            const Eigen::VectorXd rn = residuals(sn);
            if (rn.squaredNorm() < chi2) {
                gain = chi2 - rn.squaredNorm();
                moved = (un - u).cwiseAbs().maxCoeff();
                u = un;
                r = rn;
                sim = sn;
                chi2 = rn.squaredNorm();
                lambda = std::max(lambda / 3, 1e-7);
                accepted = true;
            } else {
                lambda *= 4;
            }
        }
        // Slopes that promised a tenth of the chi-square (and half a unit) and gave nothing were
        // not the figures' slopes: a run's regime that flips with a nanosecond, say. Not a minimum.
        if (!accepted && promised > std::max(0.1 * chi2, 0.5)) {
            if (fd == kStep) {
                fd = kWideStep;
                res.wide_steps = true;
                lambda = 1e-2;
                continue;
            }
            res.stalled = true;
            res.promised = promised;
            break;
        }
        if (!accepted || gain < 1e-4 * chi2 + 1e-9 || moved < 1e-3) {
            res.converged = true;
            break;
        }
    }
    res.chi2 = chi2;

    // Uncertainties from the Jacobian at the optimum: covariance of log-parameters (J^T J)^-1 over
    // the directions the measurements identify.
    const Eigen::MatrixXd J = jacobian(u, r, fd);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(J, Eigen::ComputeFullV);
    const Eigen::VectorXd s = svd.singularValues();
    const Eigen::MatrixXd V = svd.matrixV();
    for (Eigen::Index k = 0; k < s.size(); ++k) res.singular_values.push_back(s[k]);
    Eigen::VectorXd var = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n));
    Eigen::VectorXd null_weight = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(n));
    std::vector<std::vector<size_t>> partners(n);
    int identified = 0;
    for (Eigen::Index k = 0; k < static_cast<Eigen::Index>(n); ++k) {
        const double sk = k < s.size() ? s[k] : 0.0;
        const Eigen::VectorXd vk = V.col(k);
        if (sk >= kIdentifiable) {
            var += vk.cwiseProduct(vk) / (sk * sk);
            ++identified;
            continue;
        }
        // A parameter with a tenth of its weight along an unidentified direction moves freely
        // with the others there: its uncertainty cannot be stated.
        null_weight += vk.cwiseProduct(vk);
        for (size_t j = 0; j < n; ++j)
            if (vk[static_cast<Eigen::Index>(j)] * vk[static_cast<Eigen::Index>(j)] > kNullShare)
                for (size_t q = 0; q < n; ++q)
                    if (q != j && vk[static_cast<Eigen::Index>(q)] * vk[static_cast<Eigen::Index>(q)] > kNullShare) partners[j].push_back(q);
    }
    // A fit that misses its measurements by more than their spreads (chi-square above its degrees
    // of freedom) has spreads too small for this model: its uncertainties are scaled by
    // sqrt(chi2 / dof), never down (the Particle Data Group's scale factor S, Review of Particle
    // Physics, Introduction).
    res.dof = static_cast<int>(m) - identified;
    if (res.dof > 0 && chi2 > res.dof) res.sd_scale = std::sqrt(chi2 / res.dof);
    const std::vector<int64_t> fitted = values(u);
    for (size_t j = 0; j < n; ++j) {
        CalibParamResult pr;
        pr.param = spec.params[j];
        pr.fitted = static_cast<double>(fitted[j]);
        const auto jj = static_cast<Eigen::Index>(j);
        if (J.col(jj).norm() < kIdentifiable) {
            pr.identifiable = false;
            pr.note = "not identifiable: no measurement depends on it";
        } else if (null_weight[jj] > kNullShare) {
            pr.identifiable = false;
            std::string with;
            std::sort(partners[j].begin(), partners[j].end());
            partners[j].erase(std::unique(partners[j].begin(), partners[j].end()), partners[j].end());
            for (size_t q : partners[j]) with += (with.empty() ? "" : ", ") + spec.params[q].key;
            pr.note = with.empty() ? "not identifiable from these measurements"
                                   : "not identifiable apart from " + with + ": only a combination is fitted";
        } else {
            pr.sd = pr.fitted * std::sqrt(var[jj]) * res.sd_scale;
        }
        const double at = std::log(pr.fitted);
        if (at <= lo[jj] + 1e-9 || std::llround(pr.fitted) <= std::llround(spec.params[j].min)) {
            pr.at_bound = true;
            pr.note += std::string(pr.note.empty() ? "" : "; ") + "held at its lower bound";
        } else if (at >= hi[jj] - 1e-9 || std::llround(pr.fitted) >= std::llround(spec.params[j].max)) {
            pr.at_bound = true;
            pr.note += std::string(pr.note.empty() ? "" : "; ") + "held at its upper bound";
        }
        res.params.push_back(std::move(pr));
    }
    for (size_t i = 0; i < m; ++i)
        res.measurements.push_back({&spec.measurements[i], sim_start[i], sim[i], (sim[i] - y[i]) / sigma[i]});
    return res;
}

namespace {

// Four significant digits; durations in the largest unit that keeps them above 1.
std::string figure(double v, Metric m) {
    if (std::string(metric_def(m).unit) == "ns") {
        const double a = std::fabs(v);
        if (a >= 1e9) return format_number("%.4g", v / 1e9) + "s";
        if (a >= 1e6) return format_number("%.4g", v / 1e6) + "ms";
        if (a >= 1e3) return format_number("%.4g", v / 1e3) + "us";
        return format_number("%.4g", v) + "ns";
    }
    return format_number(std::fabs(v) >= 1000 ? "%.0f" : "%.4g", v);
}

std::string pad(const std::string& s, size_t w) {
    size_t len = 0;
    for (unsigned char c : s) len += (c & 0xC0) != 0x80;  // UTF-8 code points
    return s + std::string(len < w ? w - len : 0, ' ');
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> w;
    for (const auto& r : rows)
        for (size_t c = 0; c < r.size(); ++c) {
            size_t len = 0;
            for (unsigned char ch : r[c]) len += (ch & 0xC0) != 0x80;
            if (w.size() <= c) w.push_back(0);
            w[c] = std::max(w[c], len);
        }
    std::string out;
    for (const auto& r : rows) {
        std::string line;
        for (size_t c = 0; c < r.size(); ++c) line += c + 1 < r.size() ? pad(r[c], w[c] + 2) : r[c];
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

}  // namespace

std::string calibration_table(const CalibResult& r) {
    const CalibSpec& s = *r.spec;
    std::string out = "calibration of " + s.machine_name + " (" + s.file + "): " + std::to_string(s.measurements.size()) +
                      " measurements, " + std::to_string(s.params.size()) + " parameters; " + std::to_string(r.iterations) +
                      " iterations, " + std::to_string(r.evaluations) + " evaluations (" + std::to_string(r.runs) +
                      " runs); chi-square " + format_number("%.4g", r.chi2_start) + " -> " + format_number("%.4g", r.chi2) +
                      (r.stalled ? " (stopped, not converged: no step gained the " + format_number("%.3g", r.promised) +
                                       " of chi-square its slopes promised over 5% and over 28% of each parameter: the "
                                       "simulated figures are not smooth in the parameters here; average the figures "
                                       "that jump over more seeds, start nearer, or widen their spreads)"
                       : r.converged ? (r.wide_steps ? " (slopes over 28% of each parameter: the figures jump at 5%)" : "")
                                     : " (not converged: raise max_iterations)") +
                      (r.dof > 0 ? " with " + std::to_string(r.dof) + (r.dof == 1 ? " degree" : " degrees") + " of freedom" : "") + "\n";
    if (r.sd_scale > 1.0)
        out += "the fit misses the measurements by more than their spreads: uncertainties scaled by sqrt(chi-square / "
               "degrees of freedom) = " + format_number("%.3g", r.sd_scale) + "\n";
    out += "\n";
    std::vector<std::vector<std::string>> rows = {{"measurement", "metric", "measured", "start", "fitted", "residual"}};
    for (const auto& m : r.measurements)
        rows.push_back({m.m->name, metric_def(m.m->metric).name, figure(m.m->value, m.m->metric) + " ± " + figure(m.m->spread, m.m->metric),
                        figure(m.start, m.m->metric), figure(m.fitted, m.m->metric), format_number("%+.2f", m.residual) + " sd"});
    out += table(rows) + "\n";
    rows = {{"parameter", "start", "fitted", "± 1 sd", "bounds", "note"}};
    for (const auto& p : r.params) {
        std::string bounds = "[";
        bounds.append(show_value(p.param.min, p.param.unit)).append(", ").append(show_value(p.param.max, p.param.unit)).append("]");
        rows.push_back({p.param.key, show_value(p.param.start, p.param.unit), show_value(p.fitted, p.param.unit),
                        p.identifiable ? show_value(p.sd, p.param.unit) : "-", bounds, p.note});
    }
    out += table(rows);
    std::string wl;
    for (const auto& p : r.params)
        if (!p.param.workload.empty()) wl += (wl.empty() ? "" : ", ") + ("\"" + p.param.workload + "\": " +
                   workload_value(p.param, std::llround(p.fitted)).dump());
    if (!wl.empty()) out += "\nworkload parameters are not part of the machine: set them in each scenario's \"workload\" (" + wl + ")\n";
    return out;
}

nlohmann::json calibration_json(const CalibResult& r) {
    nlohmann::json j;
    j["machine"] = r.spec->machine_name;
    j["file"] = r.spec->file;
    j["iterations"] = r.iterations;
    j["evaluations"] = r.evaluations;
    j["runs"] = r.runs;
    j["converged"] = r.converged;
    j["stalled"] = r.stalled;
    j["wide_steps"] = r.wide_steps;
    j["chi2_start"] = r.chi2_start;
    j["chi2"] = r.chi2;
    j["singular_values"] = r.singular_values;
    j["dof"] = r.dof;
    j["sd_scale"] = r.sd_scale;
    j["measurements"] = nlohmann::json::array();
    for (const auto& m : r.measurements)
        j["measurements"].push_back({{"name", m.m->name}, {"metric", metric_def(m.m->metric).name}, {"measured", m.m->value},
                                     {"spread", m.m->spread}, {"start", m.start}, {"fitted", m.fitted}, {"residual", m.residual}});
    j["parameters"] = nlohmann::json::array();
    for (const auto& p : r.params)
        j["parameters"].push_back({{"key", p.param.key}, {"unit", p.param.unit}, {"start", p.param.start}, {"fitted", p.fitted},
                                   {"sd", p.identifiable ? nlohmann::json(p.sd) : nlohmann::json(nullptr)},
                                   {"min", p.param.min}, {"max", p.param.max}, {"identifiable", p.identifiable},
                                   {"at_bound", p.at_bound}, {"note", p.note}});
    return j;
}

nlohmann::json calibrated_machine(const CalibResult& r, const std::string& out_path) {
    const CalibSpec& s = *r.spec;
    nlohmann::json doc = load_json_file(s.machine_path);
    const MachineProfile base = load_machine_file(s.machine_path).profile;
    std::vector<int64_t> v;
    for (const auto& p : r.params) v.push_back(static_cast<int64_t>(p.fitted));
    std::string names;
    for (const auto& m : s.measurements) names += (names.empty() ? "" : ", ") + m.name;
    const std::string source = "fitted by wakesim calibrate (" + fs::path(s.file).filename().string() + ") to: " + names;
    const nlohmann::json ov = overrides_for(s, base, v);
    for (auto it = ov.begin(); it != ov.end(); ++it) {
        const std::string& key = it.key();
        const nlohmann::json& value = it.value();
        nlohmann::json& e = doc["profile"][key];
        std::string note;
        bool moved = false;  // a value the fit changed; one left at its start keeps its source
        for (const auto& p : r.params)
            if (override_key(p.param.key) == key) {
                moved |= p.fitted != p.param.start;
                note += (note.empty() ? "" : "; ") + p.param.key + " " + show_value(p.fitted, p.param.unit) +
                        (p.identifiable ? " ± " + show_value(p.sd, p.param.unit) : " (" + p.note + ")") + ", was " +
                        show_value(p.param.start, p.param.unit);
            }
        if (!moved) continue;
        // The entry's earlier source stays: a fit of one idle state's latency keeps the others'.
        const std::string before = e.is_object() && e.contains("source") && e["source"].is_string()
                                       ? e["source"].get<std::string>()
                                       : std::string();
        e = {{"value", value}, {"source", before.empty() ? source : source + "; before: " + before}, {"note", note}};
    }
    std::string description = doc.value("description", std::string());
    if (!description.empty() && description.back() != '.') description += '.';
    doc["description"] = description + (description.empty() ? "" : " ") + "Profile refitted by wakesim calibrate as " +
                         machine_name_of(out_path) + ".";
    return doc;
}

}  // namespace wakesim
