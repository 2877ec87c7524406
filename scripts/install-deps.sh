#!/usr/bin/env bash
# Installs wakesim's build dependencies from Debian 12 packages. Idempotent:
# it only calls apt-get when a package is missing.
set -euo pipefail
pkgs=(build-essential cmake libboost-graph-dev libboost-dev nlohmann-json3-dev
      libcli11-dev catch2 libeigen3-dev libbenchmark-dev
      parallel     # GNU parallel: tests/test_sweep.cpp runs docs/sweeps.md's sharded sweep with it
      gnuplot-nox  # `wakesim plot` draws its figures with gnuplot (no X11 needed)
      python3)     # scripts/measure/*.py, compared with a kernel trace; tests/CMakeLists.txt runs one
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
