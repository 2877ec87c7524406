// plain: today's kernel (v6.19). Every wake site passes the flags mainline passes (pipes WF_SYNC,
// FUSE request and reply plain wake_up), and select_task_rq_fair runs unmodified.
#include "policies/registry.h"

namespace wakesim {

void apply_plain(Policy&, const PolicyArgs&) {}

}  // namespace wakesim
