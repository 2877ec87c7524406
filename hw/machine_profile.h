// Hardware and kernel-path costs of one machine: every constant is a named parameter with a unit,
// and each machine file (machines/<name>.json, docs/machines.md) gives its value and source. One
// profile per machine, never one per scenario row.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace wakesim {

class JsonNode;

struct MachineProfile {
    std::string name;
    std::string source;  // where the machine's numbers come from, for parameters without their own

    // Kernel path costs (wall time at nominal frequency).
    int64_t syscall_ns = 100;         // null syscall entry + exit
    int64_t pipe_copy_ns = 200;       // pipe_read/pipe_write bookkeeping and a small copy
    int64_t ctx_switch_ns = 900;      // __schedule + switch between two tasks
    int64_t idle_switch_ns = 400;     // switch from the idle task to a task (after idle exit)
    int64_t wake_local_ns = 250;      // ttwu on the waker's own runqueue
    int64_t wake_remote_ns = 350;     // ttwu to another CPU through its wake list: push + IPI send
    int64_t wake_remote_rq_ns = 350;  // ttwu enqueuing on a busy CPU of the LLC itself: its rq lock and enqueue
    int64_t wake_remote_rq_wakee_ns = 0;  // the wakee's side of it, when it first runs
    int64_t select_base_ns = 40;      // select_task_rq_fair body (record_wakee, wake_affine, SIS checks)
    int64_t select_probe_ns = 4;      // each CPU probed by select_idle_cpu / select_idle_core
    int64_t ipi_latency_ns = 1000;    // IPI send -> handler runs on the target
    int64_t ipi_handler_ns = 300;     // time an IPI steals from a busy target
    int64_t ipi_send_ns = 0;          // the sender's cost of an IPI (a VM exit in a guest)
    bool ipi_send_overlaps = false;   // the IPI leaves at the start of ipi_send (a guest: KVM kicks it inside the exit)
    int64_t ipi_wakee_ns = 0;         // CPU time of the task an IPI switches in, before its own code
    int64_t idle_exit_ns = 1000;      // exit latency of the idle state used for short gaps
    int64_t idle_entry_ns = 0;        // idle loop entry before the state (tick stop): polls need_resched
    bool idle_polls = false;          // idle CPUs poll need_resched: no IPI to wake them
    int64_t poll_wake_ns = 200;       // wake of a polling idle CPU (cache-line write seen)
    int64_t newidle_balance_ns = 500;  // newidle balance cost per CPU of the balanced domain
    int64_t tick_hz = 250;            // CONFIG_HZ
    bool preempt_lazy = false;        // wakeup preemption waits for the next tick (preempt=lazy)
    bool preempt_full = false;        // kernel code is preemptible (preempt=full); else only at return to user
    bool cpufreq_per_cpu = false;    // each CPU its own cpufreq policy; a shared clock runs at the highest request
    bool runnable_boost = true;       // schedutil and migrate_util read runnable_avg too (Linux 6.5+)
    bool polled_ilb_balances = true;  // an ILB kick of a polling-idle CPU balances (Linux 6.13+)
    bool dvfs_from_any_cpu = false;  // policy->dvfs_possible_from_any_cpu: schedutil acts on another CPU's update
    int64_t vcpu_pack = 0;            // the guest kernel's sched_vcpu_pack bits (out of tree); 0: mainline
    int64_t cost_jitter_pct = 3;      // each kernel-path cost varies uniformly by +-this percent (seeded)
    // One-way cache-line transfer between two CPUs by distance (published core-to-core latency).
    // wake_remote and ipi_latency hold for a pair sharing the LLC; a pair farther apart pays the
    // difference once per line the path moves between them. 0: as the next closer distance.
    int64_t line_smt_ns = 0, line_cluster_ns = 0, line_llc_ns = 0, line_cross_llc_ns = 0, line_cross_numa_ns = 0;
    int64_t wake_remote_lines = 3;    // try_to_wake_up: wakee's state/on_cpu, pi_lock, target's wake list or rq lock
    int64_t ipi_lines = 2;            // the IPI message, and the wake-list entry the handler reads back
    // Lines of a pipe's own state (mutex, ring indices, buffer slot, wait queues, inode times) that
    // pipe_read()/pipe_write() pull from the CPU that used the pipe last, each at that pair's full
    // line cost. 0: the fitted pipe costs include them (profiles fitted to cross-CPU runs).
    int64_t pipe_lines = 0;

    // Frequency (cpufreq). Work is given at the reference speed: capacity 1024 at the highest OPP.
    std::vector<int64_t> opp_khz;     // ascending operating points; empty: one fixed frequency
    std::string freq_domain = "package";  // CPUs sharing a clock: cpu, core, cluster, llc, package
    int64_t freq_transition_ns = 0;   // cpuinfo_transition_latency
    std::string governor = "performance";  // performance, powersave, schedutil, ondemand, conservative
    int64_t sugov_rate_limit_ns = 0;  // schedutil rate_limit_us; 0: 1.5 x transition latency, else 1 ms
    int64_t sampling_ns = 8000000;    // ondemand/conservative sampling period (2 ticks at HZ=250)
    // Turbo Boost, optional: the frequency a clock domain runs at while the governor asks for its
    // highest OPP (the P0 request) and 1, 2, ... of its cores are in C0 (beyond the list: its last
    // entry). Empty: the highest OPP is the frequency.
    std::vector<int64_t> turbo_khz;
    static constexpr int64_t kMinSamplingNs = 100000;  // shortest sampling period a profile may set

    // Idle states (cpuidle), shallow to deep; empty: one state from idle_exit_ns / idle_polls.
    struct IdleState {
        std::string name;
        int64_t exit_ns = 0;       // exit_latency
        int64_t residency_ns = 0;  // target_residency
        bool polling = false;      // the CPU polls need_resched: a wake needs no IPI
        // Entered with MONITOR/MWAIT on the idle task's flags (x86 mwait_idle_with_hints(): intel_idle,
        // ACPI FFH): TIF_POLLING_NRFLAG stays set, so a wake needs no IPI (set_nr_if_polling()),
        // but the CPU is in this state and pays its exit latency.
        bool mwait = false;
        // Waited in with interrupts enabled (x86 HLT: default_idle(), acpi_idle's safe_halt): an
        // IPI's handler runs inside the state, before the idle exit is recorded.
        bool irq_enabled = false;
    };
    std::vector<IdleState> idle_states;
    std::string idle_governor = "menu";  // menu (average of recent idle lengths), teo (recent intercepts) or none (deepest state, tick stopped)

    // Energy model (kernel/power/energy_model.c), optional: one performance domain per cpufreq
    // policy, its OPPs with their power. Empty: no energy model, so no EAS.
    struct EmOpp {
        int64_t khz = 0;
        int64_t power_uw = 0;    // as given, or dynamic-power-coefficient x mV^2 x MHz / 10^6
        int64_t voltage_mv = 0;  // 0: the power was given
    };
    struct PerfDomain {
        std::string cpus;           // Linux cpulist, as written
        std::vector<int> cpu_ids;   // parsed
        int64_t dynamic_power_coefficient = 0;  // uW/MHz/V^2; 0: powers given per OPP
        std::vector<EmOpp> opps;    // ascending frequency
    };
    std::vector<PerfDomain> energy_model;

    // Per-policy clocks (a cpufreq policy per clock domain, each with its own OPP table), optional.
    // Empty: every CPU runs `opp_khz`, grouped by `freq_domain`. Given: each CPU in one policy, at
    // that policy's absolute frequencies; with `capacity_dmips_mhz` on every policy the CPUs'
    // capacities are derived (topology_normalize_cpu_scale()) instead of read from the topology.
    struct CpufreqPolicy {
        std::string cpus;              // Linux cpulist, as written
        std::vector<int> cpu_ids;      // parsed
        std::vector<int64_t> opp_khz;  // ascending
        int64_t capacity_dmips_mhz = 0;  // the device tree's capacity-dmips-mhz; 0: not given
    };
    std::vector<CpufreqPolicy> cpufreq_policies;
    bool capacities_from_policies() const {
        return !cpufreq_policies.empty() && cpufreq_policies.front().capacity_dmips_mhz > 0;
    }

    // Cache refill after a task runs elsewhere, per KiB of its working set, by distance travelled.
    int64_t refill_smt_ns_per_kib = 2;        // the sibling shares L1/L2
    int64_t refill_cluster_ns_per_kib = 30;   // shared L2 / cluster cache
    int64_t refill_llc_ns_per_kib = 100;      // from another core's L2 through the LLC
    int64_t refill_cross_llc_ns_per_kib = 270;   // another LLC in the same node
    int64_t refill_cross_numa_ns_per_kib = 400;  // another node
    int64_t refill_dram_ns_per_kib = 230;     // a cold working set comes from memory
    int64_t cache_evict_busy_ns = 2000000;    // other work on a CPU that evicts ~63% of a set left there
    int64_t cache_evict_idle_ns = 100000000;  // time away that does the same through LLC traffic
    int64_t smt_factor_pct = 62;              // speed of a thread while its sibling runs (100: no effect)

    // Where each parameter's value comes from (docs/machines.md); absent: `source`.
    std::map<std::string, std::string> sources;
    const std::string& source_of(const std::string& param) const;
    const std::vector<IdleState>& effective_idle_states() const;

    struct ParamInfo {
        const char* name;
        const char* unit;  // "ns", "Hz", "bool"
        const char* help;
    };
    static const std::vector<ParamInfo>& params();
    int64_t get(const std::string& param) const;    // throws std::out_of_range
    void set(const std::string& param, int64_t v);  // throws std::out_of_range

    // Every parameter, structured ones included, as text for `list machines` and `topo show`.
    struct Line {
        std::string name, value, unit, help, source;
        // As a user types it in a scenario's "machine": {"profile": {...}}: the JSON key
        // ("syscall") and the value as JSON text ("\"100ns\"", "250", "[\"800MHz\"]").
        std::string key, typed;
    };
    std::vector<Line> describe() const;

    // Per-parameter overrides from a scenario's "machine": {"profile": {...}}; InputError on bad keys.
    void apply_overrides(const JsonNode& node);
};

// Reads a machine file's "profile": "source" and every parameter as {"value", "source"?, "note"?}.
MachineProfile profile_from_json(const JsonNode& node, std::string name);

// A machine file: its topology and its profile, both named after the file.
struct MachineFile {
    Topology topo;
    MachineProfile profile;
};
MachineFile machine_file_from_json(const JsonNode& doc);  // doc.file() names the machine
// Why `profile`'s energy model cannot run on `topo` (a CPU outside it or in no domain, one domain
// over CPUs of different capacities); empty: it fits (or there is none).
std::string energy_model_mismatch(const MachineProfile& profile, const Topology& topo);
// Why `profile`'s cpufreq policies cannot run on `topo` (a CPU outside it or in no policy, an
// energy-model domain that is not a policy or lists other frequencies); empty: they fit (or there
// are none).
std::string cpufreq_policy_mismatch(const MachineProfile& profile, const Topology& topo);
// topology_normalize_cpu_scale(): capacity-dmips-mhz x the policy's highest frequency, scaled so the
// largest is 1024 (rounded down). Empty when the profile gives no capacity-dmips-mhz.
std::vector<int> policy_capacities(const MachineProfile& profile, int nr_cpus);
// `topo` with the capacities policy_capacities() derives (unchanged when it derives none).
// Throws std::invalid_argument when the policies do not fit the topology.
Topology with_policy_capacities(const Topology& topo, const MachineProfile& profile);
MachineFile load_machine_file(const std::string& path);
// The profile of the machine `name` in the machines directory; throws std::out_of_range if unknown.
MachineProfile make_machine_profile(const std::string& name);

}  // namespace wakesim
