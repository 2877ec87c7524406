#include "workloads/workloads.h"

#include <functional>
#include <map>
#include <stdexcept>

#include "input/json_input.h"

namespace wakesim {

namespace {

constexpr int64_t kMaxLoops = 1000000000;
constexpr int64_t kMaxTime = 3600LL * kNsPerSec;
constexpr int64_t kPipeSharedBytes = 256;      // pipe_inode_info head/tail, wait queue, one buffer line
constexpr int64_t kDefaultFootprintKiB = 16;   // a benchmark task's stack, libc state and kernel structures

CpuSet cpus_from(const JsonNode& n, const Topology& topo) {
    std::vector<int> ids;
    try {
        ids = parse_cpu_list(n.as_string());
    } catch (const std::invalid_argument& e) {
        n.fail(std::string("expected a CPU list like \"0-3,8\": ") + e.what());
    }
    CpuSet s;
    for (int c : ids) {
        if (c >= topo.nr_cpus())
            n.fail("expected CPUs of this machine (0-" + std::to_string(topo.nr_cpus() - 1) + "), got cpu " + std::to_string(c));
        s.set(c);
    }
    return s;
}

// pipe_write + the wake inside it: the wake happens after the copy, then the syscall returns.
struct PipeCosts {
    int64_t write_pre, read_pre, read_post;
};
PipeCosts pipe_costs(const MachineProfile& p) {
    return {p.syscall_ns / 2 + p.pipe_copy_ns, p.syscall_ns, p.syscall_ns / 2 + p.pipe_copy_ns};
}

void add_background(const JsonNode& w, WorkloadBuild& b, const Topology& topo) {
    if (auto hogs = w.get("hogs")) {
        hogs->require_object();
        hogs->check_keys({"count", "cpus", "nice", "policy"});
        const int64_t n = hogs->at("count").as_int(1, 4096);
        TaskSpec spec;
        if (auto c = hogs->get("cpus")) spec.allowed = cpus_from(*c, topo);
        spec.nice = static_cast<int>(hogs->int_or("nice", 0, -20, 19));
        const std::string pol = hogs->has("policy") ? hogs->at("policy").as_enum({"normal", "batch", "idle"}) : "normal";
        spec.policy = pol == "idle" ? SchedPolicy::idle : pol == "batch" ? SchedPolicy::batch : SchedPolicy::normal;
        for (int64_t i = 0; i < n; ++i) {
            ProgramTask t;
            t.spec = spec;
            t.spec.comm = "hog-" + std::to_string(i);
            t.background = true;
            t.code = {Op{Op::loop_begin, 0, 0, 0, 0, 0}, Op{Op::run, kNsPerMs, 0, 0, 0, 0}, Op{Op::loop_end, 0, 0, 0, 0, 0}};
            b.tasks.push_back(std::move(t));
        }
    }
    if (auto noise = w.get("noise")) {
        noise->require_object();
        noise->check_keys({"count", "cpus", "period", "run"});
        const int64_t n = noise->at("count").as_int(1, 4096);
        const int64_t period = noise->at("period").as_duration_ns(1000, kMaxTime);
        const int64_t run = noise->at("run").as_duration_ns(1, kMaxTime);
        if (run >= period) noise->at("run").fail("expected a burst shorter than the period");
        TaskSpec spec;
        if (auto c = noise->get("cpus")) spec.allowed = cpus_from(*c, topo);
        for (int64_t i = 0; i < n; ++i) {
            ProgramTask t;
            t.spec = spec;
            t.spec.comm = "noise-" + std::to_string(i);
            t.background = true;
            t.code = {Op{Op::loop_begin, 0, 0, 0, 0, 0}, Op{Op::run, run, 0, 0, 0, 0}, Op{Op::sleep, period - run, 0, 0, 0, 0},
                      Op{Op::loop_end, 0, 0, 0, 0, 0}};
            b.tasks.push_back(std::move(t));
        }
    }
}

// perf bench sched pipe: two tasks, each writes one word then reads the other pipe.
WorkloadBuild build_pipe(const JsonNode& w, const MachineProfile& prof, const Topology& topo) {
    w.check_keys({"kind", "loops", "cpus", "cpus_b", "work", "footprint", "hogs", "noise"});
    WorkloadBuild b;
    b.kind = "pipe";
    b.op_name = "round trip";
    const int64_t loops = w.int_or("loops", 1000000, 1, kMaxLoops);
    const int64_t work = w.duration_or("work", 0, 0, kMaxTime);
    CpuSet ca, cb;
    if (auto c = w.get("cpus")) ca = cb = cpus_from(*c, topo);
    if (auto c = w.get("cpus_b")) cb = cpus_from(*c, topo);
    const PipeCosts pc = pipe_costs(prof);
    // The pipe's state and buffer line(s): written by one side, read by the other.
    b.channels.push_back({"pipe-ab", 0, pipe_site(SiteRole::request), pipe_site(SiteRole::generic), kPipeSharedBytes});
    b.channels.push_back({"pipe-ba", 0, pipe_site(SiteRole::reply), pipe_site(SiteRole::generic), kPipeSharedBytes});
    const int64_t footprint = w.has("footprint") ? w.at("footprint").as_size_bytes(0, 1LL << 30) / 1024 : kDefaultFootprintKiB;
    ProgramTask a, s;
    a.spec.comm = "sched-pipe-0";
    a.spec.allowed = ca;
    a.spec.role = TaskRole::requester;
    a.spec.pair_id = 1;
    a.spec.footprint_kib = footprint;
    s.spec.comm = "sched-pipe-1";
    s.spec.allowed = cb;
    s.spec.role = TaskRole::server;
    s.spec.pair_id = 1;
    s.spec.footprint_kib = footprint;
    a.code = {Op{Op::loop_begin, 0, 0, static_cast<int32_t>(loops), 0, 0},
              Op{Op::run, pc.write_pre + work, 0, 0, 0, 0},
              Op{Op::post, 0, 0, 0, 0, 0},
              Op{Op::wait, pc.read_pre, pc.read_post, 1, 0, 0},
              Op{Op::count_op, 0, 0, 0, 0, 8},
              Op{Op::loop_end, 0, 0, 0, 0, 0}};
    s.code = {Op{Op::loop_begin, 0, 0, static_cast<int32_t>(loops), 0, 0},
              Op{Op::wait, pc.read_pre, pc.read_post, 0, 0, 0},
              Op{Op::run, pc.write_pre + work, 0, 0, 0, 0},
              Op{Op::post, 0, 0, 1, 0, 0},
              Op{Op::loop_end, 0, 0, 0, 0, 0}};
    b.tasks.push_back(std::move(a));
    b.tasks.push_back(std::move(s));
    b.parent_cpu = ca.empty() ? 0 : ca.first();
    b.total_ops = static_cast<uint64_t>(loops);
    add_background(w, b, topo);
    return b;
}

// perf bench sched messaging (hackbench, pipe mode): per group `fds` senders and `fds` receivers;
// each sender writes `loops` messages to every receiver of its group; a receiver reads them all.
WorkloadBuild build_messaging(const JsonNode& w, const MachineProfile& prof, const Topology& topo) {
    w.check_keys({"kind", "groups", "fds", "loops", "data_size", "cpus", "footprint", "hogs", "noise"});
    WorkloadBuild b;
    b.kind = "messaging";
    b.op_name = "message";
    const int64_t groups = w.int_or("groups", 10, 1, 1000);
    const int64_t fds = w.int_or("fds", 20, 1, 1000);
    const int64_t loops = w.int_or("loops", 100, 1, 10000000);
    const int64_t size = w.int_or("data_size", 100, 1, 65536);
    if (groups * fds * 2 > 100000) w.fail("expected at most 100000 tasks (groups x fds x 2)");
    if (loops * fds > kMaxLoops) w.at("loops").fail("expected loops x fds (messages per receiver) at most 1000000000");
    CpuSet allowed;
    if (auto c = w.get("cpus")) allowed = cpus_from(*c, topo);
    const int64_t footprint = w.has("footprint") ? w.at("footprint").as_size_bytes(0, 1LL << 30) / 1024 : kDefaultFootprintKiB;
    const PipeCosts pc = pipe_costs(prof);
    // Small writes merge into pipe pages: a 64 KiB pipe holds 65536/size messages.
    const int64_t capacity = std::max<int64_t>(1, 65536 / size);
    const int64_t copy = size / 64;  // ns per message copy beyond the base pipe cost
    // Every worker reports ready and waits on the start pipe; one write releases them all
    // (sched-messaging.c ready()/wakefds). Without it the first senders fill every pipe
    // before a receiver has run, and the run starts in a batched state the real one avoids.
    const auto start = static_cast<int32_t>(b.barriers.size());
    b.barriers.push_back(static_cast<int>(groups * fds * 2));
    for (int64_t g = 0; g < groups; ++g) {
        const int first_ch = static_cast<int>(b.channels.size());
        for (int64_t r = 0; r < fds; ++r) {
            std::string name = "g";  // appended piecewise: GCC 12 misreports -Wrestrict on "lit" + string
            name += std::to_string(g);
            name += "-r";
            name += std::to_string(r);
            b.channels.push_back({name, capacity, pipe_site(SiteRole::request), pipe_site(SiteRole::generic), size + 128});
        }
        for (int64_t r = 0; r < fds; ++r) {
            ProgramTask t;
            t.spec.comm = "receiver-" + std::to_string(g) + "-" + std::to_string(r);
            t.spec.allowed = allowed;
            t.spec.role = TaskRole::server;
            t.spec.footprint_kib = footprint;
            t.code = {Op{Op::barrier, 0, 0, start, 0, 0},
                      Op{Op::loop_begin, 0, 0, static_cast<int32_t>(loops * fds), 0, 0},
                      Op{Op::wait, pc.read_pre, pc.read_post + copy, first_ch + static_cast<int32_t>(r), 0, 0},
                      Op{Op::count_op, 0, 0, 0, 0, static_cast<uint32_t>(size)},
                      Op{Op::loop_end, 0, 0, 0, 0, 0}};
            b.tasks.push_back(std::move(t));
        }
        for (int64_t s = 0; s < fds; ++s) {
            ProgramTask t;
            t.spec.comm = "sender-" + std::to_string(g) + "-" + std::to_string(s);
            t.spec.allowed = allowed;
            t.spec.role = TaskRole::requester;
            t.spec.footprint_kib = footprint;
            t.code.push_back(Op{Op::barrier, 0, 0, start, 0, 0});
            t.code.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(loops), 0, 0});
            for (int64_t r = 0; r < fds; ++r) {
                t.code.push_back(Op{Op::run, pc.write_pre + copy, 0, 0, 0, 0});
                t.code.push_back(Op{Op::post, 0, 0, first_ch + static_cast<int32_t>(r), 0, 0});
                t.code.push_back(Op{Op::run, prof.syscall_ns / 2, 0, 0, 0, 0});
            }
            t.code.push_back(Op{Op::loop_end, 0, 0, 0, 0, 0});
            b.tasks.push_back(std::move(t));
        }
    }
    b.parent_cpu = allowed.empty() ? 0 : allowed.first();
    b.total_ops = static_cast<uint64_t>(groups * fds * fds * loops);
    add_background(w, b, topo);
    return b;
}

WakeSite site_from_json(const JsonNode& n, const std::string& default_name) {
    n.require_object();
    n.check_keys({"name", "flags", "sync_capable", "role", "iowait"});
    WakeSite s{n.string_or("name", default_name), 0, n.bool_or("sync_capable", false), SiteRole::generic,
               n.bool_or("iowait", false)};
    if (auto f = n.get("flags")) {
        f->require_array();
        for (size_t i = 0; i < f->size(); ++i) {
            const std::string fl = (*f)[i].as_enum({"WF_SYNC", "WF_CURRENT_CPU"});
            s.kernel_flags |= fl == "WF_SYNC" ? WF_SYNC : WF_CURRENT_CPU;
        }
    }
    if (auto r = n.get("role")) {
        const std::string role = r->as_enum({"generic", "request", "reply"});
        s.role = role == "request" ? SiteRole::request : role == "reply" ? SiteRole::reply : SiteRole::generic;
    }
    return s;
}

// Generic task programs (rt-app's vocabulary).
WorkloadBuild build_program(const JsonNode& w, const Topology& topo) {
    w.check_keys({"kind", "channels", "barriers", "tasks", "parent_cpu", "hogs", "noise"});
    WorkloadBuild b;
    b.kind = "program";
    std::map<std::string, int> chan_ix, barrier_ix, task_ix;
    if (auto chans = w.get("channels")) {
        chans->require_object();
        for (const auto& name : chans->keys()) {
            JsonNode c = chans->at(name);
            c.require_object();
            c.check_keys({"capacity", "wake", "writer_wake", "shared_data"});
            Channel ch;
            ch.name = name;
            ch.capacity = c.int_or("capacity", 0, 0, 1 << 30);
            ch.shared_bytes = c.has("shared_data") ? c.at("shared_data").as_size_bytes(0, 1LL << 30) : 0;
            ch.read_site = c.has("wake") ? site_from_json(c.at("wake"), name) : WakeSite{name, 0, false, SiteRole::generic};
            ch.write_site = c.has("writer_wake") ? site_from_json(c.at("writer_wake"), name) : WakeSite{name, 0, false, SiteRole::generic};
            chan_ix[name] = static_cast<int>(b.channels.size());
            b.channels.push_back(ch);
        }
    }
    if (auto bars = w.get("barriers")) {
        bars->require_object();
        for (const auto& name : bars->keys()) {
            barrier_ix[name] = static_cast<int>(b.barriers.size());
            b.barriers.push_back(static_cast<int>(bars->at(name).as_int(1, 100000)));
        }
    }
    JsonNode tasks = w.at("tasks");
    tasks.require_array();
    if (tasks.size() == 0) tasks.fail("expected at least one task");
    // First pass: names (a task may resume one defined later).
    int total = 0;
    std::vector<std::pair<std::string, int64_t>> names;
    for (size_t i = 0; i < tasks.size(); ++i) {
        JsonNode t = tasks[i];
        t.require_object();
        const std::string name = t.at("name").as_string();
        if (name.empty() || name.find(' ') != std::string::npos) t.at("name").fail("expected a task name without spaces");
        const int64_t count = t.int_or("count", 1, 1, 100000);
        if (task_ix.count(name)) t.at("name").fail("expected a unique task name, \"" + name + "\" is used twice");
        task_ix[name] = total;
        names.emplace_back(name, count);
        total += static_cast<int>(count);
        if (total > 100000) t.fail("expected at most 100000 tasks in all");
    }
    for (size_t i = 0; i < tasks.size(); ++i) {
        JsonNode t = tasks[i];
        t.check_keys({"name", "count", "cpus", "nice", "policy", "role", "kthread", "footprint", "program"});
        TaskSpec spec;
        if (auto f = t.get("footprint")) spec.footprint_kib = f->as_size_bytes(0, 1LL << 30) / 1024;
        if (auto c = t.get("cpus")) spec.allowed = cpus_from(*c, topo);
        spec.nice = static_cast<int>(t.int_or("nice", 0, -20, 19));
        if (auto p = t.get("policy")) {
            const std::string pol = p->as_enum({"normal", "batch", "idle"});
            spec.policy = pol == "idle" ? SchedPolicy::idle : pol == "batch" ? SchedPolicy::batch : SchedPolicy::normal;
        }
        if (auto r = t.get("role")) {
            const std::string role = r->as_enum({"other", "requester", "server"});
            spec.role = role == "requester" ? TaskRole::requester : role == "server" ? TaskRole::server : TaskRole::other;
        }
        spec.per_cpu_kthread = t.bool_or("kthread", false);
        if (spec.per_cpu_kthread && spec.allowed.count() != 1) t.at("kthread").fail("expected a kthread to be pinned to exactly one CPU (\"cpus\": \"N\")");
        std::vector<Op> code;
        JsonNode prog = t.at("program");
        prog.require_array();
        // Steps: {"run": "5us"} {"sleep": "1ms"} {"post": ch} {"wait": ch, "pre": d, "post_cost": d}
        // {"resume": task} {"suspend": true} {"barrier": b} {"op": bytes} {"loop": n, "do": [...]}
        // Returns whether the steps include one that takes simulated time or blocks: a loop
        // without one would spin forever at one instant.
        std::function<bool(const JsonNode&)> steps = [&](const JsonNode& arr) {
            arr.require_array();
            bool waits = false;
            for (size_t k = 0; k < arr.size(); ++k) {
                JsonNode st = arr[k];
                st.require_object();
                if (st.has("run")) {
                    st.check_keys({"run"});
                    waits = true;
                    code.push_back(Op{Op::run, st.at("run").as_duration_ns(1, kMaxTime), 0, 0, 0, 0});
                } else if (st.has("sleep")) {
                    st.check_keys({"sleep"});
                    waits = true;
                    code.push_back(Op{Op::sleep, st.at("sleep").as_duration_ns(1, kMaxTime), 0, 0, 0, 0});
                } else if (st.has("post")) {
                    st.check_keys({"post"});
                    JsonNode c = st.at("post");
                    const std::string cn = c.as_string();
                    if (!chan_ix.count(cn)) {
                        std::vector<std::string> known;
                        for (auto& kv : chan_ix) known.push_back(kv.first);
                        c.as_enum(known);
                    }
                    code.push_back(Op{Op::post, 0, 0, chan_ix[cn], 0, 0});
                } else if (st.has("wait")) {
                    st.check_keys({"wait", "pre", "after"});
                    waits = true;
                    JsonNode c = st.at("wait");
                    const std::string cn = c.as_string();
                    if (!chan_ix.count(cn)) {
                        std::vector<std::string> known;
                        for (auto& kv : chan_ix) known.push_back(kv.first);
                        c.as_enum(known);
                    }
                    code.push_back(Op{Op::wait, st.duration_or("pre", 0, 0, kMaxTime), st.duration_or("after", 0, 0, kMaxTime), chan_ix[cn], 0, 0});
                } else if (st.has("resume")) {
                    st.check_keys({"resume"});
                    JsonNode c = st.at("resume");
                    std::vector<std::string> known;
                    for (auto& kv : task_ix) known.push_back(kv.first);
                    const std::string tn = c.as_enum(known);
                    code.push_back(Op{Op::resume, 0, 0, task_ix[tn], 0, 0});
                } else if (st.has("suspend")) {
                    st.check_keys({"suspend"});
                    if (!st.at("suspend").as_bool()) st.at("suspend").fail("expected true (a step that suspends the task)");
                    waits = true;
                    code.push_back(Op{Op::suspend, 0, 0, 0, 0, 0});
                } else if (st.has("barrier")) {
                    st.check_keys({"barrier"});
                    waits = true;
                    JsonNode c = st.at("barrier");
                    std::vector<std::string> known;
                    for (auto& kv : barrier_ix) known.push_back(kv.first);
                    const std::string bn = c.as_enum(known);
                    code.push_back(Op{Op::barrier, 0, 0, barrier_ix[bn], 0, 0});
                } else if (st.has("op")) {
                    st.check_keys({"op"});
                    code.push_back(Op{Op::count_op, 0, 0, 0, 0, static_cast<uint32_t>(st.at("op").as_int(0, 1 << 30))});
                } else if (st.has("loop")) {
                    st.check_keys({"loop", "do"});
                    const int64_t n = st.at("loop").as_int(0, kMaxLoops);
                    const size_t begin = code.size();
                    code.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(n), 0, 0});
                    if (!steps(st.at("do")))
                        st.at("do").fail("expected a loop body with a step that takes time or blocks (run, sleep, wait, "
                                         "suspend or barrier); this loop would spin without simulated time passing");
                    waits = true;
                    code.push_back(Op{Op::loop_end, 0, 0, 0, static_cast<int32_t>(begin), 0});
                } else {
                    st.fail("expected a step with one of: run, sleep, post, wait, resume, suspend, barrier, op, loop");
                }
            }
            return waits;
        };
        steps(prog);
        for (int64_t k = 0; k < names[i].second; ++k) {
            ProgramTask pt;
            pt.spec = spec;
            pt.spec.comm = names[i].second > 1 ? names[i].first + "-" + std::to_string(k) : names[i].first;
            pt.code = code;
            b.tasks.push_back(std::move(pt));
        }
    }
    b.parent_cpu = static_cast<int>(w.int_or("parent_cpu", 0, 0, topo.nr_cpus() - 1));
    add_background(w, b, topo);
    return b;
}

}  // namespace

WakeSite pipe_site(SiteRole role) { return WakeSite{"pipe", WF_SYNC, true, role}; }

std::vector<WorkloadInfo> workload_kinds() {
    return {{"pipe", "perf bench sched pipe: two tasks ping-pong one word over two pipes (WF_SYNC wakes)"},
            {"messaging", "perf bench sched messaging / hackbench: groups of senders and receivers over pipes"},
            {"program", "task programs in rt-app's vocabulary: run, sleep, post/wait, resume/suspend, barrier, loop"}};
}

WorkloadBuild build_workload(const JsonNode& w, const MachineProfile& prof, const Topology& topo) {
    w.require_object();
    const std::string kind = w.at("kind").as_enum({"pipe", "messaging", "program"});
    if (kind == "pipe") return build_pipe(w, prof, topo);
    if (kind == "messaging") return build_messaging(w, prof, topo);
    return build_program(w, topo);
}

}  // namespace wakesim
