// The registry of workload kinds, the generic part of reading a workload object, and the helpers
// the kind files share. Adding a kind: a file like pipe.cpp that defines its entry, and its line
// below (declaration and table row).
#include "workloads/workloads.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "input/json_input.h"
#include "workloads/kind.h"

namespace wakesim {

// Each kind file defines its entry.
const WorkloadKind& pipe_workload();
const WorkloadKind& messaging_workload();
const WorkloadKind& program_workload();
const WorkloadKind& fio_workload();
const WorkloadKind& bonnie_workload();
const WorkloadKind& extract_workload();

const std::vector<WorkloadKind>& workload_kinds() {
    static const std::vector<WorkloadKind> kinds = {
        pipe_workload(),       // perf bench sched pipe
        messaging_workload(),  // perf bench sched messaging (hackbench)
        program_workload(),    // rt-app-style task programs
        fio_workload(),        // fio psync reads through FUSE (/dev/fuse, fuse-over-io-uring)
        bonnie_workload(),     // bonnie++ -s0 -n: metadata requests through FUSE
        extract_workload(),    // an app extracting small files through FUSE (Android shared storage)
    };
    return kinds;
}

const WorkloadKind* find_workload_kind(std::string_view kind) {
    for (const WorkloadKind& k : workload_kinds())
        if (k.kind == kind) return &k;
    return nullptr;
}

const std::vector<ParamSection>& workload_param_sections() {
    static const std::vector<ParamSection> sections = [] {
        std::vector<ParamSection> out;
        for (const WorkloadKind& k : workload_kinds()) {
            out.push_back({k.kind, k.kind + ": " + k.description, k.keys, &k.params, &k.left_out});
            for (const ParamSection& s : k.sections) out.push_back(s);
        }
        out.push_back({"hogs", "hogs: CPU-bound background tasks (every kind)", {}, &hogs_params()});
        out.push_back({"noise", "noise: periodic background tasks (every kind)", {}, &noise_params()});
        out.push_back({"group", "a task group of the scenario's \"groups\"", {}, &group_params()});
        return out;
    }();
    return sections;
}

const ParamSection* find_workload_section(std::string_view name) {
    for (const ParamSection& s : workload_param_sections())
        if (s.name == name) return &s;
    return nullptr;
}

std::string section_markdown(const ParamSection& s) {
    std::string out = params_markdown_header();
    for (const KeyDoc& k : s.keys) out += "| `" + k.name + "` | " + k.type + " | " + k.default_text + " |  | " + k.help + " |\n";
    out += params_markdown_rows(*s.table);
    if (s.left_out && !s.left_out->empty()) {
        out += "\nLeft out on purpose (refused with this reason):\n\n";
        for (const LeftOutSetting& l : *s.left_out) out += "- `" + l.key + "`: " + l.why + "\n";
    }
    return out;
}

WorkloadBuild build_workload(const JsonNode& w, const MachineProfile& prof, const Topology& topo,
                             const TaskGroups& groups) {
    w.require_object();
    std::vector<std::string> kinds;
    for (const WorkloadKind& k : workload_kinds()) kinds.push_back(k.kind);
    const WorkloadKind& k = *find_workload_kind(w.at("kind").as_enum(kinds));
    std::vector<std::string> before = {"kind"};
    for (const KeyDoc& d : k.keys) before.push_back(d.name);
    const std::vector<std::string> keys = keys_around(before, k.params, {"hogs", "noise"});
    std::optional<ParamValues> read;
    InputErrorCollector errors;
    errors.attempt([&] { read = read_params(w, k.params, keys, k.left_out); });  // checks the keys too
    if (!read) {
        // Other values were refused: the CPU lists are still checked against the machine, so that
        // one pass names those mistakes too (each list's own syntax is already in the errors).
        for (const ParamSpec& s : k.params) {
            if (s.type != ParamType::cpulist || !w.has(s.name)) continue;
            const ParamTable table{s};  // outlives the values read with it
            std::optional<ParamValues> one;
            try {
                one = read_params(w, table, w.keys());
            } catch (const InputError&) {
                continue;
            }
            errors.attempt([&] { read_cpus(w, *one, s.name, topo); });
        }
        errors.finish();
    }
    const ParamValues& params = *read;
    WorkloadBuild b = k.build(WorkloadInput{w, params, prof, topo, groups});
    b.params = params;
    add_background(read_background(w, topo, groups), b);
    return b;
}

// ---- shared by the kind files -------------------------------------------------------------------

SchedPolicy read_policy(const ParamValues& v, std::string_view name) {
    const std::string& pol = v.choice(name);
    return pol == "idle" ? SchedPolicy::idle : pol == "batch" ? SchedPolicy::batch : SchedPolicy::normal;
}

CpuSet read_cpus(const JsonNode& obj, const ParamValues& v, std::string_view name, const Topology& topo) {
    CpuSet s;
    if (!v.given(name)) return s;
    const JsonNode n = obj.at(name);
    std::vector<int> ids;
    try {
        ids = parse_cpu_list(v.cpulist(name));
    } catch (const std::invalid_argument& e) {
        n.fail(e.what());  // parse_cpu_list() says what it expected and what it got
    }
    for (int c : ids) {
        if (c >= topo.nr_cpus())
            n.fail("expected CPUs of this machine (0-" + std::to_string(topo.nr_cpus() - 1) + "), got cpu " + std::to_string(c));
        s.set(c);
    }
    return s;
}

const ParamTable& group_params() {
    static const ParamTable t = {
        {.name = "cpus", .type = ParamType::cpulist,
         .help = "the group's cpuset (`cpuset.cpus`): a member runs only on these CPUs, intersected with its own "
                 "`cpus`",
         .absent_means = "all CPUs"},
        {.name = "uclamp_min", .type = ParamType::integer, .default_value = "0", .min = 0, .max = 1024,
         .help = "`cpu.uclamp.min` on the kernel's 0..1024 scale (the cgroup file takes a percentage: 20% is 205): "
                 "a floor and a ceiling for each member's `uclamp_min` and `uclamp_max` (uclamp_tg_restrict()), so "
                 "every member is boosted to at least this"},
        {.name = "uclamp_max", .type = ParamType::integer, .default_value = "1024", .min = 0, .max = 1024,
         .help = "`cpu.uclamp.max` on the same scale: the ceiling of each member's clamps; at least `uclamp_min`"},
        {.name = "fair_group", .type = ParamType::boolean, .default_value = "false",
         .help = "the group is a task group of the fair class (`CONFIG_FAIR_GROUP_SCHED`), as a cgroup with the cpu "
                 "controller or an autogroup is (`CONFIG_SCHED_AUTOGROUP`, on in most distribution kernels: every "
                 "session started with setsid() gets one, so fio's jobs, which call setsid(), and a FUSE daemon "
                 "started from another shell each run in their own). On each CPU its members queue on the group's "
                 "own runqueue, and the group competes in the CPU's root runqueue as one entity (its own vruntime, "
                 "lag, deadline and delayed dequeue), whose weight is the group's `cpu_weight` split over the CPUs "
                 "by their load (`calc_group_shares()`: the weight queued here against the group's PELT load "
                 "averages elsewhere). false: the members queue with the root's tasks (the "
                 "cpuset and clamps still apply)"},
        {.name = "cpu_weight", .type = ParamType::integer, .default_value = "100", .min = 1, .max = 10000,
         .help = "`cpu.weight` (cgroup v2; 100 is a nice-0 task's 1024 shares, as an autogroup at nice 0 has): the "
                 "group's weight against the root's tasks and other groups. Only with `fair_group`"},
    };
    return t;
}

TaskGroups read_groups(const JsonNode& groups, const Topology& topo) {
    groups.require_object();
    TaskGroups out;
    int fair_ids = 0;
    InputErrorCollector errors;  // every bad group, each on its own line
    for (const auto& name : groups.keys()) errors.attempt([&] {
        const JsonNode g = groups.at(name);
        if (!is_plain_name(name)) g.fail("expected a group name without spaces or control characters");
        const ParamValues v = read_params(g, group_params());
        TaskGroup tg;
        tg.name = name;
        tg.cpus = read_cpus(g, v, "cpus", topo);
        tg.uclamp_min = static_cast<int>(v.integer("uclamp_min"));
        tg.uclamp_max = static_cast<int>(v.integer("uclamp_max"));
        if (tg.uclamp_min > tg.uclamp_max)
            g.at(v.given("uclamp_max") ? "uclamp_max" : "uclamp_min")
                .fail("expected uclamp_max (" + std::to_string(tg.uclamp_max) + ") at least uclamp_min (" +
                      std::to_string(tg.uclamp_min) + ")");
        if (v.boolean("fair_group")) {
            tg.fair_id = fair_ids++;
            // sched_weight_from_cgroup(): cpu.weight x 1024 / 100, rounded.
            tg.shares = static_cast<uint32_t>((v.integer("cpu_weight") * 1024 + 50) / 100);
        } else if (v.given("cpu_weight")) {
            g.at("cpu_weight").fail("expected \"fair_group\": true with cpu_weight (a group that is not a task group "
                                    "of the fair class has no weight of its own)");
        }
        out.push_back(std::move(tg));
    });
    errors.finish();
    return out;
}

const ParamTable& task_uclamp_params() {
    static const ParamTable t = {
        {.name = "uclamp_min", .type = ParamType::integer, .default_value = "0", .min = 0, .max = 1024,
         .help = "`sched_setattr()`'s `sched_util_min`: the task's utilisation counts as at least this when it "
                 "decides whether the task fits a CPU (util_fits_cpu()), in EAS's energy estimate and in "
                 "schedutil's frequency request while it is runnable"},
        {.name = "uclamp_max", .type = ParamType::integer, .default_value = "1024", .min = 0, .max = 1024,
         .help = "`sched_util_max`: a cap; a task capped at or below a CPU's capacity fits it however busy it is "
                 "(not misfit there, not overutilizing it), and schedutil asks no more than the cap for it. At "
                 "least `uclamp_min`"},
        {.name = "group", .type = ParamType::text,
         .help = "a group of the scenario's `groups`: the task runs only on the group's CPUs (intersected with "
                 "its own `cpus`), its clamps are restricted by the group's, and it is queued in the group's task "
                 "group when that is a `fair_group`",
         .absent_means = "none"},
    };
    return t;
}

ParamTable with_task_uclamp(ParamTable table) {
    const ParamTable& more = task_uclamp_params();
    table.insert(table.end(), more.begin(), more.end());
    return table;
}

const TaskGroup& find_task_group(const JsonNode& n, const TaskGroups& groups) {
    const std::string name = n.as_string();
    std::vector<std::string> names;
    for (const TaskGroup& tg : groups) {
        if (tg.name == name) return tg;
        names.push_back(tg.name);
    }
    if (names.empty()) n.fail("expected a group declared in the scenario's top-level \"groups\"; it declares none");
    const std::string hint = nearest_name(name, names);
    std::string list;
    for (const auto& s : names) list += (list.empty() ? "" : ", ") + s;
    n.fail("expected a group of the scenario's \"groups\" (" + list + "); got " + quote_for_message(name) +
           (hint.empty() ? "" : " (did you mean " + quote_for_message(hint) + "?)"));
}

void join_task_group(const JsonNode& n, const TaskGroup& g, const Topology& topo, TaskSpec& spec) {
    if (!g.cpus.empty()) {
        const CpuSet own = spec.allowed.empty() ? topo.all() : spec.allowed;
        if ((own & g.cpus).empty())
            n.fail("expected a group whose CPUs meet the task's own \"cpus\": group " + quote_for_message(g.name) +
                   " has none of them (cpuset: an empty intersection)");
    }
    enter_task_group(g, spec);
}

void enter_task_group(const TaskGroup& g, TaskSpec& spec) {
    if (!g.cpus.empty()) {
        const CpuSet both = spec.allowed.empty() ? g.cpus : (spec.allowed & g.cpus);
        if (!both.empty()) spec.allowed = both;
    }
    spec.fair_group = g.fair_id;
    spec.group_shares = g.shares;
    // uclamp_tg_restrict(): the group's clamps bound the task's own.
    spec.uclamp_min = std::clamp(spec.uclamp_min, g.uclamp_min, g.uclamp_max);
    spec.uclamp_max = std::clamp(spec.uclamp_max, g.uclamp_min, g.uclamp_max);
}

const ParamTable& fuse_group_params() {
    static const ParamTable t = {
        {.name = "group", .type = ParamType::text,
         .help = "a group of the scenario's `groups` for the application's tasks (fio's jobs, bonnie++): they run "
                 "only on its CPUs (intersected with their own `cpus`), under its clamps, and in its task group when "
                 "it is a `fair_group` (fio calls setsid() for its jobs, so with autogroups they have one of their own)",
         .absent_means = "none"},
        {.name = "server_group", .type = ParamType::text,
         .help = "a group of the scenario's `groups` for the FUSE server's threads (libfuse workers, the "
                 "watchdog, ring threads): the workers run only on its CPUs, every thread under its clamps and in "
                 "its task group when it is a `fair_group` (a daemon started from another shell has its own "
                 "autogroup). Ring threads stay pinned to their queues' CPUs",
         .absent_means = "none"},
    };
    return t;
}

FuseGroups read_fuse_groups(const JsonNode& obj, const ParamValues& v, const TaskGroups& groups, const Topology& topo,
                            const CpuSet& app_cpus) {
    FuseGroups out;
    InputErrorCollector errors;
    if (v.given("group"))
        errors.attempt([&] {
            const JsonNode n = obj.at("group");
            const TaskGroup& g = find_task_group(n, groups);
            TaskSpec probe;
            probe.allowed = app_cpus;
            join_task_group(n, g, topo, probe);
            out.app = g;
        });
    if (v.given("server_group"))
        errors.attempt([&] {
            const JsonNode n = obj.at("server_group");
            const TaskGroup& g = find_task_group(n, groups);
            TaskSpec probe;  // the workers have no CPUs of their own: only an empty group CPU set is refused
            join_task_group(n, g, topo, probe);
            out.server = g;
        });
    errors.finish();
    return out;
}

void apply_fuse_groups(const FuseGroups& g, WorkloadBuild& b) {
    for (ProgramTask& t : b.tasks) {
        const bool server = t.spec.role == TaskRole::server;
        const std::optional<TaskGroup>& group = server ? g.server : g.app;
        if (!group) continue;
        // add_fuse_servers() leaves the workers' CPUs open and pins each ring thread to its queue's CPU.
        if (server && t.spec.allowed.count() == 1) {  // a ring thread: only the clamps and the task group
            TaskGroup pinned = *group;
            pinned.cpus = CpuSet{};
            enter_task_group(pinned, t.spec);
        } else {
            enter_task_group(*group, t.spec);
        }
    }
}

void apply_task_uclamp(const JsonNode& obj, const ParamValues& v, const TaskGroups& groups, const Topology& topo,
                       TaskSpec& spec) {
    InputErrorCollector errors;  // a bad clamp and a bad group are two mistakes
    const int lo = static_cast<int>(v.integer("uclamp_min")), hi = static_cast<int>(v.integer("uclamp_max"));
    errors.attempt([&] {
        if (lo > hi)
            obj.at(v.given("uclamp_max") ? "uclamp_max" : "uclamp_min")
                .fail("expected uclamp_max (" + std::to_string(hi) + ") at least uclamp_min (" + std::to_string(lo) +
                      "): sched_setattr() refuses it (uclamp_validate())");
    });
    spec.uclamp_min = lo;
    spec.uclamp_max = hi;
    errors.attempt([&] {
        if (!v.given("group")) return;
        const JsonNode n = obj.at("group");
        join_task_group(n, find_task_group(n, groups), topo, spec);
    });
    errors.finish();
}

std::vector<std::string> keys_around(std::vector<std::string> before, const ParamTable& table,
                                     const std::vector<std::string>& after) {
    for (const ParamSpec& s : table) before.push_back(s.name);
    before.insert(before.end(), after.begin(), after.end());
    return before;
}

}  // namespace wakesim
