// What the hardware model measured over the measured window, as plain values (no rounding):
// metrics/ turns them into the reported metrics (docs/metrics.md). Kept free of other wakesim
// headers so that metrics/ can read it without depending on the hardware model.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace wakesim {

struct HardwareStats {
    std::string governor;                // cpufreq governor
    std::vector<double> cpu_freq_khz;    // per CPU: time-weighted mean frequency
    double freq_khz_mean = 0;            // mean of cpu_freq_khz over all CPUs
    double freq_khz_busy = 0;            // frequency weighted by busy time (0 without busy time)
    std::vector<std::pair<int64_t, double>> freq_residency;       // OPP kHz -> fraction of all CPU-time
    std::vector<std::pair<std::string, double>> idle_residency;   // idle state -> fraction of all CPU-time
    int64_t cache_refill_ns = 0;         // reference-ns of working-set and shared-data refill
    // Energy estimate from the profile's energy model: busy time at each OPP x that OPP's power.
    bool has_energy_model = false;       // false: no energy model (or it does not fit), energy 0
    std::vector<double> cpu_energy_uj;   // per CPU, microjoules (empty without an energy model)
    double energy_uj = 0;                // sum over CPUs
};

}  // namespace wakesim
