#include "experiment/plot.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "experiment/stats.h"
#include "experiment/sweep.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "metrics/metric_table.h"

namespace wakesim {

namespace {

using json = nlohmann::json;

// A string for a gnuplot single-quoted literal: no quotes, no line breaks.
std::string gp(const std::string& s) {
    std::string out;
    for (char c : s) out += (c == '\'' || c == '"' || c == '\n' || c == '\r' || c == '\\') ? '_' : c;
    return out;
}

// The axis of `axes` that `name` means: the pointer itself or a unique last part.
std::string resolve_axis(const std::string& name, const std::set<std::string>& axes, const std::string& file,
                         const char* option) {
    if (axes.count(name)) return name;
    std::string found;
    for (const auto& a : axes) {
        const auto slash = a.rfind('/');
        if (a.substr(slash + 1) == name) {
            if (!found.empty()) throw InputError(file, "", std::string(option) + ": " + quote_for_message(name) + " names two axes; give the JSON pointer");
            found = a;
        }
    }
    if (found.empty()) {
        std::string list;
        for (const auto& a : axes) list += (list.empty() ? "" : ", ") + quote_for_message(a);
        throw InputError(file, "", std::string("expected ") + option + " to name an axis of the sweep: " +
                                       (list.empty() ? "it has none" : list) + ", got " + quote_for_message(name));
    }
    return found;
}

}  // namespace

std::string plot_script(const std::vector<std::string>& files, const PlotOptions& opt) {
    const MetricDef* d = find_metric(opt.y);
    if (!d || (d->type != MetricType::integer && d->type != MetricType::real))
        throw InputError("--y", "", "expected a numeric metric of `wakesim list metrics`, got " + quote_for_message(opt.y));
    const bool svg = opt.out.size() > 4 && opt.out.substr(opt.out.size() - 4) == ".svg";
    const bool png = opt.out.size() > 4 && opt.out.substr(opt.out.size() - 4) == ".png";
    if (!svg && !png) throw InputError(opt.out, "", "expected an output file name ending in .svg or .png");
    std::vector<json> lines;
    std::set<std::string> axes, cases, policies;
    std::string sweep;
    // One sweep's runs, each once: a run in two files (a shard and the merged file) or runs of
    // another sweep would weigh in the error bars unseen.
    const SweepLines read = read_sweep_outputs(files);
    for (const auto& [run, l] : read.by_run) {
        json j = json::parse(l);  // again: the reader keeps each line's text, which merge writes as it is
        if (!j.contains("axes") || !j["axes"].is_object() || !j.contains("metrics") || !j.contains("policy") ||
            !j.contains("case"))
            throw InputError(files.front(), "", "expected JSON lines of `wakesim sweep`; run " + std::to_string(run) +
                                                    "'s line is not one");
        cases.insert(j["case"].dump());
        policies.insert(j["policy"].dump());
        if ((!opt.only_case.empty() && j["case"] != opt.only_case) ||
            (!opt.only_policy.empty() && j["policy"] != opt.only_policy))
            continue;
        for (const auto& [k, v] : j["axes"].items()) axes.insert(k);
        if (sweep.empty() && j.contains("sweep") && j["sweep"].is_string()) sweep = j["sweep"].get<std::string>();
        lines.push_back(std::move(j));
    }
    if (lines.empty()) {
        const std::string f = files.empty() ? std::string("plot") : files.front();
        const auto names = [](const std::set<std::string>& s) {
            std::string list;
            for (const auto& n : s) list += (list.empty() ? "" : ", ") + n;
            return list;
        };
        if (!opt.only_case.empty() && !cases.count(json(opt.only_case).dump()))
            throw InputError(f, "", "--case " + quote_for_message(opt.only_case) + " names no case of the sweep: " + names(cases));
        if (!opt.only_policy.empty() && !policies.count(json(opt.only_policy).dump()))
            throw InputError(f, "", "--policy " + quote_for_message(opt.only_policy) + " names no policy of the sweep: " +
                                        names(policies));
        throw InputError(f, "", "expected at least one run" + std::string(opt.only_case.empty() && opt.only_policy.empty()
                                                                              ? ""
                                                                              : " of that case and policy"));
    }
    const std::string file = files.front();
    const std::string x = resolve_axis(opt.x, axes, file, "--x");
    const bool by_axis = opt.by != "policy" && opt.by != "case";
    const std::string by = by_axis ? resolve_axis(opt.by, axes, file, "--by") : opt.by;
    if (by == x) throw InputError("--by", "", "expected an axis other than the one --x plots (" + x + ")");
    // (group, x) -> values; other axes must not vary within one.
    struct Cell {
        std::vector<double> v;
        std::string rest;  // the other axes' values
    };
    std::map<std::string, std::map<json, Cell>> data;
    std::vector<std::string> group_order;
    std::vector<json> x_order;
    bool numeric_x = true;
    for (const auto& j : lines) {
        const json& ax = j["axes"];
        if (!ax.contains(x)) throw InputError(file, "", "a line has no value of the axis " + x);
        const json xv = ax[x];
        numeric_x &= xv.is_number();
        const std::string g = !by_axis ? j[by].get<std::string>()
                              : !ax.contains(by)   ? std::string("-")
                              : ax[by].is_string() ? ax[by].get<std::string>()
                                                   : ax[by].dump();
        json rest = ax;
        rest.erase(x);
        if (by_axis) rest.erase(by);
        if (by != "case") rest["case"] = j["case"];
        if (by != "policy") rest["policy"] = j["policy"];
        if (!j["metrics"].contains(d->name) || !j["metrics"][d->name].is_number())
            throw InputError(file, "", std::string("a line has no number for the metric ") + d->name);
        if (!data.count(g)) group_order.push_back(g);
        bool seen = false;
        for (const auto& o : x_order) seen |= o == xv;
        if (!seen) x_order.push_back(xv);
        Cell& c = data[g][xv];
        if (c.v.empty())
            c.rest = rest.dump();
        else if (c.rest != rest.dump())
            throw InputError(file, "", "expected one point per --by value and --x value; runs at " + x + " = " + xv.dump() +
                                           " differ in " + c.rest + " vs " + rest.dump() +
                                           ": choose --by among them, keep one case or policy with --case or --policy, or plot a sweep with "
                                           "fewer axes");
        c.v.push_back(j["metrics"][d->name].get<double>());
    }
    if (numeric_x)
        std::sort(x_order.begin(), x_order.end(), [](const json& a, const json& b) { return a.get<double>() < b.get<double>(); });
    std::ostringstream os;
    os << (svg ? "set terminal svg size 900,540 dynamic background '#ffffff'\n" : "set terminal pngcairo size 900,540\n");
    os << "set output '" << gp(opt.out) << "'\n";
    os << "set title '" << gp(sweep.empty() ? "wakesim" : sweep) << ": " << d->name << " (mean, 95% CI over seeds) by " << gp(by) << "' noenhanced\n";
    os << "set xlabel '" << gp(x) << "' noenhanced\nset ylabel '" << d->name << " (" << gp(d->unit) << ")' noenhanced\n";
    os << "set key outside right noenhanced\nset grid\nset offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n";
    os << "plot";
    for (size_t i = 0; i < group_order.size(); ++i)
        os << (i ? "," : "") << " '-' using 1:2:3" << (numeric_x ? "" : ":xtic(4)") << " with yerrorlines title '"
           << gp(group_order[i]) << "'";
    os << "\n";
    for (const auto& g : group_order) {
        for (size_t xi = 0; xi < x_order.size(); ++xi) {
            auto it = data[g].find(x_order[xi]);
            if (it == data[g].end()) continue;
            const SampleStats s = sample_stats(it->second.v);
            char buf[128];
            std::snprintf(buf, sizeof buf, "%.10g %.10g", s.mean, s.ci95);
            os << (numeric_x ? x_order[xi].dump() : std::to_string(xi)) << " " << buf;
            if (!numeric_x) os << " \"" << gp(x_order[xi].is_string() ? x_order[xi].get<std::string>() : x_order[xi].dump()) << "\"";
            os << "\n";
        }
        os << "e\n";
    }
    return os.str();
}

}  // namespace wakesim
