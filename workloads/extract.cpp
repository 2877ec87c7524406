// An app extracting an archive of small files into Android's shared storage (/sdcard, emulated
// by MediaProvider's FUSE daemon since Android 11: "Scoped storage" and "FUSE Passthrough",
// source.android.com): one thread inflates each entry and writes it through FUSE. Per file it
// sends LOOKUP (negative) and CREATE (fuse_atomic_open), one WRITE per write() call
// (fuse_perform_write without the writeback cache), FLUSH on close (fuse_flush) and RELEASE in
// the background (fuse_release -> fuse_file_put, sync false). docs/fuse.md, "Archive extraction".
#include <string>

#include "workloads/kind.h"

namespace wakesim {

namespace {

constexpr int64_t kMaxWritesPerFile = 64;
constexpr int64_t kMaxWriteSize = 128 << 10;  // one WRITE: FUSE_DEFAULT_MAX_PAGES_PER_REQ (32) pages

const ParamTable& extract_params() {
    static const ParamTable t = [] {
        ParamTable own = {
            {.name = "files", .type = ParamType::integer, .default_value = "2000", .min = 1, .max = kMaxLoops,
             .help = "files extracted, one after another (the op the report counts)"},
            {.name = "decompress", .type = ParamType::duration, .default_value = "15us", .min = 0, .max = kMaxTime,
             .help = "per file, the app's own work besides inflating the data: the entry's local header, name and "
                     "path handling, inflate set-up, the open/close syscalls' VFS part (estimate)"},
            {.name = "decompress_per_kib", .type = ParamType::duration, .default_value = "1us", .min = 0,
             .max = kMaxTime,
             .help = "inflating 1 KiB of a file's data before it is written, at the reference speed (zlib inflate "
                     "output of about 1 GB/s on the fastest core; estimate)"},
            {.name = "writes_min", .type = ParamType::integer, .default_value = "1", .min = 1, .max = kMaxWritesPerFile,
             .help = "fewest write() calls per file; each file's number is drawn uniformly in "
                     "[`writes_min`, `writes_max`] from the run's seed"},
            {.name = "writes_max", .type = ParamType::integer, .default_value = "4", .min = 1, .max = kMaxWritesPerFile,
             .help = "most write() calls per file, at least `writes_min`"},
            {.name = "write_size_min", .type = ParamType::size, .default_value = "4KiB", .min = 1, .max = kMaxWriteSize,
             .help = "smallest write(); each write's size is drawn uniformly in [`write_size_min`, "
                     "`write_size_max`] bytes from the run's seed. Up to 128 KiB, one write() is one WRITE request "
                     "(fuse_perform_write fills at most max_pages per request: the kernel's default of 32 pages, unless the server's INIT reply raises it)"},
            {.name = "write_size_max", .type = ParamType::size, .default_value = "64KiB", .min = 1,
             .max = kMaxWriteSize, .help = "largest write(), at least `write_size_min`"},
            {.name = "cpus", .type = ParamType::cpulist,
             .help = "the app thread's allowed CPUs; the first is also the CPU it is forked from",
             .absent_means = "all CPUs"},
            {.name = "footprint", .type = ParamType::size, .default_value = "64KiB", .min = 0, .max = 1LL << 30,
             .help = "the app thread's working set (inflate window and buffers), refilled after it runs elsewhere"},
            {.name = "daemon_group", .type = ParamType::text,
             .help = "a group of the scenario's `groups` for the FUSE daemon's /dev/fuse workers (Android runs "
                     "MediaProvider in a background group): they run only on its CPUs, and every daemon thread (its "
                     "io-uring ring threads too, which stay pinned to their queues) under its clamps and in its task "
                     "group when it is a `fair_group`. (`group`, `uclamp_min` and `uclamp_max` are the app thread's)",
             .absent_means = "none"},
        };
        const ParamTable& conn = fuse_conn_params();
        own.insert(own.end(), conn.begin(), conn.end());
        // The app thread's clamps and group (Android puts the foreground app in top-app).
        return with_task_uclamp(own);
    }();
    return t;
}

struct ExtractSpec {
    int64_t files = 0;
    int64_t decompress = 0, decompress_per_kib = 0;
    int64_t writes_min = 0, writes_max = 0, size_min = 0, size_max = 0;
    CpuSet cpus;
    int64_t footprint_kib = 0;
    FuseConnSpec conn;
    TaskSpec app;  // the app thread's CPUs (cpus, narrowed by its group) and clamps
    const TaskGroup* daemon = nullptr;  // the workers' group, if any
};

ExtractSpec read_extract(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    ExtractSpec s;
    s.files = p.integer("files");
    s.decompress = p.duration_ns("decompress");
    s.decompress_per_kib = p.duration_ns("decompress_per_kib");
    s.writes_min = p.integer("writes_min");
    s.writes_max = p.integer("writes_max");
    s.size_min = p.size_bytes("write_size_min");
    s.size_max = p.size_bytes("write_size_max");
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    InputErrorCollector errors;  // every mistake of the ranges, the CPU list and the connection
    if (s.writes_max < s.writes_min)
        errors.attempt([&] {
            in.json.at("writes_max").fail("expected at least writes_min (" + std::to_string(s.writes_min) + ")");
        });
    if (s.size_max < s.size_min)
        errors.attempt([&] {
            in.json.at("write_size_max").fail("expected at least write_size_min (" + std::to_string(s.size_min) + " bytes)");
        });
    errors.attempt([&] {
        s.cpus = read_cpus(in.json, p, "cpus", in.topo);
        s.app.allowed = s.cpus;
        apply_task_uclamp(in.json, p, in.groups, in.topo, s.app);
    });
    errors.attempt([&] { s.conn = read_fuse_conn(in.json, p, in.topo, in.profile); });
    if (p.given("daemon_group"))
        errors.attempt([&] {
            const JsonNode n = in.json.at("daemon_group");
            s.daemon = &find_task_group(n, in.groups);
            TaskSpec probe;  // the workers have no CPUs of their own: only an empty group CPU set is refused
            join_task_group(n, *s.daemon, in.topo, probe);
        });
    errors.finish();
    return s;
}

// The daemon's threads first (it serves the mount before the app starts), then the app thread.
WorkloadBuild build_extract(const ExtractSpec& s) {
    WorkloadBuild b;
    b.kind = "extract";
    b.op_name = "file";
    const bool uring = s.conn.def->transport == FuseTransport::uring;
    Channel conn{"fuse", 0, fuse_request_end_site(uring), fuse_queue_request_site(), 0};
    conn.fuse = s.conn.def;
    b.channels.push_back(std::move(conn));
    add_fuse_servers(b, 0, s.conn, "fuse");
    // The daemon's threads join its group (only the app thread is added after them): the /dev/fuse
    // workers on its CPUs, every thread under its clamps and in its task group; ring threads stay
    // pinned to their queues.
    if (s.daemon) apply_fuse_groups(FuseGroups{std::nullopt, *s.daemon}, b);

    const FuseOpCosts& c = s.conn.ops;
    // sys: the request's place in its system call (Op::kSyscallEntry, kSyscallExit).
    auto request = [&](FuseOp op, uint8_t sys) {
        Op r{Op::fuse_request, c.work(op, 0), 0, 0, static_cast<int32_t>(op), 0};
        r.sub = sys;
        return r;
    };
    ProgramTask t;
    t.spec = s.app;
    t.spec.comm = "extract";
    t.spec.role = TaskRole::requester;
    t.spec.pair_id = 1;
    t.spec.footprint_kib = s.footprint_kib;
    t.code.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.files), 0, 0});
    if (s.decompress > 0) t.code.push_back(Op{Op::run, s.decompress, 0, 0, 0, 0});
    // open(O_CREAT | O_WRONLY): fuse_atomic_open -> fuse_lookup (the name is new: a negative
    // entry), then fuse_create_open (CREATE opens the file too).
    t.code.push_back(request(FuseOp::lookup, Op::kSyscallEntry));
    t.code.push_back(request(FuseOp::create, Op::kSyscallExit));
    // write() calls: inflate the chunk, then one synchronous WRITE of it (fuse_perform_write ->
    // fuse_send_write_pages), whose server work grows with the bytes (two copies per KiB).
    const auto loop = static_cast<int32_t>(t.code.size());
    t.code.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.writes_min), static_cast<int32_t>(s.writes_max), 0});
    t.code.push_back(Op{Op::draw, s.size_min, s.size_max, 0, 0, 0});
    t.code.push_back(Op{Op::run, 0, s.decompress_per_kib, 0, 0, 0});
    Op write{Op::fuse_request, c.work(FuseOp::write, 0), 2 * c.copy_per_kib, 0, static_cast<int32_t>(FuseOp::write), 0};
    write.sub = Op::kOwnSyscall;
    t.code.push_back(write);
    t.code.push_back(Op{Op::loop_end, 0, 0, 0, loop, 0});
    // close(): fuse_flush (FLUSH, waited for), then fuse_release queues RELEASE in the background.
    t.code.push_back(request(FuseOp::flush, Op::kSyscallEntry));
    t.code.push_back(request(FuseOp::release, Op::kSyscallExit));
    Op count{Op::count_op, 0, 0, 0, 0, 0};
    count.sub = 1;  // the file's bytes
    t.code.push_back(count);
    t.code.push_back(Op{Op::loop_end, 0, 0, 0, 0, 0});
    b.tasks.push_back(std::move(t));
    b.parent_cpu = s.app.allowed.empty() ? 0 : s.app.allowed.first();
    b.total_ops = static_cast<uint64_t>(s.files);
    return b;
}

WorkloadBuild make_extract(const WorkloadInput& in) { return build_extract(read_extract(in)); }

}  // namespace

const WorkloadKind& extract_workload() {
    static const WorkloadKind k{
        .kind = "extract",
        .description = "an app extracting an archive of small files through FUSE (Android shared storage served by "
                       "MediaProvider's FUSE daemon): inflate, LOOKUP, CREATE, 1-4 WRITEs, FLUSH, RELEASE per file",
        .params = extract_params(),
        .keys = {},
        .sections = {},
        .build = make_extract,
        .left_out = fuse_left_out(),
    };
    return k;
}

}  // namespace wakesim
