// Background load every workload kind accepts: "hogs", CPU-bound tasks that never sleep (a
// `stress -c` or a `while(1);`), and "noise", periodic tasks that run a burst then sleep the rest
// of their period (a housekeeping daemon, a timer-driven poller).
#include <string>

#include "workloads/kind.h"

namespace wakesim {

const ParamTable& hogs_params() {
    static const ParamTable t = with_task_uclamp({
        {.name = "count", .type = ParamType::integer, .min = 1, .max = 4096,
         .help = "CPU-bound tasks `hog-0`, `hog-1`, ..., which run forever"},
        {.name = "cpus", .type = ParamType::cpulist, .help = "their allowed CPUs", .absent_means = "all CPUs"},
        {.name = "nice", .type = ParamType::integer, .default_value = "0", .min = -20, .max = 19,
         .help = "their nice value"},
        {.name = "policy", .type = ParamType::choice, .default_value = "normal", .choices = {"normal", "batch", "idle"},
         .help = "their scheduling policy: `SCHED_NORMAL`, `SCHED_BATCH` or `SCHED_IDLE`"},
    });
    return t;
}

const ParamTable& noise_params() {
    static const ParamTable t = with_task_uclamp({
        {.name = "count", .type = ParamType::integer, .min = 1, .max = 4096, .help = "periodic tasks `noise-0`, ..."},
        {.name = "cpus", .type = ParamType::cpulist, .help = "their allowed CPUs", .absent_means = "all CPUs"},
        {.name = "period", .type = ParamType::duration, .min = 1000, .max = kMaxTime,
         .help = "the cycle: a burst of `run`, then a sleep of period − run (a burst slowed by a low clock or a "
                 "busy CPU lengthens the cycle)"},
        {.name = "run", .type = ParamType::duration, .min = 1, .max = kMaxTime,
         .help = "busy time per cycle; shorter than `period`"},
    });
    return t;
}

BackgroundSpec read_background(const JsonNode& w, const Topology& topo, const TaskGroups& groups) {
    BackgroundSpec bg;
    if (auto hogs = w.get("hogs")) {
        const ParamValues p = read_params(*hogs, hogs_params());
        bg.hogs = p.integer("count");
        bg.hog.allowed = read_cpus(*hogs, p, "cpus", topo);
        bg.hog.nice = static_cast<int>(p.integer("nice"));
        bg.hog.policy = read_policy(p);
        apply_task_uclamp(*hogs, p, groups, topo, bg.hog);
    }
    if (auto noise = w.get("noise")) {
        const ParamValues p = read_params(*noise, noise_params());
        bg.noise = p.integer("count");
        bg.noise_period = p.duration_ns("period");
        bg.noise_run = p.duration_ns("run");
        if (bg.noise_run >= bg.noise_period) noise->at("run").fail("expected a burst shorter than the period");
        bg.noise_task.allowed = read_cpus(*noise, p, "cpus", topo);
        apply_task_uclamp(*noise, p, groups, topo, bg.noise_task);
    }
    return bg;
}

void add_background(const BackgroundSpec& bg, WorkloadBuild& b) {
    for (int64_t i = 0; i < bg.hogs; ++i) {
        ProgramTask t;
        t.spec = bg.hog;
        t.spec.comm = "hog-" + std::to_string(i);
        t.background = true;
        t.code = {Op{Op::loop_begin, 0, 0, 0, 0, 0}, Op{Op::run, kNsPerMs, 0, 0, 0, 0}, Op{Op::loop_end, 0, 0, 0, 0, 0}};
        b.tasks.push_back(std::move(t));
    }
    for (int64_t i = 0; i < bg.noise; ++i) {
        ProgramTask t;
        t.spec = bg.noise_task;
        t.spec.comm = "noise-" + std::to_string(i);
        t.background = true;
        t.code = {Op{Op::loop_begin, 0, 0, 0, 0, 0}, Op{Op::run, bg.noise_run, 0, 0, 0, 0},
                  Op{Op::sleep, bg.noise_period - bg.noise_run, 0, 0, 0, 0}, Op{Op::loop_end, 0, 0, 0, 0, 0}};
        b.tasks.push_back(std::move(t));
    }
}

}  // namespace wakesim
