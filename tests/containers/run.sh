#!/bin/bash
# tests/containers/run.sh STEPBOX: stepbox inside the engines users run.
# A Debian rootfs made with debootstrap from Debian's packages (cached in
# $STEPBOX_CONTAINER_CACHE, no image registry), imported into Docker and run
# under Podman with --rootfs, in each setting an engine offers (its defaults,
# seccomp unconfined, /proc unmasked), as root and as uid 65534; inside,
# tests/containers/inside.sh checks what stepbox says and does there. A
# dockerd is started where none answers (no bridge, no iptables, its own data
# root), and only the one started here is stopped. gVisor (runsc) is run as
# Docker's and Podman's runtime and through its own `runsc do`: stepbox must
# refuse every backend there and say it is gVisor's doing. Needs root.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
sb=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
cache=${STEPBOX_CONTAINER_CACHE:-/var/cache/stepbox-containers}
skip() { echo "skip - containers: $1"; }
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; shift; for l in "$@"; do echo "# $l"; done; }

[ "$(id -u)" = 0 ] || { skip "needs root"; exit 0; }
command -v debootstrap >/dev/null || { skip "debootstrap is not installed (scripts/deps.sh --test)"; exit 0; }

# the rootfs: Debian's own packages, from the mirror apt uses here
mkdir -p "$cache"
start=$(date +%s)
made=$([ -e "$cache/rootfs-bookworm/.stepbox-done" ] || echo yes)
if ! rootfs=$(bash "$here/rootfs.sh" "$cache" 2>"$cache/rootfs.err"); then
	# the mirror, not stepbox: said, not failed
	skip "debootstrap could not make a rootfs here: $(cat "$cache/rootfs.err")"
	exit 0
fi
[ -z "$made" ] || ok "a Debian rootfs made with debootstrap in $(($(date +%s) - start)) s"

# what the container sees of ours: stepbox and the scripts, read-only
stage=$(mktemp -d /tmp/sbct-stage.XXXXXX)
chmod 755 "$stage"
cp "$sb" "$stage/stepbox"
cp "$here/inside.sh" "$here/host.py" "$here/probe.py" "$stage/"
chmod -R a+rX "$stage"
runroot=$(mktemp -d /tmp/sbct-run.XXXXXX)
started=
cleanup() {
	if [ -n "$started" ]; then
		kill "$started" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$started" 2>/dev/null || break; sleep 0.1; done
	fi
	# what the engines left mounted beneath their folders (never another's)
	awk '{print $2}' /proc/mounts | grep -E "^($runroot|$cache/docker|$cache/podman|/run/stepbox-containers-podman)/" | sort -r |
		while read -r m; do umount -l "$m" 2>/dev/null; done
	rm -rf "$stage" "$runroot"
}
trap cleanup EXIT

# one setting, as each user: NAME AUTO SUP CAUSE ENGINE-ARGS... -- IMAGE-ARGS...
# (what auto must pick, the supervisor check must name, and a regex the
# refusal of each unavailable backend must match; inside.sh says the rest)
matrix() {
	local name=$1 auto=$2 sup=$3 cause=$4 user
	shift 4
	local engine=()
	while [ "$1" != -- ]; do engine+=("$1"); shift; done
	shift
	for user in 0 65534; do
		"${engine[@]}" --user "$user" -e SB=/opt/sb/stepbox -e "SETTING=$name, uid $user" \
			-e "AUTO=$auto" -e "SUP=$sup" -e "CAUSE=$cause" "$@" /opt/sb/inside.sh \
			>"$runroot/out" 2>&1
		local rc=$?
		grep -E '^(ok|not ok|skip|#)' "$runroot/out"
		# what the engine said when it did not run it whole
		local said=()
		mapfile -t said < <(grep -vE '^(ok|not ok|skip|#)' "$runroot/out" | tail -5)
		[ "$rc" = 0 ] || notok "[$name, uid $user] the container ran (exit $rc)" "${said[@]}"
	done
}

# Docker
if command -v dockerd >/dev/null && command -v docker >/dev/null; then
	sock=$runroot/docker.sock
	export DOCKER_HOST=unix://$sock
	# gVisor as a runtime, where it is installed: runsc sets up no network of its
	# own (it refuses to, in the root network namespace this dockerd leaves it)
	conf=$runroot/daemon.json
	if command -v runsc >/dev/null; then
		echo '{"runtimes": {"runsc": {"path": "'"$(command -v runsc)"'", "runtimeArgs": ["--network=none"]}}}'
	else
		echo '{}'
	fi >"$conf"
	dockerd --config-file "$conf" --bridge=none --iptables=false --ip6tables=false --data-root "$cache/docker" \
		--exec-root "$runroot/exec" -H "$DOCKER_HOST" --pidfile "$runroot/docker.pid" \
		>"$runroot/dockerd.log" 2>&1 &
	started=$!
	for _ in $(seq 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
	image=stepbox-ct:$(stat -c %Y "$rootfs/.stepbox-done")
	if ! docker info >/dev/null 2>&1; then
		skip "docker: a dockerd of our own does not start here: $(tail -1 "$runroot/dockerd.log")"
	elif ! docker image inspect "$image" >/dev/null 2>&1 &&
		! tar -C "$rootfs" -c . | docker import - "$image" >/dev/null; then
		notok "docker: the rootfs imports as an image"
	elif ! out=$(docker run --rm --network none "$image" true 2>&1); then
		skip "docker: cannot start a container here: $(echo "$out" | tail -1)"
	else
		ok "docker: the rootfs is an image, in a dockerd of our own"
		d=(docker run --rm --network none -v "$stage:/opt/sb:ro")
		matrix "docker default" landlock "without pidfd_getfd" "seccomp" "${d[@]}" -- "$image"
		matrix "docker seccomp=unconfined" landlock full "masked /proc.*systempaths=unconfined" \
			"${d[@]}" --security-opt seccomp=unconfined -- "$image"
		matrix "docker seccomp=unconfined systempaths=unconfined" stacked full "^$" \
			"${d[@]}" --security-opt seccomp=unconfined --security-opt systempaths=unconfined \
			-- "$image"
		if ! command -v runsc >/dev/null; then
			skip "docker: gVisor: runsc is not installed (scripts/deps.sh --test)"
		elif ! out=$(docker run --rm --network none --runtime runsc "$image" true 2>&1); then
			skip "docker: gVisor: runsc does not start a container here: $(echo "$out" | tail -1)"
		else
			# no Landlock, no user notification, no usable mount calls: every backend refused
			matrix "docker runtime=runsc" none - "gVisor" "${d[@]}" --runtime runsc -- "$image"
		fi
	fi
	kill "$started" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$started" 2>/dev/null || break; sleep 0.1; done
	started=
else
	skip "docker: docker.io is not installed (scripts/deps.sh --test)"
fi

# Podman, on the rootfs itself (an overlay keeps the cache clean); its own
# storage; the limits given (its default raises RLIMIT_NOFILE, which a root
# without CAP_SYS_RESOURCE may not)
if command -v podman >/dev/null; then
	# podman's database remembers its runroot: always the same one
	p=(podman --root "$cache/podman" --runroot /run/stepbox-containers-podman --log-level=error run --rm
		--network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 -v "$stage:/opt/sb:ro")
	if ! out=$("${p[@]}" --rootfs "$rootfs:O" true 2>&1); then
		skip "podman: cannot start a container here: $(echo "$out" | tail -1)"
	else
		ok "podman: a container on the rootfs starts"
		matrix "podman default" landlock full "masked /proc.*unmask=ALL" "${p[@]}" \
			-- --rootfs "$rootfs:O"
		matrix "podman unmask=ALL" stacked full "^$" "${p[@]}" --security-opt unmask=ALL \
			-- --rootfs "$rootfs:O"
		# gVisor as the runtime (its own network off: it refuses to set one up here)
		pg=(podman --root "$cache/podman" --runroot /run/stepbox-containers-podman --log-level=error
			--runtime "$(command -v runsc)" --runtime-flag network=none "${p[@]:6}")
		if ! command -v runsc >/dev/null; then
			skip "podman: gVisor: runsc is not installed (scripts/deps.sh --test)"
		elif ! out=$("${pg[@]}" --rootfs "$rootfs:O" true 2>&1); then
			skip "podman: gVisor: runsc does not start a container here: $(echo "$out" | tail -1)"
		else
			matrix "podman runtime=runsc" none - "gVisor" "${pg[@]}" -- --rootfs "$rootfs:O"
		fi
		# the Kubernetes Job example, played as its pod
		bash "$here/job.sh" "$cache" "$rootfs"
	fi
else
	skip "podman: podman is not installed (scripts/deps.sh --test)"
fi

# gVisor's own launcher: runsc do, on the host's root (read-only under a tmpfs
# overlay of runsc's) and on the rootfs (an overlay of ours, the staged files
# in it); as root, and as uid 65534 through setpriv inside the sandbox
if command -v runsc >/dev/null; then
	gv=(runsc --root "$runroot/runsc" --network=none "do")
	gvroot=$runroot/gv-root
	mkdir -p "$runroot/runsc" "$runroot/gv-up" "$runroot/gv-work" "$gvroot"
	if ! out=$("${gv[@]}" true 2>&1); then
		skip "runsc do: does not start a sandbox here: $(echo "$out" | tail -1)"
	else
		ok "runsc do: a gVisor sandbox starts"
		rooted=
		if mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$runroot/gv-up,workdir=$runroot/gv-work" \
			"$gvroot" 2>/dev/null && mkdir -p "$gvroot/opt/sb" && cp -a "$stage/." "$gvroot/opt/sb/"; then
			rooted=yes
		else
			skip "runsc do: the rootfs: no overlay of it can be made here"
		fi
		for where in host rootfs; do
			[ "$where" = host ] || [ -n "$rooted" ] || continue
			if [ "$where" = host ]; then r=(-cwd /) sbd=$stage; else r=(-root "$gvroot" -cwd /) sbd=/opt/sb; fi
			for user in 0 65534; do
				as=()
				[ "$user" = 0 ] || as=(setpriv --reuid "$user" --regid "$user" --clear-groups)
				"${gv[@]}" "${r[@]}" env SB=$sbd/stepbox "SETTING=runsc do on the $where, uid $user" \
					AUTO=none SUP=- CAUSE=gVisor "${as[@]}" sh "$sbd/inside.sh" 2>&1 |
					grep -E '^(ok|not ok|skip|#)'
				[ "${PIPESTATUS[0]}" = 0 ] || notok "[runsc do on the $where, uid $user] the sandbox ran"
			done
		done
	fi
else
	skip "runsc do: runsc is not installed (scripts/deps.sh --test)"
fi
