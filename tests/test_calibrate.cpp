// `wakesim calibrate` (experiment/calibrate.h): it recovers known profile values from simulated
// measurements within its reported uncertainty, says which parameters the data cannot identify,
// writes a machine file that runs, and answers bad calibration files with one line each.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_util.h"
#include "experiment/calibrate.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "hw/machine_profile.h"

using namespace wakesim;
using namespace wakesim::clitest;

namespace {

// perf bench sched pipe on the 2-vCPU guest, short: pinned depends on the same-CPU switch path,
// unpinned adds the cross-vCPU wake (IPI, halted vCPU exit).
const char* const kPipe = R"({
  "name": "calib-pipe",
  "machine": "kvm-2vcpu",
  "workload": {"kind": "pipe", "loops": 3000},
  "policies": ["plain"],
  "run": {"warmup_ops": 300, "seeds": [1]},
  "cases": [
    {"name": "unpinned"},
    {"name": "pinned", "set": {"workload": {"cpus": "0"}}}
  ]
})";

double simulated(const std::string& scenario, const std::string& case_name) {
    const Scenario sc = load_scenario(scenario);
    RunOptions opt;
    opt.cases = {case_name};
    opt.quiet = true;
    return run_scenario(sc, opt).front().result.metrics.get(Metric::usec_per_op);
}

// A calibration of ctx_switch and ipi_latency from the two pipe figures, started away from the
// machine's values, plus a parameter nothing here depends on (one node: no cross-node refill).
std::string calibration(double unpinned, double pinned) {
    nlohmann::json c = {
        {"machine", "kvm-2vcpu"},
        {"measurements",
         {{{"name", "unpinned"}, {"scenario", "pipe.json"}, {"case", "unpinned"}, {"metric", "usec_per_op"}, {"value", unpinned},
           {"spread", unpinned * 0.01}},
          {{"name", "pinned"}, {"scenario", "pipe.json"}, {"case", "pinned"}, {"metric", "usec_per_op"}, {"value", pinned},
           {"spread", pinned * 0.01}}}},
        {"parameters",
         {{{"key", "ctx_switch"}, {"min", "500ns"}, {"max", "10us"}, {"start", "5.5us"}},
          {{"key", "ipi_latency"}, {"min", "300ns"}, {"max", "10us"}, {"start", "1.5us"}},
          {{"key", "refill_cross_numa_ns_per_kib"}, {"min", 10}, {"max", 2000}}}}};
    return c.dump(2);
}

}  // namespace

TEST_CASE("calibrate recovers ctx_switch and ipi_latency of kvm-2vcpu from simulated pipe figures", "[calibrate]") {
    TempDir tmp;
    write_file(tmp.file("pipe.json"), kPipe);
    const double unpinned = simulated(tmp.file("pipe.json"), "unpinned");
    const double pinned = simulated(tmp.file("pipe.json"), "pinned");
    REQUIRE(unpinned > pinned);
    write_file(tmp.file("c.json"), calibration(unpinned, pinned));

    const CalibSpec spec = load_calibration(tmp.file("c.json"));
    const CalibResult r = calibrate(spec, 2);
    const MachineProfile truth = load_machine_file(machine_path("kvm-2vcpu")).profile;
    INFO(calibration_table(r));
    REQUIRE(r.params.size() == 3);
    CHECK(r.chi2 < r.chi2_start);
    CHECK(r.chi2 < 1.0);  // both figures within 1% (one spread) of the measured ones
    for (size_t j = 0; j < 2; ++j) {
        const auto& p = r.params[j];
        const double want = static_cast<double>(truth.get(j == 0 ? "ctx_switch_ns" : "ipi_latency_ns"));
        INFO(p.param.key << ": fitted " << p.fitted << " sd " << p.sd << ", truth " << want);
        CHECK(p.identifiable);
        CHECK(p.sd > 0);
        CHECK(std::fabs(p.fitted - want) <= 2 * p.sd);
        CHECK(std::fabs(p.fitted - want) <= 0.1 * want);
    }
    CHECK_FALSE(r.params[2].identifiable);
    CHECK(r.params[2].note == "not identifiable: no measurement depends on it");
    CHECK(r.params[2].fitted == r.params[2].param.start);
}

TEST_CASE("calibrate says when two parameters only move together", "[calibrate]") {
    // The unpinned round trip pays the IPI and the halted vCPU's exit on every wakeup: one figure
    // cannot split them.
    TempDir tmp;
    write_file(tmp.file("pipe.json"), kPipe);
    const double unpinned = simulated(tmp.file("pipe.json"), "unpinned");
    nlohmann::json c = {
        {"machine", "kvm-2vcpu"},
        {"max_iterations", 4},
        {"measurements",
         {{{"name", "unpinned"}, {"scenario", "pipe.json"}, {"case", "unpinned"}, {"metric", "usec_per_op"},
           {"value", unpinned * 1.1}, {"spread", unpinned * 0.01}}}},
        {"parameters",
         {{{"key", "ipi_latency"}, {"min", "300ns"}, {"max", "20us"}, {"start", "2us"}},
          {{"key", "idle_states/0/exit_latency"}, {"min", "200ns"}, {"max", "20us"}, {"start", "2us"}}}}};
    // Both start at 2 us, so that an e-fold change of either moves the figure alike (from
    // kvm-2vcpu's own 3.7 us and 490 ns the small one would be merely weak).
    write_file(tmp.file("c.json"), c.dump());
    const CalibSpec spec = load_calibration(tmp.file("c.json"));
    const CalibResult r = calibrate(spec, 1);
    INFO(calibration_table(r));
    CHECK(r.chi2 < r.chi2_start);
    REQUIRE(r.params.size() == 2);
    for (const auto& p : r.params) {
        CHECK_FALSE(p.identifiable);
        CHECK(contains(p.note, "only a combination is fitted"));
    }
    CHECK(contains(r.params[0].note, "idle_states/0/exit_latency"));
}

TEST_CASE("calibrate takes wide slopes where the figures jump at the narrow ones, and says it stalled where both fail", "[calibrate]") {
    // Figures from known functions of ctx_switch in place of the simulator. A spike at a finite
    // difference's point (3 us + 5%, or + 28%) is a run whose regime flips with a nanosecond of
    // a cost: the slope there promises a gain no step can give.
    TempDir tmp;
    write_file(tmp.file("pipe.json"), kPipe);
    nlohmann::json c = {
        {"machine", "kvm-2vcpu"},
        {"measurements",
         {{{"name", "pinned"}, {"scenario", "pipe.json"}, {"case", "pinned"}, {"metric", "usec_per_op"}, {"value", 10.0},
           {"spread", 0.1}}}},
        {"parameters", {{{"key", "ctx_switch"}, {"min", "500ns"}, {"max", "10us"}, {"start", "3us"}}}}};
    write_file(tmp.file("c.json"), c.dump());
    const CalibSpec spec = load_calibration(tmp.file("c.json"));
    const int64_t narrow = std::llround(std::exp(std::log(3000.0) + 0.05));
    const int64_t wide = std::llround(std::exp(std::log(3000.0) + 0.25));
    // The round trip grows by 2 us a us of ctx_switch: 10 us at 3.5 us.
    const auto line = [](int64_t v) { return 3.0 + 2.0 * static_cast<double>(v) / 1000.0; };
    const auto figures = [](auto f) {
        return [f](const std::vector<std::vector<int64_t>>& points, size_t& runs) {
            std::vector<std::vector<double>> out;
            for (const auto& v : points) out.push_back({f(v[0])});
            runs += points.size();
            return out;
        };
    };

    // Smooth: the narrow slopes reach 3.5 us.
    const CalibResult smooth = calibrate(spec, figures(line));
    INFO(calibration_table(smooth));
    CHECK(smooth.converged);
    CHECK_FALSE(smooth.stalled);
    CHECK_FALSE(smooth.wide_steps);
    CHECK(smooth.params[0].fitted == Approx(3500).margin(5));

    // A dip at the narrow point turns its slope around; the wide slope follows the line to 3.5 us.
    const CalibResult dip = calibrate(spec, figures([&](int64_t v) { return v == narrow ? line(v) - 3.0 : line(v); }));
    INFO(calibration_table(dip));
    CHECK(dip.wide_steps);
    CHECK(dip.converged);
    CHECK_FALSE(dip.stalled);
    CHECK(dip.params[0].fitted == Approx(3500).margin(5));
    CHECK(calibration_json(dip)["wide_steps"] == true);

    // Flat but for spikes at both points: no slope is the figure's, and the start is no minimum.
    const CalibResult spiky = calibrate(spec, figures([&](int64_t v) { return v == narrow || v == wide ? 11.0 : 13.0; }));
    INFO(calibration_table(spiky));
    CHECK(spiky.stalled);
    CHECK_FALSE(spiky.converged);
    CHECK(spiky.promised > 1.0);
    CHECK(spiky.chi2 == spiky.chi2_start);
    CHECK(contains(calibration_table(spiky), "(stopped, not converged: no step gained the "));
    CHECK(calibration_json(spiky)["stalled"] == true);
}

TEST_CASE("calibrate widens its uncertainties when the fit misses the measurements by more than their spreads", "[calibrate]") {
    // The same pinned round trip "measured" twice, 10% apart, each with a 1% spread: no value of
    // ctx_switch gets within a spread of both, so the spreads understate the scatter.
    TempDir tmp;
    write_file(tmp.file("pipe.json"), kPipe);
    const double pinned = simulated(tmp.file("pipe.json"), "pinned");
    const auto measurement = [&](const char* name, double v) {
        return nlohmann::json{{"name", name}, {"scenario", "pipe.json"}, {"case", "pinned"}, {"metric", "usec_per_op"},
                              {"value", v}, {"spread", pinned * 0.01}};
    };
    nlohmann::json c = {{"machine", "kvm-2vcpu"},
                        {"measurements", nlohmann::json::array({measurement("low", pinned * 0.95), measurement("high", pinned * 1.05)})},
                        {"parameters", nlohmann::json::array({{{"key", "ctx_switch"}, {"min", "500ns"}, {"max", "20us"}}})}};
    write_file(tmp.file("c.json"), c.dump());
    const CalibSpec spec = load_calibration(tmp.file("c.json"));  // the result points to it
    const CalibResult r = calibrate(spec, 1);
    INFO(calibration_table(r));
    REQUIRE(r.params.size() == 1);
    CHECK(r.dof == 1);
    CHECK(r.chi2 > 20);  // both 5% = 5 spreads away at best
    CHECK(r.sd_scale == Approx(std::sqrt(r.chi2)));
    CHECK(contains(calibration_table(r), "uncertainties scaled by sqrt(chi-square / degrees of freedom) = "));
    CHECK(calibration_json(r).at("sd_scale") == Approx(r.sd_scale));
    // Unscaled, two 1% figures would pin the cost's share of the round trip to 0.7%; the scatter
    // says 5%.
    const auto& p = r.params[0];
    CHECK(p.identifiable);
    const double unscaled = p.sd / r.sd_scale;
    CHECK(p.sd > 3 * unscaled);
}

// fio through FUSE on the 2-socket Xeon, short: /dev/fuse pays the server's read on a worker and two
// cross-CPU wakes; io-uring with WF_CURRENT_CPU replies pays it with the ring thread's commit on
// fio's own CPU.
// Table A's setup (libfuse's development branch before Dec 2025: one submit per reply, the WF_CURRENT_CPU wakee runs at once).
// Under `performance`: 3,000 reads from an idle machine's lowest clocks are mostly schedutil's
// climb, which would make the fit one of the governor's start rather than of the two costs.
std::string fuse_scenario(const char* server_read, const char* uring_commit) {
    return std::string(R"({
  "name": "calib-fuse",
  "machine": {"preset": "xeon-2s-16c32t", "profile": {"governor": "performance"}},
  "workload": {"kind": "fio", "rw": "randread", "bs": "4KiB", "numjobs": 1, "number_ios": 3000,
               "server_read": ")") + server_read + R"(", "uring_commit": ")" + uring_commit + R"("},
  "policies": ["plain", "fuse_wake_same_cpu"],
  "run": {"warmup_ops": 500, "seeds": [1]},
  "cases": [
    {"name": "dev"},
    {"name": "uring", "set": {"workload": {"transport": "io_uring", "uring_reply_batch": false}}}
  ]
})";
}

TEST_CASE("calibrate fits a FUSE server's per-request costs (workload parameters) and recovers them", "[calibrate][fuse]") {
    TempDir tmp;
    // The truth where the short /dev/fuse run is regular: at isolated values (2.2 and 3.2 us with
    // the Xeon's 2 us C1 exit) it falls into a slower regime (213 and 190 MiB/s against about 290).
    write_file(tmp.file("truth.json"), fuse_scenario("2600ns", "2600ns"));
    auto mibs = [&](const char* c, const char* policy) {
        const Scenario sc = load_scenario(tmp.file("truth.json"));
        RunOptions opt;
        opt.cases = {c};
        opt.policies = {policy};
        opt.quiet = true;
        return run_scenario(sc, opt).front().result.metrics.get(Metric::mib_per_sec);
    };
    const double dev = mibs("dev", "plain"), uring = mibs("uring", "fuse_wake_same_cpu");
    write_file(tmp.file("fio.json"), fuse_scenario("1500ns", "800ns"));
    nlohmann::json c = {
        {"machine", "xeon-2s-16c32t"},
        {"measurements",
         {{{"name", "dev"}, {"scenario", "fio.json"}, {"case", "dev"}, {"policy", "plain"}, {"metric", "mib_per_sec"},
           {"value", dev}, {"spread", dev * 0.01}},
          {{"name", "uring"}, {"scenario", "fio.json"}, {"case", "uring"}, {"policy", "fuse_wake_same_cpu"},
           {"metric", "mib_per_sec"}, {"value", uring}, {"spread", uring * 0.01}}}},
        {"parameters",
         {{{"key", "workload/server_read"}, {"min", "300ns"}, {"max", "10us"}},
          {{"key", "workload/uring_commit"}, {"min", "200ns"}, {"max", "10us"}}}}};
    write_file(tmp.file("c.json"), c.dump());
    const CalibSpec spec = load_calibration(tmp.file("c.json"));
    REQUIRE(spec.params.size() == 2);
    CHECK(spec.params[0].start == 1500);  // the scenario's value, not the declared default
    CHECK(spec.params[1].workload == "uring_commit");
    const CalibResult r = calibrate(spec, 2);
    INFO(calibration_table(r));
    CHECK(r.chi2 < 1.0);
    const double truth[] = {2600, 2600};
    for (size_t j = 0; j < 2; ++j) {
        INFO(r.params[j].param.key << ": fitted " << r.params[j].fitted << " sd " << r.params[j].sd);
        CHECK(r.params[j].identifiable);
        CHECK(std::fabs(r.params[j].fitted - truth[j]) <= 0.1 * truth[j]);
    }
    // They are the workload's, not the machine's: the report says where to set them, and a
    // machine file written from the fit leaves its profile as it was.
    CHECK(contains(calibration_table(r), "set them in each scenario's \"workload\""));
    const nlohmann::json m = calibrated_machine(r, tmp.file("xeon-refit.json"));
    CHECK_FALSE(m.at("profile").contains("server_read"));
    CHECK_FALSE(m.at("profile").contains("uring_commit"));
}

// fio over io-uring with a queue per core and plain replies moves to another core on every other
// read and refills its working set there: the throughput measures the working set.
TEST_CASE("calibrate fits a workload's working set (a size, in whole KiB) from a figure that moves the task", "[calibrate][fuse]") {
    TempDir tmp;
    auto scenario = [](const char* footprint) {
        nlohmann::json s = nlohmann::json::parse(fuse_scenario("2200ns", "2600ns"));
        s["workload"]["footprint"] = footprint;
        // 10,000 reads: over 3,000 the start's ramp leaves the figure a few percent of noise from
        // one footprint to the next, more than a 5% step changes it.
        s["workload"]["number_ios"] = 10000;
        return s.dump();
    };
    write_file(tmp.file("truth.json"), scenario("64KiB"));
    const Scenario truth = load_scenario(tmp.file("truth.json"));
    RunOptions opt;
    opt.cases = {"uring"};
    opt.policies = {"plain"};
    opt.quiet = true;
    const auto run = run_scenario(truth, opt);
    REQUIRE(run.front().result.metrics.get(Metric::migrations) > 1000);  // it does move, on every other read
    const double mibs = run.front().result.metrics.get(Metric::mib_per_sec);
    write_file(tmp.file("fio.json"), scenario("32KiB"));
    nlohmann::json c = {
        {"machine", "xeon-2s-16c32t"},
        {"measurements",
         {{{"name", "per core"}, {"scenario", "fio.json"}, {"case", "uring"}, {"policy", "plain"}, {"metric", "mib_per_sec"},
           {"value", mibs}, {"spread", mibs * 0.01}}}},
        {"parameters", {{{"key", "workload/footprint"}, {"min", "4KiB"}, {"max", "256KiB"}}}}};
    write_file(tmp.file("c.json"), c.dump());
    const CalibSpec spec = load_calibration(tmp.file("c.json"));
    REQUIRE(spec.params.size() == 1);
    CHECK(spec.params[0].unit == "KiB");
    CHECK(spec.params[0].start == 32);
    const CalibResult r = calibrate(spec, 2);
    const std::string table = calibration_table(r);
    INFO(table);
    CHECK(r.params[0].identifiable);
    CHECK(std::fabs(r.params[0].fitted - 64) <= 10);  // the figure moves in small steps
    CHECK(contains(table, "\"footprint\": \"" + std::to_string(std::llround(r.params[0].fitted)) + "KiB\""));
}

TEST_CASE("calibrate -o writes a machine file that runs, and keeps an existing one without --force", "[calibrate][cli]") {
    TempDir tmp;
    write_file(tmp.file("pipe.json"), kPipe);
    const double pinned = simulated(tmp.file("pipe.json"), "pinned");
    nlohmann::json c = {
        {"machine", "kvm-2vcpu"},
        {"measurements",
         {{{"name", "pinned"}, {"scenario", "pipe.json"}, {"case", "pinned"}, {"metric", "usec_per_op"}, {"value", pinned * 1.2},
           {"spread", pinned * 0.01}}}},
        {"parameters", {{{"key", "ctx_switch"}, {"min", "500ns"}, {"max", "10us"}}}}};
    write_file(tmp.file("c.json"), c.dump());
    const std::string out = tmp.file("kvm-refit.json");
    const CmdResult r = run_wakesim("calibrate " + shell_quote(tmp.file("c.json")) + " -o " + shell_quote(out) + " --format json");
    INFO(r.out);
    REQUIRE(r.rc == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["parameters"][0]["key"] == "ctx_switch");
    CHECK(j["parameters"][0]["fitted"].get<double>() > 3800);  // 20% slower pinned: a dearer switch
    const auto m = nlohmann::json::parse(read_file(out));
    CHECK(contains(m["profile"]["ctx_switch"]["source"].get<std::string>(), "fitted by wakesim calibrate"));
    // The new machine runs: the pinned figure is now the measured one, within its 1% spread.
    nlohmann::json sc = nlohmann::json::parse(kPipe);
    sc["machine"] = out;
    write_file(tmp.file("refit.json"), sc.dump());
    const double refit = simulated(tmp.file("refit.json"), "pinned");
    CHECK(std::fabs(refit / (pinned * 1.2) - 1) < 0.02);
    // Nothing a user wrote is overwritten without asking.
    const std::string before = read_file(out);
    const CmdResult again = run_wakesim("calibrate " + shell_quote(tmp.file("c.json")) + " -o " + shell_quote(out));
    CHECK(again.rc == 2);
    CHECK(contains(again.out, "--force"));
    CHECK(read_file(out) == before);
    // Not even with --force over the files the fit reads.
    const std::string cal = read_file(tmp.file("c.json"));
    const CmdResult self = run_wakesim("calibrate " + shell_quote(tmp.file("c.json")) + " --force -o " + shell_quote(tmp.file("c.json")));
    CHECK(self.rc == 2);
    CHECK(contains(self.out, "which this calibration reads"));
    CHECK(read_file(tmp.file("c.json")) == cal);
    // A refit of a refit keeps what the entry said before, and the description's sentences.
    nlohmann::json c2 = c;
    c2["machine"] = out;
    c2["measurements"][0]["scenario"] = "refit.json";  // the pipe on the refit machine
    c2["measurements"][0]["value"] = pinned * 1.3;
    write_file(tmp.file("c2.json"), c2.dump());
    const std::string out2 = tmp.file("kvm-refit2.json");
    REQUIRE(run_wakesim("calibrate " + shell_quote(tmp.file("c2.json")) + " -o " + shell_quote(out2)).rc == 0);
    const auto m2 = nlohmann::json::parse(read_file(out2));
    CHECK(contains(m2["profile"]["ctx_switch"]["source"].get<std::string>(), "; before: fitted by wakesim calibrate (c.json)"));
    CHECK(contains(m2["description"].get<std::string>(), "as kvm-refit. Profile refitted by wakesim calibrate as kvm-refit2."));
}

TEST_CASE("calibrate: every bad calibration file gives one error line with its pointer and exit code 2", "[calibrate][cli][bad_inputs]") {
    const fs::path dir = kSource / "tests" / "bad_inputs" / "calibrate";
    size_t n = 0;
    for (const auto& [file, ptr, msg] : read_expected_errors(dir)) {
        const std::string path = (dir / file).string();
        const CmdResult r = run_wakesim("calibrate " + shell_quote(path));
        INFO(file << " -> rc " << r.rc << ": " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
        CHECK(r.out.rfind("wakesim: error: " + path + ": " + ptr + ": ", 0) == 0);
        CHECK(contains(r.out, msg));
        ++n;
    }
    CHECK(n >= 6);
}

TEST_CASE("calibrate reports every error of a calibration file in one pass", "[calibrate][cli][bad_inputs]") {
    TempDir tmp;
    write_file(tmp.file("pipe.json"), kPipe);
    nlohmann::json c = {
        {"machine", "kvm-2vcpu"},
        {"measurements",
         {{{"name", "a"}, {"scenario", "pipe.json"}, {"case", "pinnned"}, {"metric", "usec_per_op"}, {"value", 13.5}, {"spread", 0.3}},
          {{"name", "b"}, {"scenario", "pipe.json"}, {"case", "pinned"}, {"metric", "usec_per_opp"}, {"value", 13.5}, {"spread", 0.3}}}},
        {"parameters", {{{"key", "ctx_swich"}, {"min", "500ns"}, {"max", "10us"}}}}};
    write_file(tmp.file("c.json"), c.dump());
    const CmdResult r = run_wakesim("calibrate " + shell_quote(tmp.file("c.json")));
    INFO(r.out);
    CHECK(r.rc == 2);
    CHECK(count_lines(r.out) == 3);
    CHECK(contains(r.out, "/measurements/0/case: "));
    CHECK(contains(r.out, "/measurements/1/metric: "));
    CHECK(contains(r.out, "/parameters/0/key: "));
    CHECK(contains(r.out, "did you mean \"ctx_switch\""));
    // The file's own keys are checked in the same pass, not before the rest.
    c["max_iterations"] = 0;
    c["colour"] = "red";
    write_file(tmp.file("c.json"), c.dump());
    const CmdResult top = run_wakesim("calibrate " + shell_quote(tmp.file("c.json")));
    INFO(top.out);
    CHECK(top.rc == 2);
    CHECK(count_lines(top.out) == 5);
    CHECK(contains(top.out, "/colour: unknown key"));
    CHECK(contains(top.out, "/max_iterations: expected an integer in [1, 200], got 0"));
    CHECK(contains(top.out, "/parameters/0/key: "));
}

TEST_CASE("every shipped calibration file reads, and the Xeon's FUSE costs and C1 exit are the ones its scenarios and machine file set", "[calibrate]") {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(kSource / "calibrations")) {
        if (e.path().extension() != ".json") continue;
        INFO(e.path().string());
        const CalibSpec spec = load_calibration(e.path().string());
        CHECK_FALSE(spec.params.empty());
        ++n;
        // A workload parameter starts from the scenarios' value: the fitted one, once they were updated.
        if (e.path().filename() == "xeon-2s-16c32t-fuse.json") {
            REQUIRE(spec.params.size() == 5);
            CHECK(spec.params[0].start == 2784);
            CHECK(spec.params[1].start == 1943);
            CHECK(spec.params[2].start == 4873);
            CHECK(spec.params[3].key == "workload/footprint");
            CHECK(spec.params[3].unit == "KiB");
            CHECK(spec.params[3].start == 67);
            // A machine parameter starts from the machine file's value: the fitted one.
            CHECK(spec.params[4].key == "idle_states/1/exit_latency");
            CHECK(spec.params[4].start == 2037);
        }
    }
    CHECK(n >= 2);
}
