#!/usr/bin/env bash
# Rewrites tests/golden/*.txt (and the `wakesim check` baselines tests/baselines/*.json) from the current model after a deliberate change; then
# `git diff tests/golden` shows which figures moved. Explain each move in the commit message.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build -j"$(nproc)" --target wakesim_tests >/dev/null
WAKESIM_UPDATE_GOLDENS=1 build/tests/wakesim_tests "[golden]" >/dev/null
git diff --stat -- tests/golden tests/baselines || true
