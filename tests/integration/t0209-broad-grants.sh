#!/bin/bash
# t0209: a workdir or write grant that is /, a top-level system folder or HOME
# itself is refused (125, with a hint) unless allow_broad_grants (issue 10,
# item 10). Run from / (where systemd starts services), the default workdir
# made every file writable.
. "$(dirname "$0")/lib.sh"

HINT="give the step its own folder with -C DIR, or set allow_broad_grants"
# a marker outside the workdir, in a folder each allowed run is granted
mkdir -p "$T/mark"
T_RAN=$T/mark/ran

# broad NAME ARGS...: refused with 125 and the hint, and the command never starts
broad() {
	local name=$1
	shift
	rm -f "$T_RAN"
	run_sb run -w "$T/mark" "$@" -- touch "$T_RAN"
	if [ "$RC" = 125 ] && grep -qF "$HINT" "$T/out/err" && grep -q "refusing the" "$T/out/err" && [ ! -e "$T_RAN" ]; then
		ok "$name"
	else
		notok "$name" "exit $RC, want 125 with the hint; started: $([ -e "$T_RAN" ] && echo yes || echo no)"
	fi
}
# allowed NAME ARGS...: the same passes with allow_broad_grants (the control)
allowed() {
	local name=$1
	shift
	rm -f "$T_RAN"
	run_sb run -w "$T/mark" "$@" -- sh -c "echo x > '$T_RAN'"
	if [ "$RC" = 0 ] && [ -e "$T_RAN" ]; then
		ok "$name"
	elif [ "$RC" = 125 ] && [ "$BACKEND" = mountns ] && grep -q "cannot make the symlink '/dev/ptmx'" "$T/out/err"; then
		skip "$name" "the mountns backend cannot bind the host's / whole yet (/dev/ptmx)"
	else
		notok "$name" "exit $RC"
	fi
}
# run from /: the default workdir
(cd / && "$SB" run -w "$T/mark" -- touch "$T_RAN" >"$T/out/out" 2>"$T/out/err")
RC=$?
if [ "$RC" = 125 ] && grep -qF "$HINT" "$T/out/err" && grep -q "refusing the workdir '/'" "$T/out/err" && [ ! -e "$T_RAN" ]; then
	ok "cd / && run: refused with the hint"
else
	notok "cd / && run: refused with the hint" "exit $RC"
fi
(cd / && "$SB" policy >"$T/out/out" 2>"$T/out/err")
[ $? = 125 ] && ok "cd / && policy: refused too (policy prints what run applies)" ||
	notok "cd / && policy: refused too"

broad "-C /" -C /
broad "--workdir-readonly -C /" --workdir-readonly -C /
broad "-w /usr" -w /usr
broad "-w /etc" -w /etc
broad "-w /var" -w /var
broad "-w /lib64 (a symlink to usr/lib64 on merged /usr)" -w /lib64
broad "-w / as ../.." -w /usr/..
broad "-w \$HOME" -w "$HOME"
broad "-w \$HOME/ (normalized)" -w "$HOME/"
ln -s "$HOME" "$T/homelink"
broad "-w a symlink to \$HOME" -w "$T/homelink"
broad "-C \$HOME" -C "$HOME"
broad "--persist /var" --persist /var
# every user's scratch folders: the step's own /tmp is private
broad "-w /tmp" -w /tmp
broad "-w /var/tmp" -w /var/tmp
broad "-w /dev/shm" -w /dev/shm
broad "-w /run/lock" -w /run/lock
broad "-w /tmp/ (normalized)" -w /tmp/
rm -f "$T_RAN"
(cd /tmp && "$SB" run -w "$T/mark" -- touch "$T_RAN" >"$T/out/out" 2>"$T/out/err")
RC=$?
if [ "$RC" = 125 ] && grep -qF "$HINT" "$T/out/err" &&
	grep -q "refusing the workdir '/tmp': it is a scratch folder every user of this host shares" "$T/out/err" &&
	[ ! -e "$T_RAN" ]; then
	ok "cd /tmp && run: refused with the hint"
else
	notok "cd /tmp && run: refused with the hint" "exit $RC"
fi
echo '{"version": 1, "write_paths": ["/usr"]}' >"$T/broad.json"
broad "policy write_paths [\"/usr\"]" -p "$T/broad.json"
run_sb run -w /usr -- true
grep -q "refusing the write grant '/usr': it is a top-level system folder" "$T/out/err" &&
	ok "the message names the grant and why" || notok "the message names the grant and why"

# a missing workdir is made, but never in a system folder (a typo in -C, as
# root, made /usr/local/<typo>); the control: one in a folder of the
# user's own is made
n=stepbox-t0209-$$
for d in /usr/local /var /; do
	run_sb run -C "$d/$n" -- true
	[ "$RC" = 125 ] && grep -q "refusing to create the workdir '${d%/}/$n' in the system folder" "$T/out/err" &&
		[ ! -e "$d/$n" ] && ok "-C ${d%/}/NEW: refused, nothing made" ||
		notok "-C ${d%/}/NEW: refused, nothing made" "exit $RC"
	[ -d "$d/$n" ] && rm -rf "${d:?}/$n"
done
: >"$T/afile"
run_sb run -C "$T/afile" -- true
[ "$RC" = 125 ] && grep -q "workdir '$T/afile': '$T/afile' is not a folder" "$T/out/err" &&
	grep -q "^hint: give a folder" "$T/out/err" && ! grep -q SANDBOX_UNAVAILABLE "$T/out/err" &&
	ok "-C FILE: a usage error naming it, with a hint" || notok "-C FILE: a usage error naming it, with a hint" "$(cat "$T/out/err")"
run_sb run -C "$T/newwd" -- true
[ "$RC" = 0 ] && [ -d "$T/newwd" ] && ok "-C a missing folder of the user's own: made" ||
	notok "-C a missing folder of the user's own: made" "exit $RC"

# folders beneath them are fine
mkdir -p "$HOME/project" "$T/sub"
for d in /usr/local/share "$T/sub" "$HOME/project"; do
	[ -d "$d" ] || continue
	run_sb run -w "$d" -- true
	[ "$RC" = 0 ] && ok "-w $d is fine" || notok "-w $d is fine" "exit $RC"
done
in_box "-C \$HOME/project is fine" 'pwd' -C "$HOME/project"

# a mount in a folder only root may search (tests/run.sh plants one in
# /var/tmp): the namespaces skip remounting it for a user who cannot reach
# it, and the step cannot reach it either; a file beside it, in a folder
# others may search, is read (the positive control). Root owns that folder,
# so root's step reaches it, as root may beneath a write grant.
mnt=$(cat "${FIXTURES:-/nonexistent}/rootonly-mount" 2>/dev/null)
if [ -z "$mnt" ] || is_root; then
	skip "a root-only mount beneath a write grant stays out of reach" \
		"needs the mount tests/run.sh plants as root, and a user who does not own it"
else
	ctl=$(mktemp -d /var/tmp/stepbox-t0209.XXXXXX)
	chmod 755 "$ctl"
	echo beside >"$ctl/beside"
	run_sb run --allow-broad-grants -w /var/tmp -- sh -c "cat '$ctl/beside'; cat '$mnt/inside'"
	if echo "$OUT" | grep -q beside && ! echo "$OUT" | grep -q inside &&
		grep -q "Permission denied" "$T/out/err"; then
		ok "a root-only mount beneath a write grant stays out of reach (EACCES), the folder beside it is read"
	else
		notok "a root-only mount beneath a write grant stays out of reach (EACCES), the folder beside it is read" \
			"exit $RC" "stdout: $OUT"
	fi
	rm -rf "$ctl"
fi

# allow_broad_grants lets each through, from the policy or the flag
allowed "allow_broad_grants: -w /usr" --allow-broad-grants -w /usr
allowed "allow_broad_grants: -w /lib64" --allow-broad-grants -w /lib64
allowed "allow_broad_grants: -w \$HOME" --allow-broad-grants -w "$HOME"
allowed "allow_broad_grants: -w /var/tmp" --allow-broad-grants -w /var/tmp
echo '{"version": 1, "allow_broad_grants": true, "write_paths": ["/usr"]}' >"$T/allow.json"
allowed "policy allow_broad_grants: write_paths [\"/usr\"]" -p "$T/allow.json"
rm -f "$T_RAN"
(cd / && "$SB" run --allow-broad-grants -w "$T/mark" -- sh -c "echo x > '$T_RAN'" >"$T/out/out" 2>"$T/out/err")
RC=$?
if [ "$RC" = 0 ] && [ -e "$T_RAN" ]; then
	ok "allow_broad_grants: cd / && run"
elif [ "$RC" = 125 ] && [ "$BACKEND" = mountns ] && grep -q "cannot make the symlink '/dev/ptmx'" "$T/out/err"; then
	skip "allow_broad_grants: cd / && run" "the mountns backend cannot bind the host's / whole yet (/dev/ptmx)"
else
	notok "allow_broad_grants: cd / && run" "exit $RC"
fi
echo '{"version": 1, "allow_broad_grants": "yes"}' >"$T/bad.json"
expect "allow_broad_grants must be a boolean" 125 "allow_broad_grants: must be true or false" -- policy -p "$T/bad.json"
