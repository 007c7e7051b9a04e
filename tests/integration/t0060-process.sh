#!/bin/bash
# t0060: the process tree: timeout, death of stepbox, signals, leftovers.
. "$(dirname "$0")/lib.sh"

gone() { ! pgrep -u "$(id -u)" -f "$1" >/dev/null; }
m=$((RANDOM % 900 + 100))

start=$(date +%s)
run_sb run --timeout 1 -- sh -c "sleep 7${m}1 & (setsid sleep 7${m}2 &); sleep 7${m}3"
took=$(($(date +%s) - start))
[ "$RC" = 124 ] && [ "$took" -lt 10 ] && grep -q "timed out" "$T/out/err" && ok "--timeout exits 124" || notok "--timeout exits 124" "rc=$RC took=$took"
wait_for gone "sleep 7${m}[123]"
gone "sleep 7${m}[123]" && ok "--timeout kills grandchildren, even a setsid one" || notok "--timeout kills grandchildren, even a setsid one" "$(pgrep -af "sleep 7$m")"
run_sb run --timeout 5 -- true
[ "$RC" = 0 ] && ok "a command faster than its timeout" || notok "a command faster than its timeout"

"$SB" run -- sleep "8${m}1" &
sb=$!
wait_for running "sleep 8${m}1"
kill -KILL "$sb"
wait "$sb" 2>/dev/null
wait_for gone "sleep 8${m}1"
gone "sleep 8${m}1" && ok "the child dies when stepbox is killed" || notok "the child dies when stepbox is killed"

"$SB" run -- sh -c "trap 'exit 42' TERM; sleep 10${m}4 & wait" &
sb=$!
wait_for running "sleep 10${m}4" # the trap is set before it starts
kill -TERM "$sb"
wait "$sb"
rc=$?
[ "$rc" = 42 ] && ok "SIGTERM forwarded to the command" || notok "SIGTERM forwarded to the command" "rc=$rc"

run_sb run -- sh -c "sleep 9${m}1 & exit 0"
wait_for gone "sleep 9${m}1"
[ "$RC" = 0 ] && gone "sleep 9${m}1" && ok "what the command leaves running is killed when it exits" || notok "what the command leaves running is killed when it exits"
