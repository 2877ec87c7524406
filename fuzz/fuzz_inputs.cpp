// libFuzzer target (docs/robustness.md): one input is a JSON document, read as wakesim reads a
// scenario (when it is an object with a "workload") or a topology (otherwise), then, when the
// reader accepts it, a bounded run of its first case, policy and seed with the invariant checks
// on. An input error (wakesim's exit 2) is an answer; anything else -- an internal error (exit 3),
// an uncaught exception, a crash, a sanitizer report, a run over its memory budget -- is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>

#include "experiment/estimate.h"
#include "experiment/runner.h"
#include "experiment/scenario.h"
#include "input/input_error.h"
#include "input/json_input.h"
#include "topology/sched_domains.h"
#include "topology/topology.h"

#ifndef WAKESIM_SOURCE_DIR
#define WAKESIM_SOURCE_DIR "."
#endif

namespace {

using namespace wakesim;

constexpr uint64_t kFuzzMemoryBudget = uint64_t{256} << 20;  // per input, estimated before running
constexpr Time kFuzzSimTime = 2'000'000;                      // 2 ms of simulated time at most
constexpr uint64_t kFuzzMaxOps = 20'000;

[[noreturn]] void finding(const char* what, const char* detail) {
    std::fprintf(stderr, "wakesim fuzz: %s: %s\n", what, detail);
    std::abort();
}

void run_bounded(const Scenario& sc) {
    if (sc.cases.empty() || sc.policies.empty() || sc.seeds.empty()) return;
    const CaseSpec& c = sc.cases.front();
    check_memory_budget(sc, c, 1, kFuzzMemoryBudget);  // an InputError beyond it, as `run` gives
    RunSpec spec = make_run_spec(sc, c, sc.policies.front(), sc.seeds.front());
    spec.max_time = spec.max_time > 0 ? std::min(spec.max_time, kFuzzSimTime) : kFuzzSimTime;
    spec.warmup_time = std::min(spec.warmup_time, spec.max_time / 2);
    spec.warmup_ops = std::min<uint64_t>(spec.warmup_ops, kFuzzMaxOps);
    spec.stop_ops = spec.stop_ops ? std::min<uint64_t>(spec.stop_ops, 2 * kFuzzMaxOps) : 0;
    spec.check_invariants = true;
    run_case(sc, c, sc.policies.front(), spec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Scenarios name machines by preset: read them from the source tree.
    ::setenv("WAKESIM_MACHINES", WAKESIM_SOURCE_DIR "/machines", 0);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (size_t{1} << 20)) return -1;  // the file reader caps at 64 MiB; keep inputs small
    const std::string text(reinterpret_cast<const char*>(data), size);
    // The file sits in the source tree's scenarios/ so that relative machine paths resolve.
    const std::string file = WAKESIM_SOURCE_DIR "/scenarios/fuzz-input.json";
    try {
        const nlohmann::json doc = parse_json_text(text, file);
        if (doc.is_object() && doc.contains("workload")) {
            run_bounded(parse_scenario(doc, file));
        } else {
            const Topology t = topology_from_json(JsonNode(doc, file));
            (void)SchedDomains::build(t);
        }
    } catch (const InputError&) {
        // exit 2: the answer to bad input
    } catch (const std::logic_error& e) {
        finding("internal error (exit 3)", e.what());
    } catch (const std::bad_alloc& e) {
        finding("out of memory within the budget", e.what());
    } catch (const std::runtime_error&) {
        // exit 2 as well: `wakesim` reports these on one line (a program looping at one instant)
    }
    return 0;
}
