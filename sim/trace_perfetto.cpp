#include "sim/trace_perfetto.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace wakesim {

namespace {

using Kind = TraceEvent::Kind;

// Field numbers, by message (the .proto files named in trace_perfetto.h).
namespace trace {  // Trace
constexpr uint32_t packet = 1;
}
namespace packet {  // TracePacket
constexpr uint32_t ftrace_events = 1, process_tree = 2, timestamp = 8, trusted_packet_sequence_id = 10,
                   system_info = 45;
}
namespace system_info {  // SystemInfo, Utsname
constexpr uint32_t utsname = 1, num_cpus = 8;
constexpr uint32_t utsname_sysname = 1, utsname_release = 3;
}  // namespace system_info
namespace process_tree {  // ProcessTree, ProcessTree.Process, ProcessTree.Thread
constexpr uint32_t processes = 1, threads = 2;
constexpr uint32_t process_pid = 1, process_cmdline = 3, process_is_kthread = 8, process_cmdline_is_comm = 9;
constexpr uint32_t thread_tid = 1, thread_name = 2, thread_tgid = 3;
}  // namespace process_tree
namespace bundle {  // FtraceEventBundle
constexpr uint32_t cpu = 1, event = 2;
}
namespace ftrace_event {  // FtraceEvent and its oneof event
constexpr uint32_t timestamp = 1, pid = 2, print = 3, sched_switch = 4, cpu_frequency = 11, cpu_idle = 13,
                   sched_wakeup = 17, sched_waking = 20, sched_wakeup_new = 114, sched_migrate_task = 491;
}
// SchedWakingFtraceEvent, SchedWakeupFtraceEvent, SchedWakeupNewFtraceEvent share these;
// SchedMigrateTaskFtraceEvent has comm, pid, prio, then orig_cpu 4, dest_cpu 5.
namespace wakeup {
constexpr uint32_t comm = 1, pid = 2, prio = 3, target_cpu = 5, orig_cpu = 4, dest_cpu = 5;
}
namespace sched_switch {  // SchedSwitchFtraceEvent
constexpr uint32_t prev_comm = 1, prev_pid = 2, prev_prio = 3, prev_state = 4, next_comm = 5, next_pid = 6,
                   next_prio = 7;
}
namespace power {  // CpuFrequencyFtraceEvent, CpuIdleFtraceEvent
constexpr uint32_t state = 1, cpu_id = 2;
}
namespace print {  // PrintFtraceEvent
constexpr uint32_t buf = 2;
}

// sched_switch's prev_state as the kernel records it (__trace_sched_switch_state() since v4.14):
// 0 runnable (the idle task), TASK_REPORT_MAX (0x100) for a preempted task ("R+"),
// TASK_INTERRUPTIBLE (0x1, "S"), EXIT_DEAD (0x10, "X").
int64_t raw_prev_state(const TraceEvent& e) {
    if (!e.task) return 0;
    return e.prev_state == 'R' ? 0x100 : e.prev_state == 'S' ? 0x1 : 0x10;
}

}  // namespace

PerfettoTraceWriter::PerfettoTraceWriter(std::FILE* body, int nr_cpus)
    : body_(body), nr_cpus_(nr_cpus), pending_(static_cast<size_t>(nr_cpus)) {
    for (int cpu = 0; cpu < nr_cpus; ++cpu) idle_comm_.push_back("swapper/" + std::to_string(cpu));
}

void PerfettoTraceWriter::note_task(const Task* t) {
    if (!t) return;
    const auto id = static_cast<size_t>(t->id);
    if (id >= seen_.size()) seen_.resize(id + 1, 0);
    if (seen_[id]) return;
    seen_[id] = 1;
    names_.push_back({trace_pid(*t), t->comm, t->per_cpu_kthread});
}

void PerfettoTraceWriter::event(const TraceEvent& e) {
    if (first_ts_ < 0) first_ts_ = e.t;
    note_task(e.context);
    note_task(e.task);
    note_task(e.next);
    fields_.clear();
    uint32_t which = 0;
    switch (e.kind) {
        case Kind::waking:
        case Kind::wakeup:
        case Kind::wakeup_new:
        case Kind::migrate:
            which = e.kind == Kind::waking   ? ftrace_event::sched_waking
                    : e.kind == Kind::wakeup ? ftrace_event::sched_wakeup
                    : e.kind == Kind::migrate ? ftrace_event::sched_migrate_task
                                              : ftrace_event::sched_wakeup_new;
            fields_.string(wakeup::comm, e.task->comm);
            fields_.sint(wakeup::pid, trace_pid(*e.task));
            fields_.sint(wakeup::prio, trace_prio(*e.task));
            if (e.kind == Kind::migrate) {
                fields_.sint(wakeup::orig_cpu, e.target_cpu);
                fields_.sint(wakeup::dest_cpu, e.dest_cpu);
            } else {
                fields_.sint(wakeup::target_cpu, e.target_cpu);
            }
            break;
        case Kind::sched_switch: {
            const std::string& idle_comm = idle_comm_[static_cast<size_t>(e.cpu)];
            which = ftrace_event::sched_switch;
            fields_.string(sched_switch::prev_comm, e.task ? e.task->comm : idle_comm);
            fields_.sint(sched_switch::prev_pid, e.task ? trace_pid(*e.task) : 0);
            fields_.sint(sched_switch::prev_prio, e.task ? trace_prio(*e.task) : 120);
            fields_.sint(sched_switch::prev_state, raw_prev_state(e));
            fields_.string(sched_switch::next_comm, e.next ? e.next->comm : idle_comm);
            fields_.sint(sched_switch::next_pid, e.next ? trace_pid(*e.next) : 0);
            fields_.sint(sched_switch::next_prio, e.next ? trace_prio(*e.next) : 120);
            break;
        }
        case Kind::cpu_frequency:
        case Kind::cpu_idle:
            which = e.kind == Kind::cpu_frequency ? ftrace_event::cpu_frequency : ftrace_event::cpu_idle;
            fields_.uint(power::state, static_cast<uint32_t>(e.value));
            fields_.uint(power::cpu_id, static_cast<uint32_t>(e.kind == Kind::cpu_frequency ? e.target_cpu : e.cpu));
            break;
        case Kind::marker: {
            // The kernel appends the newline a trace_marker write lacks (tracing_mark_write()).
            char buf[256];
            const int n = std::snprintf(buf, sizeof buf, "I|%d|%s\n", e.context ? trace_pid(*e.context) : 0, e.text);
            which = ftrace_event::print;
            fields_.string(print::buf, std::string_view(buf, std::min(sizeof buf - 1, static_cast<size_t>(n))));
            break;
        }
    }
    event_.clear();
    event_.uint(ftrace_event::timestamp, static_cast<uint64_t>(e.t));
    event_.uint(ftrace_event::pid, static_cast<uint32_t>(e.context ? trace_pid(*e.context) : 0));
    event_.message(which, fields_);
    ProtoBuffer& q = pending_[static_cast<size_t>(e.cpu)];
    q.message(bundle::event, event_);
    if (q.size() >= kBundleBytes) flush(e.cpu);
}

void PerfettoTraceWriter::flush(int cpu) {
    ProtoBuffer& q = pending_[static_cast<size_t>(cpu)];
    if (q.size() == 0) return;
    bundle_.clear();
    bundle_.uint(bundle::cpu, static_cast<uint32_t>(cpu));
    bundle_.append_encoded(q.bytes());
    q.clear();
    packet_.clear();
    packet_.message(packet::ftrace_events, bundle_);
    packet_.uint(packet::trusted_packet_sequence_id, kSequenceId);
    write_packet(body_);
}

void PerfettoTraceWriter::write_packet(std::FILE* f) {
    file_.clear();
    file_.message(trace::packet, packet_);
    std::fwrite(file_.bytes().data(), 1, file_.size(), f);
}

void PerfettoTraceWriter::finish(std::FILE* out, uint64_t) {
    for (int cpu = 0; cpu < nr_cpus_; ++cpu) flush(cpu);
    // SystemInfo first: trace_processor reads it before the events and decodes sched_switch's
    // prev_state by the kernel release (before v4.14 preemption was another bit).
    fields_.clear();
    fields_.string(system_info::utsname_sysname, "Linux");
    fields_.string(system_info::utsname_release, "6.19.0-wakesim");
    event_.clear();
    event_.message(system_info::utsname, fields_);
    event_.uint(system_info::num_cpus, static_cast<uint32_t>(nr_cpus_));
    packet_.clear();
    packet_.message(packet::system_info, event_);
    packet_.uint(packet::trusted_packet_sequence_id, kSequenceId);
    write_packet(out);

    // Every task is its own process (tgid = pid) whose name is its comm.
    bundle_.clear();
    for (const Named& n : names_) {
        fields_.clear();
        fields_.sint(process_tree::process_pid, n.pid);
        fields_.string(process_tree::process_cmdline, n.comm);
        if (n.kthread) fields_.uint(process_tree::process_is_kthread, 1);
        fields_.uint(process_tree::process_cmdline_is_comm, 1);
        bundle_.message(process_tree::processes, fields_);
    }
    for (const Named& n : names_) {
        fields_.clear();
        fields_.sint(process_tree::thread_tid, n.pid);
        fields_.string(process_tree::thread_name, n.comm);
        fields_.sint(process_tree::thread_tgid, n.pid);
        bundle_.message(process_tree::threads, fields_);
    }
    packet_.clear();
    packet_.uint(packet::timestamp, static_cast<uint64_t>(first_ts_ < 0 ? 0 : first_ts_));
    packet_.message(packet::process_tree, bundle_);
    packet_.uint(packet::trusted_packet_sequence_id, kSequenceId);
    write_packet(out);
}

}  // namespace wakesim
