// `wakesim calibrate`: fits a machine's profile parameters to measurements of that machine.
//
// A calibration file names a machine, measurements (a scenario, one of its cases and policies, a
// metric, the measured value and its spread) and the profile parameters allowed to move, with
// bounds. The fit is weighted least squares, residual (simulated - measured) / spread, solved by
// Levenberg-Marquardt on finite-difference sensitivities in log-parameter space (Eigen). The
// report gives each measurement's residual, each parameter's value with its 1-sigma uncertainty
// from the Jacobian at the optimum, and which parameters the data cannot identify. The result is
// written as a machine file: the original with the fitted values and their provenance.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "metrics/metric_table.h"

namespace wakesim {

struct CalibMeasurement {
    std::string name;
    std::string scenario_file;  // as resolved (relative to the calibration file)
    nlohmann::json scenario;    // the scenario document, its machine replaced on each evaluation
    std::string case_name, policy;
    Metric metric = Metric::usec_per_op;
    double value = 0, spread = 0;  // in the metric's unit
    std::vector<uint64_t> seeds;   // the scenario's, unless the measurement gives its own
    std::string pointer;           // "/measurements/2"
};

// A parameter to fit: a number of the profile ("ctx_switch", "ipi_latency",
// "refill_llc_ns_per_kib"), the exit latency of one idle state ("idle_states/0/exit_latency"), or
// a numeric parameter of every measurement's workload ("workload/uring_commit": a FUSE server's
// per-request costs are the workload's, not the machine's).
struct CalibParam {
    std::string key;       // as a scenario's "machine": {"profile": {...}} writes it, or "workload/NAME"
    std::string workload;  // NAME of a workload parameter; empty for a profile parameter
    std::string unit;  // "ns", "ns/KiB", "%", "Hz"; a workload parameter's "ns", "KiB" (a size) or "" (a count)
    double start = 0;  // the machine's value (or the calibration file's "start")
    double min = 0, max = 0;
    double allowed_min = 0, allowed_max = 0;  // a workload parameter's declared range, in `unit` (0, 0: none)
    std::string pointer;  // "/parameters/1"
};

struct CalibSpec {
    std::string file;
    std::string machine_path;  // the machine file being fitted
    std::string machine_name;
    std::vector<CalibMeasurement> measurements;
    std::vector<CalibParam> params;
    int max_iterations = 20;
};

// Reads and checks a calibration file (docs/calibrate.md). Every error of the file is reported in
// one pass (InputErrors), each naming its JSON pointer.
CalibSpec load_calibration(const std::string& path);

struct CalibParamResult {
    CalibParam param;
    double fitted = 0;
    double sd = 0;              // 1-sigma, in the parameter's unit; 0 when not identifiable
    bool identifiable = true;
    bool at_bound = false;
    std::string note;           // why it is not identifiable, or which bound holds it
};

struct CalibMeasurementResult {
    const CalibMeasurement* m = nullptr;
    double start = 0, fitted = 0;  // simulated, mean over the seeds
    double residual = 0;           // (fitted - value) / spread
};

struct CalibResult {
    const CalibSpec* spec = nullptr;
    std::vector<CalibParamResult> params;
    std::vector<CalibMeasurementResult> measurements;
    double chi2_start = 0, chi2 = 0;  // sum of squared residuals
    int iterations = 0;
    size_t evaluations = 0;  // parameter vectors simulated
    size_t runs = 0;         // simulations run
    bool converged = false;
    // Stopped where no damped step lowered the chi-square although the slopes promised a real
    // gain: the figures change with the parameters by more than their slopes say (not converged).
    bool stalled = false;
    double promised = 0;  // the gain in chi-square the rejected first step's slopes promised
    bool wide_steps = false;  // the slopes were taken over about 28% after the 5% ones failed
    std::vector<double> singular_values;  // of the weighted Jacobian in log-parameter space
    int dof = 0;            // measurements less the directions the fit identifies
    double sd_scale = 1.0;  // sqrt(chi2 / dof) when above 1: the uncertainties are scaled by it
};

// Fits the parameters; runs on `jobs` threads with the same result for any value.
CalibResult calibrate(const CalibSpec& spec, int jobs);
// The fit itself, its figures from `evaluate`: the mean simulated metric of every measurement at
// each point (parameter values in whole units, in the order of spec.params), adding the runs it
// took to `runs`. calibrate(spec, jobs) passes the simulator; a test may pass a known function.
using CalibEvaluator =
    std::function<std::vector<std::vector<double>>(const std::vector<std::vector<int64_t>>& points, size_t& runs)>;
CalibResult calibrate(const CalibSpec& spec, const CalibEvaluator& evaluate);

std::string calibration_table(const CalibResult& r);
nlohmann::json calibration_json(const CalibResult& r);
// The machine file with the fitted values: each fitted profile parameter's value, and a source
// naming the calibration file and the measurements. `out_path` names the new machine. Workload
// parameters are not part of a machine: the report gives them, to be set in the scenarios.
nlohmann::json calibrated_machine(const CalibResult& r, const std::string& out_path);

}  // namespace wakesim
