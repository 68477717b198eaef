#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) with clang and runs them: first every
# committed corpus entry once (regression), then N seconds of fuzzing per target from a scratch
# copy of the corpus under the build directory (the repository's corpus is never written to).
# Exits non-zero when any target crashes, printing the saved input's path and its base64.
#
# Usage: scripts/fuzz.sh [--seconds N] [TARGET...]
#   N defaults to 60; TARGET is a fuzz/<TARGET>_fuzzer.cc name (default: all of them).
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (ninja -j, default nproc), FUZZ_SEED
#   (libFuzzer's -seed: the same binary then explores the same inputs; CI sets it). A
#   FUZZ_BUILD_DIR already configured with -DSTEWARD_FUZZ=ON (say CI's clang ASan+UBSan build of
#   everything) is used as it is; the fuzzers are then usually built already (ninja does nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=${2:?--seconds needs a value}; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzzer.cc; do
    n=$(basename "$f" _fuzzer.cc)
    targets+=("$n")
  done
fi
for t in "${targets[@]}"; do
  if [ ! -f "fuzz/${t}_fuzzer.cc" ]; then
    echo "fuzz: no target $t (fuzz/${t}_fuzzer.cc)" >&2
    exit 2
  fi
done

# Inputs longer than this are not generated (the seeds stay well below).
max_len_of() {
  case "$1" in
    api_request) echo 16384 ;;
    cluster_selectors) echo 2048 ;;
    cluster_patch) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

scripts/setup.sh

dir=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-$(nproc)}
if grep -qx 'STEWARD_FUZZ:BOOL=ON' "$dir/CMakeCache.txt" 2>/dev/null; then
  # An existing fuzz-enabled build (CI's clang ASan+UBSan build): reuse it as configured.
  echo "== reuse $dir (configured with STEWARD_FUZZ=ON)"
else
  echo "== configure $dir (clang, STEWARD_FUZZ=ON, fuzzers only)"
  # -O1 with line tables: what the sanitizers recommend, and the quickest to compile.
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DSTEWARD_FUZZ=ON \
    -DSTEWARD_TESTS=OFF -DSTEWARD_BENCH=OFF -DSTEWARD_E2E=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DSTEWARD_WERROR="${STEWARD_WERROR:-ON}" >/dev/null
fi
echo "== build ${targets[*]}"
ninja -C "$dir" -j"$jobs" $(printf '%s_fuzzer ' "${targets[@]}")

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

failed=()
summary=()
report_artifacts() {  # $1: artifacts dir, $2: marker file (only newer artifacts are reported)
  local found=0
  for a in "$1"/crash-* "$1"/leak-* "$1"/timeout-* "$1"/oom-*; do
    [ -f "$a" ] || continue
    [ "$a" -nt "$2" ] || continue
    found=1
    echo "fuzz: crashing input: $a"
    echo "fuzz: base64: $(base64 -w0 "$a")"
  done
  return $found
}

for t in "${targets[@]}"; do
  bin="$dir/fuzz/${t}_fuzzer"
  seeds="fuzz/corpus/$t"
  scratch="$dir/fuzz-corpus/$t"
  artifacts="$dir/fuzz-artifacts/$t"
  log="$dir/fuzz-logs/$t.log"
  mkdir -p "$scratch" "$artifacts" "$(dirname "$log")"
  marker="$artifacts/.started"
  touch "$marker"
  sleep 1  # artifacts written from now on are strictly newer than the marker

  echo "== $t: replay $(find "$seeds" -type f | wc -l) corpus entries"
  if ! "$bin" -artifact_prefix="$artifacts/" $(find "$seeds" -type f | sort) >"$log" 2>&1; then
    tail -n 40 "$log"
    report_artifacts "$artifacts" "$marker" || true
    echo "fuzz: $t FAILED on the committed corpus (log: $log)"
    failed+=("$t")
    continue
  fi

  echo "== $t: fuzz for ${seconds}s"
  cp -n "$seeds"/* "$scratch"/ 2>/dev/null || true
  set +e
  "$bin" -max_total_time="$seconds" -max_len="$(max_len_of "$t")" -timeout=25 ${FUZZ_SEED:+-seed=$FUZZ_SEED} \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$scratch" >>"$log" 2>&1
  rc=$?
  set -e
  stats=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1 |
          grep -oE 'cov: [0-9]+|ft: [0-9]+|corp: [0-9]+/[0-9a-zA-Z]+|exec/s: [0-9]+' | tr '\n' ' ' ||
          true)
  execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | tail -n 1 |
          grep -oE '[0-9]+$' || true)
  summary+=("$t: ${stats}runs: ${execs:-?}")
  if [ $rc -ne 0 ]; then
    grep -E 'ERROR|invariant violated|runtime error|SUMMARY' "$log" | head -n 20 || true
    report_artifacts "$artifacts" "$marker" || true
    echo "fuzz: $t FAILED (exit $rc; log: $log)"
    failed+=("$t")
  else
    echo "fuzz: $t ok: $stats"
  fi
done

echo "== summary (${seconds}s per target)"
for s in "${summary[@]}"; do echo "  $s"; done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  echo "fuzz: reproduce with $dir/fuzz/<target>_fuzzer <input>; see docs/fuzzing.md"
  exit 1
fi
echo "fuzz: all targets ok"
