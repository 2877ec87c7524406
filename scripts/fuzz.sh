#!/usr/bin/env bash
# Fuzzes wakesim's scenario and topology readers plus a bounded run of what they accept
# (fuzz/fuzz_inputs.cpp) with libFuzzer, AddressSanitizer and UBSan, for SECONDS (default 60).
# Needs clang (Debian: clang, which brings libFuzzer); exits 77 when it is missing.
# Usage: scripts/fuzz.sh [SECONDS]     Env: FUZZ_BUILD (build-fuzz), FUZZ_CORPUS (build-fuzz/corpus),
#        FUZZ_JOBS_NICE (19), FUZZ_WORKERS (1: one fuzzer; N: N in parallel), FUZZ_EXTRA (more libFuzzer flags).
# A crash leaves crash-* / timeout-* / oom-* files in FUZZ_BUILD/artifacts; keep each as a
# regression input in tests/fuzz_regressions/ (the test suite replays them).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build="${FUZZ_BUILD:-build-fuzz}"
corpus="${FUZZ_CORPUS:-$build/corpus}"
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (apt-get install clang); skipped" >&2
  exit 77
fi
if [ ! -f "$build/build.ninja" ] && [ ! -f "$build/Makefile" ]; then
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" "${gen[@]}" "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DWAKESIM_FUZZ=ON -DWAKESIM_BUILD_TESTS=OFF -DWAKESIM_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$build" --target wakesim_fuzz -j2
# Seed corpus: every shipped scenario, every bad input, the fuzz regressions and the machines'
# topologies (new inputs the fuzzer finds are added to $corpus, not to the seeds).
rm -rf "$build/seeds"
mkdir -p "$corpus" "$build/seeds" "$build/artifacts"
# Left out: tests/bad_inputs/zero_costs.json, whose run stands still for 10 million events before
# its error: over a minute under the sanitizers, so a timeout (the replay test runs it).
find scenarios tests/bad_inputs tests/fuzz_regressions machines -name '*.json' -size -1024k ! -name zero_costs.json 2>/dev/null |
  while read -r f; do cp "$f" "$build/seeds/$(echo "$f" | tr '/' '_')"; done
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allocator_may_return_null=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# At the lowest priority: the machine is shared. FUZZ_WORKERS=N runs N fuzzers on the one corpus
# (libFuzzer -jobs=N -workers=N; each logs to $build/fuzz-K.log), which uses every idle core.
# (-fork=N is slower here: each short job re-runs its share of the corpus before fuzzing.)
workers="${FUZZ_WORKERS:-1}"
parallel=()
if [ "$workers" -gt 1 ]; then
  root=$(pwd)
  case "$build" in /*) ;; *) build="$root/$build" ;; esac
  case "$corpus" in /*) ;; *) corpus="$root/$corpus" ;; esac
  parallel=(-jobs="$workers" -workers="$workers")
  cd "$build"
  set -- -dict="$root/fuzz/json.dict"
else
  set -- -dict=fuzz/json.dict
fi
exec nice -n "${FUZZ_JOBS_NICE:-19}" "$build/wakesim_fuzz" "$corpus" "$build/seeds" "${parallel[@]}" \
  "$@" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix="$build/artifacts/" -print_final_stats=1 ${FUZZ_EXTRA:-}
