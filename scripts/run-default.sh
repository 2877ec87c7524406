#!/usr/bin/env bash
# Installs dependencies, builds wakesim and runs the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target wakesim
./build/wakesim run scenarios/pipe-altra.json
