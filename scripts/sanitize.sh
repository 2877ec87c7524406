#!/usr/bin/env bash
# Builds with AddressSanitizer + UndefinedBehaviorSanitizer and runs every test (about 15 min on
# 2 cores). Not part of CI's time budget; run it before changing memory-handling code.
# Among the tests: every shipped scenario with the invariant checks on (test_golden.cpp, as
# `run --check-invariants`), and the fuzzing target's bounded runs of every scenario, bad input
# and kept crash input (fuzz_replay; docs/robustness.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-sanitize -DWAKESIM_SANITIZE=ON -DWAKESIM_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-sanitize -j"$(nproc)"
# The sanitizers slow a run about tenfold: the CLI tests' hang guard (timeout 20) scales with it.
WAKESIM_TEST_TIMEOUT=200 ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)"
