// The metric table: every metric a run reports is declared once, in metrics/metric_table.cpp,
// with its stable JSON name, unit, kind, which direction is better, whether the report
// summarises it over seeds or shows it in the text table, how it is computed and its doc line.
// JSON, CSV, the table's columns, `wakesim list metrics` and docs/metrics.md come from it.
//
// Adding a metric: an enumerator here (same place as its row), a row in metric_table.cpp, and
// the counting (a Counters field in metrics/metrics.h and its increment, or a HardwareStats
// field). Then scripts/gen-docs.sh.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace wakesim {

// One enumerator per row of the table, in the table's order. The JSON name with '.' as '_'.
enum class Metric : uint16_t {
    // throughput
    ops, sim_time_ns, usec_per_op, ops_per_sec, mib_per_sec,
    // wakeups
    wakeups, wakeups_local, wakeups_remote, wakeups_ipi, wakeups_poll, wakeups_no_placement, wakeups_affine,
    wakeups_wide, sis_probes, ipis,
    // where select_task_rq decided
    select_pinned, select_policy_early, select_current_cpu, select_policy_affine, select_sis_target,
    select_sis_prev, select_sis_kthread, select_sis_recent, select_sis_capacity, select_sis_smt, select_sis_scan,
    select_sis_fallback, select_slow_path, select_eas, select_vcpu_pack,
    // migrations
    migrations, migrations_wakeup, migrations_balance, migrations_newidle, migrations_active, migrations_smt,
    migrations_cluster, migrations_llc, migrations_cross_llc, migrations_cross_numa, migrations_per_wakeup,
    migrations_requester, migrations_server,
    // wake latency
    wake_latency_ns_p50, wake_latency_ns_p90, wake_latency_ns_p99, wake_latency_ns_mean, wake_latency_ns_max,
    // FUSE requests
    fuse_requests, fuse_queue_changes, fuse_latency_ns_p50, fuse_latency_ns_p99, fuse_latency_ns_mean,
    fuse_latency_ns_max, fuse_queue_ns_p50, fuse_queue_ns_p99, fuse_queue_ns_mean, fuse_server_ns_p50,
    fuse_server_ns_p99, fuse_server_ns_mean, fuse_reply_ns_p50, fuse_reply_ns_mean, fuse_reply_ns_p99,
    fuse_reply_ns_max, fuse_ring_batch_mean, fuse_sent, fuse_completed, fuse_blocked_waits, fuse_congested,
    fuse_worker_spawns, fuse_worker_exits,
    // switches and balancing
    context_switches, preemptions, balance_runs, newidle_runs,
    // utilisation
    cpu_util, cpu_util_sum, cpus_busy,
    // where the application and its server ran
    cpu_time_requester_ns, cpu_time_server_ns, requester_time_by_node, server_time_by_node,
    requester_time_by_capacity, server_time_by_capacity,
    // frequency and idle states
    governor, cpu_freq_khz, freq_khz_mean, freq_khz_busy, freq_residency, idle_residency,
    // energy
    energy_mj, cpu_energy_mj,
    // time lost
    time_lost_cache_refill_ns, time_lost_wake_latency_ns,
    // simulator
    events,
    kCount
};
inline constexpr size_t kMetricCount = static_cast<size_t>(Metric::kCount);
constexpr size_t index_of(Metric m) { return static_cast<size_t>(m); }

// How a value is represented (the JSON type). Reals are rounded to 6 decimal places.
enum class MetricType : uint8_t { integer, real, text, per_cpu_integer, per_cpu_real, breakdown };

// What a value is.
enum class MetricKind : uint8_t {
    counter,     // a count over the measured window
    duration,    // a length of (simulated) time
    rate,        // per second of the window
    ratio,       // one quantity over another
    mean,
    percentile,
    maximum,
    sum,         // a sum over CPUs
    per_cpu,     // an array, one value per CPU
    breakdown,   // an object: key -> fraction
    text,
};

enum class Better : uint8_t { higher, lower, neither };

// Sections of docs/metrics.md.
enum class MetricGroup : uint8_t {
    throughput, wakeups, select, migrations, latency, fuse, scheduling, utilisation, roles, frequency, energy, time_lost,
    simulator,
    kCount
};

// A value of one metric in one run; the alternative's index is the row's MetricType.
using Breakdown = std::vector<std::pair<std::string, double>>;  // key -> value, in the model's order
using MetricValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>, Breakdown>;

struct RunInputs;  // metrics/run_metrics.h

// A column of the text table (`wakesim run`'s default format). Metrics with the same column
// number share it: their means are printed joined by '/' (no CI); a column of one metric
// prints "mean ±ci95" over several seeds.
struct TableColumn {
    int column = 0;                // 1, 2, ... left to right; 0: not in the table
    const char* header = nullptr;  // on the first metric of the column
    int precision = 0;             // decimals
    double divisor = 1;            // shown as value / divisor (ns -> us: 1000)
};

// Where the reports show a metric besides runs[].metrics and the CSV.
struct MetricShown {
    bool summary = false;  // mean and ci95 over seeds in the JSON summary[] (and the table)
    TableColumn table{};   // column of the text table, if any
};

struct MetricDef {
    Metric id;
    const char* name;  // the JSON key and CSV column: stable (schema_version 1)
    const char* unit;
    MetricKind kind;
    MetricType type;
    Better better;
    MetricGroup group;
    MetricShown shown;
    MetricValue (*compute)(const RunInputs&);  // unrounded
    const char* doc;    // Markdown, one line: how it is computed
};

std::span<const MetricDef> metric_table();
inline const MetricDef& metric_def(Metric m) { return metric_table()[index_of(m)]; }
const MetricDef* find_metric(std::string_view name);  // nullptr when none is called `name`

const char* to_string(MetricKind k);
const char* to_string(MetricType t);
const char* to_string(Better b);
const char* group_title(MetricGroup g);
bool is_scalar(MetricType t);  // integer, real or text: a CSV column

}  // namespace wakesim
