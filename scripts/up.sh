#!/usr/bin/env bash
# Installs what is missing, builds Steward and runs `steward demo`: the embedded cluster, the
# SQLite store and the engine in one process. It starts projects alpha, beta and gamma, shows
# their phases live, then their URLs. Ctrl-C stops it.
# Arguments go to `steward demo` (e.g. --projects 5, or --data-dir build/up/state to keep and
# adopt state across runs); PROFILE=instant|realistic|hostile|FILE picks the cluster's profile.
# --real-node-red (or NODE_RED=1): the projects run a real Node-RED 4 each (process pods of the
# embedded cluster, scripts/node-red/profile.sh), so their URLs open real Node-RED editors;
# PROFILE is then the built-in profile it starts from. Default: the quick virtual stand-in.
set -euo pipefail
cd "$(dirname "$0")/.."
real_node_red="${NODE_RED:-0}"
rest=()
for arg in "$@"; do
  if [[ "$arg" == "--real-node-red" ]]; then real_node_red=1; else rest+=("$arg"); fi
done
scripts/setup.sh
echo "== building steward"
NINJA_ARGS="steward" scripts/build.sh build
mkdir -p build/up
args=(--kubeconfig-out build/up/kubeconfig)
if [[ "$real_node_red" == 1 ]]; then
  case "${PROFILE:-realistic}" in
    instant|realistic|hostile) ;;
    *) echo "up.sh: --real-node-red takes PROFILE=instant|realistic|hostile" >&2; exit 2 ;;
  esac
  scripts/node-red/profile.sh "${PROFILE:-realistic}" > build/up/node-red-profile.yaml
  args+=(--profile build/up/node-red-profile.yaml)
  echo "== real Node-RED in every project (build/up/node-red-profile.yaml)"
elif [[ -n "${PROFILE:-}" ]]; then
  args+=(--profile "$PROFILE")
fi
exec build/steward demo "${args[@]}" ${rest[@]+"${rest[@]}"}
