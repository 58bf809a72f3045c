#!/usr/bin/env bash
# Runs test suites under a sanitizer and fails on any report.
#
#   tools/sanitize.sh thread|address [SUITE-FILTER]
#
# Default filter: every unit suite (the integration suites start Python peers and QEMU,
# which the sanitizers do not instrument and which only slow the run). Pass '.' for the
# whole suite. Each sanitizer builds into its own folder (.build-tsan, .build-asan), so a
# normal build is left alone.
#
# The stack's locks are BluetoothCore.Lock (a pthread mutex) because ThreadSanitizer does
# not see Synchronization.Mutex's futex on Linux and reports false races behind it.
set -uo pipefail
cd "$(dirname "$0")/.."

kind="${1:-}"
case "$kind" in
    thread) scratch=.build-tsan ;;
    address) scratch=.build-asan ;;
    *) echo "usage: tools/sanitize.sh thread|address [SUITE-FILTER]" >&2; exit 2 ;;
esac
filter="${2:-BluetoothCoreTests|BluetoothCryptoTests|HCITests|HCITransportTests|L2CAPTests|ATTTests|GATTTests|SMPTests|BondingTests|BeaconTests}"

mkdir -p .ci/out
log=".ci/out/sanitize-$kind.log"
# halt_on_error keeps the first report's stack readable; the log keeps every line.
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0 second_deadlock_stack=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
start=$(date +%s)
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" 2>&1 | tail -n 3
swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" --filter "$filter" > "$log" 2>&1
status=$?
end=$(date +%s)
reports=$(grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer)' "$log")
summary=$(grep -E 'Test run with [0-9]+ tests' "$log" | tail -n 1)
echo "sanitize: $kind, filter '$filter': ${summary:-no test summary}; $reports sanitizer reports; $((end - start)) s (log: $log)"
if [ "$reports" != 0 ]; then
    grep -A 12 -E '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer)' "$log" | head -n 80
    exit 1
fi
exit "$status"
