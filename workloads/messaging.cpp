// perf bench sched messaging (tools/perf/bench/sched-messaging.c, hackbench), pipe mode: per
// group `fds` senders and `fds` receivers; each sender writes `loops` messages to every receiver
// of its group; a receiver reads them all.
#include <algorithm>
#include <string>

#include "workloads/kind.h"

namespace wakesim {

namespace {

constexpr int64_t kMaxTasks = 100000;

const ParamTable& messaging_params() {
    static const ParamTable t = {
        {.name = "groups", .type = ParamType::integer, .default_value = "10", .min = 1, .max = 1000, .help = "`-g`"},
        {.name = "fds", .type = ParamType::integer, .default_value = "20", .min = 1, .max = 1000,
         .help = "`-f`: senders, and receivers, per group. groups x fds x 2 must not exceed 100000"},
        {.name = "loops", .type = ParamType::integer, .default_value = "100", .min = 1, .max = 10000000,
         .help = "`-l`. loops x fds (the messages each receiver reads) must not exceed 1000000000"},
        {.name = "data_size", .type = ParamType::integer, .default_value = "100", .min = 1, .max = 65536,
         .help = "`-s`, in bytes. Messages merge into the pipe's 16 page buffers, 4096/data_size to a page (640 "
                 "of 100 B; above 4096 B, 65536/data_size in all): a writer blocks when all 16 are full, and a "
                 "reader wakes it when it frees a page. Each message adds data_size/64 ns of copy on both the "
                 "write and the read side"},
        {.name = "cpus", .type = ParamType::cpulist,
         .help = "allowed CPUs of every worker. The first CPU is the parent CPU, where perf's main thread runs while "
                 "it creates the workers (so the fork balancer finds it busy) and from which it starts them",
         .absent_means = "all CPUs"},
        {.name = "sender_cpus", .type = ParamType::cpulist,
         .help = "allowed CPUs of the senders only, as `taskset -p -c LIST` on each sender thread once the run has "
                 "started (perf has no such option). With `receiver_cpus` apart it measures what a message costs "
                 "across CPUs without any placement decision (docs/validation.md)",
         .absent_means = "`cpus`"},
        {.name = "receiver_cpus", .type = ParamType::cpulist,
         .help = "allowed CPUs of the receivers only, as `sender_cpus` for the senders",
         .absent_means = "`cpus`"},
        {.name = "policy", .type = ParamType::choice, .default_value = "normal", .choices = {"normal", "batch", "idle"},
         .help = "every worker's policy, as `chrt -b 0 perf bench sched messaging` (`batch`: no wakeup preemption) or "
                 "`chrt -i 0` sets it (the threads inherit it)"},
        {.name = "nice", .type = ParamType::integer, .default_value = "0", .min = -20, .max = 19,
         .help = "every worker's nice value, as `nice -n N perf bench ...` sets it"},
        {.name = "parent_wakee_flips", .type = ParamType::integer, .default_value = "2", .min = 0, .max = 1000000,
         .help = "`wakee_flips` of perf's main thread when it creates the workers, which they inherit (the kernel "
                 "copies it at fork and does not reset it). 2 to 4 as measured for `perf bench sched messaging` on Linux "
                 "6.18 (bpftrace on sched_process_fork, 5 runs; 2 or 3 in threaded runs). On an LLC of 2 CPUs this decides `wake_wide()` "
                 "for receivers, which wake almost nobody themselves: 2 makes their wakeups wide (no `wake_affine()` "
                 "pull); with 0 a sync wakeup pulls the receiver to the sender's CPU whenever the loads are close"},
        {.name = "footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
         .help = "each sender's and receiver's working set (as for `pipe`); each message's data_size + 128 B are "
                 "shared data of its pipe"},
    };
    return t;
}

struct MessagingSpec {
    int64_t groups = 0, fds = 0, loops = 0, data_size = 0;
    int64_t footprint_kib = 0;
    CpuSet cpus;  // empty: every CPU
    CpuSet sender_cpus, receiver_cpus;  // empty: `cpus`
    SchedPolicy policy = SchedPolicy::normal;
    int nice = 0;
    uint32_t parent_wakee_flips = 0;
};

MessagingSpec read_messaging(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    MessagingSpec s;
    s.groups = p.integer("groups");
    s.fds = p.integer("fds");
    s.loops = p.integer("loops");
    s.data_size = p.integer("data_size");
    if (s.groups * s.fds * 2 > kMaxTasks) in.json.fail("expected at most 100000 tasks (groups x fds x 2)");
    if (s.loops * s.fds > kMaxLoops)
        in.json.at("loops").fail("expected loops x fds (messages per receiver) at most 1000000000");
    s.cpus = read_cpus(in.json, p, "cpus", in.topo);
    s.sender_cpus = read_cpus(in.json, p, "sender_cpus", in.topo);
    s.receiver_cpus = read_cpus(in.json, p, "receiver_cpus", in.topo);
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    s.policy = read_policy(p);
    s.nice = static_cast<int>(p.integer("nice"));
    s.parent_wakee_flips = static_cast<uint32_t>(p.integer("parent_wakee_flips"));
    return s;
}

WorkloadBuild build_messaging(const MessagingSpec& s, const MachineProfile& prof) {
    WorkloadBuild b;
    b.kind = "messaging";
    b.op_name = "message";
    const PipeCosts pc = pipe_costs(prof);
    // Small writes merge into the pipe's 16 page buffers (pipe_write() appends to the last page
    // while it has room): 4096/size messages each. A larger message takes buffers of its own.
    const int64_t per_page = s.data_size <= 4096 ? 4096 / s.data_size : 0;
    const int64_t capacity = per_page > 0 ? 16 * per_page : std::max<int64_t>(1, 65536 / s.data_size);
    const int64_t copy = s.data_size / 64;  // ns per message copy beyond the base pipe cost
    // Every worker reports ready and waits on the start pipe; one write releases them all
    // (sched-messaging.c ready()/wakefds). Without it the first senders fill every pipe
    // before a receiver has run, and the run starts in a batched state the real one avoids.
    const auto start = static_cast<int32_t>(b.barriers.size());
    // A worker thread as perf bench creates it: every one shares the CPU list, policy, nice,
    // footprint and the main thread's wakee_flips.
    const auto worker = [&s](const char* kind, int64_t g, int64_t i, TaskRole role) {
        ProgramTask t;
        t.spec.comm = kind + std::to_string(g) + "-" + std::to_string(i);
        const CpuSet& own = role == TaskRole::requester ? s.sender_cpus : s.receiver_cpus;
        t.spec.allowed = own.empty() ? s.cpus : own;
        t.spec.role = role;
        t.spec.policy = s.policy;
        t.spec.nice = s.nice;
        t.spec.footprint_kib = s.footprint_kib;
        t.spec.wakee_flips = s.parent_wakee_flips;
        return t;
    };
    b.barriers.push_back(static_cast<int>(s.groups * s.fds * 2) + 1);
    {
        // perf's main thread, pinned to the parent CPU: it creates the workers there, so the fork
        // balancer finds that CPU busy and places them elsewhere (on 2 vCPUs, 33 of 40 on the
        // other one, as a sched_wakeup_new trace of Linux 6.18 shows); once all are ready it
        // writes the start pipe (here: releases the start barrier) and waits for them.
        ProgramTask t;
        t.spec.comm = "messaging-main";
        t.spec.allowed = CpuSet::single(s.cpus.empty() ? 0 : s.cpus.first());
        t.spec.policy = s.policy;
        t.spec.nice = s.nice;
        t.spec.footprint_kib = s.footprint_kib;
        t.spec.wakee_flips = s.parent_wakee_flips;
        t.launcher = true;
        t.code = {Op{Op::run, 1000, 0, 0, 0, 0}, Op{Op::barrier, 0, 0, start, 1, 0}};
        b.tasks.push_back(std::move(t));
    }
    for (int64_t g = 0; g < s.groups; ++g) {
        const int first_ch = static_cast<int>(b.channels.size());
        for (int64_t r = 0; r < s.fds; ++r) {
            std::string name = "g";  // appended piecewise: GCC 12 misreports -Wrestrict on "lit" + string
            name += std::to_string(g);
            name += "-r";
            name += std::to_string(r);
            b.channels.push_back({name, capacity, pipe_site(SiteRole::request), pipe_site(SiteRole::generic), s.data_size + 128, prof.pipe_lines,
                                  per_page, per_page > 0 ? 16 : 0});
        }
        for (int64_t r = 0; r < s.fds; ++r) {
            ProgramTask t = worker("receiver-", g, r, TaskRole::server);
            t.code = {Op{Op::barrier, 0, 0, start, 0, 0},
                      Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.loops * s.fds), 0, 0},
                      // A message counts when its receiver has it (then it copies it out).
                      Op{Op::wait, pc.read_pre, pc.read_post + copy, first_ch + static_cast<int32_t>(r), 0,
                         static_cast<uint32_t>(s.data_size), Op::kCountsOnTake},
                      Op{Op::loop_end, 0, 0, 0, 0, 0}};
            b.tasks.push_back(std::move(t));
        }
        // Every sender of a group runs the same program: built once, shared by the group's senders.
        Code sender;
        sender.push_back(Op{Op::barrier, 0, 0, start, 0, 0});
        sender.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.loops), 0, 0});
        for (int64_t r = 0; r < s.fds; ++r) {
            sender.push_back(Op{Op::post, pc.write_pre + copy, 0, first_ch + static_cast<int32_t>(r), 0, 0});
            sender.push_back(Op{Op::run, prof.syscall_ns / 2, 0, 0, 0, 0});
        }
        sender.push_back(Op{Op::loop_end, 0, 0, 0, 0, 0});
        for (int64_t snd = 0; snd < s.fds; ++snd) {
            ProgramTask t = worker("sender-", g, snd, TaskRole::requester);
            t.code = sender;
            b.tasks.push_back(std::move(t));
        }
    }
    b.parent_cpu = s.cpus.empty() ? 0 : s.cpus.first();
    // pthread_create() of a worker: 12-38 us between sched_wakeup_new events (39 gaps of
    // perf bench sched messaging -t -g 1 on the 2-vCPU VM, Linux 6.18), so each worker is ready
    // and asleep before the next is forked.
    b.fork_gap_min_ns = 12000;
    b.fork_gap_max_ns = 38000;
    b.total_ops = static_cast<uint64_t>(s.groups * s.fds * s.fds * s.loops);
    return b;
}

WorkloadBuild make_messaging(const WorkloadInput& in) { return build_messaging(read_messaging(in), in.profile); }

}  // namespace

const WorkloadKind& messaging_workload() {
    static const WorkloadKind k{
        .kind = "messaging",
        .description = "perf bench sched messaging / hackbench: groups of senders and receivers over pipes, created "
                       "and started by perf's main thread",
        .params = messaging_params(),
        .keys = {},
        .sections = {},
        .build = make_messaging,
    };
    return k;
}

}  // namespace wakesim
