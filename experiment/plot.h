// `wakesim plot`: a figure from sweep outputs (JSON Lines of `wakesim sweep`): one metric against
// one axis, a line per policy (or case, or the value of another axis), each point the mean over
// seeds with its 95% confidence interval (Student's t) as an error bar. This file turns the lines
// into a gnuplot script with its data inline; the command runs gnuplot (Debian: gnuplot-nox).
#pragma once
#include <string>
#include <vector>

namespace wakesim {

struct PlotOptions {
    std::string x;         // an axis pointer of the sweep ("/workload/loops"), or its last part ("loops")
    std::string y;         // a numeric metric
    std::string by = "policy";  // "policy", "case" or an axis
    std::string out;       // .svg or .png
    std::string only_case, only_policy;  // when set, the runs of that case / policy only
};

// InputError for an unknown axis or metric, an output that is neither .svg nor .png, or points
// that differ in an axis that is neither --x nor --by (the figure would mix them).
std::string plot_script(const std::vector<std::string>& files, const PlotOptions& opt);

}  // namespace wakesim
