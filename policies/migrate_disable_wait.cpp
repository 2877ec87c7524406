// migrate_disable_wait: the requester calls migrate_disable() while it waits for its reply (an
// idea from the FUSE threads), so select_task_rq() skips the fair class and the reply wakes it on
// the CPU it slept on. Wins when the requester's CPU stays free; loses when something else runs
// there (the requester cannot escape to an idle CPU).
#include "policies/registry.h"

namespace wakesim {

void apply_migrate_disable_wait(Policy& p, const PolicyArgs&) { p.migrate_disable_wait = true; }

}  // namespace wakesim
