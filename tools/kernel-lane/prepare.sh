#!/usr/bin/env bash
# Prepares what the kernel lane boots, in a cache folder outside the repository
# ($BAREBLE_KERNEL_CACHE, default ~/.cache/bareble-kernel-lane):
#   - Debian's kernel package, downloaded (never installed: installing drags in udev,
#     initramfs-tools and systemd, 400+ MiB);
#   - vmlinux, the uncompressed kernel cut out of the bzImage (it carries a PVH note, and
#     booting it skips ~3.5 s of decompression under TCG);
#   - a busybox initramfs holding the modules the guest needs and tools/kernel-lane/init.
# Installs qemu-system-x86 and busybox-static when they are missing. Safe to run again:
# each step is skipped when its output is there. Prints the cache folder on success.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${BAREBLE_KERNEL_CACHE:-$HOME/.cache/bareble-kernel-lane}"
mkdir -p "$cache"

sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx insmod || missing+=(busybox-static)
if [ ${#missing[@]} -gt 0 ]; then
    echo "kernel-lane: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The kernel package linux-image-amd64 points at now, unless pinned with
# BAREBLE_KERNEL_PACKAGE (Debian's security updates move the pointer).
package="${BAREBLE_KERNEL_PACKAGE:-}"
kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'
}
if [ -z "$package" ]; then
    package="$(kernel_package)"
    if [ -z "$package" ]; then
        # A fresh machine may have no package lists yet.
        $sudo_cmd apt-get update -qq
        package="$(kernel_package)"
    fi
fi
if [ -z "$package" ]; then
    echo "kernel-lane: cannot tell which kernel package linux-image-amd64 depends on (apt-get update?)" >&2
    exit 4
fi
release="${package#linux-image-}"
kernel_dir="$cache/$release"
if [ ! -f "$kernel_dir/vmlinux" ] || [ ! -f "$kernel_dir/modules.list" ]; then
    work="$(mktemp -d "$cache/unpack.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    (cd "$work" && apt-get download "$package" >/dev/null 2>&1) || {
        echo "kernel-lane: apt-get download $package failed" >&2; exit 4; }
    dpkg-deb -x "$work"/*.deb "$work/root"
    mkdir -p "$kernel_dir.tmp"
    python3 "$here/extract_vmlinux.py" "$work/root/boot/vmlinuz-$release" "$kernel_dir.tmp/vmlinux"
    # Only the modules the guest loads, in the order that works (see init): the RNG and
    # cipher modes before ecdh and bluetooth, or the kernel's SMP self-test fails.
    tree="$work/root/lib/modules/$release/kernel"
    mkdir -p "$kernel_dir.tmp/modules"
    : > "$kernel_dir.tmp/modules.list"
    while read -r module; do
        [ -z "$module" ] && continue
        file="$(find "$tree" -name "$module.ko" -o -name "$module.ko.xz" | head -n1)"
        if [ -z "$file" ]; then
            # Built into this kernel: nothing to load.
            continue
        fi
        case "$file" in
            *.xz) xz -dc "$file" > "$kernel_dir.tmp/modules/$module.ko" ;;
            *) cp "$file" "$kernel_dir.tmp/modules/$module.ko" ;;
        esac
        echo "$module" >> "$kernel_dir.tmp/modules.list"
    done < "$here/modules.order"
    rm -rf "$kernel_dir"
    mv "$kernel_dir.tmp" "$kernel_dir"
fi

# The initramfs: busybox, the modules, the init script. Rebuilt when init changes.
initramfs="$kernel_dir/initramfs.cpio.gz"
if [ ! -f "$initramfs" ] || [ "$here/init" -nt "$initramfs" ] || [ "$here/modules.order" -nt "$initramfs" ]; then
    staging="$(mktemp -d "$cache/initramfs.XXXXXX")"
    mkdir -p "$staging"/{bin,sbin,proc,sys,dev,lower,upper,newroot,job,modules}
    cp /bin/busybox "$staging/bin/busybox"
    for tool in $(/bin/busybox --list); do
        [ "$tool" = busybox ] && continue
        ln -s busybox "$staging/bin/$tool"
    done
    cp "$kernel_dir"/modules/*.ko "$staging/modules/"
    cp "$kernel_dir/modules.list" "$staging/modules.list"
    cp "$here/init" "$staging/init"
    chmod +x "$staging/init"
    (cd "$staging" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$initramfs.tmp"
    mv "$initramfs.tmp" "$initramfs"
    rm -rf "$staging"
fi
echo "$kernel_dir"
