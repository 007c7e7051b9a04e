#!/bin/bash
# tests/containers/rootfs.sh CACHE: print the path of a Debian 12 minbase
# rootfs (with python3) made by debootstrap from Debian's packages, from the
# mirror apt uses here, made once and kept in CACHE. Exit 1, with the
# reason on stderr, when it cannot be made (the mirror, not stepbox).
set -u
cache=$1
rootfs=$cache/rootfs-bookworm
mkdir -p "$cache"
if [ ! -e "$rootfs/.stepbox-done" ]; then
	mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	[ -n "$mirror" ] || mirror=$(sed -n 's/^deb  *\(http[^ ]*debian\)\/*  *bookworm .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
	rm -rf "$rootfs.new"
	if ! debootstrap --variant=minbase --include=python3 bookworm "$rootfs.new" \
		"${mirror:-http://deb.debian.org/debian}" >"$cache/debootstrap.log" 2>&1; then
		tail -1 "$cache/debootstrap.log" >&2
		exit 1
	fi
	touch "$rootfs.new/.stepbox-done"
	rm -rf "$rootfs" && mv "$rootfs.new" "$rootfs"
fi
echo "$rootfs"
