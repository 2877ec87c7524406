#include "sim/trace.h"

#include <cinttypes>
#include <cstring>
#include <stdexcept>

#include "sim/cpu_exec.h"
#include "sim/trace_perfetto.h"

namespace wakesim {

namespace {

using Kind = TraceEvent::Kind;

// The lines of the `trace` file with record-tgid (kernel/trace/trace_output.c, trace_print_context()).
class FtraceTextWriter final : public TraceWriter {
public:
    FtraceTextWriter(std::FILE* body, int nr_cpus) : body_(body), nr_cpus_(nr_cpus) {}

    void event(const TraceEvent& e) override {
        prefix(e);
        switch (e.kind) {
            case Kind::waking:
            case Kind::wakeup:
            case Kind::wakeup_new: {
                const char* name = e.kind == Kind::waking   ? "sched_waking"
                                   : e.kind == Kind::wakeup ? "sched_wakeup"
                                                            : "sched_wakeup_new";
                std::fprintf(body_, "%s: comm=%s pid=%d prio=%d target_cpu=%03d\n", name, e.task->comm.c_str(),
                             trace_pid(*e.task), trace_prio(*e.task), e.target_cpu);
                break;
            }
            case Kind::migrate:
                std::fprintf(body_, "sched_migrate_task: comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\n",
                             e.task->comm.c_str(), trace_pid(*e.task), trace_prio(*e.task), e.target_cpu, e.dest_cpu);
                break;
            case Kind::sched_switch: {
                char idle_comm[32];
                std::snprintf(idle_comm, sizeof idle_comm, "swapper/%d", e.cpu);
                const Task* prev = e.task;
                const Task* next = e.next;
                // A task switched out while runnable was preempted: the kernel prints "R+"
                // (__trace_sched_switch_state). The idle task leaves as plain "R".
                const char* state = !prev ? "R" : e.prev_state == 'R' ? "R+" : e.prev_state == 'S' ? "S" : "X";
                std::fprintf(body_,
                             "sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> "
                             "next_comm=%s next_pid=%d next_prio=%d\n",
                             prev ? prev->comm.c_str() : idle_comm, prev ? trace_pid(*prev) : 0,
                             prev ? trace_prio(*prev) : 120, state, next ? next->comm.c_str() : idle_comm,
                             next ? trace_pid(*next) : 0, next ? trace_prio(*next) : 120);
                break;
            }
            case Kind::cpu_frequency:
                std::fprintf(body_, "cpu_frequency: state=%lld cpu_id=%d\n", static_cast<long long>(e.value), e.target_cpu);
                break;
            case Kind::cpu_idle:
                std::fprintf(body_, "cpu_idle: state=%u cpu_id=%d\n", static_cast<uint32_t>(e.value), e.cpu);
                break;
            case Kind::marker:
                std::fprintf(body_, "tracing_mark_write: I|%d|%s\n", e.context ? trace_pid(*e.context) : 0, e.text);
                break;
        }
    }

    void finish(std::FILE* out, uint64_t entries) override {
        // The `trace` file's header with record-tgid on: the buffer's fill, then the column legend.
        std::fprintf(out,
                     "# tracer: nop\n#\n# entries-in-buffer/entries-written: %" PRIu64 "/%" PRIu64 "   #P:%d\n#\n",
                     entries, entries, nr_cpus_);
        std::fputs("#                                          _-----=> irqs-off/BH-disabled\n"
                   "#                                         / _----=> need-resched\n"
                   "#                                        | / _---=> hardirq/softirq\n"
                   "#                                        || / _--=> preempt-depth\n"
                   "#                                        ||| / _-=> migrate-disable\n"
                   "#                                        |||| /     delay\n"
                   "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n"
                   "#              | |           |       |   |||||     |         |\n",
                   out);
    }

private:
    // "%16s-%-7d (%7d) [%03d] flags %5lu.%06lu: " as trace_print_context() lays it out; the idle
    // task has no tgid ("(-------)").
    void prefix(const TraceEvent& e) {
        if (e.context)
            std::fprintf(body_, "%16s-%-7d (%7d) ", e.context->comm.c_str(), trace_pid(*e.context),
                         trace_pid(*e.context));
        else
            std::fputs("          <idle>-0       (-------) ", body_);
        std::fprintf(body_, "[%03d] d..2. %5" PRId64 ".%06" PRId64 ": ", e.cpu, e.t / 1000000000, (e.t / 1000) % 1000000);
    }

    std::FILE* body_;
    int nr_cpus_;
};

// One event with the fields every kind has; the callers add what their kind carries.
TraceEvent make_event(TraceEvent::Kind kind, Time t, int cpu, const Task* context, const Task* task = nullptr,
                      int target_cpu = 0) {
    TraceEvent e;
    e.kind = kind;
    e.t = t;
    e.cpu = cpu;
    e.context = context;
    e.task = task;
    e.target_cpu = target_cpu;
    return e;
}

bool ends_with(const char* s, const char* suffix) {
    const size_t n = std::strlen(s), m = std::strlen(suffix);
    return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

}  // namespace

std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format, std::FILE* body, int nr_cpus) {
    if (format == TraceFormat::perfetto) return std::make_unique<PerfettoTraceWriter>(body, nr_cpus);
    return std::make_unique<FtraceTextWriter>(body, nr_cpus);
}

TraceFormat trace_format_for_path(const char* path) {
    return ends_with(path, ".perfetto-trace") || ends_with(path, ".pftrace") ? TraceFormat::perfetto
                                                                             : TraceFormat::ftrace;
}

TraceSink::TraceSink(std::FILE* out, const Engine& clock, const CpuExec& exec, int nr_cpus, TraceWindow window,
                     TraceFormat format)
    : out_(out), body_(std::tmpfile()), clock_(clock), exec_(exec), window_(window) {
    if (!body_) throw std::runtime_error("cannot create a temporary file for the trace");
    writer_ = make_trace_writer(format, body_, nr_cpus);
}

TraceSink::~TraceSink() {
    if (body_) std::fclose(body_);
}

void TraceSink::finish() {
    writer_->finish(out_, entries_);
    std::rewind(body_);
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, body_)) > 0;) std::fwrite(buf, 1, n, out_);
    std::fclose(body_);
    body_ = nullptr;
}

void TraceSink::emit(const TraceEvent& e) {
    if (e.t < window_.from || e.t >= window_.to) return;
    ++entries_;
    writer_->event(e);
}

void TraceSink::marker(const char* text) {
    const Task* writer = exec_.driving_task();
    TraceEvent e = make_event(Kind::marker, clock_.now(), writer ? exec_.driving_cpu() : 0, writer);
    e.text = text;
    emit(e);
}

// From an interrupt (a timer) the line's task is whatever that CPU was running.
void TraceSink::ttwu_waking(const Task& p, const Task* waker, int this_cpu) {
    if (!waker && this_cpu >= 0) waker = exec_.sched().current(this_cpu);
    emit(make_event(Kind::waking, clock_.now(), this_cpu, waker, &p, p.cpu));
}

// ttwu_do_wakeup(): written by the CPU that enqueues the wakee: the waker's on a direct enqueue
// (ttwu_queue() under the target's lock), the target's when it empties its wake list.
void TraceSink::ttwu_wakeup(const Task& p, int cpu, const Task* curr) {
    const int on = exec_.driving_cpu() >= 0 ? exec_.driving_cpu() : cpu;
    emit(make_event(Kind::wakeup, clock_.now(), on, on == cpu ? curr : exec_.driving_task(), &p, cpu));
}

// wake_up_new_task(): emitted on the forking CPU.
void TraceSink::wakeup_new(const Task& p, int parent_cpu, const Task* parent_curr) {
    emit(make_event(Kind::wakeup_new, clock_.now(), parent_cpu, parent_curr, &p, p.cpu));
}

void TraceSink::migrate(const Task& p, int from, int to, MigrationCause cause) {
    // Emitted where set_task_cpu() runs: the CPU whose task issued the wakeup; for a balancer's
    // pull the pulling CPU (periodic or newly idle balance runs on the destination), in the
    // context of the task it runs; else (an active balance's push) the old CPU.
    int on = exec_.driving_cpu();
    const Task* context = exec_.driving_task();
    if (on < 0) {
        on = cause == MigrationCause::balance || cause == MigrationCause::newidle ? to : from;
        context = exec_.sched().current(on);
    }
    TraceEvent e = make_event(Kind::migrate, clock_.now(), on, context, &p, from);
    e.dest_cpu = to;
    emit(e);
}

void TraceSink::sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) {
    if (prev && prev_state != 'R' && prev_state != 'S' && prev_state != 'X')
        throw std::logic_error("sched_switch with an unknown prev_state");
    TraceEvent e = make_event(Kind::sched_switch, clock_.now(), cpu, prev, prev);
    e.next = next;
    e.prev_state = prev_state;
    emit(e);
}

void TraceSink::cpu_frequency(Time t, int cpu, int64_t khz) {
    // Written by the CPU that changes the clock (schedutil's update, for every CPU of the
    // policy), in the context of the task it runs; cpu_id names the CPU whose clock it is.
    const int on = exec_.driving_cpu() >= 0 ? exec_.driving_cpu() : cpu;
    TraceEvent e = make_event(Kind::cpu_frequency, t, on, exec_.sched().current(on), nullptr, cpu);
    e.value = khz;
    emit(e);
}

void TraceSink::cpu_idle(Time t, int cpu, int state) {
    TraceEvent e = make_event(Kind::cpu_idle, t, cpu, nullptr);
    e.value = state < 0 ? int64_t{4294967295} : state;
    emit(e);
}

}  // namespace wakesim
