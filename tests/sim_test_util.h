// Shared helpers of the wake-path and policy tests: small scenarios built as JSON text, run
// through the real loader and simulator, with the recorded decision events of one wakeup.
#pragma once
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"
#include "kernel/observer.h"
#include "metrics/metrics.h"
#include "metrics/run_metrics.h"
#include "sim/wake_explain.h"

namespace wakesim::testutil {

using json = nlohmann::json;

inline json doc(const std::string& text) { return json::parse(text); }

// A machine of one LLC with n CPUs, no SMT, with the 2-vCPU guest's costs.
inline std::string flat(int n) {
    return R"({"topology": {"name": "flat)" + std::to_string(n) + R"(", "cores_per_cluster": )" + std::to_string(n) +
           R"(}, "profile": {"base": "kvm-2vcpu"}})";
}

// A program task pinned to `cpu` that computes forever.
inline std::string hog(const std::string& name, int cpu) {
    return R"({"name": ")" + name + R"(", "cpus": ")" + std::to_string(cpu) +
           R"(", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]})";
}

// The decision events of one explained select_task_rq call (sim/wake_explain.h), with
// accessors for what the wake-path tests check. Accessors of an event that was not sent return
// nullptr (or -1 / "" for plain values).
struct Outcome {
    RunMetrics m;
    bool completed = false;
    std::vector<WakeEvent> events;  // decision events of the explained select_task_rq call
    WakeFollowUp follow;            // what became of that wakeup: queued, enqueued, run
    Time at = 0;                    // when the explained call was made

    uint64_t n(Metric k) const { return static_cast<uint64_t>(m.integer(k)); }
    double util(int cpu) const { return m.per_cpu(Metric::cpu_util, cpu); }
    bool explained() const { return !events.empty(); }

    template <class T>
    const T* first() const {
        for (const auto& e : events)
            if (const T* p = std::get_if<T>(&e)) return p;
        return nullptr;
    }
    template <class T>
    const T* last() const {
        for (auto it = events.rbegin(); it != events.rend(); ++it)
            if (const T* p = std::get_if<T>(&*it)) return p;
        return nullptr;
    }
    template <class T>
    bool has() const {
        return first<T>() != nullptr;
    }

    // select_task_rq_fair's arguments; nullptr when the fair class was not consulted.
    const SelectFairEv* fair() const { return first<SelectFairEv>(); }
    int prev() const {
        const SelectFairEv* f = fair();
        return f ? f->prev : -1;
    }
    int this_cpu() const {
        const SelectFairEv* f = fair();
        return f ? f->this_cpu : -1;
    }
    std::string wakee() const {
        const SelectFairEv* f = fair();
        return f ? f->wakee_comm : std::string();
    }
    std::string waker() const {
        const SelectFairEv* f = fair();
        return f ? f->waker_comm : std::string();
    }
    uint32_t flags() const {
        const SelectFairEv* f = fair();
        return f ? f->wake_flags : 0;
    }
    const PinnedEv* pinned() const { return first<PinnedEv>(); }
    const PolicyRuleEv* policy_rule() const { return first<PolicyRuleEv>(); }
    const WantAffineEv* want_affine() const { return first<WantAffineEv>(); }
    const DomainEv* domain() const { return first<DomainEv>(); }
    const WakeAffineEv* wake_affine() const { return first<WakeAffineEv>(); }
    const SisBeginEv* sis() const { return first<SisBeginEv>(); }
    const SisPrevEv* prev_skipped() const { return first<SisPrevEv>(); }
    const SelectIdleCpuEv* idle_scan() const { return first<SelectIdleCpuEv>(); }
    // Where select_task_rq ended, and on which CPU.
    const SelectOutcomeEv* outcome_ev() const { return last<SelectOutcomeEv>(); }
    SelectOutcome outcome() const {
        const SelectOutcomeEv* o = outcome_ev();
        return o ? o->outcome : SelectOutcome::kCount;
    }
    int outcome_cpu() const {
        const SelectOutcomeEv* o = outcome_ev();
        return o ? o->cpu : -1;
    }
    SisFallback fallback() const {
        const SelectOutcomeEv* o = outcome_ev();
        return o ? o->fallback : SisFallback::none;
    }
    // What select_task_rq returned, and whether that moves the wakee.
    const SelectResultEv* result() const { return last<SelectResultEv>(); }
    int result_cpu() const {
        const SelectResultEv* r = result();
        return r ? r->cpu : -1;
    }
    bool stays_on(int cpu) const {
        const SelectResultEv* r = result();
        return r && r->cpu == cpu && r->from == cpu;
    }
    bool moves(int from, int to) const {
        const SelectResultEv* r = result();
        return r && r->from == from && r->cpu == to;
    }
};

// Runs the scenario's first case with the policy labelled `policy` (default: the first) and its
// first seed, checking the scheduler's invariants at the end. With `explain_nth`, records the
// decision events of that select_task_rq call (1-based, counted from the start of the run). With
// `trace`, writes the run's ftrace-style trace there.
inline Outcome simulate(const json& d, const std::string& policy = "", uint64_t explain_nth = 0,
                        std::FILE* trace = nullptr) {
    const Scenario sc = parse_scenario(d, "test.json");
    const Policy* pol = &sc.policies.front();
    for (const auto& p : sc.policies)
        if (p.name == policy) pol = &p;
    if (!policy.empty() && pol->name != policy) FAIL("no policy labelled " << policy);
    RunSpec spec = make_run_spec(sc, sc.cases.front(), *pol, sc.seeds.front());
    spec.check_invariants = true;
    spec.trace = trace;
    WakeExplain ex;
    if (explain_nth) {
        spec.explain = &ex;
        spec.explain_wakeup = explain_nth;
    }
    const RunResult r = run_simulation(spec);
    return Outcome{r.metrics, r.completed, ex.events(), ex.follow_up(), ex.at()};
}

// The k-th select_task_rq call (1-based) after call `after` whose wakee is `comm`, under the
// policy labelled `policy`: the index to give simulate(); 0 when there is none.
inline uint64_t nth_wakeup_of(const json& d, const std::string& comm, int k = 1, const std::string& policy = "",
                              uint64_t after = 0) {
    for (uint64_t w = after + 1; w <= after + 1000; ++w) {
        const Outcome r = simulate(d, policy, w);
        if (!r.explained()) return 0;
        if (r.wakee() == comm && --k == 0) return w;
    }
    return 0;
}

// Every select_task_rq call that wakes `wakee` from `waker` (both by comm), explained, in order.
inline std::vector<Outcome> wakeups_of(const json& d, const std::string& wakee, const std::string& waker,
                                       const std::string& policy = "") {
    std::vector<Outcome> out;
    for (uint64_t w = 1; w <= 10000; ++w) {
        Outcome r = simulate(d, policy, w);
        if (!r.explained()) break;
        if (r.wakee() == wakee && r.waker() == waker) out.push_back(std::move(r));
    }
    return out;
}

// simulate() with an ftrace-style trace, returned as text; the run must complete.
inline std::string traced_run(const json& d) {
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* f = open_memstream(&buf, &len);
    REQUIRE(f);
    const Outcome r = simulate(d, "", 0, f);
    std::fclose(f);
    std::string text(buf, len);
    std::free(buf);
    REQUIRE(r.completed);
    return text;
}


}  // namespace wakesim::testutil

namespace Catch {
template <>
struct StringMaker<wakesim::SelectOutcome> {
    static std::string convert(wakesim::SelectOutcome o) { return wakesim::to_string(o); }
};
}  // namespace Catch
