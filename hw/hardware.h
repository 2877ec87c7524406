// The hardware under the scheduler: frequency domains and cpufreq governors, idle states and the
// idle governor, cache warmth of working sets and shared data, SMT contention. Everything here
// turns a placement decision into time; the scheduler asks for speeds, wake latencies and refill
// costs and reports busy/idle transitions and utilisation changes.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hw/hardware_stats.h"
#include "hw/cache_warmth.h"
#include "hw/hw_observer.h"
#include "hw/machine_profile.h"
#include "topology/topology.h"

namespace wakesim {

// uclamp_rq_get(rq, UCLAMP_MIN / UCLAMP_MAX): a runqueue's clamps, 0..1024.
struct UclampPair {
    int min = 0;
    int max = 1024;
};

// What the hardware needs from the scheduler.
class HardwareClient {
public:
    virtual ~HardwareClient() = default;
    virtual double cpu_util(int cpu) const = 0;      // schedutil's input (cpu_util_cfs_boost), frequency invariant
    virtual UclampPair cpu_uclamp(int /*cpu*/) const { return {}; }  // asked once some task is clamped
    virtual Time cpu_busy_ns(int cpu) const = 0;     // cumulative non-idle time
    virtual void speed_changed(int cpu) = 0;         // rescale the running segment
};

class Hardware final : public EventTarget {
public:
    Hardware(Engine& engine, const Topology& topo, const MachineProfile& prof);
    void set_client(HardwareClient* c) { client_ = c; }
    void set_observer(HwObserver* o) { obs_ = o; }
    void start();  // arms sampling governors

    // Speed relative to the reference (capacity 1024 at the highest OPP, sibling idle).
    double speed(int cpu) const { return speed_[static_cast<size_t>(cpu)]; }
    // The same without SMT contention: what PELT's capacity and frequency invariance scale by.
    double invariant_speed(int cpu) const { return inv_speed_[static_cast<size_t>(cpu)]; }
    // The same x 1024, rounded: the integer PELT scales its running time by (the kernel's
    // arch_scale_freq_capacity() applied to arch_scale_cpu_capacity()), kept as the speed changes.
    uint32_t invariant_scale(int cpu) const { return inv_scale_[static_cast<size_t>(cpu)]; }
    int64_t freq_khz(int cpu) const { return dom(cpu).cur; }  // the OPP the governor set (P0 for turbo)
    int64_t effective_khz(int cpu) const { return dom(cpu).eff; }  // the clock, turbo included
    // cpuinfo.max_freq of the CPU's policy: what frequency invariance and schedutil scale by.
    int64_t max_khz(int cpu) const { return dom(cpu).fmax; }
    // The CPU's policy: its index (CPUs of one policy share a clock) and OPP table.
    int policy_of(int cpu) const { return dom_of_[static_cast<size_t>(cpu)]; }
    const std::vector<int64_t>& opps_of(int cpu) const { return dom(cpu).opp; }
    const std::string& governor() const { return gov_name_; }

    // A CPU starts or stops running tasks (SMT contention, governor load, residency).
    void set_busy(int cpu, bool busy);
    // cpufreq_update_util(): the CPU's utilisation changed (enqueue, dequeue, tick); `iowait`:
    // SCHED_CPUFREQ_IOWAIT, a task woken from I/O wait was enqueued.
    // `from`: the CPU making the update (-1: unknown, taken as `cpu`'s own).
    void util_changed(int cpu, bool iowait = false, int from = -1);
    // The scheduler has a clamped task (uclamp_is_used()): schedutil reads the runqueues' clamps.
    void set_uclamp_used() { uclamp_ = true; }
    // sugov_iowait_boost(): a task woken from I/O wait raises the CPU's boost (128, doubling at
    // each such wakeup up to 1024); each evaluation of the policy without one halves it, and a
    // CPU without a cpufreq update for a tick loses it (sugov_iowait_apply()).
    void iowait_boost(int cpu, int from = -1) { util_changed(cpu, true, from); }
    // The boost as the CPU's state holds it (not applied: applying it halves it).
    int64_t iowait_boost_value(int cpu) const { return sg_[static_cast<size_t>(cpu)].boost; }

    // cpuidle: the idle governor picks a state on entry; a wake pays that state's exit latency.
    void idle_enter(int cpu);
    // `tick`: the CPU's own tick woke it (its tick was kept): the governors take the period as
    // lasting until the next timer (menu_update()'s tick_wakeup, teo_update()'s safety net).
    void idle_exit(int cpu, bool tick = false);
    // The governor let the tick stop at the last idle entry (menu_select()'s stop_tick; the
    // kernel then calls nohz_balance_enter_idle()); false while the tick keeps running.
    bool tick_stopped(int cpu) const { return tick_stopped_[static_cast<size_t>(cpu)] != 0; }
    int idle_state(int cpu) const { return idle_state_[static_cast<size_t>(cpu)]; }
    // The exit latency of the state an idle CPU is in; -1 when it is in none.
    int64_t idle_exit_latency(int cpu) const {
        const int st = idle_state_[static_cast<size_t>(cpu)];
        return st < 0 ? -1 : states_[static_cast<size_t>(st)].exit_ns;
    }
    // A wake's latency: the rest of the idle loop's entry (idle_entry), then the state's exit.
    int64_t wake_latency(int cpu) const;
    // When a local interrupt (a timer) that fires now on an idle CPU is handled: at the end of the
    // idle loop's entry, if it is still running (the state returns at once with an interrupt
    // pending), else after the state's exit latency.
    int64_t irq_latency(int cpu) const {
        const int st = idle_state_[static_cast<size_t>(cpu)];
        if (st < 0) return 0;
        const int64_t entry = entry_left(cpu);
        return entry > 0 ? entry : states_[static_cast<size_t>(st)].exit_ns;
    }
    // No IPI needed (TIF_POLLING_NRFLAG set): a polling or MWAIT state, or the idle loop's entry still running.
    bool polling(int cpu) const;
    // The CPU waits in a state entered with interrupts enabled (HLT): an IPI's handler runs before
    // the state's exit is recorded.
    bool idle_irq_enabled(int cpu) const {
        const int st = idle_state_[static_cast<size_t>(cpu)];
        return st >= 0 && states_[static_cast<size_t>(st)].irq_enabled;
    }
    const std::vector<MachineProfile::IdleState>& idle_states() const { return states_; }

    // Cache warmth: refill work (reference ns) when a task with working set `w` starts running
    // on `cpu`, and its leaving the CPU.
    int64_t switch_in(CacheWarmth& w, int cpu);
    void switch_out(CacheWarmth& w, int cpu);
    // Shared data (a pipe buffer, a FUSE request) touched on `cpu`: cost of fetching it from the
    // CPU that touched it last.
    int64_t touch_shared(int object, int64_t bytes, int cpu, int64_t lines = 0) {  // inline: one per pipe read or write
        if (object < 0 || (bytes <= 0 && lines <= 0)) return 0;
        if (static_cast<size_t>(object) >= shared_last_cpu_.size()) shared_last_cpu_.resize(static_cast<size_t>(object) + 1, -1);
        int& last = shared_last_cpu_[static_cast<size_t>(object)];
        // The data streams in at the refill rate; the object's own lines are dependent misses, each
        // a full core-to-core transfer.
        int64_t cost = 0;
        if (last >= 0 && last != cpu) {
            const auto d = static_cast<size_t>(topo_.classify(last, cpu));
            cost = bytes * refill_by_dist_[d] / 1024;  // transfer_ns_per_kib()
            if (lines > 0) cost += lines * line_full_[d];
        }
        last = cpu;
        refill_ns_ += cost;
        return cost;
    }
    // The CPU that touched `object` last (-1: none yet), and the undoing of a touch that returned
    // `cost` and found `last` there (a write planned ahead and taken back).
    int shared_last(int object) const {
        return static_cast<size_t>(object) < shared_last_cpu_.size() ? shared_last_cpu_[static_cast<size_t>(object)] : -1;
    }
    void untouch_shared(int object, int last, int64_t cost);
    // The energy model's power (uW) of a CPU of `pd` running at `khz` of a clock whose highest OPP
    // is `fmax_khz`: the first state at or above the same fraction of the domain's highest
    // frequency (the performance it delivers), as em_pd_get_efficient_state() picks states.
    static int64_t em_power_uw(const MachineProfile::PerfDomain& pd, int64_t khz, int64_t fmax_khz);
    // Per-KiB refill cost for data last used on `from` and needed on `to`, fully warm there.
    int64_t transfer_ns_per_kib(int from, int to) const { return refill_by_dist_[static_cast<size_t>(topo_.classify(from, to))]; }
    // What one cache line moved from `from` to `to` costs beyond a move within the LLC
    // (negative for SMT siblings); 0 when the profile gives no line costs or a CPU is unknown.
    bool line_aware() const { return line_aware_; }
    int64_t line_extra_ns(int from, int to) const {
        if (!line_aware_ || from < 0 || to < 0) return 0;
        // A ping-pong asks for the same two CPUs, in both directions: remember the last pair.
        if ((from == lx_a_ && to == lx_b_) || (from == lx_b_ && to == lx_a_)) return lx_ns_;
        lx_a_ = from;
        lx_b_ = to;
        lx_ns_ = line_extra_[static_cast<size_t>(topo_.classify(from, to))];
        return lx_ns_;
    }

    // Reporting over the measured window.
    void begin_window();
    // What the window measured, up to now (metrics/ reports it).
    HardwareStats window_stats() const;
    int64_t refill_ns() const { return refill_ns_ - refill_at_window_; }

    void on_event(const Event& e) override;

private:
    int64_t entry_left(int cpu) const;
    enum Kind : uint16_t { kApply, kSample };
    struct Domain {  // one cpufreq policy: its CPUs, OPP table and governor state
        std::vector<int> cpus;
        std::vector<int64_t> opp;  // ascending, absolute kHz
        int64_t fmin = 1, fmax = 1;
        int64_t cur = 0, target = 0;
        int64_t eff = 0;     // the clock it runs at: cur, or at the highest OPP the turbo bin
        size_t cur_idx = 0;  // index of cur in the OPP table
        int64_t requested = 0;  // conservative: the unrounded frequency it steps
        Time last_eval = -kTimeNever;
        uint32_t gen = 0;
        std::vector<Time> busy_at_sample;
        Time last_sample = 0;
    };
    struct CpuAcc {  // per-CPU time integrals for residency reports
        Time last = 0;
        bool busy = false;
        double khz_time = 0;       // integral of frequency over time
        double khz_busy_time = 0;  // the same while busy
        Time busy_time = 0;
        std::vector<Time> idle_res;  // per idle state
        std::vector<Time> opp_res;   // per OPP
        std::vector<Time> opp_busy;  // per OPP, while busy (the energy estimate)
        Time idle_entered = 0;
        Time idle_since = 0;  // the switch to idle (idle_entered restarts with the window)
    };
    void recompute_speed(int cpu);
    void apply_smt(int cpu);
    void set_domain_freq(Domain& d, int64_t khz);
    void request(Domain& d, int64_t khz);
    static int64_t opp_at_least(const Domain& d, int64_t khz);
    const Domain& dom(int cpu) const { return doms_[static_cast<size_t>(dom_of_[static_cast<size_t>(cpu)])]; }
    int64_t transfer_by_distance(CpuDistance d) const;
    void account(int cpu);
    void sample(Domain& d);
    int64_t turbo_khz(const Domain& d) const;
    void update_eff(Domain& d);
    void set_c0(int cpu, bool on);

    Engine& engine_;
    uint16_t target_;
    const Topology& topo_;
    const MachineProfile& prof_;
    HardwareClient* client_ = nullptr;
    HwObserver* obs_ = nullptr;
    std::string gov_name_;
    enum class Gov { performance, powersave, schedutil, ondemand, conservative } gov_;
    Time rate_limit_ = 0;
    std::vector<Domain> doms_;
    std::vector<int> dom_of_;
    std::vector<double> speed_, inv_speed_;
    std::vector<uint32_t> inv_scale_;  // inv_speed_ x 1024, rounded
    std::vector<double> clock_speed_;  // speed_ before SMT contention
    std::vector<uint8_t> busy_;
    // Turbo only: CPUs in C0 (busy, or idle in a polling state), per core its CPUs in C0, per
    // package its cores in C0 and its clock domains.
    std::vector<uint8_t> c0_;
    std::vector<int> core_c0_, pkg_active_;
    std::vector<std::vector<int>> pkg_doms_;
    std::vector<MachineProfile::IdleState> states_;
    bool teo_ = false;  // the idle governor is teo (else menu)
    bool no_governor_ = false;  // no cpuidle governor: the deepest state, and the tick stops at every entry
    bool uclamp_ = false;  // schedutil applies the runqueues' clamps
    bool line_aware_ = false;  // two CPUs of the machine differ in line cost (line_llc given)
    std::array<int64_t, 6> line_extra_{};  // by CpuDistance
    std::array<int64_t, 6> line_full_{};   // one line's one-way transfer by CpuDistance (0 on one CPU)
    std::array<int64_t, 6> refill_by_dist_{};  // transfer_ns_per_kib() by CpuDistance
    mutable int lx_a_ = -1, lx_b_ = -1;      // the last pair line_extra_ns() classified
    mutable int64_t lx_ns_ = 0;
    std::vector<int> idle_state_;
    std::vector<uint8_t> tick_stopped_;  // by CPU: the last idle entry stopped the tick
    std::vector<std::array<Time, 8>> idle_hist_;
    std::vector<uint64_t> idle_us_sum_, idle_us_sq_;  // of each CPU's idle_hist_ in us, and of their squares (menu)
    std::vector<Time> idle_avg_;       // menu's timer-based estimate without timers: periods averaged with weight 1/8
    std::vector<int> idle_hist_pos_;
    std::vector<CpuAcc> acc_;
    std::vector<std::vector<int64_t>> em_power_uw_;  // per CPU, per OPP: its energy-model power; empty: none
    std::vector<int> shared_last_cpu_;
    struct SugovCpu {  // struct sugov_cpu, and a policy of its own CPU (cpufreq_per_cpu)
        int64_t boost = 0;  // iowait_boost
        bool boost_pending = false;
        Time last_update = 0;  // of any cpufreq update of this CPU
        int64_t next_freq = 0;  // the CPU's own request
        Time last_freq_update = -kTimeNever;
        uint64_t idle_calls = 0, saved_idle_calls = 0;  // tick_nohz_get_idle_calls_cpu()
    };
    std::vector<SugovCpu> sg_;
    int64_t iowait_apply(int cpu);
    double sugov_perf(int cpu);
    Time tick_ns_ = 4000000;
    int64_t refill_ns_ = 0, refill_at_window_ = 0;
    Time window_start_ = 0;
};

// Inline: the wake path asks these per wakeup, the context switch per switch.

// The rest of the idle loop's entry (idle_entry), 0 once the CPU is in its state. The entry is
// the tick's stop (tick_nohz_idle_stop_tick() reprograms the timer); one that keeps the tick
// goes into the state at once.
inline int64_t Hardware::entry_left(int cpu) const {
    if (prof_.idle_entry_ns <= 0 || !tick_stopped_[static_cast<size_t>(cpu)]) return 0;
    const Time end = acc_[static_cast<size_t>(cpu)].idle_since + prof_.idle_entry_ns;
    return std::max<Time>(0, end - engine_.now());
}

inline int64_t Hardware::wake_latency(int cpu) const {
    const int st = idle_state_[static_cast<size_t>(cpu)];
    return st < 0 ? 0 : entry_left(cpu) + states_[static_cast<size_t>(st)].exit_ns;
}

inline bool Hardware::polling(int cpu) const {
    const int st = idle_state_[static_cast<size_t>(cpu)];
    if (st < 0) return false;
    const MachineProfile::IdleState& state = states_[static_cast<size_t>(st)];
    return state.polling || state.mwait || entry_left(cpu) > 0;
}

inline void Hardware::switch_out(CacheWarmth& w, int cpu) {
    w.left_at = engine_.now();
    w.busy_at_leave = client_ ? client_->cpu_busy_ns(cpu) : 0;
}

}  // namespace wakesim
