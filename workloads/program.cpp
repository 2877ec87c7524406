// Task programs in rt-app's vocabulary (https://github.com/scheduler-tools/rt-app): tasks run,
// sleep, post to and wait on channels, resume and suspend each other, meet at barriers and loop.
// The JSON is read into a ProgramSpec (names resolved, every value checked), which is then compiled
// into the Op code that workloads/program/task_program.h interprets.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "workloads/kind.h"

namespace wakesim {

namespace {

constexpr int64_t kMaxTasks = 100000;

const ParamTable& program_params() {
    static const ParamTable t = {
        // No declared range: the range is the machine's CPUs, checked by read_program.
        {.name = "parent_cpu", .type = ParamType::integer, .default_value = "0",
         .help = "the CPU all tasks are forked from: a CPU of the machine, 0 to its number of CPUs − 1"},
    };
    return t;
}

const ParamTable& channel_params() {
    static const ParamTable t = {
        {.name = "capacity", .type = ParamType::integer, .default_value = "0", .min = 0, .max = 1 << 30,
         .help = "queued tokens before posters block. 0 means unbounded"},
        {.name = "shared_data", .type = ParamType::size, .default_value = "0", .min = 0, .max = 1LL << 30,
         .help = "bytes both sides touch (a request buffer): reading them on another CPU than the one that wrote "
                 "them last costs the transfer by distance"},
        {.name = "shared_lines", .type = ParamType::integer, .default_value = "0", .min = 0, .max = 4096,
         .help = "cache lines of the channel's own state (a lock, indices, a wait queue) that each post and read "
                 "pulls from the CPU that used the channel last, each at the pair's full line cost (line_llc and "
                 "the other line_* costs of the profile); a pipe has the profile's pipe_lines"},
    };
    return t;
}

const ParamTable& wake_site_params() {
    static const ParamTable t = {
        {.name = "sync_capable", .type = ParamType::boolean, .default_value = "false",
         .help = "the waker is about to sleep, so WF_SYNC would be honest here. `wf_sync` adds WF_SYNC at such "
                 "sites"},
        {.name = "role", .type = ParamType::choice, .default_value = "generic", .choices = {"generic", "request", "reply"},
         .help = "`request` wakes the side that serves and `reply` wakes the side that waits for an answer. "
                 "`seccomp_current_cpu` uses WF_CURRENT_CPU at both"},
        {.name = "iowait", .type = ParamType::boolean, .default_value = "false",
         .help = "the wakee slept in an I/O wait (`io_schedule`): under schedutil its enqueue raises the CPU's "
                 "iowait boost (128, doubling per wakeup within a tick, up to 1024)"},
    };
    return t;
}

const ParamTable& timer_params() {
    static const ParamTable t = {
        {.name = "mode", .type = ParamType::choice, .default_value = "relative", .choices = {"relative", "absolute"},
         .help = "what an overrun does (a `timer` step reached after its expiry goes on at once): `relative` counts "
                 "the next period from that moment, `absolute` keeps the original grid, so the periods after an "
                 "overrun start back to back until the task is on time again (rt-app's timer `mode`, default relative)"},
        {.name = "shared", .type = ParamType::boolean, .default_value = "false",
         .help = "one timer for every task and instance that uses it, each use advancing it by its period (rt-app's "
                 "timer refs); `false`: each task instance has its own (rt-app's refs starting with `unique`)"},
    };
    return t;
}

const ParamTable& task_params() {
    static const ParamTable t = with_task_uclamp({
        {.name = "count", .type = ParamType::integer, .default_value = "1", .min = 1, .max = kMaxTasks,
         .help = "identical instances. All program tasks together: at most 100000"},
        {.name = "cpus", .type = ParamType::cpulist, .help = "allowed CPUs", .absent_means = "all CPUs"},
        {.name = "nice", .type = ParamType::integer, .default_value = "0", .min = -20, .max = 19,
         .help = "weight from the kernel's `sched_prio_to_weight` (ignored for `idle`)"},
        {.name = "policy", .type = ParamType::choice, .default_value = "normal", .choices = {"normal", "batch", "idle"},
         .help = "`SCHED_NORMAL`, `SCHED_BATCH` (does not preempt on wakeup), or `SCHED_IDLE` (minimal weight, and "
                 "a CPU running only such tasks counts as idle for placement)"},
        {.name = "role", .type = ParamType::choice, .default_value = "other", .choices = {"other", "requester", "server"},
         .help = "used by policies: seesaw marks, `migrate_disable_wait`, `sched_idle_server` "
                 "([policies.md](policies.md))"},
        {.name = "kthread", .type = ParamType::boolean, .default_value = "false",
         .help = "a per-CPU kthread. It must have `cpus` of exactly one CPU. A task it wakes may be stacked on its "
                 "CPU (`select_idle_sibling`'s per-CPU-kthread rule), and balancing never moves it"},
        {.name = "footprint", .type = ParamType::size, .default_value = "0", .min = 0, .max = 1LL << 30,
         .help = "the task's working set, refilled after running elsewhere or going cold"},
        {.name = "parent_wakee_flips", .type = ParamType::integer, .default_value = "0", .min = 0, .max = 1000000,
         .help = "`wakee_flips` of the thread that creates this task, which it inherits (the kernel copies the count "
                 "at fork and does not reset it); `wake_wide()` compares it with `sd_llc_size`, so on a small LLC a "
                 "task that wakes few others keeps the wide pattern its creator had (as `messaging`'s workers do)"},
        {.name = "pair", .type = ParamType::integer, .min = 0, .max = 1000000000,
         .help = "the pair id that the `seesaw` policy's `pair_id` variant matches: a wakeup of a task by another "
                 "with the same non-zero id returns the waker's CPU",
         .absent_means = "1 for a task with a `fuse` step (it pairs with its connection's server threads, as `fio`'s "
                         "jobs do), else 0: no pair"},
        {.name = "delay", .type = ParamType::duration, .default_value = "0ns", .min = 0, .max = kMaxTime,
         .help = "the task is forked with the others, then sleeps until this long after the workload's start before "
                 "its first step (a timer wakeup, as rt-app's `delay`); its timers count from then"},
    });
    return t;
}

// ---- the spec: what the JSON says, checked and with names resolved --------------------------------

enum class StepKind : uint8_t { run, sleep, post, wait, resume, suspend, barrier, op, loop, fuse, timer };

struct Step {
    StepKind kind = StepKind::run;
    int64_t ns = 0;   // run, sleep: the duration; wait: the cost before blocking ("pre"); timer: period
    int64_t ns2 = 0;  // wait: the cost after the token arrives ("after")
    int64_t n = 0;    // loop: iterations (0: forever); op, fuse: bytes
    int target = 0;   // post, wait: channel; resume: task definition; barrier: barrier; fuse: connection; timer
    FuseOp fuse_op = FuseOp::conn_read;  // fuse
    uint8_t fuse_call = Op::kOwnSyscall;  // fuse: the request's place in its system call (Op::sub bits)
    std::vector<Step> body;  // loop
};

// Calls f on each step of the list, loop bodies included.
template <class F>
void for_each_step(const std::vector<Step>& list, const F& f) {
    for (const Step& s : list) {
        f(s);
        if (s.kind == StepKind::loop) for_each_step(s.body, f);
    }
}

struct TaskDef {
    std::string name;
    int64_t count = 1;
    TaskSpec spec;
    int64_t delay = 0;
    std::vector<Step> steps;
};

struct FuseConnection {
    std::string name;
    FuseConnSpec conn;
};

struct ProgramSpec {
    std::vector<Channel> channels;
    std::vector<FuseConnection> fuse;  // channels after `channels`
    std::vector<int> barriers;  // participants of each
    std::vector<TimerDef> timers;
    std::vector<TaskDef> tasks;
    int parent_cpu = 0;
};

// A value the user gave, for a message: a string quoted and escaped, anything else as JSON.
std::string shown(const JsonNode& n) {
    return n.raw().is_string() ? quote_for_message(n.raw().get<std::string>()) : quote_for_message(n.raw().dump());
}

WakeSite read_site(const JsonNode& n, const std::string& default_name) {
    const ParamValues p = read_params(n, wake_site_params(), {"name", "flags"});
    WakeSite s{n.string_or("name", default_name), 0, p.boolean("sync_capable"), SiteRole::generic, p.boolean("iowait")};
    if (auto f = n.get("flags")) {
        f->require_array();
        for (size_t i = 0; i < f->size(); ++i) {
            const std::string fl = (*f)[i].as_enum({"WF_SYNC", "WF_CURRENT_CPU"});
            s.kernel_flags |= fl == "WF_SYNC" ? WF_SYNC : WF_CURRENT_CPU;
        }
    }
    const std::string& role = p.choice("role");
    s.role = role == "request" ? SiteRole::request : role == "reply" ? SiteRole::reply : SiteRole::generic;
    return s;
}

std::vector<std::string> names_of(const std::map<std::string, int>& ix) {
    std::vector<std::string> out;
    for (const auto& kv : ix) out.push_back(kv.first);
    return out;
}

// Loops nest at most this deep (docs/scenarios.md, "Limits"); reading and compiling recurse.
constexpr size_t kMaxLoopDepth = 16;

// Steps: {"run": "5us"} {"sleep": "1ms"} {"post": ch} {"wait": ch, "pre": d, "after": d}
// {"resume": task} {"suspend": true} {"barrier": b} {"op": bytes} {"loop": n, "do": [...]}
// {"fuse": opcode, "bytes": n, "conn": name, "call": own|first|inside|last} {"timer": name, "period": d}
struct StepReader {
    const std::map<std::string, int>& chans;
    const std::map<std::string, int>& conns;
    const std::map<std::string, int>& barriers;
    const std::map<std::string, int>& tasks;
    const std::map<std::string, int>& timers;

    // A channel named by a string: a non-string is a type error, an unknown name gets the near miss.
    int channel(const JsonNode& c) const {
        const std::string cn = c.as_string();
        if (chans.empty())
            c.fail("expected a channel declared in the program's \"channels\" object (it declares none), got " +
                   quote_for_message(cn));
        auto it = chans.find(cn);
        return it != chans.end() ? it->second : chans.at(c.as_enum(names_of(chans)));  // as_enum fails
    }

    void read_fuse(const JsonNode& st, Step& s) const {
        if (conns.empty()) st.at("fuse").fail("expected a FUSE connection declared in the program's \"fuse\" object");
        const JsonNode op = st.at("fuse");
        s.fuse_op = *fuse_op_from_step(op.as_enum(fuse_op_step_names()));
        if (st.has("conn")) {
            const JsonNode c = st.at("conn");
            const std::string cn = c.as_string();
            auto it = conns.find(cn);
            s.target = it != conns.end() ? it->second : conns.at(c.as_enum(names_of(conns)));
        } else if (conns.size() > 1) {
            st.fail("expected \"conn\": the program declares " + std::to_string(conns.size()) + " FUSE connections");
        } else {
            s.target = conns.begin()->second;
        }
        if (fuse_op_has_data(s.fuse_op)) {
            if (!st.has("bytes")) st.fail("expected \"bytes\" (1B to 1MiB) for a " + std::string(fuse_op_name(s.fuse_op)));
            s.n = st.at("bytes").as_size_bytes(1, 1 << 20);  // 4096 or "4KiB", as fio's bs
        } else if (st.has("bytes")) {
            st.at("bytes").fail("expected no \"bytes\": only read, write and writeback carry data");
        }
        if (st.has("call")) {
            static const std::vector<std::string> calls = {"own", "first", "inside", "last"};
            static const uint8_t bits[] = {Op::kOwnSyscall, Op::kSyscallEntry, 0, Op::kSyscallExit};
            const std::string c = st.at("call").as_enum(calls);
            s.fuse_call = bits[std::find(calls.begin(), calls.end(), c) - calls.begin()];
        }
    }

    // Reads `arr` into `out`. Returns whether the steps include one that takes simulated time or
    // blocks: a loop without one would spin forever at one instant.
    // `depth`: how many loops enclose `arr`; checked before reading a nested loop's body.
    bool read(const JsonNode& arr, std::vector<Step>& out, size_t depth = 0) const {
        arr.require_array();
        bool waits = false;
        InputErrorCollector errors;  // every bad step of this list, each on its own line
        for (size_t k = 0; k < arr.size(); ++k) {
            errors.attempt([&] {
                JsonNode st = arr[k];
                st.require_object();
                Step s;
                // One step key per step: {"run": "1ms", "sleep": "2ms"} is two steps written as one.
                static const std::vector<std::string> kStepKeys = {"run",     "sleep",   "post", "wait", "resume",
                                                                   "suspend", "barrier", "op",   "loop", "fuse",
                                                                   "timer"};
                std::vector<std::string> given;
                for (const auto& key : kStepKeys)
                    if (st.has(key)) given.push_back(key);
                if (given.size() > 1) {
                    std::string names;
                    for (size_t i = 0; i < given.size(); ++i)
                        names += (i == 0 ? "" : i + 1 == given.size() ? " and " : ", ") + quote_for_message(given[i]);
                    st.fail("expected one step key per step, got " + names +
                            "; write each as its own step, e.g. [{\"" + given[0] + "\": ...}, {\"" + given[1] + "\": ...}]");
                }
                if (st.has("run")) {
                    st.check_keys({"run"});
                    waits = true;
                    s.kind = StepKind::run;
                    s.ns = st.at("run").as_duration_ns(1, kMaxTime);
                } else if (st.has("sleep")) {
                    st.check_keys({"sleep"});
                    waits = true;
                    s.kind = StepKind::sleep;
                    s.ns = st.at("sleep").as_duration_ns(1, kMaxTime);
                } else if (st.has("post")) {
                    st.check_keys({"post"});
                    s.kind = StepKind::post;
                    s.target = channel(st.at("post"));
                } else if (st.has("wait")) {
                    st.check_keys({"wait", "pre", "after"});
                    waits = true;
                    s.kind = StepKind::wait;
                    s.target = channel(st.at("wait"));
                    s.ns = st.duration_or("pre", 0, 0, kMaxTime);
                    s.ns2 = st.duration_or("after", 0, 0, kMaxTime);
                } else if (st.has("resume")) {
                    st.check_keys({"resume"});
                    s.kind = StepKind::resume;
                    s.target = tasks.at(st.at("resume").as_enum(names_of(tasks)));
                } else if (st.has("suspend")) {
                    st.check_keys({"suspend"});
                    if (!st.at("suspend").as_bool()) st.at("suspend").fail("expected true (a step that suspends the task)");
                    waits = true;
                    s.kind = StepKind::suspend;
                } else if (st.has("barrier")) {
                    st.check_keys({"barrier"});
                    waits = true;
                    s.kind = StepKind::barrier;
                    if (barriers.empty())
                        st.at("barrier").fail(
                            "expected a barrier declared in the program's \"barriers\" object (it declares none), got " +
                            shown(st.at("barrier")));
                    s.target = barriers.at(st.at("barrier").as_enum(names_of(barriers)));
                } else if (st.has("op")) {
                    st.check_keys({"op"});
                    s.kind = StepKind::op;
                    s.n = st.at("op").as_int(0, 1 << 30);
                } else if (st.has("loop")) {
                    st.check_keys({"loop", "do"});
                    s.kind = StepKind::loop;
                    s.n = st.at("loop").as_int(0, kMaxLoops);
                    if (depth >= kMaxLoopDepth)
                        st.at("do").fail("expected loops nested at most " + std::to_string(kMaxLoopDepth) + " deep");
                    if (!read(st.at("do"), s.body, depth + 1))
                        st.at("do").fail("expected a loop body with a step that takes time or blocks (run, sleep, timer, "
                                         "wait, suspend, barrier, a synchronous fuse request or a loop); this loop "
                                         "would spin without simulated time passing");
                    waits = true;
                } else if (st.has("fuse")) {
                    st.check_keys({"fuse", "bytes", "conn", "call"});
                    s.kind = StepKind::fuse;
                    read_fuse(st, s);
                    // A synchronous request sleeps until its reply, a writeback until its WRITE ends; a
                    // RELEASE or FORGET goes on at once.
                    waits = waits || fuse_op_send(s.fuse_op) == FuseSend::sync ||
                            fuse_op_send(s.fuse_op) == FuseSend::writeback;
                } else if (st.has("timer")) {
                    st.check_keys({"timer", "period"});
                    // Takes time: each use moves the expiry a period on, so a loop reaches one ahead.
                    waits = true;
                    s.kind = StepKind::timer;
                    if (timers.empty())
                        st.at("timer").fail("expected a timer declared in the program's \"timers\" object (it declares none), got " +
                                            shown(st.at("timer")));
                    const JsonNode tn = st.at("timer");
                    const std::string name = tn.as_string();
                    auto it = timers.find(name);
                    s.target = it != timers.end() ? it->second : timers.at(tn.as_enum(names_of(timers)));
                    if (!st.has("period")) st.fail("expected \"period\": the timer's period for this step, e.g. \"10ms\"");
                    s.ns = st.at("period").as_duration_ns(1, kMaxTime);
                } else {
                    static const std::vector<std::string> kSteps = {"run",    "sleep",   "post",    "wait",
                                                                    "resume", "suspend", "barrier", "op",
                                                                    "loop",   "fuse",    "timer"};
                    std::string list;
                    for (const std::string& name : kSteps) list += (list.empty() ? "" : ", ") + name;
                    const std::vector<std::string> keys = st.keys();
                    const std::string got = keys.empty() ? std::string() : keys.front();
                    const std::string hint = got.empty() ? std::string() : nearest_name(got, kSteps);
                    st.fail("expected a step with one of: " + list +
                            (got.empty() ? std::string("; got an empty object")
                                         : "; got " + quote_for_message(got) +
                                               (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)")));
                }
                out.push_back(std::move(s));
            });
        }
        errors.finish();
        return waits;
    }
};

ProgramSpec read_program(const WorkloadInput& in) {
    const JsonNode& w = in.json;
    ProgramSpec s;
    std::map<std::string, int> chan_ix, barrier_ix, task_ix;
    // Every bad declaration, task and step, each on its own line. A channel, barrier, timer or
    // task with a bad field is still declared, so that the steps naming it are read too.
    InputErrorCollector errors;
    if (auto chans = w.get("channels")) {
        chans->require_object();
        for (const auto& name : chans->keys()) errors.attempt([&] {
            JsonNode c = chans->at(name);
            const int at = static_cast<int>(s.channels.size());
            chan_ix[name] = at;
            s.channels.push_back(Channel{});
            s.channels.back().name = name;
            const ParamValues p = read_params(c, channel_params(), {"wake", "writer_wake"});
            Channel& ch = s.channels[static_cast<size_t>(at)];
            ch.capacity = p.integer("capacity");
            ch.shared_bytes = p.size_bytes("shared_data");
            ch.shared_lines = p.integer("shared_lines");
            const WakeSite plain{name, 0, false, SiteRole::generic};
            ch.read_site = c.has("wake") ? read_site(c.at("wake"), name) : plain;
            ch.write_site = c.has("writer_wake") ? read_site(c.at("writer_wake"), name) : plain;
        });
    }
    std::map<std::string, int> conn_ix;
    bool conn_failed = false;  // a connection holds no spec to stand in: its steps wait for a fix
    if (auto conns = w.get("fuse")) {
        conns->require_object();
        for (const auto& name : conns->keys()) conn_failed |= !errors.attempt([&] {
            JsonNode c = conns->at(name);
            if (!is_plain_name(name)) c.fail("expected a connection name without spaces or control characters");
            const ParamValues p = read_params(c, fuse_conn_params(), {}, fuse_left_out());
            s.fuse.push_back({name, read_fuse_conn(c, p, in.topo, in.profile)});
            conn_ix[name] = static_cast<int>(s.fuse.size()) - 1;
        });
    }
    if (auto bars = w.get("barriers")) {
        bars->require_object();
        for (const auto& name : bars->keys()) errors.attempt([&] {
            barrier_ix[name] = static_cast<int>(s.barriers.size());
            s.barriers.push_back(1);
            s.barriers.back() = static_cast<int>(bars->at(name).as_int(1, kMaxTasks));
        });
    }
    std::map<std::string, int> timer_ix;
    if (auto tms = w.get("timers")) {
        tms->require_object();
        for (const auto& name : tms->keys()) errors.attempt([&] {
            JsonNode t = tms->at(name);
            timer_ix[name] = static_cast<int>(s.timers.size());
            s.timers.push_back({name, false, false});
            if (!is_plain_name(name)) t.fail("expected a timer name without spaces or control characters");
            const ParamValues p = read_params(t, timer_params());
            s.timers.back() = {name, p.choice("mode") == "absolute", p.boolean("shared")};
        });
    }
    if (conn_failed) errors.finish();  // the steps name connections
    JsonNode tasks = w.at("tasks");
    tasks.require_array();
    if (tasks.size() == 0) tasks.fail("expected at least one task");
    // First pass: names, counts and the other scalars (a task may resume one defined later). A
    // task with a bad field keeps its place, so that the rest of the file is read as well.
    std::vector<std::optional<ParamValues>> params(tasks.size());
    std::vector<bool> named(tasks.size(), false);
    int64_t total = 0;
    s.tasks.resize(tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) errors.attempt([&] {
        JsonNode t = tasks[i];
        t.require_object();
        TaskDef& d = s.tasks[i];
        d.name = t.at("name").as_string();
        if (!is_plain_name(d.name)) t.at("name").fail("expected a task name without spaces or control characters");
        if (task_ix.count(d.name)) t.at("name").fail("expected a unique task name, " + quote_for_message(d.name) + " is used twice");
        task_ix[d.name] = static_cast<int>(i);
        named[i] = true;
        t.check_keys(keys_around({"name"}, task_params(), {"program"}));  // in this order in the error's list
        params[i] = read_params(t, task_params(), {"name", "program"});
        d.count = params[i]->integer("count");
        total += d.count;
        if (total > kMaxTasks) t.fail("expected at most 100000 tasks in all");
    });
    // The instances' names (name-0, name-1, ... for a count above 1) are the comms that traces,
    // `explain --wakee` and `resume` go by: each once.
    std::map<std::string, size_t> comm_of;
    for (size_t i = 0; i < tasks.size(); ++i) {
        if (!named[i]) continue;
        const TaskDef& d = s.tasks[i];
        for (int64_t k = 0; k < (d.count > 1 ? d.count : 1); ++k) {
            const std::string comm = d.count > 1 ? d.name + "-" + std::to_string(k) : d.name;
            const auto [at, fresh] = comm_of.emplace(comm, i);
            if (!fresh) {
                errors.attempt([&] {
                    tasks[i].at("name").fail("expected names whose instances differ; " + quote_for_message(comm) +
                                             " is an instance of task " + std::to_string(at->second) +
                                             " (" + quote_for_message(s.tasks[at->second].name) + ") too");
                });
                break;
            }
        }
    }
    const StepReader steps{chan_ix, conn_ix, barrier_ix, task_ix, timer_ix};
    std::vector<bool> steps_read(tasks.size(), false);
    for (size_t i = 0; i < tasks.size(); ++i) {
        JsonNode t = tasks[i];
        if (!t.is_object()) continue;  // said in the first pass
        // The steps do not depend on the task's other fields: they are read even when those failed.
        steps_read[i] = errors.attempt([&] { steps.read(t.at("program"), s.tasks[i].steps); });
        if (!params[i]) continue;  // its own error is said
        errors.attempt([&] {
            const ParamValues& p = *params[i];
            TaskSpec& spec = s.tasks[i].spec;
            spec.footprint_kib = p.size_bytes("footprint") / 1024;
            s.tasks[i].delay = p.duration_ns("delay");
            spec.allowed = read_cpus(t, p, "cpus", in.topo);
            apply_task_uclamp(t, p, in.groups, in.topo, spec);
            spec.nice = static_cast<int>(p.integer("nice"));
            spec.policy = read_policy(p);
            const std::string& role = p.choice("role");
            spec.role = role == "requester" ? TaskRole::requester : role == "server" ? TaskRole::server : TaskRole::other;
            spec.per_cpu_kthread = p.boolean("kthread");
            spec.wakee_flips = static_cast<uint32_t>(p.integer("parent_wakee_flips"));
            bool has_fuse = false;
            for_each_step(s.tasks[i].steps, [&](const Step& st) { has_fuse |= st.kind == StepKind::fuse; });
            spec.pair_id = p.given("pair") ? static_cast<uint32_t>(p.integer("pair")) : has_fuse ? 1 : 0;
            if (spec.per_cpu_kthread && spec.allowed.count() != 1)
                t.at("kthread").fail("expected a kthread to be pinned to exactly one CPU (\"cpus\": \"N\")");
        });
    }
    // A barrier's participants are the instances whose programs name it: each waits there until
    // it releases, so a barrier larger than that can never release (rt-app counts them the same way).
    const bool all_read = std::all_of(steps_read.begin(), steps_read.end(), [](bool b) { return b; }) &&
                          std::all_of(params.begin(), params.end(), [](const auto& p) { return p.has_value(); });
    if (auto bars = w.get("barriers"); bars && all_read) {
        std::vector<int64_t> reach(s.barriers.size(), 0);
        std::vector<std::string> who(s.barriers.size());
        for (const TaskDef& d : s.tasks) {
            std::vector<bool> names(s.barriers.size(), false);
            for_each_step(d.steps, [&](const Step& st) {
                if (st.kind == StepKind::barrier) names[static_cast<size_t>(st.target)] = true;
            });
            for (size_t b = 0; b < names.size(); ++b) {
                if (!names[b]) continue;
                reach[b] += d.count;
                who[b] += (who[b].empty() ? "" : ", ") + quote_for_message(d.name) + (d.count > 1 ? " x" + std::to_string(d.count) : "");
            }
        }
        for (const auto& [name, b] : barrier_ix) {
            const auto ub = static_cast<size_t>(b);
            if (reach[ub] > 0 && s.barriers[ub] > reach[ub])
                errors.attempt([&] {
                    bars->at(name).fail("expected at most " + std::to_string(reach[ub]) +
                                        ", the task instances whose programs name this barrier (" + who[ub] +
                                        "); with " + std::to_string(s.barriers[ub]) + " it can never release");
                });
        }
    }
    errors.attempt([&] {
        if (in.params.given("parent_cpu")) s.parent_cpu = static_cast<int>(w.at("parent_cpu").as_int(0, in.topo.nr_cpus() - 1));
    });
    errors.finish();
    return s;
}

// ---- the build: Op code for the interpreter ---------------------------------------------------------

// `first` maps a task definition to the index of its first instance (the one "resume" wakes).
void compile(const ProgramSpec& spec, const std::vector<Step>& steps, const std::vector<int32_t>& first,
             std::vector<Op>& code) {
    for (const Step& s : steps) {
        switch (s.kind) {
            case StepKind::run: code.push_back(Op{Op::run, s.ns, 0, 0, 0, 0}); break;
            case StepKind::sleep: code.push_back(Op{Op::sleep, s.ns, 0, 0, 0, 0}); break;
            case StepKind::post: code.push_back(Op{Op::post, 0, 0, s.target, 0, 0}); break;
            case StepKind::wait: code.push_back(Op{Op::wait, s.ns, s.ns2, s.target, 0, 0}); break;
            case StepKind::resume: code.push_back(Op{Op::resume, 0, 0, first[static_cast<size_t>(s.target)], 0, 0}); break;
            case StepKind::suspend: code.push_back(Op{Op::suspend, 0, 0, 0, 0, 0}); break;
            case StepKind::barrier: code.push_back(Op{Op::barrier, 0, 0, s.target, 0, 0}); break;
            case StepKind::timer: code.push_back(Op{Op::timer, s.ns, 0, s.target, 0, 0}); break;
            case StepKind::op: code.push_back(Op{Op::count_op, 0, 0, 0, 0, static_cast<uint32_t>(s.n)}); break;
            case StepKind::loop: {
                const auto begin = static_cast<int32_t>(code.size());
                code.push_back(Op{Op::loop_begin, 0, 0, static_cast<int32_t>(s.n), 0, 0});
                compile(spec, s.body, first, code);
                code.push_back(Op{Op::loop_end, 0, 0, 0, begin, 0});
                break;
            }
            case StepKind::fuse: {
                const FuseOpCosts& c = spec.fuse[static_cast<size_t>(s.target)].conn.ops;
                const auto ch = static_cast<int32_t>(spec.channels.size()) + s.target;
                Op req{Op::fuse_request, c.work(s.fuse_op, s.n), 0, ch, static_cast<int32_t>(s.fuse_op), 0};
                req.sub = s.fuse_call;
                code.push_back(req);
                break;
            }
        }
    }
}

WorkloadBuild build_program(const ProgramSpec& s) {
    WorkloadBuild b;
    b.kind = "program";
    b.channels = s.channels;
    for (const FuseConnection& f : s.fuse) {
        const bool uring = f.conn.def->transport == FuseTransport::uring;
        Channel conn{f.name, 0, fuse_request_end_site(uring), fuse_queue_request_site(), 0};
        conn.fuse = f.conn.def;
        b.channels.push_back(std::move(conn));
    }
    b.barriers = s.barriers;
    b.timers = s.timers;
    std::vector<int32_t> first;
    int32_t next = 0;
    for (const TaskDef& d : s.tasks) {
        first.push_back(next);
        next += static_cast<int32_t>(d.count);
    }
    for (const TaskDef& d : s.tasks) {
        std::vector<Op> ops;
        if (d.delay > 0) ops.push_back(Op{Op::sleep_until, d.delay, 0, 0, 0, 0});
        compile(s, d.steps, first, ops);
        const Code code(std::move(ops));  // one list for every instance
        for (int64_t k = 0; k < d.count; ++k) {
            ProgramTask pt;
            pt.spec = d.spec;
            pt.delay = d.delay;
            pt.spec.comm = d.count > 1 ? d.name + "-" + std::to_string(k) : d.name;
            pt.code = code;
            b.tasks.push_back(std::move(pt));
        }
    }
    // The servers after the program's tasks, so that "resume" indices stay those of the tasks;
    // ProgramDriver::setup() still forks them first.
    for (size_t i = 0; i < s.fuse.size(); ++i)
        add_fuse_servers(b, static_cast<int>(s.channels.size() + i), s.fuse[i].conn, s.fuse[i].name);
    b.parent_cpu = s.parent_cpu;
    return b;
}

WorkloadBuild make_program(const WorkloadInput& in) { return build_program(read_program(in)); }

}  // namespace

const WorkloadKind& program_workload() {
    // Keys read by read_program's own code (not plain scalars), documented next to the tables.
    static const std::vector<KeyDoc> channel_keys = {
        {"wake", "wake site", "`{}`", "how a post wakes a waiting reader"},
        {"writer_wake", "wake site", "`{}`", "how a read wakes a poster blocked on a full channel"},
    };
    static const std::vector<KeyDoc> wake_site_keys = {
        {"name", "string", "the channel name", "a label for the site"},
        {"flags", "array of `\"WF_SYNC\"`, `\"WF_CURRENT_CPU\"`", "`[]`", "mainline's flags at this site"},
    };
    static const std::vector<KeyDoc> task_keys = {
        {"name", "string without spaces or control characters, unique", "required",
         "the comm. With `count` > 1, the instances are `name-0`, `name-1`, ..."},
        {"program", "array of steps", "required", "below"},
    };
    static const WorkloadKind k{
        .kind = "program",
        .description = "task programs in rt-app's vocabulary: run, sleep, timer, post/wait, resume/suspend, barrier, loop",
        .params = program_params(),
        .keys = {{"channels", "object: name -> channel", "none", "the channels, below"},
                 {"fuse", "object: name -> FUSE connection", "none",
                  "FUSE connections served by passthrough_hp on tmpfs, below; each gets its server threads "
                  "`NAME-worker-i` and, with io-uring, `NAME-ring-CPU`"},
                 {"barriers", "object: name -> integer 1..100000", "none",
                  "a cyclic barrier and its number of participants"},
                 {"timers", "object: name -> timer", "none", "periodic timers for `timer` steps, below"},
                 {"tasks", "array, at least 1", "required", "the tasks, below"}},
        .sections = {{"program.channel", "program: a channel", channel_keys, &channel_params()},
                     {"program.wake", "program: a wake site", wake_site_keys, &wake_site_params()},
                     {"program.task", "program: a task", task_keys, &task_params()},
                     {"program.fuse", "program: a FUSE connection", {}, &fuse_conn_params(), &fuse_left_out()},
                     {"program.timer", "program: a timer", {}, &timer_params()}},
        .build = make_program,
    };
    return k;
}

}  // namespace wakesim
