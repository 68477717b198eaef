#!/usr/bin/env bash
# Installs every build and test dependency of Steward from Debian packages.
# Idempotent and quick when everything is present (no apt-get call at all then).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost-dev libboost-system-dev libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev
  libsqlite3-dev libpq-dev
  postgresql-15  # the store tests' real PostgreSQL (/usr/lib/postgresql/15/bin; STEWARD_PG_BINDIR)
  libgtest-dev libgmock-dev libbenchmark-dev
  clang clang-format
  libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for clang (scripts/fuzz.sh)
  llvm  # llvm-symbolizer: file:line in clang's sanitizer reports
  wrk  # load generator for bench/cluster_bench (docs/benchmarks.md)
  ccache  # scripts/build.sh: objects reused across builds and clones
  python3  # scripts/long_functions.py, the function-length check in scripts/test.sh
  python3-yaml  # scripts/check_deploy.py reads the rendered deploy/ overlays
  zsh fish  # e2e_cli_conventions_test runs `steward completion zsh|fish` in the real shells
  chromium  # tests/ui: the /ui dashboard in a headless browser (playwright-core, no download)
  prometheus  # promtool: deploy/monitoring's rules (scripts/check_monitoring.py), /metrics lint
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# kubectl: any kubectl on PATH will do; otherwise Debian's kubernetes-client.
if ! command -v kubectl >/dev/null 2>&1; then
  missing+=(kubernetes-client)
fi
# node and npm: the real FlowFuse launcher and Node-RED (tests/real-launcher,
# e2e_real_launcher_test) and the FlowFuse driver package (integrations/flowfuse-driver, no npm
# dependencies); any node >= 18 on PATH will do, otherwise Debian's.
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs); fi
if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all dependencies present"
fi

# The real launcher's npm projects, pinned by their lock files: installed only when node_modules
# is missing or older than the lock file (nothing is downloaded at build or test time).
# tests/ui: playwright-core, which drives Debian's chromium (docs/dashboard.md).
# tests/contract: @redocly/cli and ajv, which check docs/openapi.yaml (docs/api.md).
# src/api/ui: uPlot, the dashboard's chart library, which the build embeds (docs/dashboard.md).
for project in tests/real-launcher/launcher tests/real-launcher/node-red tests/ui tests/contract src/api/ui; do
  dir="$(dirname "$0")/../$project"
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
    echo "setup: npm ci in $project"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error && touch node_modules)
  fi
done
