// `wakesim run --trace`: ftrace text that Perfetto's systrace importer accepts. Every event line
// must match the line pattern of Perfetto's SystraceLineTokenizer
// (src/trace_processor/importers/systrace/systrace_line_tokenizer.cc in google/perfetto, the
// version that accepts the 5-character irq-flags field of kernels since 5.16); the header must be
// the `trace` file's with record-tgid.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "trace_test_util.h"

using namespace wakesim;

namespace {

std::vector<std::string> traced_lines(TraceWindow window = {}) {
    const std::string text = tracetest::traced_bytes(window);
    std::vector<std::string> lines;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);) lines.push_back(l);
    return lines;
}

// Perfetto's line pattern: "-PID", an optional "(TGID)" or "(-----)", "[CPU]", optional irq
// flags, "SECONDS.FRACTION:", the event name and ':'. Searched, not anchored, as Perfetto does.
const std::regex kPerfettoLine(R"(-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):)");

struct Parsed {
    int pid = 0, cpu = 0;
    double ts = 0;
    std::string event, args;
};

Parsed parse(const std::string& line) {
    std::smatch m;
    Parsed p;
    if (!std::regex_search(line, m, kPerfettoLine)) return p;
    p.pid = std::stoi(m[1].str());
    p.cpu = std::stoi(m[3].str());
    p.ts = std::stod(m[5].str());
    p.event = m[6].str();
    p.args = m.suffix().str();
    return p;
}

}  // namespace

TEST_CASE("Every trace line matches Perfetto's systrace line pattern, after ftrace's header", "[trace]") {
    const auto lines = traced_lines();
    REQUIRE(lines.size() > 20);
    CHECK(lines[0] == "# tracer: nop");
    CHECK(lines[1] == "#");
    size_t events = 0;
    for (const auto& l : lines) events += l.empty() || l[0] == '#' ? 0 : 1;
    CHECK(lines[2] == "# entries-in-buffer/entries-written: " + std::to_string(events) + "/" +
                          std::to_string(events) + "   #P:4");
    CHECK(lines[3] == "#");
    bool legend = false;
    for (const auto& l : lines)
        legend |= l == "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION";
    CHECK(legend);
    for (const auto& l : lines) {
        if (l.empty() || l[0] == '#') continue;
        INFO(l);
        REQUIRE(std::regex_search(l, kPerfettoLine));
        const Parsed p = parse(l);
        CHECK(p.cpu < 4);
        // ftrace's columns: comm right-aligned in 16, "-pid" left-aligned in 7, "(tgid)".
        CHECK(l.find(" (") == 24);
        CHECK(l[35] == '[');
    }
}

TEST_CASE("The trace has R+ for a preemption, sched_wakeup_new once per task, and the warm-up marker", "[trace]") {
    const auto lines = traced_lines();
    std::map<int, int> new_wakeups;
    bool preempted = false, marker = false, bare_r = false;
    for (const auto& l : lines) {
        if (l.empty() || l[0] == '#') continue;
        const Parsed p = parse(l);
        if (p.event == "sched_wakeup_new") {
            std::smatch m;
            REQUIRE(std::regex_search(p.args, m, std::regex(R"(comm=\S+ pid=(\d+) prio=120 target_cpu=\d{3}$)")));
            ++new_wakeups[std::stoi(m[1].str())];
        }
        if (p.event == "sched_switch") {
            preempted |= p.args.find("prev_comm=hog prev_pid=1000 prev_prio=120 prev_state=R+ ==> next_comm=ticker") !=
                         std::string::npos;
            // A task switched out while runnable is always R+; only the idle task leaves as R.
            if (p.args.find("prev_state=R ") != std::string::npos)
                bare_r |= p.args.find("prev_comm=swapper/") == std::string::npos;
        }
        if (p.event == "tracing_mark_write") {
            CHECK(p.args.find("wakesim: warm-up done") != std::string::npos);
            CHECK(p.ts == Approx(0.002));
            marker = true;
        }
    }
    CHECK(preempted);
    CHECK_FALSE(bare_r);
    CHECK(marker);
    REQUIRE(new_wakeups.size() == 4);  // hog, ticker, pinger, ponger
    for (const auto& [pid, n] : new_wakeups) CHECK(n == 1);
}

TEST_CASE("A trace window (--trace-window) limits the trace to the window", "[trace]") {
    const auto all = traced_lines();
    const auto part = traced_lines({5000000, 7000000});
    size_t n_all = 0, n_part = 0;
    for (const auto& l : all) n_all += l.empty() || l[0] == '#' ? 0 : 1;
    for (const auto& l : part) {
        if (l.empty() || l[0] == '#') continue;
        ++n_part;
        const Parsed p = parse(l);
        CHECK(p.ts >= 0.005);
        CHECK(p.ts < 0.007);
    }
    CHECK(n_part > 10);
    CHECK(n_part < n_all / 2);
    CHECK(part[2] == "# entries-in-buffer/entries-written: " + std::to_string(n_part) + "/" + std::to_string(n_part) +
                         "   #P:4");
}

TEST_CASE("sched_wakeup is written where the wakee is enqueued: by the waker for a busy CPU of its LLC, by the "
          "target's IPI handler for an idle one, before or after its cpu_idle exit as its idle state has interrupts",
          "[trace][wake]") {
    // W on CPU 0 wakes B, pinned to CPU 1 where a hog runs (ttwu_queue_cond() false: the waker
    // enqueues it itself under CPU 1's lock), and I, pinned to the idle CPU 2 (the wake list and
    // an IPI). In HLT (interrupts on, the dev VM's idle) the handler runs inside the state and
    // the exit is recorded after it, as ftrace on the VM shows; an MWAIT state entered with
    // interrupts off (intel_idle) records its exit first. The switch to I comes after both.
    auto wakeups = [](const std::string& state, bool exit_first) {
        INFO(state);
        const Scenario sc = parse_scenario(nlohmann::json::parse(R"({
          "name": "trace-wakeup-cpu",
          "machine": {"topology": {"name": "flat4", "cores_per_cluster": 4},
                      "profile": {"base": "kvm-2vcpu", "idle_states": [)" + state + R"(]}},
          "workload": {"kind": "program", "channels": {"b": {}, "i": {}},
            "tasks": [
              {"name": "hog", "cpus": "1", "program": [{"loop": 0, "do": [{"run": "1ms"}]}]},
              {"name": "W", "cpus": "0", "program": [{"loop": 0, "do": [{"run": "30us"}, {"post": "b"}, {"post": "i"}, {"sleep": "50us"}]}]},
              {"name": "B", "cpus": "1", "program": [{"loop": 0, "do": [{"wait": "b"}, {"run": "1us"}]}]},
              {"name": "I", "cpus": "2", "program": [{"loop": 0, "do": [{"wait": "i"}, {"run": "1us"}]}]}
            ]},
          "policies": ["plain"],
          "run": {"duration": "5ms"}
        })"),
                                           "trace.json");
        std::istringstream is(tracetest::run_traced(make_run_spec(sc, sc.cases[0], sc.policies[0], 1)));
        std::vector<Parsed> events;
        for (std::string l; std::getline(is, l);)
            if (!l.empty() && l[0] != '#') events.push_back(parse(l));
        int b_wakeups = 0, i_wakeups = 0;
        for (size_t k = 1; k + 2 < events.size(); ++k) {
            const Parsed& e = events[k];
            if (e.event != "sched_wakeup") continue;
            INFO(e.ts << " [" << e.cpu << "] pid " << e.pid << ": " << e.args);
            if (e.args.find("comm=B ") != std::string::npos) {
                ++b_wakeups;
                CHECK(e.cpu == 0);     // the waker's CPU ...
                CHECK(e.pid == 1001);  // ... and the waker as the line's task
                CHECK(e.args.find("target_cpu=001") != std::string::npos);
            } else if (e.args.find("comm=I ") != std::string::npos) {
                ++i_wakeups;
                CHECK(e.cpu == 2);
                CHECK(e.pid == 0);  // the idle task: in the IPI's handler, or (MWAIT, polled) its idle loop
                const Parsed& exit = exit_first ? events[k - 1] : events[k + 1];
                CHECK(exit.event == "cpu_idle");
                CHECK(exit.cpu == 2);
                CHECK(exit.args.find("state=4294967295") != std::string::npos);
                CHECK(exit.ts == e.ts);
                const Parsed& sw = exit_first ? events[k + 1] : events[k + 2];
                CHECK(sw.event == "sched_switch");
                CHECK(sw.args.find("next_comm=I ") != std::string::npos);
            }
        }
        CHECK(b_wakeups >= 5);  // B shares CPU 1 with the hog: fewer of its waits end in a wakeup
        CHECK(i_wakeups > 40);
    };
    wakeups(R"({"name": "HLT", "exit_latency": "2us", "target_residency": "2us", "irq_enabled": true})", false);
    wakeups(R"({"name": "C1", "exit_latency": "2us", "target_residency": "2us", "mwait": true})", true);
    wakeups(R"({"name": "WFI", "exit_latency": "2us", "target_residency": "2us"})", true);
}

TEST_CASE("A task that exits while another waits on its CPU is switched out with prev_state=X", "[trace]") {
    // E and W share CPU 0; E runs 200 us and exits while W, woken meanwhile, is runnable there, so
    // __schedule() goes to W, not to the idle task. The kernel writes TASK_DEAD's X (sched_switch's
    // prev_state) either way.
    const Scenario sc = parse_scenario(nlohmann::json::parse(R"({
      "name": "trace-exit",
      "machine": {"topology": {"name": "flat2", "cores_per_cluster": 2}, "profile": {"base": "kvm-2vcpu"}},
      "workload": {"kind": "program", "tasks": [
        {"name": "E", "cpus": "0", "program": [{"run": "200us"}]},
        {"name": "W", "cpus": "0", "program": [{"sleep": "50us"}, {"run": "300us"}]}]},
      "policies": ["plain"], "run": {"seeds": [1]}
    })"),
                                       "trace-exit.json");
    const std::string text = tracetest::run_traced(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
    std::istringstream is(text);
    int e_out = 0;
    for (std::string l; std::getline(is, l);) {
        const Parsed p = parse(l);
        if (p.event != "sched_switch" || p.args.find("prev_comm=E ") == std::string::npos) continue;
        ++e_out;
        INFO(l);
        if (p.args.find("next_comm=W ") != std::string::npos) CHECK(p.args.find("prev_state=X ") != std::string::npos);
    }
    CHECK(e_out >= 1);
    CHECK(text.find("prev_comm=E prev_pid=1000 prev_prio=120 prev_state=X ==> next_comm=W") != std::string::npos);
}

TEST_CASE("Every trace line is written in the context of the task running on its CPU: balance pulls on the "
          "pulling CPU, clock changes by the CPU that made them", "[trace]") {
    // Twelve workers and three hogs on CPUs 0-3 of the Xeon: newly idle and periodic balancing pull
    // tasks between them, and schedutil changes their clocks. Each line's TASK-PID must be the task
    // that sched_switch last put on that CPU (the idle task, pid 0, before any).
    const Scenario sc = parse_scenario(nlohmann::json::parse(R"({
      "name": "trace-context",
      "machine": "xeon-2s-16c32t",
      "workload": {"kind": "program", "tasks": [
        {"name": "w", "count": 12, "cpus": "0-3", "program": [{"loop": 100, "do": [{"run": "50us"}, {"sleep": "80us"}, {"op": 1}]}]}],
        "hogs": {"count": 3, "cpus": "0-3"}},
      "policies": ["plain"], "run": {"seeds": [1]}
    })"),
                                       "trace-context.json");
    const std::string text = tracetest::run_traced(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
    std::istringstream is(text);
    std::map<int, int> curr;  // CPU -> pid running there
    int migrations = 0, frequencies = 0, checked = 0;
    for (std::string l; std::getline(is, l);) {
        const Parsed p = parse(l);
        if (p.event.empty()) continue;
        if (p.event != "cpu_idle") {  // the idle state's lines are the idle task's, as the kernel's
            INFO(l);
            CHECK(p.pid == (curr.count(p.cpu) ? curr[p.cpu] : 0));
            ++checked;
        }
        migrations += p.event == "sched_migrate_task";
        frequencies += p.event == "cpu_frequency";
        if (p.event == "sched_switch") {
            const auto at = p.args.find("next_pid=");
            curr[p.cpu] = std::stoi(p.args.substr(at + 9));
        }
    }
    CHECK(migrations > 10);
    CHECK(frequencies > 0);
    CHECK(checked > 1000);
}
