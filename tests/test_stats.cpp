// The statistics of `wakesim compare` against a textbook example: Student's (1908) sleep data
// (Cushny and Peebles: extra hours of sleep of 10 patients under two drugs), as R's `t.test`
// analyses it: the one-sample interval of group 1, and Welch's two-sample test (R's default).
#include <catch2/catch.hpp>
#include <vector>

#include "experiment/stats.h"

using namespace wakesim;

namespace {
const std::vector<double> kDrug1{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
const std::vector<double> kDrug2{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};
}  // namespace

TEST_CASE("stats: Student t interval of a mean (sleep data, group 1)", "[stats]") {
    // R: t.test(sleep$extra[1:10]): mean 0.75, 95 percent CI -0.5297804 2.0297804.
    const SampleStats s = sample_stats(kDrug1);
    CHECK(s.n == 10);
    CHECK(s.mean == Approx(0.75));
    CHECK(s.sd == Approx(1.789010).epsilon(1e-6));
    CHECK(s.lo() == Approx(-0.5297804).epsilon(1e-6));
    CHECK(s.hi() == Approx(2.0297804).epsilon(1e-6));
    // One value: no spread, no interval.
    const SampleStats one = sample_stats({3.0});
    CHECK(one.mean == 3.0);
    CHECK(one.sd == 0);
    CHECK(one.ci95 == 0);
}

TEST_CASE("stats: Welch's t-test (sleep data, extra ~ group)", "[stats]") {
    // R: t.test(extra ~ group, data = sleep): t = -1.8608, df = 17.776, p-value = 0.07939,
    // 95 percent CI -3.3654832 0.2054832.
    const WelchResult w = welch_test(kDrug1, kDrug2);
    REQUIRE(w.defined);
    CHECK(w.diff == Approx(-1.58));
    CHECK(w.t == Approx(-1.8608).epsilon(1e-4));
    CHECK(w.df == Approx(17.776).epsilon(1e-4));
    CHECK(w.p == Approx(0.07939).epsilon(1e-3));
    CHECK(w.ci95_lo == Approx(-3.3654832).epsilon(1e-6));
    CHECK(w.ci95_hi == Approx(0.2054832).epsilon(1e-6));
    // Symmetric.
    const WelchResult r = welch_test(kDrug2, kDrug1);
    CHECK(r.t == Approx(1.8608).epsilon(1e-4));
    CHECK(r.p == Approx(w.p));
    // Undefined without spread or with one value a side.
    CHECK_FALSE(welch_test({1, 1, 1}, {2, 2, 2}).defined);
    CHECK_FALSE(welch_test({1}, {2, 3}).defined);
}

TEST_CASE("stats: seeds needed grow as the difference shrinks, and reach significance", "[stats]") {
    // The sleep data's difference (p = 0.079 with 10 each) needs more than 10 seeds per side.
    const size_t n = seeds_needed(-1.58, 1.789010, 2.002249);
    CHECK(n > 10);
    CHECK(n < 40);
    CHECK(seeds_needed(-0.79, 1.789010, 2.002249) > 3 * n);
    CHECK(seeds_needed(0, 1, 1) == 0);
    // With that many values a side drawn with the same means and sds, the test is significant.
    std::vector<double> a, b;
    for (size_t i = 0; i < n; ++i) {
        a.push_back(kDrug1[i % 10]);
        b.push_back(kDrug2[i % 10]);
    }
    CHECK(welch_test(a, b).p < 0.05);
}
