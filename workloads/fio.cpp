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
#include "workloads/fuse/fuse_ops.h"
#include "workloads/kind.h"

namespace wakesim {

namespace {

const ParamTable& fio_params() {
    static const ParamTable t = [] {
        ParamTable own = {
            {.name = "rw", .type = ParamType::choice, .default_value = "randread",
             .choices = {"randread", "read", "randwrite", "write"},
             .help = "`--rw`. Direct reads (READ requests: the data is copied from the server's tmpfs to the app's "
                     "pages) or writes (WRITE requests: the data is copied the other way, from the app's pages into "
                     "the request and by pwrite into tmpfs); random and sequential cost the same here"},
            {.name = "bs", .type = ParamType::size, .default_value = "4KiB", .min = 512, .max = 1 << 20,
             .help = "`--bs`: bytes per I/O, one FUSE READ or WRITE request each (an op carries bs bytes)"},
            {.name = "numjobs", .type = ParamType::integer, .default_value = "1", .min = 1, .max = 1024,
             .help = "`--numjobs`: tasks `fio-0`, `fio-1`, ..."},
            {.name = "number_ios", .type = ParamType::integer, .default_value = "10000", .min = 1, .max = kMaxLoops,
             .help = "`--number_ios`: I/Os per job; the workload performs numjobs x number_ios ops"},
            {.name = "ioengine", .type = ParamType::choice, .default_value = "psync",
             .choices = {"psync", "io_uring", "libaio"},
             .help = "`--ioengine`: fio's engine, not the FUSE transport (that is `transport`, default `dev`: table B's "
                     "io_uring runs set both). `psync` (pread/pwrite: one synchronous foreground request at a time), or "
                     "`io_uring` / `libaio`: asynchronous direct I/O, one FUSE background request per I/O "
                     "(fuse_direct_IO with async_dio). As fio 3.33 does: while fewer than `iodepth` are in flight the "
                     "job submits the next `iodepth_batch_submit` in one call (io_uring_enter / io_submit); with the "
                     "queue full it reaps up to `iodepth_batch_complete_max` completions, sleeping for one if there "
                     "is none. fio sets "
                     "its io_uring up with DEFER_TASKRUN: completions reach the CQ ring only inside the job's next "
                     "io_uring_enter, and each submit call (to_submit, min_complete 0, GETEVENTS) posts them, so a "
                     "reap needs a wait call (io_uring_enter(0, 1, GETEVENTS)) only when the ring is empty; "
                     "libaio reaps with io_getevents (min_nr 1) every time"},
            {.name = "iodepth", .type = ParamType::integer, .default_value = "1", .min = 1, .max = 4096,
             .help = "`--iodepth`: I/Os in flight per job; 1 with psync. numjobs x iodepth at most 16384"},
            {.name = "iodepth_batch_submit", .type = ParamType::integer, .default_value = "1", .min = 0,
             .max = 4096,
             .help = "`--iodepth_batch_submit` (`--iodepth_batch`), io_uring and libaio: I/Os per submit call, at "
                     "most `iodepth`; 0 means `iodepth`. fio's default 1 submits each I/O in its own call as soon "
                     "as it is prepared (measured with fio 3.33 at iodepth 4 over fuse-over-io-uring: one "
                     "io_uring_enter(1, 0, GETEVENTS) per I/O and one io_uring_enter(0, 1, GETEVENTS) per 4.2 I/Os)"},
            {.name = "iodepth_batch_complete_max", .type = ParamType::integer, .default_value = "1", .min = 1,
             .max = 4096,
             .help = "`--iodepth_batch_complete_max`, io_uring and libaio: the most completions one reap takes; "
                     "fio's default is `iodepth_batch_complete_min`, 1: with the queue full fio reaps one "
                     "completion and refills its slot, then reaps the next (with io_uring from the CQEs the submit "
                     "calls posted, without a system call)"},
            {.name = "direct", .type = ParamType::integer, .default_value = "1", .min = 0, .max = 1,
             .help = "`--direct`: only 1 (O_DIRECT; passthrough_hp answers with FOPEN_DIRECT_IO) is modelled"},
            {.name = "cpus", .type = ParamType::cpulist,
             .help = "`--cpus_allowed` of every job. The first CPU is also the parent CPU the tasks are forked from "
                     "(default 0)",
             .absent_means = "all CPUs", .aka = {"cpus_allowed", "cpumask"}},
            {.name = "cpus_allowed_policy", .type = ParamType::choice, .default_value = "shared",
             .choices = {"shared", "split"},
             .help = "`--cpus_allowed_policy`: every job may use all of `cpus`, or job j is pinned to the j-th CPU "
                     "of `cpus` (wrapping around)"},
            {.name = "aio_submit_call", .type = ParamType::duration, .default_value = "500ns", .min = 0,
             .max = kMaxTime,
             .help = "`io_uring`/`libaio`: one submit call (io_uring_enter with to_submit / io_submit): fio's "
                     "commit, SQE or iocb handling, besides the call's entry and exit (the machine's `syscall`); "
                     "each request's own path is `app_submit` (estimate, 600 ns with `syscall` at 100 ns)"},
            {.name = "aio_wait_call", .type = ParamType::duration, .default_value = "300ns", .min = 0,
             .max = kMaxTime,
             .help = "`io_uring`/`libaio`: one wait call (io_uring_enter GETEVENTS / io_getevents): fio's event "
                     "loop, besides the call's entry and exit (the machine's `syscall`) (estimate, 400 ns with them "
                     "at 100 ns)"},
            {.name = "aio_reap", .type = ParamType::duration, .default_value = "300ns", .min = 0, .max = kMaxTime,
             .help = "`io_uring`/`libaio`: per completion reaped: the completion's task work or event copy and "
                     "fio's io_u accounting (estimate)"},
            {.name = "footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
             .help = "each fio job's working set, refilled after it runs elsewhere (as for `pipe`); each "
                     "request's 256 B are shared with the server"},
        };
        // The FUSE connection: transport, libfuse's pool, queues, background limits and costs.
        const ParamTable& conn = fuse_conn_params();
        own.insert(own.end(), conn.begin(), conn.end());
        const ParamTable& groups = fuse_group_params();
        own.insert(own.end(), groups.begin(), groups.end());
        return own;
    }();
    return t;
}

struct FioSpec {
    int64_t bs = 0, numjobs = 0, number_ios = 0, iodepth = 1;
    bool async = false, write = false;
    bool split = false;
    CpuSet cpus;  // empty: every CPU
    FuseConnSpec conn;
    int64_t footprint_kib = 0;
    FuseGroups groups;
};

FioSpec read_fio(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    FioSpec s;
    const std::string& engine = p.choice("ioengine");
    s.async = engine != "psync";
    s.iodepth = p.integer("iodepth");
    // The checks across parameters are independent: every one that fails is reported.
    InputErrorCollector errors;
    if (!s.async && s.iodepth != 1)
        errors.attempt([&] {
            in.json.at("iodepth").fail("expected 1 with ioengine \"psync\": one synchronous request in flight per job "
                                       "(deeper queues need ioengine \"io_uring\" or \"libaio\")");
        });
    const int64_t batch = p.integer("iodepth_batch_submit");
    if (batch > s.iodepth)
        errors.attempt([&] {
            in.json.at("iodepth_batch_submit").fail("expected at most iodepth (" + std::to_string(s.iodepth) +
                                                    "), or 0 for iodepth (fio would clamp a larger value to iodepth)");
        });
    if (p.integer("iodepth_batch_complete_max") > s.iodepth)
        errors.attempt([&] {
            in.json.at("iodepth_batch_complete_max")
                .fail("expected at most iodepth (" + std::to_string(s.iodepth) + "): no more completions can be in flight");
        });
    if (p.integer("direct") != 1)
        errors.attempt([&] {
            in.json.at("direct").fail("expected 1: only O_DIRECT I/O is modelled (buffered I/O goes through the page "
                                      "cache, with readahead and writeback, which are not modelled)");
        });
    s.write = p.choice("rw") == "randwrite" || p.choice("rw") == "write";
    s.bs = p.size_bytes("bs");
    s.numjobs = p.integer("numjobs");
    s.number_ios = p.integer("number_ios");
    if (s.numjobs * s.number_ios > kMaxLoops)
        errors.attempt([&] { in.json.at("number_ios").fail("expected numjobs x number_ios at most 1000000000"); });
    if (s.numjobs * s.iodepth > 16384)
        errors.attempt([&] { in.json.at("iodepth").fail("expected numjobs x iodepth at most 16384"); });
    errors.attempt([&] { s.cpus = read_cpus(in.json, p, "cpus", in.topo); });
    s.split = p.choice("cpus_allowed_policy") == "split";
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    errors.attempt([&] { s.conn = read_fuse_conn(in.json, p, in.topo, in.profile); });
    errors.attempt([&] { s.groups = read_fuse_groups(in.json, p, in.groups, in.topo, s.cpus); });
    errors.finish();
    // fio's engine decides how a background request's submitter waits, and what each call costs.
    FuseConnDef d = *s.conn.def;
    d.engine = engine == "libaio" ? AioEngine::libaio : AioEngine::io_uring;
    d.aio_batch_submit = static_cast<int>(batch == 0 ? s.iodepth : std::min(batch, s.iodepth));
    d.aio_batch_complete = static_cast<int>(p.integer("iodepth_batch_complete_max"));
    d.costs.aio_submit_call = p.duration_ns("aio_submit_call");
    d.costs.aio_wait_call = p.duration_ns("aio_wait_call");
    d.costs.aio_reap = p.duration_ns("aio_reap");
    s.conn.def = std::make_shared<const FuseConnDef>(std::move(d));
    return s;
}

// The server's threads first (they exist before fio starts), then the jobs.
WorkloadBuild build_fio(const FioSpec& s) {
    WorkloadBuild b;
    b.kind = "fio";
    b.op_name = s.write ? "write" : "read";
    const bool uring = s.conn.def->transport == FuseTransport::uring;
    Channel conn{"fuse", 0, fuse_request_end_site(uring), fuse_queue_request_site(), 0};
    conn.fuse = s.conn.def;
    b.channels.push_back(std::move(conn));
    add_fuse_servers(b, 0, s.conn, "fuse");
    std::vector<int> cpu_list;
    s.cpus.for_each([&](int c) { cpu_list.push_back(c); });
    // One I/O of bs bytes: a READ whose reply carries them, or a WRITE whose request does (two
    // copies of the data either way).
    const FuseOp fop = s.write ? FuseOp::write : FuseOp::read;
    const int64_t work = s.conn.ops.work(fop, s.bs);
    // A synchronous I/O counts when its reply is in, before the request's teardown and the
    // return to user space, which then run with the next I/O's submit as one piece of work.
    Op sync_io{Op::fuse_request, work, 0, 0, static_cast<int32_t>(fop), static_cast<uint32_t>(s.bs)};
    sync_io.sub = Op::kCountsOnTake | Op::kOwnSyscall;  // one pread() or pwrite() each
    Op async_io{Op::fuse_aio, s.number_ios, work, 0, static_cast<int32_t>(s.iodepth), static_cast<uint32_t>(s.bs)};
    async_io.sub = static_cast<uint8_t>(fop);
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
            t.code = {async_io};
        else
            t.code = {Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.number_ios), 0, 0}, sync_io, Op{Op::loop_end}};
        b.tasks.push_back(std::move(t));
    }
    apply_fuse_groups(s.groups, b);
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
        .left_out = fuse_left_out(),
    };
    return k;
}

}  // namespace wakesim
