// wf_current_cpu: WF_CURRENT_CPU at request and reply wake sites (select_task_rq_fair returns
// this_cpu before wake_wide and the domain walk, when the waker's CPU is allowed). Origin: Andrei
// Vagin's seccomp series (2023, __wake_up_on_current_cpu / complete_on_current_cpu); proposed for
// the FUSE reply wake in "fuse: Wake requests on the same cpu" (Bernd Schubert, Oct 2025).
// Wins for strict request/reply handoffs (no IPI, warm caches, one CPU at high frequency); loses
// when the waker keeps running after the wake (the wakee then waits on a busy CPU).
#include "policies/registry.h"

namespace wakesim {

void apply_wf_current_cpu(Policy& p, const PolicyArgs&) { p.site_mode = SiteFlagMode::current_cpu; }

}  // namespace wakesim
