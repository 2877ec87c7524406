#include "hw/machine_profile.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>

#include "input/json_input.h"
#include "topology/cpuset.h"

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
        {{"syscall_ns", "ns", "null syscall entry + exit: pipe and messaging reads and writes, and each system call of a FUSE client (pread, io_uring_enter, io_submit) and server (a worker's read and writev, a ring thread's io_uring_enter a round, the watchdog's poll)"}, &P::syscall_ns, nullptr},
        {{"pipe_copy_ns", "ns", "pipe_read/pipe_write bookkeeping and a small copy"}, &P::pipe_copy_ns, nullptr},
        {{"ctx_switch_ns", "ns", "__schedule() and switch between two tasks"}, &P::ctx_switch_ns, nullptr},
        {{"idle_switch_ns", "ns", "switch from the idle task to a task, after the idle exit"}, &P::idle_switch_ns, nullptr},
        {{"wake_local_ns", "ns", "try_to_wake_up onto the waker's own runqueue"}, &P::wake_local_ns, nullptr},
        {{"wake_remote_ns", "ns", "try_to_wake_up onto another CPU through its wake list (ttwu_queue_wakelist: the push and the IPI send)"}, &P::wake_remote_ns, nullptr},
        {{"wake_remote_rq_ns", "ns", "try_to_wake_up enqueuing the wakee itself on a busy CPU of its LLC (ttwu_queue_cond() false): the remote runqueue lock, the enqueue and the preemption check there"}, &P::wake_remote_rq_ns, nullptr},
        {{"wake_remote_rq_wakee_ns", "ns", "the wakee's side of wake_remote_rq: CPU time a task enqueued by a waker on another CPU spends when it first runs, pulling back the lines the waker wrote (its task, the runqueue, the wait queue); 0: not modelled apart"}, &P::wake_remote_rq_wakee_ns, nullptr},
        {{"select_base_ns", "ns", "select_task_rq_fair body, paid by the waker when the fair class is consulted"}, &P::select_base_ns, nullptr},
        {{"select_probe_ns", "ns", "each CPU probed by select_idle_cpu"}, &P::select_probe_ns, nullptr},
        {{"ipi_latency_ns", "ns", "IPI send until the handler runs on the target"}, &P::ipi_latency_ns, nullptr},
        {{"ipi_handler_ns", "ns", "time an IPI steals from a busy target"}, &P::ipi_handler_ns, nullptr},
        {{"ipi_send_ns", "ns", "the sending CPU's cost of an IPI (a reschedule IPI to a running CPU, a wake-list or wakeup IPI to a halted idle one): an APIC write on bare metal, a VM exit in a guest, paid by the task running there; the IPI leaves when it is done (when it begins with ipi_send_overlaps). 0: counted in wake_remote and wake_remote_rq"}, &P::ipi_send_ns, nullptr},
        {{"ipi_send_overlaps", "bool", "the IPI leaves when ipi_send begins, and the sender pays ipi_send while the IPI is on its way: a guest's APIC write exits to the host, whose handler kicks the target vCPU (kvm_vcpu_kick(), waking its halted thread) before the exit returns, so most of the sender's cost is the host's wake of the target. false: the IPI leaves when ipi_send is done"}, nullptr, &P::ipi_send_overlaps},
        {{"ipi_wakee_ns", "ns", "CPU time the task that an IPI switches in (the wakee on an idle CPU, or the task a reschedule IPI preempts for) spends before its own code runs: in a guest, the interrupt's injection and a vCPU resumed cold; 0 on bare metal (the handler is ipi_handler)"}, &P::ipi_wakee_ns, nullptr},
        {{"idle_exit_ns", "ns", "exit latency of the only idle state when no idle_states are listed"}, &P::idle_exit_ns, nullptr},
        {{"idle_entry_ns", "ns", "the idle loop's entry before the CPU enters its idle state when the governor stops the tick (tick_nohz_idle_stop_tick() reprograms the timer; an entry that keeps the tick takes none): the idle task polls need_resched meanwhile (TIF_POLLING_NRFLAG), so a wakeup needs no IPI, and the CPU leaves once the entry is done, then pays the state's exit latency; 0: in the state at once"}, &P::idle_entry_ns, nullptr},
        {{"idle_polls", "bool", "the only idle state polls need_resched (no IPI), when no idle_states are listed"}, nullptr, &P::idle_polls},
        {{"poll_wake_ns", "ns", "wake of an idle CPU that polls its flags (a polling or mwait state, or the idle loop's entry: the flag write it observes)"}, &P::poll_wake_ns, nullptr},
        {{"newidle_balance_ns", "ns", "newidle balance cost per CPU of a domain level's span"}, &P::newidle_balance_ns, nullptr},
        {{"tick_hz", "Hz", "CONFIG_HZ"}, &P::tick_hz, nullptr},
        {{"preempt_lazy", "bool", "wakeup preemption waits for the next tick (preempt=lazy)"}, nullptr, &P::preempt_lazy},
        {{"preempt_full", "bool", "kernel code is preemptible (CONFIG_PREEMPT, preempt=full): a preemption asked for while a task is inside a system call takes effect there. false (preempt=none or voluntary, the usual server kernels): it waits until the call returns to user space or the task sleeps. The model has such stretches where a step ends inside a call: a FUSE ring thread's round of replies, and a FUSE requester that queues its request and sleeps in request_wait_answer"}, nullptr, &P::preempt_full},
        {{"vcpu_pack", "mask", "the guest kernel's out-of-tree boot parameter sched_vcpu_pack (Firecracker guest kernels): a wakee goes to a busy vCPU with room instead of waking an idle one. Bits: 1 a wakeup from an idle vCPU's interrupt stays there; 2 a WF_SYNC wakeup packs onto the waker's vCPU; 4 any wakeup packs onto its busy prev, the waker's vCPU or the first busy vCPU with room; 8 a fork packs onto the parent's vCPU. Room: fair tasks only, at most one runnable, no wakeup pending, and the vCPU's util with the wakee's under 70% of capacity. 0: mainline"}, &P::vcpu_pack, nullptr},
        {{"cost_jitter_pct", "%", "each kernel-path cost varies uniformly by +- this percent (seeded: caches, interrupts)"}, &P::cost_jitter_pct, nullptr},
        {{"line_smt_ns", "ns", "one-way cache-line transfer between SMT siblings (core-to-core latency); 0: as line_cluster/line_llc"}, &P::line_smt_ns, nullptr},
        {{"line_cluster_ns", "ns", "one-way cache-line transfer within a cluster; 0: as line_llc"}, &P::line_cluster_ns, nullptr},
        {{"line_llc_ns", "ns", "one-way cache-line transfer between cores sharing the LLC: the distance wake_remote and ipi_latency hold for; 0: no distance-aware wake costs"}, &P::line_llc_ns, nullptr},
        {{"line_cross_llc_ns", "ns", "one-way cache-line transfer to another LLC of the node; 0: as line_llc"}, &P::line_cross_llc_ns, nullptr},
        {{"line_cross_numa_ns", "ns", "one-way cache-line transfer to another NUMA node; 0: as line_cross_llc"}, &P::line_cross_numa_ns, nullptr},
        {{"wake_remote_lines", "lines", "cache lines a remote try_to_wake_up moves between waker and target (each pays the pair's line cost above line_llc)"}, &P::wake_remote_lines, nullptr},
        {{"ipi_lines", "lines", "cache-line transfers in an IPI's delivery and handler (each pays the pair's line cost above line_llc)"}, &P::ipi_lines, nullptr},
        {{"pipe_lines", "lines", "cache lines of a pipe's state (mutex, ring indices, buffer slot, wait queues, inode times) a pipe read or write pulls from the CPU that used the pipe last, each at the pair's full line cost; 0: included in the fitted pipe costs"}, &P::pipe_lines, nullptr},
        {{"freq_transition_ns", "ns", "cpufreq transition latency: a new frequency takes effect after it"}, &P::freq_transition_ns, nullptr},
        {{"sugov_rate_limit_ns", "ns", "schedutil rate limit; 0: 1.5 x transition latency, or 1 ms"}, &P::sugov_rate_limit_ns, nullptr},
        {{"cpufreq_per_cpu", "bool", "each CPU is its own cpufreq policy, and the CPUs of a freq_domain (or of a cpufreq_policies entry) run at the highest of their requests: hardware coordination (ACPI _PSD HW_ALL, the usual server firmware setting; intel_cpufreq; amd-pstate; CPPC). schedutil then evaluates each CPU alone (sugov_update_single_freq()): its own rate limit, and no lower request while the CPU has not been idle long enough to stop its tick (sugov_hold_freq()). false: one policy for all the CPUs sharing a clock (ACPI SW_ANY/SW_ALL, a device tree's opp-shared table or qcom,freq-domain), evaluated together (sugov_update_shared())"}, nullptr, &P::cpufreq_per_cpu},
        {{"runnable_boost", "bool", "runnable boosting (\"sched/fair, cpufreq: Introduce 'runnable boosting'\", Dietmar Eggemann, Linux 6.5): schedutil's input (cpu_util_cfs_boost()) and the balancer's migrate_util choice of the busiest runqueue read the CPU's runnable_avg as well as its util_avg, so tasks waiting on a CPU raise its clock. false: a kernel before 6.5, util_avg and util_est only"}, nullptr, &P::runnable_boost},
        {{"polled_ilb_balances", "bool", "a NOHZ idle-balance kick of a CPU idle in a polling state (MWAIT, poll) balances. false: Linux 5.8 to 6.12, where the kick's set_nr_if_polling() left need_resched set and nohz_csd_func() raised no SCHED_SOFTIRQ, so the kick was lost: neither the balance nor the blocked-load update ran (\"smp: Optimize send_call_function_single_ipi()\", 5.8; fixed by \"sched/core: Remove the unnecessary need_resched() check in nohz_csd_func()\", K Prateek Nayak, 6.13)"}, nullptr, &P::polled_ilb_balances},
        {{"dvfs_from_any_cpu", "bool", "the cpufreq driver accepts a frequency request from any CPU (policy->dvfs_possible_from_any_cpu: cpufreq-dt, scmi-cpufreq, qcom-cpufreq-hw). false (acpi-cpufreq, intel_pstate/intel_cpufreq): schedutil acts only on an update made on a CPU of the policy (sugov_should_update_freq(): cpufreq_this_cpu_can_update()), so a remote enqueue, a remote dequeue or another CPU's blocked-load update of this CPU leaves its clock to its own next update"}, nullptr, &P::dvfs_from_any_cpu},
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

namespace {

// A duration exactly as a user would write it: the largest unit that keeps it short, with as
// many decimals as it needs (88 -> "88ns", 2220 -> "2.22us", 4000000 -> "4ms"); reads back equal.
std::string exact_duration(int64_t ns) {
    auto scaled = [](int64_t v, int64_t unit, int digits, const char* name) {
        std::string frac = std::to_string(v % unit);
        frac = std::string(static_cast<size_t>(digits) - frac.size(), '0') + frac;
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        return std::to_string(v / unit) + (frac.empty() ? "" : "." + frac) + name;
    };
    if (ns >= 1000000000 && ns % 1000000 == 0) return scaled(ns, 1000000000, 9, "s");
    if (ns >= 1000000) return scaled(ns, 1000000, 6, "ms");
    if (ns >= 1000) return scaled(ns, 1000, 3, "us");
    return std::to_string(ns) + "ns";
}

// A frequency in kHz as a user writes it ("2.4GHz", "800MHz", "2401kHz").
std::string exact_frequency(int64_t khz) {
    if (khz % 1000000 == 0) return std::to_string(khz / 1000000) + "GHz";
    if (khz % 1000 == 0) {
        if (khz >= 1000000 && khz % 100000 == 0)
            return std::to_string(khz / 1000000) + "." + std::to_string(khz % 1000000 / 100000) + "GHz";
        return std::to_string(khz / 1000) + "MHz";
    }
    return std::to_string(khz) + "kHz";
}

}  // namespace

std::vector<MachineProfile::Line> MachineProfile::describe() const {
    std::vector<Line> out;
    // A list of frequencies: as text ("1200000 2600000", kHz) and as a user types it.
    const auto freq_list = [](const std::vector<int64_t>& khz) {
        std::string text;
        nlohmann::json typed = nlohmann::json::array();
        for (int64_t k : khz) {
            if (!text.empty()) text += ' ';
            text += std::to_string(k);
            typed.push_back(exact_frequency(k));
        }
        return std::pair{text, typed.dump()};
    };
    for (const auto& f : fields()) {
        const int64_t v = f.i ? this->*(f.i) : static_cast<int64_t>(this->*(f.b));
        std::string text = f.b ? (v ? "true" : "false") : std::to_string(v);
        std::string key = f.info.name;
        nlohmann::json typed = f.b ? nlohmann::json(v != 0) : nlohmann::json(v);
        if (std::string(f.info.unit) == "ns") {
            key.resize(key.size() - 3);  // the JSON key drops "_ns": the value carries its unit
            typed = exact_duration(v);
        }
        out.push_back({f.info.name, text, f.info.unit, f.info.help, source_of(f.info.name), key, typed.dump()});
    }
    if (cpufreq_policies.empty()) {
        const auto [opps, opp_typed] = freq_list(opp_khz);
        out.push_back({"opp_khz", opps.empty() ? "fixed" : opps, "kHz", "operating points, ascending", source_of("opp_khz"),
                       "opp", opp_typed});
        out.push_back({"freq_domain", freq_domain, "", "CPUs sharing a clock", source_of("freq_domain"), "freq_domain",
                       nlohmann::json(freq_domain).dump()});
    } else {  // per-policy clocks replace the shared table and its grouping
        std::string text;
        nlohmann::json typed = nlohmann::json::array();
        for (const auto& pol : cpufreq_policies) {
            if (!text.empty()) text += ' ';
            text += pol.cpus + ':';
            nlohmann::json freqs = nlohmann::json::array();
            for (size_t i = 0; i < pol.opp_khz.size(); ++i) {
                if (i) text += ',';
                text += std::to_string(pol.opp_khz[i]);
                freqs.push_back(exact_frequency(pol.opp_khz[i]));
            }
            nlohmann::json d = {{"cpus", pol.cpus}, {"opp", std::move(freqs)}};
            if (pol.capacity_dmips_mhz) {
                text += "/dmips" + std::to_string(pol.capacity_dmips_mhz);
                d["capacity_dmips_mhz"] = pol.capacity_dmips_mhz;
            }
            typed.push_back(std::move(d));
        }
        out.push_back({"cpufreq_policies", text, "kHz", "clock domains: cpus:their OPPs[/capacity-dmips-mhz], ...",
                       source_of("cpufreq_policies"), "cpufreq_policies", typed.dump()});
    }
    out.push_back({"governor", governor, "", "cpufreq governor", source_of("governor"), "governor", nlohmann::json(governor).dump()});
    std::string states;
    nlohmann::json states_typed = nlohmann::json::array();
    for (const auto& s : effective_idle_states()) {
        states += (states.empty() ? "" : " ") + s.name + "(" + std::to_string(s.exit_ns) + "/" + std::to_string(s.residency_ns) +
                  (s.polling ? ",poll" : "") + (s.mwait ? ",mwait" : "") + (s.irq_enabled ? ",irq" : "") + ")";
        nlohmann::json st = {{"name", s.name}, {"exit_latency", exact_duration(s.exit_ns)},
                             {"target_residency", exact_duration(s.residency_ns)}};
        if (s.polling) st["polling"] = true;
        if (s.mwait) st["mwait"] = true;
        if (s.irq_enabled) st["irq_enabled"] = true;
        states_typed.push_back(std::move(st));
    }
    out.push_back({"idle_states", states, "ns", "name(exit latency/target residency), shallow to deep", source_of("idle_states"),
                   "idle_states", states_typed.dump()});
    out.push_back({"idle_governor", idle_governor, "", "cpuidle governor", source_of("idle_governor"), "idle_governor",
                   nlohmann::json(idle_governor).dump()});
    if (!turbo_khz.empty()) {  // optional: listed only where a machine has it
        const auto [text, typed] = freq_list(turbo_khz);
        out.push_back({"turbo_khz", text, "kHz", "at the highest OPP, the frequency with 1, 2, ... cores in C0",
                       source_of("turbo"), "turbo", typed});
    }
    if (!energy_model.empty()) {  // optional: listed only where a machine has one
        std::string text;
        nlohmann::json typed = nlohmann::json::array();
        for (const auto& pd : energy_model) {
            if (!text.empty()) text += ' ';
            text += pd.cpus;
            text += ':';
            nlohmann::json d = {{"cpus", pd.cpus}};
            if (pd.dynamic_power_coefficient) d["dynamic_power_coefficient"] = pd.dynamic_power_coefficient;
            nlohmann::json pd_opps = nlohmann::json::array();
            for (size_t i = 0; i < pd.opps.size(); ++i) {
                const auto& o = pd.opps[i];
                if (i) text += ',';
                text += std::to_string(o.khz);
                text += '/';
                text += std::to_string(o.power_uw);
                nlohmann::json jo = {{"freq", exact_frequency(o.khz)}};
                if (pd.dynamic_power_coefficient)
                    jo["voltage_mv"] = o.voltage_mv;
                else
                    jo["power_uw"] = o.power_uw;
                pd_opps.push_back(std::move(jo));
            }
            d["opps"] = std::move(pd_opps);
            typed.push_back(std::move(d));
        }
        out.push_back({"energy_model", text, "kHz/uW", "performance domains: cpus:OPP frequency/power, ...",
                       source_of("energy_model"), "energy_model", typed.dump()});
    }
    return out;
}


namespace {

// A parameter's JSON key is its name without "_ns": the value carries its unit ("650ns", "1.2us").
std::string json_key(const Field& f) {
    std::string k = f.info.name;
    if (k.size() > 3 && k.compare(k.size() - 3, 3, "_ns") == 0) k.resize(k.size() - 3);
    return k;
}

// The parameters that are not one number: JSON key and name (the key of `sources`).
constexpr std::pair<const char*, const char*> kStructured[] = {
    {"opp", "opp_khz"}, {"freq_domain", "freq_domain"}, {"governor", "governor"},
    {"idle_states", "idle_states"}, {"idle_governor", "idle_governor"}};

// Every parameter's JSON key: the numbers in table order, then the structured ones.
const std::vector<std::string>& param_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (const auto& f : fields()) k.push_back(json_key(f));
        for (const auto& [key, name] : kStructured) k.push_back(key);
        return k;
    }();
    return keys;
}

std::vector<MachineProfile::IdleState> read_idle_states(const JsonNode& s) {
    s.require_array();
    if (s.size() == 0) s.fail("expected at least one idle state");
    std::vector<MachineProfile::IdleState> out;
    InputErrorCollector errors;  // every bad state and field, each on its own line
    for (size_t i = 0; i < s.size(); ++i) {
        const JsonNode st = s[i];
        MachineProfile::IdleState is;
        bool ok = errors.attempt([&] {
            st.require_object();
            InputErrorCollector fields;
            fields.attempt([&] { st.check_keys({"name", "exit_latency", "target_residency", "polling", "mwait", "irq_enabled"}); });
            fields.attempt([&] {
                is.name = st.at("name").as_string();
                if (!is_plain_name(is.name)) st.at("name").fail("expected a state name without spaces or control characters");
            });
            fields.attempt([&] { is.exit_ns = st.at("exit_latency").as_duration_ns(0, 100000000); });
            const bool residency = fields.attempt([&] { is.residency_ns = st.at("target_residency").as_duration_ns(0, 1000000000); });
            fields.attempt([&] { is.polling = st.bool_or("polling", false); });
            fields.attempt([&] { is.mwait = st.bool_or("mwait", false); });
            fields.attempt([&] { is.irq_enabled = st.bool_or("irq_enabled", false); });
            if (residency && !out.empty() && is.residency_ns < out.back().residency_ns)
                fields.attempt([&] {
                    st.at("target_residency").fail("expected idle states from shallow to deep (target residency not decreasing)");
                });
            fields.finish();
        });
        if (ok) out.push_back(is);
    }
    errors.finish();
    return out;
}

// Reads the value of the parameter with JSON key `key`; returns the parameter's name.
std::string read_param(MachineProfile& p, const std::string& key, const JsonNode& v) {
    for (const auto& f : fields()) {
        if (json_key(f) != key) continue;
        const std::string unit = f.info.unit;
        if (f.b)
            p.*(f.b) = v.as_bool();
        else if (unit == "Hz")
            p.*(f.i) = v.as_int(10, 10000);  // CONFIG_HZ is a plain integer
        else if (unit == "%")
            p.*(f.i) = v.as_int(0, f.info.name == std::string("smt_factor_pct") ? 100 : 50);
        else if (unit == "ns/KiB")
            p.*(f.i) = v.as_int(0, 100000);
        else if (unit == "lines")
            p.*(f.i) = v.as_int(0, 64);
        else if (unit == "mask")
            p.*(f.i) = v.as_int(0, 15);
        else if (f.i == &MachineProfile::sampling_ns)
            // The sampler rearms itself one period on: a zero period would never let time pass.
            p.*(f.i) = v.as_duration_ns(MachineProfile::kMinSamplingNs, 10LL * 1000000000LL);
        else
            p.*(f.i) = v.as_duration_ns(0, 10LL * 1000000000LL);
        return f.info.name;
    }
    if (key == "opp") {
        // An empty list is a fixed clock (no cpufreq, e.g. a VM guest).
        v.require_array();
        p.opp_khz.clear();
        for (size_t i = 0; i < v.size(); ++i) {
            const int64_t k = v[i].as_frequency_khz(1000, 100000000);
            if (!p.opp_khz.empty() && k <= p.opp_khz.back()) v[i].fail("expected operating points in ascending order");
            p.opp_khz.push_back(k);
        }
        return "opp_khz";
    }
    if (key == "freq_domain")
        p.freq_domain = v.as_enum({"cpu", "core", "cluster", "llc", "package"});
    else if (key == "governor")
        p.governor = v.as_enum({"performance", "powersave", "schedutil", "ondemand", "conservative"});
    else if (key == "idle_governor")
        p.idle_governor = v.as_enum({"menu", "teo", "none"});
    else if (key == "idle_states")
        p.idle_states = read_idle_states(v);
    else
        throw std::logic_error("read_param: no parameter " + key);
    return key;
}

// The CPUs of one performance domain or cpufreq policy: a Linux CPU list, none of them already in
// another (`seen` collects them across the machine's domains).
std::vector<int> read_domain_cpus(const JsonNode& c, std::set<int>& seen, const char* what) {
    std::vector<int> ids;
    try {
        ids = parse_cpu_list(c.as_string());
    } catch (const InputError&) {
        throw;
    } catch (const std::exception&) {
        c.fail("expected a Linux CPU list such as \"0-3\"");
    }
    if (ids.empty()) c.fail("expected at least one CPU");
    for (int id : ids)
        if (!seen.insert(id).second)
            c.fail(std::string("expected each CPU in one ") + what + "; CPU " + std::to_string(id) + " is in two");
    return ids;
}

// The energy model as the kernel builds it from a device tree (drivers/opp/of.c
// dev_pm_opp_of_register_em(), _get_dt_power): per performance domain its CPUs and OPPs, each with
// its power in uW, or a dynamic-power-coefficient and each OPP's voltage, the power then being
// coefficient x mV^2 x MHz / 10^6 (integer MHz, as _get_dt_power computes it).
std::vector<MachineProfile::PerfDomain> read_energy_model(const JsonNode& v) {
    v.require_array();
    if (v.size() == 0) v.fail("expected at least one performance domain (leave \"energy_model\" out for none)");
    std::vector<MachineProfile::PerfDomain> out;
    std::set<int> seen;
    InputErrorCollector errors;  // every bad domain and OPP, each on its own line
    for (size_t i = 0; i < v.size(); ++i) {
        const JsonNode d = v[i];
        MachineProfile::PerfDomain pd;
        const bool ok = errors.attempt([&] {
            d.require_object();
            d.check_keys({"cpus", "dynamic_power_coefficient", "opps"});
            pd.cpus = d.at("cpus").as_string();
            pd.cpu_ids = read_domain_cpus(d.at("cpus"), seen, "performance domain");
            if (auto k = d.get("dynamic_power_coefficient")) pd.dynamic_power_coefficient = k->as_int(1, 100000);
            const JsonNode o = d.at("opps");
            o.require_array();
            if (o.size() == 0) o.fail("expected at least one OPP");
            const bool by_voltage = pd.dynamic_power_coefficient > 0;
            for (size_t j = 0; j < o.size(); ++j) {
                const JsonNode op = o[j];
                op.require_object();
                op.check_keys({"freq", "power_uw", "voltage_mv"});
                MachineProfile::EmOpp e;
                e.khz = op.at("freq").as_frequency_khz(1000, 100000000);
                if (!pd.opps.empty() && e.khz <= pd.opps.back().khz)
                    op.at("freq").fail("expected OPPs in ascending frequency");
                if (by_voltage) {
                    if (op.has("power_uw"))
                        op.at("power_uw").fail("expected \"voltage_mv\" only: the power comes from dynamic_power_coefficient");
                    e.voltage_mv = op.at("voltage_mv").as_int(100, 5000);
                    const int64_t mhz = e.khz / 1000;
                    e.power_uw = pd.dynamic_power_coefficient * e.voltage_mv * e.voltage_mv * mhz / 1000000;
                    if (e.power_uw <= 0) op.at("voltage_mv").fail("expected a voltage giving a power above 0 uW");
                } else {
                    if (op.has("voltage_mv"))
                        op.at("voltage_mv").fail("expected \"power_uw\", or \"dynamic_power_coefficient\" on the domain");
                    e.power_uw = op.at("power_uw").as_int(1, 100000000);  // em_create_perf_table: 0 < power <= EM_MAX_POWER
                }
                pd.opps.push_back(e);
            }
        });
        if (ok) out.push_back(std::move(pd));
    }
    errors.finish();
    return out;
}

// The clock domains as a device tree gives them (CPUs sharing an opp-shared table or a
// qcom,freq-domain; capacity-dmips-mhz per CPU): per policy its CPUs and OPPs in absolute kHz.
std::vector<MachineProfile::CpufreqPolicy> read_cpufreq_policies(const JsonNode& v) {
    v.require_array();
    if (v.size() == 0) v.fail("expected at least one cpufreq policy (leave \"cpufreq_policies\" out for one OPP table)");
    std::vector<MachineProfile::CpufreqPolicy> out;
    std::set<int> seen;
    InputErrorCollector errors;  // every bad policy, each on its own line
    for (size_t i = 0; i < v.size(); ++i) {
        const JsonNode d = v[i];
        MachineProfile::CpufreqPolicy pol;
        const bool ok = errors.attempt([&] {
            d.require_object();
            d.check_keys({"cpus", "opp", "capacity_dmips_mhz"});
            pol.cpus = d.at("cpus").as_string();
            pol.cpu_ids = read_domain_cpus(d.at("cpus"), seen, "cpufreq policy");
            const JsonNode o = d.at("opp");
            o.require_array();
            if (o.size() == 0) o.fail("expected at least one OPP");
            for (size_t j = 0; j < o.size(); ++j) {
                const int64_t k = o[j].as_frequency_khz(1000, 100000000);
                if (!pol.opp_khz.empty() && k <= pol.opp_khz.back()) o[j].fail("expected operating points in ascending order");
                pol.opp_khz.push_back(k);
            }
            if (auto k = d.get("capacity_dmips_mhz")) pol.capacity_dmips_mhz = k->as_int(1, 100000);
        });
        if (ok) out.push_back(std::move(pol));
    }
    errors.finish();
    // topology_normalize_cpu_scale() gives up unless every CPU has capacity-dmips-mhz.
    for (size_t i = 1; i < out.size(); ++i)
        if ((out[i].capacity_dmips_mhz > 0) != (out.front().capacity_dmips_mhz > 0))
            v[i].fail("expected \"capacity_dmips_mhz\" on every cpufreq policy or on none");
    return out;
}

// Turbo bins by active cores: frequencies not increasing with more cores in C0.
// `allow_empty`: a scenario's override may turn a machine's turbo off with [] (cpufreq boost 0).
std::vector<int64_t> read_turbo(const JsonNode& v, bool allow_empty) {
    v.require_array();
    if (v.size() == 0 && !allow_empty) v.fail("expected at least one frequency (leave \"turbo\" out for none)");
    if (v.size() > static_cast<size_t>(kMaxCpus))
        v.fail("expected at most " + std::to_string(kMaxCpus) + " frequencies (one per core in C0)");
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) {
        const int64_t k = v[i].as_frequency_khz(1000, 100000000);
        if (!out.empty() && k > out.back())
            v[i].fail("expected turbo frequencies by active cores, 1 core first: not rising with more cores");
        out.push_back(k);
    }
    return out;
}

// turbo needs the shared OPP table it sits on top of.
std::string turbo_mismatch(const MachineProfile& p) {
    if (p.turbo_khz.empty()) return {};
    const std::string off = "; \"turbo\": [] turns it off";
    if (!p.cpufreq_policies.empty())
        return "expected no \"turbo\" with \"cpufreq_policies\" (turbo sits on the shared \"opp\" table)" + off;
    if (p.opp_khz.empty()) return "expected an \"opp\" table under \"turbo\" (a fixed clock has no P0 to boost)" + off;
    if (p.turbo_khz.back() < p.opp_khz.back())
        return "expected turbo frequencies at or above the highest OPP (" + std::to_string(p.opp_khz.back()) + " kHz)" + off;
    return {};
}

std::string source_text(const JsonNode& n) {
    std::string s = n.as_string();
    if (s.empty()) n.fail("expected a source: where the value comes from (a datasheet, a measurement, an estimate)");
    return s;
}

}  // namespace

void MachineProfile::apply_overrides(const JsonNode& node) {
    node.require_object();
    std::vector<std::string> names{"base"};
    names.insert(names.end(), param_keys().begin(), param_keys().end());
    InputErrorCollector errors;  // every unknown key and bad value, each on its own line
    names.push_back("energy_model");
    names.push_back("cpufreq_policies");
    names.push_back("turbo");
    errors.attempt([&] { node.check_keys(names); });
    if (auto v = node.get("cpufreq_policies"))
        errors.attempt([&] {
            cpufreq_policies = read_cpufreq_policies(*v);
            opp_khz.clear();
            sources["cpufreq_policies"] = "scenario override";
        });
    for (const auto& key : param_keys())
        if (auto v = node.get(key)) errors.attempt([&] {
            if ((key == "opp" || key == "freq_domain") && (!cpufreq_policies.empty() || node.has("cpufreq_policies")))
                v->fail("expected no \"" + key + "\" on a machine with \"cpufreq_policies\" (each policy lists its CPUs and OPPs)");
            sources[read_param(*this, key, *v)] = "scenario override";
        });
    if (auto v = node.get("energy_model"))
        errors.attempt([&] {
            energy_model = read_energy_model(*v);
            sources["energy_model"] = "scenario override";
        });
    if (auto v = node.get("turbo"))
        errors.attempt([&] {
            turbo_khz = read_turbo(*v, true);
            sources["turbo"] = "scenario override";
        });
    errors.attempt([&] {
        if (const std::string why = turbo_mismatch(*this); !why.empty()) {
            for (const char* k : {"turbo", "opp", "cpufreq_policies"})
                if (auto v = node.get(k)) v->fail(why);
            node.fail(why);
        }
    });
    errors.finish();
}

MachineProfile profile_from_json(const JsonNode& node, std::string name) {
    MachineProfile p;
    p.name = std::move(name);
    node.require_object();
    std::vector<std::string> names{"source"};
    names.insert(names.end(), param_keys().begin(), param_keys().end());
    names.push_back("energy_model");  // optional
    names.push_back("cpufreq_policies");  // optional; replaces "opp" and "freq_domain"
    names.push_back("turbo");  // optional
    InputErrorCollector errors;  // every parameter's mistakes, each on its own line
    const bool keys_ok = errors.attempt([&] { node.check_keys(names); });
    // A misspelt key is one mistake: the required key it stands for is not reported missing too.
    if (keys_ok || node.has("source")) errors.attempt([&] { p.source = source_text(node.at("source")); });
    const bool per_policy = node.has("cpufreq_policies");
    for (const auto& key : param_keys()) {
        if (!keys_ok && !node.has(key)) continue;
        if (per_policy && (key == "opp" || key == "freq_domain")) {
            if (node.has(key))
                errors.attempt([&] {
                    node.at(key).fail("expected no \"" + key + "\" with \"cpufreq_policies\" (each policy lists its CPUs and OPPs)");
                });
            continue;
        }
        errors.attempt([&] {
            const JsonNode e = node.at(key);
            e.require_object();
            InputErrorCollector entry;
            const bool entry_keys_ok = entry.attempt([&] { e.check_keys({"value", "source", "note"}); });
            std::string param = key;
            // A misspelt "value" is one mistake: its missing key is not a second.
            if (entry_keys_ok || e.has("value")) entry.attempt([&] { param = read_param(p, key, e.at("value")); });
            entry.attempt([&] {
                if (auto s = e.get("source")) p.sources[param] = source_text(*s);
            });
            entry.attempt([&] {
                if (auto n = e.get("note")) (void)n->as_string();
            });
            entry.finish();
        });
    }
    // The structured keys: {"value": ..., "source", "note"}, the value read by its own reader.
    auto structured = [&](const char* key, auto read) {
        if (auto k = node.get(key))
            errors.attempt([&] {
                const JsonNode e = *k;
                e.require_object();
                e.check_keys({"value", "source", "note"});
                InputErrorCollector entry;
                entry.attempt([&] { read(e.at("value")); });
                entry.attempt([&] {
                    if (auto s = e.get("source")) p.sources[key] = source_text(*s);
                });
                entry.attempt([&] {
                    if (auto n = e.get("note")) (void)n->as_string();
                });
                entry.finish();
            });
    };
    structured("cpufreq_policies", [&](const JsonNode& v) { p.cpufreq_policies = read_cpufreq_policies(v); });
    structured("energy_model", [&](const JsonNode& v) { p.energy_model = read_energy_model(v); });
    // turbo against the OPP table only once that table was read: no second line for one mistake.
    const bool clocks_read = errors.empty();
    structured("turbo", [&](const JsonNode& v) { p.turbo_khz = read_turbo(v, false); });
    if (clocks_read)
        errors.attempt([&] {
            if (const std::string why = turbo_mismatch(p); !why.empty()) node.at("turbo").at("value").fail(why);
        });
    errors.finish();
    return p;
}

std::string energy_model_mismatch(const MachineProfile& profile, const Topology& topo) {
    if (profile.energy_model.empty()) return {};
    std::vector<int> covered(static_cast<size_t>(topo.nr_cpus()), 0);
    for (const auto& pd : profile.energy_model) {
        for (int c : pd.cpu_ids)
            if (c < 0 || c >= topo.nr_cpus())
                return "performance domain \"" + pd.cpus + "\" names CPU " + std::to_string(c) + ", which the topology lacks";
        for (int c : pd.cpu_ids) {
            covered[static_cast<size_t>(c)] = 1;
            // em_cpu_energy() takes the domain's first CPU's capacity for all of them.
            if (topo.cpu(c).capacity != topo.cpu(pd.cpu_ids.front()).capacity)
                return "performance domain \"" + pd.cpus + "\" spans CPUs of different capacities";
        }
    }
    for (int c = 0; c < topo.nr_cpus(); ++c)
        if (!covered[static_cast<size_t>(c)])
            return "CPU " + std::to_string(c) + " is in no performance domain (build_perf_domains() needs one for every CPU)";
    return {};
}

std::string cpufreq_policy_mismatch(const MachineProfile& profile, const Topology& topo) {
    if (profile.cpufreq_policies.empty()) return {};
    std::vector<int> policy_of(static_cast<size_t>(topo.nr_cpus()), -1);
    for (size_t i = 0; i < profile.cpufreq_policies.size(); ++i) {
        const auto& pol = profile.cpufreq_policies[i];
        for (int c : pol.cpu_ids) {
            if (c < 0 || c >= topo.nr_cpus())
                return "cpufreq policy \"" + pol.cpus + "\" names CPU " + std::to_string(c) + ", which the topology lacks";
            policy_of[static_cast<size_t>(c)] = static_cast<int>(i);
        }
    }
    for (int c = 0; c < topo.nr_cpus(); ++c)
        if (policy_of[static_cast<size_t>(c)] < 0) return "CPU " + std::to_string(c) + " is in no cpufreq policy";
    // One performance domain per policy, over its OPPs (dev_pm_opp_of_register_em() reads the same table).
    for (const auto& pd : profile.energy_model) {
        const int first = pd.cpu_ids.empty() || pd.cpu_ids.front() >= topo.nr_cpus() ? -1 : policy_of[static_cast<size_t>(pd.cpu_ids.front())];
        if (first < 0) continue;  // energy_model_mismatch() reports it
        const auto& pol = profile.cpufreq_policies[static_cast<size_t>(first)];
        if (pd.cpu_ids != pol.cpu_ids)
            return "performance domain \"" + pd.cpus + "\" is not the cpufreq policy \"" + pol.cpus + "\"";
        bool same = pd.opps.size() == pol.opp_khz.size();
        for (size_t i = 0; same && i < pd.opps.size(); ++i) same = pd.opps[i].khz == pol.opp_khz[i];
        if (!same) return "performance domain \"" + pd.cpus + "\" lists other frequencies than its cpufreq policy's OPPs";
    }
    return {};
}

std::vector<int> policy_capacities(const MachineProfile& profile, int nr_cpus) {
    if (!profile.capacities_from_policies()) return {};
    std::vector<int64_t> raw(static_cast<size_t>(nr_cpus), 0);
    int64_t scale = 1;
    for (const auto& pol : profile.cpufreq_policies)
        for (int c : pol.cpu_ids) {
            if (c < 0 || c >= nr_cpus) continue;
            raw[static_cast<size_t>(c)] = pol.capacity_dmips_mhz * pol.opp_khz.back();
            scale = std::max(scale, raw[static_cast<size_t>(c)]);
        }
    std::vector<int> out(static_cast<size_t>(nr_cpus));
    for (size_t c = 0; c < out.size(); ++c) out[c] = static_cast<int>(std::max<int64_t>(1, raw[c] * 1024 / scale));
    return out;
}

Topology with_policy_capacities(const Topology& topo, const MachineProfile& profile) {
    if (const std::string why = cpufreq_policy_mismatch(profile, topo); !why.empty()) throw std::invalid_argument(why);
    const std::vector<int> caps = policy_capacities(profile, topo.nr_cpus());
    if (caps.empty()) return topo;
    std::vector<CpuInfo> cpus = topo.cpus();
    for (auto& c : cpus) c.capacity = caps[static_cast<size_t>(c.id)];
    std::vector<std::vector<int>> dist(static_cast<size_t>(topo.nr_nodes()));
    for (int a = 0; a < topo.nr_nodes(); ++a)
        for (int b = 0; b < topo.nr_nodes(); ++b) dist[static_cast<size_t>(a)].push_back(topo.node_distance(a, b));
    return Topology::from_cpus(topo.name(), topo.description(), std::move(cpus), std::move(dist), topo.has_clusters());
}

MachineFile machine_file_from_json(const JsonNode& doc) {
    doc.require_object();
    // The topology and the profile are independent: the errors of both are reported.
    InputErrorCollector errors;
    Topology topo;
    MachineProfile profile;
    const bool topo_ok = errors.attempt([&] { topo = machine_topology_from_json(doc); });  // checks the top-level keys
    if (topo_ok || doc.has("profile"))  // a misspelt "profile" is reported once, as unknown
        errors.attempt([&] { profile = profile_from_json(doc.at("profile"), machine_name_of(doc.file())); });
    errors.finish();
    if (const std::string why = cpufreq_policy_mismatch(profile, topo); !why.empty())
        doc.at("profile").at("cpufreq_policies").at("value").fail("expected cpufreq policies over the topology's CPUs: " + why);
    topo = with_policy_capacities(topo, profile);
    if (const std::string why = energy_model_mismatch(profile, topo); !why.empty())
        doc.at("profile").at("energy_model").at("value").fail("expected performance domains over the topology's CPUs: " + why);
    return {std::move(topo), std::move(profile)};
}

MachineFile load_machine_file(const std::string& path) {
    const nlohmann::json doc = load_json_file(path);
    return machine_file_from_json(JsonNode(doc, path));
}

MachineProfile make_machine_profile(const std::string& name) { return load_machine_file(machine_path(name)).profile; }

}  // namespace wakesim
