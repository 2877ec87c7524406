// What the hardware reports as it changes state, like the power tracepoints: frequency changes
// and idle-state entry and exit. The ftrace writer (sim/trace) implements it.
#pragma once
#include <cstdint>

#include "engine/engine.h"

namespace wakesim {

class HwObserver {
public:
    virtual ~HwObserver() = default;
    virtual void cpu_frequency(Time t, int cpu, int64_t khz) = 0;
    virtual void cpu_idle(Time t, int cpu, int state) = 0;  // state -1: leaving idle
};

}  // namespace wakesim
