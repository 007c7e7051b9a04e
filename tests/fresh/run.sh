#!/bin/bash
# tests/fresh/run.sh: the README's first command on a fresh Debian 12, as a
# newcomer runs it: a debootstrap minbase (no make, no compiler, no pip),
# this repository's files copied in, then `sh scripts/deps.sh && make demo`
# as root in a chroot of its own (a mount of its own, so the namespaces
# can pivot there as on a machine). The demo must end 0, having shown what
# it says. Needs root and Debian's mirror; the rootfs is the container
# family's, made once (tests/containers/rootfs.sh).
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${STEPBOX_CONTAINER_CACHE:-/var/cache/stepbox-containers}
ok() { echo "ok - fresh: $1"; }
notok() { echo "not ok - fresh: $1"; shift; for l in "$@"; do printf '# %s\n' "$l"; done; }
skip() { echo "skip - fresh: $1"; }

[ "$(id -u)" = 0 ] || { skip "needs root (a chroot)"; exit 0; }
command -v debootstrap >/dev/null || { skip "debootstrap is not installed (scripts/deps.sh --test)"; exit 0; }
command -v git >/dev/null || { skip "git is not installed: the repository's files are its list"; exit 0; }
mkdir -p "$cache"
if ! rootfs=$(bash "$top/tests/containers/rootfs.sh" "$cache" 2>"$cache/rootfs.err"); then
	skip "debootstrap could not make a rootfs here: $(cat "$cache/rootfs.err")"
	exit 0
fi
W=$(mktemp -d /var/tmp/stepbox-fresh.XXXXXX)
trap 'rm -rf "$W"' EXIT
cp -a "$rootfs" "$W/root"
# what a clone holds: the tracked files, as they are in this tree
mkdir -p "$W/root/src/stepbox"
git -C "$top" ls-files -z | (cd "$top" && xargs -0 tar -cf -) | tar -C "$W/root/src/stepbox" -xf -
[ ! -x "$W/root/usr/bin/make" ] && [ ! -x "$W/root/usr/bin/cc" ] ||
	{ notok "the rootfs is fresh (no make, no compiler)"; exit 0; }
cp -L /etc/resolv.conf "$W/root/etc/resolv.conf"
start=$(date +%s)
unshare -m --propagation private sh -c '
	set -e
	R=$1
	mount --bind "$R" "$R"
	mount -t proc proc "$R/proc"
	mount --rbind /dev "$R/dev"
	mount --rbind /sys "$R/sys"
	mount -t tmpfs tmpfs "$R/tmp"
	cd "$R" && exec chroot "$R" /bin/sh -c "cd /src/stepbox && sh scripts/deps.sh && make demo"
' sh "$W/root" >"$W/log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
if grep -q "Could not resolve\|Failed to fetch\|Temporary failure resolving" "$W/log"; then
	skip "Debian's mirror could not be reached from the chroot: $(grep -m1 "Could not\|Failed\|Temporary" "$W/log")"
elif [ "$rc" = 0 ] && grep -q "^== the demo showed everything it says" "$W/log" &&
	grep -q "demo_tool 1.0 works" "$W/log"; then
	ok "sh scripts/deps.sh && make demo on a debootstrap minbase: installs, builds, runs the demo ($secs s)"
else
	notok "sh scripts/deps.sh && make demo on a debootstrap minbase: installs, builds, runs the demo" \
		"exit $rc after $secs s" "$(grep -E "FAILED|rror|not found" "$W/log" | head -5)" "$(tail -5 "$W/log")"
fi
