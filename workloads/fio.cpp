// fio reading through a FUSE filesystem served by libfuse's passthrough_hp (--nopassthrough, on
// tmpfs): every read is one synchronous FUSE READ request over /dev/fuse or fuse-over-io-uring
// (workloads/fuse/). As in the "fuse: Wake requests on the same cpu" thread (Schubert, Oct 2025):
// fio --rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=1.
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
            {.name = "rw", .type = ParamType::choice, .default_value = "randread", .choices = {"randread", "read"},
             .help = "`--rw`. Both are 4 KiB-page direct reads of a file in the page cache of the server's tmpfs, "
                     "so they cost the same here"},
            {.name = "bs", .type = ParamType::size, .default_value = "4KiB", .min = 512, .max = 1 << 20,
             .help = "`--bs`: bytes per read, one FUSE READ request each (an op carries bs bytes)"},
            {.name = "numjobs", .type = ParamType::integer, .default_value = "1", .min = 1, .max = 1024,
             .help = "`--numjobs`: reading tasks `fio-0`, `fio-1`, ..."},
            {.name = "number_ios", .type = ParamType::integer, .default_value = "10000", .min = 1, .max = kMaxLoops,
             .help = "`--number_ios`: reads per job; the workload performs numjobs x number_ios ops"},
            {.name = "ioengine", .type = ParamType::text, .default_value = "psync",
             .help = "`--ioengine`: only `psync` (synchronous pread, one foreground request at a time) is modelled"},
            {.name = "iodepth", .type = ParamType::integer, .default_value = "1", .min = 1, .max = 4096,
             .help = "`--iodepth`: 1 with psync"},
            {.name = "cpus", .type = ParamType::cpulist,
             .help = "`--cpus_allowed` of every job. The first CPU is also the parent CPU the tasks are forked from "
                     "(default 0)",
             .absent_means = "all CPUs"},
            {.name = "cpus_allowed_policy", .type = ParamType::choice, .default_value = "shared",
             .choices = {"shared", "split"},
             .help = "`--cpus_allowed_policy`: every job may use all of `cpus`, or job j is pinned to the j-th CPU "
                     "of `cpus` (wrapping around)"},
            {.name = "footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
             .help = "each fio job's working set, refilled after it runs elsewhere (as for `pipe`); each request's "
                     "256 B are shared with the server"},
        };
        // The FUSE connection: transport, libfuse's pool, queues and per-request costs.
        const ParamTable& conn = fuse_conn_params();
        own.insert(own.end(), conn.begin(), conn.end());
        return own;
    }();
    return t;
}

struct FioSpec {
    int64_t bs = 0, numjobs = 0, number_ios = 0;
    bool split = false;
    CpuSet cpus;  // empty: every CPU
    FuseConnSpec conn;
    int64_t footprint_kib = 0;
};

FioSpec read_fio(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    FioSpec s;
    const std::string& engine = p.text("ioengine");
    if (engine != "psync")
        in.json.at("ioengine").fail("expected \"psync\": ioengine \"" + engine +
                                    "\" (asynchronous FUSE requests) is not modelled yet");
    if (p.integer("iodepth") != 1)
        in.json.at("iodepth").fail("expected 1: psync has one request in flight per job (deeper queues need an "
                                   "asynchronous engine, not modelled yet)");
    s.bs = p.size_bytes("bs");
    s.numjobs = p.integer("numjobs");
    s.number_ios = p.integer("number_ios");
    if (s.numjobs * s.number_ios > kMaxLoops)
        in.json.at("number_ios").fail("expected numjobs x number_ios at most 1000000000");
    s.cpus = read_cpus(in.json, p, "cpus", in.topo);
    s.split = p.choice("cpus_allowed_policy") == "split";
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    s.conn = read_fuse_conn(in.json, p, in.topo);
    return s;
}

// The server's threads first (they exist before fio starts), then the jobs.
WorkloadBuild build_fio(const FioSpec& s) {
    WorkloadBuild b;
    b.kind = "fio";
    b.op_name = "read";
    const bool uring = s.conn.def->transport == FuseTransport::uring;
    Channel conn{"fuse", 0, fuse_request_end_site(uring), fuse_queue_request_site(), 0};
    conn.fuse = s.conn.def;
    b.channels.push_back(std::move(conn));
    add_fuse_servers(b, 0, s.conn, "fuse");
    std::vector<int> cpu_list;
    s.cpus.for_each([&](int c) { cpu_list.push_back(c); });
    // One pread of bs bytes: a READ whose reply carries them (two copies of the data).
    const Op read{Op::fuse_request, s.conn.ops.work(FuseOp::read, s.bs), 0, 0, static_cast<int32_t>(FuseOp::read), 0};
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
        t.code = {Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.number_ios), 0, 0}, read,
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
        .description = "fio psync reads through FUSE (passthrough_hp on tmpfs): /dev/fuse or fuse-over-io-uring",
        .params = fio_params(),
        .keys = {},
        .sections = {},
        .build = make_fio,
    };
    return k;
}

}  // namespace wakesim
