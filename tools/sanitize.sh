#!/usr/bin/env bash
# Runs test suites under a sanitizer and fails on any report.
#
#   tools/sanitize.sh thread|address [SUITE-FILTER]
#   tools/sanitize.sh thread|address --build-only
#
# Default: every unit suite, i.e. everything but the IntegrationTests target (the
# integration suites start Python peers and QEMU, which the sanitizers do not instrument
# and which only slow the run). Pass a filter ('.' for the whole suite) to choose.
# --build-only builds and stops (CI builds while the main suite runs). Each sanitizer
# builds into its own folder (.build-tsan, .build-asan), so a normal build is left alone,
# and builds only the test bundle and what it runs (not the tools or the benchmark).
#
# The stack's locks are BluetoothCore.Lock (a pthread mutex) because ThreadSanitizer does
# not see Synchronization.Mutex's futex on Linux and reports false races behind it.
set -uo pipefail
cd "$(dirname "$0")/.."

kind="${1:-}"
case "$kind" in
    thread) scratch=.build-tsan ;;
    address) scratch=.build-asan ;;
    *) echo "usage: tools/sanitize.sh thread|address [SUITE-FILTER | --build-only]" >&2; exit 2 ;;
esac
selection=(--skip '^IntegrationTests\.')
described="every unit suite"
if [ -n "${2:-}" ] && [ "$2" != --build-only ]; then
    selection=(--filter "$2")
    described="filter '$2'"
fi

mkdir -p .ci/out
log=".ci/out/sanitize-$kind.log"
# halt_on_error keeps the first report's stack readable; the log keeps every line.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
start=$(date +%s)
# The test bundle and the one executable a unit suite runs (BondStoreCrashTests').
build=0
for product in BareBLEPackageTests bond-store-writer; do
    swift build --product "$product" --sanitize="$kind" --scratch-path "$scratch" 2>&1 | tail -n 3
    build=${PIPESTATUS[0]}
    [ "$build" = 0 ] || break
done
if [ "${2:-}" = --build-only ] || [ "$build" != 0 ]; then
    echo "sanitize: $kind build exit $build, $(( $(date +%s) - start )) s"
    exit "$build"
fi
swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" "${selection[@]}" > "$log" 2>&1
status=$?
end=$(date +%s)
reports=$(grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer)' "$log")
summary=$(grep -E 'Test run with [0-9]+ tests?' "$log" | tail -n 1)
echo "sanitize: $kind, $described: ${summary:-no test summary}; $reports sanitizer reports; $((end - start)) s (log: $log)"
if [ "$reports" != 0 ]; then
    grep -A 12 -E '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer)' "$log" | head -n 80
    exit 1
fi
exit "$status"
