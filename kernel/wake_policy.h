// A wake policy: the wake flags used at each wake site, placement rules that run at the kernel's
// hook points inside select_task_rq_fair, and task attributes. Named policies are compositions of
// these parts, so a scenario can compose its own (policies/registry.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel/task.h"
#include "kernel/wake_flags.h"

namespace wakesim {

class Scheduler;
class WakeExplain;

// What a placement rule sees: the kernel's select_task_rq_fair arguments plus the waker.
struct SelectCtx {
    const Scheduler& sched;
    const Task& p;         // the wakee
    const Task* waker;     // `current`, nullptr for a wake from interrupt/timer context
    int this_cpu;
    int prev;
    uint32_t wake_flags;
    bool sync;
    WakeExplain* explain;  // may be null
};

class PlacementRule {
public:
    virtual ~PlacementRule() = default;
    virtual std::string name() const = 0;
    // After record_wakee, before the WF_CURRENT_CPU check. Return a CPU to place the wakee
    // there, or -1 to continue with the kernel's path.
    virtual int early(const SelectCtx&) const { return -1; }
    // Inside the first SD_WAKE_AFFINE domain spanning prev, after wake_affine() chose new_cpu.
    // Return a CPU to skip select_idle_sibling, or -1.
    virtual int after_wake_affine(const SelectCtx&, int /*new_cpu*/) const { return -1; }
};

// How a policy changes the flags at wake sites.
enum class SiteFlagMode : uint8_t {
    kernel,       // what mainline passes
    sync,         // WF_SYNC at every sync-capable site
    current_cpu,  // WF_CURRENT_CPU at request and reply sites
};

struct PolicyParam {
    std::string name;
    std::string value;  // as text, for reports
    std::string help;
};

class Policy {
public:
    std::string name;
    std::string description;
    SiteFlagMode site_mode = SiteFlagMode::kernel;
    std::vector<std::shared_ptr<const PlacementRule>> rules;
    bool server_sched_idle = false;     // server-role tasks run SCHED_IDLE
    bool migrate_disable_wait = false;  // a requester cannot migrate while it waits
    // Seesaw marks set on tasks at creation (see policies/seesaw.cpp).
    uint8_t seesaw_requester_bits = 0;
    uint8_t seesaw_server_bits = 0;
    std::vector<PolicyParam> params;

    uint32_t site_flags(const WakeSite& site) const;
    void on_task_created(Task& t) const;
    void on_block(Task& t) const;  // the task is about to sleep
    void on_run(Task& t) const;    // the task got the CPU back
};

}  // namespace wakesim
