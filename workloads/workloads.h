// Workload kinds: perf bench sched pipe, perf bench sched messaging (hackbench), task programs in
// rt-app's vocabulary, each in its own file; background CPU hogs and periodic noise, which every
// kind accepts. A kind reads its JSON into a typed spec, then builds task programs from the spec
// and the machine. This header is the registry: one explicit table, one line per kind.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "hw/machine_profile.h"
#include "input/params.h"
#include "topology/topology.h"
#include "workloads/program/task_program.h"

namespace wakesim {

class JsonNode;

struct WorkloadBuild {
    std::string kind;
    std::vector<ProgramTask> tasks;
    std::vector<Channel> channels;
    std::vector<int> barriers;
    std::vector<TimerDef> timers;
    int parent_cpu = 0;       // CPU the tasks are forked from
    // The parent's time from one fork to the next, drawn uniformly in [min, max).
    int64_t fork_gap_min_ns = 1000, fork_gap_max_ns = 5000;
    uint64_t total_ops = 0;   // ops the workload performs in full (0: runs until stopped)
    std::string op_name = "op";
    ParamValues params;       // the kind's parameters as read (reports name the perf command)
};

// A scenario's task group (its top-level "groups"), as Android's cgroups reach placement: a
// cpuset (the CPUs its tasks may use) and the cpu controller's cpu.uclamp.min/max, which
// restrict each member's own clamps (uclamp_tg_restrict()). Flat: no parent groups.
struct TaskGroup {
    std::string name;
    CpuSet cpus;  // empty: every CPU
    int uclamp_min = 0;
    int uclamp_max = 1024;
    // Fair group scheduling (CONFIG_FAIR_GROUP_SCHED): the members queue in the group's own
    // runqueue on each CPU; fair_id numbers these groups from 0 (-1: the members queue in the root).
    int fair_id = -1;
    uint32_t shares = 1024;  // tg->shares: cpu.weight 100 is 1024
};
using TaskGroups = std::vector<TaskGroup>;

// What a kind's build function is given: its workload object, the kind's declared parameters
// already read and checked, the machine and the scenario's task groups.
struct WorkloadInput {
    const JsonNode& json;
    const ParamValues& params;
    const MachineProfile& profile;
    const Topology& topo;
    const TaskGroups& groups;
};

// A key that is not a plain scalar (an array of tasks, an object of channels): read by its own
// code, documented here next to it so that the docs table of its object is generated whole.
struct KeyDoc {
    std::string name;
    std::string type;          // as docs print it: "array, at least 1"
    std::string default_text;  // "required", "none"
    std::string help;
};

// One object's keys for docs and `wakesim list workloads -v`: its structured keys, then its
// declared parameters. `name` is what `wakesim list workloads --markdown NAME` and the markers in
// docs/scenarios.md call it ("pipe", "program.task", "hogs").
struct ParamSection {
    std::string name;
    std::string title;
    std::vector<KeyDoc> keys;
    const ParamTable* table;
    const std::vector<LeftOutSetting>* left_out = nullptr;  // keys refused with a reason
};
std::string section_markdown(const ParamSection& s);

struct WorkloadKind {
    std::string kind;         // as a scenario's "kind" names it
    std::string description;  // what it models, citing the benchmark it stands for
    ParamTable params;        // its scalar keys, declared once: read, checked, listed, documented
    std::vector<KeyDoc> keys;            // its structured keys, read by its own reader (program: tasks)
    std::vector<ParamSection> sections;  // its nested objects (program: channel, wake site, task)
    WorkloadBuild (*build)(const WorkloadInput& in);  // reads its spec from `in`, then builds
    std::vector<LeftOutSetting> left_out{};            // the tool's settings the model leaves out, with why
};

// Every kind, in the order `wakesim list workloads` and docs/scenarios.md give them.
const std::vector<WorkloadKind>& workload_kinds();
const WorkloadKind* find_workload_kind(std::string_view kind);

// Every table of the workloads: each kind's own, then its nested objects', then hogs and noise.
const std::vector<ParamSection>& workload_param_sections();
const ParamSection* find_workload_section(std::string_view name);

// Validates and expands a scenario's "workload" object; its tasks may join `groups`. Errors are InputError.
WorkloadBuild build_workload(const JsonNode& w, const MachineProfile& prof, const Topology& topo,
                             const TaskGroups& groups = {});

// A scenario's "groups" object: name -> group (group_params()). Errors are InputError.
const ParamTable& group_params();
TaskGroups read_groups(const JsonNode& groups, const Topology& topo);

// Pipe-style sites: pipe_write/pipe_read wake with WF_SYNC (wake_up_interruptible_sync_poll).
WakeSite pipe_site(SiteRole role);

}  // namespace wakesim
