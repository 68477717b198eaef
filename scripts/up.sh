#!/usr/bin/env bash
# Installs what is missing, builds Steward and runs `steward demo`: the embedded cluster, the
# SQLite store and the engine in one process. It starts projects alpha, beta and gamma, shows
# their phases live, then their URLs. Ctrl-C stops it.
# Arguments go to `steward demo` (e.g. --projects 5, or --data-dir build/up/state to keep and
# adopt state across runs); PROFILE=instant|realistic|hostile|FILE picks the cluster's profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "== building steward"
NINJA_ARGS="steward" scripts/build.sh build
mkdir -p build/up
args=(--kubeconfig-out build/up/kubeconfig)
if [[ -n "${PROFILE:-}" ]]; then args+=(--profile "$PROFILE"); fi
exec build/steward demo "${args[@]}" "$@"
