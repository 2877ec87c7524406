// Workload generators: perf bench sched pipe, perf bench sched messaging (hackbench), generic task
// programs in JSON, and background CPU hogs / periodic noise. Each becomes task programs.
#pragma once
#include <string>
#include <vector>

#include "hw/machine_profile.h"
#include "workloads/program/task_program.h"
#include "topology/topology.h"

namespace wakesim {

class JsonNode;

struct WorkloadBuild {
    std::string kind;
    std::vector<ProgramTask> tasks;
    std::vector<Channel> channels;
    std::vector<int> barriers;
    int parent_cpu = 0;       // CPU the tasks are forked from
    uint64_t total_ops = 0;   // ops the workload performs in full (0: runs until stopped)
    std::string op_name = "op";
};

struct WorkloadInfo {
    std::string kind;
    std::string description;
};
std::vector<WorkloadInfo> workload_kinds();

// Validates and expands a scenario's "workload" object. Errors are InputError.
WorkloadBuild build_workload(const JsonNode& w, const MachineProfile& prof, const Topology& topo);

// Pipe-style sites: pipe_write/pipe_read wake with WF_SYNC (wake_up_interruptible_sync_poll).
WakeSite pipe_site(SiteRole role);

}  // namespace wakesim
