// `wakesim sweep`, `merge`, `compare`, `baseline` and `check`, run as child processes on tiny
// inputs: a sweep's output is the same for any -j, after a resume from a cut file, and from
// merged shards; bad sweep files are one line with exit 2; `compare` prints Δ%, its interval
// and a verdict and flags a policy without effect; `check` fails on an injected regression.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"

using namespace wakesim::clitest;

namespace {

// 2 x 2 points (one cartesian axis, one zipped pair) x 2 policies x 2 seeds = 16 short runs.
const char* const kSweep = R"({
  "name": "tiny-sweep",
  "description": "pipe on 8 cores in LLCs of 2 or 4; 300 or 400 loops",
  "scenario": {
    "machine": {"topology": {"name": "8c", "llcs_per_node": 2, "cores_per_cluster": 4}, "profile": {"base": "altra-80"}},
    "workload": {"kind": "pipe", "loops": 300},
    "policies": ["plain"],
    "run": {"warmup_ops": 50, "seeds": [1]},
    "cases": [{"name": "unpinned"}]
  },
  "policies": ["plain", "reciprocal_sync"],
  "seeds": [1, 2],
  "axes": [
    {"zip": [{"pointer": "/machine/topology/cores_per_cluster", "values": [2, 4]},
             {"pointer": "/machine/topology/llcs_per_node", "values": [4, 2]}]},
    {"pointer": "/workload/loops", "values": [300, 400]}
  ]
})";

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

}  // namespace

TEST_CASE("sweep: one line per run with its axis values, the same bytes for -j 1 and -j 2", "[sweep][cli]") {
    TempDir tmp;
    const std::string sweep = tmp.file("s.json");
    write_file(sweep, kSweep);
    const CmdResult a = run_wakesim("sweep " + shell_quote(sweep) + " -j 1 -q -o " + shell_quote(tmp.file("a.jsonl")));
    INFO(a.out);
    REQUIRE(a.rc == 0);
    const CmdResult b = run_wakesim("sweep " + shell_quote(sweep) + " -j 2 -o " + shell_quote(tmp.file("b.jsonl")));
    INFO(b.out);
    REQUIRE(b.rc == 0);
    CHECK(contains(b.out, "16 runs in this shard, 0 kept from the output, 16 run"));
    const std::string out = read_file(tmp.file("a.jsonl"));
    CHECK(out == read_file(tmp.file("b.jsonl")));
    const auto lines = lines_of(out);
    REQUIRE(lines.size() == 16);
    std::map<std::string, int> seen;
    for (size_t i = 0; i < lines.size(); ++i) {
        const auto j = nlohmann::json::parse(lines[i]);
        CHECK(j.at("run") == i);
        CHECK(j.at("runs") == 16);
        CHECK(j.at("sweep") == "tiny-sweep");
        const auto& axes = j.at("axes");
        REQUIRE(axes.size() == 3);
        // The zipped pointers move together: 2 cores per LLC with 4 LLCs, 4 with 2.
        CHECK(axes.at("/machine/topology/cores_per_cluster").get<int>() * axes.at("/machine/topology/llcs_per_node").get<int>() == 8);
        CHECK(j.at("metrics").at("ops").get<int>() == axes.at("/workload/loops").get<int>() - 50);
        ++seen[axes.dump() + j.at("policy").get<std::string>() + j.at("seed").dump()];
    }
    CHECK(seen.size() == 16);
    // Without --resume or --force an existing output is kept.
    const CmdResult again = run_wakesim("sweep " + shell_quote(sweep) + " -q -o " + shell_quote(tmp.file("a.jsonl")));
    CHECK(again.rc == 2);
    CHECK(contains(again.out, "--resume"));
}

TEST_CASE("sweep: --resume after a kill (a file cut mid-line) gives the uninterrupted output", "[sweep][cli]") {
    TempDir tmp;
    const std::string sweep = tmp.file("s.json");
    write_file(sweep, kSweep);
    const std::string full = tmp.file("full.jsonl");
    REQUIRE(run_wakesim("sweep " + shell_quote(sweep) + " -q -j 2 -o " + shell_quote(full)).rc == 0);
    const std::string whole = read_file(full);
    // Cut after 7 lines and half of the 8th, as a kill during a write would.
    size_t cut = 0;
    for (int i = 0; i < 7; ++i) cut = whole.find('\n', cut) + 1;
    const size_t next = whole.find('\n', cut);
    const std::string part = tmp.file("part.jsonl");
    write_file(part, whole.substr(0, cut + (next - cut) / 2));
    const CmdResult r = run_wakesim("sweep " + shell_quote(sweep) + " -j 2 --resume -o " + shell_quote(part));
    INFO(r.out);
    REQUIRE(r.rc == 0);
    CHECK(contains(r.out, "16 runs in this shard, 7 kept from the output, 9 run"));
    CHECK(read_file(part) == whole);
    // Resuming a complete output runs nothing.
    const CmdResult done = run_wakesim("sweep " + shell_quote(sweep) + " --resume -o " + shell_quote(part));
    CHECK(contains(done.out, "16 kept from the output, 0 run"));
    CHECK(read_file(part) == whole);
    // The output of another sweep is refused.
    std::string other = kSweep;
    other.replace(other.find("[300, 400]"), 10, "[300, 500]");
    write_file(tmp.file("other.json"), other);
    const CmdResult mismatch = run_wakesim("sweep " + shell_quote(tmp.file("other.json")) + " --resume -o " + shell_quote(part));
    CHECK(mismatch.rc == 2);
    CHECK(count_lines(mismatch.out) == 1);
    CHECK(contains(mismatch.out, "another sweep"));
    // A file without one complete line of this sweep is not cut to make room: a user's note, or a
    // scenario written without a final newline, stays as it was.
    const std::string note = tmp.file("note.txt");
    write_file(note, "my notes, one line without a newline");
    const CmdResult kept = run_wakesim("sweep " + shell_quote(sweep) + " --resume -o " + shell_quote(note));
    CHECK(kept.rc == 2);
    CHECK(contains(kept.out, "holds no complete run line"));
    CHECK(read_file(note) == "my notes, one line without a newline");
    // --resume and --force together: which one was meant is not guessed.
    CHECK(run_wakesim("sweep " + shell_quote(sweep) + " --resume --force -o " + shell_quote(part)).rc == 2);
    CHECK(read_file(part) == whole);
}

TEST_CASE("sweep: shards 1/3, 2/3, 3/3 merged equal the unsharded run, and merge refuses duplicates and other sweeps",
          "[sweep][cli]") {
    TempDir tmp;
    const std::string sweep = tmp.file("s.json");
    write_file(sweep, kSweep);
    REQUIRE(run_wakesim("sweep " + shell_quote(sweep) + " -q -j 2 -o " + shell_quote(tmp.file("full.jsonl"))).rc == 0);
    std::string shards;
    size_t total = 0;
    for (int k = 1; k <= 3; ++k) {
        const std::string f = tmp.file("shard" + std::to_string(k) + ".jsonl");
        const CmdResult r = run_wakesim("sweep " + shell_quote(sweep) + " -q --shard " + std::to_string(k) + "/3 -o " + shell_quote(f));
        INFO(r.out);
        REQUIRE(r.rc == 0);
        total += lines_of(read_file(f)).size();
        shards += " " + shell_quote(f);
    }
    CHECK(total == 16);
    const CmdResult m = run_wakesim("merge" + shards, false);
    REQUIRE(m.rc == 0);
    CHECK(m.out == read_file(tmp.file("full.jsonl")));
    const CmdResult dup = run_wakesim("merge" + shards + " " + shell_quote(tmp.file("shard2.jsonl")));
    CHECK(dup.rc == 2);
    CHECK(count_lines(dup.out) == 1);
    CHECK(contains(dup.out, "expected each run in one file only"));
    // A shard left out: the merged file is partial, and merge says so.
    const CmdResult partial = run_wakesim("merge " + shell_quote(tmp.file("shard1.jsonl")) + " " +
                                          shell_quote(tmp.file("shard2.jsonl")) + " -o " + shell_quote(tmp.file("p.jsonl")));
    CHECK(partial.rc == 0);
    CHECK(contains(partial.out, "warning: 5 of the sweep's runs are in none of the files"));
    CHECK(run_wakesim("merge " + shell_quote(tmp.path().string())).rc == 2);  // a directory
    // A shard's output resumed as another shard (or without --shard) is refused, not mixed.
    const CmdResult wrong = run_wakesim("sweep " + shell_quote(sweep) + " --resume -o " + shell_quote(tmp.file("shard1.jsonl")));
    CHECK(wrong.rc == 2);
    CHECK(contains(wrong.out, "resume it with the --shard it was started with"));
    std::string other = kSweep;
    other.replace(other.find("\"seeds\": [1, 2]"), 15, "\"seeds\": [1, 3]");
    write_file(tmp.file("other.json"), other);
    REQUIRE(run_wakesim("sweep " + shell_quote(tmp.file("other.json")) + " -q --shard 1/3 -o " + shell_quote(tmp.file("o1.jsonl"))).rc == 0);
    const CmdResult mixed = run_wakesim("merge " + shell_quote(tmp.file("shard2.jsonl")) + " " + shell_quote(tmp.file("o1.jsonl")));
    CHECK(mixed.rc == 2);
    CHECK(contains(mixed.out, "another sweep"));
    for (const char* bad : {"0/3", "4/3", "x", "1/0"}) {
        const CmdResult r = run_wakesim("sweep " + shell_quote(sweep) + " --shard " + bad + " -o " + shell_quote(tmp.file("z.jsonl")));
        CHECK(r.rc == 2);
        CHECK(contains(r.out, "expected K/N"));
    }
}

TEST_CASE("sweep: docs/sweeps.md's GNU parallel command line gives the unsharded output", "[sweep][cli]") {
    // The Debian package `parallel` (scripts/install-deps.sh).
    REQUIRE(std::system("command -v parallel >/dev/null 2>&1") == 0);
    TempDir tmp;
    write_file(tmp.file("s.json"), kSweep);
    const std::string bin = shell_quote(WAKESIM_BINARY);
    const std::string cd = "cd " + shell_quote(tmp.path().string()) + " && ";
    REQUIRE(std::system((cd + bin + " sweep s.json -q -o full.jsonl").c_str()) == 0);
    // As in docs/sweeps.md, with the program's path for `wakesim`.
    const std::string cmd = cd + "parallel -j 3 " + bin + " sweep s.json -q --shard {}/3 -o shard{}.jsonl ::: 1 2 3 && " + bin +
                            " merge shard1.jsonl shard2.jsonl shard3.jsonl -o results.jsonl";
    REQUIRE(std::system(("timeout 60 bash -c " + shell_quote(cmd) + " </dev/null").c_str()) == 0);
    CHECK(read_file(tmp.file("results.jsonl")) == read_file(tmp.file("full.jsonl")));
}

TEST_CASE("sweep: every bad sweep file gives one error line with its pointer and exit code 2", "[sweep][cli][bad_inputs]") {
    const fs::path dir = kSource / "tests" / "bad_inputs" / "sweeps";
    TempDir tmp;
    size_t n = 0;
    for (const auto& [file, ptr, msg] : read_expected_errors(dir)) {
        const std::string path = (dir / file).string();
        const CmdResult r = run_wakesim("sweep " + shell_quote(path) + " -o " + shell_quote(tmp.file("out.jsonl")));
        INFO(file << " -> rc " << r.rc << ": " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
        CHECK(r.out.rfind("wakesim: error: " + path + ": " + ptr + ": ", 0) == 0);
        CHECK(contains(r.out, msg));
        CHECK_FALSE(fs::exists(tmp.file("out.jsonl")));
        ++n;
    }
    CHECK(n >= 5);
}

TEST_CASE("sweep: a sweep file's mistakes on different axes come in one pass", "[sweep][cli][bad_inputs]") {
    // An axis without values, a value the scenario refuses on another axis, and a pointer set by
    // two axes: a user fixing the first used to meet the others one run at a time.
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"name": "s", "scenario": {"name": "p", "machine": "altra-80",
      "workload": {"kind": "pipe", "loops": 100}, "policies": ["plain"], "run": {"warmup_ops": 10}},
      "axes": [{"pointer": "/workload/loops", "values": []},
               {"pointer": "/workload/cpus", "values": ["0", "0-200"]},
               {"pointer": "/run/warmup_ops", "values": [1, 2]},
               {"pointer": "/run/warmup_ops", "values": [3]}]})");
    const CmdResult r = run_wakesim("sweep " + shell_quote(tmp.file("s.json")) + " -o " + shell_quote(tmp.file("o.jsonl")));
    INFO(r.out);
    CHECK(r.rc == 2);
    CHECK(count_lines(r.out) == 3);
    CHECK(contains(r.out, ": /axes/0/values: expected at least one value"));
    CHECK(contains(r.out, ": /axes/1/values/1: expected a value that /workload/cpus accepts"));
    CHECK(contains(r.out, ": /axes/3/pointer: expected each pointer on one axis only"));
    CHECK_FALSE(fs::exists(tmp.file("o.jsonl")));
    // A repeated value and a refused value of one axis show together.
    write_file(tmp.file("r.json"), R"({"name": "s", "scenario": {"name": "p", "machine": "altra-80",
      "workload": {"kind": "pipe", "loops": 100}, "policies": ["plain"]},
      "axes": [{"pointer": "/workload/loops", "values": [50, 0, 50]}]})");
    const CmdResult rep = run_wakesim("sweep " + shell_quote(tmp.file("r.json")) + " -o " + shell_quote(tmp.file("o.jsonl")));
    INFO(rep.out);
    CHECK(count_lines(rep.out) == 2);
    CHECK(contains(rep.out, ": /axes/0/values/2: expected each value once; 50 is value 0 too"));
    CHECK(contains(rep.out, ": /axes/0/values/1: expected a value that /workload/loops accepts"));
}

TEST_CASE("sweep: a zip's entries may repeat a value, its points (the tuples) may not", "[sweep][cli]") {
    TempDir tmp;
    const auto sweep = [&](const std::string& cpus) {
        write_file(tmp.file("z.json"), R"({"name": "z", "scenario": {"name": "p", "machine": "altra-80",
          "workload": {"kind": "pipe", "loops": 100}, "policies": ["plain"]},
          "axes": [{"zip": [{"pointer": "/workload/loops", "values": [100, 200, 100]},
                            {"pointer": "/workload/cpus", "values": )" + cpus + "}]}]}");
        fs::remove(tmp.file("o.jsonl"));
        return run_wakesim("sweep " + shell_quote(tmp.file("z.json")) + " -q -o " + shell_quote(tmp.file("o.jsonl")));
    };
    const CmdResult ok = sweep(R"(["0", "0", "1"])");  // (100, 0), (200, 0), (100, 1)
    INFO(ok.out);
    CHECK(ok.rc == 0);
    CHECK(count_lines(read_file(tmp.file("o.jsonl"))) == 3);
    const CmdResult twice = sweep(R"(["0", "1", "0"])");  // (100, 0) twice
    INFO(twice.out);
    CHECK(twice.rc == 2);
    CHECK(contains(twice.out, ": /axes/0/zip: expected each combination of the zip's values once; values 0 and 2 "));
}

namespace {
const char* const kCompareScenario = R"({
  "name": "cmp",
  "machine": "altra-80",
  "workload": {"kind": "pipe", "loops": 1500},
  "policies": ["plain", "wf_sync", "reciprocal_sync"],
  "run": {"warmup_ops": 150, "seeds": [1, 2, 3, 4]},
  "cases": [{"name": "unpinned"}]
})";
}  // namespace

TEST_CASE("compare: Δ% with its interval and a verdict, a policy without effect flagged, --seed", "[compare][cli]") {
    TempDir tmp;
    const std::string sc = tmp.file("cmp.json");
    write_file(sc, kCompareScenario);
    const CmdResult t = run_wakesim("compare " + shell_quote(sc) + " -j 2", false);
    INFO(t.out);
    REQUIRE(t.rc == 0);
    CHECK(contains(t.out, "against the baseline \"plain\", 4 seeds"));
    CHECK(contains(t.out, "Δ% 95% CI"));
    CHECK(contains(t.out, "Welch's t-test"));
    const CmdResult j = run_wakesim("compare " + shell_quote(sc) + " --format json", false);
    REQUIRE(j.rc == 0);
    const auto doc = nlohmann::json::parse(j.out);
    CHECK(doc.at("baseline_policy") == "plain");
    const auto& rows = doc.at("comparisons");
    REQUIRE(rows.size() == 3);
    // Pipes already wake with WF_SYNC: wf_sync changes nothing, seed by seed.
    CHECK(rows[1].at("policy") == "wf_sync");
    CHECK(rows[1].at("no_effect") == true);
    CHECK(rows[1].at("metrics").at("usec_per_op").at("verdict") == "no effect on this workload");
    CHECK(contains(t.out, "no effect on this workload"));
    // reciprocal_sync keeps the pair together: faster, and the test says so.
    const auto& rs = rows[2].at("metrics").at("usec_per_op");
    CHECK(rows[2].at("no_effect") == false);
    CHECK(rs.at("delta_pct").get<double>() < 0);
    if (rs.contains("delta_pct_ci95")) CHECK(rs.at("delta_pct_ci95")[0].get<double>() <= rs.at("delta_pct").get<double>());
    CHECK(rs.at("verdict") == "better");
    // Another baseline; a policy that is not run is refused.
    const CmdResult b = run_wakesim("compare " + shell_quote(sc) + " --baseline-policy reciprocal_sync --format json", false);
    REQUIRE(b.rc == 0);
    CHECK(nlohmann::json::parse(b.out).at("comparisons")[1].at("metrics").at("usec_per_op").at("verdict") == "worse");
    const CmdResult nb = run_wakesim("compare " + shell_quote(sc) + " --baseline-policy nope");
    CHECK(nb.rc == 2);
    CHECK(count_lines(nb.out) == 1);
    // One chosen seed: no test, and the report says so.
    const CmdResult one = run_wakesim("compare " + shell_quote(sc) + " --seed 3 --policy plain --policy reciprocal_sync", false);
    REQUIRE(one.rc == 0);
    CHECK(contains(one.out, "1 seed"));
    CHECK(contains(one.out, "one seed: no test"));
    const CmdResult run1 = run_wakesim("run " + shell_quote(sc) + " --seed 3 --format json", false);
    REQUIRE(run1.rc == 0);
    // (The parsed document must outlive the loop: a range-for keeps only the temporary `runs`
    // refers into alive until C++23.)
    const nlohmann::json runs = nlohmann::json::parse(run1.out);
    for (const auto& r : runs.at("runs")) CHECK(r.at("seed") == 3);
}

TEST_CASE("run: the table labels its ± and marks an interval that crosses 0", "[compare][cli]") {
    TempDir tmp;
    const std::string sc = tmp.file("cmp.json");
    write_file(sc, kCompareScenario);
    const CmdResult t = run_wakesim("run " + shell_quote(sc) + " --seeds 2 --policy plain", false);
    REQUIRE(t.rc == 0);
    CHECK(contains(t.out, "95% confidence interval"));
    const CmdResult j = run_wakesim("run " + shell_quote(sc) + " --seeds 2 --policy plain --format json", false);
    const auto s = nlohmann::json::parse(j.out).at("summary")[0];
    bool crossing = false;
    for (const auto& [k, v] : s.items()) {
        if (!v.is_object()) continue;
        CHECK(v.contains("sd"));
        const bool crosses = v.at("mean").get<double>() - v.at("ci95").get<double>() < -1e-6;
        CHECK(v.at("too_few_seeds") == crosses);
        crossing |= crosses;
    }
    CHECK(contains(t.out, "† too few seeds") == crossing);
}

TEST_CASE("check: passes on unchanged input, fails with exit 1 on an injected regression", "[check][cli]") {
    TempDir tmp;
    // The policy under test is "candidate": the reciprocal-sync patch in the baseline.
    std::string text = kCompareScenario;
    const std::string pols = R"(["plain", "wf_sync", "reciprocal_sync"])";
    text.replace(text.find(pols), pols.size(), R"(["plain", {"use": "reciprocal_sync", "name": "candidate"}])");
    const std::string sc = tmp.file("ci.json");
    write_file(sc, text);
    const std::string base = tmp.file("base.json");
    REQUIRE(run_wakesim("baseline " + shell_quote(sc) + " -j 2 -o " + shell_quote(base)).rc == 0);
    const CmdResult ok = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base), false);
    INFO(ok.out);
    CHECK(ok.rc == 0);
    CHECK(contains(ok.out, "0 regressions"));
    // A change to the candidate loses the patch: slower, a regression beyond 5%.
    std::string changed = text;
    changed.replace(changed.find(R"("use": "reciprocal_sync")"), 24, R"("use": "plain")");
    write_file(sc, changed);
    const CmdResult bad = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base), false);
    INFO(bad.out);
    CHECK(bad.rc == 1);
    CHECK(contains(bad.out, "REGRESSION"));
    CHECK(contains(bad.out, "candidate"));
    // A tolerance wider than the loss lets usec_per_op pass; the other metrics still decide.
    const CmdResult tol = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base) +
                                      " --tolerance usec_per_op=1000 --tolerance ops_per_sec=1000 --tolerance "
                                      "migrations_per_wakeup=100000 --tolerance wake_latency_ns.p50=100000 --tolerance "
                                      "wake_latency_ns.p99=100000 --tolerance mib_per_sec=1000",
                                      false);
    INFO(tol.out);
    CHECK(tol.rc == 0);
    const CmdResult badtol = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base) + " --tolerance usec=5");
    CHECK(badtol.rc == 2);
    CHECK(count_lines(badtol.out) == 1);
    // A metric without a better direction is checked when --tolerance names it: a change of either
    // sign beyond the tolerance fails (CHANGED), where it used to pass as "better".
    const CmdResult moved = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base) +
                                        " --tolerance usec_per_op=1000 --tolerance ops_per_sec=1000 --tolerance "
                                        "migrations_per_wakeup=100000 --tolerance wake_latency_ns.p50=100000 --tolerance "
                                        "wake_latency_ns.p99=100000 --tolerance mib_per_sec=1000 --tolerance "
                                        "cpu_util.sum=1",
                                        false);
    INFO(moved.out);
    CHECK(moved.rc == 1);
    CHECK(contains(moved.out, "CHANGED"));
    // Another benchmark under the same name (the workload changed) is refused, not compared.
    std::string other = changed;
    const std::string loops = "\"loops\": 1500";
    other.replace(other.find(loops), loops.size(), "\"loops\": 1600");
    write_file(sc, other);
    const CmdResult wrong = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base));
    CHECK(wrong.rc == 2);
    CHECK(count_lines(wrong.out) == 1);
    CHECK(contains(wrong.out, "/benchmark_hash: expected the baseline of \"cmp\" as it is now"));
    // A policy the baseline lacks is named as not checked.
    std::string more = text;
    const std::string cand = R"({"use": "reciprocal_sync", "name": "candidate"}])";
    more.replace(more.find(cand), cand.size(), R"({"use": "reciprocal_sync", "name": "candidate"}, "wf_sync"])");
    write_file(sc, more);
    const CmdResult extra = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(base), false);
    INFO(extra.out);
    CHECK(extra.rc == 0);
    CHECK(contains(extra.out, "# not in the baseline, not checked: unpinned x wf_sync"));
    // A baseline edited by hand into another format is refused: an unknown key, another version.
    write_file(sc, text);
    std::string edited = read_file(base);
    edited.replace(edited.find("\"wakesim_baseline\": 1"), 21, "\"wakesim_baseline\": 2");
    write_file(tmp.file("v2.json"), edited);
    const CmdResult v2 = run_wakesim("check " + shell_quote(sc) + " --baseline " + shell_quote(tmp.file("v2.json")));
    CHECK(v2.rc == 2);
    CHECK(contains(v2.out, "/wakesim_baseline: expected 1"));
}

TEST_CASE("plot: a figure with error bars from a known sweep output", "[plot][cli]") {
    REQUIRE(std::system("command -v gnuplot >/dev/null 2>&1") == 0);  // Debian gnuplot-nox (install-deps.sh)
    TempDir tmp;
    // Two policies at x = 4 and 8, two seeds each: means 10 and 20 (plain), 6 and 7 (patch).
    std::string jsonl;
    size_t run = 0;
    const char* rows[][4] = {{"plain", "4", "1", "9"},  {"plain", "4", "2", "11"}, {"plain", "8", "1", "19"},
                             {"plain", "8", "2", "21"}, {"patch", "4", "1", "6"},  {"patch", "4", "2", "6"},
                             {"patch", "8", "1", "6.5"}, {"patch", "8", "2", "7.5"}};
    const auto line = [&](const char* const* r, const char* case_name) {
        return std::string(R"({"sweep":"known","sweep_id":"k","run":)") + std::to_string(run++) +
               R"(,"axes":{"/machine/topology/cores_per_cluster":)" + r[1] + R"(},"case":")" + case_name +
               R"(","policy":")" + r[0] + R"(","seed":)" + r[2] + R"(,"metrics":{"usec_per_op":)" + r[3] + "}}\n";
    };
    for (const auto& r : rows) jsonl += line(r, "c");
    write_file(tmp.file("known.jsonl"), jsonl);
    const std::string in = shell_quote(tmp.file("known.jsonl"));
    const CmdResult script = run_wakesim("plot " + in + " --x cores_per_cluster --y usec_per_op -o f.svg --script", false);
    INFO(script.out);
    REQUIRE(script.rc == 0);
    // Student t with 1 degree of freedom: 12.706 x sd / sqrt(2); plain at 4: sd 1.414 -> 12.706.
    CHECK(contains(script.out, "4 10 12.70620474"));
    CHECK(contains(script.out, "8 20 12.70620474"));
    CHECK(contains(script.out, "4 6 0\n"));
    CHECK(contains(script.out, "8 7 6.353102368"));
    CHECK(contains(script.out, "title 'plain'"));
    CHECK(contains(script.out, "title 'patch'"));
    for (const char* ext : {"svg", "png"}) {
        const std::string out = tmp.file(std::string("fig.") + ext);
        const CmdResult r = run_wakesim("plot " + in + " --x /machine/topology/cores_per_cluster --y usec_per_op -o " + shell_quote(out));
        INFO(r.out);
        CHECK(r.rc == 0);
        const std::string fig = read_file(out);
        if (std::string(ext) == "svg") {
            CHECK(contains(fig, "<svg"));
            CHECK(contains(fig, "plain"));
            CHECK(contains(fig, "patch"));
        } else {
            REQUIRE(fig.size() > 8);
            CHECK(fig.substr(1, 3) == "PNG");
        }
    }
    // A run given twice (the shard and the merged file) would weigh double in the error bars.
    const CmdResult twice = run_wakesim("plot " + in + " " + in + " --x cores_per_cluster --y usec_per_op -o f.svg --script");
    CHECK(twice.rc == 2);
    CHECK(contains(twice.out, "holds run 0, which"));
    // Two cases as well: one line per policy mixes them, unless --case keeps one.
    std::string other;
    for (const auto& r : rows) other += line(r, "d");
    write_file(tmp.file("two.jsonl"), jsonl + other);
    const std::string in2 = shell_quote(tmp.file("two.jsonl"));
    const CmdResult mixed = run_wakesim("plot " + in2 + " --x cores_per_cluster --y usec_per_op -o f.svg --script");
    CHECK(mixed.rc == 2);
    CHECK(contains(mixed.out, "--case or --policy"));
    const CmdResult one = run_wakesim("plot " + in2 + " --x cores_per_cluster --y usec_per_op -o f.svg --script --case d", false);
    REQUIRE(one.rc == 0);
    CHECK(contains(one.out, "4 10 12.70620474"));
    CHECK(contains(one.out, "title 'patch'"));
    const CmdResult only = run_wakesim("plot " + in2 + " --x cores_per_cluster --y usec_per_op -o f.svg --script --by case "
                                       "--policy patch", false);
    REQUIRE(only.rc == 0);
    CHECK(contains(only.out, "title 'c'"));
    CHECK(contains(only.out, "title 'd'"));
    CHECK_FALSE(contains(only.out, "title 'plain'"));
    const CmdResult none = run_wakesim("plot " + in2 + " --x cores_per_cluster --y usec_per_op -o f.svg --script --case e");
    CHECK(none.rc == 2);
    CHECK(contains(none.out, "--case \"e\" names no case of the sweep: \"c\", \"d\""));
    // Unknown axis or metric, a wrong extension: one line, exit 2.
    for (const std::string bad : {"--x nope --y usec_per_op -o g.svg", "--x cores_per_cluster --y nope -o g.svg",
                                  "--x cores_per_cluster --y usec_per_op -o g.pdf"}) {
        const CmdResult r = run_wakesim("plot " + in + " " + bad);
        INFO(bad << " -> " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
    }
}
