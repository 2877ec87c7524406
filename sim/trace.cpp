#include "sim/trace.h"

#include <cinttypes>

#include "sim/cpu_exec.h"

namespace wakesim {

TraceSink::TraceSink(std::FILE* out, const Engine& clock, const CpuExec& exec) : out_(out), clock_(clock), exec_(exec) {}

void TraceSink::header() {
    std::fputs("# tracer: nop\n#\n"
               "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
               "#              | |         |   |||||     |         |\n",
               out_);
}

void TraceSink::prefix(Time t, int cpu, const Task* cur) {
    char who[48];
    if (cur)
        std::snprintf(who, sizeof who, "%s-%d", cur->comm.c_str(), trace_pid(*cur));
    else
        std::snprintf(who, sizeof who, "<idle>-0");
    std::fprintf(out_, "%24s [%03d] d..2. %6" PRId64 ".%06" PRId64 ": ", who, cpu, t / 1000000000,
                 (t / 1000) % 1000000);
}

void TraceSink::ttwu_waking(const Task& p, const Task* waker, int this_cpu) {
    prefix(clock_.now(), this_cpu, waker);
    std::fprintf(out_, "sched_waking: comm=%s pid=%d prio=%d target_cpu=%03d\n", p.comm.c_str(), trace_pid(p),
                 trace_prio(p), p.cpu);
}

void TraceSink::ttwu_wakeup(const Task& p, int cpu, const Task* curr) {
    prefix(clock_.now(), cpu, curr);
    std::fprintf(out_, "sched_wakeup: comm=%s pid=%d prio=%d target_cpu=%03d\n", p.comm.c_str(), trace_pid(p),
                 trace_prio(p), cpu);
}

void TraceSink::migrate(const Task& p, int from, int to, MigrationCause) {
    // Emitted where it happens: the CPU whose driver code issued the wakeup, else the old CPU.
    const int cpu = exec_.driving_cpu() >= 0 ? exec_.driving_cpu() : from;
    prefix(clock_.now(), cpu, exec_.driving_task());
    std::fprintf(out_, "sched_migrate_task: comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d\n", p.comm.c_str(),
                 trace_pid(p), trace_prio(p), from, to);
}

void TraceSink::sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) {
    prefix(clock_.now(), cpu, prev);
    char idle_comm[32];
    std::snprintf(idle_comm, sizeof idle_comm, "swapper/%d", cpu);
    std::fprintf(out_,
                 "sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%c ==> "
                 "next_comm=%s next_pid=%d next_prio=%d\n",
                 prev ? prev->comm.c_str() : idle_comm, prev ? trace_pid(*prev) : 0,
                 prev ? trace_prio(*prev) : 120, prev ? prev_state : 'R',
                 next ? next->comm.c_str() : idle_comm, next ? trace_pid(*next) : 0,
                 next ? trace_prio(*next) : 120);
}

void TraceSink::cpu_frequency(Time t, int cpu, int64_t khz) {
    prefix(t, cpu, nullptr);
    std::fprintf(out_, "cpu_frequency: state=%lld cpu_id=%d\n", static_cast<long long>(khz), cpu);
}

void TraceSink::cpu_idle(Time t, int cpu, int state) {
    prefix(t, cpu, nullptr);
    std::fprintf(out_, "cpu_idle: state=%u cpu_id=%d\n", state < 0 ? 4294967295u : static_cast<unsigned>(state), cpu);
}

}  // namespace wakesim
