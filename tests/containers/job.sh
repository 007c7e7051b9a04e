#!/bin/bash
# tests/containers/job.sh CACHE ROOTFS: examples/containers/stepbox-job.yaml
# played under Podman as a user applies it: the image built from
# examples/containers/Containerfile (BASE: the debootstrap rootfs, imported),
# tagged as the Job names it, and the Job's pod template played with
# `podman kube play` (Podman 4.3 plays Pods, not Jobs: a Job controller makes
# this same Pod). Its RuntimeDefault seccomp, uid 10001, the cache on a
# volume. Checks the step's exit status, its output and its run report on the
# volume; then the same pod with a step that writes inside and outside its
# grants. Called by run.sh (root, Podman there).
set -u
cache=$1 rootfs=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
job=$src/examples/containers/stepbox-job.yaml
ok() { echo "ok - job: $1"; }
notok() { echo "not ok - job: $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip() { echo "skip - job: $1"; }
python3 -c 'import yaml' 2>/dev/null || { skip "python3-yaml is not installed (scripts/deps.sh --test)"; exit 0; }
command -v catatonit >/dev/null || { skip "catatonit (podman's pause) is not installed (scripts/deps.sh --test)"; exit 0; }
P=(podman --root "$cache/podman" --runroot /run/stepbox-containers-podman --log-level=error)
# Podman's default raises RLIMIT_NOFILE, which a root without CAP_SYS_RESOURCE may not
conf=$(mktemp /tmp/sbct-job.XXXXXX)
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n' >"$conf"
export CONTAINERS_CONF=$conf
pods=$(mktemp -d /tmp/sbct-job.XXXXXX)
trap '"${P[@]}" pod rm -f nightly-report >/dev/null 2>&1; "${P[@]}" volume rm -f workflow-cache >/dev/null 2>&1; rm -rf "$conf" "$pods"' EXIT

base=localhost/stepbox-base:$(stat -c %Y "$rootfs/.stepbox-done")
if ! "${P[@]}" image exists "$base" && ! tar -C "$rootfs" -c . | "${P[@]}" import - "$base" >/dev/null 2>&1; then
	notok "the rootfs imports as the base image"; exit 0
fi
# the image, rebuilt when the sources change (the Containerfile builds them)
tree=$(cd "$src" && { git ls-files -s src tools meson.build meson_options.txt man examples/containers; git diff HEAD -- src tools meson.build examples/containers; } | sha1sum | cut -c1-12)
image=registry.example.com/stepbox:latest
if [ "$("${P[@]}" image inspect --format '{{index .Labels "stepbox.tree"}}' "$image" 2>/dev/null)" != "$tree" ]; then
	start=$(date +%s)
	if ! out=$(cd "$src" && "${P[@]}" build --network host --build-arg "BASE=$base" --label "stepbox.tree=$tree" \
		-f examples/containers/Containerfile -t "$image" . 2>&1); then
		skip "the Containerfile does not build here (no Debian mirror?): $(echo "$out" | tail -1)"; exit 0
	fi
	ok "the image builds from examples/containers/Containerfile in $(($(date +%s) - start)) s"
fi

# the Job's pod, its step's shell command optionally replaced
pod() {
	python3 - "$job" "${1:-}" <<'PY'
import sys, yaml
docs, out = list(yaml.safe_load_all(open(sys.argv[1]))), []
for d in docs:
    if d["kind"] == "Job":
        spec = d["spec"]["template"]["spec"]
        if sys.argv[2]:
            spec["containers"][0]["command"][-1] = sys.argv[2]
        d = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": d["metadata"]["name"]}, "spec": spec}
    out.append(d)
yaml.safe_dump_all(out, sys.stdout)
PY
}
# play it, wait for the step: its exit status
play() {
	"${P[@]}" pod rm -f nightly-report >/dev/null 2>&1
	"${P[@]}" kube play --network none "$1" >"$pods/play.out" 2>&1 || { cat "$pods/play.out"; return 1; }
	for _ in $(seq 120); do
		case $("${P[@]}" ps -a --filter name=nightly-report-step --format '{{.Status}}') in Exited*) break ;; esac
		sleep 0.5
	done
	"${P[@]}" inspect nightly-report-step --format '{{.State.ExitCode}}'
}
"${P[@]}" volume rm -f workflow-cache >/dev/null 2>&1
pod >"$pods/job.yaml"
rc=$(play "$pods/job.yaml")
logs=$("${P[@]}" logs nightly-report-step 2>&1)
t() { if eval "$2"; then ok "$1"; else notok "$1" "${3:-}"; fi; }
t "the Job's step exits 0 under kube play" '[ "$rc" = 0 ]' "exit $rc; $logs"
t "its command ran: make_report.py's line" 'echo "$logs" | grep -q "nightly-report: wrote /work/report.txt"' "$logs"
vol=$("${P[@]}" volume inspect workflow-cache --format '{{.Mountpoint}}')
rep=$vol/nightly-report.last-run.json
r() { python3 -c "import json; d=json.load(open('$rep')); print($1)" 2>/dev/null; }
t "its run report is on the volume: exit 0, under landlock" \
	'[ "$(r "d[\"exit_code\"], d[\"backend\"], d[\"persistent\"][\"path\"]")" = "0 landlock /cache/nightly-report" ]' \
	"$(r 'd.get("exit_code"), d.get("backend"), d.get("persistent")')"
t "the workflow cache is the volume's, owned by uid 10001" \
	'[ -e "$vol/nightly-report/CACHEDIR.TAG" ] && [ "$(stat -c %u "$vol/nightly-report")" = 10001 ]'
# a step that writes in its cache (granted) and beside it (not)
pod 'echo y >/cache/nightly-report/granted; echo y >/cache/escape' >"$pods/deny.yaml"
rc=$(play "$pods/deny.yaml")
t "a write beside the cache is refused (exit $rc), one inside it lands" \
	'[ "$rc" != 0 ] && [ ! -e "$vol/escape" ] && [ -s "$vol/nightly-report/granted" ]' \
	"$("${P[@]}" logs nightly-report-step 2>&1 | tail -3)"
