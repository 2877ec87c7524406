#include "hw/machine_profile.h"

#include <stdexcept>

#include "input/json_input.h"

namespace wakesim {

namespace {

struct Field {
    MachineProfile::ParamInfo info;
    int64_t MachineProfile::*i = nullptr;
    bool MachineProfile::*b = nullptr;
};

const std::vector<Field>& fields() {
    using P = MachineProfile;
    static const std::vector<Field> f = {
        {{"syscall_ns", "ns", "null syscall entry + exit"}, &P::syscall_ns, nullptr},
        {{"pipe_copy_ns", "ns", "pipe_read/pipe_write bookkeeping and a small copy"}, &P::pipe_copy_ns, nullptr},
        {{"ctx_switch_ns", "ns", "__schedule() and switch between two tasks"}, &P::ctx_switch_ns, nullptr},
        {{"idle_switch_ns", "ns", "switch from the idle task to a task, after the idle exit"}, &P::idle_switch_ns, nullptr},
        {{"wake_local_ns", "ns", "try_to_wake_up onto the waker's own runqueue"}, &P::wake_local_ns, nullptr},
        {{"wake_remote_ns", "ns", "try_to_wake_up onto another CPU (wake-list push + IPI send, or remote rq lock)"}, &P::wake_remote_ns, nullptr},
        {{"select_base_ns", "ns", "select_task_rq_fair body, paid by the waker when the fair class is consulted"}, &P::select_base_ns, nullptr},
        {{"select_probe_ns", "ns", "each CPU probed by select_idle_cpu"}, &P::select_probe_ns, nullptr},
        {{"ipi_latency_ns", "ns", "IPI send until the handler runs on the target"}, &P::ipi_latency_ns, nullptr},
        {{"ipi_handler_ns", "ns", "time an IPI steals from a busy target"}, &P::ipi_handler_ns, nullptr},
        {{"idle_exit_ns", "ns", "exit latency of the only idle state when no idle_states are listed"}, &P::idle_exit_ns, nullptr},
        {{"idle_polls", "bool", "the only idle state polls need_resched (no IPI), when no idle_states are listed"}, nullptr, &P::idle_polls},
        {{"poll_wake_ns", "ns", "wake of a polling idle CPU (the flag write it observes)"}, &P::poll_wake_ns, nullptr},
        {{"newidle_balance_ns", "ns", "one newidle balance pass of one domain level"}, &P::newidle_balance_ns, nullptr},
        {{"tick_hz", "Hz", "CONFIG_HZ"}, &P::tick_hz, nullptr},
        {{"preempt_lazy", "bool", "wakeup preemption waits for the next tick (preempt=lazy)"}, nullptr, &P::preempt_lazy},
        {{"cost_jitter_pct", "%", "each kernel-path cost varies uniformly by +- this percent (seeded: caches, interrupts)"}, &P::cost_jitter_pct, nullptr},
        {{"freq_transition_ns", "ns", "cpufreq transition latency: a new frequency takes effect after it"}, &P::freq_transition_ns, nullptr},
        {{"sugov_rate_limit_ns", "ns", "schedutil rate limit; 0: 1.5 x transition latency, or 1 ms"}, &P::sugov_rate_limit_ns, nullptr},
        {{"sampling_ns", "ns", "ondemand/conservative sampling period"}, &P::sampling_ns, nullptr},
        {{"refill_smt_ns_per_kib", "ns/KiB", "refill of a working set last used on an SMT sibling"}, &P::refill_smt_ns_per_kib, nullptr},
        {{"refill_cluster_ns_per_kib", "ns/KiB", "refill from another core of the same cluster"}, &P::refill_cluster_ns_per_kib, nullptr},
        {{"refill_llc_ns_per_kib", "ns/KiB", "refill from another core sharing the LLC"}, &P::refill_llc_ns_per_kib, nullptr},
        {{"refill_cross_llc_ns_per_kib", "ns/KiB", "refill from another LLC of the same node"}, &P::refill_cross_llc_ns_per_kib, nullptr},
        {{"refill_cross_numa_ns_per_kib", "ns/KiB", "refill from another NUMA node"}, &P::refill_cross_numa_ns_per_kib, nullptr},
        {{"refill_dram_ns_per_kib", "ns/KiB", "refill of a cold working set from memory"}, &P::refill_dram_ns_per_kib, nullptr},
        {{"cache_evict_busy_ns", "ns", "other work on a CPU that evicts 63% of a working set left there"}, &P::cache_evict_busy_ns, nullptr},
        {{"cache_evict_idle_ns", "ns", "time away that evicts 63% of a working set through shared-cache traffic"}, &P::cache_evict_idle_ns, nullptr},
        {{"smt_factor_pct", "%", "a thread's speed while its SMT sibling runs (100: no contention)"}, &P::smt_factor_pct, nullptr},
    };
    return f;
}

const Field& field(const std::string& name) {
    for (const auto& f : fields())
        if (name == f.info.name) return f;
    throw std::out_of_range("unknown machine parameter " + name);
}

using IS = MachineProfile::IdleState;

// Sources cited per parameter (docs/machines.md lists them in full).
const char* kSrcSyscall = "hardware-costs.md A1: gms.tf 'On the costs of syscalls'; Phoronix KPTI/retpoline figures";
const char* kSrcCtx = "hardware-costs.md A1: derived from perf bench sched pipe figures (Vagin's WF_SYNC thread; Arora's reply)";
const char* kSrcIpi = "hardware-costs.md A2: QNX hypervisor guide (bare-metal IPI < 1 us); 'sched/idle: Optimize try-to-wake-up IPI'";
const char* kSrcCache = "hardware-costs.md A5: nviennot/core-to-core-latency (line transfer by distance), divided by ~6 lines in flight; 4 KiB cold memcpy measured on the dev VM (0.9 us)";
const char* kSrcSmt = "hardware-costs.md A6: Intel HT guidance and Percona HT measurements (0.55-0.70x per thread)";
const char* kSrcSugov = "kernel-wakeup-path.md 12.3 (schedutil: 1.25 headroom, rate limit = 1.5 x transition latency)";
const char* kSrcOndemand = "cpufreq_governor.c: sampling = max(2 ticks, transition delay); conservative 80/20/5%";

void cite(MachineProfile& p, std::initializer_list<const char*> names, const char* src) {
    for (const char* n : names) p.sources[n] = src;
}

void x86_sources(MachineProfile& p) {
    cite(p, {"syscall_ns"}, kSrcSyscall);
    cite(p, {"ctx_switch_ns", "idle_switch_ns", "wake_local_ns", "wake_remote_ns", "pipe_copy_ns"}, kSrcCtx);
    cite(p, {"ipi_latency_ns", "ipi_handler_ns", "poll_wake_ns"}, kSrcIpi);
    cite(p, {"refill_smt_ns_per_kib", "refill_cluster_ns_per_kib", "refill_llc_ns_per_kib", "refill_cross_llc_ns_per_kib",
             "refill_cross_numa_ns_per_kib", "refill_dram_ns_per_kib", "cache_evict_busy_ns", "cache_evict_idle_ns"},
         kSrcCache);
    cite(p, {"smt_factor_pct"}, kSrcSmt);
    cite(p, {"sugov_rate_limit_ns"}, kSrcSugov);
    cite(p, {"sampling_ns"}, kSrcOndemand);
}

// Ampere Altra Q80-30 (Neoverse N1, 3.0 GHz, no SMT, WFI idle). Costs fitted to seed table C:
// pinned pipe 3.055 us/op, unpinned 3.985 us/op (docs/validation.md).
MachineProfile altra() {
    MachineProfile p;
    p.name = "altra-80";
    p.source = "Ampere Altra Q80-30; kernel-path costs fitted to seed table C (perf bench sched pipe)";
    p.syscall_ns = 168;
    p.pipe_copy_ns = 202;
    p.ctx_switch_ns = 629;
    p.idle_switch_ns = 427;
    p.wake_local_ns = 314;
    p.wake_remote_ns = 371;
    p.select_base_ns = 37;
    p.select_probe_ns = 3;
    p.ipi_latency_ns = 395;
    p.ipi_handler_ns = 300;
    p.idle_exit_ns = 170;
    p.tick_hz = 250;
    // CPPC, 1.0-3.0 GHz; servers of this class run the performance governor (fixed 3.0 GHz).
    p.opp_khz = {1000000, 1500000, 2000000, 2500000, 3000000};
    p.freq_domain = "cpu";
    p.freq_transition_ns = 1000000;
    p.governor = "performance";
    p.idle_states = {IS{"WFI", 170, 1000, false}};
    p.smt_factor_pct = 100;
    // Neoverse N1: 1 MiB private L2, 32 MiB SLC on the mesh: no cluster level, long mesh hops.
    p.refill_llc_ns_per_kib = 120;
    p.refill_cross_llc_ns_per_kib = 120;
    p.refill_cross_numa_ns_per_kib = 400;
    p.refill_dram_ns_per_kib = 250;
    p.sources["opp_khz"] = "Ampere Altra datasheet: Q80-30 3.0 GHz max, 1.0 GHz min (CPPC)";
    p.sources["governor"] = "assumption: table C was measured at the fixed 3.0 GHz (performance governor)";
    p.sources["idle_states"] = "ARM_CPUIDLE_WFI_STATE (residency 1 us); exit fitted to table C";
    for (const char* n : {"syscall_ns", "pipe_copy_ns", "ctx_switch_ns", "idle_switch_ns", "wake_local_ns", "wake_remote_ns",
                          "select_base_ns", "ipi_latency_ns", "idle_exit_ns"})
        p.sources[n] = "fitted to seed table C (docs/validation.md)";
    p.sources["refill_llc_ns_per_kib"] = "hardware-costs.md A5: Neoverse mesh line transfer 45 ns (/ ~6 in flight)";
    return p;
}

// A current x86 server (Ice Lake-SP class), bare metal.
MachineProfile x86_server(const std::string& name, const std::string& source) {
    MachineProfile p;
    p.name = name;
    p.source = source;
    p.syscall_ns = 100;
    p.pipe_copy_ns = 250;
    p.ctx_switch_ns = 900;
    p.idle_switch_ns = 400;
    p.wake_local_ns = 250;
    p.wake_remote_ns = 350;
    p.select_base_ns = 40;
    p.select_probe_ns = 4;
    p.ipi_latency_ns = 800;
    p.ipi_handler_ns = 300;
    p.idle_exit_ns = 1000;
    p.tick_hz = 250;
    p.opp_khz = {800000, 1200000, 1600000, 2000000, 2400000, 2800000, 3000000};
    p.freq_domain = "core";
    p.freq_transition_ns = 20000;
    p.governor = "schedutil";
    p.idle_states = {IS{"POLL", 0, 0, true}, IS{"C1", 1000, 1000, false}, IS{"C1E", 4000, 4000, false},
                     IS{"C6", 170000, 600000, false}};
    x86_sources(p);
    p.sources["idle_states"] = "intel_idle icx_cstates: C1 1/1, C1E 4/4, C6 170/600 us (hardware-costs.md A3)";
    p.sources["opp_khz"] = "Xeon Gold 6300-class (Ice Lake-SP): 0.8 GHz min, 3.0 GHz all-core turbo; per-core P-states (HWP)";
    p.sources["governor"] = "distribution default with intel_cpufreq/acpi-cpufreq: schedutil";
    return p;
}

// The project's development VM: KVM guest on AMD EPYC Zen 4, 2 vCPUs, no cpufreq in the guest,
// no cpuidle driver registered (idle is a plain HLT), retpolines + SRSO safe-RET.
MachineProfile kvm() {
    MachineProfile p;
    p.name = "kvm-2vcpu";
    p.source = "measured on the dev VM (docs/validation.md): pipe pinned 13.5 us/op, unpinned 24.3 us/op";
    p.syscall_ns = 300;
    p.pipe_copy_ns = 900;
    p.ctx_switch_ns = 3800;
    p.idle_switch_ns = 2400;
    p.wake_local_ns = 1100;
    p.wake_remote_ns = 1900;
    p.select_base_ns = 60;
    p.select_probe_ns = 6;
    p.ipi_latency_ns = 3350;  // guest IPI: exit + inject + entry
    p.ipi_handler_ns = 1500;
    p.idle_exit_ns = 2300;    // halted vCPU rescheduled by the host
    p.tick_hz = 250;          // CONFIG_HZ of the dev VM's kernel
    p.governor = "performance";  // no cpufreq driver in the guest: the host decides
    p.idle_states = {IS{"HLT", 2300, 2300, false}};
    p.smt_factor_pct = 100;
    for (const char* n : {"syscall_ns", "pipe_copy_ns", "ctx_switch_ns", "idle_switch_ns", "wake_local_ns", "wake_remote_ns",
                          "ipi_latency_ns", "idle_exit_ns", "idle_states"})
        p.sources[n] = "fitted to perf bench sched pipe on the dev VM (docs/validation.md)";
    p.sources["syscall_ns"] =
        "fitted with pipe_copy: a write charges 1.2 us and a read 1.35 us, measured 1.26-1.34 and 1.28-1.36 us "
        "(non-blocking 100 B, docs/validation.md); a null syscall measured 170-340 ns (hardware-costs.md A1) "
        "and, with PTI on in a later boot, 1.0-1.1 us";
    p.sources["governor"] = "no cpufreq in the guest (/sys/devices/system/cpu/cpu0/cpufreq absent)";
    p.sources["tick_hz"] = "CONFIG_HZ=250 of the dev VM's kernel";
    cite(p, {"refill_smt_ns_per_kib", "refill_cluster_ns_per_kib", "refill_llc_ns_per_kib", "refill_cross_llc_ns_per_kib",
             "refill_cross_numa_ns_per_kib", "refill_dram_ns_per_kib"},
         kSrcCache);
    return p;
}

// big.LITTLE phone (Snapdragon 888 class): WFI and a cluster-sleep state, per-cluster DVFS.
MachineProfile phone() {
    MachineProfile p;
    p.name = "bl-4-3-1";
    p.source = "Arm phone SoC estimates: hardware-costs.md A1 (HiKey960 pipe 5.5-6.7 us/op), A3, A4";
    p.syscall_ns = 200;
    p.pipe_copy_ns = 300;
    p.ctx_switch_ns = 1200;
    p.idle_switch_ns = 500;
    p.wake_local_ns = 350;
    p.wake_remote_ns = 450;
    p.select_base_ns = 60;
    p.select_probe_ns = 5;
    p.ipi_latency_ns = 1500;
    p.ipi_handler_ns = 400;
    p.idle_exit_ns = 1000;
    p.tick_hz = 250;
    // One relative OPP table for every cluster (capacities carry the per-cluster peak speed).
    p.opp_khz = {300000, 700000, 1100000, 1500000, 1900000, 2400000, 2840000};
    p.freq_domain = "cluster";
    p.freq_transition_ns = 500000;
    p.governor = "schedutil";
    p.idle_states = {IS{"WFI", 1000, 1000, false}, IS{"cpu-sleep", 500000, 1000000, false}};
    p.smt_factor_pct = 100;
    p.sources["idle_states"] = "WFI 1/1 us (ARM_CPUIDLE_WFI_STATE); MediaTek cpu-mcdi 300+200 us entry+exit, 1 ms residency (hardware-costs.md A3)";
    p.sources["freq_transition_ns"] = "hardware-costs.md A4: Arm SCMI/mailbox DVFS 0.1-1 ms (estimate)";
    p.sources["opp_khz"] = "Snapdragon 888 OPPs 0.3-2.84 GHz (one table for all clusters: an approximation)";
    cite(p, {"sugov_rate_limit_ns"}, kSrcSugov);
    return p;
}

}  // namespace

const std::vector<MachineProfile::ParamInfo>& MachineProfile::params() {
    static const std::vector<ParamInfo> p = [] {
        std::vector<ParamInfo> v;
        for (const auto& f : fields()) v.push_back(f.info);
        return v;
    }();
    return p;
}

int64_t MachineProfile::get(const std::string& param) const {
    const Field& f = field(param);
    return f.i ? this->*(f.i) : static_cast<int64_t>(this->*(f.b));
}

void MachineProfile::set(const std::string& param, int64_t v) {
    const Field& f = field(param);
    if (f.i)
        this->*(f.i) = v;
    else
        this->*(f.b) = v != 0;
}

const std::string& MachineProfile::source_of(const std::string& param) const {
    auto it = sources.find(param);
    return it != sources.end() ? it->second : source;
}

const std::vector<MachineProfile::IdleState>& MachineProfile::effective_idle_states() const {
    if (!idle_states.empty()) return idle_states;
    static thread_local std::vector<IdleState> one;
    one = {IdleState{"C1", idle_exit_ns, idle_exit_ns, idle_polls}};
    return one;
}

std::vector<MachineProfile::Line> MachineProfile::describe() const {
    std::vector<Line> out;
    for (const auto& f : fields()) {
        const int64_t v = f.i ? this->*(f.i) : static_cast<int64_t>(this->*(f.b));
        std::string text = f.b ? (v ? "true" : "false") : std::to_string(v);
        out.push_back({f.info.name, text, f.info.unit, f.info.help, source_of(f.info.name)});
    }
    std::string opps;
    for (int64_t k : opp_khz) {
        if (!opps.empty()) opps += ' ';
        opps += std::to_string(k);
    }
    out.push_back({"opp_khz", opps.empty() ? "fixed" : opps, "kHz", "operating points, ascending", source_of("opp_khz")});
    out.push_back({"freq_domain", freq_domain, "", "CPUs sharing a clock", source_of("freq_domain")});
    out.push_back({"governor", governor, "", "cpufreq governor", source_of("governor")});
    std::string states;
    for (const auto& s : effective_idle_states())
        states += (states.empty() ? "" : " ") + s.name + "(" + std::to_string(s.exit_ns) + "/" + std::to_string(s.residency_ns) +
                  (s.polling ? ",poll" : "") + ")";
    out.push_back({"idle_states", states, "ns", "name(exit latency/target residency), shallow to deep", source_of("idle_states")});
    out.push_back({"idle_governor", idle_governor, "", "cpuidle governor", source_of("idle_governor")});
    return out;
}

void MachineProfile::apply_overrides(const JsonNode& node) {
    node.require_object();
    // JSON keys drop the "_ns" suffix: the value carries its unit ("650ns", "1.2us").
    auto key = [](const Field& f) {
        std::string k = f.info.name;
        if (k.size() > 3 && k.compare(k.size() - 3, 3, "_ns") == 0) k.resize(k.size() - 3);
        return k;
    };
    std::vector<std::string> names{"base", "opp", "freq_domain", "governor", "idle_states", "idle_governor"};
    for (const auto& f : fields()) names.push_back(key(f));
    node.check_keys(names);
    for (const auto& f : fields()) {
        auto v = node.get(key(f));
        if (!v) continue;
        const std::string unit = f.info.unit;
        if (f.b)
            this->*(f.b) = v->as_bool();
        else if (unit == "Hz")
            this->*(f.i) = v->as_int(10, 10000);  // CONFIG_HZ is a plain integer
        else if (unit == "%")
            this->*(f.i) = v->as_int(0, f.info.name == std::string("smt_factor_pct") ? 100 : 50);
        else if (unit == "ns/KiB")
            this->*(f.i) = v->as_int(0, 100000);
        else
            this->*(f.i) = v->as_duration_ns(0, 10LL * 1000000000LL);
        sources[f.info.name] = "scenario override";
    }
    if (auto o = node.get("opp")) {
        o->require_array();
        if (o->size() == 0) o->fail("expected at least one operating point, e.g. [\"1.2GHz\", \"2.6GHz\"]");
        opp_khz.clear();
        for (size_t i = 0; i < o->size(); ++i) {
            const int64_t k = (*o)[i].as_frequency_khz(1000, 100000000);
            if (!opp_khz.empty() && k <= opp_khz.back()) (*o)[i].fail("expected operating points in ascending order");
            opp_khz.push_back(k);
        }
        sources["opp_khz"] = "scenario override";
    }
    if (auto d = node.get("freq_domain")) freq_domain = d->as_enum({"cpu", "core", "cluster", "llc", "package"});
    if (auto g = node.get("governor")) {
        governor = g->as_enum({"performance", "powersave", "schedutil", "ondemand", "conservative"});
        sources["governor"] = "scenario override";
    }
    if (auto g = node.get("idle_governor")) idle_governor = g->as_enum({"menu", "teo"});
    if (auto s = node.get("idle_states")) {
        s->require_array();
        if (s->size() == 0) s->fail("expected at least one idle state");
        idle_states.clear();
        for (size_t i = 0; i < s->size(); ++i) {
            JsonNode st = (*s)[i];
            st.require_object();
            st.check_keys({"name", "exit_latency", "target_residency", "polling"});
            IdleState is;
            is.name = st.at("name").as_string();
            if (is.name.empty() || is.name.find(' ') != std::string::npos) st.at("name").fail("expected a state name without spaces");
            is.exit_ns = st.at("exit_latency").as_duration_ns(0, 100000000);
            is.residency_ns = st.at("target_residency").as_duration_ns(0, 1000000000);
            is.polling = st.bool_or("polling", false);
            if (!idle_states.empty() && is.residency_ns < idle_states.back().residency_ns)
                st.at("target_residency").fail("expected idle states from shallow to deep (target residency not decreasing)");
            idle_states.push_back(is);
        }
        sources["idle_states"] = "scenario override";
    }
}

std::vector<std::string> machine_profile_names() {
    return {"altra-80", "xeon-2s-16c32t", "e5-2650-2s", "epyc-zen4-2s", "bl-4-3-1", "kvm-2vcpu"};
}

bool is_machine_profile(const std::string& name) {
    for (const auto& n : machine_profile_names())
        if (n == name) return true;
    return false;
}

MachineProfile make_machine_profile(const std::string& name) {
    if (name == "altra-80") return altra();
    if (name == "xeon-2s-16c32t")
        return x86_server(name, "2-socket Xeon (Ice Lake-SP class): hardware-costs.md sections A1-A6, x86 defaults");
    if (name == "e5-2650-2s") {
        MachineProfile p = x86_server(name, "Xeon E5-2650 v2 (Ivy Bridge-EP, 2.6 GHz): hardware-costs.md sections A1-A6");
        p.syscall_ns = 230;  // KPTI + retpolines on pre-Cascade-Lake parts
        p.ctx_switch_ns = 1200;
        p.idle_exit_ns = 1000;
        // Ivy Bridge-EP: one P-state for the whole package, 1.2-2.6 GHz in 100 MHz steps.
        p.opp_khz.clear();
        for (int64_t k = 1200000; k <= 2600000; k += 100000) p.opp_khz.push_back(k);
        p.freq_domain = "package";
        p.freq_transition_ns = 10000;
        p.idle_states = {IS{"POLL", 0, 0, true}, IS{"C1", 1000, 1000, false}, IS{"C1E", 10000, 80000, false},
                         IS{"C3", 59000, 156000, false}, IS{"C6", 82000, 300000, false}};
        p.smt_factor_pct = 62;
        p.refill_llc_ns_per_kib = 110;
        p.refill_cross_numa_ns_per_kib = 450;
        p.sources["syscall_ns"] = "hardware-costs.md A1: Skylake with KPTI + retpoline ~230 ns";
        p.sources["idle_states"] = "intel_idle ivt_cstates: C1 1/1, C1E 10/80, C3 59/156, C6 82/300 us";
        p.sources["opp_khz"] = "Intel ARK: E5-2650 v2 1.2-2.6 GHz (turbo not modelled); package-wide P-state on Ivy Bridge-EP";
        p.sources["freq_domain"] = "Ivy Bridge-EP has one voltage/frequency plane per package (per-core P-states came with Haswell-EP)";
        p.sources["governor"] = "acpi-cpufreq with the distribution default schedutil";
        return p;
    }
    if (name == "epyc-zen4-2s") {
        MachineProfile p = x86_server(name, "AMD EPYC 9004 (Zen 4), 2 sockets: hardware-costs.md sections A1-A6");
        p.syscall_ns = 120;
        p.opp_khz = {1500000, 2200000, 3000000, 3700000};
        p.idle_states = {IS{"POLL", 0, 0, true}, IS{"C1", 1000, 2000, false}, IS{"C2", 400000, 800000, false}};
        p.refill_cross_llc_ns_per_kib = 300;
        p.refill_cross_numa_ns_per_kib = 450;
        p.sources["idle_states"] = "acpi_idle on EPYC: C1 FFH MWAIT 1/2 us, C2 IOPORT 0x814 400/800 us (hardware-costs.md A3)";
        p.sources["opp_khz"] = "amd-pstate, EPYC 9004: 1.5 GHz lowest nonlinear to 3.7 GHz (approximate)";
        return p;
    }
    if (name == "bl-4-3-1") return phone();
    if (name == "kvm-2vcpu") return kvm();
    throw std::out_of_range(name);
}

}  // namespace wakesim
