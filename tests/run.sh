#!/bin/bash
# tests/run.sh: every suite, summed into one "N passed, N failed" line.
#   unit tests (TAP, from build/), the same under ASan+UBSan (build-asan/),
#   data-driven policy cases, and the integration families, each run as root
#   and as an unprivileged user (setpriv, uid 65534) from a world-readable copy.
# usage: tests/run.sh [BUILD-DIR]    (exit status non-zero on any failure)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 1
asan=${ASAN_BUILD:-$top/build-asan}
pass=0 fail=0 skipped=0
log=$(mktemp)

count() { # read test lines on stdin, echo them, count them
	local suite=$1 line failed=
	while IFS= read -r line; do
		case $line in
		"ok "*) pass=$((pass + 1)) failed= ;;
		"not ok "*) fail=$((fail + 1)) failed=1; echo "FAIL [$suite] $line" >>"$log" ;;
		"skip "*) skipped=$((skipped + 1)) failed= ;;
		"#"*) [ -z "$failed" ] || echo "    $line" >>"$log" ;; # a failure's details, in the summary too
		*) failed= ;;
		esac
		[ -n "${VERBOSE:-}" ] || case $line in "ok "*) continue ;; esac
		echo "  [$suite] $line"
	done
}

# a family's heading, and how long the one before took (what to speed up next)
section() {
	[ -z "${sec_name:-}" ] || echo "   ($sec_name: $((SECONDS - sec_start)) s)"
	sec_name=${1%%:*} sec_start=$SECONDS
	[ -z "$1" ] || echo "== $1"
}

run_tap() { # a TAP program; a crash counts as a failure
	local suite=$1
	shift
	"$@" >"$log.tap" 2>&1
	local rc=$?
	count "$suite" <"$log.tap"
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$log.tap"; then
		count "$suite" <<<"not ok - $suite exited $rc"
		tail -5 "$log.tap"
	fi
}

section "builds and lint"
check() { # NAME COMMAND...: one test line from a command's success
	local name=$1
	shift
	if "$@" >"$log.chk" 2>&1; then count build <<<"ok - $name"; else
		count build <<<"not ok - $name"
		tail -15 "$log.chk"
	fi
}
check "banned functions (scripts/banned.sh)" sh "$top/scripts/banned.sh"
check "commit subjects under 72 characters (scripts/subjects.sh)" sh "$top/scripts/subjects.sh"
# filters for another architecture (a cross build): its ABI in every filter,
# or, where this libseccomp cannot place a call there, a failed build naming it
cross_filters() {
	local other=aarch64 mine=0xc000003e theirs=0xc00000b7
	[ "$(uname -m)" = aarch64 ] && other=x86_64 mine=0xc00000b7 theirs=0xc000003e
	if "$build/seccomp-gen" "$other" >"$log.gen" 2>"$log.generr"; then
		grep -q "$theirs" "$log.gen" && ! grep -q "$mine" "$log.gen"
	else
		grep -q "cannot place '.*' .*exe_wrapper" "$log.generr"
	fi
}
check "seccomp-gen for another architecture: its ABI, or a build that fails naming the call" cross_filters
if command -v clang >/dev/null; then
	check "clang build, -Wall -Wextra -Werror" sh -c "cd '$top' && { [ -f build-clang/build.ninja ] ||
		CC=clang meson setup build-clang >/dev/null; } && ninja -C build-clang"
else
	count build <<<"skip - clang build: clang not installed"
fi
if command -v cppcheck >/dev/null; then
	incs=()
	for d in "$top"/src/*/; do incs+=(-I "$d"); done
	check "cppcheck" cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--inline-suppr -D_GNU_SOURCE "${incs[@]}" "$top/src"
else
	count build <<<"skip - cppcheck: not installed"
fi

if command -v shellcheck >/dev/null; then
	check "shellcheck: every shell script, warnings and up" sh -c "cd '$top' &&
		git ls-files -z '*.sh' .ci/run | xargs -0 shellcheck -S warning"
else
	count build <<<"skip - shellcheck: not installed (scripts/deps.sh --test)"
fi
if command -v clang-format >/dev/null; then
	check "clang-format: every C file as .clang-format says" sh -c "cd '$top' &&
		git ls-files -z 'src/*.[ch]' 'tools/*.c' 'tests/unit/*.[ch]' 'bench/*.c' \
			'tests/kernels/*.c' | xargs -0 clang-format --dry-run --Werror"
else
	count build <<<"skip - clang-format: not installed (scripts/deps.sh --test)"
fi
check "the debug build (-O0) builds" sh -c "cd '$top' && { [ -f build-debug/build.ninja ] ||
	meson setup build-debug --buildtype=debug >/dev/null; } && ninja -C build-debug"

section "unit tests"
for t in "$build"/test_*; do
	[ -f "$t" ] && [ -x "$t" ] && run_tap "unit/$(basename "$t")" "$t"
done
if [ -d "$asan" ]; then
	echo "== unit tests under ASan+UBSan"
	for t in "$asan"/test_*; do
		[ -f "$t" ] && [ -x "$t" ] && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			run_tap "asan/$(basename "$t")" "$t"
	done
	# the MCP server's protocol fuzzer against the sanitized build (t0320 runs
	# it against the release build on every backend)
	fz=$(mktemp -d)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		run_tap "asan/mcp-fuzz" timeout 300 python3 "$top/tests/integration/mcp-fuzz.py" \
		"$asan/stepbox" "$fz"
	rm -rf "$fz"
fi

section "policy cases"
count policy < <(STEPBOX=$build/stepbox bash "$top/tests/policy/run-cases.sh" 2>&1)

# The suites that need no integration stage run beside the families, at a
# lower priority, their lines counted after them: the families leave most of
# a core idle (their steps wait on locks, timers and each other) and these
# fill it. The kernel matrix's host part stays after the families: its
# steps, as root, would clean up the dead cgroups t0196 looks for.
side=$(mktemp -d)
side_suites() {
	local s
	renice -n 10 -p "$BASHPID" >/dev/null 2>&1
	side_one() { # NAME COMMAND...: its lines to $side/NAME, its seconds to $side/NAME.s
		s=$SECONDS
		"${@:2}" >"$side/$1" 2>&1
		echo $((SECONDS - s)) >"$side/$1.s"
	}
	side_one sbpl bash "$top/tests/sbpl/run.sh" "$build/stepbox"
	if [ -x "$asan/stepbox" ]; then
		ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			side_one asan-sbpl bash "$top/tests/sbpl/run.sh" "$asan/stepbox"
	fi
	side_one seatbelt bash "$top/tests/seatbelt/run.sh" "$build/stepbox"
	side_one package bash "$top/tests/package/run.sh"
	if [ "$(id -u)" = 0 ] && [ -x "$static" ]; then
		KERNELS=guests side_one kernels bash "$top/tests/kernels/run.sh" "$static"
		side_one containers bash "$top/tests/containers/run.sh" "$static"
	fi
	side_one fresh bash "$top/tests/fresh/run.sh"
}
static=${STATIC_BUILD:-$top/build-static}/stepbox
side_suites </dev/null &
side_pid=$!

section "integration families: every backend, as root and as uid 65534"
# A world-readable copy: CI's clone may sit where uid 65534 cannot enter. As
# root, on a tmpfs of its own, as /tmp is on most systems: this disk's
# journal made a test's 21,000 empty files take 20 s of the kernel's time.
stage=$(mktemp -d /tmp/stepbox-ci.XXXXXX)
[ "$(id -u)" != 0 ] || mount -t tmpfs -o mode=755,size=8g stepbox-ci "$stage" || exit 1
chmod 755 "$stage"
mkdir -p "$stage/bin" "$stage/tests" "$stage/fixtures" "$stage/tmp"
cp "$build/stepbox" "$stage/bin/"
cp "$build/kprobe" "$stage/fixtures/"
cp -r "$top/tests/integration" "$stage/tests/"
cp -r "$top/examples" "$stage/"
cp -r "$top/man" "$stage/" # t0002 runs the man page's examples
cp "$top/scripts/mkwheel.py" "$stage/tests/integration/"
# the official MCP TypeScript SDK, for t0320's client (which skips without it)
if command -v npm >/dev/null && ! npm_config_cache="$stage/tmp/npm-cache" timeout 180 \
	npm install --prefix "$stage/fixtures/mcp-sdk" @modelcontextprotocol/sdk@1 --no-audit \
	--no-fund >/dev/null 2>&1; then
	rm -rf "$stage/fixtures/mcp-sdk"
fi
rm -rf "$stage/tmp/npm-cache"
chmod -R a+rX "$stage"
chmod 1777 "$stage/tmp"
stage_mount=
if [ "$(id -u)" = 0 ]; then
	# a self-bind mount in a folder only root may search, as podman's storage
	# makes one (in /var/tmp: the namespaces' private /tmp would hide it);
	# t0209 binds / whole, as the unprivileged user too
	rootonly=$(mktemp -d /var/tmp/stepbox-ci-rootonly.XXXXXX) && mkdir "$rootonly/mnt" &&
		mount --bind "$rootonly/mnt" "$rootonly/mnt" && stage_mount=$rootonly/mnt &&
		trap 'umount "$stage_mount" 2>/dev/null; rm -rf "$rootonly"' EXIT &&
		echo inside >"$stage_mount/inside" && chmod 644 "$stage_mount/inside" &&
		echo "$stage_mount" >"$stage/fixtures/rootonly-mount"
	# a setuid-root binary for the unprivileged escape test
	cp /usr/bin/id "$stage/fixtures/suid-id"
	chmod 4755 "$stage/fixtures/suid-id"
	# a file the unprivileged user may not read, in a folder it may list
	mkdir -p "$stage/fixtures/private"
	echo root-only >"$stage/fixtures/private/secret"
	chmod 600 "$stage/fixtures/private/secret"
fi

users="root"
[ "$(id -u)" = 0 ] || users="$(id -un)"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	users="$users unprivileged"
fi
backends=${BACKENDS:-stacked landlock mountns}
# One test on one backend as one user, its lines to a file of its own in
# the folder of that family (out-BACKEND-USER).
one_test() {
	local backend=$1 user=$2 t=$stage/tests/integration/$3.sh
	local envs=(env STEPBOX="$stage/bin/stepbox" FIXTURES="$stage/fixtures"
		TMPDIR="$stage/tmp" TEST_USER="$user" STEPBOX_TEST_BACKEND="$backend"
		PATH=/usr/local/bin:/usr/bin:/bin)
	if [ "$user" = unprivileged ]; then
		(cd "$stage/tmp" && setpriv --reuid=65534 --regid=65534 --clear-groups \
			"${envs[@]}" timeout 600 bash "$t" 2>&1)
	else
		(cd "$stage/tmp" && "${envs[@]}" timeout 600 bash "$t" 2>&1)
	fi >"$stage/out-$backend-$user/$3"
}
# Every test on every backend as each user is one job; four workers take
# them from one queue, the longest tests first, so that the last minutes
# are not one long test alone. They share no state (each test its own
# folders, HOME, ports and keys; the unprivileged user's task count is
# bracketed where a test reads it, and t0196 tries its kill again when
# another step cleaned it first), and their steps spend much of their time
# waiting on locks, timers and each other: two families at once left a core
# of this 2-core machine idle, six slowed the tests that time a step's end
# past their bounds. Their lines are counted afterwards, in order.
long="t0180-parallel-steps t0195-ecosystems t0345-hosts-clients t0130-mountns t0100-packages
	t0320-mcp t0310-limits t0306-ipc t0309-supervisor t0311-no-getfd t0145-explain-corpus
	t0308-tree-and-fds t0196-cgroup-limits t0140-explain t0331-protected-live"
queue=$stage/queue
: >"$queue"
for t in $long; do
	[ -f "$stage/tests/integration/$t.sh" ] && echo "$t"
done >"$queue.tests"
for t in "$stage"/tests/integration/t[0-9]*.sh; do
	t=$(basename "$t" .sh)
	grep -qx "$t" "$queue.tests" || echo "$t" >>"$queue.tests"
done
while read -r t; do
	for backend in $backends; do
		for user in $users; do echo "$backend $user $t" >>"$queue"; done
	done
done <"$queue.tests"
for backend in $backends; do
	for user in $users; do mkdir -p "$stage/out-$backend-$user"; done
done
echo 0 >"$queue.next"
worker() { # take the queue's next job until none is left
	local n job
	while :; do
		n=$(flock "$queue.next" sh -c 'n=$(($(cat "$1") + 1)); echo $n >"$1"; echo $n' sh "$queue.next")
		job=$(sed -n "${n}p" "$queue")
		[ -n "$job" ] || return 0
		# shellcheck disable=SC2086 # three words: backend, user, test
		one_test $job
	done
}
pids=()
for _ in $(seq "${TESTS_AT_ONCE:-4}"); do
	worker &
	pids+=($!)
done
wait "${pids[@]}"
for backend in $backends; do
	for user in $users; do
		echo "== integration tests: $backend backend, as $user"
		for f in "$stage/out-$backend-$user"/t[0-9]*; do
			count "$backend/$user/$(basename "$f")" <"$f"
		done
	done
done
if [ "$(id -u)" != 0 ]; then
	count setup <<<"skip - integration as unprivileged: needs root to switch user"
fi
[ -z "$stage_mount" ] || { umount "$stage_mount" && rm -rf "$rootonly"; }
[ "$(id -u)" != 0 ] || umount "$stage"
rm -rf "$stage"

section "real kernels (tests/kernels): the host, its Landlock ABI as it is and capped"
if [ "$(id -u)" = 0 ] && [ -x "$static" ]; then
	count kernels < <(KERNELS=host bash "$top/tests/kernels/run.sh" "$static" 2>&1)
else
	count kernels <<<"skip - kernel matrix: needs root and a static build (make static)"
fi

section "" # the side suites, each with the seconds it took beside the families
wait "$side_pid"
side_count() { # NAME SUITE HEADING
	echo "== $3 (beside the families: $(cat "$side/$1.s" 2>/dev/null) s)"
	count "$2" <"$side/$1"
}
side_count sbpl sbpl "the macOS Seatbelt profiles (tests/sbpl): golden, read by Guile, checked"
[ ! -f "$side/asan-sbpl" ] || side_count asan-sbpl asan/sbpl "the same under ASan+UBSan"
side_count seatbelt seatbelt "the portable core alone and the Seatbelt backend's launcher (tests/seatbelt)"
side_count package package "the Debian package (make deb)"
if [ -f "$side/kernels" ]; then
	side_count kernels kernels "real kernels (tests/kernels): QEMU guests"
	side_count containers containers "containers (tests/containers): Docker and Podman, in each engine's settings"
else
	count kernels <<<"skip - kernel matrix under QEMU: needs root and a static build (make static)"
	count containers <<<"skip - containers: needs root and a static build (make static)"
fi
side_count fresh fresh "a fresh Debian 12 (tests/fresh): the README's first command as a newcomer runs it"
rm -rf "$side"

section ""
echo "   (all: $SECONDS s)"
echo
if [ -s "$log" ]; then
	echo "Failures:"
	cat "$log"
fi
rm -f "$log" "$log.tap" "$log.chk"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" -eq 0 ]
