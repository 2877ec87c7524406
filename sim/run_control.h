// What a workload reports while it runs: finished operations (perf's "ops"), and when it is done.
// The simulation uses it to end warm-up and to stop.
#pragma once
#include <cstdint>
#include <functional>

#include "engine/engine.h"

namespace wakesim {

class RunControl {
public:
    // Called by workloads for each finished operation (a pipe round trip, a message, a request).
    void count_op(uint64_t bytes = 0) {
        ++ops_;
        if (clock_) last_op_time_ = clock_->now();
        bytes_ += bytes;
        if (ops_ == warmup_ops_ && on_warmup_) on_warmup_();
        if (stop_ops_ && ops_ >= stop_ops_ && on_stop_) on_stop_();
    }
    void set_clock(const Engine* e) { clock_ = e; }
    Time last_op_time() const { return last_op_time_; }
    const Time* last_op_time_ptr() const { return &last_op_time_; }
    uint64_t ops() const { return ops_; }
    uint64_t bytes() const { return bytes_; }
    void set_warmup(uint64_t ops, std::function<void()> f) {
        warmup_ops_ = ops;
        on_warmup_ = std::move(f);
    }
    // The workload's foreground tasks have all exited.
    void finish() {
        if (on_finish_) on_finish_();
    }
    void set_finish(std::function<void()> f) { on_finish_ = std::move(f); }
    // The workload's foreground tasks can no longer finish: each has exited or sleeps until
    // another of them acts.
    void deadlock() {
        if (on_deadlock_) on_deadlock_();
    }
    void set_deadlock(std::function<void()> f) { on_deadlock_ = std::move(f); }
    void set_stop(uint64_t ops, std::function<void()> f) {
        stop_ops_ = ops;
        on_stop_ = std::move(f);
    }

private:
    const Engine* clock_ = nullptr;
    Time last_op_time_ = 0;
    uint64_t ops_ = 0, bytes_ = 0;
    uint64_t warmup_ops_ = 0, stop_ops_ = 0;
    std::function<void()> on_warmup_, on_stop_, on_finish_, on_deadlock_;
};

}  // namespace wakesim
