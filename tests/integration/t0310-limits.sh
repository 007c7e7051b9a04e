#!/bin/bash
# t0310: a step cannot take the host down. A fork bomb, an allocation loop, a
# /tmp filler, an output flood, a busy loop and a large file each meet their
# limit, stepbox names it, and the same program under the limit succeeds.
. "$(dirname "$0")/lib.sh"

# the harness's own safety net: above the limits below, so a stepbox that
# failed to set them cannot stall the machine (root's tasks are not counted)
ulimit -u 8000 2>/dev/null || true

json() { # FILE EXPR: a value of a JSON file, printed
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# how this backend and user enforce each limit here: what the report says
run_sb run --limit tasks=256 --limit memory=200M --report "$T/out/plan.json" -- true
if [ "$RC" != 0 ]; then
	notok "a step runs with limits asked for" "exit $RC"
	exit 0
fi
tasks_by=$(json "$T/out/plan.json" 'r["limits"]["tasks"]["enforced_by"]')
mem_by=$(json "$T/out/plan.json" 'r["limits"]["memory"]["enforced_by"]')
echo "# tasks: $tasks_by; memory: $mem_by"
case "$tasks_by" in
*cgroup*|*RLIMIT_NPROC*) ok "the tasks limit is enforced ($tasks_by)" ;;
*) notok "the tasks limit is enforced" "enforced_by: $tasks_by" ;;
esac
run_sb check
echo "$OUT" | grep -q "^limits: .*tasks 4096" && ok "check names the limits a step gets here" ||
	notok "check names the limits a step gets here" "$(echo "$OUT" | grep limits)"

# Landlock alone, unprivileged: RLIMIT_NPROC counts the user's other tasks
# too, so the step's share comes on top: the user's tasks counted when the
# limit is asked for, every task of the host for the default (one read)
user_tasks() { ps -u "$(id -u)" -L --no-headers | wc -l; }
host_tasks() { awk '{split($4, a, "/"); print a[2]}' /proc/loadavg; }
case "$tasks_by" in
*"user's other tasks"*)
	# the suite runs other families as this user beside this one: the count
	# moves between the test's look and stepbox's, so it is bracketed; a
	# fork bomb beside may be counted by stepbox alone, and it is then looked
	# at again (three tries)
	host=$(host_tasks)
	for _ in 1 2 3; do
		mine=$(user_tasks)
		run_sb run --limit tasks=256 -- sh -c 'awk "/^Max processes/ {print \$3}" /proc/self/limits'
		most=$(user_tasks)
		[ "$most" -gt "$mine" ] || most=$mine
		[ "$RC" = 0 ] && [ "$OUT" -gt 256 ] && [ "$OUT" -le $((256 + most + 64)) ] && break
	done
	[ "$RC" = 0 ] && [ "$OUT" -gt 256 ] && [ "$OUT" -le $((256 + most + 64)) ] &&
		ok "an asked tasks limit comes on top of the user's own tasks ($OUT: 256 + about $mine)" ||
		notok "an asked tasks limit comes on top of the user's own tasks" "rc=$RC" "RLIMIT_NPROC $OUT, the user has about $mine"
	# (the tests beside this one fork hundreds at a time, this user's too:
	# the host's count is bracketed by a look after, and given room; the
	# user's, the least of its looks, as a fork bomb beside may end between)
	least=$(user_tasks)
	run_sb run -- sh -c 'awk "/^Max processes/ {print \$3}" /proc/self/limits'
	host2=$(host_tasks)
	[ "$host2" -gt "$host" ] && host=$host2
	after=$(user_tasks)
	[ "$after" -lt "$least" ] && least=$after
	[ "$RC" = 0 ] && [ "$OUT" -ge $((4096 + least)) ] && [ "$OUT" -le $((4096 + host + 1000)) ] &&
		ok "the default tasks limit comes on top of the host's tasks ($OUT: 4096 + about $host)" ||
		notok "the default tasks limit comes on top of the host's tasks" "rc=$RC" "RLIMIT_NPROC $OUT, the host has about $host, the user at least $least"
	;;
esac

# --- tasks: a fork bomb ends with the limit named, and nothing of it is left
in_box "positive control: 40 processes under a tasks limit of 256" \
	'for i in $(seq 40); do sleep 0.2 & done; wait' --limit tasks=256
# the bomb's own processes, by a mark in their command line (forked shells
# keep it): the host's other processes come and go beside the suite
mark="sleep 10$((RANDOM % 900 + 100))"
before=$(pgrep -fc -- "$mark")
# once more where the first was not named: with four tests at once on two
# cores, a bomb under RLIMIT_NPROC may not meet its limit in the 4 s
for try in 1 2; do
	run_sb run --limit tasks=256 --timeout 4 --report "$T/out/bomb.json" -- sh -c "f(){ f|f& }; f; $mark"
	for _ in 1 2 3 4 5 6 7 8 9 10; do # what the kernel still reaps
		after=$(pgrep -fc -- "$mark")
		[ "$after" -le "$before" ] && break
		sleep 0.5
	done
	[ "$try" = 2 ] || ! grep -q "tasks limit (256)" "$T/out/err" || break
done
# the timeout ends it (124), or the bomb's own shell first, when the fork
# of its last command is refused too (sh: Cannot fork, 2)
if { [ "$RC" = 124 ] || [ "$RC" = 2 ]; } && grep -q "tasks limit (256)" "$T/out/err"; then
	ok "a fork bomb: the timeout or its own shell ends it, and stepbox names the tasks limit"
else
	notok "a fork bomb: stepbox names the tasks limit" "exit $RC" "$(grep stepbox: "$T/out/err" | head -3)"
fi
[ "$after" -le "$before" ] && ok "after a fork bomb none of its processes is left ($before, $after)" ||
	notok "after a fork bomb none of its processes is left" "before $before, after $after"
[ "$(json "$T/out/bomb.json" 'r["limit_reached"]')" = tasks ] &&
	[ "$(json "$T/out/bomb.json" 'r["limits"]["tasks"]["value"]')" = 256 ] &&
	ok "the report says the tasks limit was reached" ||
	notok "the report says the tasks limit was reached" "$(json "$T/out/bomb.json" 'r.get("limit_reached")')"

# --- tasks: a step that hits its limit and goes on (its forks fail with
# EAGAIN, it copes, exits 0) still has the limit named: by the cgroup's count,
# or under RLIMIT_NPROC, which tells no one, by --explain's tracer
cat >"$T/w/spawn.py" <<'PY'
import subprocess
ps, failed = [], 0
for i in range(120):
    try:
        ps.append(subprocess.Popen(["sleep", "1"]))
    except OSError:
        failed += 1
for p in ps:
    p.wait()
print("survived", len(ps), "failed", failed)
PY
# under RLIMIT_NPROC the uid's other tasks count (the other tests' as 65534):
# a start refused for them (EAGAIN, 125) is tried again, a few times
for _ in 1 2 3 4 5; do
	run_sb run --explain --limit tasks=40 --report "$T/out/survived.json" -- python3 spawn.py
	[ "$RC" = 125 ] && grep -q "Resource temporarily unavailable" "$T/out/err" || break
	sleep 2
done
case "$RC:$OUT" in
"0:survived "*" failed 0") skip "a tasks limit hit and survived is named" "no fork was refused ($tasks_by): $OUT" ;;
"0:survived "*)
	grep -Eq "tasks limit \(40\): [0-9]+ forks? (was|were) refused" "$T/out/err" &&
		[ "$(json "$T/out/survived.json" 'r["limit_reached"]')" = tasks ] &&
		ok "a tasks limit hit and survived is named, on stderr and in the report ($OUT)" ||
		notok "a tasks limit hit and survived is named, on stderr and in the report" "$OUT" "$(grep stepbox: "$T/out/err" | head -3)" ;;
*) notok "a tasks limit hit and survived is named" "rc=$RC $OUT" "$(grep stepbox: "$T/out/err" | head -3)" ;;
esac

# --- memory: an allocation loop ends with the limit named
cat >"$T/w/alloc.py" <<'PY'
import sys
mib = int(sys.argv[1])
a = [bytearray(2**20) for _ in range(mib)]
print("allocated", mib, "MiB")
PY
in_box "positive control: 50 MiB under a memory limit of 200 MiB" 'python3 alloc.py 50' --limit memory=200M
run_sb run --limit memory=200M -- python3 alloc.py 100000
if [ "$RC" != 0 ] && grep -q "memory limit (200 MiB" "$T/out/err"; then
	ok "an allocation loop ends, and stepbox names the memory limit ($mem_by)"
else
	notok "an allocation loop ends with the memory limit named" "exit $RC" "$(grep stepbox: "$T/out/err" | head -3)"
fi

# --- tmp: the private /tmp is a size-capped tmpfs; the host's is untouched
fill=fill-$$-$RANDOM
if [ "$BACKEND" = landlock ]; then
	expect "tmp asked under Landlock alone: refused, not ignored" 125 "Landlock alone has none" -- \
		run --limit tmp=16M -- true
else
	in_box "positive control: 8 MiB fit a 16 MiB /tmp" "head -c 8M /dev/zero >/tmp/$fill" --limit tmp=16M
	run_sb run --limit tmp=16M -- sh -c "head -c 20M /dev/zero >/tmp/$fill"
	if [ "$RC" != 0 ] && grep -q "No space left on device" "$T/out/err" && [ ! -e "/tmp/$fill" ]; then
		ok "a /tmp filler gets ENOSPC inside the step, and the host's /tmp has nothing of it"
	else
		notok "a /tmp filler gets ENOSPC" "exit $RC"
	fi
fi

# --- output: a flood is cut at the limit with a marker; stepbox stays small
run_sb run --limit output=1000 -- sh -c 'echo hi; echo there >&2'
[ "$RC" = 0 ] && [ "$OUT" = hi ] && grep -q there "$T/out/err" &&
	ok "positive control: output under its limit passes through, stdout and stderr apart" ||
	notok "output under its limit passes through" "exit $RC out=$OUT"
cat >"$T/w/flood.py" <<PY
import resource, subprocess, sys
p = subprocess.run(["$SB", "run", "--limit", "output=1000", "--", "sh", "-c",
                    "yes flood | head -c 200000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(p.returncode, len(p.stdout), rss, p.stderr.decode(errors="replace").replace("\n", " "))
PY
read -r rc bytes rss rest < <(python3 "$T/w/flood.py")
if [ "$rc" = 0 ] && [ "$bytes" -le 1000 ] && [ "$bytes" -ge 900 ] && [[ $rest == *"output reached its limit"* ]]; then
	ok "a 200 MB flood: 1000 bytes pass, then a marker"
else
	notok "a 200 MB flood is cut with a marker" "rc=$rc bytes=$bytes stderr=$rest"
fi
[ "$rss" -lt 65536 ] && ok "stepbox's memory stays bounded under the flood (${rss} KiB)" ||
	notok "stepbox's memory stays bounded under the flood" "max RSS ${rss} KiB"

# --- cpu_s, file_size, open_files: rlimits of each process
in_box "positive control: a short command under cpu_s=5" 'true' --limit cpu_s=5
expect "a busy loop ends at cpu_s, named" 152 "CPU time limit (1 s per process)" -- \
	run --limit cpu_s=1 -- sh -c 'while :; do :; done'
in_box "positive control: 512 KiB under file_size=1M" 'head -c 512K /dev/zero >small' --limit file_size=1M
expect "a file past file_size: SIGXFSZ, named" 153 "file size limit (1 MiB per file)" -- \
	run --limit file_size=1M -- sh -c 'head -c 2M /dev/zero >big'
run_sb run --limit open_files=64 -- python3 -c '
import os
fds = []
try:
    while True: fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e: print(len(fds), e.strerror)'
[ "$RC" = 0 ] && [[ $OUT == *"Too many open files" ]] && [ "${OUT%% *}" -lt 64 ] && [ "${OUT%% *}" -gt 50 ] &&
	ok "open_files=64: the 64th descriptor is refused" || notok "open_files=64 is enforced" "exit $RC: $OUT"

# --- a tree of a few thousand processes, detached every way, all gone
m=$((RANDOM % 900 + 100))
cat >"$T/w/tree.py" <<PY
import os, time
def daemon():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 3)
            os.execvp("sleep", ["sleep", "6${m}"])
        os._exit(0)
for i in range(40):
    if os.fork() == 0:
        if i % 2:
            os.setsid()
        for _ in range(49):
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "6${m}"])
        daemon()
        time.sleep(100)
        os._exit(0)
time.sleep(100)
PY
run_sb run --timeout 5 -- python3 tree.py
left=$(pgrep -f "sleep 6${m}" | wc -l)
[ "$RC" = 124 ] && [ "$left" = 0 ] && ok "a tree of 2,000 processes with daemons: all gone when run returns" || {
	notok "a tree of 2,000 processes: all gone when run returns" "rc=$RC left=$left"
	pkill -f "sleep 6${m}"
}

# --- input: bad values are refused before anything runs
expect "--limit with an unknown unit: 125" 125 "memory: '12Q'" -- run --limit memory=12Q -- true
expect "--limit with an unknown name: 125" 125 "NAME one of memory" -- run --limit heap=1G -- true
expect "--limit tasks=0: 125" 125 "tasks" -- run --limit tasks=0 -- true
printf '{"version": 1,\n "limits": {"tasks": 0}}\n' >"$T/bad.json"
expect "a policy's limit of 0: 125, with line and column" 125 "line 2, column" -- run -p "$T/bad.json" -- true
printf '{"version": 1, "limits": {"memory": "300M", "output": 5000}}\n' >"$T/good.json"
run_sb run -p "$T/good.json" --report "$T/out/good.json" -- true
[ "$RC" = 0 ] && [ "$(json "$T/out/good.json" 'r["limits"]["memory"]["value"]')" = 314572800 ] &&
	[ "$(json "$T/out/good.json" 'r["limits"]["output"]["asked"]')" = True ] &&
	ok "a policy's limits (sizes as strings or numbers) reach the report" ||
	notok "a policy's limits reach the report" "exit $RC"
printf '{"version": 1, "limits": "none"}\n' >"$T/none.json"
run_sb run -p "$T/none.json" --report "$T/out/none.json" -- true
[ "$RC" = 0 ] && [ "$(json "$T/out/none.json" '"tasks" in r["limits"]')" = False ] &&
	ok '"limits": "none" drops the defaults' || notok '"limits": "none" drops the defaults' "exit $RC"

# --- the guide tells an agent the limits it will meet, as they are enforced
run_sb guide --limit output=1M --limit cpu_s=60
if [ "$RC" = 0 ] && echo "$OUT" | grep -q '^- 4096 processes and threads at once' &&
	echo "$OUT" | grep -q '^- 1 MiB of output' && echo "$OUT" | grep -q '^- 60 s of CPU time per process'; then
	ok "guide: the limits an agent will meet"
else
	notok "guide: the limits an agent will meet" "$(echo "$OUT" | sed -n '/## Limits/,/## Not/p' | head -8)"
fi

# a hard limit the caller already has below stepbox's default is kept, and the
# step runs (raising a hard limit needs CAP_SYS_RESOURCE: Podman's --ulimit)
hard='import resource as r; print(*(r.getrlimit(x)[1] for x in (r.RLIMIT_NPROC, r.RLIMIT_NOFILE)))'
run_sb run -- python3 -c "$hard"
want_ok=$RC
prlimit --nproc=3000:3000 --nofile=512:512 "$SB" run -- python3 -c "$hard" \
	>"$T/out/out" 2>"$T/out/err"
RC=$?
got=$(tr '\n' ' ' <"$T/out/out")
set -- $got
if [ "$want_ok" = 0 ] && [ "$RC" = 0 ] && [ "${1:-99999}" -ge 0 ] && [ "${1:-99999}" -le 3000 ] && [ "${2:-x}" = 512 ]; then
	ok "a caller's lower hard limits are kept and the step runs (nproc ${1:-?}, nofile ${2:-?})"
else
	notok "a caller's lower hard limits are kept and the step runs" "exit $RC, got: $got"
fi
