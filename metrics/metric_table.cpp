#include "metrics/metric_table.h"

#include <cmath>
#include <functional>
#include <iterator>

#include "metrics/run_metrics.h"
#include "topology/topology.h"

namespace wakesim {

namespace {

using K = MetricKind;
using T = MetricType;
using B = Better;
using G = MetricGroup;

constexpr MetricShown kRunOnly{};
constexpr MetricShown kSummary{true, {}};
constexpr MetricShown column(int col, const char* header, int precision, double divisor = 1) {
    return {false, {col, header, precision, divisor}};
}
constexpr MetricShown summary_column(int col, const char* header, int precision, double divisor = 1) {
    return {true, {col, header, precision, divisor}};
}

// Sources of values.
template <uint64_t Counters::*F>
MetricValue count(const RunInputs& in) {
    return static_cast<int64_t>(in.m.c.*F);
}
template <uint64_t RequestTiming::*F>
MetricValue fuse_count(const RunInputs& in) {
    return static_cast<int64_t>(in.m.fuse.*F);
}
template <SelectOutcome O>
MetricValue select_count(const RunInputs& in) {
    return static_cast<int64_t>(in.m.c.outcomes[static_cast<size_t>(O)]);
}
template <MigrationCause C>
MetricValue migrations_by(const RunInputs& in) {
    return static_cast<int64_t>(in.m.c.migrations_by_cause[static_cast<size_t>(C)]);
}
template <CpuDistance D>
MetricValue migrations_at(const RunInputs& in) {
    return static_cast<int64_t>(in.m.c.migrations_by_distance[static_cast<size_t>(D)]);
}
double per_sec(const RunInputs& in, double amount) {
    return in.window > 0 ? amount * 1e9 / static_cast<double>(in.window) : 0.0;
}
// A role's CPU time per node or capacity class as fractions of its total (0 when it never ran).
Breakdown role_share(const std::vector<Time>& parts, Time total, const std::function<std::string(size_t)>& key) {
    Breakdown b;
    for (size_t i = 0; i < parts.size(); ++i)
        b.emplace_back(key(i), total > 0 ? static_cast<double>(parts[i]) / static_cast<double>(total) : 0.0);
    return b;
}
Breakdown role_by_node(const RunInputs& in, size_t role) {
    const RoleTime& r = in.m.roles[role];
    return role_share(r.by_node, r.total, [](size_t i) { return "node" + std::to_string(i); });
}
Breakdown role_by_capacity(const RunInputs& in, size_t role) {
    const RoleTime& r = in.m.roles[role];
    return role_share(r.by_class, r.total, [&](size_t i) { return std::to_string(in.m.capacities[i]); });
}

double util(const RunInputs& in, size_t cpu) {
    return in.window > 0 ? static_cast<double>(in.busy_ns[cpu]) / static_cast<double>(in.window) : 0.0;
}

// clang-format off
constexpr MetricDef kRows[] = {
    // ---- throughput
    {Metric::ops, "ops", "count", K::counter, T::integer, B::higher, G::throughput, kRunOnly,
     &count<&Counters::ops>,
     "operations finished in the window. An op is what the workload's benchmark counts: a round trip for `pipe` "
     "(perf bench sched pipe's loop), a message received for `messaging`, an `{\"op\": …}` step for `program`, "
     "an I/O completed for `fio` (its reply in), a file of the phase for `bonnie` (created, stat'ed or deleted) "
     "and a file written for `extract`"},
    {Metric::sim_time_ns, "sim_time_ns", "ns", K::duration, T::integer, B::lower, G::throughput, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return int64_t{in.window}; },
     "length of the window in simulated time. It ends at the last op, or, when the window counted no ops (a "
     "`program` without `op` steps, as rt-app descriptions are), when the last foreground task exited; at the time "
     "limit when the run did not finish (`completed` false). The table shows it as `elapsed ms` when a row has no ops"},
    {Metric::usec_per_op, "usec_per_op", "µs", K::ratio, T::real, B::lower, G::throughput,
     summary_column(1, "usec/op", 3),
     [](const RunInputs& in) -> MetricValue {
         const uint64_t ops = in.m.c.ops;
         return ops ? static_cast<double>(in.window) / 1000.0 / static_cast<double>(ops) : 0.0;
     },
     "`sim_time_ns / ops / 1000` (perf bench sched pipe's \"usecs/op\")"},
    {Metric::ops_per_sec, "ops_per_sec", "1/s", K::rate, T::real, B::higher, G::throughput,
     summary_column(2, "ops/s", 0),
     [](const RunInputs& in) -> MetricValue { return per_sec(in, static_cast<double>(in.m.c.ops)); },
     "`ops / window`"},
    {Metric::mib_per_sec, "mib_per_sec", "MiB/s", K::rate, T::real, B::higher, G::throughput, kSummary,
     [](const RunInputs& in) -> MetricValue { return per_sec(in, static_cast<double>(in.m.c.bytes)) / 1048576.0; },
     "bytes carried by the ops (8 per pipe round trip, `data_size` per message, `bs` per fio I/O, the file's size "
     "per extracted file, 0 for bonnie's files) / window"},

    // ---- wakeups
    {Metric::wakeups, "wakeups", "count", K::counter, T::integer, B::neither, G::wakeups, kRunOnly,
     &count<&Counters::wakeups>, "all wakeups"},
    {Metric::wakeups_local, "wakeups.local", "count", K::counter, T::integer, B::neither, G::wakeups,
     column(5, "wake local/remote", 0),
     &count<&Counters::wakeups_local>, "enqueued on the waker's CPU (`cpu == this_cpu`)"},
    {Metric::wakeups_remote, "wakeups.remote", "count", K::counter, T::integer, B::neither, G::wakeups,
     column(5, nullptr, 0),
     &count<&Counters::wakeups_remote>, "enqueued on another CPU (directly or through its wake list)"},
    {Metric::wakeups_ipi, "wakeups.ipi", "count", K::counter, T::integer, B::neither, G::wakeups, kRunOnly,
     &count<&Counters::wakeups_ipi>,
     "remote wakeups that went through the target's wake list with an IPI (`ttwu_queue_cond()` true: idle "
     "target, or another LLC)"},
    {Metric::wakeups_poll, "wakeups.poll", "count", K::counter, T::integer, B::neither, G::wakeups, kRunOnly,
     &count<&Counters::wakeups_poll>, "the same to an idle CPU that polls its flags, in a polling state or an MWAIT state (set_nr_if_polling(): no IPI)"},
    {Metric::wakeups_no_placement, "wakeups.no_placement", "count", K::counter, T::integer, B::neither, G::wakeups,
     kRunOnly, &count<&Counters::wakeups_runnable>,
     "wakeups that skipped `select_task_rq`: the task was still queued (DELAY_DEQUEUE) or had not yet reached "
     "`schedule()` (`ttwu_runnable`)"},
    {Metric::wakeups_affine, "wakeups.affine", "count", K::counter, T::integer, B::neither, G::wakeups, kRunOnly,
     &count<&Counters::wakeups_affine>, "`wake_affine()` chose the waker's CPU"},
    {Metric::wakeups_wide, "wakeups.wide", "count", K::counter, T::integer, B::neither, G::wakeups, kRunOnly,
     &count<&Counters::wake_wide>, "`wake_wide()` said the pattern is wide (want_affine false)"},
    {Metric::sis_probes, "sis_probes", "count", K::counter, T::integer, B::lower, G::wakeups, kRunOnly,
     &count<&Counters::sis_probes>, "CPUs examined by `select_idle_cpu` / `select_idle_core`"},
    {Metric::ipis, "ipis", "count", K::counter, T::integer, B::lower, G::wakeups, kRunOnly,
     &count<&Counters::ipis>, "IPIs sent: wake-list kicks, wakeups of idle CPUs, and reschedule IPIs to CPUs running a task"},

    // ---- where select_task_rq decided
    {Metric::select_pinned, "select.pinned", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::pinned>,
     "one CPU allowed or migration disabled: the fair class was not consulted"},
    {Metric::select_policy_early, "select.policy_early", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::policy_early>, "a policy rule chose the CPU before WF_CURRENT_CPU"},
    {Metric::select_current_cpu, "select.current_cpu", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::current_cpu>,
     "WF_CURRENT_CPU with the waker's CPU allowed: that CPU"},
    {Metric::select_policy_affine, "select.policy_affine", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::policy_affine>, "a policy rule chose the CPU in the affine branch"},
    {Metric::select_sis_target, "select.sis_target", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::sis_target>,
     "`select_idle_sibling()` step 1: the target (`wake_affine()`'s choice) is idle"},
    {Metric::select_sis_prev, "select.sis_prev", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::sis_prev>, "step 2: prev is idle and shares the LLC (and cluster) with the target"},
    {Metric::select_sis_kthread, "select.sis_kthread", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::sis_kthread>,
     "step 3: the waker is a per-CPU kthread alone on prev: stack the wakee there"},
    {Metric::select_sis_recent, "select.sis_recent", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::sis_recent>, "step 4: `recent_used_cpu` is idle and cache-affine"},
    {Metric::select_sis_capacity, "select.sis_capacity", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::sis_capacity>,
     "step 5 (asymmetric capacity): `select_idle_capacity()` decided"},
    {Metric::select_sis_smt, "select.sis_smt", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::sis_smt>, "step 7: no idle core, an idle SMT sibling of prev"},
    {Metric::select_sis_scan, "select.sis_scan", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::sis_scan>, "step 8: `select_idle_cpu()` found an idle CPU in the LLC"},
    {Metric::select_sis_fallback, "select.sis_fallback", "count", K::counter, T::integer, B::neither, G::select,
     kRunOnly, &select_count<SelectOutcome::sis_fallback>,
     "steps 6 and 9: nothing idle found (or no LLC domain): prev in another cluster, `recent_used_cpu` or the "
     "target"},
    {Metric::select_slow_path, "select.slow_path", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::slow_path>, "`sched_balance_find_dst_cpu()` (no affine domain, or fork/exec)"},
    {Metric::select_eas, "select.eas", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::eas>,
     "`find_energy_efficient_cpu()` decided (EAS on and the root domain not overutilized)"},
    {Metric::select_vcpu_pack, "select.vcpu_pack", "count", K::counter, T::integer, B::neither, G::select, kRunOnly,
     &select_count<SelectOutcome::vcpu_pack>,
     "the guest kernel's out-of-tree `sched_vcpu_pack` step packed the wakee onto a busy vCPU with room (machine "
     "parameter `vcpu_pack`)"},

    // ---- migrations
    {Metric::migrations, "migrations", "count", K::counter, T::integer, B::lower, G::migrations,
     column(4, "migrations", 0),
     [](const RunInputs& in) -> MetricValue { return static_cast<int64_t>(in.m.c.migrations()); },
     "all migrations"},
    {Metric::migrations_wakeup, "migrations.wakeup", "count", K::counter, T::integer, B::lower, G::migrations,
     kRunOnly, &migrations_by<MigrationCause::wakeup>, "by wakeup placement (`try_to_wake_up`)"},
    {Metric::migrations_balance, "migrations.balance", "count", K::counter, T::integer, B::neither, G::migrations,
     kRunOnly, &migrations_by<MigrationCause::balance>, "by periodic or NOHZ-idle load balancing"},
    {Metric::migrations_newidle, "migrations.newidle", "count", K::counter, T::integer, B::neither, G::migrations,
     kRunOnly, &migrations_by<MigrationCause::newidle>, "by newly-idle balancing"},
    {Metric::migrations_active, "migrations.active", "count", K::counter, T::integer, B::neither, G::migrations,
     kRunOnly, &migrations_by<MigrationCause::active>, "by active balancing (`active_load_balance_cpu_stop()`: a misfit task moved off a CPU too small for it, or a running task pushed after `cache_nice_tries + 2` failed passes, `imbalanced_active_balance()`)"},
    {Metric::migrations_smt, "migrations.smt", "count", K::counter, T::integer, B::neither, G::migrations, kRunOnly,
     &migrations_at<CpuDistance::smt>, "between SMT siblings"},
    {Metric::migrations_cluster, "migrations.cluster", "count", K::counter, T::integer, B::neither, G::migrations,
     kRunOnly, &migrations_at<CpuDistance::cluster>, "within a cluster (not SMT siblings)"},
    {Metric::migrations_llc, "migrations.llc", "count", K::counter, T::integer, B::neither, G::migrations,
     kRunOnly, &migrations_at<CpuDistance::llc>, "within an LLC (another cluster)"},
    {Metric::migrations_cross_llc, "migrations.cross_llc", "count", K::counter, T::integer, B::lower, G::migrations,
     kRunOnly, &migrations_at<CpuDistance::cross_llc>, "to another LLC in the same NUMA node"},
    {Metric::migrations_cross_numa, "migrations.cross_numa", "count", K::counter, T::integer, B::lower,
     G::migrations, kRunOnly, &migrations_at<CpuDistance::cross_numa>, "to another NUMA node"},
    {Metric::migrations_per_wakeup, "migrations_per_wakeup", "ratio", K::ratio, T::real, B::lower, G::migrations,
     summary_column(3, "migr/wake", 3),
     [](const RunInputs& in) -> MetricValue {
         const Counters& c = in.m.c;
         const auto by_wakeup = c.migrations_by_cause[static_cast<size_t>(MigrationCause::wakeup)];
         return c.wakeups ? static_cast<double>(by_wakeup) / static_cast<double>(c.wakeups) : 0.0;
     },
     "`migrations.wakeup / wakeups`"},
    {Metric::migrations_requester, "migrations.requester", "count", K::counter, T::integer, B::lower, G::migrations,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return static_cast<int64_t>(in.m.roles[0].migrations); },
     "migrations of requesters: the application's tasks (fio jobs, bonnie++, a program's `role: requester` tasks)"},
    {Metric::migrations_server, "migrations.server", "count", K::counter, T::integer, B::lower, G::migrations,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return static_cast<int64_t>(in.m.roles[1].migrations); },
     "migrations of servers: FUSE daemon threads (/dev/fuse workers, ring threads) and `role: server` tasks"},

    // ---- wake latency
    {Metric::wake_latency_ns_p50, "wake_latency_ns.p50", "ns", K::percentile, T::integer, B::lower, G::latency,
     summary_column(6, "wake p50/p99 (us)", 1, 1000.0),
     [](const RunInputs& in) -> MetricValue { return in.m.wake_latency.percentile(0.50); },
     "median wake latency: from the `try_to_wake_up()` call to the wakee starting to run (after the IPI, idle "
     "exit and context switch); from a log-linear histogram (16 buckets per power of two, so within 6%)"},
    {Metric::wake_latency_ns_p90, "wake_latency_ns.p90", "ns", K::percentile, T::integer, B::lower, G::latency,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return in.m.wake_latency.percentile(0.90); },
     "90th percentile (the same histogram)"},
    {Metric::wake_latency_ns_p99, "wake_latency_ns.p99", "ns", K::percentile, T::integer, B::lower, G::latency,
     summary_column(6, nullptr, 1, 1000.0),
     [](const RunInputs& in) -> MetricValue { return in.m.wake_latency.percentile(0.99); },
     "99th percentile (the same histogram)"},
    {Metric::wake_latency_ns_mean, "wake_latency_ns.mean", "ns", K::mean, T::real, B::lower, G::latency, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.wake_latency.mean(); }, "mean (exact)"},
    {Metric::wake_latency_ns_max, "wake_latency_ns.max", "ns", K::maximum, T::integer, B::lower, G::latency,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return in.m.wake_latency.max(); }, "longest (exact)"},

    // ---- FUSE requests
    {Metric::fuse_requests, "fuse.requests", "count", K::counter, T::integer, B::neither, G::fuse, kRunOnly,
     &fuse_count<&RequestTiming::requests>,
     "FUSE requests whose result the requester took in the window (a synchronous reply, or an asynchronous "
     "completion reaped); FORGETs and RELEASEs have none"},
    {Metric::fuse_queue_changes, "fuse.queue_changes", "count", K::counter, T::integer, B::lower, G::fuse, kRunOnly,
     &fuse_count<&RequestTiming::queue_changes>,
     "io-uring: requests sent to another queue than their requester's previous request (it moved to another "
     "CPU, or a policy chose another queue)"},
    {Metric::fuse_latency_ns_p50, "fuse.latency_ns.p50", "ns", K::percentile, T::integer, B::lower, G::fuse,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return in.m.fuse.total.percentile(0.50); },
     "median request latency: from queueing the request to the requester running with its result (the wake "
     "latency histogram's buckets)"},
    {Metric::fuse_latency_ns_p99, "fuse.latency_ns.p99", "ns", K::percentile, T::integer, B::lower, G::fuse,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return in.m.fuse.total.percentile(0.99); },
     "99th percentile of the same"},
    {Metric::fuse_latency_ns_mean, "fuse.latency_ns.mean", "ns", K::mean, T::real, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.total.mean(); },
     "mean request latency (exact): queueing + server + reply"},
    {Metric::fuse_latency_ns_max, "fuse.latency_ns.max", "ns", K::maximum, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.total.max(); },
     "longest request latency (exact): a mean above the p99 comes from the last 1%, and this says how far it reaches"},
    {Metric::fuse_queue_ns_p50, "fuse.queue_ns.p50", "ns", K::percentile, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.queue.percentile(0.50); },
     "median queueing (the wake latency histogram's buckets): from the send to a server thread taking the request"},
    {Metric::fuse_queue_ns_p99, "fuse.queue_ns.p99", "ns", K::percentile, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.queue.percentile(0.99); },
     "99th percentile of the queueing: a request that waited for a busy or sleeping server thread"},
    {Metric::fuse_queue_ns_mean, "fuse.queue_ns.mean", "ns", K::mean, T::real, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.queue.mean(); },
     "mean queueing: from the send to a server thread taking the request (fuse_dev_do_read's copy or the ring "
     "thread's task work), its wakeup included"},
    {Metric::fuse_server_ns_p50, "fuse.server_ns.p50", "ns", K::percentile, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.server.percentile(0.50); },
     "median server time (the same buckets): from taking the request to fuse_request_end"},
    {Metric::fuse_server_ns_p99, "fuse.server_ns.p99", "ns", K::percentile, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.server.percentile(0.99); },
     "99th percentile of the server time: a server thread preempted, or sharing its CPU, while it served"},
    {Metric::fuse_server_ns_mean, "fuse.server_ns.mean", "ns", K::mean, T::real, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.server.mean(); },
     "mean server time: from taking the request to fuse_request_end (copies, the handler, the reply's write "
     "or commit)"},
    {Metric::fuse_reply_ns_p50, "fuse.reply_ns.p50", "ns", K::percentile, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.reply.percentile(0.50); },
     "median reply time (the same buckets): from fuse_request_end to the requester running with the result"},
    {Metric::fuse_reply_ns_mean, "fuse.reply_ns.mean", "ns", K::mean, T::real, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.reply.mean(); },
     "mean reply time: from fuse_request_end to the requester running with the result (its wakeup, or the "
     "reap of an asynchronous completion)"},
    {Metric::fuse_reply_ns_p99, "fuse.reply_ns.p99", "ns", K::percentile, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.reply.percentile(0.99); },
     "99th percentile of the reply time"},
    {Metric::fuse_reply_ns_max, "fuse.reply_ns.max", "ns", K::maximum, T::integer, B::lower, G::fuse, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.fuse.reply.max(); },
     "longest reply time (exact): a requester left queued behind other work, or an asynchronous completion "
     "reaped late"},
    {Metric::fuse_ring_batch_mean, "fuse.ring_batch.mean", "requests", K::mean, T::real, B::neither, G::fuse,
     kRunOnly,
     [](const RunInputs& in) -> MetricValue {
         const auto& f = in.m.fuse;
         return f.ring_rounds == 0 ? 0.0 : static_cast<double>(f.ring_requests) / static_cast<double>(f.ring_rounds);
     },
     "io-uring: requests a ring thread handled per round, from finding its CQEs to its last reply of them; "
     "above 1 only with `uring_reply_batch`, where a round's replies leave together (0: no ring thread ran)"},
    {Metric::fuse_sent, "fuse.sent", "count", K::counter, T::integer, B::neither, G::fuse, kRunOnly,
     &fuse_count<&RequestTiming::sent>,
     "requests queued for the server in the window, of every kind (synchronous, background, RELEASE, FORGET); "
     "fuse.sent - fuse.completed - FORGETs is the change of the requests in flight"},
    {Metric::fuse_completed, "fuse.completed", "count", K::counter, T::integer, B::neither, G::fuse, kRunOnly,
     &fuse_count<&RequestTiming::completed>,
     "requests ended in the window (`fuse_request_end`: the reply written or committed); FORGETs have no end"},
    {Metric::fuse_blocked_waits, "fuse.blocked_waits", "count", K::counter, T::integer, B::lower, G::fuse, kRunOnly,
     &fuse_count<&RequestTiming::blocked_waits>,
     "submitters of background requests that slept in `fuse_get_req` on `blocked_waitq`: `max_background` "
     "requests were in flight"},
    {Metric::fuse_congested, "fuse.congested", "count", K::counter, T::integer, B::neither, G::fuse, kRunOnly,
     &fuse_count<&RequestTiming::congested>,
     "background requests sent with `congestion_threshold` or more in flight (the kernel's congestion state, "
     "which only readahead and writeback consult; counted, no effect in the model)"},
    {Metric::fuse_worker_spawns, "fuse.worker_spawns", "count", K::counter, T::integer, B::neither, G::fuse,
     kRunOnly, &fuse_count<&RequestTiming::worker_spawns>,
     "/dev/fuse: worker threads libfuse's loop started (the last idle worker took a request, under "
     "`max_threads`)"},
    {Metric::fuse_worker_exits, "fuse.worker_exits", "count", K::counter, T::integer, B::neither, G::fuse,
     kRunOnly, &fuse_count<&RequestTiming::worker_exits>,
     "/dev/fuse: worker threads that exited, idle beyond `max_idle_threads`"},

    // ---- switches and balancing
    {Metric::context_switches, "context_switches", "count", K::counter, T::integer, B::neither, G::scheduling,
     kRunOnly, &count<&Counters::context_switches>,
     "`__schedule()` calls that changed `rq->curr`, including switches to and from idle (as "
     "`perf stat -e context-switches` counts)"},
    {Metric::preemptions, "preemptions", "count", K::counter, T::integer, B::neither, G::scheduling, kRunOnly,
     &count<&Counters::preemptions>,
     "the running task was switched out while still runnable (wakeup preemption or slice end)"},
    {Metric::balance_runs, "balance_runs", "count", K::counter, T::integer, B::neither, G::scheduling, kRunOnly,
     &count<&Counters::balance_runs>, "periodic and NOHZ-idle load-balance passes that ran"},
    {Metric::newidle_runs, "newidle_runs", "count", K::counter, T::integer, B::neither, G::scheduling, kRunOnly,
     &count<&Counters::newidle_runs>, "newly-idle load-balance passes that ran"},

    // ---- utilisation
    {Metric::cpu_util, "cpu_util", "fraction", K::per_cpu, T::per_cpu_real, B::neither, G::utilisation, kRunOnly,
     [](const RunInputs& in) -> MetricValue {
         std::vector<double> u;
         for (size_t cpu = 0; cpu < in.busy_ns.size(); ++cpu) u.push_back(util(in, cpu));
         return u;
     },
     "per CPU: fraction of the window the CPU was not idle (running tasks, switching)"},
    {Metric::cpu_util_sum, "cpu_util.sum", "CPUs", K::sum, T::real, B::neither, G::utilisation, kSummary,
     [](const RunInputs& in) -> MetricValue {
         double sum = 0;
         for (size_t cpu = 0; cpu < in.busy_ns.size(); ++cpu) sum += util(in, cpu);
         return sum;
     },
     "sum of `cpu_util` (unrounded): CPUs' worth of busy time"},
    {Metric::cpus_busy, "cpus_busy", "CPUs", K::counter, T::integer, B::neither, G::utilisation,
     column(7, "busy CPUs", 0),
     [](const RunInputs& in) -> MetricValue {
         int64_t n = 0;
         for (size_t cpu = 0; cpu < in.busy_ns.size(); ++cpu) n += util(in, cpu) > 0.05 ? 1 : 0;
         return n;
     },
     "CPUs with `cpu_util` above 5%"},

    // ---- where the application and its server ran
    {Metric::cpu_time_requester_ns, "cpu_time.requester_ns", "ns", K::duration, T::integer, B::neither, G::roles,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return in.m.roles[0].total; },
     "CPU time of the requesters in the window (from their switch-in, so a context switch counts for the task "
     "switched to)"},
    {Metric::cpu_time_server_ns, "cpu_time.server_ns", "ns", K::duration, T::integer, B::neither, G::roles, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.m.roles[1].total; }, "CPU time of the servers in the window"},
    {Metric::requester_time_by_node, "requester_time.by_node", "fraction", K::breakdown, T::breakdown, B::neither,
     G::roles, kRunOnly, [](const RunInputs& in) -> MetricValue { return role_by_node(in, 0); },
     "object, NUMA node (`node0`, ...) → fraction of the requesters' CPU time spent there"},
    {Metric::server_time_by_node, "server_time.by_node", "fraction", K::breakdown, T::breakdown, B::neither,
     G::roles, kRunOnly, [](const RunInputs& in) -> MetricValue { return role_by_node(in, 1); },
     "object, NUMA node → fraction of the servers' CPU time spent there"},
    {Metric::requester_time_by_capacity, "requester_time.by_capacity", "fraction", K::breakdown, T::breakdown,
     B::neither, G::roles, kRunOnly, [](const RunInputs& in) -> MetricValue { return role_by_capacity(in, 0); },
     "object, CPU capacity (`1024` for the big cores, ...; one key on a symmetric machine) → fraction of the "
     "requesters' CPU time on CPUs of that capacity"},
    {Metric::server_time_by_capacity, "server_time.by_capacity", "fraction", K::breakdown, T::breakdown, B::neither,
     G::roles, kRunOnly, [](const RunInputs& in) -> MetricValue { return role_by_capacity(in, 1); },
     "object, CPU capacity → fraction of the servers' CPU time on CPUs of that capacity"},

    // ---- frequency and idle states
    {Metric::governor, "governor", "", K::text, T::text, B::neither, G::frequency, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.hw.governor; }, "the cpufreq governor of the run"},
    {Metric::cpu_freq_khz, "cpu_freq_khz", "kHz", K::per_cpu, T::per_cpu_integer, B::neither, G::frequency,
     kRunOnly,
     [](const RunInputs& in) -> MetricValue {
         std::vector<int64_t> f;
         for (double khz : in.hw.cpu_freq_khz) f.push_back(static_cast<int64_t>(std::llround(khz)));
         return f;
     },
     "per CPU: time-weighted mean clock over the window (with `turbo`, the turbo bin while at P0)"},
    {Metric::freq_khz_mean, "freq_khz.mean", "kHz", K::mean, T::integer, B::neither, G::frequency, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return static_cast<int64_t>(std::llround(in.hw.freq_khz_mean)); },
     "mean of `cpu_freq_khz` (unrounded) over all CPUs"},
    {Metric::freq_khz_busy, "freq_khz.busy", "kHz", K::mean, T::integer, B::neither, G::frequency, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return static_cast<int64_t>(std::llround(in.hw.freq_khz_busy)); },
     "frequency weighted by busy time: the clock the work actually ran at"},
    {Metric::freq_residency, "freq_residency", "fraction", K::breakdown, T::breakdown, B::neither, G::frequency,
     kRunOnly,
     [](const RunInputs& in) -> MetricValue {
         Breakdown b;
         for (const auto& [khz, frac] : in.hw.freq_residency) b.emplace_back(std::to_string(khz), frac);
         return b;
     },
     "object, OPP (kHz) → fraction of all CPU-time at that OPP (the OPP the governor set: P0 under turbo)"},
    {Metric::idle_residency, "idle_residency", "fraction", K::breakdown, T::breakdown, B::neither, G::frequency,
     kRunOnly, [](const RunInputs& in) -> MetricValue { return Breakdown(in.hw.idle_residency); },
     "object, idle state → fraction of all CPU-time spent in it"},

    // ---- energy
    {Metric::energy_mj, "energy_mj", "mJ", K::sum, T::real, B::lower, G::energy, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return in.hw.energy_uj / 1000.0; },
     "estimate from the machine's energy model: per CPU, its busy time at each OPP × the power of the energy-model "
     "state that delivers that OPP's fraction of the top frequency, summed over CPUs. Busy only: the energy model "
     "has no idle, static or cluster power, so those are left out. 0 on a machine without an energy model"},
    {Metric::cpu_energy_mj, "cpu_energy_mj", "mJ", K::per_cpu, T::per_cpu_real, B::neither, G::energy, kRunOnly,
     [](const RunInputs& in) -> MetricValue {
         std::vector<double> e(in.busy_ns.size(), 0.0);
         for (size_t c = 0; c < e.size() && c < in.hw.cpu_energy_uj.size(); ++c) e[c] = in.hw.cpu_energy_uj[c] / 1000.0;
         return e;
     },
     "per CPU: its share of `energy_mj` (all 0 without an energy model)"},

    // ---- time lost
    {Metric::time_lost_cache_refill_ns, "time_lost.cache_refill_ns", "ns", K::duration, T::integer, B::lower,
     G::time_lost, kRunOnly, [](const RunInputs& in) -> MetricValue { return in.hw.cache_refill_ns; },
     "reference-ns of working-set and shared-data refill charged in the window"},
    {Metric::time_lost_wake_latency_ns, "time_lost.wake_latency_ns", "ns", K::duration, T::integer, B::lower,
     G::time_lost, kRunOnly,
     [](const RunInputs& in) -> MetricValue {
         const LatencyHistogram& h = in.m.wake_latency;
         return static_cast<int64_t>(std::llround(h.mean() * static_cast<double>(h.count())));
     },
     "sum of wake-to-run latencies in the window"},

    // ---- simulator
    {Metric::events, "events", "count", K::counter, T::integer, B::neither, G::simulator, kRunOnly,
     [](const RunInputs& in) -> MetricValue { return static_cast<int64_t>(in.events); },
     "simulator events processed in the whole run (warm-up included): a cost measure, not a kernel metric"},
};
// clang-format on

constexpr bool rows_in_enum_order() {
    if (std::size(kRows) != kMetricCount) return false;
    for (size_t i = 0; i < std::size(kRows); ++i)
        if (index_of(kRows[i].id) != i) return false;
    return true;
}
static_assert(rows_in_enum_order(), "kRows must hold one row per Metric, in the enum's order");

}  // namespace

std::span<const MetricDef> metric_table() {
    return kRows;
}

const MetricDef* find_metric(std::string_view name) {
    for (const auto& d : metric_table())
        if (name == d.name) return &d;
    return nullptr;
}

const char* to_string(MetricKind k) {
    switch (k) {
        case MetricKind::counter: return "counter";
        case MetricKind::duration: return "duration";
        case MetricKind::rate: return "rate";
        case MetricKind::ratio: return "ratio";
        case MetricKind::mean: return "mean";
        case MetricKind::percentile: return "percentile";
        case MetricKind::maximum: return "maximum";
        case MetricKind::sum: return "sum";
        case MetricKind::per_cpu: return "per-CPU array";
        case MetricKind::breakdown: return "breakdown";
        case MetricKind::text: return "text";
    }
    return "?";
}

const char* to_string(MetricType t) {
    switch (t) {
        case MetricType::integer: return "integer";
        case MetricType::real: return "real";
        case MetricType::text: return "text";
        case MetricType::per_cpu_integer: return "per-CPU integers";
        case MetricType::per_cpu_real: return "per-CPU reals";
        case MetricType::breakdown: return "object";
    }
    return "?";
}

const char* to_string(Better b) {
    switch (b) {
        case Better::higher: return "higher";
        case Better::lower: return "lower";
        case Better::neither: return "-";
    }
    return "?";
}

const char* group_title(MetricGroup g) {
    switch (g) {
        case MetricGroup::throughput: return "Throughput";
        case MetricGroup::wakeups: return "Wakeups";
        case MetricGroup::select: return "Where `select_task_rq` decided";
        case MetricGroup::migrations: return "Migrations";
        case MetricGroup::latency: return "Wake latency";
        case MetricGroup::fuse: return "FUSE requests";
        case MetricGroup::scheduling: return "Switches and load balancing";
        case MetricGroup::utilisation: return "Utilisation";
        case MetricGroup::roles: return "Where the application and its server ran";
        case MetricGroup::frequency: return "Frequency and idle states";
        case MetricGroup::energy: return "Energy";
        case MetricGroup::time_lost: return "Time lost";
        case MetricGroup::simulator: return "Simulator";
        case MetricGroup::kCount: break;
    }
    return "?";
}

bool is_scalar(MetricType t) { return t == MetricType::integer || t == MetricType::real || t == MetricType::text; }

}  // namespace wakesim
