#!/bin/bash
# t0196: the step reads its own cgroup's limits, as node and pnpm do (issue
# 11), and nothing else of the cgroup tree; it can change none of them. Where
# stepbox makes the step a cgroup of its own for its limits (issue 15), the
# step reads the limit stepbox set there, wherever that cgroup lies.
. "$(dirname "$0")/lib.sh"

# The memory limit of the cgroup /proc/self/cgroup names, read as libuv
# (node) does: v1's memory controller, else cgroup2's folder at /sys/fs/cgroup.
cat >"$T/mymem" <<'SH'
v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3; exit}' /proc/self/cgroup)
if [ -n "$v1" ]; then
	cat "/sys/fs/cgroup/memory$v1/memory.limit_in_bytes"
else
	cat "/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3; exit}' /proc/self/cgroup)/memory.max"
fi
SH
chmod 755 "$T/mymem"
# sees_limit NAME [WRAPPER...] -- COMMAND...: run with a 300 MiB memory limit
# (from WRAPPER's cgroup), COMMAND prints the limit it finds: 314572800
sees_limit() {
	local name=$1 wrap=() by
	shift
	while [ "$1" != -- ]; do wrap+=("$1"); shift; done
	shift
	"${wrap[@]}" "$SB" run -r "$T" --limit memory=300M --report "$T/out/cg.json" -- "$@" \
		>"$T/out/out" 2>"$T/out/err"
	RC=$?
	OUT=$(cat "$T/out/out")
	by=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["limits"]["memory"]["enforced_by"])' \
		"$T/out/cg.json" 2>/dev/null)
	if [ "${by#cgroup}" = "$by" ]; then
		skip "$name" "no cgroup of its own here (memory: ${by:-?})"
	elif [ "$RC" = 0 ] && [ "$OUT" = 314572800 ]; then
		ok "$name"
	else
		notok "$name" "rc=$RC" "stdout: $OUT"
	fi
}
sees_limit "the step reads its memory limit in its own cgroup (from this test's cgroup)" -- sh "$T/mymem"
# from the root of v1's memory hierarchy, the step's cgroup lies beneath no
# folder of the caller's: it must be granted by itself
if is_root && [ -w /sys/fs/cgroup/memory/cgroup.procs ]; then
	sees_limit "the step reads its memory limit in its own cgroup (from the root memory cgroup)" \
		sh -c 'echo $$ >/sys/fs/cgroup/memory/cgroup.procs && exec "$@"' sh -- sh "$T/mymem"
else
	skip "the step reads its memory limit in its own cgroup (from the root memory cgroup)" "needs root and cgroup v1's memory hierarchy"
fi
if command -v node >/dev/null && node -e 'process.exit(typeof process.constrainedMemory == "function" ? 0 : 1)'; then
	sees_limit "node sees the step's memory limit (process.constrainedMemory)" -- \
		node -e 'console.log(process.constrainedMemory())'
else
	skip "node sees the step's memory limit" "no node with process.constrainedMemory here"
fi

# a stepbox killed with SIGKILL leaves its step's cgroup behind (its init
# ends the tree from inside): the next step's stepbox removes it, and never
# the cgroup of a step still running (the control). Another test's steps on
# this host may be that next step first: then the kill is tried again (up to
# five times).
cg_of() { find /sys/fs/cgroup -maxdepth 7 -type d \( -name "stepbox-$1" -o -name "step-$1" \) 2>/dev/null | head -1; }
both_made() { [ -n "$(cg_of "$live")" ] && [ -n "$(cg_of "$dead")" ]; }
dead_emptied() { [ -z "$(cat "$dead_cg/cgroup.procs" 2>/dev/null)" ]; }
killed_cgroup() { # sets live_cg, dead_cg, left (the dead one still there before the next step)
	"$SB" run -r "$T" -- sleep 60 >/dev/null 2>&1 &
	live=$!
	"$SB" run -r "$T" -- sleep 60 >/dev/null 2>&1 &
	dead=$!
	BG_PIDS="$BG_PIDS $live $dead"
	wait_for both_made
	live_cg=$(cg_of $live) dead_cg=$(cg_of $dead) left=no
	[ -n "$live_cg" ] && [ -n "$dead_cg" ] || return 0
	kill -9 "$dead"
	wait "$dead" 2>/dev/null
	wait_for dead_emptied
	[ -d "$dead_cg" ] && left=yes
	run_sb run -- true
}
for try in 1 2 3 4 5; do
	killed_cgroup
	{ [ "$left" = yes ] || [ -z "$dead_cg" ] || [ $try = 5 ]; } && break
	kill "$live" 2>/dev/null
	wait "$live" 2>/dev/null
done
if [ -z "$live_cg" ] || [ -z "$dead_cg" ]; then
	skip "a killed stepbox's cgroup is removed by the next step" "no cgroup of the step's own here"
elif [ "$left" = yes ] && [ ! -d "$dead_cg" ] && [ -d "$live_cg" ] && [ "$RC" = 0 ]; then
	ok "a killed stepbox's cgroup is removed by the next step, a running step's kept"
else
	notok "a killed stepbox's cgroup is removed by the next step, a running step's kept" \
		"left behind: $left (of $try tries); dead: $(ls -d "$dead_cg" 2>&1); live: $(ls -d "$live_cg" 2>&1); rc=$RC"
fi
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null

# the caller's own cgroup: v2's, else v1's memory controller
own=$(awk -F: '$2 == "" && $3 != "/" {print "/sys/fs/cgroup" $3; exit}
	$2 ~ /memory/ && $3 != "/" {print "/sys/fs/cgroup/" $2 $3; exit}' /proc/self/cgroup)
file=
for f in memory.max memory.limit_in_bytes cgroup.procs; do
	[ -n "$own" ] && [ -r "$own/$f" ] && { file="$own/$f"; break; }
done
if [ -z "$file" ]; then
	skip "the step's own cgroup limits" "this process is in a root cgroup, or none is readable here"
	exit 0
fi
want=$(head -c 200 "$file")
run_sb run -- sh -c "head -c 200 '$file'"
[ "$RC" = 0 ] && [ "$OUT" = "$want" ] && ok "the step reads its own cgroup's $(basename "$file") (the control: the same as outside)" ||
	notok "the step reads its own cgroup's $(basename "$file") (the control: the same as outside)" "rc=$RC" "$OUT" "$ERR"
denied "its cgroup cannot be changed" "echo 1 > '$file'"
parent=$(dirname "$own")
run_sb run -- sh -c "ls '$parent'"
if [ "$RC" != 0 ] || [ "$OUT" = "$(basename "$own")" ]; then
	ok "no other cgroup is there to see"
else
	notok "no other cgroup is there to see" "$OUT"
fi
