#include "sim/wake_explain.h"

#include <cstdio>

#include "hw/hardware.h"
#include "kernel/sched.h"
#include "kernel/wake_flags.h"

namespace wakesim {

namespace {

std::string cpu(int c) { return "cpu" + std::to_string(c); }
std::string cpu_or_none(int c) { return c < 0 ? std::string("none") : cpu(c); }

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

std::string outcome_text(const SelectOutcomeEv& e) {
    switch (e.outcome) {
        case SelectOutcome::current_cpu: return "WF_CURRENT_CPU and this_cpu allowed -> " + cpu(e.cpu);
        case SelectOutcome::slow_path: return "slow path (sched_balance_find_dst_cpu) -> " + cpu(e.cpu);
        case SelectOutcome::eas: return "";  // told by the feec line
        case SelectOutcome::vcpu_pack: return "sched_vcpu_pack: room there, no idle vCPU woken -> " + cpu(e.cpu);
        case SelectOutcome::sis_target: return "  target " + cpu(e.cpu) + " is idle -> target";
        case SelectOutcome::sis_prev: return "  prev " + cpu(e.cpu) + " is idle and shares the LLC -> prev";
        case SelectOutcome::sis_kthread: return "  waker is a per-CPU kthread alone on prev -> prev";
        case SelectOutcome::sis_recent: return "  recent_used_cpu " + cpu(e.cpu) + " is idle -> recent";
        case SelectOutcome::sis_capacity: return "  select_idle_capacity -> " + cpu_or_none(e.cpu);
        case SelectOutcome::sis_smt: return "  no idle core; prev's SMT sibling " + cpu(e.cpu) + " idle -> sibling";
        case SelectOutcome::sis_fallback:
            switch (e.fallback) {
                case SisFallback::no_llc: return "  no LLC domain -> target";
                case SisFallback::prev_other_cluster: return "  fallback: prev (other cluster) -> " + cpu(e.cpu);
                case SisFallback::recent: return "  fallback: recent_used_cpu -> " + cpu(e.cpu);
                case SisFallback::target:
                case SisFallback::none: return "  fallback: target -> " + cpu(e.cpu);
            }
            return "";
        // Told by the event before: the pinned reason, the policy rule, the idle-CPU scan.
        case SelectOutcome::pinned:
        case SelectOutcome::policy_early:
        case SelectOutcome::policy_affine:
        case SelectOutcome::sis_scan:
        case SelectOutcome::kCount: return "";
    }
    return "";
}

// Who wakes whom: the arguments of select_task_rq_fair(), or of select_task_rq() when the fair
// class is not consulted.
std::string call_text(const SelectFairEv& e) {
    return "wakee " + e.wakee_comm + " prev=cpu" + std::to_string(e.prev) +
           " waker=" + (e.waker >= 0 ? e.waker_comm : std::string("<irq>")) + " this_cpu=cpu" + std::to_string(e.this_cpu) +
           " flags=" + wake_flags_to_string(e.wake_flags);
}

std::string energy(double d) { return std::to_string(static_cast<int64_t>(d)); }

std::string feec_text(const FeecEv& e) {
    switch (e.result) {
        case FeecResult::overutilized:
            return "EAS: root domain overutilized (set when " + cpu(e.overutilized_cpu) +
                   "'s utilisation did not fit its capacity; a root-level load balance clears it) -> symmetric path";
        case FeecResult::no_asym_domain: return "EAS: no asymmetric-capacity domain spans prev -> symmetric path";
        case FeecResult::no_util: return "find_energy_efficient_cpu: no utilisation estimate -> prev " + cpu(e.cpu);
        case FeecResult::util_changed: return "find_energy_efficient_cpu: energy below the base -> prev " + cpu(e.cpu);
        case FeecResult::policy: return "find_energy_efficient_cpu: a policy rule decided before the energy estimate -> " + cpu(e.cpu);
        case FeecResult::prev_kept:
        case FeecResult::best: {
            std::string s = "find_energy_efficient_cpu: prev " + cpu(e.prev) + " " +
                            (e.prev_delta < 0 ? std::string("does not fit") : "+" + energy(e.prev_delta));
            s += e.best_cpu >= 0 ? ", best " + cpu(e.best_cpu) + " +" + energy(e.best_delta) : ", no other candidate";
            return s + (e.result == FeecResult::best ? " -> best " : " -> prev ") + cpu(e.cpu);
        }
    }
    return "";
}

std::string wake_affine_text(const WakeAffineEv& e) {
    std::string s;
    switch (e.idle) {
        case AffineIdle::off: break;
        case AffineIdle::waker_idle: s = "  wake_affine_idle: waker CPU idle (interrupt wake), -> " + cpu_or_none(e.idle_target); break;
        case AffineIdle::sync_alone:
            s = "  wake_affine_idle: sync and the waker is alone on cpu" + std::to_string(e.this_cpu) + " -> this_cpu";
            break;
        case AffineIdle::prev_idle: s = "  wake_affine_idle: prev cpu" + std::to_string(e.prev) + " idle -> prev"; break;
        case AffineIdle::no_decision: s = "  wake_affine_idle: no decision"; break;
    }
    std::string w;
    switch (e.weight) {
        case AffineWeight::not_run: break;
        case AffineWeight::sync_heavier: w = "  wake_affine_weight: sync and the waker's load exceeds its CPU's -> this_cpu"; break;
        case AffineWeight::compared:
            w = "  wake_affine_weight: this_eff=" + std::to_string(static_cast<int64_t>(e.this_eff)) +
                " prev_eff=" + std::to_string(static_cast<int64_t>(e.prev_eff)) + " -> " +
                (e.target == e.this_cpu ? "this_cpu" : "prev");
            break;
    }
    if (s.empty()) return w;
    if (w.empty()) return s;
    return s + "\n" + w;
}

const char* prev_skip_text(PrevSkip why) {
    switch (why) {
        case PrevSkip::is_target: return " is the target";
        case PrevSkip::busy: return " busy";
        case PrevSkip::not_cache_affine: return " idle but not cache-affine";
        case PrevSkip::does_not_fit: return " idle but the wakee does not fit it";
    }
    return "";
}

}  // namespace

std::string describe(const WakeEvent& ev) {
    return std::visit(
        Overloaded{
            [](const SelectFairEv& e) { return "select_task_rq_fair: " + call_text(e); },
            [](const PinnedEv& e) {
                return "select_task_rq: " + call_text(e.call) + "\n  " +
                       (e.migration_disabled ? "migration disabled" : "one allowed CPU") +
                       ": the fair class is not consulted -> " + cpu(e.cpu);
            },
            [](const PolicyRuleEv& e) {
                return "policy rule " + e.rule +
                       (e.hook == PolicyHook::early     ? " (before WF_CURRENT_CPU) -> "
                        : e.hook == PolicyHook::in_feec ? " (in find_energy_efficient_cpu) -> "
                                                        : " (affine branch) -> ") +
                       cpu(e.cpu);
            },
            [](const FeecEv& e) { return feec_text(e); },
            [](const WantAffineEv& e) {
                return "record_wakee: waker flips=" + std::to_string(e.waker_flips) + " wakee flips=" +
                       std::to_string(e.wakee_flips) + " llc_size=" + std::to_string(e.llc_size) +
                       " wake_wide=" + (e.wide ? "yes" : "no") + " want_affine=" + (e.want_affine ? "yes" : "no");
            },
            [](const DomainEv& e) {
                return e.wake_affine ? "domain " + e.name + " spans prev: wake_affine(sync=" + (e.sync ? "1" : "0") + ")"
                                     : "domain " + e.name + ": this_cpu == prev, wake_affine skipped";
            },
            [](const WakeAffineEv& e) { return wake_affine_text(e); },
            [](const SisBeginEv& e) {
                return "select_idle_sibling(prev=" + cpu(e.prev) + ", target=" + cpu(e.target) + ")";
            },
            [](const SisTargetBusyEv& e) {
                if (!e.fits) return "  target " + cpu(e.target) + " usable, but the task does not fit it (task_fits_cpu)";
                return "  target " + cpu(e.target) + " busy (nr_running=" + std::to_string(e.nr_running) +
                       (e.pending ? ", a wakeup already queued on it: ttwu_pending, which idle_cpu() counts" : "") + ")";
            },
            [](const SisPrevEv& e) { return "  prev " + cpu(e.prev) + prev_skip_text(e.why); },
            [](const SelectIdleCpuEv& e) {
                if (e.cpu >= 0)
                    return std::string("  select_idle_cpu (") +
                           (e.idle_core_scan ? "idle-core scan" : "idle-cpu scan, nr_idle_scan=" + std::to_string(e.nr_idle_scan)) +
                           ", " + std::to_string(e.probes) + " probed) -> " + cpu(e.cpu);
                return "  select_idle_cpu found nothing (" + std::to_string(e.probes) +
                       " probed, nr_idle_scan=" + std::to_string(e.nr_idle_scan) + ")";
            },
            [](const SelectOutcomeEv& e) { return outcome_text(e); },
            [](const SelectResultEv& e) {
                return "result: " + cpu(e.cpu) +
                       (e.cpu != e.from ? " (migration from cpu" + std::to_string(e.from) + ")" : std::string(" (no migration)"));
            },
        },
        ev);
}

std::vector<std::string> render(const std::vector<WakeEvent>& events) {
    std::vector<std::string> lines;
    for (const WakeEvent& e : events) {
        const std::string s = describe(e);
        size_t at = 0;
        while (at < s.size()) {
            const size_t nl = s.find('\n', at);
            lines.push_back(s.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
            if (nl == std::string::npos) break;
            at = nl + 1;
        }
    }
    return lines;
}

void WakeExplain::ttwu_woken(const Task& p, int cpu, int, WokenVia via, const SelectResultEv*) {
    if (!following(p) || follow_.queued) return;
    follow_.queued = true;
    follow_.via = via;
    follow_.cpu = cpu;
    const int st = hw_ ? hw_->idle_state(cpu) : -1;
    if (st >= 0) {
        const auto& s = hw_->idle_states()[static_cast<size_t>(st)];
        follow_.idle_state = s.name;
        follow_.idle_exit_ns = s.exit_ns;
        follow_.idle_mwait = s.mwait;
        follow_.idle_polling = s.polling;
    }
}

void WakeExplain::ttwu_wakeup(const Task& p, int, const Task* curr) {
    if (!following(p) || follow_.enqueued) return;
    follow_.enqueued = true;
    follow_.enqueued_at = engine_ ? engine_->now() : at_;
    follow_.curr = curr ? curr->comm : std::string();
}

void WakeExplain::sched_switch(int, const Task* prev, char prev_state, const Task* next) {
    if (!next || !following(*next)) return;
    follow_.switched = true;
    follow_.prev = prev ? prev->comm : std::string();
    follow_.prev_state = prev_state;
}

void WakeExplain::switched_in(int cpu_nr, const Task& t) {
    if (!following(t)) return;
    follow_.ran = true;
    follow_.ran_cpu = cpu_nr;
    follow_.ran_at = engine_ ? engine_->now() : at_;
    if (stop_when_done_ && engine_) engine_->stop();
}

namespace {

// A simulated duration in microseconds to the nanosecond.
std::string micros(Time d) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%lld.%03lld us", static_cast<long long>(d / 1000), static_cast<long long>(d % 1000));
    return buf;
}

// Simulated time since the explained call.
std::string since(Time t, Time from) {
    std::string s = "+";  // appended: GCC 12 warns wrongly (-Wrestrict) on "+" + a string
    s += micros(t - from);
    return s;
}

}  // namespace

std::vector<std::string> WakeExplain::lines() const {
    std::vector<std::string> out = render(events_);
    const WakeFollowUp& f = follow_;
    if (!done_) return out;
    if (f.queued) {
        const std::string c = cpu(f.cpu);
        // The target's idle state decides what the wake costs: its exit latency, and whether
        // the idle task polls its flags (no IPI needed).
        std::string idle;
        if (!f.idle_state.empty()) {
            const char* kind = f.idle_polling ? "polling, " : f.idle_mwait ? "MWAIT, " : "";
            idle = c + " idle in " + f.idle_state + " (" + kind + "exit latency " + micros(f.idle_exit_ns) + ")";
        }
        const std::string idle_tail = idle.empty() ? "" : "; " + idle;
        switch (f.via) {
            case WokenVia::queue: out.push_back("ttwu_queue: the waker enqueues it on " + c + idle_tail); break;
            case WokenVia::queue_ipi:
                out.push_back("ttwu_queue: the waker enqueues it on " + c + " and kicks it with a reschedule IPI" + idle_tail);
                break;
            case WokenVia::queue_poll:
                out.push_back("ttwu_queue: the waker enqueues it on " + c +
                              "; the idle task polls its flags (resched_curr()), no IPI" + idle_tail);
                break;
            case WokenVia::wakelist: out.push_back("ttwu_queue: onto " + c + "'s wake list; its IPI is already on the way"); break;
            case WokenVia::wakelist_ipi:
                out.push_back("ttwu_queue: onto " + c + "'s wake list, with a call-function IPI" + idle_tail);
                break;
            case WokenVia::wakelist_poll:
                out.push_back("ttwu_queue: onto " + c + "'s wake list; the idle task polls its flags (set_nr_if_polling()), no IPI" +
                              idle_tail);
                break;
            case WokenVia::running:
            case WokenVia::delayed: break;  // no placement: never an explained call
        }
    }
    if (f.enqueued)
        out.push_back("  enqueued " + since(f.enqueued_at, at_) + ", " +
                      (f.curr.empty() ? cpu(f.cpu) + " idle" : cpu(f.cpu) + " running " + f.curr));
    if (f.ran)
        out.push_back("  runs on " + cpu(f.ran_cpu) + " " + since(f.ran_at, at_) + " (the wake latency), " +
                      (!f.switched || f.prev.empty() ? std::string("switched in from idle")
                       : f.prev_state == 'R'         ? "preempting " + f.prev
                                                     : "after " + f.prev + (f.prev_state == 'X' ? " exited" : " slept")));
    else
        out.push_back("  had not run when the run ended");
    return out;
}

void WakeFinder::ttwu_woken(const Task& p, int, int, WokenVia, const SelectResultEv* placement) {
    if (placement || found_ || engine_->now() < after_) return;
    if (wakee_.empty() || p.comm == wakee_) ++skipped_;
}

void WakeFinder::select_task_rq(const SelectResultEv& e) {
    if (found_ || engine_->now() < after_) return;
    const std::string& comm = sched_->task(e.wakee).comm;
    const auto id = static_cast<size_t>(e.wakee);
    if (seen_.size() <= id) seen_.resize(id + 1, 0);
    if (!seen_[id]) {
        seen_[id] = 1;
        woken_.push_back(comm);
    }
    if (!wakee_.empty() && comm != wakee_) return;
    if (++matches_ < nth_) return;
    found_ = sched_->select_calls();
    engine_->stop();
}

}  // namespace wakesim
