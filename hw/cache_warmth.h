// Where a task's working set lives in the caches and how long ago it left: what the hardware
// needs to price a refill when the task runs again. The task carries it; only hw/ reads it.
#pragma once
#include <cstdint>

#include "engine/engine.h"

namespace wakesim {

struct CacheWarmth {
    int64_t footprint_kib = 0;  // working set refilled after running elsewhere
    int cpu = -1;               // where it was last warm (-1: never ran)
    Time left_at = 0;           // when the task left that CPU
    Time busy_at_leave = 0;     // that CPU's busy time when the task left
};

}  // namespace wakesim
