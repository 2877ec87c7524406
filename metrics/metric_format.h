// Outputs that come from the metric table: a run's metrics as JSON (runs[].metrics, schema_version
// 1) and as CSV cells, `wakesim list metrics` and the Markdown of docs/metrics.md.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "metrics/metric_table.h"
#include "metrics/run_metrics.h"

namespace wakesim {

nlohmann::json to_json(const MetricValue& v);
// Every metric of the table under its name (nlohmann::json sorts the keys).
nlohmann::json metrics_json(const RunMetrics& r);

// CSV: one column per scalar metric (integer, real, text), in the JSON's key order; a cell is
// the value as JSON writes it.
std::vector<Metric> csv_metrics();
std::string csv_cell(const RunMetrics& r, Metric m);

// `wakesim list metrics`: name, unit, better, meaning; one line each.
std::string metrics_list_text();
// `wakesim list metrics --markdown`: the generated part of docs/metrics.md.
std::string metrics_markdown();

}  // namespace wakesim
