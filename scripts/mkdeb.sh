#!/bin/sh
# mkdeb.sh BUILD-BASE OUTDIR: a Debian package of stepbox, built with dpkg-deb
# from a release build for /usr (static, stripped), the man page compressed,
# bash completion, the copyright file. Prints the .deb's path.
set -eu
base=${1:-build}
out=${2:-dist}
top=$(cd "$(dirname "$0")/.." && pwd)
case $out in /*) ;; *) out="$top/$out" ;; esac
bdir="$top/$base-deb"
[ -f "$bdir/build.ninja" ] || meson setup "$bdir" "$top" --prefix=/usr --buildtype=release \
	-Dstatic=true >/dev/null
ninja -C "$bdir" >/dev/null
version=$(meson introspect "$bdir" --projectinfo | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
DESTDIR="$stage" meson install -C "$bdir" --strip >/dev/null
gzip -9n "$stage/usr/share/man/man1/stepbox.1"
doc="$stage/usr/share/doc/stepbox"
mkdir -p "$doc/docs" "$doc/examples"
# what the man page and README point to: the docs and the examples, as in the tree
cp "$top/README.md" "$doc/"
cp "$top"/docs/*.md "$doc/docs/"
cp "$top"/examples/*.* "$doc/examples/"
chmod 644 "$doc/README.md" "$doc"/docs/* "$doc"/examples/*
{
	echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	echo "Upstream-Name: stepbox"
	echo
	echo "Files: *"
	echo "Copyright: 2026 the stepbox authors"
	echo "License: Expat"
	sed -n '/^Permission/,$p' "$top/LICENSE" | sed 's/^$/./; s/^/ /'
} >"$doc/copyright"
printf 'stepbox (%s-1) unstable; urgency=medium\n\n  * Release %s.\n\n -- stepbox authors <stepbox@users.noreply.github.com>  %s\n' \
	"$version" "$version" "$(date -R -u -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")" | gzip -9n >"$doc/changelog.Debian.gz"
# static on purpose: no dynamic loader at each launch, no LD_PRELOAD of the
# caller's in the launcher (README, "Install"); lintian is told so
mkdir -p "$stage/usr/share/lintian/overrides"
printf '# static on purpose: no loader and no LD_PRELOAD in the launcher\nstepbox: statically-linked-binary [usr/bin/stepbox]\n' \
	>"$stage/usr/share/lintian/overrides/stepbox"
mkdir -p "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CTL
Package: stepbox
Version: $version-1
Architecture: $arch
Maintainer: stepbox authors <stepbox@users.noreply.github.com>
Installed-Size: $size
Section: admin
Priority: optional
Built-Using: glibc (= $(dpkg-query -W -f='${Version}' libc6-dev)), jansson (= $(dpkg-query -W -f='${Version}' libjansson-dev))
Description: fail-closed sandbox for the commands of workflow steps
 stepbox runs the shell commands of automated workflow steps (an AI agent's
 shell tool, a scheduled job) with exactly what a policy grants: their own
 folders, the system they need, and a per-workflow folder where installed
 tools persist. It stacks mount, PID and IPC namespaces with Landlock, drops
 every capability and loads a seccomp filter; pip, npm, go and cargo work
 inside it.
CTL
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
find "$stage" -type d -exec chmod 755 {} +
mkdir -p "$out"
deb="$out/stepbox_${version}-1_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
