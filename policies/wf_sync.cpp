// wf_sync: WF_SYNC at every sync-capable wake site ("the waker is about to sleep"). Only a hint:
// wake_affine_idle() then prefers the waker's CPU when the waker is alone there, but
// select_idle_sibling() still moves the wakee to an idle prev or scan hit. Wins when the LLC is
// busy (the pair stacks instead of waiting for a remote CPU); changes little on an idle LLC.
#include "policies/registry.h"

namespace wakesim {

void apply_wf_sync(Policy& p, const PolicyArgs&) { p.site_mode = SiteFlagMode::sync; }

}  // namespace wakesim
