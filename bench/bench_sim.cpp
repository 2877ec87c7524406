// Speed benchmarks (Google Benchmark). Run: ./build/bench/wakesim_bench --benchmark_filter=Pipe
// Round trips/s and events/s are reported as counters; docs/performance.md records results.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "experiment/simulation.h"

using namespace wakesim;

namespace {

Scenario pipe_scenario(const nlohmann::json& machine, const std::string& policy, int64_t loops) {
    nlohmann::json doc = {{"name", "bench-pipe"},
                          {"machine", machine},
                          {"workload", {{"kind", "pipe"}, {"loops", loops}}},
                          {"policies", {policy}}};
    return parse_scenario(doc, "bench");
}

void run_pipe(benchmark::State& state, const nlohmann::json& machine, const std::string& policy) {
    const int64_t loops = state.range(0);
    Scenario sc = pipe_scenario(machine, policy, loops);
    uint64_t events = 0;
    for (auto _ : state) {
        RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
        events += r.events;
        benchmark::DoNotOptimize(r.metrics);
    }
    state.SetItemsProcessed(state.iterations() * loops);
    state.counters["round_trips_per_s"] = benchmark::Counter(static_cast<double>(state.iterations() * loops), benchmark::Counter::kIsRate);
    state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

void BM_PipeAltraPlain(benchmark::State& s) { run_pipe(s, "altra-80", "plain"); }
void BM_PipeAltraReciprocal(benchmark::State& s) { run_pipe(s, "altra-80", "reciprocal_sync"); }
void BM_PipeEpycPlain(benchmark::State& s) { run_pipe(s, "epyc-zen4-2s", "plain"); }
// The same pair on 8 CPUs with epyc-zen4-2s's costs (one CCX: 4 cores x 2 threads), so the
// per-round-trip cost on 8 and 384 CPUs can be compared (issue: cost must not grow with the machine).
void BM_PipeEpyc8Plain(benchmark::State& s) {
    const nlohmann::json machine = {
        {"topology",
         {{"name", "epyc-8"}, {"description", "one CCX: 4 cores x 2 threads"}, {"packages", 1},
          {"cores_per_cluster", 4}, {"threads_per_core", 2}, {"numbering", "siblings_split"}}},
        {"profile", {{"base", "epyc-zen4-2s"}}}};
    run_pipe(s, machine, "plain");
}

void BM_MessagingEpyc(benchmark::State& state) {
    nlohmann::json doc = {{"name", "bench-msg"},
                          {"machine", "epyc-zen4-2s"},
                          {"workload", {{"kind", "messaging"}, {"groups", state.range(0)}, {"loops", 20}}},
                          {"policies", {"plain"}}};
    Scenario sc = parse_scenario(doc, "bench");
    uint64_t events = 0;
    for (auto _ : state) {
        RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
        events += r.events;
    }
    state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

// fio psync through FUSE: `numjobs` jobs reading for 10 simulated seconds on xeon-2s-16c32t,
// /dev/fuse with two workers or fuse-over-io-uring with a queue per CPU.
void run_fio(benchmark::State& state, const std::string& transport) {
    nlohmann::json doc = {{"name", "bench-fio"},
                          {"machine", "xeon-2s-16c32t"},
                          {"workload",
                           {{"kind", "fio"}, {"numjobs", state.range(0)}, {"number_ios", 100000000}, {"transport", transport}}},
                          {"policies", {"plain"}},
                          {"run", {{"duration", "10s"}}}};
    Scenario sc = parse_scenario(doc, "bench");
    uint64_t events = 0, ops = 0;
    for (auto _ : state) {
        RunResult r = run_simulation(make_run_spec(sc, sc.cases[0], sc.policies[0], 1));
        events += r.events;
        ops += static_cast<uint64_t>(r.metrics.get(Metric::ops));
    }
    state.counters["requests_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
    state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

void BM_FioDevXeon(benchmark::State& s) { run_fio(s, "dev"); }
void BM_FioUringXeon(benchmark::State& s) { run_fio(s, "io_uring"); }

// The engine alone: Jones's hold model (pop the minimum, push now + increment).
class Sink final : public EventTarget {
public:
    explicit Sink(Engine& e) : e_(e) {}
    void on_event(const Event& ev) override { e_.schedule(e_.now() + 1 + (ev.seq * 2654435761u) % 1000, t_, 0); }
    uint16_t t_ = 0;

private:
    Engine& e_;
};

void BM_EngineHold(benchmark::State& state) {
    Engine e;
    Sink s(e);
    s.t_ = e.add_target(&s);
    for (int64_t i = 0; i < state.range(0); ++i) e.schedule(i, s.t_, 0);
    Time horizon = 0;
    for (auto _ : state) {
        horizon += 10000;
        e.run_until(horizon);
    }
    state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(e.events_processed()), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_PipeAltraPlain)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PipeAltraReciprocal)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PipeEpycPlain)->Arg(200000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PipeEpyc8Plain)->Arg(200000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_MessagingEpyc)->Arg(10)->Arg(50)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_FioDevXeon)->Arg(8)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_FioUringXeon)->Arg(8)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EngineHold)->Arg(16)->Arg(1024)->Arg(65536);

BENCHMARK_MAIN();
