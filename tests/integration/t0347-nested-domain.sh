#!/bin/bash
# t0347: a Landlock domain a process of the step takes itself (landrun, an
# agent confining its tools). The supervisor makes some calls on the step's
# behalf (a connect or a send under a port list, a UNIX socket's bind, a
# segment in the step's own /dev/shm under Landlock alone); made with
# stepbox's rules alone, they gave that process what its own domain
# refuses it (a connect to a port the domain does not list went through).
# Each is now made under a copy of the domains in the caller's line (its
# process and its parents), or refused, and --explain says so; the same
# calls without a domain are the controls, and so are the processes
# outside the domain's line.
# Every connect goes to 127.0.0.1, where nothing listens (ECONNREFUSED is a
# connect the sandbox let through).
. "$(dirname "$0")/lib.sh"

cp "$TESTDIR/nested-domain.py" "$T/nd.py"
chmod a+r "$T/nd.py"
p1=$((30000 + $$ % 20000)) p2=$((30001 + $$ % 20000))
mkdir -p "$T/w"
chmod 777 "$T/w"
nd() { # NET nested|none WHAT ARGS...: the helper in the step, with --explain
	local net=$1
	shift
	run_sb run --explain --net "$net" -r "$T/nd.py" -- python3 "$T/nd.py" "$@"
}
through() { case $1 in *ok | *ECONNREFUSED) return 0 ;; esac; return 1; }

if [ "$BACKEND" = mountns ]; then
	skip "a domain's own TCP rules" "port lists need Landlock (the other backends)"
else
	nd "tcp:$p1,$p2" none tcp "$p1" "$p2"
	if [ "$OUT" = no-landlock ]; then
		skip "a Landlock domain of the step's own" "no Landlock in this kernel"
		exit 0
	fi
	a=$(echo "$OUT" | sed -n 1p) b=$(echo "$OUT" | sed -n 2p)
	through "$a" && through "$b" && ok "control: both ports of the list connect (${a##* }, ${b##* })" ||
		notok "control: both ports of the list connect" "rc=$RC $OUT"
	nd "tcp:$p1,$p2" nested tcp "$p1" "$p2"
	a=$(echo "$OUT" | sed -n 1p) b=$(echo "$OUT" | sed -n 2p)
	through "$a" && [ "$b" = "connect $p2 EACCES" ] &&
		ok "under a domain that lists port $p1 only: $p1 connects (${a##* }), $p2 is refused" ||
		notok "under a domain that lists port $p1 only: $p2 is refused" "rc=$RC $OUT"
	grep -q "have stepbox make (a connect to TCP port $p2): refused for a Landlock domain a process of the step took itself" "$T/out/err" &&
		ok "--explain names the domain's refusal, not the policy's" ||
		notok "--explain names the domain's refusal" "$(grep -v '^  ~' "$T/out/err" | head -6)"
	# the line: a child forked after the domain is in it; the shell that ran
	# it, and a sibling with a domain of its own, are not; an orphan of the
	# line cannot be placed, and what would be made for it is refused
	nd "tcp:$p1,$p2" nested tcp "$p1" "$p2" child
	a=$(echo "$OUT" | sed -n 1p) b=$(echo "$OUT" | sed -n 2p)
	through "$a" && [ "$b" = "connect $p2 EACCES" ] &&
		ok "a child of the process that took the domain meets it too" ||
		notok "a child of the process that took the domain meets it too" "rc=$RC $OUT"
	run_sb run --net "tcp:$p1,$p2" -r "$T/nd.py" -- sh -c "python3 '$T/nd.py' nested tcp $p1 $p2 >/dev/null; python3 '$T/nd.py' nested tcp $p2 $p1; python3 '$T/nd.py' none tcp $p1 $p2"
	set -- $OUT # connect PORT RESULT, four times
	if [ "$3 $6" = "ECONNREFUSED EACCES" ] && through "$9" && through "${12}"; then
		ok "a sibling under a domain of its own meets its own, and a process outside both neither"
	else
		notok "a sibling meets its own domain, a process outside both neither" "rc=$RC $OUT"
	fi
	nd "tcp:$p1,$p2" nested tcp "$p1" "$p2" orphan
	[ "$OUT" = "$(printf 'connect %s EACCES\nconnect %s EACCES' "$p1" "$p2")" ] &&
		grep -q "have stepbox make (a connect)" "$T/out/err" &&
		ok "an orphan of the domain's line: what would be made for it is refused, and said" ||
		notok "an orphan of the domain's line: refused, and said" "rc=$RC $OUT" "$(grep -v '^  ~' "$T/out/err" | head -4)"
	# an orphan of the line that comes to a subreaper of the step's own above
	# the domain (not to the init): refused too, and so is a child it forks
	# after (which cannot be told from one) that takes a domain of its own;
	# the run is not broken: the subreaper's child forked before the domain,
	# and the subreaper itself, keep their connects
	nd "tcp:$p1,$p2" nested tcp "$p1" "$p2" subreaper
	set -- $OUT # connect PORT RESULT: the orphan's two, the late child's, the early one's, its own
	if [ "$3 $6 $9 ${12}" = "EACCES EACCES EACCES EACCES" ] && through "${15}" &&
		through "${18}" && through "${21}" && through "${24}"; then
		ok "an orphan that comes to a subreaper above the domain: refused; the subreaper and its child keep theirs"
	else
		notok "an orphan that comes to a subreaper above the domain: refused" "rc=$RC $OUT" "$(grep -v '^  ~' "$T/out/err" | head -4)"
	fi
	# an agent that runs its sub-steps in a stepbox of their own: the inner
	# one's domain (no network) is its step's, never the agent's connects
	run_sb run --net "tcp:$p1,$p2" -r "$(dirname "$STEPBOX")" -r "$T/nd.py" -w "$T/w" -- sh -c \
		"'$STEPBOX' run -q -C '$T/w' --net none -- true && echo inner-ran; python3 '$T/nd.py' none tcp $p1 $p2"
	set -- $OUT
	if [ "$1" = inner-ran ] && through "$4" && through "$7"; then
		ok "an inner stepbox's domain is its step's: the agent around it still connects"
	else
		notok "an inner stepbox's domain is its step's: the agent around it still connects" "rc=$RC $OUT" "$(tail -3 "$T/out/err")"
	fi
	# the same with the protected paths off (their filter trapped
	# landlock_restrict_self alone before)
	run_sb run --unprotect '*' --net "tcp:$p1,$p2" -r "$T/nd.py" -- python3 "$T/nd.py" nested tcp "$p1" "$p2"
	[ "$(echo "$OUT" | sed -n 2p)" = "connect $p2 EACCES" ] &&
		ok "... and with --unprotect '*' (no live layer)" ||
		notok "... and with --unprotect '*' (no live layer)" "rc=$RC $OUT"
	# a port the step's own list lacks stays the policy's refusal
	nd "tcp:$p1" nested tcp "$p1" "$p2"
	grep -q "connect tcp port $p2: not allowed by the network policy" "$T/out/err" &&
		ok "--explain: a port the step's list lacks is the policy's, under a domain too" ||
		notok "--explain: a port the step's list lacks is the policy's" "$(grep -v '^  ~' "$T/out/err" | head -6)"
fi

# a UNIX socket's bind: the supervisor makes it under a port list (Landlock
# alone and stacked), the kernel in a network namespace of the step's own
net=tcp:$p1
[ "$BACKEND" = mountns ] && net=none
nd "$net" none unix "$T/w"
[ "$OUT" = "bind ok" ] && ok "control: a UNIX socket bound in a granted folder ($net)" ||
	notok "control: a UNIX socket bound in a granted folder ($net)" "rc=$RC $OUT"
nd "$net" nested unix "$T/w"
if [ "$OUT" = no-landlock ]; then
	skip "a Landlock domain of the step's own" "no Landlock in this kernel"
	exit 0
fi
[ "$OUT" = "bind EACCES" ] && [ ! -e "$T/w/s" ] &&
	ok "under a domain that makes sockets nowhere: the bind is refused ($net)" ||
	notok "under a domain that makes sockets nowhere: the bind is refused ($net)" "rc=$RC $OUT"
if [ "$net" != none ]; then
	grep -q "have stepbox make (a UNIX socket's bind): refused for a Landlock domain" "$T/out/err" &&
		ok "--explain names the bind refused for the domain" ||
		notok "--explain names the bind refused for the domain" "$(grep -v '^  ~' "$T/out/err" | head -6)"
fi

# what a process under a domain of its own makes, the domain's keeper makes
# for it (the protected paths' live layer): with the process's umask
nd none none umask "$T/w"
ctl=$OUT
nd none nested umask "$T/w"
[ "$ctl" = "0o600 0o700" ] && [ "$OUT" = "0o600 0o700" ] &&
	ok "a file and a folder made under a domain of its own keep the umask (077: $OUT)" ||
	notok "a file and a folder made under a domain of its own keep the umask" "control: $ctl" "nested: rc=$RC $OUT"

# a shared memory segment: the step's own /dev/shm (served by the supervisor
# under Landlock alone, a private tmpfs under the namespaces)
nd none none shm
[ "$OUT" = "shm ok" ] && ok "control: a shared memory segment made" || notok "control: a shared memory segment made" "rc=$RC $OUT"
nd none nested shm
[ "$OUT" = "shm EACCES" ] && ok "under a domain that makes files nowhere: no shared memory segment" ||
	notok "under a domain that makes files nowhere: no shared memory segment" "rc=$RC $OUT"
if [ "$BACKEND" = landlock ]; then
	grep -q "have stepbox make (/dev/shm/psm_[0-9a-f]*): refused for a Landlock domain" "$T/out/err" &&
		ok "--explain names the segment refused for the domain" ||
		notok "--explain names the segment refused for the domain" "$(grep -v '^  ~' "$T/out/err" | head -6)"
fi
