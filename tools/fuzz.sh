#!/usr/bin/env bash
# Coverage-guided fuzzing (specs/testing.md): builds bareble-fuzz once with libFuzzer and
# AddressSanitizer, runs each target for SECONDS (default 60) on its corpus, one process at
# a time at nice 19, prints a table and exits non-zero on any finding.
#   tools/fuzz.sh [SECONDS] [TARGET...]
#   tools/fuzz.sh --build-only       builds and stops
#   FUZZ_MERGE=1 tools/fuzz.sh ...   also minimises what the runs found into the committed
#                                    corpus (tools/fuzz/corpus/TARGET/)
#   FUZZ_CONFIG=debug tools/fuzz.sh  an unoptimised build: it compiles in about half the
#                                    time and runs about a third as fast
# New inputs go to .build/fuzz-corpus/TARGET, crash inputs and logs to .build/fuzz-findings/
# (both ignored); the committed corpus only changes through FUZZ_MERGE.
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1; shift; fi
seconds=${1:-60}
[ $# -gt 0 ] && shift
findings=.build/fuzz-findings
config=${FUZZ_CONFIG:-release}
mkdir -p "$findings"
built=0
# gold fails on the sanitizer runtime's symbols (an internal error); lld links it.
binary=.build/fuzz/$config/bareble-fuzz
swift build -c "$config" --product bareble-fuzz --scratch-path .build/fuzz \
    -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld > "$findings/build.log" 2>&1 || built=$?
grep -v '^\[' "$findings/build.log" || true
[ "$built" = 0 ] && [ -x "$binary" ] || { echo "fuzz: build failed (exit $built)"; exit 1; }
[ "$build_only" = 1 ] && exit 0
if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <("$binary" --list); fi

# Leak checking is off: the Swift runtime allocates its caches once, on first use, which
# LeakSanitizer reports as leaks of the input that triggered them (and a merge child that
# "leaks" at exit is restarted by libFuzzer over and over).
export ASAN_OPTIONS=detect_leaks=0
failed=0
printf '%-20s %14s %9s %7s %7s\n' target executions findings cov ft
for target in "${targets[@]}"; do
    corpus=tools/fuzz/corpus/$target
    work=.build/fuzz-corpus/$target
    log=$findings/$target.log
    mkdir -p "$corpus" "$work"
    rm -f "$findings/$target"-*
    # A single allocation over 64 MB is a finding (no input is that large), as is a 10 s input.
    status=0
    nice -n 19 "$binary" "$target" "$work" "$corpus" -max_total_time="$seconds" \
        -malloc_limit_mb=64 -rss_limit_mb=1024 -timeout=10 -detect_leaks=0 -print_final_stats=1 \
        -artifact_prefix="$findings/$target-" </dev/null >"$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    found=$(find "$findings" -maxdepth 1 -name "$target-*" | wc -l)
    if [ "$status" != 0 ] && [ "$found" = 0 ]; then found=1; fi
    printf '%-20s %14s %9s %7s %7s\n' "$target" "${executions:-?}" "$found" \
        "$(echo "$coverage" | awk '{print $2}')" "$(echo "$coverage" | awk '{print $4}')"
    if [ "$found" != 0 ]; then
        failed=1
        grep -m1 -E 'ERROR: |Fatal error|invariant violated' "$log" | sed 's/^/    /' || true
        find "$findings" -maxdepth 1 -name "$target-*" | sed 's/^/    input: /'
    fi
    if [ "${FUZZ_MERGE:-0}" = 1 ]; then
        merged=$(mktemp -d)
        nice -n 19 "$binary" "$target" -set_cover_merge=1 -use_counters=0 "$merged" "$corpus" "$work" </dev/null >"$findings/$target.merge.log" 2>&1
        rm -rf "$corpus" && mv "$merged" "$corpus" && chmod 755 "$corpus"
    fi
done
exit $failed
