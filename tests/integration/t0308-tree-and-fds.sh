#!/bin/bash
# t0308 (red team): the process tree and the step's own descriptors. The
# timeout's kill stopped after 10,000 rounds and signalled process group ids
# that could be recycled; every process of a step must be gone when run
# returns, however wide or deep. And /dev/fd, /dev/stdin... must exist
# (bash process substitution).
. "$(dirname "$0")/lib.sh"

in_box "bash process substitution (/dev/fd)" "bash -c 'diff <(echo a) <(echo a)'"
# (stdout and stderr are pipes here: the test's own files lie outside the grants)
in_box "/dev/stdin, /dev/stdout, /dev/stderr" '(echo in | cat /dev/stdin >/dev/stdout) | grep -q in && (echo err >/dev/stderr) 2>&1 | grep -q err'

# a wide and deep tree, half of it in new sessions, killed by the timeout
m=$((RANDOM % 900 + 100))
cat >"$T/w/tree.py" <<PY
import os, time
def spawn(depth):
    for _ in range(6):
        pid = os.fork()
        if pid == 0:
            if depth % 2:
                os.setsid()
            if depth < 3:
                spawn(depth + 1)
            os.execvp("sleep", ["sleep", "7${m}"])
spawn(0)
time.sleep(100)
PY
run_sb run --timeout 2 -- python3 tree.py
left=$(pgrep -f "sleep 7${m}" | wc -l)
[ "$RC" = 124 ] && [ "$left" = 0 ] && ok "timeout: the whole tree is gone (wide, deep, setsid'd)" || {
	notok "timeout: the whole tree is gone" "rc=$RC left=$left"
	pkill -f "sleep 7${m}"
}
# a step that exits at once leaves nothing behind
run_sb run -- sh -c "(setsid sleep 8${m} &) ; sleep 8${m} & exit 0"
wait_for none_left "sleep 8${m}"
[ "$RC" = 0 ] && ! pgrep -f "sleep 8${m}" >/dev/null && ok "leftover processes die when the command exits" || {
	notok "leftover processes die when the command exits" "rc=$RC"
	pkill -f "sleep 8${m}"
}
# an unrelated process with the command's old pid is never signalled: the
# command's process group id is not reused by stepbox once the command is reaped
sleep 9${m} &
bystander=$!
run_sb run -- sh -c "kill -0 $bystander 2>/dev/null; exit 0"
kill -0 "$bystander" && ok "a bystander process survives" || notok "a bystander process survives"
kill "$bystander" 2>/dev/null

# stepbox SIGKILLed: every process of the step goes with it, on every backend
m=$((RANDOM % 900 + 100))
"$SB" run -- sh -c "sleep 5${m}1 & (setsid sleep 5${m}2 &); sleep 5${m}3" &
sb=$!
wait_for running "sleep 5${m}[123]" 3
kill -KILL "$sb"
wait "$sb" 2>/dev/null
wait_for none_left "sleep 5${m}[123]"
! pgrep -f "sleep 5${m}[123]" >/dev/null && ok "killing stepbox kills the whole tree, setsid'd grandchildren too" || {
	notok "killing stepbox kills the whole tree, setsid'd grandchildren too"
	pkill -f "sleep 5${m}[123]"
}
