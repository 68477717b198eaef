#!/usr/bin/env bash
# Configures and builds Steward. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# BUILD_DIR defaults to build/. Set STEWARD_SANITIZE=address,undefined or thread for a
# sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
args=(-G Ninja -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo})
if [ -n "${STEWARD_SANITIZE:-}" ]; then
  # Line tables only (-g1): sanitizer reports keep file:line, builds are quicker.
  args+=(-DSTEWARD_SANITIZE="$STEWARD_SANITIZE" "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
fi
cmake -S . -B "$dir" "${args[@]}" "$@" >/dev/null
ninja -C "$dir" ${NINJA_ARGS:-}
