#include "workloads/fuse/fuse_ops.h"

#include "input/json_input.h"
#include "workloads/fuse/fuse_conn.h"
#include "workloads/kind.h"

namespace wakesim {

namespace {

struct OpInfo {
    FuseOp op;
    const char* name;  // the kernel's opcode name
    const char* step;  // as a program step names it
    FuseSend send;
};

// fs/fuse: which path each request takes (dir.c, file.c, inode.c).
constexpr std::array<OpInfo, kNrFuseOps> kOps = {{
    {FuseOp::conn_read, "READ", "", FuseSend::sync},
    {FuseOp::lookup, "LOOKUP", "lookup", FuseSend::sync},
    {FuseOp::create, "CREATE", "create", FuseSend::sync},
    {FuseOp::open, "OPEN", "open", FuseSend::sync},
    {FuseOp::getattr, "GETATTR", "getattr", FuseSend::sync},
    {FuseOp::setattr, "SETATTR", "setattr", FuseSend::sync},
    {FuseOp::getxattr, "GETXATTR", "getxattr", FuseSend::sync},
    {FuseOp::flush, "FLUSH", "flush", FuseSend::sync},
    // fuse_release -> fuse_file_put(sync = false): a background request for a regular file.
    {FuseOp::release, "RELEASE", "release", FuseSend::background},
    {FuseOp::unlink, "UNLINK", "unlink", FuseSend::sync},
    {FuseOp::read, "READ", "read", FuseSend::sync},
    {FuseOp::write, "WRITE", "write", FuseSend::sync},
    // fuse_evict_inode -> fuse_queue_forget: fiq->ops->send_forget, /dev/fuse even with io-uring.
    {FuseOp::forget, "FORGET", "forget", FuseSend::forget},
    // A dirty page cache page written back at close() or fsync() (writeback cache): a WRITE sent
    // as fuse_send_writepage does, then waited for.
    {FuseOp::writeback, "WRITE", "writeback", FuseSend::writeback},
}};

const OpInfo& info(FuseOp op) { return kOps[static_cast<size_t>(op)]; }

// The per-opcode server parameters, in FuseOp order from lookup.
constexpr std::array<const char*, kNrFuseOps> kServerParam = {
    "", "server_lookup", "server_create", "server_open", "server_getattr", "server_setattr", "server_getxattr",
    "server_flush", "server_release", "server_unlink", "server_read", "server_write", "server_forget",
    "server_write"};

}  // namespace

const char* fuse_op_name(FuseOp op) { return info(op).name; }

std::optional<FuseOp> fuse_op_from_step(std::string_view name) {
    for (const OpInfo& i : kOps)
        if (i.op != FuseOp::conn_read && name == i.step) return i.op;
    return std::nullopt;
}

std::vector<std::string> fuse_op_step_names() {
    std::vector<std::string> out;
    for (const OpInfo& i : kOps)
        if (i.op != FuseOp::conn_read) out.emplace_back(i.step);
    return out;
}

FuseSend fuse_op_send(FuseOp op) { return info(op).send; }

bool fuse_op_has_data(FuseOp op) {
    return op == FuseOp::read || op == FuseOp::write || op == FuseOp::writeback || op == FuseOp::conn_read;
}

int64_t FuseOpCosts::work(FuseOp op, int64_t bytes) const {
    return server[static_cast<size_t>(op)] + (fuse_op_has_data(op) ? 2 * bytes * copy_per_kib / 1024 : 0);
}

const std::vector<LeftOutSetting>& fuse_left_out() {
    static const std::vector<LeftOutSetting> l = {
        {"clone_fd",
         "libfuse's clone_fd gives each /dev/fuse worker its own cloned fd (FUSE_DEV_IOC_CLONE), but every clone "
         "reads the connection's one input queue and sleeps on its one wait queue (fuse_dev_do_read()), so it "
         "changes no wakeup and the model runs the same with or without it"},
    };
    return l;
}

const ParamTable& fuse_conn_params() {
    // The transport's keys and defaults are fio's (workloads/fio.cpp); a test checks they agree.
    static const ParamTable t = {
        {.name = "transport", .type = ParamType::choice, .default_value = "dev", .choices = {"dev", "io_uring"},
         .help = "`dev`: /dev/fuse with a pool of libfuse worker threads; `io_uring`: fuse-over-io-uring "
                 "(passthrough_hp `-o io_uring`), one ring thread per queue pinned to the queue's CPU, and the "
                 "/dev/fuse workers left for FORGET"},
        {.name = "max_threads", .type = ParamType::integer, .default_value = "10", .min = 1, .max = 1024,
         .help = "libfuse's /dev/fuse worker pool limit (passthrough_hp `--num-threads`; libfuse's default 10). The "
                 "multi-threaded loop starts one worker; the last idle worker that takes a request first starts "
                 "another (`fuse_do_work`), so one synchronous stream settles at two unless a race grows it. In "
                 "io-uring mode the pool only receives FORGETs, which the kernel still queues on /dev/fuse"},
        {.name = "max_idle_threads", .type = ParamType::integer, .default_value = "-1", .min = -1, .max = 1024,
         .help = "idle /dev/fuse workers above this exit after their request (`-o max_idle_threads`); -1: never "
                 "(libfuse's default). An exited worker's slot is reused by the next spawn"},
        {.name = "spawn_cost", .type = ParamType::duration, .default_value = "25us", .min = 0, .max = kMaxTime,
         .help = "pthread_create of a new worker, charged to the worker that starts it; the new thread is "
                 "runnable when it ends (estimate, 20-50 us)"},
        {.name = "teardown_watchdog", .type = ParamType::boolean, .default_value = "false",
         .help = "libfuse's teardown watchdog thread (\"fuse lowlevel: Add a teardown watchdog feature\", libfuse, "
                 "Dec 2025; passthrough_hp starts it): it polls the device fd, so every request or FORGET queued on "
                 "/dev/fuse also wakes it (a non-exclusive waiter on fiq->waitq). Off for libfuse before 3.18"},
        {.name = "watchdog_work", .type = ParamType::duration, .default_value = "700ns", .min = 0, .max = kMaxTime,
         .help = "the watchdog's re-poll after a wake before it sleeps again, besides poll()'s return and re-entry "
                 "(the machine's `syscall`) (estimate, 800 ns with them)"},
        {.name = "nr_queues", .type = ParamType::integer, .min = 1, .max = kMaxCpus,
         .help = "`io_uring`: number of queues (`-o io_uring_nr_qs`, reduced-queues series): spread over the NUMA "
                 "nodes round-robin, the lowest-numbered CPUs of each node first",
         .absent_means = "one queue per CPU (mainline)", .aka = {"nr_qs", "io_uring_nr_qs"}},
        {.name = "queue_cpus", .type = ParamType::cpulist,
         .help = "`io_uring`: the queues' CPUs (`-o io_uring_q_mask`); not with `nr_queues`. A request submitted "
                 "on a CPU without a queue uses queue (cpu + 1) mod n of the n queues of its node",
         .absent_means = "see `nr_queues`", .aka = {"q_mask", "io_uring_q_mask"}},
        {.name = "max_background", .type = ParamType::integer, .default_value = "12", .min = 1, .max = 65535,
         .help = "the connection's `max_background` (FUSE_DEFAULT_MAX_BACKGROUND 12; the server may raise it in its "
                 "INIT reply): background requests beyond it wait in fc->bg_queue (/dev/fuse) or the queue's "
                 "background list (io-uring), and the next background submitter sleeps on fc->blocked_waitq"},
        {.name = "congestion_threshold", .type = ParamType::integer, .default_value = "9", .min = 1, .max = 65535,
         .help = "the connection's `congestion_threshold` (default 3/4 of max_background): only counted "
                 "(it makes readahead and writeback back off, which are not modelled; direct I/O ignores it)"},
        {.name = "uring_iowait", .type = ParamType::boolean, .default_value = "true",
         .help = "a task waiting in io_uring's CQ wait with requests in flight is in I/O wait, so waking it gives its "
                 "CPU schedutil's iowait boost: a ring thread waiting for its next FUSE request, and fio's "
                 "`io_uring` engine waiting for completions (`io_cqring_wait_schedule`: \"io_uring: Use "
                 "io_schedule* in cqring wait\" and \"io_uring: gate iowait schedule on having pending requests\", "
                 "Axboe, Linux 6.5, Jul 2023). false: kernels before 6.5"},
        {.name = "writeback_iowait", .type = ParamType::boolean, .default_value = "true",
         .help = "a writer waiting for its dirty page's WRITE (a `writeback` request: bonnie++'s byte at close) "
                 "sleeps in `folio_wait_writeback()`, an I/O wait, so the WRITE's end gives its CPU schedutil's "
                 "iowait boost (\"fuse: remove tmp folio for writebacks and internal rb tree\", Koong, 2025). "
                 "false: before it, the writer waits in `fuse_sync_writes()` on the inode's `page_waitq`, "
                 "not an I/O wait"},
        {.name = "app_submit", .type = ParamType::duration, .default_value = "1150ns", .min = 0, .max = kMaxTime,
         .help = "per request, the requester: VFS, request allocation and queueing. The system call's entry, half "
                 "the machine's `syscall`, comes before the first request a call sends (estimate, 1.2 us with it "
                 "at 100 ns)"},
        {.name = "app_complete", .type = ParamType::duration, .default_value = "250ns", .min = 0, .max = kMaxTime,
         .help = "per synchronous request, the requester after the reply wake: teardown. The system call's exit, "
                 "the other half of `syscall`, follows the last request a call sends (estimate, 300 ns with it "
                 "at 100 ns)"},
        {.name = "dev_read", .type = ParamType::duration, .default_value = "1450ns", .min = 0, .max = kMaxTime,
         .help = "`dev`: the worker's splice + read of a request and its header copy, after read()'s return (half "
                 "the machine's `syscall`) (estimate, 1.5 us with it at 100 ns)"},
        {.name = "dev_write", .type = ParamType::duration, .default_value = "1150ns", .min = 0, .max = kMaxTime,
         .help = "`dev`: the worker's writev of the reply up to fuse_request_end, after writev()'s entry (half "
                 "`syscall`) (estimate, 1.2 us with it at 100 ns)"},
        {.name = "writev_return", .type = ParamType::duration, .default_value = "250ns", .min = 0,
         .max = kMaxTime,
         .help = "`dev`: the worker from the reply's wake to libfuse marking it idle again (`numavail++`): "
                 "the buffer release and writev's exit (half `syscall`, added), counted inside the system call "
                 "(under preempt=none a requester woken onto this CPU runs after it) (estimate, 300 ns with the "
                 "exit at 50 ns)"},
        {.name = "loop_tail", .type = ParamType::duration, .default_value = "1650ns", .min = 0, .max = kMaxTime,
         .help = "`dev`: the worker from `numavail++` to its sleep in the next read: libfuse accounting, then "
                 "read()'s entry (half `syscall`, added) (estimate, 1.7 us with the entry at 50 ns; with "
                 "`writev_return`, 2-3 us)"},
        {.name = "uring_task_work", .type = ParamType::duration, .default_value = "700ns", .min = 0,
         .max = kMaxTime, .help = "`io_uring`: the ring thread's task work: request copy-in and CQE (estimate)"},
        {.name = "uring_commit", .type = ParamType::duration, .default_value = "800ns", .min = 0, .max = kMaxTime,
         .help = "`io_uring`: COMMIT_AND_FETCH up to fuse_request_end (estimate)"},
        {.name = "uring_q_depth", .type = ParamType::integer, .default_value = "8", .min = 1, .max = 65536,
         .help = "`io_uring`: ring entries per queue (libfuse's `-o io_uring_q_depth`, default 8): the kernel "
                 "dispatches a request to the ring thread only on a free entry (fuse_uring_dispatch_ent); the rest "
                 "wait in the queue's fuse_req_queue, and each COMMIT_AND_FETCH binds the next one to the entry it "
                 "frees, so a round holds at most this many requests"},
        {.name = "uring_reply_batch", .type = ParamType::boolean, .default_value = "true",
         .help = "`io_uring`: the ring thread handles all the CQEs it finds (the requests dispatched to it since it "
                 "last looked) before it sends any reply; the batch's COMMIT_AND_FETCHes go to the kernel together "
                 "at its next io_uring_enter, so the first requester is woken only when the whole batch has been "
                 "served (libfuse 3.18: \"fuse-io-uring: Add a lock around io_uring_submit / "
                 "io_uring_submit_and_wait\", Dec 2025, and \"fuse_uring: restore inline-reply batching\", Jun "
                 "2026). false: one io_uring_submit per reply, as libfuse's development branch did before Dec 2025 "
                 "(3.17 has no io-uring; 3.18.0 already batches)"},
        {.name = "uring_enter_tail", .type = ParamType::duration, .default_value = "1500ns", .min = 0,
         .max = kMaxTime,
         .help = "`io_uring`: the ring thread from the reply to its sleep in the CQ wait (estimate). Each round "
                 "of the ring thread is one io_uring_enter (io_uring_submit_and_wait): its return and the next "
                 "one's entry cost the machine's `syscall` besides"},
        {.name = "copy_per_kib", .type = ParamType::duration, .default_value = "80ns", .min = 0, .max = kMaxTime,
         .help = "one copy of 1 KiB of READ or WRITE data; each such request copies its bytes twice (estimate)"},
        {.name = "server_lookup", .type = ParamType::duration, .default_value = "2us", .min = 0, .max = kMaxTime,
         .help = "LOOKUP in passthrough_hp (`sfs_lookup`): openat(O_PATH) + fstatat and the inode table, or a "
                 "failing openat for a negative entry; libfuse decode and reply included (estimate)"},
        {.name = "server_create", .type = ParamType::duration, .default_value = "5us", .min = 0, .max = kMaxTime,
         .help = "CREATE (`sfs_create`): openat(O_CREAT) on tmpfs, then the new entry's openat(O_PATH) + fstatat "
                 "and inode table insert (estimate)"},
        {.name = "server_open", .type = ParamType::duration, .default_value = "3us", .min = 0, .max = kMaxTime,
         .help = "OPEN (`sfs_open`): openat of /proc/self/fd/N, a procfs walk (estimate)"},
        {.name = "server_getattr", .type = ParamType::duration, .default_value = "1us", .min = 0, .max = kMaxTime,
         .help = "GETATTR (`sfs_getattr`): fstatat(AT_EMPTY_PATH) (estimate)"},
        {.name = "server_setattr", .type = ParamType::duration, .default_value = "2us", .min = 0, .max = kMaxTime,
         .help = "SETATTR (`do_setattr`): utimensat or ftruncate, then fstatat for the reply (estimate)"},
        {.name = "server_getxattr", .type = ParamType::duration, .default_value = "2500ns", .min = 0,
         .max = kMaxTime,
         .help = "GETXATTR (`sfs_getxattr`): getxattr on /proc/self/fd/N (security.capability, ENODATA on "
                 "tmpfs) (estimate)"},
        {.name = "server_flush", .type = ParamType::duration, .default_value = "1us", .min = 0, .max = kMaxTime,
         .help = "FLUSH (`sfs_flush`): close(dup(fd)) (estimate)"},
        {.name = "server_release", .type = ParamType::duration, .default_value = "1us", .min = 0, .max = kMaxTime,
         .help = "RELEASE (`sfs_release`): close(fd) (estimate)"},
        {.name = "server_unlink", .type = ParamType::duration, .default_value = "4us", .min = 0, .max = kMaxTime,
         .help = "UNLINK (`sfs_unlink`): a lookup of the name (openat(O_PATH) + fstatat) to drop the inode's fd, "
                 "then unlinkat (estimate)"},
        {.name = "server_read", .type = ParamType::duration, .default_value = "1500ns", .min = 0, .max = kMaxTime,
         .help = "READ (`sfs_read`): libfuse decode and pread on tmpfs, without the data copies (estimate)"},
        {.name = "server_write", .type = ParamType::duration, .default_value = "1500ns", .min = 0, .max = kMaxTime,
         .help = "WRITE (`sfs_write_buf`): pwrite on tmpfs, without the data copies (estimate)"},
        {.name = "server_forget", .type = ParamType::duration, .default_value = "500ns", .min = 0, .max = kMaxTime,
         .help = "one FORGET (`sfs_forget`): drop lookups, erase the inode and close its O_PATH fd (estimate); a "
                 "worker takes all queued FORGETs in one read (BATCH_FORGET)"},
        {.name = "server_footprint", .type = ParamType::size, .default_value = "16KiB", .min = 0, .max = 1LL << 30,
         .help = "each worker's or ring thread's working set"},
    };
    return t;
}

FuseConnSpec read_fuse_conn(const JsonNode& obj, const ParamValues& p, const Topology& topo, const MachineProfile& prof) {
    FuseConnSpec s;
    FuseConnDef d;
    const bool uring = p.choice("transport") == "io_uring";
    d.transport = uring ? FuseTransport::uring : FuseTransport::dev;
    InputErrorCollector errors;  // every mistake of the queue options, each on its own line
    if (!uring) {
        for (const char* k : {"nr_queues", "queue_cpus"})
            if (p.given(k)) errors.attempt([&] { obj.at(k).fail("expected no queue option with transport \"dev\""); });
        // The ring's own settings would be ignored: said, not dropped (its costs may stay, for cases
        // that switch the transport).
        for (const char* k : {"uring_q_depth", "uring_reply_batch"})
            if (p.given(k))
                errors.attempt([&] { obj.at(k).fail("expected no io-uring ring option with transport \"dev\": it has no rings"); });
    }
    if (uring) {
        if (p.given("nr_queues") && p.given("queue_cpus"))
            errors.attempt([&] { obj.at("queue_cpus").fail("expected either nr_queues or queue_cpus, not both"); });
        if (p.given("queue_cpus")) {
            errors.attempt([&] { read_cpus(obj, p, "queue_cpus", topo).for_each([&](int c) { d.queue_cpu.push_back(c); }); });
        } else if (p.given("nr_queues")) {
            errors.attempt([&] {
                if (p.integer("nr_queues") > topo.nr_cpus())
                    obj.at("nr_queues").fail("expected at most one queue per CPU (" + std::to_string(topo.nr_cpus()) +
                                             "), got " + std::to_string(p.integer("nr_queues")));
                d.queue_cpu = fuse_spread_queues(p.integer("nr_queues"), topo);
            });
        } else {
            for (int c = 0; c < topo.nr_cpus(); ++c) d.queue_cpu.push_back(c);
        }
        errors.finish();
        d.queue_of_cpu = fuse_queue_map(d.queue_cpu, topo);
    }
    errors.finish();
    d.max_threads = static_cast<int>(p.integer("max_threads"));
    d.max_idle_threads = static_cast<int>(p.integer("max_idle_threads"));
    d.watchdog = p.boolean("teardown_watchdog");
    d.uring_iowait = p.boolean("uring_iowait");
    d.writeback_iowait = p.boolean("writeback_iowait");
    d.uring_reply_batch = p.boolean("uring_reply_batch");
    d.uring_q_depth = static_cast<int>(p.integer("uring_q_depth"));
    d.max_background = static_cast<int>(p.integer("max_background"));
    d.congestion_threshold = static_cast<int>(p.integer("congestion_threshold"));
    FuseCosts& c = d.costs;
    c.syscall = prof.syscall_ns;
    c.syscall_entry = c.syscall / 2;
    c.syscall_exit = c.syscall - c.syscall_entry;
    c.app_submit = p.duration_ns("app_submit");
    c.app_complete = p.duration_ns("app_complete");
    c.dev_read = p.duration_ns("dev_read");
    c.dev_write = p.duration_ns("dev_write");
    c.writev_return = p.duration_ns("writev_return");
    c.loop_tail = p.duration_ns("loop_tail");
    c.spawn = p.duration_ns("spawn_cost");
    c.watchdog = p.duration_ns("watchdog_work");
    c.uring_task_work = p.duration_ns("uring_task_work");
    c.uring_commit = p.duration_ns("uring_commit");
    c.uring_enter_tail = p.duration_ns("uring_enter_tail");
    c.shared_bytes = 256;
    s.ops.copy_per_kib = p.duration_ns("copy_per_kib");
    for (size_t i = 1; i < kNrFuseOps; ++i) s.ops.server[i] = p.duration_ns(kServerParam[i]);
    // The connection's default READ (fio's) costs as an explicit 4 KiB READ would.
    c.server_work = s.ops.work(FuseOp::read, 4096);
    s.ops.server[0] = c.server_work;
    s.server_footprint_kib = p.size_bytes("server_footprint") / 1024;
    s.def = std::make_shared<const FuseConnDef>(std::move(d));
    return s;
}

std::vector<int> fuse_spread_queues(int64_t n, const Topology& topo) {
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
std::vector<int> fuse_queue_map(const std::vector<int>& queue_cpu, const Topology& topo) {
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

void add_fuse_servers(WorkloadBuild& b, int channel, const FuseConnSpec& conn, const std::string& prefix) {
    auto server = [&](std::string comm, CpuSet allowed, Op op, bool deferred = false) {
        ProgramTask t;
        t.spec.comm = std::move(comm);
        t.spec.allowed = allowed;
        t.spec.role = TaskRole::server;
        t.spec.pair_id = 1;
        t.spec.footprint_kib = conn.server_footprint_kib;
        t.code = {op};
        t.background = true;  // serves forever; the run ends with the requesters
        t.deferred = deferred;
        t.spec.long_idle = !deferred;  // up since the mount, idle until the client starts
        b.tasks.push_back(std::move(t));
    };
    // fuse_session_loop_mt starts one worker; the others are created as the pool grows.
    for (int i = 0; i < conn.def->max_threads; ++i)
        server(prefix + "-worker-" + std::to_string(i), CpuSet{}, Op{Op::fuse_worker, 0, 0, channel, 0, 0}, i > 0);
    if (conn.def->watchdog) server("passthrough_hp", CpuSet{}, Op{Op::fuse_watchdog, 0, 0, channel, 0, 0});
    if (conn.def->transport == FuseTransport::uring) {
        for (size_t q = 0; q < conn.def->queue_cpu.size(); ++q) {
            CpuSet pin;
            pin.set(conn.def->queue_cpu[q]);
            server(prefix + "-ring-" + std::to_string(conn.def->queue_cpu[q]), pin,
                   Op{Op::fuse_ring, 0, 0, channel, static_cast<int32_t>(q), 0});
        }
    }
}

}  // namespace wakesim
