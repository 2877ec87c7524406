// The metric table (metrics/metric_table.cpp): its rows are consistent, a run's values are filled
// from it with the declared types, JSON and CSV come from it, and docs/metrics.md carries exactly
// what `wakesim list metrics --markdown` prints.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "experiment/report.h"
#include "metrics/metric_format.h"
#include "metrics/run_metrics.h"
#include "sim_test_util.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

// What `wakesim ARGS` prints on stdout.
std::string wakesim_stdout(const std::string& args) {
    const std::string cmd = std::string("timeout 20 '") + WAKESIM_BINARY + "' " + args + " 2>/dev/null";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[8192];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    REQUIRE(::pclose(p) == 0);
    return out;
}

bool json_type_matches(MetricType t, const nlohmann::json& v) {
    switch (t) {
        case MetricType::integer: return v.is_number_integer();
        case MetricType::real: return v.is_number_float();
        case MetricType::text: return v.is_string();
        case MetricType::per_cpu_integer:
            for (const auto& x : v)
                if (!x.is_number_integer()) return false;
            return v.is_array();
        case MetricType::per_cpu_real:
            for (const auto& x : v)
                if (!x.is_number_float()) return false;
            return v.is_array();
        case MetricType::breakdown:
            for (const auto& [k, x] : v.items())
                if (!x.is_number_float()) return false;
            return v.is_object();
    }
    return false;
}

}  // namespace

TEST_CASE("metric table: one row per metric, unique stable names, a doc line each, numeric summaries", "[metrics]") {
    std::set<std::string> names;
    std::map<int, int> column_headers;
    for (size_t i = 0; i < metric_table().size(); ++i) {
        const MetricDef& d = metric_table()[i];
        INFO(d.name);
        CHECK(index_of(d.id) == i);
        CHECK(names.insert(d.name).second);
        CHECK(find_metric(d.name) == &d);
        const std::string name = d.name;
        CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") == std::string::npos);
        CHECK(d.doc != nullptr);
        CHECK(std::string(d.doc).size() > 5);
        CHECK(std::string(d.doc).find('\n') == std::string::npos);
        CHECK(d.compute != nullptr);
        const bool numeric = d.type == MetricType::integer || d.type == MetricType::real;
        if (d.shown.summary || d.shown.table.column) CHECK(numeric);
        if (d.shown.table.header) ++column_headers[d.shown.table.column];
        CHECK((d.kind == MetricKind::per_cpu) ==
              (d.type == MetricType::per_cpu_integer || d.type == MetricType::per_cpu_real));
        CHECK((d.kind == MetricKind::breakdown) == (d.type == MetricType::breakdown));
        CHECK((d.kind == MetricKind::text) == (d.type == MetricType::text));
    }
    CHECK(find_metric("no.such.metric") == nullptr);
    // Table columns 1..N, each with exactly one header, on its first metric.
    for (size_t c = 1; c <= column_headers.size(); ++c) {
        INFO("column " << c);
        CHECK(column_headers[static_cast<int>(c)] == 1);
        for (const MetricDef& d : metric_table())
            if (d.shown.table.column == static_cast<int>(c)) {
                CHECK(d.shown.table.header != nullptr);
                break;
            }
    }
}

TEST_CASE("metrics are filled from the counters, the CPUs' busy time and the hardware stats, reals rounded",
          "[metrics]") {
    Metrics m;
    m.c.ops = 3;
    m.c.bytes = 3 * 1048576;
    m.c.wakeups = 8;
    m.c.wakeups_local = 5;
    m.c.wakeups_remote = 3;
    m.c.wakeups_runnable = 1;
    m.c.outcomes[static_cast<size_t>(SelectOutcome::sis_prev)] = 7;
    m.c.migrations_by_cause[static_cast<size_t>(MigrationCause::wakeup)] = 1;
    m.c.migrations_by_cause[static_cast<size_t>(MigrationCause::balance)] = 2;
    m.c.migrations_by_distance[static_cast<size_t>(CpuDistance::cross_numa)] = 3;
    m.wake_latency.add(1000);
    m.wake_latency.add(3001);
    HardwareStats hw;
    hw.governor = "schedutil";
    hw.cpu_freq_khz = {1200000.4, 2600000.6};
    hw.freq_khz_mean = 1900000.5;
    hw.freq_khz_busy = 2599999.4;
    hw.freq_residency = {{1200000, 0.25}, {2600000, 0.75}};
    hw.idle_residency = {{"POLL", 0.1}, {"C6", 1.0 / 3.0}};
    hw.cache_refill_ns = 1234;
    const RunInputs in{m, 3000000, {1000000, 2000000, 100000}, hw, 42};
    const RunMetrics r = collect_metrics(in);

    CHECK(r.integer(Metric::ops) == 3);
    CHECK(r.integer(Metric::sim_time_ns) == 3000000);
    CHECK(r.get(Metric::usec_per_op) == 1000.0);
    CHECK(r.get(Metric::ops_per_sec) == 1000.0);
    CHECK(r.get(Metric::mib_per_sec) == 1000.0);
    CHECK(r.integer(Metric::wakeups_local) == 5);
    CHECK(r.integer(Metric::wakeups_no_placement) == 1);
    CHECK(r.integer(Metric::select_sis_prev) == 7);
    CHECK(r.integer(Metric::select_sis_target) == 0);
    CHECK(r.integer(Metric::migrations) == 3);
    CHECK(r.integer(Metric::migrations_wakeup) == 1);
    CHECK(r.integer(Metric::migrations_cross_numa) == 3);
    CHECK(r.get(Metric::migrations_per_wakeup) == 0.125);
    CHECK(r.get(Metric::wake_latency_ns_mean) == 2000.5);
    CHECK(r.integer(Metric::wake_latency_ns_max) == 3001);
    CHECK(r.integer(Metric::time_lost_wake_latency_ns) == 4001);
    CHECK(r.per_cpu_reals(Metric::cpu_util) == std::vector<double>{0.333333, 0.666667, 0.033333});
    CHECK(r.get(Metric::cpu_util_sum) == 1.033333);  // the sum of the unrounded utilisations
    CHECK(r.integer(Metric::cpus_busy) == 2);            // above 5%
    CHECK(r.text(Metric::governor) == "schedutil");
    CHECK(r.per_cpu_integers(Metric::cpu_freq_khz) == std::vector<int64_t>{1200000, 2600001});
    CHECK(r.per_cpu(Metric::cpu_freq_khz, 1) == 2600001.0);
    CHECK(r.integer(Metric::freq_khz_mean) == 1900001);
    CHECK(r.integer(Metric::freq_khz_busy) == 2599999);
    CHECK(r.breakdown(Metric::freq_residency) == Breakdown{{"1200000", 0.25}, {"2600000", 0.75}});
    CHECK(r.breakdown(Metric::idle_residency) == Breakdown{{"POLL", 0.1}, {"C6", 0.333333}});
    CHECK(r.integer(Metric::time_lost_cache_refill_ns) == 1234);
    CHECK(r.integer(Metric::events) == 42);

    // Read as the wrong type: an internal error naming the metric.
    CHECK_THROWS_AS(r.integer(Metric::usec_per_op), std::logic_error);
    CHECK_THROWS_WITH(r.get(Metric::governor), Catch::Contains("governor"));
    RunMetrics w;
    CHECK_THROWS_AS(w.set(Metric::ops, 1.5), std::logic_error);
    CHECK_NOTHROW(w.set(Metric::ops, int64_t{2}));

    // JSON: every metric under its name; integers stay integers.
    const nlohmann::json j = metrics_json(r);
    CHECK(j.size() == kMetricCount);
    CHECK(j.at("usec_per_op").dump() == "1000.0");
    CHECK(j.at("freq_khz.busy").dump() == "2599999");
    CHECK(j.at("idle_residency").dump() == R"({"C6":0.333333,"POLL":0.1})");
    CHECK(csv_cell(r, Metric::governor) == "\"schedutil\"");
}

TEST_CASE("a run's JSON holds every metric of the table with its declared type", "[metrics]") {
    const Outcome o = simulate(doc(R"({"machine": "kvm-2vcpu", "workload": {"kind": "pipe", "loops": 200},
                                       "policies": ["plain"]})"));
    REQUIRE(o.completed);
    const nlohmann::json j = metrics_json(o.m);
    CHECK(j.size() == kMetricCount);
    for (const MetricDef& d : metric_table()) {
        INFO(d.name << " (" << to_string(d.type) << ")");
        REQUIRE(j.contains(d.name));
        CHECK(json_type_matches(d.type, j.at(d.name)));
    }
    CHECK(o.m.per_cpu_reals(Metric::cpu_util).size() == 2);
    CHECK(o.n(Metric::ops) == 200);
}

TEST_CASE("CSV columns: the scalar metrics of the table in name order", "[metrics]") {
    const std::vector<Metric> cols = csv_metrics();
    std::vector<std::string> names;
    for (Metric m : cols) names.push_back(metric_def(m).name);
    CHECK(std::is_sorted(names.begin(), names.end()));
    size_t scalars = 0;
    for (const MetricDef& d : metric_table()) scalars += is_scalar(d.type) ? 1 : 0;
    CHECK(cols.size() == scalars);
    CHECK(std::find(names.begin(), names.end(), "cpu_util") == names.end());
    CHECK(std::find(names.begin(), names.end(), "cpu_util.sum") != names.end());
}

TEST_CASE("docs/metrics.md carries the generated metric tables (run scripts/gen-docs.sh after changing the table)",
          "[metrics][docs]") {
    const std::string doc_text = read_file(std::string(WAKESIM_SOURCE_DIR) + "/docs/metrics.md");
    const std::string begin = "<!-- BEGIN GENERATED: wakesim list metrics --markdown -->\n";
    const std::string end = "<!-- END GENERATED -->";
    const auto b = doc_text.find(begin);
    REQUIRE(b != std::string::npos);
    const auto e = doc_text.find(end, b);
    REQUIRE(e != std::string::npos);
    const std::string block = doc_text.substr(b + begin.size(), e - b - begin.size());
    CHECK(block == metrics_markdown());
    // Every metric is documented there, and the CLI prints the same text.
    for (const MetricDef& d : metric_table())
        CHECK(block.find(std::string("| `") + d.name + "` |") != std::string::npos);
    CHECK(wakesim_stdout("list metrics --markdown") == metrics_markdown());
}

TEST_CASE("wakesim list metrics prints one line per metric: name, unit, better, meaning", "[metrics][cli]") {
    const std::string out = wakesim_stdout("list metrics");
    CHECK(out == metrics_list_text());
    std::istringstream in(out);
    size_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
        REQUIRE(lines < kMetricCount);
        const MetricDef& d = metric_table()[lines];
        INFO(line);
        CHECK(line.rfind(std::string(d.name) + " ", 0) == 0);
    }
    CHECK(lines == kMetricCount);
    CHECK(out.find("usec_per_op                 µs       lower  sim_time_ns / ops / 1000") != std::string::npos);
}
