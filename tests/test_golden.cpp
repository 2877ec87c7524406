// Golden outputs: every shipped scenario is run as `wakesim run S --format json` runs it, and each
// run's metrics are compared, one line per metric, with tests/golden/<scenario>.txt. A deliberate
// model change updates the goldens with scripts/update-goldens.sh; `git diff tests/golden` then
// shows exactly which figures moved (case, policy, seed, metric, old and new value). The same runs
// are checked against tests/baselines/<scenario>.json as `wakesim check` does (no regression
// beyond 5% in a summarised metric); the update rewrites those baselines too.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "experiment/check.h"
#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "sim/cpu_exec.h"
#include "workloads/program/task_program.h"

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;
using namespace wakesim;

namespace {

// One line per metric of every run: "case policy seed metric value" (arrays on one line).
std::vector<std::string> fingerprint(const nlohmann::json& report) {
    std::vector<std::string> lines;
    for (const auto& r : report.at("runs")) {
        const std::string who =
            r.at("case").get<std::string>() + " " + r.at("policy").get<std::string>() + " s" + r.at("seed").dump();
        lines.push_back(who + " completed " + r.at("completed").dump());
        for (const auto& [k, v] : r.at("metrics").items()) lines.push_back(who + " " + k + " " + v.dump());
    }
    return lines;
}

std::vector<std::string> read_lines(const fs::path& p) {
    std::vector<std::string> out;
    std::ifstream in(p);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// A scenario's figures but the event count, from one run of all its cases with invariant
// checks; `events` gets the events they took.
std::vector<std::string> figures_but_events(const char* text, uint64_t& events) {
    const Scenario sc = parse_scenario(nlohmann::json::parse(text), "joining.json");
    RunOptions opt;
    opt.quiet = true;
    opt.check_invariants = true;
    const std::vector<RunRecord> runs = run_scenario(sc, opt);
    std::vector<std::string> out;
    events = 0;
    for (const RunRecord& r : runs) events += r.result.events;
    for (const std::string& l : fingerprint(report_json(sc, runs)))
        if (l.find(" events ") == std::string::npos) out.push_back(l);
    return out;
}

}  // namespace

TEST_CASE("Every shipped scenario reproduces its golden figures", "[golden]") {
    const fs::path src = WAKESIM_SOURCE_DIR;
    const bool update = std::getenv("WAKESIM_UPDATE_GOLDENS") != nullptr;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(src / "scenarios"))
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(!files.empty());
    for (const fs::path& f : files) {
        const std::string name = f.stem().string();
        INFO("scenario " << name << " (after a deliberate model change: scripts/update-goldens.sh)");
        const Scenario sc = load_scenario(f.string());
        RunOptions opt;
        opt.jobs = 2;
        // Every run of every shipped scenario also passes the scheduler's invariant checks
        // (`run --check-invariants`); under scripts/sanitize.sh, with ASan and UBSan watching.
        opt.check_invariants = true;
        opt.quiet = true;
        const std::vector<RunRecord> runs = run_scenario(sc, opt);
        const std::vector<std::string> got = fingerprint(report_json(sc, runs));
        const fs::path golden = src / "tests" / "golden" / (name + ".txt");
        // The committed baseline of `wakesim check`, as a kernel developer's CI would use it.
        const fs::path baseline = src / "tests" / "baselines" / (name + ".json");
        if (update) {
            fs::create_directories(golden.parent_path());
            std::ofstream out(golden);
            for (const auto& l : got) out << l << "\n";
            fs::create_directories(baseline.parent_path());
            std::ofstream(baseline) << baseline_text(baseline_json(sc, runs));
            continue;
        }
        REQUIRE(fs::exists(baseline));
        {
            std::ifstream in(baseline);
            const nlohmann::json b = nlohmann::json::parse(in);
            CHECK(baseline_seeds(b, baseline.string(), sc) == sc.seeds);
            const CheckResult result = check_against(sc, runs, b, baseline.string(), CheckOptions{});
            const auto& rows = result.rows;
            size_t regressions = 0;
            for (const auto& r : rows) regressions += r.regression;
            INFO(check_report(sc, baseline.string(), result));
            CHECK(!rows.empty());
            CHECK(result.unchecked.empty());
            CHECK(regressions == 0);
        }
        REQUIRE(fs::exists(golden));
        const std::vector<std::string> want = read_lines(golden);
        // Name the first few figures that moved rather than dumping both files.
        std::ostringstream moved;
        int shown = 0;
        for (size_t i = 0; i < std::max(got.size(), want.size()) && shown < 10; ++i) {
            const std::string g = i < got.size() ? got[i] : "<missing>";
            const std::string w = i < want.size() ? want[i] : "<missing>";
            if (g != w) {
                moved << "\n  golden: " << w << "\n  now:    " << g;
                ++shown;
            }
        }
        INFO("figures that moved:" << moved.str());
        CHECK(got.size() == want.size());
        CHECK(shown == 0);
    }
}

TEST_CASE("Joining a task's consecutive work into one segment changes the number of events, not the figures",
          "[golden][speed]") {
    // next_action() returns a `run` step's work (or the cost after a read) together with the next
    // step's; a pipe write is checked and its lines pulled at the start of the joined segment and
    // taken back when another task uses the pipe first, or the writer is switched out, before the
    // writer gets there (ProgramDriver::settle_ahead); a reschedule asked for from another CPU
    // during the first piece is seen at its end, the return to user space (Action::first). Where
    // no two events fall in the same nanosecond, every figure but the event count is the same
    // with joining off. Here: the pipe pair of table C, hackbench on altra-80 (seed 1: 3,195 of
    // its 3,196 planned writes taken back) and on the 2-vCPU VM, and FUSE requesters (fio, also
    // six jobs on two CPUs, and bonnie++), whose work after a reply joins the next submit.
    const char* scenarios[] = {
        R"({"machine": "altra-80", "workload": {"kind": "pipe", "loops": 20000}, "policies": ["plain", "reciprocal_sync"],
            "run": {"seeds": [1]}})",
        R"({"machine": "altra-80", "workload": {"kind": "messaging", "groups": 1, "fds": 4, "loops": 200},
            "policies": ["plain"], "run": {"seeds": [1, 2, 3]}})",
        R"({"machine": "kvm-2vcpu", "workload": {"kind": "messaging", "groups": 2, "fds": 4, "loops": 200},
            "policies": ["plain"], "run": {"seeds": [1, 2, 3]}})",
        // FUSE requesters: the work after a reply (request teardown, the return to user space)
        // with the next request's submit; fio counts its I/O at the reply either way.
        R"({"machine": "altra-80", "workload": {"kind": "fio", "numjobs": 2, "number_ios": 3000, "transport": "dev"},
            "policies": ["plain", "fuse_sync_request"], "run": {"seeds": [1, 2]}})",
        R"({"machine": "altra-80", "workload": {"kind": "bonnie", "files": 300}, "policies": ["plain"], "run": {"seeds": [1]}})",
        // Contended: six jobs on two CPUs, where a wakeup from the other CPU asks for a reschedule
        // that the running job sees at its return to user space, before the IPI lands.
        R"({"machine": "altra-80", "workload": {"kind": "fio", "numjobs": 6, "cpus": "0-1", "number_ios": 3000,
            "transport": "dev"}, "policies": ["plain"], "run": {"seeds": [1, 2]}})",
    };
    for (const char* text : scenarios) {
        INFO(text);
        const auto figures = [&](int limit, uint64_t& events) {
            const int saved = ProgramDriver::join_limit;
            ProgramDriver::join_limit = limit;
            const std::vector<std::string> out = figures_but_events(text, events);
            ProgramDriver::join_limit = saved;
            return out;
        };
        uint64_t separate = 0, joined = 0;
        const std::vector<std::string> a = figures(1, separate), b = figures(ProgramDriver::join_limit, joined);
        CHECK(a == b);
        // Fewer events, though a write taken back costs one more (hackbench's 4 writers per pipe
        // on 80 CPUs take back most of theirs).
        CHECK(joined < separate);
    }
}

TEST_CASE("A wake cost owed before work under way ends in the work's event, with the same figures", "[golden]") {
    // CpuExec's overhead_work: the kernel time a task owes (a wake it made, a cache refill) and
    // the work it then resumes are one event instead of two. The boundary is kept for what can
    // act on it: a reschedule asked for from another CPU during the overhead splits the event
    // there, and the joined end keeps, among events of its nanosecond, the place the work's own
    // end would have had (Engine::schedule_as_of()). Every figure but the event count is the same
    // with joining off: the pipe pair (two joins a round trip), hackbench on the 2-vCPU VM (equal
    // costs, so many same-nanosecond ties), fio on the Xeon (SMT and turbo speed changes during
    // the overhead), six fio jobs on two CPUs (reschedules from elsewhere) and fio over io-uring.
    const char* scenarios[] = {
        R"({"machine": "altra-80", "workload": {"kind": "pipe", "loops": 20000}, "policies": ["plain", "reciprocal_sync"],
            "run": {"seeds": [1]}})",
        R"({"machine": "kvm-2vcpu-spr", "workload": {"kind": "messaging", "groups": 1, "fds": 20, "loops": 300},
            "policies": ["plain"], "run": {"seeds": [1, 2, 3]}})",
        R"({"machine": "xeon-2s-16c32t", "workload": {"kind": "fio", "numjobs": 8, "number_ios": 2000, "transport": "dev"},
            "policies": ["plain"], "run": {"seeds": [1, 2]}})",
        R"({"machine": "altra-80", "workload": {"kind": "fio", "numjobs": 6, "cpus": "0-1", "number_ios": 3000,
            "transport": "dev"}, "policies": ["plain"], "run": {"seeds": [1, 2]}})",
        R"({"machine": "xeon-2s-16c32t", "workload": {"kind": "fio", "numjobs": 2, "iodepth": 4, "ioengine": "io_uring",
            "number_ios": 2000, "transport": "io_uring"}, "policies": ["plain", "fuse_bg_next_cpu"], "run": {"seeds": [1]}})",
    };
    for (const char* text : scenarios) {
        INFO(text);
        const auto figures = [&](bool join, uint64_t& events) {
            CpuExec::join_overhead = join;
            const std::vector<std::string> out = figures_but_events(text, events);
            CpuExec::join_overhead = true;
            return out;
        };
        uint64_t separate = 0, joined = 0;
        const std::vector<std::string> a = figures(false, separate), b = figures(true, joined);
        CHECK(a == b);
        CHECK(joined < separate);
    }
}
