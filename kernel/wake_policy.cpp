#include "kernel/wake_policy.h"

namespace wakesim {

uint32_t Policy::site_flags(const WakeSite& site) const {
    switch (site_mode) {
        case SiteFlagMode::kernel:
            return site.kernel_flags;
        case SiteFlagMode::sync:
            return site.sync_capable ? (site.kernel_flags | WF_SYNC) : site.kernel_flags;
        case SiteFlagMode::current_cpu:
            if (site.role == SiteRole::request || site.role == SiteRole::reply)
                return (site.kernel_flags & ~uint32_t{WF_SYNC}) | WF_CURRENT_CPU;
            return site.kernel_flags;
    }
    return site.kernel_flags;
}

void Policy::on_task_created(Task& t) const {
    if (server_sched_idle && t.role == TaskRole::server) t.policy = SchedPolicy::idle;
    if (t.role == TaskRole::requester) t.seesaw_bits |= seesaw_requester_bits;
    if (t.role == TaskRole::server) t.seesaw_bits |= seesaw_server_bits;
}

void Policy::on_block(Task& t) const {
    // migrate_disable() around the requester's wait: its wakeup cannot move it.
    if (migrate_disable_wait && t.role == TaskRole::requester) t.migration_disabled = true;
}

void Policy::on_run(Task& t) const {
    if (migrate_disable_wait && t.role == TaskRole::requester) t.migration_disabled = false;
}

}  // namespace wakesim
