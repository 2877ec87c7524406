// Validation against published and measured figures (docs/validation.md). These run the shipped
// scenarios as they are, so the numbers users see are the numbers tested.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "experiment/report.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"

using namespace wakesim;

namespace {

// Every run of a shipped scenario (all cases, policies and seeds), each checked to completion.
std::vector<RunRecord> run_every(const std::string& file) {
    Scenario sc = load_scenario(std::string(WAKESIM_SOURCE_DIR) + "/scenarios/" + file);
    RunOptions opt;
    opt.jobs = 2;
    opt.check_invariants = true;
    auto runs = run_scenario(sc, opt);
    for (const auto& r : runs) REQUIRE(r.result.completed);
    return runs;
}

// Metrics by "case/policy" (the last seed of each).
std::map<std::string, RunMetrics> run_all(const std::string& file) {
    std::map<std::string, RunMetrics> out;
    for (auto& r : run_every(file)) out[r.case_name + "/" + r.policy] = r.result.metrics;
    return out;
}

double usec(const RunMetrics& m) { return m.get(Metric::usec_per_op); }

}  // namespace

TEST_CASE("pipe-altra reproduces the reciprocal-sync thread's table C ratios within 10% with one Altra profile", "[validation]") {
    auto m = run_all("pipe-altra.json");
    const double c1 = usec(m.at("unpinned/plain"));
    const double c2 = usec(m.at("unpinned/reciprocal_sync"));
    const double c3 = usec(m.at("pinned-cpu0/plain"));
    const double c4 = usec(m.at("pinned-cpu0/reciprocal_sync"));
    CHECK(c2 / c1 == Approx(3.187 / 3.985).epsilon(0.10));
    CHECK(c3 / c1 == Approx(3.055 / 3.985).epsilon(0.10));
    CHECK(c4 / c3 == Approx(3.113 / 3.055).epsilon(0.10));
    // Absolute figures land near the published ones too (same profile for all four rows).
    CHECK(c1 == Approx(3.985).epsilon(0.10));
    CHECK(c3 == Approx(3.055).epsilon(0.10));
}

TEST_CASE("On the idle Altra the reciprocal-sync pair lives on one CPU: under 1% of wakeups migrate", "[validation]") {
    auto m = run_all("pipe-altra.json");
    const auto& r = m.at("unpinned/reciprocal_sync");
    CHECK(r.get(Metric::migrations_wakeup) < 0.01 * r.get(Metric::wakeups));
    CHECK(r.integer(Metric::wakeups_local) > 0);
    CHECK(r.integer(Metric::wakeups_ipi) < r.integer(Metric::wakeups) / 100);
    // Plain: every wakeup goes to the wakee's idle prev CPU through an IPI; prev is idle, so
    // select_idle_sibling returns it and the wakee does not migrate (select_idle_sibling step 2).
    const auto& p = m.at("unpinned/plain");
    CHECK(p.integer(Metric::wakeups_remote) == p.integer(Metric::wakeups));
    CHECK(p.integer(Metric::cpus_busy) == 2);
    // wake_affine picks the waker's CPU every time; select_idle_sibling overrides it with prev.
    CHECK(p.integer(Metric::wakeups_affine) == p.integer(Metric::wakeups));
    CHECK(p.integer(Metric::select_sis_prev) == p.integer(Metric::wakeups));
    CHECK(p.integer(Metric::migrations_wakeup) == 0);
}

TEST_CASE("pipe-kvm reproduces the dev VM's measured pipe figures within 25%", "[validation]") {
    // Measured on the 2-vCPU KVM guest (docs/validation.md): unpinned 24.3, taskset -c 0 13.5 us/op.
    auto m = run_all("pipe-kvm.json");
    const double un = usec(m.at("unpinned/plain"));
    const double pin = usec(m.at("pinned-cpu0/plain"));
    CHECK(un == Approx(24.3).epsilon(0.25));
    CHECK(pin == Approx(13.5).epsilon(0.25));
    CHECK(un / pin == Approx(24.3 / 13.5).epsilon(0.25));
}

TEST_CASE("Hackbench shows no material change with the reciprocal-sync patch", "[validation]") {
    auto m = run_all("messaging-altra.json");
    for (const char* c : {"1-group", "4-groups", "8-groups"}) {
        const double plain = m.at(std::string(c) + "/plain").get(Metric::sim_time_ns);
        const double patched = m.at(std::string(c) + "/reciprocal_sync").get(Metric::sim_time_ns);
        INFO(c);
        CHECK(patched / plain == Approx(1.0).epsilon(0.15));
    }
}

TEST_CASE("messaging-kvm: hackbench on the dev VM within 15% of the measured times (one group 25%), and cheaper per message with more groups",
          "[validation]") {
    // Measured: perf bench sched messaging -t -p -g 1/2/4 -l 1000, mean of 7 runs (docs/validation.md).
    std::map<std::string, double> secs, per_msg;
    std::map<std::string, int> n;
    for (auto& r : run_every("messaging-kvm.json")) {
        secs[r.case_name] += r.result.metrics.get(Metric::sim_time_ns) / 1e9;
        per_msg[r.case_name] += usec(r.result.metrics);
        ++n[r.case_name];
    }
    // One group is asserted within 25%: the model's one group is 18% fast (0.64 s). It was 19%
    // fast until the workers inherited perf's wakee_flips (messaging `parent_wakee_flips`), which
    // ended the receivers' wake_affine() pulls: its migrations went from 655-1,434 to 59-113,
    // against 114-196 measured. What it still lacks shows in the switches: 42k-44k against 60k-73k
    // measured (receivers read more messages per wakeup in the model), with each switch on the VM
    // costing several us (docs/validation.md, "Receivers inherit perf's wakee_flips").
    const std::map<std::string, std::pair<double, double>> measured = {
        {"1-group", {0.78, 0.25}}, {"2-groups", {1.29, 0.15}}, {"4-groups", {2.37, 0.15}}};
    for (const auto& [c, want] : measured) {
        INFO(c);
        REQUIRE(n[c] == 3);
        CHECK(secs[c] / n[c] == Approx(want.first).epsilon(want.second));
    }
    // More groups: more runnable tasks per CPU, longer batches, fewer switches per message.
    CHECK(per_msg["2-groups"] < per_msg["1-group"]);
    CHECK(per_msg["4-groups"] < per_msg["2-groups"]);
}

TEST_CASE("messaging-kvm-spr: hackbench on the Intel-host dev VM as the kernel runs it, pinned and unpinned", "[validation]") {
    // Measured on 2026-12-01 (docs/validation.md, "What a wakeup across the vCPUs costs"):
    // perf stat of perf bench sched messaging -t -p -g G -l 1000, 5 runs each (15 at 4 groups;
    // means of the times, medians of the migrations: one 2-group run moved 4,915 times, one
    // 4-group run 1,207), and the steady placements from /proc counters of -l 100000, 4 runs
    // each (mean messages/s).
    std::map<std::string, double> secs, migr, rate, wakes;
    std::map<std::string, int> n;
    for (auto& r : run_every("messaging-kvm-spr.json")) {
        const RunMetrics& m = r.result.metrics;
        secs[r.case_name] += m.get(Metric::sim_time_ns) / 1e9;
        migr[r.case_name] += m.get(Metric::migrations);
        rate[r.case_name] += m.get(Metric::ops_per_sec);
        wakes[r.case_name] += m.get(Metric::wakeups) / m.get(Metric::ops);
        ++n[r.case_name];
    }
    for (auto* mp : {&secs, &migr, &rate, &wakes})
        for (auto& [c, v] : *mp) v /= n[c];
    const std::map<std::string, std::pair<double, double>> measured = {
        {"1-group", {0.262, 65}}, {"2-groups", {0.328, 185}}, {"4-groups", {0.513, 299}}};
    for (const auto& [c, want] : measured) {
        INFO(c << ": " << secs[c] << " s, " << migr[c] << " migrations");
        REQUIRE(n[c] == 10);
        // Four groups run 16% fast in the model: 0.433 s over seeds 1-30 (standard deviation
        // 0.047 s), the kernel's 15 runs 0.432-0.618 s; ten seeds' mean moves by 3% with any
        // change of event order (0.457 s before a task's consecutive work became one event, 0.431
        // after), so that row is held to 20%.
        CHECK(secs[c] == Approx(want.first).epsilon(c == "4-groups" ? 0.20 : 0.15));
        // The model's migrations are low: with a new thread's start signals
        // (post_init_entity_util_avg()) and the kernel's fork balancer two groups give 111 on
        // average where the kernel gave 92-289 on 2026-12-01 and 117-363 on 2026-12-02
        // (docs/validation.md).
        CHECK(migr[c] > want.second / 2.5);
        CHECK(migr[c] < want.second * 2);
    }
    // Steady state: the placements in which the scheduler decides nothing were fitted (split)
    // or follow from the costs (one vCPU); unpinned, a receiver woken from the other vCPU must
    // rarely preempt there, or receivers wake three times as often.
    CHECK(rate["one-vcpu"] == Approx(2.95e6).epsilon(0.10));
    CHECK(rate["split"] == Approx(4.24e6).epsilon(0.10));
    CHECK(rate["unpinned-steady"] == Approx(1.75e6).epsilon(0.15));
    CHECK(wakes["unpinned-steady"] > 0.11 / 1.5);
    CHECK(wakes["unpinned-steady"] < 0.16 * 1.5);
    CHECK(rate["unpinned-steady"] < rate["one-vcpu"]);
    CHECK(rate["one-vcpu"] < rate["split"]);
}

TEST_CASE("Same scenario and seed give byte-identical JSON, another seed changes the numbers", "[determinism]") {
    Scenario sc = load_scenario(std::string(WAKESIM_SOURCE_DIR) + "/scenarios/messaging-xeon.json");
    RunOptions one, two;
    one.cases = two.cases = {"2-groups"};
    two.jobs = 2;
    const std::string a = report_json(sc, run_scenario(sc, one)).dump();
    const std::string b = report_json(sc, run_scenario(sc, two)).dump();
    CHECK(a == b);
    const std::string c = report_json(sc, run_scenario(sc, one)).dump();
    CHECK(a == c);
    auto runs = run_scenario(sc, one);
    REQUIRE(runs.size() >= 2);
    // Seeds 1 and 2 of the same case and policy differ.
    CHECK(runs[0].seed != runs[1].seed);
    CHECK(runs[0].result.metrics != runs[1].result.metrics);
}

TEST_CASE("On an E5-2650 a request/reply pair on one CPU is clearly fastest under schedutil, and performance shrinks the gap",
          "[validation][hardware]") {
    auto m = run_all("reqreply-e5-governors.json");
    auto u = [&](const std::string& c) { return usec(m.at(c + "/plain")); };
    const double same_s = u("same-cpu/schedutil"), smt_s = u("smt-sibling/schedutil"), other_s = u("other-core/schedutil");
    const double same_p = u("same-cpu/performance"), smt_p = u("smt-sibling/performance"), other_p = u("other-core/performance");
    CHECK(same_s < 0.8 * smt_s);
    CHECK(same_s < 0.8 * other_s);
    // The split pair's gap to the stacked one under performance is less than half of that under schedutil.
    CHECK((other_p / same_p - 1.0) < 0.5 * (other_s / same_s - 1.0));
    CHECK((smt_p / same_p - 1.0) < 0.5 * (smt_s / same_s - 1.0));
    // The mechanism: split, each CPU is half busy and schedutil lets the package clock fall.
    CHECK(m.at("other-core/schedutil/plain").integer(Metric::freq_khz_busy) <
          m.at("same-cpu/schedutil/plain").integer(Metric::freq_khz_busy));
    // performance holds P0, and the ping-pong keeps one core in C0 at a time: the one-core turbo
    // bin (3.4 GHz), but for the odd instants a second core is in C0 too (the two-core bin; another
    // CPU leaves idle about every 8 ms), a few kHz of the busy average (3,399,998-3,399,999).
    CHECK(m.at("other-core/performance/plain").integer(Metric::freq_khz_busy) <= 3400000);
    CHECK(m.at("other-core/performance/plain").integer(Metric::freq_khz_busy) > 3399900);
}

TEST_CASE("fuse-bg-xeon: background requests on the next core beat fio's own core (table B direction), "
          "and only the own-core queue makes fio migrate", "[validation][fuse]") {
    auto m = run_all("fuse-bg-xeon.json");
    const RunMetrics& b1 = m.at("uring-per-core-qd4/plain");
    const RunMetrics& b2 = m.at("uring-per-core-qd4/fuse_bg_next_cpu");
    // Published 650 / 272 = 2.39; with the FUSE costs and C1's exit fitted to A1-A3, A7, A8 and B2
    // (calibrations/xeon-2s-16c32t-fuse.json) B2 is 629 and B1 about 300 (2.08; `wakesim validate`
    // checks the ratio over eight seeds).
    CHECK(b2.get(Metric::mib_per_sec) > 1.15 * b1.get(Metric::mib_per_sec));
    CHECK(b1.integer(Metric::migrations) > 5000);
    CHECK(b2.integer(Metric::migrations) == 0);
    // Same-core queue: the ring thread's wakes of fio are mostly local (they share a CPU).
    CHECK(b1.integer(Metric::wakeups_local) > b1.integer(Metric::wakeups_remote));
    CHECK(b2.integer(Metric::wakeups_local) == 0);
}

TEST_CASE("fuse-kvm-amd: fio through passthrough_hp on the AMD-host VM: the four measured ratios within 25%"
          " and the migrations and switches per read of io-uring",
          "[validation][fuse]") {
    // scripts/measure/fuse-fio.sh on the 2026-12-01 boot (docs/validation.md), IOPS means of 5 runs:
    // a 26,252, b 34,110, c-a 33,824, c-b 52,307, d 76,642. kvm-2vcpu is fitted to this host's pipe
    // and hackbench figures and the pipe's busy vCPUs, with its IPI costs measured; the FUSE costs
    // are the fio workload's defaults; fio's job and passthrough_hp are in autogroups of their own,
    // as on the VM. b/a has measured 0.84-1.30 by boot and set (docs/validation.md).
    std::map<std::string, RunMetrics> m = run_all("fuse-kvm-amd.json");
    std::map<std::string, double> iops;
    for (const auto& [name, r] : m) iops[name] = r.get(Metric::ops_per_sec);
    const double a = iops.at("a-dev/plain"), b = iops.at("b-dev-pin0/plain"), ca = iops.at("c-a-uring/plain"),
                 cb = iops.at("c-b-uring-pin0/plain"), d = iops.at("d-uring-qd4/plain");
    CHECK(b / a == Approx(34110.0 / 26252).epsilon(0.25));
    CHECK(ca / a == Approx(33824.0 / 26252).epsilon(0.25));
    CHECK(cb / ca == Approx(52307.0 / 33824).epsilon(0.25));
    // Measured 2.27; with libfuse's reply batching the model gives 2.50 (+10%).
    CHECK(d / ca == Approx(76642.0 / 33824).epsilon(0.25));
    // perf stat -a: c-a 0.92 migrations and 2.9 switches per read, d 0.20 and 0.79.
    auto per_read = [&](const std::string& run, Metric k) { return m.at(run).get(k) / m.at(run).get(Metric::ops); };
    CHECK(per_read("c-a-uring/plain", Metric::migrations) == Approx(0.92).epsilon(0.25));
    CHECK(per_read("c-a-uring/plain", Metric::context_switches) == Approx(2.9).epsilon(0.25));
    CHECK(per_read("d-uring-qd4/plain", Metric::migrations) == Approx(0.20).epsilon(0.3));
    CHECK(per_read("d-uring-qd4/plain", Metric::context_switches) == Approx(0.79).epsilon(0.25));
    // fio's moves cost CPU time, not only latency: the kernel's fio and ring threads spend 7-12 us
    // more CPU a read in c-a than in c-b (scripts/measure/fuse-vcpu-busy.sh, 2026-12-05; 9.3 on
    // 2026-12-06; 12.1 and 12.4 in scripts/measure/fuse-engine-cpu.sh's runs the same day): the
    // sender's IPI, the wakee's cold vCPU (ipi_send, ipi_wakee) and fio's working set refilled
    // (the Xeon's 79 KiB: 8.5 us of fio's CPU a move, measured 5.2-7.9).
    auto cpu_per_read = [&](const std::string& run) {
        return (m.at(run).get(Metric::cpu_time_requester_ns) + m.at(run).get(Metric::cpu_time_server_ns)) / 1000.0 /
               m.at(run).get(Metric::ops);
    };
    INFO("CPU a read: c-a " << cpu_per_read("c-a-uring/plain") << " us, c-b " << cpu_per_read("c-b-uring-pin0/plain") << " us");
    CHECK(cpu_per_read("c-a-uring/plain") - cpu_per_read("c-b-uring-pin0/plain") > 7.0);
}

TEST_CASE("fuse-kvm-amd: fio's io_uring engine over fuse-over-io-uring gains from iodepth as measured on the VM, "
          "and moves once a round",
          "[validation][fuse]") {
    // scripts/measure/fuse-bg-depth.sh on 2026-12-04 (docs/validation.md), IOPS means of 6 runs:
    // iodepth 1 36,615, 2 57,849, 4 84,327, 8 109,813. The published Xeon's mainline rows do not
    // rise this way (195, 272, 466 MiB/s); the VM's do, and so does the model.
    std::map<std::string, RunMetrics> m = run_all("fuse-kvm-amd.json");
    auto iops = [&](const std::string& c) { return m.at(c + "/plain").get(Metric::ops_per_sec); };
    const double qd1 = iops("e-uring-qd1"), qd2 = iops("f-uring-qd2"), qd4 = iops("d-uring-qd4"), qd8 = iops("g-uring-qd8");
    CHECK(qd2 / qd1 == Approx(57849.0 / 36615).epsilon(0.15));
    CHECK(qd4 / qd1 == Approx(84327.0 / 36615).epsilon(0.15));
    CHECK(qd8 / qd4 == Approx(109813.0 / 84327).epsilon(0.15));
    // fio sleeps once a round of iodepth reads, and its wake finds its ring thread serving the
    // round on fio's vCPU, so it moves: measured 0.70-0.84, 0.33-0.38, 0.15-0.17 and 0.077-0.081
    // moves a read (fio's own nr_migrations), a move in 60-84% of the rounds (0.73-0.80,
    // 0.35-0.36, 0.16 and 0.08 on 2026-12-06); the model moves in 90-100% of the rounds, never
    // twice in one. Metric::migrations counts every task's, which here are fio's: the ring threads
    // are pinned.
    auto moves_a_round = [&](const std::string& c, int depth) {
        const RunMetrics& r = m.at(c + "/plain");
        return r.get(Metric::migrations) / r.get(Metric::ops) * depth;
    };
    for (const auto& [c, depth] : std::vector<std::pair<std::string, int>>{
             {"e-uring-qd1", 1}, {"f-uring-qd2", 2}, {"d-uring-qd4", 4}, {"g-uring-qd8", 8}}) {
        INFO(c);
        CHECK(moves_a_round(c, depth) >= 0.9);
        CHECK(moves_a_round(c, depth) <= 1.01);
    }
}

TEST_CASE("fuse-bg-series-xeon: cpu++'s gain at iodepth 1 and 8 and with 2 and 8 jobs as the patch's commit message "
          "gives it, and v3's rule equal to cpu++ at iodepth 4 and spreading at iodepth 8",
          "[validation][fuse]") {
    // The author's tree, 2026-02-21 (with table B's figures), MiB/s mainline / cpu++: iodepth 1
    // 195 / 232, iodepth 8 466 / 641, 2 jobs 366 / 472, 8 jobs 1437 / 1529. Iodepth 4 is table B,
    // which `wakesim validate` checks over eight seeds.
    std::map<std::string, double> mib;  // case/policy: mean over the seeds
    std::map<std::string, int> n;
    for (const auto& r : run_every("fuse-bg-series-xeon.json")) {
        mib[r.case_name + "/" + r.policy] += r.result.metrics.get(Metric::mib_per_sec);
        ++n[r.case_name + "/" + r.policy];
    }
    for (auto& [k, v] : mib) v /= n.at(k);
    auto gain = [&](const std::string& c) { return mib.at(c + "/fuse_bg_next_cpu") / mib.at(c + "/plain"); };
    const std::vector<std::pair<std::string, double>> published = {
        {"qd1", 232.0 / 195}, {"qd8", 641.0 / 466}, {"qd1-2jobs", 472.0 / 366}, {"qd1-8jobs", 1529.0 / 1437}};
    for (const auto& [c, g] : published) {
        INFO(c);
        CHECK(gain(c) > 1.0);  // cpu++ wins in each
        // Within 20% since C1's exit on the Xeon is fitted to A7 and A8 (2026-12-06, docs/validation.md):
        // iodepth 1 1.18 against 1.19, iodepth 8 1.51 against 1.38, 2 jobs 1.20 against 1.29, 8 jobs
        // 1.20 against 1.06. Before, with C1's nominal 1 us exit, iodepth 1 gave 1.45 and 8 jobs
        // 1.45: a wake of an idle core was too cheap for the rows where cpu++ wakes one on every read.
        CHECK(gain(c) == Approx(g).epsilon(0.2));
    }
    // Mainline at iodepth 8: 420 MiB/s against 466 (-9.8%; 434, -6.9%, with C1's nominal exit).
    CHECK(mib.at("qd8/plain") == Approx(466).epsilon(0.12));
    CHECK(mib.at("qd8/fuse_bg_next_cpu") == Approx(641).epsilon(0.05));
    // v3's rule: the next queue while it holds at most three requests, so for one job cpu++
    // itself up to iodepth 4; at iodepth 8 it walks on and a second ring thread serves (v3:
    // 966-1014 MiB/s).
    CHECK(mib.at("qd4/fuse_bg_retries") == Approx(mib.at("qd4/fuse_bg_next_cpu")).epsilon(0.01));
    CHECK(mib.at("qd8/fuse_bg_retries") > 1.4 * mib.at("qd8/fuse_bg_next_cpu"));
}

TEST_CASE("bonnie-e5: bonnie++ bound to one CPU beats it unbound in each sequential phase, through the clock",
          "[validation][fuse]") {
    // Published (Schubert, 2023-03-24): creates 6229 vs 2064 files/s (3.0x), stats 11289 vs 2923
    // (3.9x), deletes 12785 vs 4556 (2.8x). The model's gaps are smaller (docs/validation.md);
    // checked here are the direction and the mechanism: bound, bonnie++ and ring thread 0 take
    // turns on CPU 0 at its turbo clock; unbound, reply wakes find the ring thread's CPU busy,
    // bonnie++ moves several times a file and the CPUs it runs on run slower than the bound one.
    std::map<std::string, RunMetrics> m = run_all("bonnie-e5.json");
    const std::vector<std::pair<std::string, std::string>> phases = {
        {"D1-bound-cpu0", "D2-unbound"}, {"stat-bound-cpu0", "stat-unbound"}, {"delete-bound-cpu0", "delete-unbound"}};
    for (const auto& [b, u] : phases) {
        INFO(b << " against " << u);
        const RunMetrics& bound = m.at(b + "/plain");
        const RunMetrics& unbound = m.at(u + "/plain");
        // 1.43x, 1.34x and 1.43x since a task a wakeup moves keeps its utilisation (2026-12-05,
        // forty-eighth session); 1.6x in each phase before, when the model let it decay away.
        CHECK(bound.get(Metric::ops_per_sec) > 1.25 * unbound.get(Metric::ops_per_sec));
        CHECK(bound.get(Metric::freq_khz_busy) > 3.0e6);
        // 0.69-0.71x: bonnie++ carries its utilisation from CPU to CPU (remove_entity_load_avg()
        // and attach_entity_load_avg() age nothing in between), so schedutil holds the clock of
        // the CPUs it moves between at about 2.3 GHz (under 0.65x before, 2026-12-05).
        CHECK(unbound.get(Metric::freq_khz_busy) < 0.75 * bound.get(Metric::freq_khz_busy));
        CHECK(unbound.get(Metric::freq_khz_busy) > 0.5 * bound.get(Metric::freq_khz_busy));
        CHECK(bound.integer(Metric::migrations) == 0);
        // bonnie++ moves at its requests' reply wakes: 6 moves a create, 2 a stat, 3 a delete
        CHECK(unbound.get(Metric::migrations) / unbound.get(Metric::ops) >= 1.9);
    }
}

TEST_CASE("fuse-bg-kvm: on the 2-vCPU guest serving background requests on the next CPU halves fio's reads, as "
          "the kernel does there",
          "[validation][fuse]") {
    // scripts/measure/fuse-bg-next.sh on 2026-12-02 (docs/validation.md), two sets of 3 runs: a
    // request served on the next CPU 20.5-23.9 us a read unpinned (fio never moves) and 22.0-24.2
    // pinned; on the same CPU 4.8-5.9 pinned. Each request crosses the vCPUs twice, and here a
    // crossing costs 20-25 us of CPU, so cpu++ loses, where on bare metal (table B) it wins.
    std::map<std::string, RunMetrics> m = run_all("fuse-bg-kvm.json");
    const double next_un = usec(m.at("unpinned/fuse_bg_next_cpu")), next_pin = usec(m.at("pinned-cpu0/fuse_bg_next_cpu"));
    const double same_pin = usec(m.at("pinned-cpu0/plain"));
    CHECK(next_un == Approx(22.2).epsilon(0.15));
    CHECK(next_pin == Approx(23.3).epsilon(0.15));
    CHECK(next_pin > 2.5 * same_pin);  // measured 3.7-5.0x
    // fio stays on its CPU: the ring thread's vCPU has no room for it (sched_vcpu_pack). Since fio
    // reaps one completion at a time (fio's iodepth_batch_complete_max 1), the model's room check
    // sits at its 70% edge late in the run, and one seed packs fio onto the ring thread's vCPU
    // 24 times in 15,000 measured reads (at ticks, as fio's start utilisation decays); the
    // kernel's ring-thread vCPU, busier with the crossings' VM exits, never had room.
    CHECK(m.at("unpinned/fuse_bg_next_cpu").integer(Metric::migrations) <= 30);
    CHECK(m.at("unpinned/fuse_bg_next_cpu").integer(Metric::select_vcpu_pack) <= 30);
}

TEST_CASE("autogroups-kvm: sessions share the VM's CPUs as the kernel's autogroups measured", "[validation][groups]") {
    // scripts/measure/autogroup-shares.sh 3 10 on the development VM (Linux 6.18, autogroups on):
    // the lone loop 49.9-50.0% of CPU 0 against a session of four; a session with a loop on each
    // CPU 33.2-33.3% of each against one session per CPU.
    Scenario sc = load_scenario(std::string(WAKESIM_SOURCE_DIR) + "/scenarios/autogroups-kvm.json");
    RunOptions opt;
    opt.check_invariants = true;
    std::map<std::string, double> share;
    for (const auto& r : run_scenario(sc, opt)) {
        const double req = r.result.metrics.get(Metric::cpu_time_requester_ns),
                     srv = r.result.metrics.get(Metric::cpu_time_server_ns);
        share[r.case_name] = req / (req + srv);
    }
    CHECK(share.at("lone-autogroups") == Approx(0.4995).margin(0.01));
    CHECK(share.at("lone-no-groups") == Approx(0.2).margin(0.01));  // one queue of five: a fifth each
    CHECK(share.at("split") == Approx(0.6675).margin(0.01));
}

TEST_CASE("autogroups-kvm: a periodic task in a session of its own waits far less next to a session of busy loops",
          "[validation][groups]") {
    // scripts/measure/autogroup-latency.sh 3 5 (Intel-host boot): in the loops' session 3,521-3,533
    // wakeups in 5 s with a mean latency of 268-272 us; in its own 4,254-4,300 and 20-33 us. The
    // test asks for 3x and more periods. In its own session the kernel preempts a loop at 3,558 of
    // 3,583 wakeups (a 5 s run under a heavier bpftrace program, 2026-12-02), among them all 167 whose group entity was still queued
    // delayed: requeue_delayed_entity() measures the group's lag against the loops' entity as last
    // updated, and the wakeup check's update_curr() then leaves the loops' entity ineligible. The
    // other 25 waited 3.6 ms on average: the loop whose slice is protected (RUN_TO_PARITY) runs
    // on to the next tick. The model used to keep a reschedule request raised during an earlier
    // pick, which ended such a wait at the loop's next 1 ms step; __schedule() clears it after
    // the pick (clear_tsk_need_resched()), as the model now does.
    Scenario sc = load_scenario(std::string(WAKESIM_SOURCE_DIR) + "/scenarios/autogroups-kvm.json");
    RunOptions opt;
    opt.check_invariants = true;
    std::map<std::string, RunMetrics> m;
    for (auto& r : run_scenario(sc, opt)) m[r.case_name] = r.result.metrics;
    const RunMetrics &own = m.at("latency-own-session"), &same = m.at("latency-same-session");
    CHECK(same.get(Metric::wake_latency_ns_mean) > 3 * own.get(Metric::wake_latency_ns_mean));
    CHECK(own.get(Metric::ops) > same.get(Metric::ops) * 1.05);
    CHECK(same.get(Metric::ops) == Approx(3527).epsilon(0.2));
    CHECK(own.get(Metric::ops) == Approx(4277).epsilon(0.2));
    // Most wakeups run at once; about one in a hundred waits for the loops' protected slice to
    // end at a tick (the kernel: 0.35-0.68% waiting 1 ms or more, mean 20-33 us).
    CHECK(own.get(Metric::wake_latency_ns_p90) < 100 * kNsPerUs);
    CHECK(own.get(Metric::wake_latency_ns_mean) > 10 * kNsPerUs);
    CHECK(own.get(Metric::wake_latency_ns_mean) < 66 * kNsPerUs);
}
