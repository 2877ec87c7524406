// The FUSE request/reply model (workloads/fuse/, the fio kind): what a FUSE or scheduler developer
// would check with a trace. Every request ends; /dev/fuse wakes one idle worker per request;
// io-uring uses the requester's CPU's queue and ring threads stay on their CPU; plain reply wakes
// move a job between queues, WF_CURRENT_CPU on io-uring replies keeps it with its ring thread;
// the FUSE policies change only their own site.
#include <catch2/catch.hpp>
#include <tuple>

#include "engine/engine.h"
#include "experiment/runner.h"
#include "hw/hardware.h"
#include "input/input_error.h"
#include "sim/cpu_exec.h"
#include "sim/run_control.h"
#include "fuse_test_util.h"
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

// The same after schedutil has settled: 30,000 reads, the first 10,000 not measured. A CPU that
// runs the job and its ring thread back to back reaches its top OPP only as PELT ramps (~100 ms);
// one that wakes a ring thread from its io_uring wait gets the iowait boost at once.
json fio_steady_doc(const std::string& machine, const std::string& extra, const std::string& policy = "plain") {
    json d = fio_doc(machine, extra, policy);
    d["workload"]["number_ios"] = 30000;
    d["run"]["warmup_ops"] = 10000;
    return d;
}

struct FuseRun {
    FuseStats stats;
    uint64_t ops = 0;
    bool all_exited = false;
    uint64_t in_flight = 0;       // sent less completed
    uint64_t held = 0;            // found in the connection's queues and server threads
    uint64_t fio_migrations = 0;  // of the fio jobs only
    int num_background = 0, active_background = 0;  // at the end
    Time sim_ns = 0;
    int workers = 0;  // /dev/fuse: libfuse's numworker at the end
};

// One run, keeping the transport's counts.
FuseRun run_fuse(const json& d, Time limit = 0) {
    FuseSim sim(d);
    sim.run(limit);
    const FuseConn& conn = sim.conn();
    uint64_t migrations = 0;
    for (int t = 0; t < sim.sched.nr_tasks(); ++t)
        if (sim.sched.task(t).comm.rfind("fio-", 0) == 0) migrations += sim.sched.task(t).nr_migrations;
    return {conn.stats(),           sim.ctl.ops(),      sim.driver.all_exited(), conn.in_flight(), conn.held(), migrations,
            conn.num_background(), conn.active_background(), sim.engine.now(),   conn.workers()};
}

int64_t n(const Outcome& o, Metric m) { return o.m.integer(m); }

// The share of a breakdown metric under `key` (a node, a capacity), -1 if the run has none.
double share(const Outcome& o, Metric m, const std::string& key) {
    for (const auto& [k, v] : o.m.breakdown(m))
        if (k == key) return v;
    return -1.0;
}

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
        CHECK(done.held == 0);
        // Stopped mid-run: every request sent and not completed is found in a queue or a server
        // thread's hands, and each job has at most its one synchronous request in flight.
        for (Time at : {1 * kNsPerMs + 137, 3 * kNsPerMs, 20 * kNsPerMs + 501}) {
            INFO("stopped at " << at << " ns");
            const FuseRun cut = run_fuse(fio_doc("xeon-2s-16c32t", t), at);
            CHECK_FALSE(cut.all_exited);
            CHECK(cut.stats.sent == cut.stats.completed + cut.held);
            CHECK(cut.in_flight <= 3);
            // A reply counts as an op once its requester runs again.
            CHECK(cut.ops <= cut.stats.completed);
            CHECK(cut.stats.completed - cut.ops <= 3);
        }
    }
}

TEST_CASE("/dev/fuse: libfuse's pool starts one worker and grows on demand up to max_threads", "[fuse][dev][pool]") {
    // One synchronous stream: the first request finds no other idle worker, so a second is
    // started; afterwards one of the two is always idle and the pool stays at two.
    const FuseRun one = run_fuse(fio_doc("xeon-2s-16c32t", ""));
    CHECK(one.workers == 2);
    CHECK(one.stats.worker_spawns == 1);
    // Twelve concurrent jobs: the pool grows to the limit and never past it.
    const FuseRun many = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "numjobs": 12, "max_threads": 6)"));
    CHECK(many.workers == 6);
    CHECK(many.stats.worker_spawns == 5);
    CHECK(many.stats.completed == many.stats.sent);
    CHECK(many.all_exited);
}

TEST_CASE("/dev/fuse: with max_idle_threads surplus idle workers exit and are started again", "[fuse][dev][pool]") {
    const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "numjobs": 4, "max_idle_threads": 1)"));
    CHECK(r.stats.worker_exits > 10);
    CHECK(r.stats.worker_spawns >= r.stats.worker_exits);  // every exit but the last few is refilled
    CHECK(r.workers >= 1);
    CHECK(r.workers <= 10);
    CHECK(r.stats.completed == r.stats.sent);
    CHECK(r.all_exited);
    // Thread churn costs: the same jobs with the default (workers never exit) are faster.
    const Outcome churn = simulate(fio_doc("xeon-2s-16c32t", R"(, "numjobs": 4, "max_idle_threads": 1)"));
    const Outcome keep = simulate(fio_doc("xeon-2s-16c32t", R"(, "numjobs": 4)"));
    CHECK(churn.m.get(Metric::usec_per_op) > keep.m.get(Metric::usec_per_op));
}

TEST_CASE("/dev/fuse: with max_idle_threads 0 the last worker stays (fuse_do_work keeps numworker above 0)",
          "[fuse][dev][pool]") {
    // One worker allowed and none to idle: libfuse exits a surplus idle worker only while another
    // remains, so the single worker serves every read; without that guard it exited after its
    // first reply and the job waited for ever.
    const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "max_threads": 1, "max_idle_threads": 0)"));
    CHECK(r.stats.worker_exits == 0);
    CHECK(r.workers == 1);
    CHECK(r.ops > 0);
    CHECK(r.stats.completed == r.stats.sent);
    CHECK(r.all_exited);
}

TEST_CASE("/dev/fuse: libfuse's teardown watchdog polls the device, so each request wakes it too", "[fuse][dev]") {
    const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "teardown_watchdog": true)"));
    // One stream: a submission that finds the watchdog asleep in poll wakes it too, one extra wake
    // per request (a few find it still awake from the last one: 9% on the Xeon, whose wake of an
    // idle core takes C1's 2 us exit). The run's wakeups are the watchdog's, the workers' and
    // fio's own, one per reply.
    CHECK(r.stats.watchdog_wakes <= r.stats.sent);
    CHECK(r.stats.watchdog_wakes > r.stats.sent * 85 / 100);
    CHECK(r.stats.worker_wakes <= r.stats.sent);
    const Outcome with = simulate(fio_doc("xeon-2s-16c32t", R"(, "teardown_watchdog": true)"));
    CHECK(n(with, Metric::wakeups) ==
          static_cast<int64_t>(r.stats.watchdog_wakes + r.stats.worker_wakes + r.stats.sent));
}

TEST_CASE("/dev/fuse: each request wakes exactly one idle worker (exclusive FIFO wake)", "[fuse][dev]") {
    const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", R"(, "max_threads": 4)"));
    // One stream: a request queued while a worker sleeps in fuse_dev_do_read() wakes exactly one
    // (the first waiter), never more; one queued while a worker is still on its way back to read
    // wakes none. A woken worker can find the request gone, taken by the worker that was on its
    // way back (counted as spurious): 11% of the requests here (5% until idle CPUs took their
    // ticks, 2026-12-05: menu then sends some idle periods into C6, and a worker woken from it
    // arrives after the returning one).
    CHECK(r.stats.worker_wakes <= r.stats.sent);
    CHECK(r.stats.worker_wakes > r.stats.sent * 85 / 100);
    // The wakeups: the workers' (fuse_dev_queue_req) and the requester's (fuse_request_end), one
    // per request.
    const Outcome o = simulate(fio_doc("xeon-2s-16c32t", R"(, "max_threads": 4)"));
    CHECK(n(o, Metric::wakeups) == static_cast<int64_t>(r.stats.worker_wakes + r.stats.sent));
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
    // One submit per reply (libfuse's development branch before Dec 2025), as the patch was measured in Oct 2025.
    const std::string uring = R"(, "transport": "io_uring", "uring_reply_batch": false)";
    const FuseRun plain = run_fuse(fio_doc("xeon-2s-16c32t", uring));
    const FuseRun same = run_fuse(fio_doc("xeon-2s-16c32t", uring, "fuse_wake_same_cpu"));
    // The ring thread is still on the queue's CPU at the reply: select_idle_sibling() moves the job
    // to an idle CPU, and its next request goes to that CPU's queue.
    CHECK(plain.stats.queue_changes > 500);
    CHECK(same.stats.queue_changes == 0);
    CHECK(plain.stats.ring_off_cpu == 0);
    CHECK(same.stats.ring_off_cpu == 0);
    const Outcome op = simulate(fio_steady_doc("xeon-2s-16c32t", uring));
    const Outcome os = simulate(fio_steady_doc("xeon-2s-16c32t", uring, "fuse_wake_same_cpu"));
    CHECK(n(op, Metric::migrations) > 500);
    CHECK(n(os, Metric::migrations) <= 2);
    CHECK(os.m.get(Metric::usec_per_op) < op.m.get(Metric::usec_per_op));
}

TEST_CASE("io-uring with 2 queues on a 2-node machine: one queue per node, on its lowest CPU", "[fuse][uring]") {
    // CPUs 0-7 and 16-23 are node 0, 8-15 and 24-31 node 1: the queues sit on CPUs 0 and 8.
    const std::string two = R"(, "transport": "io_uring", "nr_queues": 2, "uring_reply_batch": false)";
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

TEST_CASE("io-uring with 2 queues in one LLC and fio on their CPUs: plain and WF_SYNC reply wakes bounce "
          "it between the two ring CPUs, WF_CURRENT_CPU keeps it with one", "[fuse][uring]") {
    // The bounce of the Oct 2025 traces ("persistent core switching of the fio process between
    // two cores on one numa node"): the reply finds fio's CPU busy with its ring thread,
    // select_idle_sibling() returns the other, idle, ring CPU (recent_used_cpu), and fio's next
    // request goes to that CPU's queue.
    // With DELAY_DEQUEUE, a reply that comes while fio is still queued as a delayed sleeper
    // behind its ring thread requeues it in place (ttwu_runnable(), no selection): early in a run
    // that is every other read.
    const std::string two = R"(, "transport": "io_uring", "queue_cpus": "0,1", "cpus": "0-1", "uring_reply_batch": false)";
    for (const char* policy : {"plain", "wf_sync"}) {
        INFO(policy);
        const FuseRun r = run_fuse(fio_doc("xeon-2s-16c32t", two, policy));
        CHECK(r.stats.completed == 2000);
        CHECK(r.stats.queue_changes >= 990);
        CHECK(r.fio_migrations >= 990);
        CHECK(r.stats.per_queue[0] > 900);
        CHECK(r.stats.per_queue[1] > 900);
        CHECK(r.stats.ring_off_cpu == 0);
        json no_delay = fio_doc("xeon-2s-16c32t", two, policy);
        no_delay["features"] = {{"DELAY_DEQUEUE", false}};
        const FuseRun every = run_fuse(no_delay);
        CHECK(every.stats.queue_changes > 1980);
        CHECK(every.fio_migrations > 1980);
    }
    const FuseRun same = run_fuse(fio_doc("xeon-2s-16c32t", two, "fuse_wake_same_cpu"));
    CHECK(same.stats.queue_changes <= 1);
    CHECK(same.fio_migrations <= 1);
    // Stacked with its ring thread, fio is faster than bouncing (published A4/A6: 1.24).
    const Outcome bounce = simulate(fio_steady_doc("xeon-2s-16c32t", two));
    const Outcome stay = simulate(fio_steady_doc("xeon-2s-16c32t", two, "fuse_wake_same_cpu"));
    CHECK(stay.m.get(Metric::usec_per_op) < bounce.m.get(Metric::usec_per_op));
}

TEST_CASE("io-uring, one queue on the other node: a WF_SYNC reply pulls fio to its ring thread's LLC, a plain "
          "one leaves it on its idle CPU", "[fuse][uring][wf_sync]") {
    // wake_affine_idle(): with WF_SYNC and the waker alone on its CPU the target is the waker's
    // CPU; it is busy and fio's idle previous CPU is in another LLC, so select_idle_sibling()
    // scans the ring thread's LLC for an idle CPU. Without WF_SYNC the idle previous CPU is the
    // target, and fio stays on node 0 with every reply crossing the nodes.
    const std::string far = R"(, "transport": "io_uring", "queue_cpus": "8")";
    const Outcome plain = simulate(fio_doc("xeon-2s-16c32t", far));
    const Outcome sync = simulate(fio_doc("xeon-2s-16c32t", far, "wf_sync"));
    CHECK(n(plain, Metric::migrations_requester) == 0);
    CHECK(share(plain, Metric::requester_time_by_node, "node0") == Approx(1.0));
    CHECK(n(sync, Metric::migrations_requester) == 1);
    CHECK(share(sync, Metric::requester_time_by_node, "node1") > 0.99);
    // Beside its ring thread's LLC each reply's wake stays within it: cheaper.
    CHECK(sync.m.get(Metric::usec_per_op) < plain.m.get(Metric::usec_per_op));
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
    const PolicyRun wf_cur = make_policy("seccomp_current_cpu").instantiate();
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
    // libfuse's pool (10 slots, one started; in io-uring mode it only serves FORGETs), the two
    // ring threads, then the jobs.
    REQUIRE(b.tasks.size() == 10 + 2 + 2);
    CHECK(b.tasks[0].spec.comm == "fuse-worker-0");
    CHECK_FALSE(b.tasks[0].deferred);
    CHECK(b.tasks[9].deferred);
    CHECK(b.tasks[10].spec.comm == "fuse-ring-0");
    CHECK(b.tasks[10].spec.role == TaskRole::server);
    CHECK(b.tasks[10].background);
    CHECK(b.tasks[11].spec.comm == "fuse-ring-8");
    CHECK(b.tasks[11].spec.allowed.first() == 8);
    CHECK(b.tasks[12].spec.role == TaskRole::requester);
    CHECK(b.tasks[12].spec.allowed.first() == 1);
    CHECK(b.tasks[13].spec.allowed.first() == 2);
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
    CHECK_THAT(error(R"(, "ioengine": "io_uring", "iodepth": 4, "iodepth_batch_submit": 5)"),
               Catch::Contains("/workload/iodepth_batch_submit") && Catch::Contains("at most iodepth (4)"));
    CHECK_THAT(error(R"(, "ioengine": "io_uring", "iodepth_batch_submit": -1)"),
               Catch::Contains("/workload/iodepth_batch_submit"));
    CHECK_THAT(error(R"(, "ioengine": "io_uring", "iodepth_batch_complete_max": 0)"),
               Catch::Contains("/workload/iodepth_batch_complete_max"));
    CHECK_THAT(error(R"(, "direct": 0)"),
               Catch::Contains("/workload/direct") && Catch::Contains("only O_DIRECT"));
    CHECK_THAT(error(R"(, "ioengine": "io_uring", "iodepth": 4096, "numjobs": 8)"),
               Catch::Contains("numjobs x iodepth at most 16384"));
    CHECK(error(R"(, "ioengine": "libaio", "iodepth": 64)") == "no error");
    CHECK_THAT(error(R"(, "nr_queues": 2)"), Catch::Contains("with transport \"dev\""));
    CHECK_THAT(error(R"(, "transport": "io_uring", "nr_queues": 2, "queue_cpus": "0,8")"),
               Catch::Contains("not both"));
    CHECK_THAT(error(R"(, "transport": "io_uring", "nr_queues": 64)"), Catch::Contains("one queue per CPU"));
    CHECK_THAT(error(R"(, "max_threads": 0)"), Catch::Contains("/workload/max_threads"));
    CHECK_THAT(error(R"(, "max_idle_threads": -2)"), Catch::Contains("/workload/max_idle_threads"));
    CHECK_THAT(error(R"(, "transport": "io_uring", "uring_q_depth": 0)"), Catch::Contains("/workload/uring_q_depth"));
    CHECK_THAT(error(R"(, "teardown_watchdog": "yes")"), Catch::Contains("/workload/teardown_watchdog"));
    CHECK_THAT(error(R"(, "uring_iowait": 0)"), Catch::Contains("/workload/uring_iowait"));
    CHECK_THAT(error(R"(, "uring_reply_batch": "yes")"), Catch::Contains("/workload/uring_reply_batch"));
    CHECK_THAT(error(R"(, "spawn_cost": "5 parsecs")"), Catch::Contains("/workload/spawn_cost"));
}

TEST_CASE("Per task class: the application's and the daemon's migrations, CPU time and where it ran",
          "[fuse][metrics]") {
    // Queue per core, plain reply wakes: fio migrates on every other request, the ring threads
    // are pinned and never do; both stay on node 0, where fio was forked.
    const Outcome o = simulate(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring")"));
    CHECK(n(o, Metric::migrations_requester) == n(o, Metric::migrations));
    CHECK(n(o, Metric::migrations_server) == 0);
    CHECK(n(o, Metric::migrations_requester) > 500);
    CHECK(share(o, Metric::requester_time_by_node, "node0") == Approx(1.0));
    // (libfuse's /dev/fuse worker, kept for FORGETs, runs once at start-up wherever it was forked.)
    CHECK(share(o, Metric::server_time_by_node, "node1") < 0.05);
    CHECK(share(o, Metric::requester_time_by_capacity, "1024") == Approx(1.0));
    // CPU time adds up: every busy nanosecond of a CPU is the application's or the daemon's (the
    // context switch into a task counts as that task's), on either transport and with either
    // asynchronous engine.
    auto adds_up = [](const Outcome& x) {
        const double busy_ns = x.m.get(Metric::cpu_util_sum) * x.m.get(Metric::sim_time_ns);
        const double classes =
            static_cast<double>(n(x, Metric::cpu_time_requester_ns) + n(x, Metric::cpu_time_server_ns));
        CHECK(busy_ns > 1e7);
        CHECK(classes >= busy_ns * 0.999);
        CHECK(classes <= busy_ns * 1.0001);
    };
    adds_up(o);
    for (const char* extra : {R"(, "transport": "dev", "numjobs": 3)",
                              R"(, "transport": "io_uring", "ioengine": "io_uring", "iodepth": 8, "numjobs": 2)",
                              R"(, "transport": "dev", "ioengine": "libaio", "iodepth": 8, "numjobs": 2)"}) {
        INFO(extra);
        adds_up(simulate(fio_doc("xeon-2s-16c32t", extra)));
    }
    // fio allowed only node 1's CPUs: its requests go to node 1's queues and all its time is there.
    const Outcome far = simulate(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring", "cpus": "9-15")"));
    CHECK(share(far, Metric::requester_time_by_node, "node1") == Approx(1.0));
    CHECK(share(far, Metric::server_time_by_node, "node1") > 0.95);
}

// ---------------------------------------------------------------------------------------------
// Background (asynchronous) requests: fio's io_uring and libaio engines with iodepth.

namespace {

// fio with an async engine on the Xeon; `governor` "performance" takes schedutil's ramp out of
// short runs (the shipped scenario runs long enough for schedutil to settle).
json bg_doc(const std::string& extra, const std::string& policy = "plain", const std::string& governor = "performance",
            int ios = 4000) {
    return doc(R"({"name": "fuse-bg", "description": "d",
                   "machine": {"preset": "xeon-2s-16c32t", "profile": {"base": "xeon-2s-16c32t", "governor": ")" +
               governor + R"("}},
                   "workload": {"kind": "fio", "number_ios": )" + std::to_string(ios) +
               R"(, "ioengine": "io_uring", "iodepth": 4)" + extra + R"(},
                   "policies": [")" + policy + R"("], "run": {"seeds": [1]}, "cases": [{"name": "c"}]})");
}

}  // namespace

TEST_CASE("async fio over FUSE: every background request is completed or still in flight", "[fuse][bg][invariant]") {
    for (const char* transport : {"dev", "io_uring"})
        for (const char* engine : {"io_uring", "libaio"}) {
            INFO(transport << " " << engine);
            const std::string t = std::string(R"(, "numjobs": 2, "iodepth": 8, "transport": ")") + transport +
                                  R"(", "ioengine": ")" + engine + "\"";
            const FuseRun done = run_fuse(bg_doc(t, "plain", "schedutil", 2000));
            CHECK(done.all_exited);
            CHECK(done.stats.sent == 4000);
            CHECK(done.stats.bg_sent == 4000);
            CHECK(done.stats.completed == 4000);
            CHECK(done.ops == 4000);
            CHECK(done.in_flight == 0);
            CHECK(done.num_background == 0);
            CHECK(done.active_background == 0);
            // Stopped mid-run: each job has at most its iodepth in flight, every one counted once.
            const FuseRun cut = run_fuse(bg_doc(t, "plain", "schedutil", 2000), 2 * kNsPerMs);
            CHECK_FALSE(cut.all_exited);
            CHECK(cut.stats.sent == cut.stats.completed + cut.held);
            CHECK(cut.in_flight <= 2 * 8);
            CHECK(static_cast<uint64_t>(cut.num_background) == cut.in_flight);
            CHECK(cut.ops <= cut.stats.completed);
            CHECK(cut.stats.completed - cut.ops <= 2 * 8);  // completed, not yet reaped by fio
        }
}

TEST_CASE("/dev/fuse: background requests never exceed max_background, the next submitter sleeps on "
          "blocked_waitq", "[fuse][bg][dev]") {
    // Two jobs x iodepth 16 want 32 requests in flight; the connection admits 12.
    const FuseRun r = run_fuse(bg_doc(R"(, "transport": "dev", "numjobs": 2, "iodepth": 16, "max_threads": 4)"));
    CHECK(r.all_exited);
    CHECK(r.stats.completed == 8000);
    CHECK(r.stats.max_num_background == 12);  // reached, never exceeded
    CHECK(r.stats.max_active_background <= 12);
    CHECK(r.stats.blocked_waits > 100);
    CHECK(r.stats.congested > 0);  // num_background >= congestion_threshold (9) at queueing
    // A lower limit from the server's INIT reply holds the same way.
    const FuseRun four =
        run_fuse(bg_doc(R"(, "transport": "dev", "numjobs": 2, "iodepth": 16, "max_background": 4)"));
    CHECK(four.stats.max_num_background == 4);
    CHECK(four.stats.max_active_background <= 4);
    CHECK(four.stats.completed == 8000);
    // Under the limit nothing blocks: one job at iodepth 4.
    const FuseRun under = run_fuse(bg_doc(R"(, "transport": "dev")"));
    CHECK(under.stats.max_num_background == 4);
    CHECK(under.stats.blocked_waits == 0);
    CHECK(under.stats.congested == 0);
}

TEST_CASE("/dev/fuse: the run reports the connection's counters: requests sent and ended, blocked and congested "
          "submits, workers started and exited", "[fuse][bg][dev][metrics]") {
    const std::string extra = R"(, "transport": "dev", "numjobs": 2, "iodepth": 16, "max_threads": 4, "max_idle_threads": 1)";
    const FuseRun r = run_fuse(bg_doc(extra));
    const Outcome o = simulate(bg_doc(extra));  // no warm-up: the window is the whole run
    CHECK(n(o, Metric::fuse_sent) == static_cast<int64_t>(r.stats.sent));
    CHECK(n(o, Metric::fuse_completed) == static_cast<int64_t>(r.stats.completed));
    CHECK(n(o, Metric::fuse_completed) == 8000);
    CHECK(n(o, Metric::fuse_sent) - n(o, Metric::fuse_completed) == static_cast<int64_t>(r.in_flight));
    CHECK(n(o, Metric::fuse_blocked_waits) == static_cast<int64_t>(r.stats.blocked_waits));
    CHECK(n(o, Metric::fuse_blocked_waits) > 100);
    CHECK(n(o, Metric::fuse_congested) == static_cast<int64_t>(r.stats.congested));
    CHECK(n(o, Metric::fuse_worker_spawns) == static_cast<int64_t>(r.stats.worker_spawns));
    CHECK(n(o, Metric::fuse_worker_exits) == static_cast<int64_t>(r.stats.worker_exits));
    CHECK(n(o, Metric::fuse_worker_exits) > 0);
}

TEST_CASE("io-uring: fc->blocked throttles background submitters too, each queue admits its own", "[fuse][bg][uring]") {
    const FuseRun r = run_fuse(bg_doc(R"(, "transport": "io_uring", "iodepth": 32, "cpus": "2")"));
    CHECK(r.stats.completed == 4000);
    CHECK(r.stats.max_num_background == 12);
    CHECK(r.stats.max_active_background <= 12);
    CHECK(r.stats.blocked_waits > 0);
    CHECK(r.stats.per_queue[2] == 4000);  // pinned fio: every request on its CPU's queue (mainline)
    CHECK(r.stats.bg_own_cpu_queue == 4000);
}

TEST_CASE("async fio with iodepth 1: one background request at a time, one wait per I/O", "[fuse][bg]") {
    for (const char* transport : {"dev", "io_uring"}) {
        INFO(transport);
        const FuseRun r = run_fuse(bg_doc(std::string(R"(, "iodepth": 1, "transport": ")") + transport + "\""));
        CHECK(r.all_exited);
        CHECK(r.stats.completed == 4000);
        CHECK(r.ops == 4000);
        CHECK(r.stats.max_num_background == 1);
        // The reply nearly always comes after fio sleeps in its wait: an I/O is one wait and one
        // wake (a completion that lands before fio reaches its wait needs neither).
        CHECK(r.stats.aio_waits >= 3990);
        CHECK(r.stats.aio_wakes == r.stats.aio_waits);
    }
}

TEST_CASE("fio 3.33's io_uring engine: a submit call per I/O, posted completions reaped without a call",
          "[fuse][bg][uring]") {
    // Measured with fio 3.33 at iodepth 4 over passthrough_hp -o io_uring on the development VM
    // (bpftrace on sys_enter_io_uring_enter, docs/validation.md): 250,315 calls
    // io_uring_enter(1, 0, GETEVENTS) for 250,315 I/Os, and 60,178 io_uring_enter(0, 1, GETEVENTS).
    const FuseRun one = run_fuse(bg_doc(R"(, "transport": "io_uring")"));
    CHECK(one.all_exited);
    CHECK(one.stats.completed == 4000);
    CHECK(one.stats.aio_submit_calls == 4000);
    // The ring thread serves on fio's CPU once fio sleeps. fio reaps one completion at a time
    // (iodepth_batch_complete_max 1) and refills its slot: the first of a round's four replies
    // costs a wait call, in which all four are posted, and the other three are reaped from the
    // CQ ring without one (about one wait per four I/Os, as measured).
    CHECK(one.stats.aio_wait_calls >= 990);
    CHECK(one.stats.aio_wait_calls <= 1010);
    CHECK(one.stats.aio_wait_calls + one.stats.aio_posted_reaps == 4000);
    // iodepth_batch_submit 0 (= iodepth) and reaps of up to four: the free slots go in one call.
    const FuseRun all = run_fuse(
        bg_doc(R"(, "transport": "io_uring", "iodepth_batch_submit": 0, "iodepth_batch_complete_max": 4)"));
    CHECK(all.stats.completed == 4000);
    CHECK(all.stats.aio_submit_calls <= 1010);
    // With cpu++ the next CPU's ring thread answers while fio is still submitting: the next submit
    // call posts the completion (DEFER_TASKRUN), and fio reaps it without a wait call.
    const FuseRun next = run_fuse(bg_doc(R"(, "transport": "io_uring")", "fuse_bg_next_cpu"));
    CHECK(next.stats.completed == 4000);
    CHECK(next.stats.aio_submit_calls == 4000);
    CHECK(next.stats.aio_posted_reaps > 500);
    CHECK(next.stats.aio_wait_calls + next.stats.aio_posted_reaps == 4000);
    INFO("one: waits " << one.stats.aio_wait_calls << " posted " << one.stats.aio_posted_reaps << "; next: waits "
                       << next.stats.aio_wait_calls << " posted " << next.stats.aio_posted_reaps);
    // libaio: completions are in its ring at once, and every reap is an io_getevents call.
    json libaio = bg_doc(R"(, "transport": "io_uring")", "fuse_bg_next_cpu");
    libaio["workload"]["ioengine"] = "libaio";
    const FuseRun aio = run_fuse(libaio);
    CHECK(aio.stats.completed == 4000);
    CHECK(aio.stats.aio_submit_calls == 4000);
    CHECK(aio.stats.aio_posted_reaps == 0);
    CHECK(aio.stats.aio_wait_calls > next.stats.aio_wait_calls);
}

TEST_CASE("io-uring background requests on fio's own CPU: the ring thread competes with fio and fio "
          "migrates, cpu++ keeps fio in place and reads faster", "[fuse][bg][uring][fuse_bg_next_cpu]") {
    // One submit per reply (libfuse's development branch before Dec 2025), as in the series' v3 (Oct 2025: 272 vs 760 MiB/s).
    const std::string uring = R"(, "transport": "io_uring", "uring_reply_batch": false)";
    const FuseRun plain = run_fuse(bg_doc(uring));
    const FuseRun next = run_fuse(bg_doc(uring, "fuse_bg_next_cpu"));
    // Mainline: every background request goes to the queue of the CPU fio runs on, whose pinned
    // ring thread then runs there; a completion wake finds that CPU busy and moves fio (500 of
    // 4000 reads), and each move sends fio's next request to the queue of the CPU it moved to.
    CHECK(plain.stats.bg_own_cpu_queue == plain.stats.bg_sent);
    CHECK(plain.fio_migrations > plain.stats.bg_sent / 20);
    // (The last move may come after fio's last request.)
    CHECK(plain.stats.queue_changes <= plain.fio_migrations);
    CHECK(plain.stats.queue_changes + 1 >= plain.fio_migrations);
    // cpu++: the next core's ring thread serves while fio submits; fio's CPU is idle at each
    // completion wake, so it stays.
    CHECK(next.stats.bg_own_cpu_queue == 0);
    CHECK(next.fio_migrations <= 2);
    CHECK(next.stats.queue_changes <= 2);
    CHECK(next.stats.ring_off_cpu == 0);
    CHECK(next.sim_ns < plain.sim_ns);
    const Outcome op = simulate(bg_doc(uring));
    const Outcome on = simulate(bg_doc(uring, "fuse_bg_next_cpu"));
    CHECK(on.m.get(Metric::mib_per_sec) > 1.2 * op.m.get(Metric::mib_per_sec));
    CHECK(n(on, Metric::migrations) < n(op, Metric::migrations) / 10);
    // The competition itself: on mainline fio and its ring thread take turns on one CPU (less than
    // one CPU busy in all; fio's reply wake preempts the ring thread before it finishes its round,
    // 390 times in 4000 reads), with cpu++ they run side by side on two and nobody is preempted.
    CHECK(op.m.get(Metric::cpu_util_sum) < 1.0);
    CHECK(n(op, Metric::preemptions) > static_cast<int64_t>(plain.stats.bg_sent / 20));
    CHECK(on.m.get(Metric::cpu_util_sum) > 1.2);
    CHECK(n(on, Metric::preemptions) == 0);
}

TEST_CASE("libfuse's reply batching: fio stacked on its ring thread's CPU at iodepth 4 gets its four replies "
          "after one round, wakes once per round and reads faster than with one reply at a time",
          "[fuse][bg][uring][batch]") {
    // On the development VM (docs/validation.md, "libfuse's reply batching") fio pinned with its
    // ring thread read 1.36x faster with stock libfuse than with a copy that submits each reply,
    // and fio switched 0.33 times per read against 0.94.
    const std::string pinned = R"(, "transport": "io_uring", "cpus": "3")";
    const FuseRun batch = run_fuse(bg_doc(pinned));
    const FuseRun single = run_fuse(bg_doc(pinned + R"(, "uring_reply_batch": false)"));
    for (const FuseRun* r : {&batch, &single}) {
        CHECK(r->all_exited);
        CHECK(r->stats.completed == 4000);
        CHECK(r->fio_migrations == 0);
    }
    // Every request is served in one round; without batching a round is one request, with it
    // most requests share a round.
    CHECK(single.stats.ring_requests == 4000);
    CHECK(batch.stats.ring_requests == 4000);
    CHECK(single.stats.ring_batched == 0);
    CHECK(single.stats.ring_rounds == 4000);
    CHECK(batch.stats.ring_batched > 3000);
    CHECK(batch.stats.ring_rounds < 1500);
    // fio sleeps once per round, not once per request, and the CPU switches less.
    CHECK(batch.stats.aio_waits < single.stats.aio_waits);
    CHECK(batch.sim_ns * 23 < single.sim_ns * 20);  // at least 15% faster
    const Outcome ob = simulate(bg_doc(pinned));
    const Outcome os = simulate(bg_doc(pinned + R"(, "uring_reply_batch": false)"));
    CHECK(ob.m.get(Metric::fuse_ring_batch_mean) > 2.5);
    // A synchronous stream has one request in flight: rounds of one either way. With batching its
    // reply leaves in the io_uring_enter that then waits, so the woken fio beside the ring thread
    // runs once the ring thread sleeps; with one submit per reply it preempts the ring thread on
    // the submit's return. On the development VM (psync, fio pinned to vCPU 0) the ring thread was
    // preempted 0.91 times per read with the one-submit copy of libfuse, never with stock libfuse.
    const std::string psync = R"(, "transport": "io_uring", "cpus": "3")";
    const Outcome sb = simulate(fio_doc("xeon-2s-16c32t", psync));
    const Outcome ss = simulate(fio_doc("xeon-2s-16c32t", psync + R"(, "uring_reply_batch": false)"));
    CHECK(sb.m.get(Metric::fuse_ring_batch_mean) == 1.0);  // batching finds one request at a time
    CHECK(n(sb, Metric::preemptions) < n(sb, Metric::ops) / 20);
    CHECK(n(ss, Metric::preemptions) > n(ss, Metric::ops) * 9 / 10);
}

TEST_CASE("io-uring: a round holds at most one request per ring entry (uring_q_depth, libfuse's default 8)",
          "[fuse][bg][uring][batch]") {
    // fio pinned beside its ring thread with 16 reads in flight submits all 16 before the ring
    // thread runs. The kernel dispatches a request only to a free ring entry, so the ring thread
    // finds at most 8 CQEs (libfuse's default queue depth), the others waiting in fuse_req_queue
    // until the round's COMMIT_AND_FETCHes bind them; with 16 entries its rounds are twice as long.
    const std::string pinned = R"(, "transport": "io_uring", "cpus": "3", "iodepth": 16)";
    const Outcome d8 = simulate(bg_doc(pinned));
    const Outcome d16 = simulate(bg_doc(pinned + R"(, "uring_q_depth": 16)"));
    const Outcome d2 = simulate(bg_doc(pinned + R"(, "uring_q_depth": 2)"));
    CHECK(d8.m.get(Metric::fuse_ring_batch_mean) <= 8.0);
    CHECK(d8.m.get(Metric::fuse_ring_batch_mean) > 5.0);
    CHECK(d16.m.get(Metric::fuse_ring_batch_mean) > 1.3 * d8.m.get(Metric::fuse_ring_batch_mean));
    CHECK(d2.m.get(Metric::fuse_ring_batch_mean) <= 2.0);
    for (const Outcome* o : {&d8, &d16, &d2}) CHECK(n(*o, Metric::ops) == 4000);
}

TEST_CASE("a ring thread's round of replies is one system call: under preempt=none the fio it wakes runs "
          "when the call ends, and with preempt_full each reply's wake preempts it",
          "[fuse][bg][uring][batch][preempt]") {
    const std::string pinned = R"(, "transport": "io_uring", "cpus": "3")";
    json none = bg_doc(pinned);
    json full = bg_doc(pinned);
    full["machine"]["profile"]["preempt_full"] = true;
    const Outcome on = simulate(none), of = simulate(full);
    // preempt=none: fio sleeps once per round and is preempted only by its ring thread's
    // dispatch wake after it submits, once per round of four.
    CHECK(n(on, Metric::preemptions) <= 1001);
    CHECK(on.m.get(Metric::fuse_ring_batch_mean) == Approx(4.0));
    // preempt=full: a reply's wake switches to fio inside the call, about once per read; fio
    // submits again while the ring thread is off the CPU, and those requests join the ring
    // thread's next round (their task work runs at its next return from a system call), so the
    // rounds keep their four, but every read costs switches.
    CHECK(n(of, Metric::preemptions) > 3 * n(on, Metric::preemptions));
    CHECK(n(of, Metric::preemptions) > n(of, Metric::ops) * 9 / 10);
    CHECK(of.m.get(Metric::usec_per_op) > 1.15 * on.m.get(Metric::usec_per_op));
}

TEST_CASE("a psync requester beside its ring thread sleeps in request_wait_answer without being preempted "
          "under preempt=none, and with preempt_full the dispatch wake preempts it first",
          "[fuse][uring][preempt]") {
    // fuse_simple_request queues the request (waking the ring thread on this CPU) and sleeps in
    // request_wait_answer within one read(): under preempt=none nothing preempts in between.
    json none = fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring", "cpus": "3")");
    json full = none;
    full["machine"] = {{"preset", "xeon-2s-16c32t"}, {"profile", {{"base", "xeon-2s-16c32t"}, {"preempt_full", true}}}};
    const Outcome on = simulate(none), of = simulate(full);
    CHECK(n(on, Metric::preemptions) == 0);
    CHECK(n(of, Metric::preemptions) >= n(of, Metric::ops) - 1);
    // Either way two switches per read: fio to the ring thread and back.
    CHECK(n(on, Metric::context_switches) == Approx(2.0 * n(on, Metric::ops)).epsilon(0.05));
    CHECK(n(of, Metric::context_switches) == Approx(2.0 * n(of, Metric::ops)).epsilon(0.05));
}

TEST_CASE("/dev/fuse: under preempt=none a requester woken onto its worker's CPU by the reply runs when the "
          "worker's writev returns",
          "[fuse][dev][preempt]") {
    // One CPU: fio and the workers share it. fuse_request_end wakes fio inside the worker's writev;
    // the preemption it asks for waits for the return to user space, 20 us later here.
    const json d = doc(R"({"machine": {"topology": {"name": "uni", "cores_per_cluster": 1}, "profile": {"base": "xeon-2s-16c32t"}},
      "workload": {"kind": "fio", "number_ios": 2000, "writev_return": "20us"}, "policies": ["plain"]})");
    const Outcome r = simulate(d);
    REQUIRE(r.completed);
    CHECK(n(r, Metric::preemptions) > n(r, Metric::ops) * 9 / 10);  // the worker, at its return
    CHECK(r.m.get(Metric::wake_latency_ns_p50) >= 20000);
}

TEST_CASE("queue policies choose only background io-uring queues", "[fuse][bg][policies]") {
    // psync over io-uring sends only foreground requests: cpu++ changes nothing.
    const Outcome plain = simulate(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring")"));
    const Outcome next = simulate(fio_doc("xeon-2s-16c32t", R"(, "transport": "io_uring")", "fuse_bg_next_cpu"));
    CHECK(plain.m == next.m);
    // /dev/fuse has no queues to choose: identical runs.
    const Outcome dev = simulate(bg_doc(R"(, "transport": "dev")"));
    const Outcome dev_next = simulate(bg_doc(R"(, "transport": "dev")", "fuse_bg_next_cpu"));
    CHECK(dev.m == dev_next.m);
    // fio pinned to CPU 7 (node 0: CPUs 0-7, 16-23): cpu++ uses queue 8 (node 1), the NUMA-local
    // rule the node's next queue, rank (7 + 1) mod 16 = CPU 16; random spreads over many queues.
    const std::string pin7 = R"(, "transport": "io_uring", "cpus": "7")";
    CHECK(run_fuse(bg_doc(pin7, "fuse_bg_next_cpu")).stats.per_queue[8] == 4000);
    CHECK(run_fuse(bg_doc(pin7, "fuse_bg_numa")).stats.per_queue[16] == 4000);
    const FuseRun rnd = run_fuse(bg_doc(pin7, "fuse_bg_random"));
    int used = 0;
    for (uint64_t q : rnd.stats.per_queue) used += q > 0;
    CHECK(used > 20);
    // Same seed, same random choices.
    CHECK(run_fuse(bg_doc(pin7, "fuse_bg_random")).stats.per_queue == rnd.stats.per_queue);
}

TEST_CASE("fuse_bg_retries: the next queue while it holds at most 3 requests, then its neighbours",
          "[fuse][bg][policies]") {
    // iodepth 4 from CPU 2: queue 3 never holds more than 4; with 8 in flight the walk spills to 4, 5.
    const std::string pin2 = R"(, "transport": "io_uring", "cpus": "2")";
    const FuseRun four = run_fuse(bg_doc(pin2, "fuse_bg_retries"));
    CHECK(four.stats.per_queue[3] > 3000);
    CHECK(four.stats.per_queue[2] == 0);
    const FuseRun eight = run_fuse(bg_doc(pin2 + R"(, "iodepth": 16)", "fuse_bg_retries"));
    CHECK(eight.stats.per_queue[3] > 0);
    CHECK(eight.stats.per_queue[4] > 0);
    CHECK(eight.stats.per_queue[5] > 0);
}

TEST_CASE("FUSE background wake sites: sync hints stay off, fuse_wake_same_cpu stays foreground-only",
          "[fuse][bg][policies]") {
    const PolicyRun same = make_policy("fuse_wake_same_cpu").instantiate();
    const PolicyRun sync = make_policy("fuse_sync_request").instantiate();
    const PolicyRun wf_sync = make_policy("wf_sync").instantiate();
    CHECK(sync.site_flags(fuse_queue_request_site(true)) == 0);  // no FR_SYNC_WAKEUP on background requests
    CHECK(wf_sync.site_flags(fuse_queue_request_site(true)) == 0);  // the submitter goes on submitting
    CHECK(wf_sync.site_flags(fuse_uring_dispatch_site(true)) == 0);
    CHECK(same.site_flags(fuse_aio_complete_site(AioEngine::io_uring, true)) == 0);
    CHECK(same.site_flags(fuse_bg_unblock_site(true)) == 0);
    CHECK(fuse_aio_complete_site(AioEngine::io_uring, true).iowait);
    CHECK_FALSE(fuse_aio_complete_site(AioEngine::libaio, true).iowait);
    // A page's WRITE (writeback): its end wakes the writer from folio_wait_writeback(), an I/O
    // wait (fuse_sync_writes() before 2025 was not); "fuse: Wake requests on the same cpu" only
    // changes fuse_request_end's foreground wake.
    CHECK(same.site_flags(fuse_writeback_end_site(true)) == 0);
    CHECK(fuse_writeback_end_site(true).iowait);
    CHECK_FALSE(fuse_writeback_end_site(true, false).iowait);
    CHECK(wf_sync.site_flags(fuse_writeback_end_site(true)) == WF_SYNC);  // the ring thread sleeps next
}

TEST_CASE("FUSE request latency splits into queueing, server and reply, WF_CURRENT_CPU shortens the reply",
          "[fuse][metrics]") {
    // One submit per reply (libfuse's development branch before Dec 2025), as the patch was measured (Oct 2025): the woken fio runs
    // when the submit returns. (With libfuse 3.18's batching it waits for the ring thread's sleep.)
    const std::string uring = R"(, "transport": "io_uring", "uring_reply_batch": false)";
    // Steady state (schedutil settled).
    const Outcome plain = simulate(fio_steady_doc("xeon-2s-16c32t", uring));
    const Outcome same = simulate(fio_steady_doc("xeon-2s-16c32t", uring, "fuse_wake_same_cpu"));
    for (const Outcome* o : {&plain, &same}) {
        CHECK(n(*o, Metric::fuse_requests) == 20000);
        // The three spans tile each request: their means add up to the mean latency, which lies
        // between the percentiles' bucket bounds.
        const double sum = o->m.get(Metric::fuse_queue_ns_mean) + o->m.get(Metric::fuse_server_ns_mean) +
                           o->m.get(Metric::fuse_reply_ns_mean);
        CHECK(sum > 0);
        CHECK(sum <= 1.07 * static_cast<double>(n(*o, Metric::fuse_latency_ns_p99)));
        CHECK(sum < o->m.get(Metric::usec_per_op) * 1000);  // the op adds the app's own work
        // Each span's percentiles are bucket bounds of its own histogram (1/16 of a power of two
        // apart): the median is at most the p99, and the exact mean is not beyond the p99's bucket.
        for (auto [p50, p99, mean] : {std::tuple{Metric::fuse_queue_ns_p50, Metric::fuse_queue_ns_p99, Metric::fuse_queue_ns_mean},
                                      std::tuple{Metric::fuse_server_ns_p50, Metric::fuse_server_ns_p99, Metric::fuse_server_ns_mean},
                                      std::tuple{Metric::fuse_reply_ns_p50, Metric::fuse_reply_ns_p99, Metric::fuse_reply_ns_mean}}) {
            CHECK(n(*o, p50) > 0);
            CHECK(n(*o, p50) <= n(*o, p99));
            CHECK(o->m.get(mean) <= 1.07 * static_cast<double>(n(*o, p99)));
        }
    }
    // The reply's percentiles show plain's two kinds of reply: fio found still queued on the ring
    // thread's CPU (a local wake, about 1 us, the median) and fio woken on an idle CPU (the tail).
    // With WF_CURRENT_CPU every reply is of the first kind.
    CHECK(n(plain, Metric::fuse_reply_ns_p99) > 3 * n(plain, Metric::fuse_reply_ns_p50));
    CHECK(n(same, Metric::fuse_reply_ns_p99) <= n(plain, Metric::fuse_reply_ns_p50) * 11 / 10);
    // The same server work either way (in cycles: plain's bouncing pair settles one OPP lower); the
    // reply wake is local and short with WF_CURRENT_CPU.
    auto server_cycles = [](const Outcome& o) { return o.m.get(Metric::fuse_server_ns_mean) * o.m.get(Metric::freq_khz_busy); };
    CHECK(server_cycles(same) == Approx(server_cycles(plain)).epsilon(0.03));
    CHECK(same.m.get(Metric::fuse_reply_ns_mean) < 0.5 * plain.m.get(Metric::fuse_reply_ns_mean));
    // Plain reply wakes move fio, and its next request goes to another queue.
    CHECK(n(plain, Metric::fuse_queue_changes) > 500);
    CHECK(n(same, Metric::fuse_queue_changes) == 0);
    // /dev/fuse has no queues to change.
    CHECK(n(simulate(fio_doc("xeon-2s-16c32t", "")), Metric::fuse_queue_changes) == 0);
}

TEST_CASE("A FUSE request's system calls cost the machine's syscall: a pread 1 us more with 1 us dearer "
          "syscalls, a /dev/fuse worker 2 us (read and writev), a ring thread 1 us a round",
          "[fuse][costs]") {
    // fio pinned beside its server on the 2-vCPU guest (fixed clock), without cost jitter, with
    // syscalls at 300 ns and at 1.3 us (PTI on the same guest: 1.05-1.18 us, docs/validation.md).
    auto per_read = [](const std::string& extra, int64_t syscall_ns) {
        json d = fio_doc("kvm-2vcpu", R"(, "cpus": "0")" + extra);
        d["machine"] = json{{"preset", "kvm-2vcpu"},
                            {"profile", {{"base", "kvm-2vcpu"},
                                         {"syscall", std::to_string(syscall_ns) + "ns"},
                                         {"cost_jitter_pct", 0}}}};
        const Outcome o = simulate(d);  // the metrics
        const FuseRun f = run_fuse(d);   // the same run's connection counters
        REQUIRE(f.ops == static_cast<uint64_t>(n(o, Metric::ops)));
        const double reads = static_cast<double>(f.ops);
        return std::tuple{static_cast<double>(n(o, Metric::cpu_time_requester_ns)) / reads,
                          static_cast<double>(n(o, Metric::cpu_time_server_ns)) / reads,
                          static_cast<double>(f.stats.aio_submit_calls + f.stats.aio_wait_calls) / reads,
                          static_cast<double>(f.stats.ring_rounds) / reads};
    };
    SECTION("psync over /dev/fuse: pread's entry and exit; the worker's read() and writev()") {
        const auto [app0, srv0, calls0, rounds0] = per_read(R"(, "transport": "dev", "max_threads": 1)", 300);
        const auto [app1, srv1, calls1, rounds1] = per_read(R"(, "transport": "dev", "max_threads": 1)", 1300);
        CHECK(app1 - app0 == Approx(1000).margin(20));
        CHECK(srv1 - srv0 == Approx(2000).margin(40));
    }
    SECTION("psync over io-uring: pread's entry and exit; one io_uring_enter a ring thread's round") {
        const auto [app0, srv0, calls0, rounds0] = per_read(R"(, "transport": "io_uring")", 300);
        const auto [app1, srv1, calls1, rounds1] = per_read(R"(, "transport": "io_uring")", 1300);
        CHECK(rounds0 == Approx(1.0).margin(0.01));  // one request at a time: rounds of one
        CHECK(app1 - app0 == Approx(1000).margin(20));
        CHECK(srv1 - srv0 == Approx(1000 * rounds1).margin(20));
    }
    SECTION("io_uring engine, iodepth 4: each submit and wait call, and each round") {
        const auto [app0, srv0, calls0, rounds0] = per_read(R"(, "transport": "io_uring", "ioengine": "io_uring", "iodepth": 4)", 300);
        const auto [app1, srv1, calls1, rounds1] = per_read(R"(, "transport": "io_uring", "ioengine": "io_uring", "iodepth": 4)", 1300);
        // Nearly the same pattern at both costs (1.2455 and 1.2435 calls, 0.264 and 0.271 rounds a
        // read); the few more rounds cost their switches besides.
        CHECK(calls1 == Approx(calls0).epsilon(0.02));
        CHECK(app1 - app0 == Approx(1000 * calls1).epsilon(0.05));
        CHECK(srv1 - srv0 == Approx(1000 * rounds1).epsilon(0.15));
    }
}

TEST_CASE("program: a system call that sends two requests pays one entry and one exit (\"call\": first and last)",
          "[program][fuse][costs]") {
    // open(O_CREAT) as LOOKUP + CREATE in one call, against the same two requests as two calls.
    auto app_ns = [](const std::string& lookup_call, const std::string& create_call) {
        const std::string w = R"({"kind": "program", "fuse": {"fs": {}}, "tasks": [{"name": "app", "role": "requester",
            "cpus": "0", "program": [{"loop": 200, "do": [{"fuse": "lookup", "call": ")" + lookup_call +
                              R"("}, {"fuse": "create", "call": ")" + create_call + R"("}, {"op": 0}]}]}]})";
        json d = doc(R"({"name": "p", "description": "d", "machine": "kvm-2vcpu", "workload": )" + w +
                     R"(, "policies": ["plain"], "run": {"seeds": [1]}, "cases": [{"name": "c"}]})");
        d["machine"] = json{{"preset", "kvm-2vcpu"}, {"profile", {{"base", "kvm-2vcpu"}, {"cost_jitter_pct", 0}}}};
        const Outcome o = simulate(d);
        return static_cast<double>(n(o, Metric::cpu_time_requester_ns)) / 200;
    };
    const double one_call = app_ns("first", "last"), two_calls = app_ns("own", "own");
    // kvm-2vcpu's syscall is 300 ns: the second call's entry and exit.
    CHECK(two_calls - one_call == Approx(300).margin(10));
    // A request inside a call pays neither.
    CHECK(app_ns("first", "inside") < one_call);
}
