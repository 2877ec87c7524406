// bonnie++'s file-creation test (`bonnie++ -s0 -n N:max:min:dirs`, one process) through a FUSE
// filesystem served by libfuse's passthrough_hp (--nopassthrough, on tmpfs): sequential create,
// stat ("read") and delete of small files. Each file operation is the sequence of FUSE requests
// Linux sends for it (docs/fuse.md, "bonnie++"), over /dev/fuse or fuse-over-io-uring.
#include <string>

#include "workloads/kind.h"

namespace wakesim {

namespace {

const ParamTable& bonnie_params() {
    static const ParamTable t = [] {
        ParamTable own = {
            {.name = "files", .type = ParamType::integer, .default_value = "20480", .min = 1, .max = kMaxLoops,
             .help = "files of the test: `-n N` makes N x 1024"},
            {.name = "file_size", .type = ParamType::size, .default_value = "1B", .min = 0, .max = 4096,
             .help = "bytes written to each file (`-n N:max:min` with max = min; `-n 20:1:1:20` writes one byte). "
                     "0: creat() + close() only, and the stat phase sends no request"},
            {.name = "phase", .type = ParamType::choice, .default_value = "create",
             .choices = {"create", "stat", "delete"},
             .help = "the phase run and reported: `create` (creates/s), `stat` (bonnie's sequential \"read\": "
                     "stat, and open + read + close when the file has data) or `delete` (unlink). The model keeps no "
                     "file state, so a phase runs alone"},
            {.name = "cpus", .type = ParamType::cpulist,
             .help = "bonnie++'s allowed CPUs (`numactl --physcpubind`); the first is also the CPU it is forked from",
             .absent_means = "all CPUs"},
            {.name = "app_create", .type = ParamType::duration, .default_value = "3us", .min = 0, .max = kMaxTime,
             .help = "per create, bonnie++ and the syscalls' own work besides the FUSE requests and the calls' entry "
                     "and exit (the machine's `syscall` for creat, write and close): name formatting, path walk, "
                     "open, write into the page cache, close (estimate)"},
            {.name = "app_stat", .type = ParamType::duration, .default_value = "2us", .min = 0, .max = kMaxTime,
             .help = "per file of the stat phase: readdir share and stat from the attribute cache, and open + "
                     "read(page cache) + close when the file has data, besides the FUSE requests and the calls' "
                     "entry and exit (the machine's `syscall`) (estimate)"},
            {.name = "app_delete", .type = ParamType::duration, .default_value = "2us", .min = 0, .max = kMaxTime,
             .help = "per delete: readdir share, path walk and unlink besides the FUSE requests and unlink's entry "
                     "and exit (the machine's `syscall`) (estimate)"},
            {.name = "footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
             .help = "bonnie++'s working set, refilled after it runs elsewhere"},
        };
        const ParamTable& conn = fuse_conn_params();
        own.insert(own.end(), conn.begin(), conn.end());
        const ParamTable& groups = fuse_group_params();
        own.insert(own.end(), groups.begin(), groups.end());
        return own;
    }();
    return t;
}

struct BonnieSpec {
    int64_t files = 0, file_size = 0;
    std::string phase;
    CpuSet cpus;
    FuseGroups groups;
    int64_t app_work = 0;
    int64_t footprint_kib = 0;
    FuseConnSpec conn;
};

BonnieSpec read_bonnie(const WorkloadInput& in) {
    const ParamValues& p = in.params;
    BonnieSpec s;
    s.files = p.integer("files");
    s.file_size = p.size_bytes("file_size");
    s.phase = p.choice("phase");
    InputErrorCollector errors;  // the CPU list's and the connection's mistakes together
    errors.attempt([&] { s.cpus = read_cpus(in.json, p, "cpus", in.topo); });
    s.app_work = p.duration_ns("app_" + s.phase);
    s.footprint_kib = p.size_bytes("footprint") / 1024;
    errors.attempt([&] { s.conn = read_fuse_conn(in.json, p, in.topo, in.profile); });
    errors.attempt([&] { s.groups = read_fuse_groups(in.json, p, in.groups, in.topo, s.cpus); });
    errors.finish();
    return s;
}

// The requests of one file operation, in the order Linux 6.18 sends them to passthrough_hp
// (default entry/attr timeouts, writeback cache; traced with libfuse's debug output).
// Each with its place in its system call (Op::kSyscallEntry, kSyscallExit: the first and last
// request a call sends).
struct FileRequest {
    FuseOp op;
    uint8_t sys;
};
constexpr uint8_t kEntry = Op::kSyscallEntry, kExit = Op::kSyscallExit, kOwn = Op::kOwnSyscall;
std::vector<FileRequest> file_requests(const std::string& phase, int64_t size) {
    if (phase == "create") {
        // creat(): fuse_permission(dir): its attributes were invalidated by the previous create
        // (GETATTR); fuse_atomic_open: fuse_lookup (negative) then fuse_create_open (CREATE, opens too).
        std::vector<FileRequest> r = {{FuseOp::getattr, kEntry}, {FuseOp::lookup, 0}, {FuseOp::create, kExit}};
        // write(): file_remove_privs asks for security.capability; close(): fuse_flush writes the
        // dirty page back (write_inode_now: a background WRITE, waited for) before the FLUSH.
        if (size > 0) r.insert(r.end(), {{FuseOp::getxattr, kOwn}, {FuseOp::writeback, kEntry}, {FuseOp::flush, 0}});
        else r.push_back({FuseOp::flush, kEntry});
        // fuse_release -> fuse_file_put(sync = false): RELEASE in the background.
        r.push_back({FuseOp::release, kExit});
        return r;
    }
    if (phase == "stat") {
        // stat() is answered from the attributes READDIRPLUS cached; a file with data is opened,
        // read from the page cache and closed.
        if (size > 0) return {{FuseOp::open, kOwn}, {FuseOp::flush, kEntry}, {FuseOp::release, kExit}};
        return {};
    }
    // unlink(): GETATTR of the directory, UNLINK; the final iput writes the inode's times back
    // (SETATTR) and evicts it: fuse_evict_inode queues the FORGET.
    return {{FuseOp::getattr, kEntry}, {FuseOp::unlink, 0}, {FuseOp::setattr, 0}, {FuseOp::forget, kExit}};
}

// The system calls of a file operation that send no request: stat(), and read() from the page
// cache in the stat phase of files with data.
int64_t calls_without_requests(const std::string& phase, int64_t size) {
    if (phase == "stat") return size > 0 ? 2 : 1;
    return 0;
}

// The server's threads first (passthrough_hp runs before bonnie++ starts), then bonnie++.
WorkloadBuild build_bonnie(const BonnieSpec& s) {
    WorkloadBuild b;
    b.kind = "bonnie";
    b.op_name = s.phase;
    const bool uring = s.conn.def->transport == FuseTransport::uring;
    Channel conn{"fuse", 0, fuse_request_end_site(uring), fuse_queue_request_site(), 0};
    conn.fuse = s.conn.def;
    b.channels.push_back(std::move(conn));
    add_fuse_servers(b, 0, s.conn, "fuse");

    ProgramTask t;
    t.spec.comm = "bonnie++";
    t.spec.allowed = s.cpus;
    t.spec.role = TaskRole::requester;
    t.spec.pair_id = 1;
    t.spec.footprint_kib = s.footprint_kib;
    t.code.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.files), 0, 0});
    const int64_t app = s.app_work + calls_without_requests(s.phase, s.file_size) * s.conn.def->costs.syscall;
    if (app > 0) t.code.push_back(Op{Op::run, app, 0, 0, 0, 0});
    for (const FileRequest& r : file_requests(s.phase, s.file_size)) {
        Op req{Op::fuse_request, s.conn.ops.work(r.op, s.file_size), 0, 0, static_cast<int32_t>(r.op), 0};
        req.sub = r.sys;
        t.code.push_back(req);
    }
    t.code.push_back(Op{Op::count_op, 0, 0, 0, 0, 0});
    t.code.push_back(Op{Op::loop_end, 0, 0, 0, 0, 0});
    b.tasks.push_back(std::move(t));
    b.parent_cpu = s.cpus.empty() ? 0 : s.cpus.first();
    apply_fuse_groups(s.groups, b);
    b.total_ops = static_cast<uint64_t>(s.files);
    return b;
}

WorkloadBuild make_bonnie(const WorkloadInput& in) {
    const BonnieSpec s = read_bonnie(in);
    if (s.phase == "stat" && s.file_size == 0 && s.app_work == 0)
        in.json.at("phase").fail("expected file_size > 0 or app_stat > 0: a stat phase of empty files sends no FUSE "
                                 "request and would take no time");
    return build_bonnie(s);
}

}  // namespace

const WorkloadKind& bonnie_workload() {
    static const WorkloadKind k{
        .kind = "bonnie",
        .description = "bonnie++ -s0 -n: create, stat or delete of small files through FUSE (passthrough_hp on tmpfs)",
        .params = bonnie_params(),
        .keys = {},
        .sections = {},
        .build = make_bonnie,
        .left_out = fuse_left_out(),
    };
    return k;
}

}  // namespace wakesim
