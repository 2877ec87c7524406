// kernel/sched/pelt.h: the inline parts of PELT (kernel/pelt.cpp has the rest). The signals are
// the kernel's fixed-point sums: time in 1024 ns units, 1024-unit periods, contributions decayed by
// y^n with y^32 = 1/2 from the runnable_avg_yN_inv table (kernel/sched/sched-pelt.h), averages
// recomputed when a period ends (___update_load_avg). A task's and a CPU's updates are inline: the
// wake path and __schedule call them for every task and runqueue they touch.
#pragma once
#include <array>
#include <cstdint>

#include "kernel/sched.h"

namespace wakesim {

namespace pelt {

inline constexpr uint32_t kLoadAvgPeriod = 32;   // LOAD_AVG_PERIOD: y^32 = 1/2
inline constexpr uint32_t kLoadAvgMax = 47742;   // LOAD_AVG_MAX: 1024 * sum of y^n, as the table gives it
inline constexpr uint32_t kMinDivider = kLoadAvgMax - 1024;  // PELT_MIN_DIVIDER

// y^n * (2^32 - 1), n = 0..31: the values of the kernel's runnable_avg_yN_inv.
extern const std::array<uint32_t, kLoadAvgPeriod> kYNInv;

__extension__ typedef unsigned __int128 u128;

// decay_load(): val * y^n; whole half-lives by shifting, the rest from the table.
inline uint64_t decay_load(uint64_t val, uint64_t n) {
    if (n > kLoadAvgPeriod * 63) return 0;
    val >>= n / kLoadAvgPeriod;
    return static_cast<uint64_t>((static_cast<u128>(val) * kYNInv[n % kLoadAvgPeriod]) >> 32);
}

// __accumulate_pelt_segments(): d1 (the rest of the last period, decayed), the full periods in
// between (closed form through LOAD_AVG_MAX), d3 (the current period so far).
inline uint32_t accumulate_segments(uint64_t periods, uint32_t d1, uint32_t d3) {
    const auto c1 = static_cast<uint32_t>(decay_load(d1, periods));
    const auto c2 = static_cast<uint32_t>(kLoadAvgMax - decay_load(kLoadAvgMax, periods) - 1024);
    return c1 + c2 + d3;
}

// get_pelt_divider()
inline uint32_t divider(const Pelt& sa) { return kMinDivider + sa.period_contrib; }

// ___update_load_sum() with accumulate_sum(), then ___update_load_avg() when a period ended.
// load: the runnable weight (1 for a task); runnable: the runnable tasks (h_nr_runnable; 0 or 1
// for a task); running: whether it runs; scale: the capacity time counts for at the CPU's speed
// (0..1024: frequency and CPU capacity, the invariance the kernel gets from its PELT clock);
// avg_mult: what load_avg is scaled by (the task's weight, 1 for a CPU). Returns true when the
// averages were recomputed.
inline bool update(Pelt& sa, Time now, uint64_t load, uint32_t runnable, bool running, uint32_t scale, uint64_t avg_mult) {
    Time delta = now - sa.last_update;
    if (delta < 0) {
        sa.last_update = now;
        return false;
    }
    delta >>= 10;  // ~1 us units, as the kernel does
    if (delta == 0) return false;
    sa.last_update += delta << 10;
    const uint32_t util_scale = running && load ? scale : 0;
    // accumulate_sum()
    uint64_t d = static_cast<uint64_t>(delta) + sa.period_contrib;
    const uint64_t periods = d / 1024;
    uint32_t contrib = static_cast<uint32_t>(delta);
    if (periods) {
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.util_sum = decay_load(sa.util_sum, periods);
        if (sa.runnable_sum) sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        d %= 1024;
        if (load) contrib = accumulate_segments(periods, 1024 - sa.period_contrib, static_cast<uint32_t>(d));
    }
    sa.period_contrib = static_cast<uint32_t>(d);
    if (load) sa.load_sum += load * contrib;
    if (util_scale) sa.util_sum += static_cast<uint64_t>(contrib) * util_scale;
    if (runnable) sa.runnable_sum += static_cast<uint64_t>(runnable) * contrib * scale;
    if (!periods) return false;
    // ___update_load_avg()
    const uint32_t div = divider(sa);
    sa.load_avg = static_cast<double>(avg_mult * sa.load_sum / div);
    sa.util_avg = static_cast<double>(sa.util_sum / div);
    sa.runnable_avg = static_cast<double>(sa.runnable_sum / div);
    return true;
}

}  // namespace pelt

// update_cfs_rq_load_avg() of `cpu`'s root: the load weight (cfs_rq->load.weight: its tasks and
// the groups' entities, delayed ones too) and the number of runnable tasks (h_nr_runnable:
// delayed ones do not count). A period ended: `decayed` for schedutil.
// Inline: ten calls per pipe round trip.
inline void Scheduler::pelt_update_cpu(int cpu) {
    Rq& rq = rq_of(cpu);
    const auto count = static_cast<uint32_t>(rq.nr_running - rq.nr_delayed);
    const uint32_t scale = rq.curr || count ? hw_.invariant_scale(cpu) : 0;
    if (pelt::update(rq.pelt, engine_.now(), rq.cfs.load_weight, count, rq.curr != nullptr, scale, 1))
        rq.util_decayed = true;
}

// update_load_avg(): cfs_rq_util_change() -> cpufreq_update_util() only when `decayed`.
inline void Scheduler::cpufreq_update_util(int cpu) {
    Rq& rq = rq_of(cpu);
    if (!rq.util_decayed) return;
    rq.util_decayed = false;
    hw_.util_changed(cpu, false, this_cpu());
}

// __update_load_avg_se(): load while on the runqueue (se->on_rq: a delayed sleeper too),
// runnable while on it and not delayed (se_runnable()).
inline void Scheduler::pelt_update_task(Task& t, bool running, bool runnable) {
    const uint32_t scale = t.cpu >= 0 ? hw_.invariant_scale(t.cpu) : 1024;
    if (pelt::update(t.pelt, engine_.now(), runnable || t.sched_delayed ? 1 : 0, runnable ? 1 : 0, running, scale, t.weight))
        t.pelt.util_avg_unchanged = false;  // cfs_se_util_change()
}

}  // namespace wakesim
