#include "sim/machine_profile.h"

#include <stdexcept>

#include "sim/json_input.h"

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
        {{"idle_exit_ns", "ns", "exit latency of the idle state used for short gaps"}, &P::idle_exit_ns, nullptr},
        {{"idle_polls", "bool", "idle CPUs poll need_resched, so waking them needs no IPI"}, nullptr, &P::idle_polls},
        {{"poll_wake_ns", "ns", "wake of a polling idle CPU"}, &P::poll_wake_ns, nullptr},
        {{"newidle_balance_ns", "ns", "one newidle balance pass of one domain level"}, &P::newidle_balance_ns, nullptr},
        {{"tick_hz", "Hz", "CONFIG_HZ"}, &P::tick_hz, nullptr},
        {{"preempt_lazy", "bool", "wakeup preemption waits for the next tick (preempt=lazy)"}, nullptr, &P::preempt_lazy},
        {{"cost_jitter_pct", "%", "each kernel-path cost varies uniformly by +- this percent (seeded: caches, interrupts)"}, &P::cost_jitter_pct, nullptr},
    };
    return f;
}

const Field& field(const std::string& name) {
    for (const auto& f : fields())
        if (name == f.info.name) return f;
    throw std::out_of_range("unknown machine parameter " + name);
}

// Ampere Altra Q80-30 (Neoverse N1, 3.0 GHz, no SMT, WFI idle), fitted to seed table C:
// pinned pipe 3.055 us/op, unpinned 3.985 us/op (docs/validation.md).
MachineProfile altra() {
    MachineProfile p;
    p.name = "altra-80";
    p.source = "Ampere Altra Q80-30; seed-figures.md table C (perf bench sched pipe), hardware-costs.md A1-A3";
    p.syscall_ns = 168;
    p.pipe_copy_ns = 202;
    p.ctx_switch_ns = 629;
    p.idle_switch_ns = 427;
    p.wake_local_ns = 314;
    p.wake_remote_ns = 371;
    p.select_base_ns = 37;
    p.select_probe_ns = 3;
    p.ipi_latency_ns = 420;
    p.ipi_handler_ns = 300;
    p.idle_exit_ns = 170;  // WFI
    p.tick_hz = 250;
    return p;
}

// A current x86 server (Sapphire Rapids / Zen 4 class), bare metal, C1 for short gaps.
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
    p.idle_exit_ns = 1000;  // C1 1 us (intel_idle icx/spr)
    p.tick_hz = 250;
    return p;
}

// The project's development VM: KVM guest on AMD EPYC Zen 4, 2 vCPUs, haltpoll with
// guest_halt_poll_ns=0, retpolines + SRSO safe-RET. Fitted to `perf bench sched pipe` here.
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
    return p;
}

// big.LITTLE phone (Snapdragon 888 class): WFI idle, slow mailbox IPIs.
MachineProfile phone() {
    MachineProfile p;
    p.name = "bl-4-3-1";
    p.source = "Arm phone SoC estimates: hardware-costs.md A1 (HiKey960 pipe 5.5-6.7 us/op), A3 (WFI 1 us)";
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

void MachineProfile::apply_overrides(const JsonNode& node) {
    node.require_object();
    // JSON keys drop the "_ns" suffix: the value carries its unit ("650ns", "1.2us").
    auto key = [](const Field& f) {
        std::string k = f.info.name;
        if (k.size() > 3 && k.compare(k.size() - 3, 3, "_ns") == 0) k.resize(k.size() - 3);
        return k;
    };
    std::vector<std::string> names{"base"};
    for (const auto& f : fields()) names.push_back(key(f));
    node.check_keys(names);
    for (const auto& f : fields()) {
        auto v = node.get(key(f));
        if (!v) continue;
        if (f.b)
            this->*(f.b) = v->as_bool();
        else if (std::string(f.info.unit) == "Hz")
            this->*(f.i) = v->as_int(10, 10000);
        else if (std::string(f.info.unit) == "%")
            this->*(f.i) = v->as_int(0, 50);
        else
            this->*(f.i) = v->as_duration_ns(0, 100000000);
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
        return x86_server(name, "2-socket Xeon (Ice Lake-SP class): hardware-costs.md A1-A3 x86 defaults");
    if (name == "e5-2650-2s") {
        MachineProfile p = x86_server(name, "Xeon E5-2650 v2 (Ivy Bridge-EP): hardware-costs.md A1-A3; C1 2 us");
        p.syscall_ns = 230;  // KPTI + retpolines on pre-Cascade-Lake parts
        p.idle_exit_ns = 2000;
        p.ctx_switch_ns = 1200;
        return p;
    }
    if (name == "epyc-zen4-2s") {
        MachineProfile p = x86_server(name, "AMD EPYC 9004 (Zen 4), 2 sockets: hardware-costs.md A1-A3; C1 MWAIT 1 us");
        p.syscall_ns = 120;
        return p;
    }
    if (name == "bl-4-3-1") return phone();
    if (name == "kvm-2vcpu") return kvm();
    throw std::out_of_range(name);
}

}  // namespace wakesim
