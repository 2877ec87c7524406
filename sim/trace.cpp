#include "sim/trace.h"

#include <cinttypes>
#include <stdexcept>

#include "sim/cpu_exec.h"

namespace wakesim {

TraceSink::TraceSink(std::FILE* out, const Engine& clock, const CpuExec& exec, int nr_cpus, TraceWindow window)
    : out_(out), body_(std::tmpfile()), clock_(clock), exec_(exec), nr_cpus_(nr_cpus), window_(window) {
    if (!body_) throw std::runtime_error("cannot create a temporary file for the trace");
}

TraceSink::~TraceSink() {
    if (body_) std::fclose(body_);
}

void TraceSink::finish() {
    // The `trace` file's header with record-tgid on: the buffer's fill, then the column legend.
    std::fprintf(out_,
                 "# tracer: nop\n#\n# entries-in-buffer/entries-written: %" PRIu64 "/%" PRIu64 "   #P:%d\n#\n",
                 entries_, entries_, nr_cpus_);
    std::fputs("#                                          _-----=> irqs-off/BH-disabled\n"
               "#                                         / _----=> need-resched\n"
               "#                                        | / _---=> hardirq/softirq\n"
               "#                                        || / _--=> preempt-depth\n"
               "#                                        ||| / _-=> migrate-disable\n"
               "#                                        |||| /     delay\n"
               "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n"
               "#              | |           |       |   |||||     |         |\n",
               out_);
    std::rewind(body_);
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, body_)) > 0;) std::fwrite(buf, 1, n, out_);
    std::fclose(body_);
    body_ = nullptr;
}

bool TraceSink::prefix(Time t, int cpu, const Task* cur) {
    if (t < window_.from || t >= window_.to) return false;
    ++entries_;
    // "%16s-%-7d (%7d) [%03d] flags %5lu.%06lu: " as trace_print_context() lays it out; the idle
    // task has no tgid ("(-------)").
    if (cur)
        std::fprintf(body_, "%16s-%-7d (%7d) ", cur->comm.c_str(), trace_pid(*cur), trace_pid(*cur));
    else
        std::fputs("          <idle>-0       (-------) ", body_);
    std::fprintf(body_, "[%03d] d..2. %5" PRId64 ".%06" PRId64 ": ", cpu, t / 1000000000, (t / 1000) % 1000000);
    return true;
}

void TraceSink::marker(const char* text) {
    const Task* writer = exec_.driving_task();
    const int cpu = writer ? exec_.driving_cpu() : 0;
    if (!prefix(clock_.now(), cpu, writer)) return;
    std::fprintf(body_, "tracing_mark_write: I|%d|%s\n", writer ? trace_pid(*writer) : 0, text);
}

void TraceSink::ttwu_waking(const Task& p, const Task* waker, int this_cpu) {
    if (!prefix(clock_.now(), this_cpu, waker)) return;
    std::fprintf(body_, "sched_waking: comm=%s pid=%d prio=%d target_cpu=%03d\n", p.comm.c_str(), trace_pid(p),
                 trace_prio(p), p.cpu);
}

void TraceSink::ttwu_wakeup(const Task& p, int cpu, const Task* curr) {
    if (!prefix(clock_.now(), cpu, curr)) return;
    std::fprintf(body_, "sched_wakeup: comm=%s pid=%d prio=%d target_cpu=%03d\n", p.comm.c_str(), trace_pid(p),
                 trace_prio(p), cpu);
}

// wake_up_new_task(): emitted on the forking CPU.
void TraceSink::wakeup_new(const Task& p, int parent_cpu, const Task* parent_curr) {
    if (!prefix(clock_.now(), parent_cpu, parent_curr)) return;
    std::fprintf(body_, "sched_wakeup_new: comm=%s pid=%d prio=%d target_cpu=%03d\n", p.comm.c_str(), trace_pid(p),
                 trace_prio(p), p.cpu);
}

void TraceSink::migrate(const Task& p, int from, int to, MigrationCause) {
    // Emitted where it happens: the CPU whose driver code issued the wakeup, else the old CPU.
    const int cpu = exec_.driving_cpu() >= 0 ? exec_.driving_cpu() : from;
    if (!prefix(clock_.now(), cpu, exec_.driving_task())) return;
    std::fprintf(body_, "sched_migrate_task: comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\n", p.comm.c_str(),
                 trace_pid(p), trace_prio(p), from, to);
}

void TraceSink::sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) {
    if (!prefix(clock_.now(), cpu, prev)) return;
    char idle_comm[32];
    std::snprintf(idle_comm, sizeof idle_comm, "swapper/%d", cpu);
    // A task switched out while runnable was preempted: the kernel prints "R+"
    // (__trace_sched_switch_state). The idle task leaves as plain "R".
    const char* state = !prev ? "R" : prev_state == 'R' ? "R+" : prev_state == 'S' ? "S" : "X";
    if (prev && prev_state != 'R' && prev_state != 'S' && prev_state != 'X')
        throw std::logic_error("sched_switch with an unknown prev_state");
    std::fprintf(body_,
                 "sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> "
                 "next_comm=%s next_pid=%d next_prio=%d\n",
                 prev ? prev->comm.c_str() : idle_comm, prev ? trace_pid(*prev) : 0,
                 prev ? trace_prio(*prev) : 120, state, next ? next->comm.c_str() : idle_comm,
                 next ? trace_pid(*next) : 0, next ? trace_prio(*next) : 120);
}

void TraceSink::cpu_frequency(Time t, int cpu, int64_t khz) {
    if (!prefix(t, cpu, nullptr)) return;
    std::fprintf(body_, "cpu_frequency: state=%lld cpu_id=%d\n", static_cast<long long>(khz), cpu);
}

void TraceSink::cpu_idle(Time t, int cpu, int state) {
    if (!prefix(t, cpu, nullptr)) return;
    std::fprintf(body_, "cpu_idle: state=%u cpu_id=%d\n", state < 0 ? 4294967295u : static_cast<unsigned>(state), cpu);
}

}  // namespace wakesim
