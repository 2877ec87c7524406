// `wakesim compare`'s verdicts and intervals on runs whose figures the test sets.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/compare.h"
#include "experiment/scenario.h"

using namespace wakesim;

namespace {

Scenario two_policies() {
    return parse_scenario(nlohmann::json::parse(R"({"machine": "kvm-2vcpu", "workload": {"kind": "pipe", "loops": 10},
                                                    "policies": ["plain", "wf_sync"], "run": {"seeds": [1, 2, 3]}})"),
                          "c.json");
}

RunRecord run(const std::string& policy, uint64_t seed, double p50, double migrations_per_wakeup) {
    RunRecord r;
    r.case_name = "default";
    r.policy = policy;
    r.seed = seed;
    r.result.completed = true;
    r.result.metrics.set(Metric::wake_latency_ns_p50, static_cast<int64_t>(p50));
    r.result.metrics.set(Metric::migrations_per_wakeup, migrations_per_wakeup);
    return r;
}

const MetricComparison& row(const Comparison& c, const std::string& policy, Metric m) {
    for (const auto& pc : c.rows)
        if (pc.policy == policy)
            for (const auto& mc : pc.metrics)
                if (mc.metric == m) return mc;
    FAIL("no row");
    throw;
}

}  // namespace

TEST_CASE("compare: a percentile one histogram bucket apart with no spread is no verdict, and a fall to zero stops at -100%",
          "[compare]") {
    const Scenario sc = two_policies();
    CompareOptions opt;
    opt.metrics = {Metric::wake_latency_ns_p50, Metric::migrations_per_wakeup};
    // p50 2559 ns in every plain run, 2687 (the next bucket: +5%) or 3583 (+40%) in every other;
    // migrations per wakeup about 0.25 with some spread, and none with the other policy.
    std::vector<RunRecord> near, far;
    for (uint64_t s = 1; s <= 3; ++s) {
        const double m = 0.249 + 0.001 * static_cast<double>(s);
        near.push_back(run("plain", s, 2559, m));
        far.push_back(run("plain", s, 2559, m));
    }
    for (uint64_t s = 1; s <= 3; ++s) {
        near.push_back(run("wf_sync", s, 2687, 0));
        far.push_back(run("wf_sync", s, 3583, 0));
    }
    const Comparison cn = compare_runs(sc, near, opt), cf = compare_runs(sc, far, opt);
    const MetricComparison& step = row(cn, "wf_sync", Metric::wake_latency_ns_p50);
    CHECK(step.verdict == Verdict::inconclusive);
    CHECK(step.within_bucket);
    CHECK(comparison_json(sc, cn)["comparisons"][1]["metrics"]["wake_latency_ns.p50"]["within_histogram_bucket"] == true);
    const MetricComparison& jump = row(cf, "wf_sync", Metric::wake_latency_ns_p50);
    CHECK(jump.verdict == Verdict::worse);  // several buckets: a difference
    CHECK_FALSE(jump.within_bucket);
    const MetricComparison& none = row(cn, "wf_sync", Metric::migrations_per_wakeup);
    REQUIRE(none.has_delta);
    CHECK(none.delta_pct == Approx(-100));
    CHECK(none.delta_lo >= -100.0);  // Welch's interval would reach below: no policy migrates less than never
    CHECK(none.verdict == Verdict::better);
}
