// The FUSE request/reply model (workloads/fuse/, the fio kind): what a FUSE or scheduler developer
// would check with a trace. Every request ends; /dev/fuse wakes one idle worker per request;
// io-uring uses the requester's CPU's queue and ring threads stay on their CPU; plain reply wakes
// move a job between queues, WF_CURRENT_CPU on io-uring replies keeps it with its ring thread;
// the FUSE policies change only their own site.
#include <catch2/catch.hpp>

#include "engine/engine.h"
#include "experiment/runner.h"
#include "hw/hardware.h"
#include "input/input_error.h"
#include "sim/cpu_exec.h"
#include "sim/run_control.h"
#include "sim_test_util.h"
#include "workloads/fuse/fuse_conn.h"
#include "workloads/program/task_program.h"

using namespace wakesim;
using namespace wakesim::testutil;

namespace {

// A scenario with one fio workload; `extra` adds workload keys (", \"transport\": ...").
json fio_doc(const std::string& machine, const std::string& extra, const std::string& policy = "plain") {
    return doc(R"({"name": "fuse", "description": "d", "machine": ")" + machine +
               R"(", "workload": {"kind": "fio", "number_ios": 2000)" + extra + R"(},
                  "policies": [")" + policy + R"("], "run": {"seeds": [1]}, "cases": [{"name": "c"}]})");
}

struct FuseRun {
    FuseStats stats;
    uint64_t ops = 0;
    bool all_exited = false;
    uint64_t in_flight = 0;
};

// One run as experiment/simulation.cpp does it, keeping the driver to read the transport's counts.
FuseRun run_fuse(const json& d, Time limit = 0) {
    const Scenario sc = parse_scenario(d, "test.json");
    const RunSpec spec = make_run_spec(sc, sc.cases.front(), sc.policies.front(), sc.seeds.front());
    Engine engine;
    PolicyRun policy = spec.policy.instantiate();
    Hardware hw(engine, *spec.topo, spec.profile);
    Scheduler sched(engine, *spec.topo, *spec.domains, spec.profile, policy, spec.sched, hw, spec.seed);
    CpuExec cpus(engine, sched, hw, spec.profile, spec.seed);
    RunControl ctl;
    ctl.set_clock(&engine);
    ProgramDriver driver(spec.workload.tasks, spec.workload.channels, spec.workload.barriers, ctl);
    cpus.set_driver(&driver);
    ctl.set_finish([&] { engine.stop(); });
    driver.setup(cpus, 0, spec.workload.parent_cpu, spec.seed);
    engine.run_until(limit > 0 ? limit : kTimeNever);
    sched.check_invariants();
    const FuseConn* conn = driver.fuse_conn(0);
    REQUIRE(conn != nullptr);
    return {conn->stats(), ctl.ops(), driver.all_exited(), conn->in_flight()};
}

int64_t n(const Outcome& o, Metric m) { return o.m.integer(m); }

}  // namespace

TEST_CASE("fio over FUSE: every request is completed or still in flight", "[fuse][invariant]") {
    for (const char* transport : {"dev", "io_uring"}) {
        INFO(transport);
        const std::string t = std::string(R"(, "numjobs": 3, "transport": ")") + transport + "\"";
        const FuseRun done = run_fuse(fio_doc("xeon-2s-16c32t", t));
        CHECK(done.all_exited);
        CHECK(done.stats.sent == 6000);
        CHECK(done.stats.completed == 6000);
        CHECK(done.ops == 6000);
        CHECK(done.in_flight == 0);
        // Stopped mid-run: each job has at most its one synchronous request in flight.
        const FuseRun cut = run_fuse(fio_doc("xeon-2s-16c32t", t), 3 * kNsPerMs);
        CHECK_FALSE(cut.all_exited);
        CHECK(cut.stats.sent == cut.stats.completed + cut.in_flight);
        CHECK(cut.in_flight <= 3);
        // A reply counts as an op once its requester runs again.
        CHECK(cut.ops <= cut.stats.completed);
        CHECK(cut.stats.completed - cut.ops <= 3);
    }
}

TEST_CASE("/dev/fuse: each request wakes exactly one idle worker (exclusive FIFO wake)", "[fuse][dev]") {
    const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "threads": 4)"));
    CHECK(r.stats.worker_wakes == r.stats.sent);  // one stream, workers idle: one wake each, never more
    CHECK(r.stats.worker_spurious == 0);
    // Two wakeups per request: the worker (fuse_dev_queue_req) and the requester (fuse_request_end).
    const Outcome o = simulate(fio_doc("xeon-2s-16c32t", R"(, "threads": 4)"));
    CHECK(n(o, Metric::wakeups) == 2 * 2000);
    CHECK(n(o, Metric::ops) == 2000);
    CHECK(o.m.get(Metric::mib_per_sec) == Approx(o.m.get(Metric::ops_per_sec) * 4096 / 1048576).epsilon(1e-4));
}

TEST_CASE("io-uring: a requester pinned to CPU 3 uses queue 3, whose ring thread runs only on CPU 3",
          "[fuse][uring]") {
    const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring", "cpus": "3")"));
    REQUIRE(r.stats.per_queue.size() == 32);
    CHECK(r.stats.per_queue[3] == 2000);
    CHECK(r.stats.queue_changes == 0);
    CHECK(r.stats.ring_off_cpu == 0);
}

TEST_CASE("io-uring queue per core: plain reply wakes move the job between queues, "
          "fuse_wake_same_cpu keeps it with its ring thread", "[fuse][uring][fuse_wake_same_cpu]") {
    const std::string uring = R"(, "transport": "io_uring")";
    const FuseRun plain = run_fuse(fio_doc("xeon-2s-16c32t", uring));
    const FuseRun same = run_fuse(fio_doc("xeon-2s-16c32t", uring, "fuse_wake_same_cpu"));
    // The ring thread is still on the queue's CPU at the reply: select_idle_sibling() moves the job
    // to an idle CPU, and its next request goes to that CPU's queue.
    CHECK(plain.stats.queue_changes > 500);
    CHECK(same.stats.queue_changes == 0);
    CHECK(plain.stats.ring_off_cpu == 0);
    CHECK(same.stats.ring_off_cpu == 0);
    const Outcome op = simulate(fio_doc("xeon-2s-16c32t", uring));
    const Outcome os = simulate(fio_doc("xeon-2s-16c32t", uring, "fuse_wake_same_cpu"));
    CHECK(n(op, Metric::migrations) > 500);
    CHECK(n(os, Metric::migrations) <= 2);
    CHECK(os.m.get(Metric::usec_per_op) < op.m.get(Metric::usec_per_op));
}

TEST_CASE("io-uring with 2 queues on a 2-node machine: one queue per node, on its lowest CPU", "[fuse][uring]") {
    // CPUs 0-7 and 16-23 are node 0, 8-15 and 24-31 node 1: the queues sit on CPUs 0 and 8.
    const std::string two = R"(, "transport": "io_uring", "nr_queues": 2)";
    const FuseRun node1 = run_fuse(fio_doc("xeon-2s-16c32t", two + R"(, "cpus": "9-15")"));
    CHECK(node1.stats.per_queue == std::vector<uint64_t>{0, 2000});
    CHECK(node1.stats.ring_off_cpu == 0);
    // Unpinned with WF_CURRENT_CPU on the reply: after its first request the job follows its
    // ring thread's CPU and every reply wake is local.
    const Outcome same = simulate(fio_doc("xeon-2s-16c32t", two, "fuse_wake_same_cpu"));
    CHECK(n(same, Metric::migrations) <= 2);
    CHECK(n(same, Metric::wakeups_remote) <= 2);
    // Plain: the job settles on an idle CPU of the queue's node and every request wakes the ring
    // thread across CPUs (the published traces show it bouncing between two cores instead).
    const FuseRun plain = run_fuse(fio_doc("xeon-2s-16c32t", two));
    CHECK(plain.stats.queue_changes <= 2);
    const Outcome op = simulate(fio_doc("xeon-2s-16c32t", two));
    CHECK(n(op, Metric::wakeups_remote) > 2 * 2000 - 10);
}

TEST_CASE("/dev/fuse: fuse_wake_same_cpu changes nothing (FR_URING only)", "[fuse][dev][fuse_wake_same_cpu]") {
    const Outcome plain = simulate(fio_doc("xeon-2s-16c32t", ""));
    const Outcome same = simulate(fio_doc("xeon-2s-16c32t", "", "fuse_wake_same_cpu"));
    CHECK(plain.m == same.m);
}

TEST_CASE("FUSE policies change only their own wake site", "[fuse][policies]") {
    const PolicyRun same = make_policy("fuse_wake_same_cpu").instantiate();
    const PolicyRun sync = make_policy("fuse_sync_request").instantiate();
    const PolicyRun wf_sync = make_policy("wf_sync").instantiate();
    const PolicyRun wf_cur = make_policy("wf_current_cpu").instantiate();
    CHECK(same.site_flags(fuse_request_end_site(true)) == WF_CURRENT_CPU);
    CHECK(same.site_flags(fuse_request_end_site(false)) == 0);
    CHECK(same.site_flags(fuse_queue_request_site()) == 0);
    CHECK(same.site_flags(fuse_uring_dispatch_site()) == 0);
    CHECK(same.site_flags(pipe_site(SiteRole::reply)) == WF_SYNC);
    CHECK(sync.site_flags(fuse_queue_request_site()) == WF_SYNC);
    CHECK(sync.site_flags(fuse_uring_dispatch_site()) == 0);
    CHECK(sync.site_flags(fuse_request_end_site(false)) == 0);
    // The generic policies see FUSE sites by role: both wakers sleep next, so WF_SYNC is honest.
    CHECK(wf_sync.site_flags(fuse_queue_request_site()) == WF_SYNC);
    CHECK(wf_sync.site_flags(fuse_request_end_site(true)) == WF_SYNC);
    CHECK(wf_cur.site_flags(fuse_queue_request_site()) == WF_CURRENT_CPU);
    CHECK(wf_cur.site_flags(fuse_request_end_site(false)) == WF_CURRENT_CPU);
}

TEST_CASE("fio: FUSE tasks carry roles for the generic policies", "[fuse][workloads]") {
    const Scenario sc = parse_scenario(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring", "nr_queues": 2,
                                                                  "numjobs": 2, "cpus": "1,2",
                                                                  "cpus_allowed_policy": "split")"),
                                       "test.json");
    const WorkloadBuild& b = sc.cases.front().workload;
    REQUIRE(b.tasks.size() == 4);
    CHECK(b.tasks[0].spec.comm == "fuse-ring-0");
    CHECK(b.tasks[0].spec.role == TaskRole::server);
    CHECK(b.tasks[0].background);
    CHECK(b.tasks[1].spec.comm == "fuse-ring-8");
    CHECK(b.tasks[1].spec.allowed.first() == 8);
    CHECK(b.tasks[2].spec.role == TaskRole::requester);
    CHECK(b.tasks[2].spec.allowed.first() == 1);
    CHECK(b.tasks[3].spec.allowed.first() == 2);
    CHECK(b.total_ops == 4000);
    // sched_idle_server makes ring threads SCHED_IDLE; the run still completes.
    const Outcome o = simulate(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring")", "sched_idle_server"));
    CHECK(o.completed);
}

TEST_CASE("fio: engines and options not modelled are one-line errors", "[fuse][inputs]") {
    auto error = [](const std::string& extra) {
        try {
            parse_scenario(fio_doc("xeon-2s-16c32t", extra), "test.json");
        } catch (const InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error(R"(, "ioengine": "posixaio")"), Catch::Contains("/workload/ioengine"));
    CHECK_THAT(error(R"(, "iodepth": 4)"),
               Catch::Contains("/workload/iodepth") && Catch::Contains("with ioengine \"psync\""));
    CHECK_THAT(error(R"(, "ioengine": "io_uring", "iodepth": 0)"), Catch::Contains("/workload/iodepth"));
    CHECK_THAT(error(R"(, "direct": 0)"),
               Catch::Contains("/workload/direct") && Catch::Contains("only O_DIRECT"));
    CHECK_THAT(error(R"(, "ioengine": "io_uring", "iodepth": 4096, "numjobs": 8)"),
               Catch::Contains("numjobs x iodepth at most 16384"));
    CHECK(error(R"(, "ioengine": "libaio", "iodepth": 64)") == "no error");
    CHECK_THAT(error(R"(, "nr_queues": 2)"), Catch::Contains("with transport \"dev\""));
    CHECK_THAT(error(R"(, "transport": "io_uring", "nr_queues": 2, "queue_cpus": "0,8")"),
               Catch::Contains("not both"));
    CHECK_THAT(error(R"(, "transport": "io_uring", "nr_queues": 64)"), Catch::Contains("one queue per CPU"));
}
