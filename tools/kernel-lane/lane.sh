#!/usr/bin/env bash
# The kernel test lane: boots Debian's kernel in QEMU with the host's / shared read-only
# and runs one command inside (as root, in the repository folder), where AF_BLUETOOTH,
# /dev/vhci and the kernel's L2CAP exist.
#
#   tools/kernel-lane/lane.sh [--job-dir DIR] [--timeout SECONDS] [--] COMMAND [ARG...]
#   tools/kernel-lane/lane.sh --tests      # the KernelLane suite's guest cases
#
# The job folder (default: a fresh one under /tmp) is shared read-write at the same path:
# the guest writes booted, exit-code, and whatever the command writes there; the
# command's output is streamed to this script's stdout over a virtio console, the
# guest kernel's log goes to DIR/kernel.log.
#
# Exit codes: the command's own code when the guest ran it (0 = passed); 2 = usage;
# 124 = the guest started but did not finish in time; 125 = no guest could start on this
# machine (no QEMU, no kernel package, or the kernel never reached its init).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
readonly EXIT_USAGE=2 EXIT_TIMED_OUT=124 EXIT_NO_GUEST=125

job_dir=""
timeout=900
tests=false
while [ $# -gt 0 ]; do
    case "$1" in
        --job-dir) job_dir="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --tests) tests=true; shift ;;
        --) shift; break ;;
        -*) echo "lane: unknown option $1" >&2; exit $EXIT_USAGE ;;
        *) break ;;
    esac
done
if $tests; then
    bundle="${BAREBLE_TEST_BUNDLE:-$repo/.build/debug/BareBLEPackageTests.xctest}"
    if [ ! -x "$bundle" ]; then
        echo "lane: no test bundle at $bundle: run \`swift build --build-tests\` first" >&2
        exit $EXIT_USAGE
    fi
    set -- "$bundle" --testing-library swift-testing --filter KernelLane
fi
if [ $# -eq 0 ]; then
    echo "usage: $0 [--job-dir DIR] [--timeout SECONDS] [--tests | [--] COMMAND [ARG...]]" >&2
    exit $EXIT_USAGE
fi
if [ -z "$job_dir" ]; then job_dir="$(mktemp -d /tmp/bareble-kernel-lane.XXXXXX)"; fi
mkdir -p "$job_dir"
job_dir="$(cd "$job_dir" && pwd)"
rm -f "$job_dir/booted" "$job_dir/exit-code"

started=$(date +%s.%N)
if ! kernel_dir="$("$here/prepare.sh" | tail -n1)" || [ ! -f "$kernel_dir/vmlinux" ]; then
    echo "lane: NO GUEST CAN START: preparing QEMU and the kernel failed (see above)" >&2
    exit $EXIT_NO_GUEST
fi

# What the guest's init sources: where to run what, and the host's environment for it
# (PATH and HOME find the same Python with Bumble; BAREBLE_* settings pass through).
{
    printf 'export LANE_JOB_DIR=%q LANE_CWD=%q\n' "$job_dir" "$repo"
    printf 'export LANE_COMMAND=%q\n' "$(printf '%q ' "$@")"
    printf 'export PATH=%q HOME=%q LANG=C.UTF-8 BAREBLE_KERNEL_GUEST=1 BAREBLE_KERNEL_JOB=%q\n' "$PATH" "$HOME" "$job_dir"
    env | grep -E '^BAREBLE_(PYTHON|RADIO_SCRIPT|KERNEL_CASES)=' | sed 's/^/export /' || true
} > "$job_dir/job.env"

# KVM only where it can really boot a stock kernel (these machines' paravirtual KVM cannot:
# "failed to set MSR 0x10a"); TCG otherwise, or when a KVM guest does not boot in time.
accelerators=(tcg)
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then accelerators=(kvm tcg); fi

boot() {  # boot ACCELERATOR: runs QEMU in the background, sets qemu_pid
    local accel_args
    if [ "$1" = kvm ]; then accel_args=(-accel kvm -cpu host); else accel_args=(-accel tcg,thread=multi -cpu max); fi
    qemu-system-x86_64 "${accel_args[@]}" -smp 2 -m "${BAREBLE_GUEST_MEMORY:-1024}" \
        -machine pc -nodefaults -display none -no-reboot \
        -kernel "$kernel_dir/vmlinux" -initrd "$kernel_dir/initramfs.cpio.gz" \
        -append "console=ttyS0 panic=-1 quiet loglevel=4" \
        -serial "file:$job_dir/kernel.log" \
        -device virtio-serial-pci -chardev stdio,id=out,signal=off -device virtconsole,chardev=out \
        -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
        -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
        -fsdev local,id=job,path="$job_dir",security_model=none \
        -device virtio-9p-pci,fsdev=job,mount_tag=job \
        < /dev/null &
    qemu_pid=$!
}

wait_for() {  # wait_for FILE SECONDS: 0 when FILE appeared, 1 when QEMU ended, 2 on timeout
    local deadline=$(( $(date +%s) + $2 ))
    while [ ! -e "$1" ]; do
        kill -0 "$qemu_pid" 2>/dev/null || { [ -e "$1" ] && return 0; return 1; }
        [ "$(date +%s)" -ge "$deadline" ] && return 2
        sleep 0.2
    done
    return 0
}

# SIGTERM, then SIGKILL after 5 s: QEMU inherits its signal mask from whoever started this
# script, and a Swift test runner's threads block SIGTERM, so a TERM alone may never land.
stop_qemu() {
    kill "$qemu_pid" 2>/dev/null
    for _ in $(seq 25); do kill -0 "$qemu_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$qemu_pid" 2>/dev/null
    wait "$qemu_pid" 2>/dev/null
}
trap 'stop_qemu; exit 130' INT TERM

booted=false
for accel in "${accelerators[@]}"; do
    boot "$accel"
    # A guest reaches its init in seconds (TCG ~4 s idle), but on a machine busy with the
    # rest of the test run TCG has taken 60 s. Only a guest that has another accelerator to
    # fall back to gets a short bound; the last one has the job's whole time.
    boot_wait=$(( timeout - ($(date +%s) - ${started%.*}) ))
    [ "$accel" != "${accelerators[-1]}" ] && boot_wait=60
    wait_for "$job_dir/booted" "$(( boot_wait > 1 ? boot_wait : 1 ))"
    case $? in
        0) booted=true; break ;;
        *) stop_qemu; echo "lane: the $accel guest did not reach its init" >&2 ;;
    esac
done
if ! $booted; then
    echo "lane: NO GUEST CAN START on this machine (kernel log: $job_dir/kernel.log)" >&2
    tail -n 20 "$job_dir/kernel.log" >&2 2>/dev/null
    exit $EXIT_NO_GUEST
fi
echo "lane: guest ($accel) at its init after $(awk -v s="$started" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}') s" >&2

remaining=$(( timeout - ($(date +%s) - ${started%.*}) ))
wait_for "$job_dir/exit-code" "$(( remaining > 1 ? remaining : 1 ))"
case $? in
    2) stop_qemu
       echo "lane: TIMED OUT after ${timeout} s; the guest was still running the job (kernel log: $job_dir/kernel.log)" >&2
       exit $EXIT_TIMED_OUT ;;
    1) echo "lane: the guest stopped without an exit code (kernel log: $job_dir/kernel.log)" >&2
       tail -n 20 "$job_dir/kernel.log" >&2 2>/dev/null
       exit 1 ;;
esac
wait "$qemu_pid" 2>/dev/null
code="$(cat "$job_dir/exit-code")"
echo "lane: job exit code $code, wall time $(awk -v s="$started" -v n="$(date +%s.%N)" 'BEGIN {printf "%.1f", n - s}') s" >&2
exit "$code"
