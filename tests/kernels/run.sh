#!/bin/bash
# tests/kernels/run.sh STATIC-STEPBOX: the kernel-level suite (ktests.sh) on
# real Debian kernels under QEMU (software emulation, no KVM needed), and on
# the host kernel directly (KERNELS=host or guests runs one part). Kernels
# come from Debian's archive with `apt-get download` and are cached. Prints
# ok/not ok/skip lines, tagged with the kernel, for tests/run.sh to count.
set -u
here=$(cd "$(dirname "$0")" && pwd)
sb=$(realpath "${1:?usage: run.sh STATIC-STEPBOX}")
cache=${STEPBOX_KERNEL_CACHE:-/var/cache/stepbox-kernels}
part=${KERNELS:-all} # host, guests (QEMU) or all

total_ok=0 total_fail=0
report() { # NAME: tag the suite's lines with the kernel, and sum them up
	local name=$1 lines ok fail
	lines=$(cat)
	ok=$(echo "$lines" | grep -c '^ok - ')
	fail=$(echo "$lines" | grep -c '^not ok - ')
	total_ok=$((total_ok + ok))
	total_fail=$((total_fail + fail))
	echo "# [$name] $(echo "$lines" | sed -n 's/^abi /Landlock ABI /p'): $ok passed, $fail failed"
	echo "$lines" | grep -v '^abi ' | sed "s/^\(ok\|not ok\|skip\) - /\1 - [$name] /"
}
# a static probe for what busybox cannot do (int $0x80, UNIX sockets)
pdir=$(mktemp -d)
chmod 755 "$pdir"
trap 'rm -rf "$pdir"' EXIT
probe=$pdir/kprobe
cc -static -O2 -o "$probe" "$here/probe.c" 2>/dev/null || probe=
host=$(uname -r)
if [ "$part" != guests ]; then
	report "host $host" < <(PROBE=$probe STEPBOX=$sb sh "$here/ktests.sh" 2>&1)
	# older kernels played on the host too: ABI 1 has no refer, ABI 3 no TCP rules
	for cap in 1 3; do
		report "host $host, ABI capped to $cap" < <(PROBE=$probe STEPBOX_LANDLOCK_ABI=$cap STEPBOX=$sb sh "$here/ktests.sh" 2>&1)
	done
fi
if [ "$part" = host ]; then
	echo "# host kernel: $total_ok passed, $total_fail failed"
	exit 0
fi

if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ] || ! command -v cpio >/dev/null; then
	echo "skip - kernel matrix under QEMU: qemu-system-x86, busybox-static or cpio not installed (scripts/deps.sh --test)"
	exit 0
fi
for bin in "$sb" /bin/busybox; do
	if ! file -L "$bin" | grep -q "statically linked"; then
		echo "skip - kernel matrix: $bin is not statically linked (make static; busybox-static)"
		exit 0
	fi
done
mkdir -p "$cache"
newest() { apt-cache search --names-only "$1" 2>/dev/null | awk '{print $1}' | sort -V | tail -1; }
k61=$(newest '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$')
k612=$(newest '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64$')

vmlinuz() { # PACKAGE: extract (cached) and print the kernel image's path
	local pkg=$1 dir="$cache/$1"
	if [ ! -d "$dir" ]; then
		(cd "$cache" && apt-get download -q "$pkg" >/dev/null 2>&1) || return 1
		dpkg-deb -x "$cache/${pkg}"_*.deb "$dir" && rm -f "$cache/${pkg}"_*.deb
	fi
	ls "$dir"/boot/vmlinuz-* 2>/dev/null | head -1
}

# one initramfs for every kernel: busybox, the static stepbox, the suite
root=$(mktemp -d)
trap 'rm -rf "$root" "$pdir"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,etc,ktests,root,lib}
cp /bin/busybox "$root/bin/"
for app in $(/bin/busybox --list); do
	[ -e "$root/bin/$app" ] || ln -s busybox "$root/bin/$app"
done
cp "$sb" "$root/usr/bin/stepbox"
[ -n "$probe" ] && cp "$probe" "$root/usr/bin/kprobe"
cp "$here/ktests.sh" "$here/init" "$root/ktests/"
cp "$here/init" "$root/init"
chmod 755 "$root/init" "$root/ktests/init"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"
echo "nobody:x:65534:65534:nobody:/tmp:/bin/sh" >>"$root/etc/passwd"
echo "nogroup:x:65534:" >>"$root/etc/group"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$root.cpio.gz"

boot() { # NAME PACKAGE APPEND
	local name=$1 pkg=$2 append=$3 kernel
	if [ -z "$pkg" ] || ! kernel=$(vmlinuz "$pkg") || [ -z "$kernel" ]; then
		echo "skip - [$name] kernel: ${pkg:-no package} cannot be downloaded"
		return
	fi
	local log
	log=$(timeout 240 qemu-system-x86_64 -kernel "$kernel" -initrd "$root.cpio.gz" -m 512 \
		-append "console=ttyS0 quiet panic=-1 no_timer_check $append" -nographic -no-reboot -accel tcg 2>&1)
	report "$name" < <(
		echo "$log" | tr -d '\r' | sed -n 's/^KTEST \(.*\)$/\1/p'
		if ! echo "$log" | grep -q "KTEST-END"; then
			echo "not ok - the guest ran the suite to the end"
			echo "$log" | tail -15 | sed 's/^/# /'
		fi
	)
}
boot "${k61#linux-image-}" "$k61" ""
boot "${k612#linux-image-}" "$k612" ""
boot "${k61#linux-image-} lsm=lockdown,yama" "$k61" "lsm=lockdown,yama"
rm -f "$root.cpio.gz"
echo "# kernel matrix: $total_ok passed, $total_fail failed"
