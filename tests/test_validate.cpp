// `wakesim validate` (experiment/validate.h): the pass rule, the shipped table C rows, the JSON
// shape, exit codes 0 / 1 / 2, determinism over thread counts, and the validation scenarios
// staying the same runs as the scenarios they were copied from.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "experiment/scenario.h"
#include "experiment/validate.h"
#include "input/json_input.h"

using namespace wakesim;
using namespace wakesim::clitest;

namespace {

const fs::path kValidationDir = kSource / "scenarios" / "validation";
const std::string kTableC = (kValidationDir / "table-c-pipe-altra.json").string();
const std::string kImpossible = (kSource / "tests" / "data" / "validation-impossible.json").string();

// One line, exit 2, "wakesim: error: FILE: POINTER: ..." containing `message`.
void check_input_error(const CmdResult& r, const std::string& file, const std::string& pointer, const std::string& message) {
    INFO(r.out);
    CHECK(r.rc == 2);
    CHECK(count_lines(r.out) == 1);
    CHECK(r.out.rfind("wakesim: error: " + file + ": " + pointer + ": ", 0) == 0);
    CHECK(contains(r.out, message));
}

// A copy of the test-only validation scenario with `edit` applied, in `tmp`.
std::string edited_impossible(const TempDir& tmp, const std::string& name, void (*edit)(nlohmann::json&)) {
    nlohmann::json doc = nlohmann::json::parse(read_file(kImpossible));
    edit(doc);
    const std::string path = tmp.file(name);
    write_file(path, doc.dump(2));
    return path;
}

}  // namespace

TEST_CASE("validate: the pass rule (direction, then magnitude within the tolerance)", "[validate]") {
    // A material change: the simulated ratio must be on the same side of 1, and within tolerance.
    RowVerdict v = judge_ratio(0.80, 0.767, 0.10);
    CHECK_FALSE(v.no_material_change);
    CHECK(v.direction_ok);
    CHECK(v.magnitude_ok);
    CHECK(v.error == Approx(0.767 / 0.80 - 1));
    v = judge_ratio(2.24, 1.164, 0.20);  // right direction, far too small (A2/A1 today)
    CHECK(v.direction_ok);
    CHECK_FALSE(v.magnitude_ok);
    v = judge_ratio(1.24, 0.995, 0.20);  // within 20% of 1.24, but on the other side of 1
    CHECK_FALSE(v.no_material_change);
    CHECK_FALSE(v.direction_ok);
    CHECK(v.magnitude_ok);
    v = judge_ratio(1.30, 1.0, 0.25);  // no change where the publication saw one: wrong direction
    CHECK_FALSE(v.direction_ok);
    // No material change published (|ratio - 1| <= tolerance): the simulated one must be within
    // the tolerance of 1 too, on either side.
    v = judge_ratio(1.02, 0.95, 0.10);
    CHECK(v.no_material_change);
    CHECK(v.direction_ok);
    CHECK(v.magnitude_ok);
    v = judge_ratio(0.99, 1.15, 0.20);
    CHECK(v.direction_ok);
    CHECK(v.magnitude_ok);
    v = judge_ratio(1.05, 1.12, 0.10);  // 12% above 1: a change the publication did not see,
    CHECK(v.no_material_change);       // although 1.12 is within 10% of 1.05
    CHECK_FALSE(v.direction_ok);
    CHECK(v.magnitude_ok);
    CHECK(judge_ratio(1.0, 1.0, 0.01).direction_ok);
}

TEST_CASE("validate: the table C rows of scenarios/validation pass, and --format json has the documented shape",
          "[validate][validation]") {
    const CmdResult r = run_wakesim("validate " + shell_quote(kTableC) + " --format json", false);
    INFO(r.out);
    REQUIRE(r.rc == 0);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j.is_object());
    CHECK(j.at("passed") == 3);
    CHECK(j.at("failed") == 0);
    const auto& rows = j.at("rows");
    REQUIRE(rows.size() == 3);
    const std::vector<std::string> ids = {"C2", "C3", "C4"};
    for (size_t i = 0; i < rows.size(); ++i) {
        const auto& row = rows[i];
        INFO(row.dump());
        CHECK(row.at("id") == ids[i]);
        for (const char* k : {"published_ratio", "simulated_ratio", "error", "tolerance"}) CHECK(row.at(k).is_number());
        for (const char* k : {"pass", "direction_ok", "magnitude_ok", "completed", "no_material_change"})
            CHECK(row.at(k).is_boolean());
        CHECK(row.at("metric") == "usec_per_op");
        CHECK(row.at("scenario") == "table-c-pipe-altra");
        CHECK(row.at("seeds") == 1);
        for (const char* side : {"numerator", "denominator"}) {
            const auto& s = row.at(side);
            CHECK(s.at("id").is_string());
            CHECK(s.at("case").is_string());
            CHECK(s.at("policy").is_string());
            CHECK(s.at("published").get<double>() > 0);
            CHECK(s.at("simulated").get<double>() > 0);
        }
        const double sim = row.at("numerator").at("simulated").get<double>() / row.at("denominator").at("simulated").get<double>();
        CHECK(row.at("simulated_ratio").get<double>() == Approx(sim).epsilon(1e-5));
        CHECK(row.at("error").get<double>() ==
              Approx(row.at("simulated_ratio").get<double>() / row.at("published_ratio").get<double>() - 1).margin(1e-5));
        CHECK(row.at("tolerance") == 0.10);
        CHECK(std::abs(row.at("error").get<double>()) <= 0.10);
        CHECK(row.at("pass") == true);
    }
    // C2/C1: the patch keeps the unpinned pair on one CPU; C4/C3: pinned, it changes nothing.
    CHECK(rows[0].at("numerator").at("policy") == "reciprocal_sync");
    CHECK(rows[0].at("simulated_ratio").get<double>() < 0.9);
    CHECK(rows[2].at("no_material_change") == true);
    // C3/C1 compares the two figures altra-80 was fitted to: it says so.
    CHECK(rows[0].at("fitted").is_null());
    CHECK(rows[1].at("fitted").is_string());
    CHECK(j.at("fitted_rows") == 1);

    const CmdResult table = run_wakesim("validate " + shell_quote(kTableC), false);
    CHECK(table.rc == 0);
    CHECK(contains(table.out, "3 passed, 0 failed (1 row checks fitted figures, not predictions)\n"));
    CHECK(contains(table.out, "pass (fitted)"));
    CHECK(contains(table.out, "Preserve wake-affine CPU for non-SMT reciprocal sync wakeups"));
}

TEST_CASE("validate: a row that cannot pass makes the exit code 1, and says why", "[validate]") {
    const CmdResult r = run_wakesim("validate " + shell_quote(kImpossible), false);
    INFO(r.out);
    CHECK(r.rc == 1);
    CHECK(contains(r.out, "FAIL (direction, magnitude)"));
    CHECK(contains(r.out, "1 passed, 1 failed\n"));
    const CmdResult js = run_wakesim("validate " + shell_quote(kImpossible) + " --format json", false);
    CHECK(js.rc == 1);
    const nlohmann::json j = nlohmann::json::parse(js.out);
    CHECK(j.at("passed") == 1);
    CHECK(j.at("failed") == 1);
    CHECK(j.at("rows")[0].at("id") == "X1");
    CHECK(j.at("rows")[0].at("pass") == false);
    CHECK(j.at("rows")[0].at("direction_ok") == false);
    CHECK(j.at("rows")[1].at("pass") == true);
    // With the failing row's published ratio made reachable (figures 3.071 / 4.002), it passes.
    TempDir tmp;
    const std::string fixed = edited_impossible(tmp, "fixed.json", [](nlohmann::json& d) {
        auto& row = d["validation"]["rows"][0];
        row["numerator"]["published"] = 3.071;
        row["denominator"]["published"] = 4.002;
        row["published_ratio"] = 0.767;
    });
    CHECK(run_wakesim("validate " + shell_quote(fixed), false).rc == 0);
}

TEST_CASE("validate: each seed's own ratio, in how many seeds the row would pass, and --seeds N", "[validate]") {
    // The runs of `wakesim run` on the same file give each seed's figures: validate's ratio of a
    // seed is the numerator's run over the denominator's run with that seed.
    const CmdResult run = run_wakesim("run " + shell_quote(kImpossible) + " --format json", false);
    REQUIRE(run.rc == 0);
    const nlohmann::json runs = nlohmann::json::parse(run.out).at("runs");
    auto figure = [&](const std::string& c, const std::string& policy, int seed) {
        for (const auto& r : runs)
            if (r.at("case") == c && r.at("policy") == policy && r.at("seed") == seed)
                return r.at("metrics").at("usec_per_op").get<double>();
        FAIL("no run " << c << " " << policy << " " << seed);
        return 0.0;
    };
    const CmdResult js = run_wakesim("validate " + shell_quote(kImpossible) + " --format json", false);
    REQUIRE(js.rc == 1);
    const nlohmann::json rows = nlohmann::json::parse(js.out).at("rows");
    REQUIRE(rows.size() == 2);
    for (int seed : {1, 2}) {
        INFO("seed " << seed);
        CHECK(rows[0].at("simulated_ratio_by_seed")[seed - 1].get<double>() ==
              Approx(figure("unpinned", "reciprocal_sync", seed) / figure("unpinned", "plain", seed)).epsilon(1e-5));
        CHECK(rows[1].at("simulated_ratio_by_seed")[seed - 1].get<double>() ==
              Approx(figure("pinned-cpu0", "plain", seed) / figure("unpinned", "plain", seed)).epsilon(1e-5));
    }
    CHECK(rows[0].at("seeds_passing") == 0);  // X1 fails in both seeds, X2 passes in both
    CHECK(rows[1].at("seeds_passing") == 2);
    // The mean's ratio lies within the seeds' range.
    for (const auto& row : rows) {
        const auto& by = row.at("simulated_ratio_by_seed");
        const double lo = std::min(by[0].get<double>(), by[1].get<double>());
        const double hi = std::max(by[0].get<double>(), by[1].get<double>());
        CHECK(row.at("simulated_ratio").get<double>() >= lo - 1e-6);
        CHECK(row.at("simulated_ratio").get<double>() <= hi + 1e-6);
    }
    // --seeds N runs seeds 1..N of every file instead of its own.
    const CmdResult three = run_wakesim("validate --seeds 3 " + shell_quote(kImpossible) + " --format json", false);
    REQUIRE(three.rc == 1);
    const nlohmann::json three_json = nlohmann::json::parse(three.out);  // alive through the loop
    for (const auto& row : three_json.at("rows")) {
        CHECK(row.at("seeds") == 3);
        CHECK(row.at("simulated_ratio_by_seed").size() == 3);
    }
    // A seed counts as passing only when its two runs completed, as a row does: X2's ratio
    // passes in both seeds, but with the pinned case stopped at 5 ms (of about 10) neither seed does.
    TempDir tmp;
    const std::string stopped = edited_impossible(tmp, "stopped.json", [](nlohmann::json& d) {
        d["cases"][1]["set"]["run"] = {{"duration", "5ms"}};
    });
    const CmdResult cut = run_wakesim("validate " + shell_quote(stopped) + " --format json", false);
    INFO(cut.out);
    REQUIRE(cut.rc == 1);
    const nlohmann::json cut_json = nlohmann::json::parse(cut.out);
    const nlohmann::json& x2 = cut_json.at("rows")[1];
    CHECK(x2.at("completed") == false);
    CHECK(x2.at("pass") == false);
    CHECK(x2.at("magnitude_ok") == true);
    CHECK(x2.at("seeds_passing") == 0);
    const CmdResult zero = run_wakesim("validate --seeds 0 " + shell_quote(kImpossible));
    CHECK(zero.rc == 2);
    CHECK(count_lines(zero.out) == 1);
    CHECK(contains(zero.out, "--seeds"));
    const CmdResult table = run_wakesim("validate " + shell_quote(kImpossible), false);
    CHECK(contains(table.out, "by seed"));
    CHECK(contains(table.out, "seeds passing"));
    CHECK(contains(table.out, "0.755-0.755  0/2"));
}

TEST_CASE("validate: the same files give byte-identical output whatever the thread count", "[validate][determinism]") {
    // No arguments: the source tree's scenarios/validation (every row, passing or not).
    const CmdResult one = run_wakesim("validate", false);
    const CmdResult two = run_wakesim("validate --threads 2", false);
    const CmdResult three = run_wakesim("validate -j 3 " + shell_quote(kValidationDir.string()), false);
    CHECK((one.rc == 0 || one.rc == 1));
    CHECK(two.rc == one.rc);
    CHECK(three.rc == one.rc);
    CHECK(!one.out.empty());
    CHECK(one.out == two.out);
    CHECK(one.out == three.out);
    for (const char* id : {"\nA2 ", "\nA5 ", "\nC2 ", "\nC4 "}) CHECK(contains(one.out, id));
    CHECK(run_wakesim("validate --format json", false).out == run_wakesim("validate --format json -j 2", false).out);
}

TEST_CASE("validate: input errors are one line with the file and pointer, exit 2", "[validate][bad_inputs]") {
    TempDir tmp;
    // A scenario without a "validation" section.
    const std::string plain = (kSource / "scenarios" / "pipe-altra.json").string();
    check_input_error(run_wakesim("validate " + shell_quote(plain)), plain, "/", "missing required key \"validation\"");
    // The same row ids in two files.
    const std::string copy = tmp.file("copy.json");
    write_file(copy, read_file(kTableC));
    check_input_error(run_wakesim("validate " + shell_quote(kTableC) + " " + shell_quote(copy)), copy,
                      "/validation/rows/0/id", "\"C2\" is also in " + kTableC);
    // A directory without scenarios, a path that does not exist.
    const std::string empty = tmp.file("empty");
    fs::create_directories(empty);
    check_input_error(run_wakesim("validate " + shell_quote(empty)), empty, "/", "it has none");
    const std::string missing = tmp.file("missing.json");
    const CmdResult m = run_wakesim("validate " + shell_quote(missing));
    CHECK(m.rc == 2);
    CHECK(count_lines(m.out) == 1);
    CHECK(m.out.rfind("wakesim: error: " + missing + ": ", 0) == 0);
    // A metric that is 0 for the denominator (plain pipe wakeups never migrate): known only after the runs.
    const std::string mib = edited_impossible(tmp, "mib.json", [](nlohmann::json& d) {
        d["validation"]["rows"][1]["metric"] = "migrations.wakeup";
    });
    check_input_error(run_wakesim("validate " + shell_quote(mib)), mib, "/validation/rows/1/metric",
                      "migrations.wakeup is 0 for case \"unpinned\", policy \"plain\"");
    // Usage.
    const CmdResult fmt = run_wakesim("validate --format xml");
    CHECK(fmt.rc == 2);
    CHECK(count_lines(fmt.out) == 1);
    CHECK(run_wakesim("validate -j 0").rc == 2);
    // The section is checked by `wakesim run` too (tests/bad_inputs/validation_*.json), and the
    // scenario still runs as an ordinary one.
    const CmdResult run = run_wakesim("run " + shell_quote(kImpossible) + " --format csv", false);
    CHECK(run.rc == 0);
    CHECK(count_lines(run.out) == 9);  // a header, then 2 cases x 2 policies x 2 seeds
}

TEST_CASE("validate: --help lists validate", "[validate][cli]") {
    const CmdResult help = run_wakesim("--help");
    CHECK(help.rc == 0);
    CHECK(contains(help.out, "validate"));
    const CmdResult sub = run_wakesim("validate --help");
    CHECK(sub.rc == 0);
    CHECK(contains(sub.out, "--threads"));
    CHECK(contains(sub.out, "--format"));
}

TEST_CASE("validation scenarios are the same experiments as the scenarios they come from", "[validate][scenarios]") {
    // Only the name, the description, the expectation, the validation section and the run length
    // (loops, number_ios, warm-up, ops, duration: a validation file may run fewer ops, so that
    // `wakesim validate` takes seconds) may differ: same machine, workload, policies, seeds, cases.
    const std::vector<std::pair<std::string, std::string>> pairs = {
        {"table-c-pipe-altra.json", "pipe-altra.json"},
        {"table-a-fuse-fio-xeon.json", "fuse-fio-xeon.json"},
    };
    for (const auto& [v, base] : pairs) {
        INFO(v << " vs " << base);
        nlohmann::json a = nlohmann::json::parse(read_file(kValidationDir / v));
        nlohmann::json b = nlohmann::json::parse(read_file(kSource / "scenarios" / base));
        CHECK(a.contains("validation"));
        for (const char* k : {"name", "description", "expected", "validation"}) {
            a.erase(k);
            b.erase(k);
        }
        for (auto* doc : {&a, &b}) {
            for (auto& c : (*doc)["cases"]) c.erase("description");
            for (const char* k : {"loops", "number_ios"}) (*doc)["workload"].erase(k);
            for (const char* k : {"warmup_ops", "warmup", "ops", "duration"}) (*doc)["run"].erase(k);
        }
        CHECK(a == b);
    }
    // Every file of scenarios/validation loads and has rows.
    int files = 0;
    for (const auto& e : fs::directory_iterator(kValidationDir)) {
        if (e.path().extension() != ".json") continue;
        INFO(e.path().string());
        const Scenario sc = load_scenario(e.path().string());
        CHECK(!sc.validation.empty());
        ++files;
    }
    CHECK(files >= 2);
}

TEST_CASE("validate: an installed wakesim reads share/wakesim/scenarios/validation next to its bin/", "[validate][cli]") {
    TempDir tmp;
    const fs::path bin = tmp.path() / "bin", share = tmp.path() / "share" / "wakesim";
    fs::create_directories(bin);
    fs::create_directories(share / "machines");
    fs::create_directories(share / "scenarios" / "validation");
    fs::copy_file(WAKESIM_BINARY, bin / "wakesim");
    fs::permissions(bin / "wakesim", fs::perms::owner_exec, fs::perm_options::add);
    fs::copy_file(kSource / "machines" / "altra-80.json", share / "machines" / "altra-80.json");
    fs::copy_file(kImpossible, share / "scenarios" / "validation" / "impossible.json");
    const CmdResult r = run_program((bin / "wakesim").string(), "validate --format json", false);
    INFO(r.out);
    CHECK(r.rc == 1);
    const nlohmann::json j = nlohmann::json::parse(r.out);
    REQUIRE(j.at("rows").size() == 2);  // the installed file's rows, not the source tree's
    CHECK(j.at("rows")[0].at("id") == "X1");
    CHECK(j.at("rows")[1].at("id") == "X2");
}
