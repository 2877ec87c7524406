// The wakesim command line, run as a child process: every file under tests/bad_inputs/ must give one
// error line with its pointer and exit code 2; the subcommands must work on small inputs.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "policies/registry.h"
#include "kernel/features.h"
#include "workloads/workloads.h"
#include "topology/topology.h"

using namespace wakesim::clitest;

namespace {

// A tiny pipe scenario: 2 cases x 2 policies, 2000 round trips each (milliseconds to run).
const char* const kTinyScenario = R"({
  "name": "tiny",
  "description": "perf bench sched pipe, 2000 loops, on the Altra",
  "expected": "reciprocal_sync keeps the pair on one CPU",
  "machine": "altra-80",
  "workload": {"kind": "pipe", "loops": 2000},
  "policies": ["plain", "reciprocal_sync"],
  "run": {"warmup_ops": 200, "seeds": [1]},
  "cases": [
    {"name": "unpinned", "description": "perf bench sched pipe"},
    {"name": "pinned-cpu0", "description": "taskset -c 0", "set": {"workload": {"cpus": "0"}}}
  ]
})";

std::string tiny_scenario(const TempDir& dir) {
    const std::string path = dir.file("tiny.json");
    write_file(path, kTinyScenario);
    return path;
}

std::vector<std::string> split_tabs(const std::string& line) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const size_t tab = line.find('\t', start);
        out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
    }
    return out;
}

// expected.txt: one line per error line a scenario must give, tab-separated: file, JSON pointer, a
// part of the message, and optionally the file the error names when it is not the scenario (a
// machine file it uses, relative to tests/bad_inputs). A file with several mistakes has a line for
// each; they must all be reported in one run, one line each.
struct BadInput {
    std::string pointer, message, named_file;
};

}  // namespace

TEST_CASE("every bad input gives its error lines, one per mistake, with pointers and exit code 2", "[cli][bad_inputs]") {
    const fs::path dir = kSource / "tests" / "bad_inputs";
    std::ifstream list(dir / "expected.txt");
    REQUIRE(list.good());
    std::map<std::string, std::vector<BadInput>> expected;
    std::string line;
    while (std::getline(list, line)) {
        if (line.empty()) continue;
        const auto f = split_tabs(line);
        INFO("expected.txt line: " << line);
        REQUIRE((f.size() == 3 || f.size() == 4));
        REQUIRE(!f[1].empty());
        REQUIRE(f[1][0] == '/');
        REQUIRE(!f[2].empty());
        expected[f[0]].push_back(BadInput{f[1], f[2], f.size() == 4 ? f[3] : f[0]});
    }
    // expected.txt and the directory list the same files.
    std::set<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") files.insert(e.path().filename().string());
    for (const auto& f : files) {
        INFO(f << " has no line in expected.txt");
        CHECK(expected.count(f) == 1);
    }
    for (const auto& [f, want] : expected) {
        INFO("expected.txt names " << f << ", which is missing");
        CHECK(files.count(f) == 1);
    }
    CHECK(expected.size() >= 20);
    size_t several = 0;

    for (const auto& [name, want] : expected) {
        const std::string path = (dir / name).string();
        const CmdResult r = run_wakesim("run " + shell_quote(path));
        INFO(name << " -> rc " << r.rc << ", output: " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == want.size());
        CHECK(!r.out.empty());
        CHECK(r.out.back() == '\n');
        several += want.size() > 1 ? 1 : 0;
        // wakesim: error: FILE: /json/pointer: what was expected -- each expected line once.
        for (const BadInput& w : want) {
            const std::string head = "wakesim: error: " + (dir / w.named_file).string() + ": " + w.pointer + ": ";
            INFO("want a line starting " << head << " and holding " << w.message);
            std::istringstream lines(r.out);
            std::string got;
            size_t found = 0;
            while (std::getline(lines, got))
                found += got.rfind(head, 0) == 0 && contains(got, w.message) ? 1 : 0;
            CHECK(found == 1);
        }
    }
    // Machine files, topologies, the validation section and FUSE connections are among them.
    CHECK(several >= 5);
}

TEST_CASE("cli: the old policy name wf_current_cpu is refused, naming seccomp_current_cpu and fuse_wake_same_cpu",
          "[cli][policies]") {
    TempDir tmp;
    std::string text = kTinyScenario;
    const std::string from = R"("policies": ["plain", "reciprocal_sync"])";
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), R"("policies": ["plain", "wf_current_cpu"])");
    const std::string path = tmp.file("old-name.json");
    write_file(path, text);
    const CmdResult r = run_wakesim("run " + shell_quote(path));
    INFO(r.out);
    CHECK(r.rc == 2);
    CHECK(count_lines(r.out) == 1);
    CHECK(r.out.rfind("wakesim: error: " + path + ": /policies/1: policy \"wf_current_cpu\" was renamed; did you mean ", 0) == 0);
    CHECK(contains(r.out, "\"seccomp_current_cpu\""));
    CHECK(contains(r.out, "\"fuse_wake_same_cpu\""));
    // Not an alias: the registry has only the new name.
    const CmdResult list = run_wakesim("list policies", false);
    CHECK(contains(list.out, "seccomp_current_cpu "));
    CHECK_FALSE(contains(list.out, "wf_current_cpu"));
}

TEST_CASE("cli: help, version and usage errors", "[cli]") {
    const CmdResult help = run_wakesim("--help");
    CHECK(help.rc == 0);
    for (const char* sub : {"run", "explain", "validate", "list", "topo"}) CHECK(contains(help.out, sub));
    CHECK(run_wakesim("run --help").rc == 0);
    CHECK(run_wakesim("--version").rc == 0);

    for (const char* bad : {"", "frobnicate", "--frobnicate", "run", "list", "list nothing", "topo", "topo frob"}) {
        const CmdResult r = run_wakesim(bad);
        INFO("wakesim " << bad << " -> " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
        CHECK(r.out.rfind("wakesim: error: ", 0) == 0);
    }

    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    for (const std::string& bad : {"run " + sc + " --bogus", "run " + sc + " --format xml", "run " + sc + " -j 0",
                                  "run " + sc + " --seeds 0", "explain " + sc + " --wakeup 0",
                                  "run " + shell_quote(tmp.file("missing.json"))}) {
        const CmdResult r = run_wakesim(bad);
        INFO("wakesim " << bad << " -> " << r.out);
        CHECK(r.rc == 2);
        CHECK(count_lines(r.out) == 1);
    }
}

TEST_CASE("cli: list names everything known", "[cli]") {
    const CmdResult pol = run_wakesim("list policies");
    CHECK(pol.rc == 0);
    for (const auto& n : wakesim::policy_names()) {
        INFO("policy " << n);
        CHECK(contains(pol.out, n));
    }
    const CmdResult wl = run_wakesim("list workloads");
    CHECK(wl.rc == 0);
    for (const auto& w : wakesim::workload_kinds()) {
        INFO("workload " << w.kind);
        CHECK(contains(wl.out, w.kind));
    }
    const CmdResult mach = run_wakesim("list machines");
    CHECK(mach.rc == 0);
    for (const auto& name : wakesim::machine_names()) {
        INFO("machine " << name);
        CHECK(contains(mach.out, name + ": "));
    }
    const CmdResult feat = run_wakesim("list features");
    CHECK(feat.rc == 0);
    for (const auto& f : wakesim::feature_table()) {
        INFO("feature " << f.name);
        CHECK(contains(feat.out, f.name));
    }
}

TEST_CASE("cli: topo show prints sched domains", "[cli][topo]") {
    const CmdResult altra = run_wakesim("topo show altra-80");
    CHECK(altra.rc == 0);
    CHECK(contains(altra.out, "80 CPUs"));
    CHECK(contains(altra.out, "sched domains of altra-80"));
    CHECK(contains(altra.out, "domain0 MC"));

    const CmdResult epyc = run_wakesim("topo show epyc-zen4-2s");
    CHECK(epyc.rc == 0);
    CHECK(contains(epyc.out, "sched domains of epyc-zen4-2s"));
    CHECK(contains(epyc.out, "domain0 SMT"));
    CHECK(contains(epyc.out, "NUMA"));

    const CmdResult json = run_wakesim("topo show altra-80 --json", false);
    CHECK(json.rc == 0);
    const auto j = nlohmann::json::parse(json.out, nullptr, false);
    REQUIRE(!j.is_discarded());
    CHECK(j.contains("topology"));
    CHECK(j.contains("sched_domains"));

    const CmdResult nosuch = run_wakesim("topo show nosuch");
    INFO(nosuch.out);
    CHECK(nosuch.rc == 2);
    CHECK(count_lines(nosuch.out) == 1);
    CHECK(contains(nosuch.out, "nosuch"));
    CHECK(contains(nosuch.out, "altra-80"));  // the names it would have accepted

    const CmdResult near = run_wakesim("topo show altra-8");
    INFO(near.out);
    CHECK(near.rc == 2);
    CHECK(count_lines(near.out) == 1);
    CHECK(contains(near.out, "did you mean \"altra-80\"?"));
}

TEST_CASE("cli: topo import writes JSON that topo show accepts", "[cli][topo]") {
    TempDir tmp;
    for (const char* tree : {"sysfs-2s2c2t", "sysfs-bl-4-4"}) {
        const fs::path cpu_dir = kSource / "tests" / "data" / tree / "cpu";
        const CmdResult imp = run_wakesim("topo import " + shell_quote(cpu_dir.string()), false);
        INFO(tree << ": " << imp.out);
        REQUIRE(imp.rc == 0);
        const auto j = nlohmann::json::parse(imp.out, nullptr, false);
        REQUIRE(!j.is_discarded());
        CHECK(j.is_object());
        const std::string file = tmp.file(std::string(tree) + ".json");
        write_file(file, imp.out);
        const CmdResult show = run_wakesim("topo show " + shell_quote(file));
        INFO(show.out);
        CHECK(show.rc == 0);
        CHECK(contains(show.out, "sched domains of"));
        CHECK(contains(show.out, "domain0"));
    }
    const CmdResult bad = run_wakesim("topo import " + shell_quote(tmp.file("nowhere")));
    CHECK(bad.rc == 2);
    CHECK(count_lines(bad.out) == 1);
}

TEST_CASE("cli: run prints table, json and csv", "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));

    const CmdResult table = run_wakesim("run " + sc);
    INFO(table.out);
    REQUIRE(table.rc == 0);
    for (const char* s : {"unpinned", "pinned-cpu0", "plain", "reciprocal_sync", "usec/op"}) CHECK(contains(table.out, s));

    const CmdResult js = run_wakesim("run " + sc + " --format json", false);
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out, nullptr, false);
    REQUIRE(!j.is_discarded());
    CHECK(j.value("schema_version", 0) == 1);
    REQUIRE(j.contains("runs"));
    REQUIRE(j["runs"].is_array());
    CHECK(j["runs"].size() == 4);
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& r : j["runs"]) {
        REQUIRE(r.contains("case"));
        REQUIRE(r.contains("policy"));
        REQUIRE(r.contains("seed"));
        REQUIRE(r.contains("metrics"));
        CHECK(r["seed"] == 1);
        CHECK(r["metrics"].is_object());
        CHECK(!r["metrics"].empty());
        seen.insert({r["case"].get<std::string>(), r["policy"].get<std::string>()});
    }
    CHECK(seen.size() == 4);

    const CmdResult csv = run_wakesim("run " + sc + " --format csv", false);
    REQUIRE(csv.rc == 0);
    CHECK(csv.out.rfind("case,machine,policy,seed,", 0) == 0);
    CHECK(count_lines(csv.out) == 5);  // header + 4 runs

    const CmdResult one = run_wakesim("run " + sc + " --format csv --case unpinned --policy plain", false);
    CHECK(one.rc == 0);
    CHECK(count_lines(one.out) == 2);
    const CmdResult unknown = run_wakesim("run " + sc + " --policy plian");
    CHECK(unknown.rc == 2);
    CHECK(count_lines(unknown.out) == 1);
    CHECK(contains(unknown.out, "did you mean \"plain\"?"));
}

TEST_CASE("cli: --out refuses to overwrite without --force", "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    const std::string out = tmp.file("report.json");

    const CmdResult first = run_wakesim("run " + sc + " --format json --out " + shell_quote(out));
    INFO(first.out);
    REQUIRE(first.rc == 0);
    CHECK(first.out.empty());
    const std::string report = read_file(out);
    CHECK(!nlohmann::json::parse(report, nullptr, false).is_discarded());

    write_file(out, "precious\n");
    const CmdResult again = run_wakesim("run " + sc + " --out " + shell_quote(out));
    INFO(again.out);
    CHECK(again.rc == 2);
    CHECK(count_lines(again.out) == 1);
    CHECK(contains(again.out, out));
    CHECK(contains(again.out, "--force"));
    CHECK(read_file(out) == "precious\n");

    const CmdResult forced = run_wakesim("run " + sc + " --format json --out " + shell_quote(out) + " --force");
    CHECK(forced.rc == 0);
    CHECK(read_file(out) == report);
}

TEST_CASE("cli: --out to a path that cannot be written fails before any run", "[cli][run]") {
    // A scenario that runs to its 60 s limit: refused at once, not after the runs.
    TempDir tmp;
    write_file(tmp.file("long.json"), R"({"name": "long", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "tasks": [{"name": "a", "program": [{"loop": 0, "do": [{"sleep": "1ns"}]}]}]}})");
    const std::string sc = shell_quote(tmp.file("long.json"));
    const CmdResult missing = run_wakesim("run " + sc + " -q --out " + shell_quote(tmp.file("no/such/dir/r.txt")));
    CHECK(missing.rc == 2);
    CHECK(count_lines(missing.out) == 1);
    CHECK(contains(missing.out, "expected a file in an existing directory"));
    const CmdResult dir = run_wakesim("run " + sc + " -q --out " + shell_quote(tmp.path().string()) + " --force");
    CHECK(dir.rc == 2);
    CHECK(contains(dir.out, "is a directory; expected a file to write"));
}

TEST_CASE("cli: --trace writes ftrace text", "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    const std::string trace = tmp.file("run.trace");
    const CmdResult r = run_wakesim("run " + sc + " --case unpinned --policy plain --trace " + shell_quote(trace));
    INFO(r.out);
    REQUIRE(r.rc == 0);
    REQUIRE(fs::exists(trace));
    const std::string text = read_file(trace);
    CHECK(text.rfind("# tracer: nop", 0) == 0);
    CHECK(contains(text, "sched_switch:"));
    CHECK(contains(text, "sched_wakeup:"));

    // An existing trace file is not overwritten without --force.
    const CmdResult again = run_wakesim("run " + sc + " --case unpinned --policy plain --trace " + shell_quote(trace));
    CHECK(again.rc == 2);
    CHECK(count_lines(again.out) == 1);
    CHECK(read_file(trace) == text);
}

TEST_CASE("cli: a --trace-window after the run's end warns that the trace holds no events", "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    // 2,000 round trips take about 8 ms of simulated time: a window at 1 s is past the end.
    const std::string late = tmp.file("late.trace");
    const CmdResult r = run_wakesim("run " + sc + " -q --case unpinned --policy plain --trace-window 1s:2s --trace " +
                                    shell_quote(late));
    INFO(r.out);
    CHECK(r.rc == 0);
    CHECK(contains(r.out, "wakesim: warning: " + late + " holds no events: the run ended at "));
    CHECK(contains(r.out, "before --trace-window starts (1000.000 ms)"));
    CHECK_FALSE(contains(read_file(late), "sched_switch:"));

    const std::string inside = tmp.file("inside.trace");
    const CmdResult in = run_wakesim("run " + sc + " -q --case unpinned --policy plain --trace-window 1ms:2ms --trace " +
                                     shell_quote(inside));
    INFO(in.out);
    CHECK(in.rc == 0);
    CHECK_FALSE(contains(in.out, "warning"));
    CHECK(contains(read_file(inside), "sched_switch:"));
}

TEST_CASE("cli: a program's FUSE server threads are forked before its tasks, as a mount exists before its clients",
          "[cli][run][fuse]") {
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"machine": "kvm-2vcpu", "workload": {"kind": "program",
        "fuse": {"fs": {"transport": "io_uring"}}, "tasks": [{"name": "app", "role": "requester",
        "program": [{"loop": 3, "do": [{"run": "2us"}, {"fuse": "getattr"}, {"op": 0}]}]}]}, "policies": ["plain"]})");
    const std::string trace = tmp.file("s.trace");
    const CmdResult r = run_wakesim("run " + shell_quote(tmp.file("s.json")) + " -q --trace " + shell_quote(trace));
    INFO(r.out);
    REQUIRE(r.rc == 0);
    // The order of the forks: the worker and both ring threads, then the app.
    std::vector<std::string> forked;
    std::istringstream in(read_file(trace));
    for (std::string line; std::getline(in, line);) {
        const size_t at = line.find("sched_wakeup_new: comm=");
        if (at == std::string::npos) continue;
        const size_t from = at + std::string("sched_wakeup_new: comm=").size();
        forked.push_back(line.substr(from, line.find(' ', from) - from));
    }
    CHECK(forked == std::vector<std::string>{"fs-worker-0", "fs-ring-0", "fs-ring-1", "app"});
}

TEST_CASE("cli: fio's jobs fork once the FUSE server's threads sleep, onto idle CPUs, not onto CPUs still starting ring threads",
          "[cli][run][fuse]") {
    // passthrough_hp -o io_uring on the Xeon: 32 ring threads, each on its own CPU, leave C6
    // (170 us) when forked. The four jobs fork after every ring thread has gone to sleep waiting
    // for requests, so fork balancing finds idle CPUs: four different cores.
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"machine": "xeon-2s-16c32t", "workload": {"kind": "fio", "numjobs": 4,
        "number_ios": 400, "transport": "io_uring"}, "policies": ["plain"], "run": {"seeds": [1]}})");
    const std::string trace = tmp.file("s.trace");
    const CmdResult r = run_wakesim("run " + shell_quote(tmp.file("s.json")) + " -q --trace " + shell_quote(trace));
    INFO(r.out);
    REQUIRE(r.rc == 0);
    // Every server thread forked (sched_wakeup_new of a fuse- task) has slept (a sched_switch
    // from it with prev_state=S) before the first job forks.
    std::set<std::string> servers, slept;
    bool job_forked = false;
    std::set<int> cores;
    std::istringstream in(read_file(trace));
    const auto comm_after = [](const std::string& line, const std::string& key) {
        const size_t from = line.find(key) + key.size();
        return line.substr(from, line.find(' ', from) - from);
    };
    for (std::string line; std::getline(in, line);) {
        if (!job_forked && line.find("sched_wakeup_new: comm=fuse-") != std::string::npos)
            servers.insert(comm_after(line, "sched_wakeup_new: comm="));
        if (!job_forked && line.find("sched_switch: prev_comm=fuse-") != std::string::npos &&
            line.find("prev_state=S") != std::string::npos)
            slept.insert(comm_after(line, "sched_switch: prev_comm="));
        if (line.find("sched_wakeup_new: comm=fio-") == std::string::npos) continue;
        job_forked = true;
        const int cpu = std::stoi(line.substr(line.find("target_cpu=") + 11));
        cores.insert(cpu % 16);  // CPU c and c + 16 share a core
    }
    CHECK(servers.size() >= 32);  // a ring thread per CPU, and the worker
    CHECK(slept == servers);
    CHECK(cores.size() == 4);
}

TEST_CASE("cli: --trace writes Perfetto's protobuf for .pftrace or --trace-format perfetto", "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    const std::string run = "run " + sc + " --case unpinned --policy plain ";
    const std::string by_name = tmp.file("run.pftrace"), by_option = tmp.file("run.trace");
    const CmdResult r = run_wakesim(run + "--trace " + shell_quote(by_name));
    INFO(r.out);
    REQUIRE(r.rc == 0);
    const std::string proto = read_file(by_name);
    REQUIRE(proto.size() > 2);
    CHECK(proto[0] == 0x0a);  // Trace.packet, length-delimited
    CHECK(proto.find("# tracer") == std::string::npos);
    const CmdResult o = run_wakesim(run + "--trace-format perfetto --trace " + shell_quote(by_option));
    REQUIRE(o.rc == 0);
    CHECK(read_file(by_option) == proto);
    const std::string text = tmp.file("text.pftrace");
    REQUIRE(run_wakesim(run + "--trace-format ftrace --trace " + shell_quote(text)).rc == 0);
    CHECK(read_file(text).rfind("# tracer: nop", 0) == 0);

    for (const std::string& bad : {run + "--trace " + shell_quote(tmp.file("x.trace")) + " --trace-format protobuf",
                                   run + "--trace-format perfetto"}) {
        const CmdResult e = run_wakesim(bad);
        INFO("wakesim " << bad << " -> " << e.out);
        CHECK(e.rc == 2);
        CHECK(count_lines(e.out) == 1);
        CHECK(e.out.rfind("wakesim: error: ", 0) == 0);
        CHECK(contains(e.out, "--trace"));
    }
    CHECK(contains(run_wakesim(run + "--trace " + shell_quote(tmp.file("y.trace")) + " --trace-format perfeto").out, "did you mean \"perfetto\""));
}

TEST_CASE("cli: explain prints one wakeup's decision path", "[cli][explain]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    const CmdResult r = run_wakesim("explain " + sc + " --wakeup 3");
    INFO(r.out);
    REQUIRE(r.rc == 0);
    CHECK(r.out.rfind("wakeup #3", 0) == 0);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);)
        if (!l.empty()) lines.push_back(l);
    REQUIRE(lines.size() >= 3);
    // The decision path, then what became of the wakeup: how it was queued, and when it ran.
    CHECK(contains(r.out, "select_task_rq"));
    CHECK(contains(r.out, "  result: cpu"));
    CHECK(contains(r.out, "  ttwu_queue: "));
    CHECK(contains(r.out, "    enqueued +"));
    CHECK(contains(lines.back(), "runs on cpu"));
    CHECK(contains(lines.back(), "(the wake latency)"));

    const CmdResult pinned = run_wakesim("explain " + sc + " --case pinned-cpu0 --policy reciprocal_sync --wakeup 2");
    CHECK(pinned.rc == 0);
    CHECK(contains(pinned.out, "case=pinned-cpu0 policy=reciprocal_sync"));
    // A pinned wakee's call still says who woke whom, and when.
    CHECK(contains(pinned.out, "select_task_rq: wakee sched-pipe-"));
    CHECK(contains(pinned.out, "one allowed CPU: the fair class is not consulted -> cpu0"));

    // The header gives the call's simulated time; --wakee and --after pick a wakeup by what a
    // trace shows, and the header's call number explains the same wakeup on its own.
    const CmdResult picked = run_wakesim("explain " + sc + " --wakee sched-pipe-1 --after 200us --wakeup 2");
    INFO(picked.out);
    REQUIRE(picked.rc == 0);
    const size_t hash = picked.out.find('#'), at_t = picked.out.find(" at "), s_unit = picked.out.find(" s  case=");
    REQUIRE((hash != std::string::npos && at_t != std::string::npos && s_unit != std::string::npos));
    const std::string call = picked.out.substr(hash + 1, at_t - hash - 1);
    const double t = std::stod(picked.out.substr(at_t + 4, s_unit - at_t - 4));
    CHECK(t >= 200e-6);
    CHECK(contains(picked.out, "wakee sched-pipe-1 "));
    CHECK(run_wakesim("explain " + sc + " --wakeup " + call).out == picked.out);
    // The first of them is an earlier call, and no call of that wakee lies between the two.
    const CmdResult first = run_wakesim("explain " + sc + " --wakee sched-pipe-1 --after 200us");
    REQUIRE(first.rc == 0);
    const unsigned long first_call = std::stoul(first.out.substr(first.out.find('#') + 1));
    CHECK(first_call < std::stoul(call));
    for (unsigned long n = first_call + 1; n < std::stoul(call); ++n)
        CHECK_FALSE(contains(run_wakesim("explain " + sc + " --wakeup " + std::to_string(n)).out, "wakee sched-pipe-1 "));
    const CmdResult nobody = run_wakesim("explain " + sc + " --wakee sched-pipe-7");
    CHECK(nobody.rc == 2);
    CHECK(count_lines(nobody.out) == 1);
    CHECK(contains(nobody.out, "tasks woken: "));
    CHECK(contains(nobody.out, "did you mean \"sched-pipe-"));
    const CmdResult late = run_wakesim("explain " + sc + " --after 100s");
    CHECK(late.rc == 2);
    CHECK(contains(late.out, "no task is woken then"));
    // A wakeup that needs no placement (ttwu_runnable(): fio still queued, delayed, on its ring
    // thread's CPU) is no select_task_rq call: --wakee passes it, and the header says so.
    const std::string fuse = shell_quote((kSource / "scenarios" / "fuse-fio-xeon.json").string());
    // (Half of fio's wakeups here are such; one of five consecutive picks must pass one.)
    int passed_some = 0;
    for (const char* when : {"10ms", "10020us", "10040us", "10060us", "10080us"}) {
        const CmdResult passed = run_wakesim("explain " + fuse + " --case uring-per-core --wakee fio-0 --after " + when);
        INFO(passed.out);
        REQUIRE(passed.rc == 0);
        CHECK(contains(passed.out, "select_task_rq_fair: wakee fio-0 "));
        // The Xeon's C-states are entered with MWAIT: a wake of an idle CPU sends no IPI.
        if (contains(passed.out, "idle in C")) CHECK(contains(passed.out, "polls its flags (set_nr_if_polling()), no IPI"));
        passed_some += contains(passed.out, "needed no placement") ? 1 : 0;
    }
    CHECK(passed_some > 0);
    const CmdResult unitless = run_wakesim("explain " + sc + " --after 5");
    CHECK(unitless.rc == 2);
    CHECK(contains(unitless.out, "--after: "));

    for (const std::string& bad : {"explain " + sc + " --case nosuch", "explain " + sc + " --policy plian",
                                  "explain " + sc + " --wakeup 1000000000"}) {
        const CmdResult e = run_wakesim(bad);
        INFO("wakesim " << bad << " -> " << e.out);
        CHECK(e.rc == 2);
        CHECK(count_lines(e.out) == 1);
        CHECK(e.out.rfind("wakesim: error: ", 0) == 0);
    }
    CHECK(contains(run_wakesim("explain " + sc + " --case nosuch").out, "unpinned"));
    // The bound the message names is the run's last select_task_rq call, warm-up included.
    const std::string msg = run_wakesim("explain " + sc + " --wakeup 1000000000").out;
    const size_t at = msg.find("at most ");
    REQUIRE(at != std::string::npos);
    const unsigned long last = std::stoul(msg.substr(at + 8));
    REQUIRE(last > 3);
    CHECK(run_wakesim("explain " + sc + " --wakeup " + std::to_string(last)).rc == 0);
    CHECK(run_wakesim("explain " + sc + " --wakeup " + std::to_string(last + 1)).rc == 2);
}

TEST_CASE("cli: -j 2 gives byte-identical output to -j 1", "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    for (const char* format : {"table", "json", "csv"}) {
        const std::string args = "run " + sc + " --seeds 2 --format " + format;
        const CmdResult serial = run_wakesim(args + " -j 1", false);
        const CmdResult parallel = run_wakesim(args + " -j 2", false);
        INFO(format);
        CHECK(serial.rc == 0);
        CHECK(parallel.rc == 0);
        CHECK(!serial.out.empty());
        CHECK(serial.out == parallel.out);
    }
}

// Generated documentation: each block between "<!-- BEGIN GENERATED: wakesim ARGS -->" and
// "<!-- END GENERATED -->" in docs/*.md is exactly what `wakesim ARGS` prints today
// (scripts/gen-docs.sh rewrites them).
TEST_CASE("docs/: every generated block matches the declarations it comes from", "[cli][docs]") {
    const std::string begin = "<!-- BEGIN GENERATED: wakesim ", end = "<!-- END GENERATED -->";
    int blocks = 0;
    for (const auto& e : fs::directory_iterator(kSource / "docs")) {
        if (e.path().extension() != ".md") continue;
        const std::string text = read_file(e.path());
        for (size_t at = text.find(begin); at != std::string::npos; at = text.find(begin, at + 1)) {
            const size_t args_end = text.find(" -->\n", at);
            REQUIRE(args_end != std::string::npos);
            const std::string args = text.substr(at + begin.size(), args_end - at - begin.size());
            const size_t body = args_end + 5;
            const size_t stop = text.find(end, body);
            REQUIRE(stop != std::string::npos);
            INFO(e.path().filename().string() << ": wakesim " << args << " (run scripts/gen-docs.sh)");
            const CmdResult r = run_wakesim(args, false);
            // `validate` exits 1 when a row fails; the block then shows the failing row as it is.
            if (args.rfind("validate", 0) == 0)
                CHECK((r.rc == 0 || r.rc == 1));
            else
                CHECK(r.rc == 0);
            CHECK(text.substr(body, stop - body) == r.out);
            ++blocks;
        }
    }
    CHECK(blocks >= 1);
}

// docs/scenarios.md shows scenarios/reference-all-keys.json whole: the copy is the file.
TEST_CASE("docs/: the reference example of every key is the shipped file", "[cli][docs]") {
    const std::string doc = read_file(kSource / "docs" / "scenarios.md");
    const size_t section = doc.find("## Reference example: every key");
    REQUIRE(section != std::string::npos);
    const size_t open = doc.find("```json\n", section);
    REQUIRE(open != std::string::npos);
    const size_t body = open + 8;
    const size_t close = doc.find("```", body);
    REQUIRE(close != std::string::npos);
    CHECK(doc.substr(body, close - body) == read_file(kSource / "scenarios" / "reference-all-keys.json"));
}

TEST_CASE("cli: list machines is one line per machine, -v prints the profile as a scenario writes it", "[cli][machines]") {
    const CmdResult brief = run_wakesim("list machines");
    REQUIRE(brief.rc == 0);
    CHECK(count_lines(brief.out) == 1 + wakesim::machine_names().size());
    CHECK_FALSE(contains(brief.out, "source:"));
    const CmdResult verbose = run_wakesim("list machines -v");
    REQUIRE(verbose.rc == 0);
    CHECK(count_lines(verbose.out) > 10 * wakesim::machine_names().size());
    CHECK(contains(verbose.out, "\"syscall\": \""));  // the key and value "machine": {"profile": ...} takes
    CHECK(contains(verbose.out, "\"tick_hz\": "));
    CHECK_FALSE(contains(verbose.out, "syscall_ns"));
    const CmdResult show = run_wakesim("topo show kvm-2vcpu");
    REQUIRE(show.rc == 0);
    CHECK(contains(show.out, " 1 NUMA node, "));  // not "1 NUMA nodes"
}

TEST_CASE("cli: usage errors are one line with the near miss suggested", "[cli]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));
    const CmdResult seed = run_wakesim("run " + sc + " --sed 3");
    INFO(seed.out);
    CHECK(seed.rc == 2);
    CHECK(count_lines(seed.out) == 1);
    CHECK(seed.out == "wakesim: error: unknown option \"--sed\" for wakesim run; did you mean \"--seed\"?\n");
    // A value out of range: CLI11's check, in the one-line form.
    const CmdResult neg = run_wakesim("run " + sc + " --seed -1");
    CHECK(neg.rc == 2);
    CHECK(count_lines(neg.out) == 1);
    CHECK(neg.out.rfind("wakesim: error: --seed: ", 0) == 0);
    const CmdResult pol = run_wakesim("list polices");
    INFO(pol.out);
    CHECK(pol.rc == 2);
    CHECK(count_lines(pol.out) == 1);
    CHECK(pol.out.rfind("wakesim: error: ", 0) == 0);
    CHECK(pol.out == "wakesim: error: list: expected one of: policies, workloads, machines, features, metrics; got "
                     "\"polices\" (did you mean \"policies\"?)\n");
    const CmdResult fmt = run_wakesim("run " + sc + " --format JSON");
    CHECK(fmt.rc == 2);
    CHECK(contains(fmt.out, "(did you mean \"json\"?)"));
    // A missing argument or subcommand names the command, what it wants and where the help is.
    const CmdResult bare = run_wakesim("run");
    CHECK(bare.rc == 2);
    CHECK(bare.out == "wakesim: error: run: missing scenario: scenario JSON file; see wakesim run --help\n");
    const CmdResult topo = run_wakesim("topo");
    CHECK(topo.rc == 2);
    CHECK(topo.out == "wakesim: error: topo: expected a subcommand (show, import); see wakesim topo --help\n");
    const CmdResult none = run_wakesim("");
    CHECK(none.rc == 2);
    CHECK(count_lines(none.out) == 1);
    CHECK(none.out.rfind("wakesim: error: expected a subcommand (run, compare, ", 0) == 0);
    // A word where the subcommand goes is named, with the nearest subcommand.
    const CmdResult typo = run_wakesim("rn");
    CHECK(typo.rc == 2);
    CHECK(count_lines(typo.out) == 1);
    CHECK(contains(typo.out, "; got \"rn\" (did you mean \"run\"?); see wakesim --help\n"));
    const CmdResult sub = run_wakesim("topo shw");
    CHECK(sub.rc == 2);
    CHECK(sub.out == "wakesim: error: topo: expected a subcommand, one of: show, import; got \"shw\" (did you mean "
                     "\"show\"?); see wakesim topo --help\n");
}

TEST_CASE("cli: import rtapp reads rt-app's own style: comments, trailing commas, repeated keys, timers", "[cli][rtapp]") {
    TempDir tmp;
    const fs::path data = kSource / "tests" / "data" / "rtapp";
    auto import = [&](const std::string& f) {
        const CmdResult r = run_wakesim("import rtapp " + shell_quote((data / f).string()), false);
        INFO(f << ": " << r.out);
        REQUIRE(r.rc == 0);
        return nlohmann::json::parse(r.out);
    };
    auto runs = [&](const nlohmann::json& sc, const std::string& name) {
        const std::string path = tmp.file(name);
        write_file(path, sc.dump(2));
        const CmdResult r = run_wakesim("run --format json " + shell_quote(path), false);
        INFO(name << ": " << r.out);
        CHECK(r.rc == 0);
    };
    // A unique timer is the task's own (per instance); a zero sleep is no step; loop -1 is forever.
    const auto periodic = import("periodic-timer.json");
    CHECK(periodic["run"]["duration"] == "3s");
    CHECK(periodic["workload"]["timers"] == nlohmann::json::parse(R"({"unique@ticker": {}})"));
    CHECK(periodic["workload"]["tasks"][0]["program"] ==
          nlohmann::json::parse(R"([{"loop": 0, "do": [{"run": "1000us"}, {"timer": "unique@ticker", "period": "10000us"}]}])"));
    runs(periodic, "periodic.json");
    // Phases with their loops, one timer across them (absolute when any use says so), a delay,
    // instances, runtime as run.
    const auto lh = import("light-heavy.json");
    CHECK(lh["workload"]["timers"] == nlohmann::json::parse(R"({"unique_w@worker": {"mode": "absolute"}})"));
    const auto& worker = lh["workload"]["tasks"][0];
    CHECK(worker["count"] == 4);
    CHECK(worker["delay"] == "5000us");
    CHECK(worker["program"] == nlohmann::json::parse(R"([
        {"loop": 20, "do": [{"run": "2000us"}, {"timer": "unique_w@worker", "period": "16000us"}]},
        {"loop": 20, "do": [{"run": "12000us"}, {"timer": "unique_w@worker", "period": "16000us"}]}])"));
    runs(lh, "light-heavy.json");
    // A repeated key is the next event (workgen's renaming); a timer named without "unique" is
    // shared; resume/suspend, mutex and condition, semaphore.
    const auto chain = import("audio-chain.json");
    CHECK(chain["workload"]["timers"] == nlohmann::json::parse(R"({"clock": {"shared": true}})"));
    const auto& ct = chain["workload"]["tasks"];
    CHECK(ct[0]["program"] == nlohmann::json::parse(R"([{"loop": 0, "do": [
        {"resume": "mixer"}, {"timer": "clock", "period": "5000us"},
        {"loop": 3, "do": [{"timer": "clock", "period": "5000us"}]}]}])"));
    CHECK(ct[1]["program"] == nlohmann::json::parse(R"([{"loop": 0, "do": [
        {"suspend": true}, {"run": "300us"}, {"resume": "decoder"}, {"run": "2000us"}]}])"));
    CHECK(ct[2]["program"][0]["do"] == nlohmann::json::parse(R"([{"suspend": true}, {"run": "800us"},
        {"wait": "mutex_buf"}, {"post": "filled"}, {"post": "mutex_buf"}, {"post": "sem_frames"}, {"run": "100us"}])"));
    CHECK(ct[3]["policy"] == "batch");
    CHECK(ct[3]["program"][0]["do"] == nlohmann::json::parse(R"([{"wait": "mutex_buf"}, {"post": "mutex_buf"},
        {"wait": "filled"}, {"wait": "mutex_buf"}, {"post": "mutex_buf"}, {"wait": "sem_frames"}, {"run": "250us"}])"));
    CHECK(contains(chain["description"].get<std::string>(), "rt-app loses it"));
    runs(chain, "chain.json");
    // A barrier has as many participants as rt-app counts: each reference times its instances.
    const auto bp = import("barrier-pair.json");
    CHECK(bp["workload"]["barriers"] == nlohmann::json::parse(R"({"first": 2, "second": 2})"));
    CHECK(bp["workload"]["tasks"][0]["program"] == nlohmann::json::parse(R"([{"loop": 50, "do": [
        {"run": "1000us"}, {"sleep": "2000us"}, {"barrier": "first"}, {"run": "2000us"}, {"barrier": "second"}]}])"));
    runs(bp, "barrier.json");
}

TEST_CASE("cli: import rtapp --machine takes a machine or a machine file, written as a path from -o's folder",
          "[cli][rtapp]") {
    TempDir tmp;
    const std::string in = shell_quote((kSource / "tests" / "data" / "rtapp" / "periodic-pair.json").string());
    fs::create_directories(tmp.file("sub"));
    const std::string machine = (kSource / "machines" / "kvm-2vcpu.json").string();
    const std::string out = tmp.file("sub/s.json");
    const CmdResult r = run_wakesim("import rtapp " + in + " -o " + shell_quote(out) + " --machine " + shell_quote(machine));
    INFO(r.out);
    REQUIRE(r.rc == 0);
    CHECK(run_wakesim("run -q --seeds 1 " + shell_quote(out)).rc == 0);  // the path resolves from sub/
    const CmdResult bad = run_wakesim("import rtapp " + in + " --machine altra80");
    CHECK(bad.rc == 2);
    CHECK(contains(bad.out, "(did you mean \"altra-80\"?)"));
}

TEST_CASE("cli: import rtapp refuses what wakesim does not model, every construct on its own line", "[cli][rtapp]") {
    const fs::path data = kSource / "tests" / "data" / "rtapp";
    const std::string file = (data / "unmodelled.json").string();
    const CmdResult r = run_wakesim("import rtapp " + shell_quote(file));
    INFO(r.out);
    CHECK(r.rc == 2);
    const std::string p = "wakesim: error: " + file + ": ";
    const std::vector<std::string> want = {
        p + "/global/frag: expected a key of rt-app's global object",
        p + "/tasks/rt/policy: expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE: wakesim models the fair class",
        p + "/tasks/grouped/nodes_membind: expected no \"nodes_membind\"",
        p + "/tasks/grouped/taskgroup: expected a task group one level below the root",
        p + "/tasks/dl/dl-runtime: expected no \"dl-runtime\"",
        p + "/tasks/loader/mem: expected no \"mem\"",
        p + "/tasks/loader/iorun: expected no \"iorun\"",
        p + "/tasks/loader/yield: expected no \"yield\"",
        p + "/tasks/loader/fork: expected no \"fork\"",
        p + "/tasks/waker/broad: expected no \"broad\"",
        p + "/tasks/waker/sync: expected no \"sync\"",
        p + "/tasks/mover/phases/p0/cpus: expected \"cpus\" per task",
        p + "/tasks/mover/phases/p0/util_max: expected \"util_max\" per task",
        p + "/tasks/mover/phases/p0/taskgroup: expected the task's own task group",
        p + "/tasks/lost/resume: expected the name of a task of this file; \"nobody\" is none",
        p + "/tasks/old/exec: expected events (run, sleep, lock, ...): \"exec\" is rt-app's old task format",
        p + "/tasks/old/period: expected no \"period\": rt-app reads it for SCHED_DEADLINE"};
    for (const std::string& line : want) {
        INFO("want a line starting " << line);
        CHECK(contains("\n" + r.out, "\n" + line));
    }
    CHECK(count_lines(r.out) == want.size());
    // Malformed JSON is one line with its place; instance 0 (only for fork) is refused.
    TempDir tmp;
    const std::string bad = tmp.file("bad.json");
    write_file(bad, "{\n  \"tasks\": {\n    \"t\": {\"suspend\", \"run\": 10}\n  }\n}\n");
    const CmdResult m = run_wakesim("import rtapp " + shell_quote(bad));
    CHECK(m.rc == 2);
    CHECK(count_lines(m.out) == 1);
    CHECK(contains(m.out, ": /: expected an rt-app file in JSON"));
    CHECK(contains(m.out, "line 3, column"));
    // A refused instance count does not hide the other tasks' mistakes, nor the task's own events'.
    write_file(bad, R"({"tasks": {"t": {"instance": 0, "run": "10"}, "u": {"instance": 2, "run": 10}, "v": {"resume": "u", "run": 5}}})");
    const CmdResult z = run_wakesim("import rtapp " + shell_quote(bad));
    INFO(z.out);
    CHECK(z.rc == 2);
    CHECK(count_lines(z.out) == 3);
    CHECK(contains(z.out, ": /tasks/t/instance: expected 1 or more"));
    CHECK(contains(z.out, ": /tasks/t/run: expected a run time in microseconds, an integer in [0, 3600000000], got string \"10\"\n"));
    CHECK(contains(z.out, ": /tasks/v/resume: expected a task of one instance"));
    write_file(bad, R"({"tasks": {"u": {"instance": 2, "run": 10}, "v": {"resume": "u", "run": 5}}})");
    const CmdResult many = run_wakesim("import rtapp " + shell_quote(bad));
    CHECK(many.rc == 2);
    CHECK(contains(many.out, ": /tasks/v/resume: expected a task of one instance"));
}

TEST_CASE("cli: every error of a scenario is reported in one pass, each on its own line", "[cli][bad_inputs]") {
    TempDir tmp;
    const std::string path = tmp.file("many.json");
    write_file(path, R"({
  "machine": "altra-80",
  "features": {"wa_idle": true, "SIS_UTIL": "yes"},
  "workload": {"kind": "program", "chanels": {},
    "tasks": [
      {"name": "a", "nice": 99, "program": [{"run": "1ms", "sleep": "1ms"}, {"sleep": "5"}]},
      {"name": "b", "cpus": [0, 1], "colour": "red", "program": [{"run": "1ms"}]}
    ]},
  "policies": ["plain", "WF_SYNC"],
  "run": {"duraton": "1s", "warmup": "2"}
})");
    const CmdResult r = run_wakesim("run " + shell_quote(path));
    INFO(r.out);
    CHECK(r.rc == 2);
    const std::string p = "wakesim: error: " + path + ": ";
    for (const std::string& line :
         {p + "/policies/1: expected one of: ", p + "/features/wa_idle: unknown key \"wa_idle\"; did you mean \"WA_IDLE\"?",
          p + "/features/SIS_UTIL: expected a boolean", p + "/workload/chanels: unknown key \"chanels\"; did you mean \"channels\"?",
          p + "/run/duraton: unknown key \"duraton\"; did you mean \"duration\"?", p + "/run/warmup: "}) {
        INFO("want a line starting " << line);
        CHECK(contains("\n" + r.out, "\n" + line));
    }
    CHECK(count_lines(r.out) == 6);
    // With the workload's own keys right, its tasks' errors show, every one.
    std::string text = read_file(path);
    text.replace(text.find("\"chanels\": {},"), 14, "");
    write_file(path, text);
    const CmdResult t = run_wakesim("run " + shell_quote(path));
    INFO(t.out);
    // Task 0's steps are read although its "nice" failed: their two mistakes show as well.
    for (const std::string& line : {p + "/workload/tasks/0/nice: expected an integer in [-20, 19], got 99",
                                    p + "/workload/tasks/1/colour: unknown key \"colour\"",
                                    p + "/workload/tasks/0/program/0: expected one step key per step",
                                    p + "/workload/tasks/0/program/1/sleep: expected a duration with a unit"}) {
        INFO("want a line starting " << line);
        CHECK(contains("\n" + t.out, "\n" + line));
    }
    CHECK(count_lines(t.out) == 9);
    // Past 20 lines, one more says how many were left out, in a workload as at the top level.
    nlohmann::json many = {{"machine", "altra-80"}, {"policies", {"plain"}}, {"workload", {{"kind", "pipe"}}}};
    for (int i = 0; i < 25; ++i) many["workload"]["zz" + std::to_string(10 + i)] = 1;
    write_file(path, many.dump());
    const CmdResult m = run_wakesim("run " + shell_quote(path));
    INFO(m.out);
    CHECK(count_lines(m.out) == 21);
    CHECK(contains(m.out, p + "/: and 5 more errors not shown\n"));
    // Shared by two cases, they are counted once.
    many["cases"] = {{{"name", "a"}}, {{"name", "b"}, {"set", {{"workload", {{"cpus", "0"}}}}}}};
    write_file(path, many.dump());
    const CmdResult m2 = run_wakesim("run " + shell_quote(path));
    INFO(m2.out);
    CHECK(count_lines(m2.out) == 21);
    CHECK(contains(m2.out, p + "/: and 5 more errors not shown\n"));
    // The same mistake in two cases' own settings is each case's: two lines.
    write_file(path, R"({"machine": "altra-80", "policies": ["plain"], "workload": {"kind": "pipe", "loops": 100},
      "cases": [{"name": "a", "set": {"workload": {"loops": 0}}}, {"name": "b", "set": {"workload": {"loops": 0}}}]})");
    const CmdResult c = run_wakesim("run " + shell_quote(path));
    INFO(c.out);
    CHECK(count_lines(c.out) == 2);
    CHECK(contains(c.out, p + "/cases/0/set/workload/loops: expected an integer in [1, 1000000000], got 0\n"));
    CHECK(contains(c.out, p + "/cases/1/set/workload/loops: expected an integer in [1, 1000000000], got 0\n"));
}

TEST_CASE("cli: a CPU list may be an array of CPU ids or use taskset's strides", "[cli]") {
    TempDir tmp;
    auto run_with = [&](const std::string& cpus) {
        std::string text = kTinyScenario;
        const std::string from = R"({"workload": {"cpus": "0"}})";
        text.replace(text.find(from), from.size(), R"({"workload": {"cpus": )" + cpus + "}}");
        const std::string path = tmp.file("cpus.json");
        write_file(path, text);
        return run_wakesim("run --format json --force --case pinned-cpu0 " + shell_quote(path), false);
    };
    const CmdResult str = run_with(R"("0,2,4,6")");
    const CmdResult arr = run_with("[0, 2, 4, 6]");
    const CmdResult stride = run_with(R"("0-7:2")");
    const CmdResult other = run_with(R"("0-7")");
    REQUIRE(str.rc == 0);
    REQUIRE(arr.rc == 0);
    REQUIRE(stride.rc == 0);
    const auto runs = [](const CmdResult& r) { return nlohmann::json::parse(r.out)["runs"]; };
    CHECK(runs(arr) == runs(str));
    CHECK(runs(stride) == runs(str));
    CHECK(runs(other) != runs(str));
}

TEST_CASE("cli: reports describe themselves: version, scenario hash, machine, features, profile overrides", "[cli][report]") {
    TempDir tmp;
    const std::string path = tiny_scenario(tmp);
    const CmdResult ver = run_wakesim("--version", false);
    REQUIRE(ver.rc == 0);
    const CmdResult js = run_wakesim("run --format json " + shell_quote(path), false);
    REQUIRE(js.rc == 0);
    const auto j = nlohmann::json::parse(js.out);
    const std::string version = j["wakesim_version"];
    CHECK(!version.empty());
    CHECK(ver.out.rfind("wakesim " + version + " ", 0) == 0);
    const std::string hash = j["scenario_hash"];
    CHECK(std::regex_match(hash, std::regex("fnv1a64:[0-9a-f]{16}")));
    CHECK(j["cases"][0]["profile_overrides"] == nlohmann::json::object());
    // The same scenario laid out differently has the same hash; another value, another hash and
    // the override shows, as the scenario writes it.
    write_file(path, nlohmann::json::parse(kTinyScenario).dump());
    const auto same = nlohmann::json::parse(run_wakesim("run --format json " + shell_quote(path), false).out);
    CHECK(same["scenario_hash"] == hash);
    auto doc = nlohmann::json::parse(kTinyScenario);
    doc["machine"] = {{"preset", "altra-80"}, {"profile", {{"syscall", "100ns"}}}};
    write_file(path, doc.dump(2));
    const CmdResult other = run_wakesim("run --format json " + shell_quote(path), false);
    REQUIRE(other.rc == 0);
    const auto o = nlohmann::json::parse(other.out);
    CHECK(o["scenario_hash"] != hash);
    CHECK(o["cases"][1]["profile_overrides"] == nlohmann::json{{"syscall", "100ns"}});

    const CmdResult table = run_wakesim("run " + shell_quote(path), false);
    REQUIRE(table.rc == 0);
    CHECK(contains(table.out, "\n# wakesim " + version + ", scenario " + o["scenario_hash"].get<std::string>() + "\n"));
    CHECK(contains(table.out, "\n# case pinned-cpu0: machine altra-80, features SIS_UTIL WA_IDLE "));
    CHECK(contains(table.out, ", profile overrides {\"syscall\":\"100ns\"}\n"));

    const CmdResult csv = run_wakesim("run --format csv " + shell_quote(path), false);
    REQUIRE(csv.rc == 0);
    CHECK(csv.out.rfind("case,machine,policy,seed,completed,stuck,", 0) == 0);
    CHECK(contains(csv.out, "\nunpinned,altra-80,plain,1,1,0,"));
}

TEST_CASE("cli: --format csv-long has one row per value, per-CPU metrics one row per CPU", "[cli][report]") {
    TempDir tmp;
    const CmdResult r = run_wakesim("run --format csv-long --case unpinned --policy plain " + shell_quote(tiny_scenario(tmp)), false);
    REQUIRE(r.rc == 0);
    CHECK(r.out.rfind("case,machine,policy,seed,metric,cpu,value\n", 0) == 0);
    CHECK(contains(r.out, "\nunpinned,altra-80,plain,1,usec_per_op,,"));
    CHECK(contains(r.out, "\nunpinned,altra-80,plain,1,completed,,1\n"));
    CHECK(contains(r.out, "\nunpinned,altra-80,plain,1,stuck,,0\n"));
    // altra-80 has 80 CPUs: a per-CPU metric has rows for cpu 0 to 79, and no cpu 80.
    CHECK(contains(r.out, "\nunpinned,altra-80,plain,1,cpu_freq_khz,0,"));
    CHECK(contains(r.out, "\nunpinned,altra-80,plain,1,cpu_freq_khz,79,"));
    CHECK_FALSE(contains(r.out, "\nunpinned,altra-80,plain,1,cpu_freq_khz,80,"));
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        INFO(line);
        if (line.find('"') == std::string::npos) CHECK(std::count(line.begin(), line.end(), ',') == 6);
    }
}

TEST_CASE("cli: import rtapp turns an rt-app workload into a scenario that runs", "[cli][rtapp]") {
    TempDir tmp;
    const fs::path data = kSource / "tests" / "data" / "rtapp";
    const CmdResult r = run_wakesim("import rtapp " + shell_quote((data / "periodic-pair.json").string()), false);
    INFO(r.out);
    REQUIRE(r.rc == 0);
    const auto sc = nlohmann::json::parse(r.out);
    CHECK(sc["workload"]["kind"] == "program");
    CHECK(sc["run"]["duration"] == "2s");
    const auto& tasks = sc["workload"]["tasks"];
    REQUIRE(tasks.size() == 3);
    // rt-app's event order is kept (run0, signal, sleep), not sorted.
    CHECK(tasks[0]["name"] == "producer");
    CHECK(tasks[0]["cpus"] == nlohmann::json::array({0, 1}));
    CHECK(tasks[0]["program"] == nlohmann::json::parse(
                                     R"([{"loop": 200, "do": [{"run": "300us"}, {"post": "ready"}, {"sleep": "700us"}]}])"));
    CHECK(tasks[1]["nice"] == -5);
    CHECK(tasks[1]["uclamp_min"] == 128);  // rt-app's util_min/util_max
    CHECK(tasks[1]["uclamp_max"] == 512);
    CHECK(tasks[1]["program"][0]["do"] == nlohmann::json::parse(R"([{"wait": "ready"}, {"run": "150us"}])"));
    CHECK(tasks[2]["count"] == 2);
    CHECK(tasks[2]["policy"] == "batch");
    // A task with phases and no "loop" repeats them until the duration (rt-app's default -1).
    CHECK(tasks[2]["program"] == nlohmann::json::parse(R"([{"loop": 0, "do": [
                                     {"loop": 10, "do": [{"run": "2000us"}, {"sleep": "500us"}]}, {"sleep": "5000us"}]}])"));
    // The scenario runs.
    const std::string out = tmp.file("imported.json");
    REQUIRE(run_wakesim("import rtapp -o " + shell_quote(out) + " " + shell_quote((data / "periodic-pair.json").string())).rc == 0);
    CHECK(run_wakesim("import rtapp -o " + shell_quote(out) + " " + shell_quote((data / "periodic-pair.json").string())).rc == 2);
    const CmdResult ran = run_wakesim("run --format json " + shell_quote(out), false);
    INFO(ran.out);
    CHECK(ran.rc == 0);

    // A mutex is a channel with one token; a wait with a mutex releases it around the wait.
    const CmdResult mx = run_wakesim("import rtapp " + shell_quote((data / "mutex-cond.json").string()), false);
    INFO(mx.out);
    REQUIRE(mx.rc == 0);
    const auto ms = nlohmann::json::parse(mx.out);
    CHECK(ms["workload"]["tasks"][0]["program"][0]["do"] ==
          nlohmann::json::parse(R"([{"wait": "mutex_m"}, {"post": "mutex_m"}, {"wait": "cond"}, {"wait": "mutex_m"},
                                   {"post": "mutex_m"}, {"run": "100us"}])"));
    CHECK(ms["workload"]["tasks"][2] == nlohmann::json::parse(R"({"name": "init_mutex_m", "program": [{"post": "mutex_m"}]})"));
    const std::string mout = tmp.file("mutex.json");
    write_file(mout, mx.out);
    const CmdResult mran = run_wakesim("run --format json " + shell_quote(mout), false);
    INFO(mran.out);
    CHECK(mran.rc == 0);

    // rt-app's taskgroup (a cpu-controller cgroup) one level below the root is a fair task group.
    const CmdResult tg = run_wakesim("import rtapp " + shell_quote((data / "taskgroups.json").string()), false);
    INFO(tg.out);
    REQUIRE(tg.rc == 0);
    const auto tgs = nlohmann::json::parse(tg.out);
    CHECK(tgs["groups"] == nlohmann::json::parse(R"({"build": {"fair_group": true}, "desktop": {"fair_group": true}})"));
    CHECK(tgs["workload"]["tasks"][0]["group"] == "build");
    CHECK(tgs["workload"]["tasks"][1]["group"] == "desktop");
    CHECK(!tgs["workload"]["tasks"][2].contains("group"));
    const std::string tgout = tmp.file("taskgroups.json");
    write_file(tgout, tg.out);
    const CmdResult tgran = run_wakesim("run --format json " + shell_quote(tgout), false);
    INFO(tgran.out);
    CHECK(tgran.rc == 0);

    // What the program kind cannot model is one line naming the event.
    const CmdResult fifo = run_wakesim("import rtapp " + shell_quote((data / "fifo.json").string()));
    CHECK(fifo.rc == 2);
    CHECK(count_lines(fifo.out) == 1);
    CHECK(contains(fifo.out, ": /tasks/rt/policy: expected SCHED_OTHER, SCHED_BATCH or SCHED_IDLE"));
}

TEST_CASE("cli: run --policy adds a registered policy the scenario lacks, with its default parameters",
          "[cli][run]") {
    TempDir tmp;
    const std::string sc = shell_quote(tiny_scenario(tmp));  // its policies: plain, reciprocal_sync
    const CmdResult r = run_wakesim("run " + sc + " -q --case unpinned --policy plain --policy wf_sync --format json");
    INFO(r.out);
    REQUIRE(r.rc == 0);
    const auto doc = nlohmann::json::parse(r.out);
    std::vector<std::string> ran;
    for (const auto& run : doc.at("runs")) ran.push_back(run.at("policy").get<std::string>());
    CHECK(ran == std::vector<std::string>{"plain", "wf_sync"});
    // The report's hash names what ran, not the file alone.
    const CmdResult file_only = run_wakesim("run " + sc + " -q --case unpinned --policy plain --format json");
    REQUIRE(file_only.rc == 0);
    CHECK(nlohmann::json::parse(file_only.out).at("scenario_hash") != doc.at("scenario_hash"));
    // A name neither the scenario nor the registry has is refused, with the nearest suggested.
    const CmdResult bad = run_wakesim("run " + sc + " -q --policy wf_synk");
    CHECK(bad.rc == 2);
    CHECK(count_lines(bad.out) == 1);
    CHECK(contains(bad.out, "--policy \"wf_synk\" names no policy of the scenario nor of `wakesim list policies`; "
                            "expected one of the scenario's (\"plain\", \"reciprocal_sync\") or a name that `wakesim "
                            "list policies` prints (did you mean \"wf_sync\"?)"));
}

TEST_CASE("cli: a workload left with nothing to happen stops there, says who waits for what, and is not complete",
          "[cli][run]") {
    // a waits on a channel nobody posts, before the barrier of three it would complete; b's two
    // instances wait at that barrier. Nothing is pending once they block: the run stops then, not
    // at its 60 s limit.
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"name": "stuck", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "channels": {"x": {}}, "barriers": {"z": 3}, "tasks": [
        {"name": "a", "program": [{"run": "300us"}, {"wait": "x"}, {"barrier": "z"}]},
        {"name": "b", "count": 2, "program": [{"sleep": "1ms"}, {"barrier": "z"}]}]}})");
    const std::string sc = shell_quote(tmp.file("s.json"));
    const CmdResult table = run_wakesim("run " + sc);
    INFO(table.out);
    CHECK(table.rc == 0);
    CHECK(contains(table.out, "  stuck\n"));
    CHECK(contains(table.out, "wakesim: warning: case \"default\", policy \"plain\", seed 1: stuck at "));
    CHECK(contains(table.out, "before the workload finished: a (waits on channel \"x\"), b-0 (waits at a barrier short of "
                              "tasks: 2 of its 3 participants arrived), b-1 (waits at a barrier short of tasks: 2 of its 3 "
                              "participants arrived)\n"));
    const CmdResult json = run_wakesim("run " + sc + " -q --format json", false);
    REQUIRE(json.rc == 0);
    const auto run = nlohmann::json::parse(json.out).at("runs").at(0);
    CHECK(run.at("completed") == false);
    CHECK(run.at("stuck") == true);
    CHECK(contains(run.at("blocked").get<std::string>(), "a (waits on channel \"x\")"));
    const double ms = run.at("metrics").at("sim_time_ns").get<double>() / 1e6;
    CHECK(ms >= 1.0);
    CHECK(ms < 2.0);  // when b-1 reached the barrier (after its fork and 1 ms sleep), not the 60 s limit
    // The CSV formats say how it ended too.
    const CmdResult csv = run_wakesim("run " + sc + " -q --format csv", false);
    REQUIRE(csv.rc == 0);
    CHECK(contains(csv.out, "\ndefault,kvm-2vcpu,plain,1,0,1,"));
    const CmdResult csv_long = run_wakesim("run " + sc + " -q --format csv-long", false);
    REQUIRE(csv_long.rc == 0);
    CHECK(contains(csv_long.out, "\ndefault,kvm-2vcpu,plain,1,completed,,0\ndefault,kvm-2vcpu,plain,1,stuck,,1\n"));
    // A run that finishes has no such keys.
    const CmdResult fine = run_wakesim("run " + shell_quote(tiny_scenario(tmp)) + " -q --format json --case unpinned --policy plain", false);
    REQUIRE(fine.rc == 0);
    CHECK_FALSE(nlohmann::json::parse(fine.out).at("runs").at(0).contains("stuck"));
}

TEST_CASE("cli: a deadlock beside hogs and noise is found when the last task goes to sleep, not at the limit",
          "[cli][run]") {
    // The hog and the noise task keep events coming for the whole 60 s limit; the program tasks
    // deadlock at about 1 ms: c waits on "y", which only d posts, and d exits without posting.
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"name": "stuck", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "channels": {"x": {}, "y": {}},
        "hogs": {"count": 1}, "noise": {"count": 1, "period": "1ms", "run": "100us"}, "tasks": [
        {"name": "c", "program": [{"post": "x"}, {"wait": "y"}]},
        {"name": "d", "program": [{"wait": "x"}, {"run": "1ms"}]}]}})");
    const CmdResult json = run_wakesim("run " + shell_quote(tmp.file("s.json")) + " -q --format json", false);
    REQUIRE(json.rc == 0);
    const auto run = nlohmann::json::parse(json.out).at("runs").at(0);
    CHECK(run.at("completed") == false);
    CHECK(run.at("stuck") == true);
    CHECK(run.at("blocked") == "c (waits on channel \"y\")");
    const double ms = run.at("metrics").at("sim_time_ns").get<double>() / 1e6;
    CHECK(ms >= 1.0);  // d's exit after its 1 ms of work, sharing the CPUs with the hog and the noise
    CHECK(ms < 5.0);
    const CmdResult table = run_wakesim("run " + shell_quote(tmp.file("s.json")));
    CHECK(contains(table.out, "seed 1: stuck at "));
    CHECK(contains(table.out, "  stuck\n"));
    // The same tasks without the deadlock finish as before.
    write_file(tmp.file("ok.json"), R"({"name": "fine", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "channels": {"x": {}, "y": {}},
        "hogs": {"count": 1}, "noise": {"count": 1, "period": "1ms", "run": "100us"}, "tasks": [
        {"name": "c", "program": [{"post": "x"}, {"wait": "y"}]},
        {"name": "d", "program": [{"wait": "x"}, {"run": "1ms"}, {"post": "y"}]}]}})");
    const CmdResult ok = run_wakesim("run " + shell_quote(tmp.file("ok.json")) + " -q --format json", false);
    REQUIRE(ok.rc == 0);
    const auto fine = nlohmann::json::parse(ok.out).at("runs").at(0);
    CHECK(fine.at("completed") == true);
    CHECK_FALSE(fine.contains("stuck"));
}

TEST_CASE("cli: a CPU's utilisation covers the window, which ends at the last op, not the work after it",
          "[cli][run][metrics]") {
    // a counts 100 ops of 10 us each on CPU 0, then computes 5 ms more and exits: the window is the
    // first millisecond, wholly busy on CPU 0 and idle on CPU 1.
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"name": "tail", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "tasks": [{"name": "a", "cpus": "0",
        "program": [{"loop": 100, "do": [{"run": "10us"}, {"op": 0}]}, {"run": "5ms"}]}]}})");
    const CmdResult json = run_wakesim("run " + shell_quote(tmp.file("s.json")) + " -q --format json", false);
    REQUIRE(json.rc == 0);
    const auto m = nlohmann::json::parse(json.out).at("runs").at(0).at("metrics");
    CHECK(m.at("ops") == 100);
    const double window_ms = m.at("sim_time_ns").get<double>() / 1e6;
    CHECK(window_ms > 0.9);
    CHECK(window_ms < 1.2);
    CHECK(m.at("cpu_util").at(0).get<double>() <= 1.0);
    CHECK(m.at("cpu_util").at(0).get<double>() > 0.95);
    CHECK(m.at("cpu_util").at(1).get<double>() < 0.05);
}

TEST_CASE("cli: a server that loops forever, left waiting for requests after its client exited, ends a complete run",
          "[cli][run]") {
    // The client's 50 requests done, the server waits on "req" for good: finished, not stuck, the
    // window ending at the last op. Two endless tasks that wait on each other from the start are
    // a deadlock all the same: nobody has exited.
    TempDir tmp;
    write_file(tmp.file("s.json"), R"({"name": "served", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "channels": {"req": {}, "rep": {}}, "hogs": {"count": 1}, "tasks": [
        {"name": "client", "program": [{"loop": 50, "do": [{"run": "2us"}, {"post": "req"}, {"wait": "rep"}, {"op": 64}]}]},
        {"name": "server", "program": [{"loop": 0, "do": [{"wait": "req"}, {"run": "3us"}, {"post": "rep"}]}]}]}})");
    const CmdResult json = run_wakesim("run " + shell_quote(tmp.file("s.json")) + " -q --format json", false);
    REQUIRE(json.rc == 0);
    const auto run = nlohmann::json::parse(json.out).at("runs").at(0);
    CHECK(run.at("completed") == true);
    CHECK_FALSE(run.contains("stuck"));
    CHECK(run.at("metrics").at("ops") == 50);
    CHECK(run.at("metrics").at("sim_time_ns").get<double>() < 5e6);  // not the 60 s limit beside the hog
    write_file(tmp.file("d.json"), R"({"name": "dead", "machine": "kvm-2vcpu", "policies": ["plain"],
      "workload": {"kind": "program", "channels": {"x": {}, "y": {}}, "tasks": [
        {"name": "a", "program": [{"loop": 0, "do": [{"wait": "x"}, {"post": "y"}]}]},
        {"name": "b", "program": [{"loop": 0, "do": [{"wait": "y"}, {"post": "x"}]}]}]}})");
    const CmdResult dead = run_wakesim("run " + shell_quote(tmp.file("d.json")) + " -q --format json", false);
    REQUIRE(dead.rc == 0);
    const auto d = nlohmann::json::parse(dead.out).at("runs").at(0);
    CHECK(d.at("completed") == false);
    CHECK(d.at("stuck") == true);
}

TEST_CASE("cli: seesaw's pair_id variant warns where no two tasks share a pair id, and not where they do", "[cli][policies]") {
    // A program without "pair" keys runs pair_id as plain: a comparison would say "no effect".
    TempDir tmp;
    const auto scenario = [&](const std::string& pair) {
        write_file(tmp.file("s.json"), R"({"machine": "kvm-2vcpu",
          "policies": ["plain", {"use": "seesaw", "name": "pairs", "params": {"variant": "pair_id"}}],
          "workload": {"kind": "program", "channels": {"req": {}, "rep": {}}, "tasks": [
            {"name": "c", "role": "requester")" + pair + R"(, "program": [{"loop": 20, "do": [{"run": "2us"}, {"post": "req"}, {"wait": "rep"}]}]},
            {"name": "s", "role": "server")" + pair + R"(, "program": [{"loop": 20, "do": [{"wait": "req"}, {"run": "3us"}, {"post": "rep"}]}]}]}})");
        return run_wakesim("run " + shell_quote(tmp.file("s.json")) + " -q -o /dev/null");
    };
    const CmdResult none = scenario("");
    INFO(none.out);
    CHECK(none.rc == 0);
    CHECK(count_lines(none.out) == 1);
    CHECK(contains(none.out, "wakesim: warning: case \"default\", policy \"pairs\": seesaw's pair_id variant finds no two "
                             "tasks with the same pair id in this workload"));
    const CmdResult paired = scenario(R"(, "pair": 3)");
    INFO(paired.out);
    CHECK(paired.rc == 0);
    CHECK_FALSE(contains(paired.out, "warning"));
}
