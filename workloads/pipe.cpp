// perf bench sched pipe (tools/perf/bench/sched-pipe.c): two tasks ping-pong one word over two
// pipes, so every wake is a WF_SYNC pipe wake of a task its waker is about to wait for.
#include "workloads/kind.h"

namespace wakesim {

namespace {

constexpr int64_t kPipeSharedBytes = 256;  // pipe_inode_info head/tail, wait queue, one buffer line

const ParamTable& pipe_params() {
    static const ParamTable t = {
        {.name = "loops", .type = ParamType::integer, .default_value = "1000000", .min = 1, .max = kMaxLoops,
         .help = "round trips (`perf bench sched pipe -l`)"},
        {.name = "cpus", .type = ParamType::cpulist,
         .help = "allowed CPUs of both tasks (`taskset -c`). The first CPU is also the parent CPU the tasks are "
                 "forked from (default 0)",
         .absent_means = "all CPUs"},
        {.name = "cpus_b", .type = ParamType::cpulist, .help = "allowed CPUs of `sched-pipe-1` only",
         .absent_means = "`cpus`"},
        {.name = "work", .type = ParamType::duration, .default_value = "0ns", .min = 0, .max = kMaxTime,
         .help = "user work per write, added to each task's write path"},
        {.name = "footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
         .help = "each task's working set (a benchmark task's stack, libc state and kernel structures): refilled "
                 "after it runs on another CPU or after its cache went cold (docs/model.md, cache warmth). The "
                 "pipe's shared state (256 B) is warm only on the CPU that touched it last"},
    };
    return t;
}

struct PipeSpec {
    int64_t loops = 0;
    int64_t work_ns = 0;
    int64_t footprint_kib = 0;
    CpuSet cpus_a, cpus_b;  // empty: every CPU
};

PipeSpec read_pipe(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    PipeSpec s;
    s.loops = p.integer("loops");
    s.work_ns = p.duration_ns("work");
    s.cpus_a = s.cpus_b = read_cpus(in.json, p, "cpus", in.topo);
    if (p.given("cpus_b")) s.cpus_b = read_cpus(in.json, p, "cpus_b", in.topo);
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    return s;
}

// Each task: write (the wake happens inside it), then block reading the other pipe.
WorkloadBuild build_pipe(const PipeSpec& s, const MachineProfile& prof) {
    WorkloadBuild b;
    b.kind = "pipe";
    b.op_name = "round trip";
    const PipeCosts pc = pipe_costs(prof);
    // The pipe's state and buffer line(s): written by one side, read by the other.
    b.channels.push_back({"pipe-ab", 0, pipe_site(SiteRole::request), pipe_site(SiteRole::generic), kPipeSharedBytes, prof.pipe_lines});
    b.channels.push_back({"pipe-ba", 0, pipe_site(SiteRole::reply), pipe_site(SiteRole::generic), kPipeSharedBytes, prof.pipe_lines});
    const auto loops = static_cast<int32_t>(s.loops);
    ProgramTask a, srv;
    a.spec.comm = "sched-pipe-0";
    a.spec.allowed = s.cpus_a;
    a.spec.role = TaskRole::requester;
    a.spec.pair_id = 1;
    a.spec.footprint_kib = s.footprint_kib;
    srv.spec.comm = "sched-pipe-1";
    srv.spec.allowed = s.cpus_b;
    srv.spec.role = TaskRole::server;
    srv.spec.pair_id = 1;
    srv.spec.footprint_kib = s.footprint_kib;
    // The write is the post's own cost (pipe_write() up to its wakeup); user work before it, if any,
    // is a step of its own.
    a.code = {Op{Op::loop_begin, 0, 0, loops, 0, 0}};
    if (s.work_ns > 0) a.code.push_back(Op{Op::run, s.work_ns, 0, 0, 0, 0});
    a.code.push_back(Op{Op::post, pc.write_pre, 0, 0, 0, 0});
    a.code.push_back(Op{Op::wait, pc.read_pre, pc.read_post, 1, 0, 8, Op::kCountsOnTake});  // a round trip: the reply is in
    a.code.push_back(Op{Op::loop_end, 0, 0, 0, 0, 0});
    srv.code = {Op{Op::loop_begin, 0, 0, loops, 0, 0}, Op{Op::wait, pc.read_pre, pc.read_post, 0, 0, 0}};
    if (s.work_ns > 0) srv.code.push_back(Op{Op::run, s.work_ns, 0, 0, 0, 0});
    srv.code.push_back(Op{Op::post, pc.write_pre, 0, 1, 0, 0});
    srv.code.push_back(Op{Op::loop_end, 0, 0, 0, 0, 0});
    b.tasks.push_back(std::move(a));
    b.tasks.push_back(std::move(srv));
    b.parent_cpu = s.cpus_a.empty() ? 0 : s.cpus_a.first();
    b.total_ops = static_cast<uint64_t>(s.loops);
    return b;
}

WorkloadBuild make_pipe(const WorkloadInput& in) { return build_pipe(read_pipe(in), in.profile); }

}  // namespace

PipeCosts pipe_costs(const MachineProfile& p) {
    return {p.syscall_ns / 2 + p.pipe_copy_ns, p.syscall_ns, p.syscall_ns / 2 + p.pipe_copy_ns};
}

WakeSite pipe_site(SiteRole role) { return WakeSite{"pipe", WF_SYNC, true, role}; }

const WorkloadKind& pipe_workload() {
    static const WorkloadKind k{
        .kind = "pipe",
        .description = "perf bench sched pipe: two tasks ping-pong one word over two pipes (WF_SYNC wakes)",
        .params = pipe_params(),
        .keys = {},
        .sections = {},
        .build = make_pipe,
    };
    return k;
}

}  // namespace wakesim
