// fio reading or writing through a FUSE filesystem served by libfuse's passthrough_hp
// (--nopassthrough, on tmpfs): every I/O is one FUSE READ or WRITE request over /dev/fuse or
// fuse-over-io-uring (workloads/fuse/). psync sends synchronous (foreground) requests, as in the
// "fuse: Wake requests on the same cpu" thread (Schubert, Oct 2025): fio --rw=randread --bs=4k
// --ioengine=psync --iodepth=1 --direct=1; io_uring and libaio send asynchronous direct I/O, which
// FUSE turns into background requests, as in "fuse: {io-uring} Queue background requests on a
// different core" (Schubert, 2025-2026): --ioengine=io_uring --iodepth=4.
#include <memory>
#include <string>

#include "workloads/fuse/fuse_conn.h"
#include "workloads/kind.h"

namespace wakesim {

namespace {

const ParamTable& fio_params() {
    static const ParamTable t = {
        {.name = "rw", .type = ParamType::choice, .default_value = "randread",
         .choices = {"randread", "read", "randwrite", "write"},
         .help = "`--rw`. Direct reads (READ requests: the data is copied from the server's tmpfs to the app's pages) "
                 "or writes (WRITE requests: the data is copied the other way, from the app's pages into the "
                 "request and by pwrite into tmpfs); random and sequential cost the same here"},
        {.name = "bs", .type = ParamType::size, .default_value = "4KiB", .min = 512, .max = 1 << 20,
         .help = "`--bs`: bytes per read, one FUSE READ request each (an op carries bs bytes)"},
        {.name = "numjobs", .type = ParamType::integer, .default_value = "1", .min = 1, .max = 1024,
         .help = "`--numjobs`: reading tasks `fio-0`, `fio-1`, ..."},
        {.name = "number_ios", .type = ParamType::integer, .default_value = "10000", .min = 1, .max = kMaxLoops,
         .help = "`--number_ios`: reads per job; the workload performs numjobs x number_ios ops"},
        {.name = "ioengine", .type = ParamType::choice, .default_value = "psync",
         .choices = {"psync", "io_uring", "libaio"},
         .help = "`--ioengine`: `psync` (pread/pwrite: one synchronous foreground request at a time), or "
                 "`io_uring` / `libaio`: asynchronous direct I/O, one FUSE background request per I/O "
                 "(fuse_direct_IO with async_dio); the job submits up to `iodepth` in one call "
                 "(io_uring_enter / io_submit), then waits for at least one completion (io_uring_enter "
                 "min_complete=1 / io_getevents min_nr=1) and reaps all there are"},
        {.name = "iodepth", .type = ParamType::integer, .default_value = "1", .min = 1, .max = 4096,
         .help = "`--iodepth`: I/Os in flight per job; 1 with psync. numjobs x iodepth at most 16384"},
        {.name = "direct", .type = ParamType::integer, .default_value = "1", .min = 0, .max = 1,
         .help = "`--direct`: only 1 (O_DIRECT; passthrough_hp answers with FOPEN_DIRECT_IO) is modelled"},
        {.name = "cpus", .type = ParamType::cpulist, .help = "`--cpus_allowed` of every job. The first CPU is also "
                                                             "the parent CPU the tasks are forked from (default 0)",
         .absent_means = "all CPUs"},
        {.name = "cpus_allowed_policy", .type = ParamType::choice, .default_value = "shared",
         .choices = {"shared", "split"},
         .help = "`--cpus_allowed_policy`: every job may use all of `cpus`, or job j is pinned to the j-th CPU of "
                 "`cpus` (wrapping around)"},
        {.name = "transport", .type = ParamType::choice, .default_value = "dev", .choices = {"dev", "io_uring"},
         .help = "`dev`: /dev/fuse with a pool of libfuse worker threads; `io_uring`: fuse-over-io-uring "
                 "(passthrough_hp `-o io_uring`), one ring thread per queue pinned to the queue's CPU"},
        {.name = "threads", .type = ParamType::integer, .default_value = "2", .min = 1, .max = 1024,
         .help = "`dev`: libfuse worker threads (a fixed pool; libfuse starts one and grows the pool to max_threads "
                 "10 on demand, and one synchronous stream settles at two)"},
        {.name = "nr_queues", .type = ParamType::integer, .min = 1, .max = kMaxCpus,
         .help = "`io_uring`: number of queues (`-o io_uring_nr_qs`, from the reduced-queues series): spread over "
                 "the NUMA nodes round-robin, the lowest-numbered CPUs of each node first",
         .absent_means = "one queue per CPU (mainline)"},
        {.name = "queue_cpus", .type = ParamType::cpulist,
         .help = "`io_uring`: the queues' CPUs (`-o io_uring_q_mask`); not with `nr_queues`. A request submitted "
                 "on a CPU without a queue uses queue (cpu + 1) mod n of the n queues of its node (the series' v3 "
                 "rule), or of all queues when its node has none",
         .absent_means = "see `nr_queues`"},
        {.name = "max_background", .type = ParamType::integer, .default_value = "12", .min = 1, .max = 65535,
         .help = "the connection's `max_background` (FUSE_DEFAULT_MAX_BACKGROUND 12; the server may raise it in its "
                 "INIT reply): background requests beyond it wait in fc->bg_queue (/dev/fuse) or the queue's "
                 "background list (io-uring), and the next background submitter sleeps on fc->blocked_waitq"},
        {.name = "congestion_threshold", .type = ParamType::integer, .default_value = "9", .min = 1, .max = 65535,
         .help = "the connection's `congestion_threshold` (default 3/4 of max_background): only counted "
                 "(it makes readahead and writeback back off, which are not modelled; direct I/O ignores it)"},
        {.name = "server_work", .type = ParamType::duration, .default_value = "1500ns", .min = 0, .max = kMaxTime,
         .help = "the server's handler per request without the data copy: libfuse decode and passthrough_hp's "
                 "pread syscall on tmpfs (estimate, 1.5-2.5 us with the copy)"},
        {.name = "server_write_work", .type = ParamType::duration, .default_value = "1800ns", .min = 0,
         .max = kMaxTime,
         .help = "the handler of a WRITE without the data copy: libfuse decode and passthrough_hp's pwrite on "
                 "tmpfs (estimate: a shmem write of a cached page costs somewhat more than its read)"},
        {.name = "copy_per_kib", .type = ParamType::duration, .default_value = "80ns", .min = 0, .max = kMaxTime,
         .help = "one copy of 1 KiB of data; each read copies bs twice (tmpfs to the server's buffer, the buffer to "
                 "the app's pages) (estimate: 0.2-0.5 us per 4 KiB)"},
        {.name = "app_submit", .type = ParamType::duration, .default_value = "1200ns", .min = 0, .max = kMaxTime,
         .help = "fio's loop, syscall entry, VFS, fuse request allocation and queueing, before the requester "
                 "sleeps (estimate)"},
        {.name = "app_complete", .type = ParamType::duration, .default_value = "300ns", .min = 0, .max = kMaxTime,
         .help = "after the reply wake: request teardown and syscall exit (estimate)"},
        {.name = "dev_read", .type = ParamType::duration, .default_value = "1500ns", .min = 0, .max = kMaxTime,
         .help = "`dev`: the worker's splice + read of the request and its header copy (estimate)"},
        {.name = "dev_write", .type = ParamType::duration, .default_value = "1200ns", .min = 0, .max = kMaxTime,
         .help = "`dev`: the worker's writev of the reply up to fuse_request_end, without the data copy (estimate)"},
        {.name = "loop_tail", .type = ParamType::duration, .default_value = "2us", .min = 0, .max = kMaxTime,
         .help = "`dev`: the worker from the reply's wake to its sleep in the next read: writev exit, libfuse "
                 "accounting, read entry (estimate, 2-3 us)"},
        {.name = "uring_task_work", .type = ParamType::duration, .default_value = "700ns", .min = 0,
         .max = kMaxTime,
         .help = "`io_uring`: the ring thread's task work: request copy into the ring buffers and CQE (estimate, "
                 "0.5-1 us)"},
        {.name = "uring_commit", .type = ParamType::duration, .default_value = "800ns", .min = 0, .max = kMaxTime,
         .help = "`io_uring`: io_uring_enter with COMMIT_AND_FETCH up to fuse_request_end, without the data copy "
                 "(estimate)"},
        {.name = "uring_enter_tail", .type = ParamType::duration, .default_value = "1500ns", .min = 0,
         .max = kMaxTime,
         .help = "`io_uring`: the ring thread from the reply's wake to its sleep in the CQ wait (estimate, 1-2 us)"},
        {.name = "aio_submit_call", .type = ParamType::duration, .default_value = "600ns", .min = 0,
         .max = kMaxTime,
         .help = "`io_uring`/`libaio`: one submit call (io_uring_enter with to_submit / io_submit): fio's commit, "
                 "syscall entry and exit, SQE or iocb handling; each request's own path is `app_submit` "
                 "(estimate)"},
        {.name = "aio_wait_call", .type = ParamType::duration, .default_value = "400ns", .min = 0, .max = kMaxTime,
         .help = "`io_uring`/`libaio`: one wait call (io_uring_enter GETEVENTS / io_getevents): syscall entry and "
                 "exit and fio's event loop (estimate)"},
        {.name = "aio_reap", .type = ParamType::duration, .default_value = "300ns", .min = 0, .max = kMaxTime,
         .help = "`io_uring`/`libaio`: per completion reaped: the completion's task work or event copy and fio's "
                 "io_u accounting (estimate)"},
        {.name = "footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
         .help = "each fio job's working set, refilled after it runs elsewhere (as for `pipe`); each request's "
                 "256 B are shared with the server"},
        {.name = "server_footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
         .help = "each worker's or ring thread's working set"},
    };
    return t;
}

struct FioSpec {
    int64_t bs = 0, numjobs = 0, number_ios = 0, threads = 0, iodepth = 1;
    bool async = false, write = false;
    bool split = false;
    CpuSet cpus;  // empty: every CPU
    FuseConnDef conn;
    int64_t footprint_kib = 0, server_footprint_kib = 0;
};

// The queues' CPUs: spread over the nodes round-robin, lowest-numbered CPUs of a node first.
std::vector<int> spread_queues(int64_t n, const Topology& topo) {
    std::vector<int> next(static_cast<size_t>(topo.nr_nodes()), 0);  // next CPU to try per node
    CpuSet chosen;
    for (int64_t placed = 0; placed < n;) {
        for (int node = 0; node < topo.nr_nodes() && placed < n; ++node) {
            const int c = topo.node_cpus(node).next(next[static_cast<size_t>(node)]);
            if (c < 0) continue;
            chosen.set(c);
            next[static_cast<size_t>(node)] = c + 1;
            ++placed;
        }
    }
    std::vector<int> out;
    chosen.for_each([&](int c) { out.push_back(c); });
    return out;
}

// fuse_uring_get_queue (reduced-queues series v3, foreground, below its load thresholds).
std::vector<int> queue_map(const std::vector<int>& queue_cpu, const Topology& topo) {
    std::vector<int> of_cpu(static_cast<size_t>(topo.nr_cpus()), -1);
    std::vector<std::vector<int>> by_node(static_cast<size_t>(topo.nr_nodes()));
    for (size_t q = 0; q < queue_cpu.size(); ++q) {
        of_cpu[static_cast<size_t>(queue_cpu[q])] = static_cast<int>(q);
        by_node[static_cast<size_t>(topo.cpu(queue_cpu[q]).node)].push_back(static_cast<int>(q));
    }
    for (int c = 0; c < topo.nr_cpus(); ++c) {
        if (of_cpu[static_cast<size_t>(c)] >= 0) continue;
        const std::vector<int>& local = by_node[static_cast<size_t>(topo.cpu(c).node)];
        const size_t n = local.empty() ? queue_cpu.size() : local.size();
        const size_t i = static_cast<size_t>(c + 1) % n;
        of_cpu[static_cast<size_t>(c)] = local.empty() ? static_cast<int>(i) : local[i];
    }
    return of_cpu;
}

FioSpec read_fio(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    FioSpec s;
    const std::string& engine = p.choice("ioengine");
    s.async = engine != "psync";
    s.iodepth = p.integer("iodepth");
    if (!s.async && s.iodepth != 1)
        in.json.at("iodepth").fail("expected 1 with ioengine \"psync\": one synchronous request in flight per job "
                                   "(deeper queues need ioengine \"io_uring\" or \"libaio\")");
    if (p.integer("direct") != 1)
        in.json.at("direct").fail("expected 1: only O_DIRECT I/O is modelled (buffered I/O goes through the page "
                                  "cache, with readahead and writeback, which are not modelled)");
    s.write = p.choice("rw") == "randwrite" || p.choice("rw") == "write";
    s.bs = p.size_bytes("bs");
    s.numjobs = p.integer("numjobs");
    s.number_ios = p.integer("number_ios");
    if (s.numjobs * s.number_ios > kMaxLoops)
        in.json.at("number_ios").fail("expected numjobs x number_ios at most 1000000000");
    if (s.numjobs * s.iodepth > 16384)
        in.json.at("iodepth").fail("expected numjobs x iodepth at most 16384");
    s.threads = p.integer("threads");
    s.cpus = read_cpus(in.json, p, "cpus", in.topo);
    s.split = p.choice("cpus_allowed_policy") == "split";
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    s.server_footprint_kib = p.size_bytes("server_footprint") / 1024;

    FuseConnDef& d = s.conn;
    const bool uring = p.choice("transport") == "io_uring";
    d.transport = uring ? FuseTransport::uring : FuseTransport::dev;
    d.engine = engine == "libaio" ? AioEngine::libaio : AioEngine::io_uring;
    d.max_background = static_cast<int>(p.integer("max_background"));
    d.congestion_threshold = static_cast<int>(p.integer("congestion_threshold"));
    if (!uring)
        for (const char* k : {"nr_queues", "queue_cpus"})
            if (p.given(k)) in.json.at(k).fail("expected no queue option with transport \"dev\"");
    if (uring) {
        if (p.given("nr_queues") && p.given("queue_cpus"))
            in.json.at("queue_cpus").fail("expected either nr_queues or queue_cpus, not both");
        if (p.given("queue_cpus")) {
            read_cpus(in.json, p, "queue_cpus", in.topo).for_each([&](int c) { d.queue_cpu.push_back(c); });
        } else if (p.given("nr_queues")) {
            if (p.integer("nr_queues") > in.topo.nr_cpus())
                in.json.at("nr_queues").fail("expected at most one queue per CPU (" + std::to_string(in.topo.nr_cpus()) +
                                             ")");
            d.queue_cpu = spread_queues(p.integer("nr_queues"), in.topo);
        } else {
            for (int c = 0; c < in.topo.nr_cpus(); ++c) d.queue_cpu.push_back(c);
        }
        d.queue_of_cpu = queue_map(d.queue_cpu, in.topo);
    }
    const int64_t copy = s.bs * p.duration_ns("copy_per_kib") / 1024;
    FuseCosts& c = d.costs;
    c.app_submit = p.duration_ns("app_submit");
    c.app_complete = p.duration_ns("app_complete");
    // A READ's data goes to the app with the reply (dev_write, uring_commit); a WRITE's comes with
    // the request (dev_read, uring_task_work) and the handler's pwrite copies it into tmpfs.
    const int64_t in_copy = s.write ? copy : 0, out_copy = s.write ? 0 : copy;
    c.server_work = p.duration_ns(s.write ? "server_write_work" : "server_work") + copy;
    c.dev_read = p.duration_ns("dev_read") + in_copy;
    c.dev_write = p.duration_ns("dev_write") + out_copy;
    c.loop_tail = p.duration_ns("loop_tail");
    c.uring_task_work = p.duration_ns("uring_task_work") + in_copy;
    c.uring_commit = p.duration_ns("uring_commit") + out_copy;
    c.uring_enter_tail = p.duration_ns("uring_enter_tail");
    c.aio_submit_call = p.duration_ns("aio_submit_call");
    c.aio_wait_call = p.duration_ns("aio_wait_call");
    c.aio_reap = p.duration_ns("aio_reap");
    c.shared_bytes = 256;
    return s;
}

// The server's threads first (they exist before fio starts), then the jobs.
WorkloadBuild build_fio(const FioSpec& s) {
    WorkloadBuild b;
    b.kind = "fio";
    b.op_name = s.write ? "write" : "read";
    Channel conn{"fuse", 0, fuse_request_end_site(s.conn.transport == FuseTransport::uring),
                 fuse_queue_request_site(), 0};
    conn.fuse = std::make_shared<const FuseConnDef>(s.conn);
    b.channels.push_back(std::move(conn));
    auto server = [&](std::string comm, CpuSet allowed, Op op) {
        ProgramTask t;
        t.spec.comm = std::move(comm);
        t.spec.allowed = allowed;
        t.spec.role = TaskRole::server;
        t.spec.pair_id = 1;
        t.spec.footprint_kib = s.server_footprint_kib;
        t.code = {op};
        t.background = true;  // serves forever; the run ends with the jobs
        b.tasks.push_back(std::move(t));
    };
    if (s.conn.transport == FuseTransport::dev) {
        for (int64_t i = 0; i < s.threads; ++i) server("fuse-worker-" + std::to_string(i), CpuSet{}, Op{Op::fuse_worker});
    } else {
        for (size_t q = 0; q < s.conn.queue_cpu.size(); ++q) {
            CpuSet pin;
            pin.set(s.conn.queue_cpu[q]);
            server("fuse-ring-" + std::to_string(s.conn.queue_cpu[q]), pin,
                   Op{Op::fuse_ring, 0, 0, 0, static_cast<int32_t>(q), 0});
        }
    }
    std::vector<int> cpu_list;
    s.cpus.for_each([&](int c) { cpu_list.push_back(c); });
    for (int64_t j = 0; j < s.numjobs; ++j) {
        ProgramTask t;
        t.spec.comm = "fio-" + std::to_string(j);
        t.spec.allowed = s.cpus;
        if (s.split && !cpu_list.empty()) {
            t.spec.allowed = CpuSet{};
            t.spec.allowed.set(cpu_list[static_cast<size_t>(j) % cpu_list.size()]);
        }
        t.spec.role = TaskRole::requester;
        t.spec.pair_id = 1;
        t.spec.footprint_kib = s.footprint_kib;
        if (s.async)
            t.code = {Op{Op::fuse_aio, s.number_ios, 0, 0, static_cast<int32_t>(s.iodepth), static_cast<uint32_t>(s.bs)}};
        else
            t.code = {Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.number_ios), 0, 0}, Op{Op::fuse_request},
                      Op{Op::count_op, 0, 0, 0, 0, static_cast<uint32_t>(s.bs)}, Op{Op::loop_end}};
        b.tasks.push_back(std::move(t));
    }
    b.parent_cpu = s.cpus.empty() ? 0 : s.cpus.first();
    b.total_ops = static_cast<uint64_t>(s.numjobs * s.number_ios);
    return b;
}

WorkloadBuild make_fio(const WorkloadInput& in) { return build_fio(read_fio(in)); }

}  // namespace

const WorkloadKind& fio_workload() {
    static const WorkloadKind k{
        .kind = "fio",
        .description = "fio direct reads or writes through FUSE (passthrough_hp on tmpfs), psync or async (io_uring, "
                       "libaio): /dev/fuse or fuse-over-io-uring",
        .params = fio_params(),
        .keys = {},
        .sections = {},
        .build = make_fio,
    };
    return k;
}

}  // namespace wakesim
