// Perfetto's native trace: a Trace protobuf of TracePackets, as traced_probes writes the ftrace
// data source, encoded by hand (sim/protobuf_wire.h), no protobuf library. Field numbers and types
// are those of Perfetto's public schema (github.com/google/perfetto, protos/perfetto/):
// trace/trace.proto, trace/trace_packet.proto, trace/ftrace/ftrace_event_bundle.proto,
// trace/ftrace/ftrace_event.proto, trace/ftrace/sched.proto, trace/ftrace/power.proto,
// trace/ftrace/ftrace.proto, trace/ps/process_tree.proto and common/system_info.proto.
//
// The file: a SystemInfo packet (utsname: Linux 6.19, which tells trace_processor how to read
// prev_state), a ProcessTree packet naming every task the trace shows, then per-CPU
// FtraceEventBundles in time order within each CPU, all on one packet sequence.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/protobuf_wire.h"
#include "sim/trace.h"

namespace wakesim {

class PerfettoTraceWriter final : public TraceWriter {
public:
    PerfettoTraceWriter(std::FILE* body, int nr_cpus);
    void event(const TraceEvent& e) override;
    void finish(std::FILE* out, uint64_t entries) override;

    // The TracePackets' trusted_packet_sequence_id (1 is the tracing service's own sequence).
    static constexpr uint32_t kSequenceId = 2;
    // A CPU's events go out as one bundle when they reach this size.
    static constexpr size_t kBundleBytes = 32 * 1024;

private:
    void note_task(const Task* t);
    void flush(int cpu);
    void write_packet(std::FILE* f);  // packet_ as one Trace.packet field

    std::FILE* body_;
    int nr_cpus_;
    std::vector<ProtoBuffer> pending_;  // per CPU: encoded FtraceEventBundle.event fields
    std::vector<std::string> idle_comm_;  // per CPU: "swapper/N"
    ProtoBuffer fields_, event_, bundle_, packet_, file_;
    struct Named {
        int pid;
        std::string comm;  // copied: an exited task may be gone by finish()
        bool kthread;
    };
    std::vector<uint8_t> seen_;  // by task id: in names_
    std::vector<Named> names_;   // in order of first appearance
    Time first_ts_ = -1;
};

}  // namespace wakesim
