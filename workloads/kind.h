// What the kind files share: background hogs and noise, CPU lists, the pipe cost model and the
// limits every reader applies.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "input/json_input.h"
#include "input/params.h"
#include "workloads/fuse/fuse_ops.h"
#include "workloads/workloads.h"

namespace wakesim {

inline constexpr int64_t kMaxLoops = 1000000000;
inline constexpr int64_t kMaxTime = 3600LL * kNsPerSec;

// The CPUs of cpulist parameter `name` of `obj` (read into `v`): empty (no restriction) when left
// out; an InputError at its pointer when it is not a CPU list or names a CPU the machine lacks.
CpuSet read_cpus(const JsonNode& obj, const ParamValues& v, std::string_view name, const Topology& topo);

// Choice parameter `name` ("normal", "batch" or "idle", as chrt's -o, -b and -i) as a policy.
SchedPolicy read_policy(const ParamValues& v, std::string_view name = "policy");

// The per-task keys `uclamp_min`, `uclamp_max` and `group`, declared once and appended to every
// table that declares tasks (program tasks, hogs, noise).
const ParamTable& task_uclamp_params();
ParamTable with_task_uclamp(ParamTable table);
// Applies them to `spec`, read from `obj` into `v`: the task's clamps (uclamp_validate(): min <=
// max), its group's cpuset intersected with spec.allowed (empty: an InputError at "group"), and
// its clamps restricted by the group's (uclamp_tg_restrict()).
// The group a "group"-like key names (one line with the declared names otherwise), and a task
// joining it: its CPUs narrowed to the group's (an empty intersection is bad input at `n`), its
// clamps bounded by the group's.
const TaskGroup& find_task_group(const JsonNode& n, const TaskGroups& groups);
void join_task_group(const JsonNode& n, const TaskGroup& g, const Topology& topo, TaskSpec& spec);
// The same without the check: the task's CPUs narrowed to the group's where they meet, its clamps
// bounded, its task group set.
void enter_task_group(const TaskGroup& g, TaskSpec& spec);

// The keys `group` (the application's tasks) and `server_group` (the FUSE server's threads) of the
// FUSE workloads that start their own server (fio, bonnie), read and checked against the groups.
const ParamTable& fuse_group_params();
struct FuseGroups {
    std::optional<TaskGroup> app, server;
};
FuseGroups read_fuse_groups(const JsonNode& obj, const ParamValues& v, const TaskGroups& groups, const Topology& topo,
                            const CpuSet& app_cpus);
// Puts the requesters into the application's group and the servers into the server's.
void apply_fuse_groups(const FuseGroups& g, WorkloadBuild& b);
void apply_task_uclamp(const JsonNode& obj, const ParamValues& v, const TaskGroups& groups, const Topology& topo,
                       TaskSpec& spec);

// `before` + the table's names + `after`: an object's keys in the order its errors list them.
std::vector<std::string> keys_around(std::vector<std::string> before, const ParamTable& table,
                                     const std::vector<std::string>& after);

// pipe_write + the wake inside it: the wake happens after the copy, then the syscall returns.
struct PipeCosts {
    int64_t write_pre, read_pre, read_post;
};
PipeCosts pipe_costs(const MachineProfile& p);

// The server threads of FUSE connection `channel`: its /dev/fuse workers `PREFIX-worker-i` and, in
// io-uring mode, one ring thread `PREFIX-ring-CPU` per queue pinned there (workloads/fuse/fuse_ops.cpp).
void add_fuse_servers(WorkloadBuild& b, int channel, const FuseConnSpec& conn, const std::string& prefix);

// Background tasks every kind accepts: "hogs" (CPU-bound, forever) and "noise" (periodic bursts).
const ParamTable& hogs_params();
const ParamTable& noise_params();
struct BackgroundSpec {
    int64_t hogs = 0;
    TaskSpec hog;
    int64_t noise = 0;
    TaskSpec noise_task;
    int64_t noise_period = 0, noise_run = 0;
};
BackgroundSpec read_background(const JsonNode& w, const Topology& topo, const TaskGroups& groups);
// Appends the hogs, then the noise tasks, after the workload's own tasks.
void add_background(const BackgroundSpec& bg, WorkloadBuild& b);

}  // namespace wakesim
