// The trace of sched and power events: sched_waking, sched_wakeup, sched_wakeup_new, sched_switch,
// sched_migrate_task from the scheduler's observer events, cpu_frequency and cpu_idle from the
// hardware's, and tracing_mark_write markers. TraceSink turns the observer hooks into TraceEvents
// (one place for the window, the context and the entry count); a TraceWriter writes them in one
// format: ftrace text (this file's .cpp) or Perfetto's protobuf (sim/trace_perfetto.h). Both write
// to a temporary file until finish(), because their header needs the whole run (docs/metrics.md,
// Trace).
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>

#include "engine/engine.h"
#include "hw/hw_observer.h"
#include "kernel/observer.h"
#include "kernel/task.h"

namespace wakesim {

class CpuExec;

// Which simulated time a trace covers: events at `from` <= t < `to`.
struct TraceWindow {
    Time from = 0;
    Time to = kTimeNever;
};

enum class TraceFormat : uint8_t {
    ftrace,    // the `trace` file's text with record-tgid
    perfetto,  // a Perfetto Trace protobuf of per-CPU FtraceEventBundles
};

// One traced event, as every format sees it.
struct TraceEvent {
    enum class Kind : uint8_t { waking, wakeup, wakeup_new, migrate, sched_switch, cpu_frequency, cpu_idle, marker };
    Kind kind = Kind::marker;
    Time t = 0;
    int cpu = 0;
    const Task* context = nullptr;  // the task running where the event is emitted (nullptr: idle)
    const Task* task = nullptr;     // the woken, new or migrated task; sched_switch: prev (nullptr: idle)
    const Task* next = nullptr;     // sched_switch: next (nullptr: idle)
    char prev_state = 'R';          // sched_switch: 'R' (preempted), 'S' or 'X'; ignored for the idle task
    int target_cpu = 0;             // wakeups: target_cpu; migrate: orig_cpu
    int dest_cpu = 0;               // migrate
    int64_t value = 0;              // cpu_frequency: kHz; cpu_idle: state index, -1 leaving idle
    const char* text = nullptr;     // marker
};

class TraceWriter {
public:
    virtual ~TraceWriter() = default;
    // Called for each event inside the window, in simulated-time order.
    virtual void event(const TraceEvent& e) = 0;
    // Writes what goes before the body (the header) to `out`, after writing anything it still
    // holds to the body. `entries`: the events written.
    virtual void finish(std::FILE* out, uint64_t entries) = 0;
};

// `body` is the temporary file the writer appends to; it is not owned.
std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format, std::FILE* body, int nr_cpus);

// The format a trace file's name asks for: Perfetto's for .perfetto-trace and .pftrace, else ftrace text.
TraceFormat trace_format_for_path(const char* path);

class TraceSink final : public SchedObserver, public HwObserver {
public:
    // `out` is not owned; `exec` gives the context (the task running driver code, or none) of
    // events that happen on the wake path. Throws std::runtime_error when no temporary file can
    // be created.
    TraceSink(std::FILE* out, const Engine& clock, const CpuExec& exec, int nr_cpus, TraceWindow window = {},
              TraceFormat format = TraceFormat::ftrace);
    ~TraceSink() override;
    TraceSink(const TraceSink&) = delete;
    TraceSink& operator=(const TraceSink&) = delete;

    // Writes the header (with the entry count) and the buffered events to `out`.
    void finish();
    // A trace_marker write, as Perfetto's systrace instant event "I|TGID|text", by the task whose
    // code runs now (else the idle task of CPU 0).
    void marker(const char* text);
    uint64_t entries() const { return entries_; }

    // SchedObserver
    uint32_t interests() const override { return kObsTtwuWaking | kObsTtwuWakeup | kObsMigrate | kObsSwitch; }
    void ttwu_waking(const Task& p, const Task* waker, int this_cpu) override;
    void ttwu_wakeup(const Task& p, int cpu, const Task* curr) override;
    void wakeup_new(const Task& p, int parent_cpu, const Task* parent_curr) override;
    void migrate(const Task& p, int from, int to, MigrationCause cause) override;
    void sched_switch(int cpu, const Task* prev, char prev_state, const Task* next) override;

    // HwObserver
    void cpu_frequency(Time t, int cpu, int64_t khz) override;
    void cpu_idle(Time t, int cpu, int state) override;  // state -1: leaving idle (4294967295)

private:
    void emit(const TraceEvent& e);
    std::FILE* out_;
    std::FILE* body_;
    const Engine& clock_;
    const CpuExec& exec_;
    TraceWindow window_;
    std::unique_ptr<TraceWriter> writer_;
    uint64_t entries_ = 0;
};

inline int trace_pid(const Task& t) { return t.id + 1000; }
inline int trace_prio(const Task& t) { return 120 + t.nice; }

}  // namespace wakesim
