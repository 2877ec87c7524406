// `wakesim sweep`: a sweep file names a base scenario and axes; each axis sets scenario fields by
// JSON pointer (RFC 6901) to each of its values. Axes combine as a cartesian product; a "zip"
// axis moves several pointers together (one value of each per step). Every point is a scenario,
// validated before anything runs; its runs are (case, policy, seed) as in `wakesim run`.
//
// Runs are numbered point by point, then case, policy and seed. Each finished run is one JSON line
// of the output (JSON Lines), written whole and flushed; lines are written in run order whatever
// the number of threads, so the file is byte-identical for any -j. `--resume` keeps the complete
// lines of an earlier, interrupted output and runs only the missing runs; `--shard K/N` runs the
// runs whose number is K-1 modulo N; `wakesim merge` joins shard outputs into the file one
// unsharded run writes.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiment/scenario.h"
#include "experiment/simulation.h"

namespace wakesim {

// A point keeps its scenario's document, not the parsed scenario (a machine's tables each): a
// sweep of thousands of points on a large machine must fit in memory. Every point was parsed once
// when the sweep was loaded, so scenario() cannot fail on a user's mistake.
struct SweepPoint {
    nlohmann::json axes = nlohmann::json::object();  // pointer -> value at this point
    nlohmann::json doc;                              // the point's scenario document
    std::vector<std::string> case_names, policy_names;
};

struct SweepRunRef {
    size_t point = 0;
    size_t case_index = 0, policy_index = 0;
    uint64_t seed = 0;
};

struct Sweep {
    std::string file, name, description;
    std::string id;  // a hash of the sweep file and its base scenario: outputs of one sweep share it
    std::string base_file;  // where the points' relative paths resolve from
    std::vector<SweepPoint> points;
    std::vector<SweepRunRef> runs;  // in run order
    // Point `p`'s scenario, parsed anew.
    Scenario scenario(size_t p) const;
};

// Errors are InputError naming the sweep file and the pointer of the bad axis, value or key.
Sweep load_sweep(const std::string& path);

struct SweepOptions {
    int jobs = 1;
    std::string out;       // the JSON Lines file
    bool resume = false;   // keep the runs already in `out`
    bool force = false;    // overwrite `out`
    size_t shard_k = 1, shard_n = 1;
};

struct SweepTally {
    size_t total = 0;    // runs of this shard
    size_t kept = 0;     // already in the output (--resume)
    size_t ran = 0;
};

// Runs the sweep's missing runs; `progress` (may be empty) is called after each run with the
// runs done so far and the total, from the writing thread.
SweepTally run_sweep(const Sweep& sw, const SweepOptions& opt,
                     const std::function<void(size_t done, size_t total)>& progress = {});

// The JSON line of run `index` (without its newline).
std::string sweep_line(const Sweep& sw, size_t index, const RunResult& r);

// The run lines of `files` (one sweep's output, or its shards' outputs), by run number. InputError
// for a directory, lines of different sweeps, a run present twice, a truncated or malformed line.
struct SweepLines {
    std::map<size_t, std::string> by_run;
    size_t runs = 0;  // how many runs the sweep has (each line says)
};
SweepLines read_sweep_outputs(const std::vector<std::string>& files);

// `wakesim merge`: the lines of `files` in run order, as read_sweep_outputs() checks them;
// `missing` (may be null) is set to how many of the sweep's runs none of the files holds.
std::string merge_sweep_outputs(const std::vector<std::string>& files, size_t* missing = nullptr);

// "K/N" with 1 <= K <= N; InputError otherwise.
void parse_shard(const std::string& text, size_t& k, size_t& n);

}  // namespace wakesim
