#!/bin/bash
# t0208: as root, a read grant that covers /etc keeps what is not
# world-readable hidden, whatever asked for it (issue 10, item 9): -r /etc,
# -r /, SANDBOX_EXTRA_SYSTEM_PATHS=/etc, -r /etc/ssl. A grant naming a hidden
# entry exactly gets it.
. "$(dirname "$0")/lib.sh"

if ! is_root; then
	skip "/etc secrets under explicit grants" "only root reads them; for other users DAC hides them already"
	exit 0
fi

# every file root could read that others cannot: the platform's own check (field notes)
find /etc -type f ! -perm -o=r 2>/dev/null >"$T/w/secrets"
[ -s "$T/w/secrets" ] || echo /etc/shadow >"$T/w/secrets"
grep -qx /etc/shadow "$T/w/secrets" || echo /etc/shadow >>"$T/w/secrets"
# and every folder others cannot list (/etc/ssl/private): not even its names
find /etc -type d \( ! -perm -o=r -o ! -perm -o=x \) 2>/dev/null >"$T/w/folders"
# inside: /etc/passwd must be readable (the control: a broken reader cannot
# pass), and no listed file may be read, no listed folder listed
cat >"$T/w/check.sh" <<SH
head -c1 /etc/passwd >/dev/null || { echo "CONTROL-FAILED"; exit 3; }
echo "CONTROL-OK"
n=0
while IFS= read -r f; do
	if head -c1 "\$f" >/dev/null 2>&1; then echo "LEAK \$f"; n=\$((n + 1)); fi
done <'$T/w/secrets'
while IFS= read -r d; do
	if ls "\$d" >/dev/null 2>&1; then echo "LISTED \$d"; n=\$((n + 1)); fi
done <'$T/w/folders'
exit \$n
SH

hidden() { # NAME ARGS...: every secret is unreadable under ARGS, /etc/passwd readable
	local name=$1
	shift
	run_sb run "$@" -- sh "$T/w/check.sh"
	if [ "$RC" = 125 ] && [ "$BACKEND" = mountns ] && grep -q "cannot make the symlink '/dev/ptmx'" "$T/out/err"; then
		skip "$name" "the mountns backend cannot bind the host's /dev whole yet (/dev/ptmx), a grant of / splits into /dev"
	elif [ "$RC" = 0 ] && echo "$OUT" | grep -q CONTROL-OK; then
		ok "$name"
	else
		notok "$name" "exit $RC" "$(echo "$OUT" | grep -m5 -E 'LEAK|LISTED|CONTROL' | tr '\n' ' ')"
	fi
}
hidden "baseline: /etc secrets hidden"
hidden "-r /etc: secrets hidden" -r /etc
hidden "-r /: secrets hidden" -r /
SANDBOX_EXTRA_SYSTEM_PATHS=/etc hidden "SANDBOX_EXTRA_SYSTEM_PATHS=/etc: secrets hidden"
SANDBOX_EXTRA_SYSTEM_PATHS=/opt:/etc hidden "SANDBOX_EXTRA_SYSTEM_PATHS=/opt:/etc: secrets hidden"
hidden "-r /etc/ssl: secrets hidden" -r /etc/ssl
hidden "-r /etc and -r /etc/ssl/certs: secrets hidden" -r /etc -r /etc/ssl/certs
hidden "read-only workdir /, allowed: secrets hidden" --allow-broad-grants --workdir-readonly -C /

# the namespaces' way (an idmapped /etc) and the walk's, which Landlock alone
# and a file system without idmapped mounts use: the walk is tried under the
# namespaces too (STEPBOX_IDMAP=0), so its hiding mounts are tested here
if [ "$BACKEND" != landlock ]; then
	STEPBOX_IDMAP=0 hidden "walked, not idmapped: baseline secrets hidden"
	STEPBOX_IDMAP=0 hidden "walked, not idmapped: -r /etc and -r /etc/ssl/certs" -r /etc -r /etc/ssl/certs
	STEPBOX_IDMAP=0 hidden "walked, not idmapped: -r /" -r /
	# a secret the host replaces (shadow-utils renames a new file over
	# /etc/shadow) or adds while the step runs: under mountns, with no
	# Landlock behind the mounts, a cover over the old file was detached
	# and the new file read; under stacked Landlock has no rule for it
	sec=/etc/stepbox-t0208-secret-$$
	trap 'rm -f "$sec" "$sec.new" "$sec.added"' EXIT
	echo old-secret >"$sec"
	chmod 600 "$sec"
	( sleep 0.8
	  echo new-secret >"$sec.new" && chmod 600 "$sec.new" && mv -f "$sec.new" "$sec"
	  echo added-secret >"$sec.added" && chmod 600 "$sec.added" ) &
	STEPBOX_IDMAP=0 run_sb run -- sh -c "cat '$sec' 2>/dev/null || echo before-hidden; sleep 1.6
		head -c1 /etc/passwd >/dev/null && echo CONTROL-OK
		cat '$sec' '$sec.added' 2>/dev/null; echo after"
	wait
	if [ "$RC" = 0 ] && echo "$OUT" | grep -qx before-hidden && echo "$OUT" | grep -qx CONTROL-OK &&
		! echo "$OUT" | grep -q secret && [ "$(cat "$sec")" = new-secret ]; then
		ok "walked, not idmapped: a secret replaced or added on the host while the step runs stays hidden"
	else
		notok "walked, not idmapped: a secret replaced or added on the host while the step runs stays hidden" "exit $RC" "$(echo "$OUT" | tr '\n' ' ')"
	fi
	rm -f "$sec" "$sec.new" "$sec.added"
fi

# stepbox policy says what it hid, and how
policy_says() { # NAME MODE [ENV...]: MODE walk or idmap
	local name=$1 mode=$2
	shift 2
	env "$@" "$SB" policy -r /etc >"$T/out/policy" 2>"$T/out/err"
	MODE=$mode python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
g = {x["path"]: x for x in d["grants"]}
if os.environ["MODE"] == "walk":
    assert any(s["path"] == "/etc/shadow" and "hidden" in s["reason"] for s in d["skipped"]), "no skip"
    assert "/etc" not in g and "/etc/shadow" not in g, "rule for /etc"
    assert g["/etc/passwd"]["origin"] == "flag", "no /etc/passwd rule"
else:
    assert g["/etc"].get("world_readable_only") is True, "/etc not world-readable-only"
    assert "/etc/shadow" not in g, "rule for /etc/shadow"
' "$T/out/policy" && ok "$name" || notok "$name" "$(head -c 300 "$T/out/policy")"
}
if [ "$BACKEND" = landlock ]; then
	policy_says "policy: /etc walked under Landlock alone, /etc/shadow skipped" walk
else
	policy_says "policy: /etc bound idmapped, world-readable only" idmap
	policy_says "policy: STEPBOX_IDMAP=0 walks /etc, /etc/shadow skipped" walk STEPBOX_IDMAP=0
fi

# --explain names the reason, whichever way it was hidden
run_sb run --explain -- sh -c 'head -c1 /etc/passwd >/dev/null && echo CONTROL-OK; cat /etc/shadow'
if echo "$OUT" | grep -q CONTROL-OK && grep -q "read '/etc/shadow': hidden on purpose: not world-readable" "$T/out/err"; then
	ok "explain: /etc/shadow hidden on purpose"
else
	notok "explain: /etc/shadow hidden on purpose" "exit $RC: $OUT"
fi

# a file the step tried to create in /etc hides nothing: it is a system
# folder's, not a hidden entry (the explanation an agent acts on)
run_sb run --explain -- sh -c 'head -c1 /etc/passwd >/dev/null && echo CONTROL-OK; echo x > /etc/stepbox-t0208-new'
if echo "$OUT" | grep -q CONTROL-OK && grep -q "'/etc/stepbox-t0208-new': a system folder" "$T/out/err" &&
	! grep -q "stepbox-t0208-new': hidden" "$T/out/err"; then
	ok "explain: a new file in /etc is a system folder's, not hidden"
else
	notok "explain: a new file in /etc is a system folder's, not hidden" "exit $RC: $OUT" "$(grep t0208-new "$T/out/err")"
fi

# naming the entry exactly grants it (and only it)
run_sb run -r /etc/shadow -- sh -c 'head -c1 /etc/shadow >/dev/null && echo SHADOW-READ; head -c1 /etc/gshadow >/dev/null 2>&1 && echo GSHADOW-READ; true'
if [ "$RC" = 0 ] && echo "$OUT" | grep -q SHADOW-READ && ! echo "$OUT" | grep -q GSHADOW-READ; then
	ok "-r /etc/shadow grants /etc/shadow, and nothing else hidden"
else
	notok "-r /etc/shadow grants /etc/shadow, and nothing else hidden" "exit $RC: $OUT"
fi
# only by its own name: a link another step planted in a folder it may
# write (shared/cfg -> /etc/shadow) names nothing hidden for a step that
# asks for shared/cfg (a red-team pass read /etc/shadow so on every backend)
mkdir -p "$T/shared"
run_sb run -w "$T/shared" -- ln -s /etc/shadow "$T/shared/cfg"
run_sb run -r "$T/shared/cfg" -- sh -c "head -c1 /etc/passwd >/dev/null && echo CONTROL-OK; head -c1 '$T/shared/cfg' >/dev/null 2>&1 && echo LEAK; true"
if [ -L "$T/shared/cfg" ] && echo "$OUT" | grep -qx CONTROL-OK && ! echo "$OUT" | grep -q LEAK; then
	ok "a planted link to /etc/shadow, asked for by the link's name, grants nothing hidden"
else
	notok "a planted link to /etc/shadow, asked for by the link's name, grants nothing hidden" "exit $RC: $OUT"
fi
