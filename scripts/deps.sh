#!/bin/sh
# Install what building (with --test, testing; with --bench, benchmarking) stepbox
# needs, from Debian's packages, when it is missing. Tools are looked up as
# commands (a machine may have node and npm from elsewhere), libraries as
# packages. As root it uses apt-get; otherwise it names what to install.
set -eu
tools="make:make meson:meson ninja:ninja-build pkg-config:pkg-config cc:gcc python3:python3 setpriv:util-linux pgrep:procps"
# the demo installs a package with pip (Debian's python3 has neither pip nor venv)
libs="libc6-dev libjansson-dev libseccomp-dev python3-pip python3-venv"
if [ "${1:-}" = --test ] || [ "${1:-}" = --bench ]; then
	tools="$tools clang:clang node:nodejs npm:npm bwrap:bubblewrap hyperfine:hyperfine unshare:util-linux"
	# the ecosystems of tests/integration/t0195 (Debian's, at their Debian paths)
	tools="$tools /usr/bin/go:golang-go /usr/bin/cargo:cargo /usr/bin/gem:ruby /usr/bin/pipx:pipx git:git"
	# network by name (t0340, t0345, bench/proxy.py): a test CA, and a client
	tools="$tools openssl:openssl curl:curl"
	# the Debian package's check (tests/package)
	tools="$tools lintian:lintian"
	# the lint of tests/run.sh: scripts, C style, static analysis
	tools="$tools shellcheck:shellcheck clang-format:clang-format cppcheck:cppcheck"
	# the kernel matrix (tests/kernels): Debian kernels booted under QEMU
	tools="$tools qemu-system-x86_64:qemu-system-x86 cpio:cpio busybox:busybox-static file:file"
	# the Seatbelt profiles' Scheme reader (tests/sbpl)
	tools="$tools guile:guile-3.0"
	# the container family (tests/containers): a rootfs, Docker, Podman, gVisor
	tools="$tools debootstrap:debootstrap dockerd:docker.io podman:podman runsc:runsc catatonit:catatonit"
	# the Kubernetes Job example played as its pod (tests/containers/job.sh)
	libs="$libs python3-yaml"
fi
# make bench also compares firejail (a setuid peer: not installed for make check)
[ "${1:-}" != --bench ] || tools="$tools firejail:firejail"
missing=
for t in $tools; do
	command -v "${t%%:*}" >/dev/null 2>&1 || missing="$missing ${t#*:}"
done
for p in $libs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "stepbox: missing Debian packages:$missing" >&2
	echo "hint: sudo apt-get install$missing" >&2
	exit 1
fi
echo "stepbox: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# a daemon a package would start (docker.io) is not started: the container
# tests start their own, with no bridge and no firewall rules
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
