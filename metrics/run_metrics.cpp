#include "metrics/run_metrics.h"

#include <cmath>
#include <stdexcept>

namespace wakesim {

namespace {

double round6(double v) { return std::round(v * 1e6) / 1e6; }

[[noreturn]] void wrong_type(Metric m, const char* wanted) {
    const MetricDef& d = metric_def(m);
    throw std::logic_error(std::string("metric ") + d.name + " is " + to_string(d.type) + ", read as " + wanted);
}

template <class V>
const V& as(const MetricValue& v, Metric m, const char* wanted) {
    if (const V* p = std::get_if<V>(&v)) return *p;
    wrong_type(m, wanted);
}

}  // namespace

double RunMetrics::get(Metric m) const {
    const MetricValue& v = value(m);
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    wrong_type(m, "a number");
}

int64_t RunMetrics::integer(Metric m) const { return as<int64_t>(value(m), m, "an integer"); }

const std::string& RunMetrics::text(Metric m) const { return as<std::string>(value(m), m, "text"); }

double RunMetrics::per_cpu(Metric m, int cpu) const {
    const MetricValue& v = value(m);
    const auto at = static_cast<size_t>(cpu);
    if (const auto* i = std::get_if<std::vector<int64_t>>(&v)) return static_cast<double>(i->at(at));
    if (const auto* d = std::get_if<std::vector<double>>(&v)) return d->at(at);
    wrong_type(m, "a per-CPU array");
}

const std::vector<int64_t>& RunMetrics::per_cpu_integers(Metric m) const {
    return as<std::vector<int64_t>>(value(m), m, "per-CPU integers");
}

const std::vector<double>& RunMetrics::per_cpu_reals(Metric m) const {
    return as<std::vector<double>>(value(m), m, "per-CPU reals");
}

const Breakdown& RunMetrics::breakdown(Metric m) const { return as<Breakdown>(value(m), m, "an object"); }

void RunMetrics::set(Metric m, MetricValue v) {
    const MetricDef& d = metric_def(m);
    if (v.index() != static_cast<size_t>(d.type))
        throw std::logic_error(std::string("metric ") + d.name + " is " + to_string(d.type) +
                               ", computed as another type");
    v_[index_of(m)] = std::move(v);
}

RunMetrics collect_metrics(const RunInputs& in) {
    RunMetrics r;
    for (const MetricDef& d : metric_table()) {
        MetricValue v = d.compute(in);
        if (auto* x = std::get_if<double>(&v)) *x = round6(*x);
        if (auto* xs = std::get_if<std::vector<double>>(&v))
            for (double& x : *xs) x = round6(x);
        if (auto* b = std::get_if<Breakdown>(&v))
            for (auto& kv : *b) kv.second = round6(kv.second);
        r.set(d.id, std::move(v));
    }
    return r;
}

}  // namespace wakesim
