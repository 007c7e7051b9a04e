#!/bin/sh
# tests/containers/inside.sh: run inside a container (tests/containers/run.sh)
# as the user under test. Prints one test line each. Environment:
#   SB       stepbox (static)         SETTING  the setting's name, for the lines
#   AUTO     the backend auto must pick here; none: no backend (gVisor)
#   SUP      the supervisor check must name: full | without pidfd_getfd
#   CAUSE    a regex the refusal of each unavailable backend must match
set -u
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/sbct.XXXXXX)
mkdir -p "$T/w" "$T/host"
cd "$T/w" || exit 1
ok() { echo "ok - [$SETTING] $1"; }
notok() { echo "not ok - [$SETTING] $1"; shift; for l in "$@"; do echo "# $l"; done; }
t() { if eval "$2"; then ok "$1"; else notok "$1" "$3"; fi; }

# host services outside every grant: a pathname socket, an abstract name, TCP
python3 "$here/host.py" "$T/host" &
hostpid=$!
for _ in $(seq 50); do [ -e "$T/host/port" ] && break; sleep 0.1; done
port=$(cat "$T/host/port")

# the positive control, without stepbox: the container itself lets this user
# write there and reach the services
echo x >"$T/host/control" 2>/dev/null
t "control: the container lets this user write outside the step's folder" '[ -s "$T/host/control" ]'
out=$(cd "$T/w" && python3 "$here/probe.py" "$T/host" "$port" ctl)
t "control: the host's socket is reached without stepbox" \
	'echo "$out" | grep -q "\"unix_host\": \"ok\""' "$out"

"$SB" check --json >"$T/check.json" 2>"$T/check.err"
q() { python3 -c "import json,sys; d=json.load(open('$T/check.json')); print($1)"; }
auto=$(q 'd["auto_backend"] or "none"')
t "check: auto is $AUTO" '[ "$auto" = "$AUTO" ]' "auto is $auto"
if [ "$AUTO" != none ]; then
	sup=$(q "d['backends']['$AUTO'].get('supervisor')" 2>/dev/null)
	t "check: the supervisor is $SUP" '[ "$sup" = "$SUP" ]' "supervisor: $sup"
fi

for b in stacked landlock mountns; do
	avail=$(q "d['backends']['$b']['available']")
	"$SB" run -q --backend "$b" -- sh -c 'echo in >inside' >"$T/run.out" 2>"$T/run.err"
	rc=$?
	if [ "$avail" = True ]; then
		t "$b: check says available, and run runs (exit $rc)" '[ $rc = 0 ] && [ "$(cat inside)" = in ]' \
			"$(head -3 "$T/run.err")"
		rm -f "$T/host/z"
		"$SB" run -q --backend "$b" -- sh -c "echo y >'$T/host/z'" >/dev/null 2>&1
		t "$b: a write outside every grant is refused" '[ ! -e "$T/host/z" ]'
	else
		# shellcheck disable=SC2034 # read by the check's condition, which t evaluates
		msg=$(q "d['backends']['$b']['error']")
		t "$b: check says unavailable, and run is 125 (exit $rc)" '[ $rc = 125 ]' "$(head -3 "$T/run.err")"
		"$SB" check >"$T/check.txt" 2>&1
		hint=$(grep -A1 "^backend $b:" "$T/check.txt")
		t "$b: the refusal names the cause planted here" 'echo "$hint" | grep -qE "$CAUSE"' "$hint"
		t "$b: and no advice that would not help" '! echo "$hint" | grep -q "lsm="' "$hint"
	fi
	rm -f inside
done

# no backend (gVisor): every run refused before the command, saying why,
# and doctor failing on it; the control above wrote where the step would
if [ "$AUTO" = none ]; then
	for how in "" "--backend none"; do
		rm -f "$T/host/z"
		"$SB" run -q $how -- sh -c "echo y >'$T/host/z'; echo in >inside" >/dev/null 2>"$T/run.err"
		rc=$?
		t "no backend: run ${how:-(auto)} is 125 and names the cause (exit $rc)" \
			'[ $rc = 125 ] && grep -qE "$CAUSE" "$T/run.err"' "$(head -3 "$T/run.err")"
		t "no backend: run ${how:-(auto)} ran nothing" '[ ! -e "$T/host/z" ] && [ ! -e inside ]'
	done
	"$SB" doctor >"$T/doctor.txt" 2>&1
	t "no backend: doctor fails on the backends, naming the cause" \
		'grep -A1 "FAIL  backends" "$T/doctor.txt" | grep -qE "$CAUSE"' "$(grep -A1 backends "$T/doctor.txt")"
	kill $hostpid 2>/dev/null
	rm -rf "$T"
	exit 0
fi

# the supervisor under the backend auto picked: the step's own sockets and
# TCP reached, the host's refused, datagram sockets as the mode says
cp "$here/probe.py" "$T/w/"
out=$("$SB" run -q --net allow -- python3 probe.py "$T/host" "$port" "$$" 2>"$T/run.err")
field() { echo "$out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1]).get(sys.argv[1]))' "$1" 2>/dev/null; }
for pair in unix_here:HI tcp:xy fchmod_here:ok "unix_host:EACCES|EPERM|ENOENT" \
	"abstract_host:EACCES|EPERM" "fchmod_host:EACCES|EPERM|ENOENT"; do
	name=${pair%%:*} want=${pair#*:}
	got=$(field "$name")
	t "$AUTO: $name: $got" 'echo "$got" | grep -qxE "$want"' "want $want; $(head -3 "$T/run.err")"
done
# the modes a step asks for, whatever stepbox's umask (here, a performer that
# shares it where the engine's seccomp profile refuses unshare)
modes=$(cd "$T/w" && umask 022 && "$SB" run -q -- sh -c 'umask 027; touch m1; mkdir m2; umask 0; touch m3; mkdir m4
	stat -c %a m1 m2 m3 m4 | tr "\n" " "' 2>"$T/run.err")
t "$AUTO: files and folders made with the step's umask: $modes" '[ "$modes" = "640 750 666 777 " ]' \
	"$(head -3 "$T/run.err")"
want=ok
[ "$SUP" = full ] || want=EACCES
got=$(field dgram)
t "$AUTO: a UNIX datagram socket: $got" '[ "$got" = "$want" ]' "want $want"
kill $hostpid 2>/dev/null
rm -rf "$T"
