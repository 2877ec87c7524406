#include "experiment/stats.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace wakesim {

namespace {
double t_quantile_upper(double df, double tail) {
    boost::math::students_t dist(df);
    return boost::math::quantile(boost::math::complement(dist, tail));
}
}  // namespace

SampleStats sample_stats(const std::vector<double>& v) {
    SampleStats s;
    s.n = v.size();
    if (v.empty()) return s;
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    if (v.size() < 2) return s;
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
    s.ci95 = t_quantile_upper(static_cast<double>(v.size() - 1), 0.025) * s.sd / std::sqrt(static_cast<double>(v.size()));
    return s;
}

WelchResult welch_test(const std::vector<double>& a, const std::vector<double>& b) {
    WelchResult w;
    const SampleStats sa = sample_stats(a), sb = sample_stats(b);
    w.diff = sa.mean - sb.mean;
    if (sa.n < 2 || sb.n < 2) return w;
    const double va = sa.sd * sa.sd / static_cast<double>(sa.n), vb = sb.sd * sb.sd / static_cast<double>(sb.n);
    const double se2 = va + vb;
    if (!(se2 > 0)) return w;
    const double se = std::sqrt(se2);
    w.defined = true;
    w.t = w.diff / se;
    // Welch–Satterthwaite degrees of freedom.
    w.df = se2 * se2 / (va * va / static_cast<double>(sa.n - 1) + vb * vb / static_cast<double>(sb.n - 1));
    boost::math::students_t dist(w.df);
    w.p = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(w.t))));
    const double q = t_quantile_upper(w.df, 0.025);
    w.ci95_lo = w.diff - q * se;
    w.ci95_hi = w.diff + q * se;
    return w;
}

size_t seeds_needed(double diff, double sd_a, double sd_b) {
    if (diff == 0) return 0;
    const double var = sd_a * sd_a + sd_b * sd_b;
    if (!(var > 0)) return 2;
    size_t n = 2;
    for (int iter = 0; iter < 100; ++iter) {
        const double df = std::max(1.0, 2.0 * static_cast<double>(n) - 2.0);
        const double k = t_quantile_upper(df, 0.025) + t_quantile_upper(df, 0.20);
        const double want = std::ceil(k * k * var / (diff * diff));
        const size_t next = std::max<size_t>(2, want > 1e9 ? size_t{1000000000} : static_cast<size_t>(want));
        if (next == n) break;
        n = next;
    }
    return n;
}

}  // namespace wakesim
