// Statistics over seeds: the Student t interval of a mean, Welch's t-test of two means (unequal
// variances), and the number of seeds a difference would need to reach significance. Boost.Math
// gives the t distribution's quantiles and tails.
#pragma once
#include <cstddef>
#include <vector>

namespace wakesim {

struct SampleStats {
    size_t n = 0;
    double mean = 0;
    double sd = 0;    // sample standard deviation (n - 1 in the denominator); 0 with one value
    double ci95 = 0;  // half-width of the 95% Student t interval of the mean; 0 with one value
    double lo() const { return mean - ci95; }
    double hi() const { return mean + ci95; }
};
SampleStats sample_stats(const std::vector<double>& v);

// Welch's t-test of mean(a) - mean(b) (two-sided), with the 95% interval of the difference.
struct WelchResult {
    bool defined = false;  // false: a side has fewer than 2 values, or both have no spread
    double diff = 0;       // mean(a) - mean(b)
    double t = 0, df = 0, p = 1;
    double ci95_lo = 0, ci95_hi = 0;  // of diff
};
WelchResult welch_test(const std::vector<double>& a, const std::vector<double>& b);

// The seeds per side that a two-sided test at alpha = 0.05 needs to detect a true difference
// `diff` with 80% power when the sides' standard deviations are sd_a and sd_b (the t-based
// normal approximation, iterated on the degrees of freedom). 0 when diff is 0.
size_t seeds_needed(double diff, double sd_a, double sd_b);

}  // namespace wakesim
