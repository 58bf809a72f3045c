#!/usr/bin/env bash
# Installs what BareBLE needs beyond the Swift toolchain on a Debian machine:
#   - libbluetooth-dev: the kernel's Bluetooth socket ABI headers (build time only);
#   - tshark: decodes the btsnoop captures the tests write;
#   - a Python venv in .venv with Bumble 0.0.236: the virtual radio and its peers;
#   - the kernel lane: qemu-system-x86, busybox-static and Debian's kernel package
#     (downloaded and unpacked into ~/.cache/bareble-kernel-lane, never installed).
# Safe to run again; skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

missing=()
[ -f /usr/include/bluetooth/hci.h ] || missing+=(libbluetooth-dev)
command -v tshark >/dev/null || missing+=(tshark)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! .venv/bin/python3 -c 'import bumble' 2>/dev/null; then
    echo "setup: creating .venv with bumble==0.0.236"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check bumble==0.0.236
fi
if ! cache="$(tools/kernel-lane/prepare.sh)"; then
    echo "setup: the kernel lane could not be prepared (see above); its tests will fail under CI"
else
    echo "setup: kernel lane ready in $cache"
fi
echo "setup: ready"
