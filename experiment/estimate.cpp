#include "experiment/estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace wakesim {

namespace {

// Measured (docs/robustness.md): a program task with a short program costs about 2.3 KiB in a
// run (its definition in the case, the run's copy and the driver's, the kernel's task, PELT and
// policy state); 4 KiB leaves room for the policies with more per-task state.
constexpr uint64_t kBytesPerTask = 4096;
constexpr uint64_t kBytesPerCpu = 64 * 1024;      // run queues, hardware and cache model per CPU
constexpr uint64_t kBytesPerLoopFrame = 16;       // a task's loop stack, reserved at set-up
constexpr uint64_t kBytesPerChannel = 160;        // its definition: name, two wake sites
constexpr uint64_t kBytesFixed = 8 * 1024 * 1024;  // engine, tables, the binary's own heap
// Simulator events per workload op (a pipe round trip: posts, waits, wakeups, IPIs, switches),
// the largest of the shipped scenarios rounded up, and events a second on one core.
constexpr uint64_t kEventsPerOp = 16;
constexpr double kEventsPerSecond = 4e6;
constexpr uint64_t kSimNsPerEvent = 1000;  // a busy CPU: an event per simulated microsecond

}  // namespace

RunEstimate estimate_run(const WorkloadBuild& w, int nr_cpus, uint64_t stop_ops, Time max_time) {
    RunEstimate e;
    e.tasks = w.tasks.size();
    e.channels = w.channels.size();
    uint64_t bytes = kBytesFixed + kBytesPerCpu * static_cast<uint64_t>(std::max(nr_cpus, 1));
    std::map<const Op*, uint64_t> loops;  // per shared program: its loop_begin steps
    for (const ProgramTask& t : w.tasks) {
        auto [it, fresh] = loops.try_emplace(t.code.data(), 0);
        if (fresh) {
            bytes += 3 * t.code.bytes();  // the one shared list, and its copies' bookkeeping
            for (const Op& op : t.code) it->second += op.kind == Op::loop_begin ? 1 : 0;
        }
        bytes += kBytesPerTask + 3 * t.spec.comm.size() + it->second * kBytesPerLoopFrame;
    }
    // Wait lists: a link and a flag per task, head and tail per channel; the channel's definition
    // (name, sites) in its three copies.
    bytes += (2 * e.tasks + 2 * e.channels) * sizeof(int) + e.channels * 3 * kBytesPerChannel;
    for (int b : w.barriers) bytes += static_cast<uint64_t>(std::max(b, 0)) * sizeof(int);
    // Timers: a state each, and a block of the per-instance ones per instance (bounded by all).
    bytes += w.timers.size() * (1 + e.tasks) * 2 * sizeof(int64_t);
    e.memory_bytes = bytes;

    // Events: from the ops the run performs when ops bound it. Without ops, a workload that ends
    // by itself (finite loops) is not estimated (0: unknown); one whose foreground tasks loop
    // forever runs to its time limit. Within a time limit a run makes at most an event per
    // simulated microsecond on each CPU its foreground tasks keep busy.
    uint64_t foreground = 0, endless = 0;
    for (const ProgramTask& t : w.tasks) {
        if (t.background) continue;
        ++foreground;
        for (const Op& op : t.code)
            if (op.kind == Op::loop_begin && op.a == 0) {
                ++endless;
                break;
            }
    }
    const uint64_t cpus = static_cast<uint64_t>(std::max(nr_cpus, 1));
    const uint64_t ops = stop_ops ? stop_ops : w.total_ops;
    if (ops) e.events = (ops + e.tasks) * kEventsPerOp;
    if (max_time > 0) {
        const uint64_t busy = std::min(ops ? foreground : endless, cpus);
        const uint64_t by_time = static_cast<uint64_t>(max_time) / kSimNsPerEvent * busy + e.tasks * kEventsPerOp;
        if (ops) e.events = std::min(e.events, by_time);
        else if (endless) e.events = by_time;
    }
    e.seconds = static_cast<double>(e.events) / kEventsPerSecond;
    return e;
}

uint64_t default_memory_budget() {
    uint64_t total = 0;
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("MemTotal:", 0) != 0) continue;
        std::istringstream ss(line.substr(9));
        uint64_t kib = 0;
        if (ss >> kib) total = kib * 1024;
        break;
    }
    if (total == 0) {
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0) total = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
    }
    if (total == 0) total = 4ULL << 30;  // unknown: assume a small machine
    return total / 2;
}

std::string format_bytes(uint64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

}  // namespace wakesim
