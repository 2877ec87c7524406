// The metrics of one run as typed values, indexed by Metric (metrics/metric_table.h), and the
// one place that fills them: from the window's Counters and wake-latency histogram, the CPUs'
// busy time and what the hardware model measured.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hw/hardware_stats.h"
#include "metrics/metric_table.h"
#include "metrics/metrics.h"

namespace wakesim {

// Everything a run's metrics are computed from, at the end of the measured window.
struct RunInputs {
    const Metrics& m;             // counters and wake latencies of the window (ops and bytes set)
    Time window = 0;              // length of the window
    std::vector<Time> busy_ns;    // per CPU: non-idle time in the window
    HardwareStats hw;             // the hardware model over the window
    uint64_t events = 0;          // simulator events of the whole run
};

class RunMetrics {
public:
    // Any numeric scalar (integer or real) as a double: what summaries and comparisons read.
    double get(Metric m) const;
    int64_t integer(Metric m) const;  // an integer metric (counters, ns, kHz)
    const std::string& text(Metric m) const;
    double per_cpu(Metric m, int cpu) const;  // an element of a per-CPU array (integer or real)
    const std::vector<int64_t>& per_cpu_integers(Metric m) const;
    const std::vector<double>& per_cpu_reals(Metric m) const;
    const Breakdown& breakdown(Metric m) const;
    const MetricValue& value(Metric m) const { return v_[index_of(m)]; }

    // Sets a value; its alternative must be the row's MetricType (else std::logic_error).
    void set(Metric m, MetricValue v);

    bool operator==(const RunMetrics&) const = default;

private:
    std::array<MetricValue, kMetricCount> v_{};
};

// Fills every metric of the table from `in` (reals rounded to 6 decimal places).
RunMetrics collect_metrics(const RunInputs& in);

}  // namespace wakesim
