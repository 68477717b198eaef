#!/usr/bin/env bash
# Builds Steward and runs every test: format check, the whole suite (unit, integration,
# end-to-end, torture runs) under ASan+UBSan, the FlowFuse driver package's tests against that
# build, the fuzzers briefly, then the concurrency-heavy modules' tests under TSan.
# Usage: scripts/test.sh [--quick]   (--quick: release build and its tests only, no sanitizers)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

# Each section's header says when it began (seconds since this script started), so a CI log
# shows where the time goes.
section() { echo "== $* [at ${SECONDS}s]"; }

scripts/setup.sh

section "format check"
files=$(git ls-files '*.cc' '*.h' 2>/dev/null || find src tests bench -name '*.cc' -o -name '*.h')
clang-format --dry-run --Werror $files
section "function length (no hand-written function over 150 lines: scripts/long_functions.py)"
python3 scripts/long_functions.py --max 150
section "size budget (no source file over 800 lines, no class over 40 member functions: scripts/size_budget.py)"
python3 scripts/size_budget.py
section "one basename per concept under src/ (scripts/unique_names.py)"
python3 scripts/unique_names.py
section "deploy manifests (kubectl kustomize of every overlay: scripts/check_deploy.py)"
python3 scripts/check_deploy.py deploy
section "monitoring rules (promtool check and test rules: scripts/check_monitoring.py)"
python3 scripts/check_monitoring.py

jobs=${JOBS:-$(nproc)}
export CTEST_OUTPUT_ON_FAILURE=1

if [ "$quick" = 1 ]; then
  section "release build"
  NINJA_ARGS="-j$jobs" scripts/build.sh build
  section "tests (release)"
  (cd build && ctest -j"$jobs" --timeout 300)
  section "FlowFuse driver package (node --test against build/steward; the hostile run skipped)"
  STEWARD_BINARY="$PWD/build/steward" timeout 600 node --test \
    integrations/flowfuse-driver/test/unit.test.js integrations/flowfuse-driver/test/watch.test.js \
    integrations/flowfuse-driver/test/lifecycle.test.js
  section "dashboard (/ui in headless chromium: node --test tests/ui against build/steward)"
  STEWARD_BINARY="$PWD/build/steward" timeout 300 node --test tests/ui/
  section "API contract (docs/openapi.yaml linted, and every answer validated: node --test tests/contract)"
  STEWARD_BINARY="$PWD/build/steward" timeout 300 node --test tests/contract/
  exit 0
fi

# The whole suite (unit, integration, end-to-end, torture) runs once, in the ASan+UBSan build: a
# separate release build of the same tests would find nothing more and costs ten minutes of CI.
# That build uses clang (it compiles our heaviest files up to twice as fast as GCC) with
# libFuzzer's coverage instrumentation, so the fuzzers (fuzz/) come out of the same build. The
# benchmarks are compiled here too (not run), so they cannot rot.
section "ASan+UBSan build (clang; also the libFuzzer targets)"
CC=clang CXX=clang++ NINJA_ARGS="-j$jobs" STEWARD_SANITIZE=address,undefined \
  scripts/build.sh build-asan -DSTEWARD_FUZZ=ON
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The torture runs (docs/torture.md: the small run, Steward SIGKILLed ten times, the cluster
# process restarted) take minutes each and mostly wait on the hostile cluster, so they run beside
# the rest of the suite rather than after it.
section "torture runs (ASan+UBSan, in the background: build-asan/torture.log)"
(cd build-asan && ctest -L torture -j3 --timeout 1500 >torture.log 2>&1) &
torture_pid=$!
section "tests (ASan+UBSan)"
suite=0
(cd build-asan && ctest -LE torture -j"$jobs" --timeout 600) || suite=$?
# The FlowFuse driver package (integrations/flowfuse-driver/README.md) drives the ASan+UBSan
# steward as the platform would, while the torture runs finish.
section "FlowFuse driver package (node --test against build-asan/steward)"
driver=0
STEWARD_BINARY="$PWD/build-asan/steward" timeout 900 \
  node --test integrations/flowfuse-driver/test/*.test.js || driver=$?
section "dashboard (/ui in headless chromium: node --test tests/ui against build-asan/steward)"
ui=0
STEWARD_BINARY="$PWD/build-asan/steward" timeout 300 node --test tests/ui/ || ui=$?
section "API contract (docs/openapi.yaml linted, and every answer validated: node --test tests/contract)"
contract=0
STEWARD_BINARY="$PWD/build-asan/steward" timeout 300 node --test tests/contract/ || contract=$?
section "waiting for the torture runs"
torture=0
wait "$torture_pid" || torture=$?
cat build-asan/torture.log
if [ "$suite" != 0 ] || [ "$torture" != 0 ] || [ "$driver" != 0 ] || [ "$ui" != 0 ] ||
   [ "$contract" != 0 ]; then
  echo "tests failed (suite: $suite, torture: $torture, driver package: $driver, dashboard: $ui, API contract: $contract)"
  exit 1
fi

# Every fuzzer replays its committed corpus, then fuzzes briefly (docs/fuzzing.md) from a fixed
# seed, so that a run explores the same inputs for the same code; long runs explore.
section "fuzz (10 s per target)"
FUZZ_SEED=1 FUZZ_BUILD_DIR=build-asan JOBS="$jobs" scripts/fuzz.sh --seconds 10

# TSan: the modules whose concurrency is their job (the mutex wrappers and the scheduler in
# common, the HTTP server, the Kubernetes client's transport, watches and informers, the store
# and its listeners (PostgreSQL's feed too), the replicas' membership, the engine's work queue
# and its whole lifecycle, the API's waiters and watch streams). The embedded cluster (storage
# watchers, controllers, ingress) runs in-process under TSan inside the engine and API tests.
tsan_tests=(steward_net_test steward_kube_transport_test steward_kube_client_test
            steward_kube_informer_test steward_engine_workqueue_test steward_store_test
            steward_engine_intents_test steward_engine_reconciler_test steward_api_test
            steward_replica_test steward_common_test)
section "TSan build"
NINJA_ARGS="-j$jobs ${tsan_tests[*]}" STEWARD_SANITIZE=thread scripts/build.sh build-tsan
section "tests (TSan)"
for t in "${tsan_tests[@]}"; do
  bin=$(find build-tsan -type f -name "$t" | head -1)
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "$bin" --gtest_brief=1
done
section "all tests passed"
