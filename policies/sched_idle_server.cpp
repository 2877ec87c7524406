// sched_idle_server: server threads (FUSE ring threads, pipe servers) run SCHED_IDLE. A CPU that
// runs only SCHED_IDLE tasks counts as idle for placement (sched_idle_cpu), and any normal wakee
// preempts them at once. Discussed for fuse-over-io-uring ring threads. Wins when requesters
// should never wait behind servers; loses when the server's work is on the critical path.
#include "policies/registry.h"

namespace wakesim {

void apply_sched_idle_server(Policy& p, const PolicyArgs&) { p.server_sched_idle = true; }

}  // namespace wakesim
