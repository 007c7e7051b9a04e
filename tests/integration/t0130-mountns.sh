#!/bin/bash
# t0130: what only the namespace layers have (stacked and mountns): mount
# points, the new root's contents, namespaces, and user namespaces switched off.
. "$(dirname "$0")/lib.sh"
if [ "$BACKEND" = landlock ]; then
	skip "namespace layer cases" "runs in the stacked and mountns passes"
	exit 0
fi

mkdir -p "$T/data/sub" "$T/rw"
echo file >"$T/data/f.txt"
echo rwfile >"$T/rw/g.txt"
ln -s "$T/data" "$T/datalink"
ln -s "$T/data/f.txt" "$T/filelink"

# a file grant is a file mount point, a folder grant a folder one
in_box "file and folder grants keep their types" "test -f '$T/data/f.txt' && test -d '$T/data/sub' && test -f '$T/rw/g.txt' && cat '$T/data/f.txt' '$T/rw/g.txt' >/dev/null" -r "$T/data/f.txt" -r "$T/data/sub" -w "$T/rw/g.txt"
in_box "a writable file grant is writable" "echo more >> '$T/rw/g.txt'" -w "$T/rw/g.txt"
grep -q more "$T/rw/g.txt" && ok "the write reached the host file" || notok "the write reached the host file"
denied "a read-only file grant is read-only" "echo x >> '$T/data/f.txt'" -r "$T/data/f.txt"
denied "the rest of a folder around a file grant is absent" "cat '$T/data/sub/../f.txt' '$T/data/other' 2>&1; ls '$T/data/sub'" -r "$T/data/f.txt"
run_sb run -r "$T/data/f.txt" -- sh -c "test -d '$T/data/sub'"
[ "$RC" != 0 ] && ok "a folder next to a file grant is not there" || notok "a folder next to a file grant is not there"

# a grant spelled with ".." (through a folder not granted): bound where it
# lands, and no link is made for the spelling (it failed the start, 125)
mkdir -p "$T/dots/W/ro" "$T/dots/X"
denied "a read grant spelled with .. inside a write grant runs, read-only" "touch '$T/dots/W/ok' && touch '$T/dots/W/ro/x'" -w "$T/dots/W" -r "$T/dots/X/../W/ro"
[ -e "$T/dots/W/ok" ] && ok "control: its write grant is writable" || notok "control: its write grant is writable"

# grants given as symlinks: the target is bound, the link recreated
in_box "a folder grant that is a symlink" "cat '$T/datalink/f.txt' && cat '$T/data/f.txt'" -r "$T/datalink"
in_box "a file grant that is a symlink" "cat '$T/filelink'" -r "$T/filelink"
expect "a missing write grant is 125" 125 "write path" -- run -w "$T/missing" -- true

# the new root: only the grants, a fresh /proc and /dev, /tmp only if granted
sentinel="/tmp/stepbox-sentinel-$$-$RANDOM"
touch "$sentinel"
run_sb run -- sh -c "test -e '$sentinel'"
[ "$RC" != 0 ] && ok "the host's /tmp is not there unless granted" || notok "the host's /tmp is not there unless granted"
in_box "a granted /tmp is there" "test -e '$sentinel'" -r /tmp
rm -f "$sentinel"
run_sb run -- ls /dev
want="fd full mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero"
[ "$(echo $OUT)" = "$want" ] && ok "/dev holds only the baseline nodes" || notok "/dev holds only the baseline nodes" "$(echo $OUT)"
in_box "/proc shows only the sandbox's processes" 'test "$(ls -d /proc/[0-9]* | wc -l)" -le 8 && test -d /proc/1 && ! ps -e | grep -q "sleep 300"'
in_box "pid 1 is stepbox's init, the command is its child" 'test "$(cat /proc/1/comm)" = stepbox && test "$(cut -d" " -f4 /proc/$$/stat)" = 1'
in_box "a new devpts: no host terminal is visible" 'test -z "$(ls /dev/pts | grep -v ptmx)"'
in_box "a pty works" 'python3 -c "import pty; pty.openpty()"'
run_sb run -C "$T/rw" -- cat /proc/self/mountinfo
echo "$OUT" | grep -E " /usr [^ ]* " | grep -q "ro,nosuid" && ok "/usr is mounted ro,nosuid" || notok "/usr is mounted ro,nosuid"
echo "$OUT" | grep -E " $T/rw " | grep -qE "rw,nosuid,nodev" && ok "the workdir is mounted rw,nosuid,nodev" || notok "the workdir is mounted rw,nosuid,nodev"
echo "$OUT" | grep -E " / " | head -1 | grep -q " ro," && ok "the new root is read-only" || notok "the new root is read-only"
denied "nothing can be created at /" 'touch /newfile'

# Each mount a grant's bind made or brought along gets the grant's flags,
# keeping its own; a mount under another on the same point is left alone,
# so the one on top keeps its flags. Each case beside a positive control.
# each mount point and the flags stepbox sets on it
flags() {
	awk '{n = split($6, o, ","); f = ""
		for (i = 1; i <= n; i++) if (o[i] ~ /^(ro|rw|nosuid|nodev|noexec)$/) f = f (f ? "," : "") o[i]
		print $5, f}'
}
# -r /dev brings the host's /dev/shm and /dev/pts along, under ours
run_sb run -r /dev -- cat /proc/self/mountinfo
echo "$OUT" | flags >"$T/out/flags.dev"
grep -q "^/dev/shm rw,nosuid,nodev$" "$T/out/flags.dev" && grep -q "^/dev/pts rw,nosuid,noexec$" "$T/out/flags.dev" &&
	grep -q "^/dev ro,nosuid" "$T/out/flags.dev" &&
	ok "under -r /dev our /dev/shm and /dev/pts keep their flags over the host's" ||
	notok "under -r /dev our /dev/shm and /dev/pts keep their flags over the host's" "$(grep '^/dev' "$T/out/flags.dev")"
# a grant where /proc is masked: the mask on top stays read-only
run_sb run -r /proc/kallsyms -- cat /proc/self/mountinfo
echo "$OUT" | flags | grep -q "^/proc/kallsyms ro,nosuid,nodev,noexec$" &&
	ok "a mask over a grant stays read-only" || notok "a mask over a grant stays read-only" "$(echo "$OUT" | grep kallsyms)"
# a grant whose mountinfo line is longer than a page (its path's spaces are
# escaped four to one): written as granted, and read-only when read-only
long="$T/long"
for i in 1 2 3 4 5 6; do long="$long/$(printf '%*s' 180 '' | tr ' ' ' ')d$i"; done
mkdir -p "$long/w" "$long/r"
run_sb run -w "$long/w" -r "$long/r" -- sh -c "echo yes > '$long/w/f' && ! touch '$long/r/f' 2>/dev/null"
[ "$RC" = 0 ] && [ -s "$long/w/f" ] && [ ! -e "$long/r/f" ] &&
	ok "a grant whose mountinfo line is longer than a page gets its flags" ||
	notok "a grant whose mountinfo line is longer than a page gets its flags" "rc=$RC $ERR"
if is_root; then
	mkdir -p "$T/data/sub/x" "$T/rw/in" "$T/rw/robind" "$T/rw/mnt" "$T/data/stack"
	# host mounts inside a read-only grant and inside a write grant
	mount -t tmpfs -o mode=0777 stepbox-t0130 "$T/data/sub/x"
	mount -t tmpfs -o mode=0777,noexec stepbox-t0130 "$T/rw/in"
	# a read-only grant on a host mount point inside the workdir (its bind
	# sits on the workdir bind's copy of that mount), and two host mounts
	# stacked on one point inside a read-only grant
	mount -t tmpfs -o mode=0777 stepbox-t0130 "$T/rw/mnt"
	mount -t tmpfs -o mode=0777 stepbox-t0130 "$T/data/stack"
	mount -t tmpfs -o mode=0777 stepbox-t0130 "$T/data/stack"
	# a host folder bound read-only over itself inside a write grant
	mount --bind "$T/rw/robind" "$T/rw/robind" && mount -o remount,bind,ro "$T/rw/robind"
	# a host mount whose mountinfo line is longer than a page, its source
	# chosen to read as a mount of ours over /usr if the line were cut
	inj="$T/inj"
	for i in 1 2 3 4 5; do inj="$inj/$(printf '%*s' 250 '')"; done
	mkdir -p "$inj/m" "$inj/m2" && mount -t tmpfs -o size=64k "/newroot/tmp/../usr" "$inj/m"
	mount -t tmpfs -o size=64k "/newroot$T/rw/robind" "$inj/m2"
	run_sb run -C "$T/rw" -r "$T/data" -r "$T/rw/mnt" -- cat /proc/self/mountinfo
	echo "$OUT" | flags >"$T/out/flags.host"
	grep -q "^$T/data/sub/x ro,nosuid,nodev$" "$T/out/flags.host" &&
		grep -q "^$T/rw/in rw,nosuid,nodev,noexec$" "$T/out/flags.host" &&
		grep -q "^$T/rw/robind ro,nosuid,nodev$" "$T/out/flags.host" &&
		grep -q "^/usr ro,nosuid,nodev$" "$T/out/flags.host" &&
		[ "$(grep "^$T/rw/mnt " "$T/out/flags.host" | tail -1)" = "$T/rw/mnt ro,nosuid,nodev" ] &&
		[ "$(grep "^$T/data/stack " "$T/out/flags.host" | tail -1)" = "$T/data/stack ro,nosuid,nodev" ] &&
		ok "host mounts inside grants: the grant's flags and their own, none made weaker by another's line" ||
		notok "host mounts inside grants: the grant's flags and their own, none made weaker by another's line" "$(cat "$T/out/flags.host")"
	run_sb run -C "$T/rw" -r "$T/data" -r "$T/rw/mnt" -- sh -c "touch '$T/rw/in/ok' && ! touch '$T/data/sub/x/no' 2>/dev/null && ! touch '$T/rw/robind/no' 2>/dev/null && ! touch '$T/rw/mnt/no' 2>/dev/null && ! touch '$T/data/stack/no' 2>/dev/null && ! test -w /usr/bin/env"
	[ "$RC" = 0 ] && [ -e "$T/rw/in/ok" ] && [ ! -e "$T/data/sub/x/no" ] && [ ! -e "$T/rw/robind/no" ] &&
		[ ! -e "$T/rw/mnt/no" ] && [ ! -e "$T/data/stack/no" ] &&
		ok "a host mount inside a read-only grant, and a read-only one inside a write grant, stay read-only; one inside a write grant is writable" ||
		notok "a host mount inside a read-only grant, and a read-only one inside a write grant, stay read-only; one inside a write grant is writable" "rc=$RC $OUT $ERR"
	umount "$T/data/sub/x" "$T/rw/in" "$T/rw/robind" "$inj/m" "$inj/m2" "$T/rw/mnt" "$T/data/stack" "$T/data/stack"
fi
# as root without mount_setattr (before Linux 5.12: no idmapped mount) /etc
# is walked instead, and what only root may read stays hidden
kprobe=${FIXTURES:-/nonexistent}/kprobe
if is_root && [ -x "$kprobe" ] && [ -e /etc/shadow ]; then
	OUT=$("$kprobe" deny-mount-setattr "$SB" run -- sh -c 'cat /etc/hostname >/dev/null && echo read; cat /etc/shadow >/dev/null 2>&1 || echo hidden' 2>&1)
	[ "$OUT" = "$(printf 'read\nhidden')" ] && ok "without mount_setattr root's /etc is walked: /etc/shadow hidden, /etc/hostname read" ||
		notok "without mount_setattr root's /etc is walked: /etc/shadow hidden, /etc/hostname read" "$OUT"
fi

# without mount_setattr (before Linux 5.12) each grant is bound and then
# remounted (remount_all): read-only where granted so, writable where a
# write grant lies inside (the positive control), and the reverse
if is_root && [ -x "$kprobe" ]; then
	mkdir -p "$T/fb/rw/ro" "$T/fb/ro/rw"
	OUT=$("$kprobe" deny-mount-setattr "$SB" run -r "$T/fb/ro" -w "$T/fb/ro/rw" -w "$T/fb/rw" \
		-r "$T/fb/rw/ro" -- sh -c "cd '$T/fb' && touch ro/x 2>/dev/null || echo ro-refused
			touch ro/rw/x && echo rw-written; touch rw/ro/x 2>/dev/null || echo ro-in-rw-refused
			touch rw/y && echo rw2-written" 2>&1)
	[ "$OUT" = "$(printf 'ro-refused\nrw-written\nro-in-rw-refused\nrw2-written')" ] &&
		ok "without mount_setattr the grants get their flags by remount (read-only, nested writable, nested read-only)" ||
		notok "without mount_setattr the grants get their flags by remount (read-only, nested writable, nested read-only)" "$OUT"
	rm -rf "$T/fb"
fi

# A step beside this one that may write a folder holding a nested grant
# swaps a name on the way to the grant's mount point for a link, again and
# again (RENAME_EXCHANGE), while this one starts. A race: 150 starts, each
# refused (the link met) or clean, none seeing the swapper's folder as its
# /etc, and some clean (the control).
# Under auto (RACE_SB=$STEPBOX) a refused start must stay refused: never a
# retry with fewer layers (it ran under Landlock alone, the host's processes
# in view: WEAK), and every refusal 125 naming its cause.
# swap_race NAME DIR A B GRANTS...: A and B (in DIR) exchanged meanwhile
swap_race() {
	local name=$1 dir=$2 a=$3 b=$4 won=0 clean=0 n=0 out rc swapper others sb=${RACE_SB:-$SB}
	shift 4
	python3 -c '
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
' "$dir/$a" "$dir/$b" &
	swapper=$!
	: >"$T/race-other"
	# 150 starts, and on to 450 until one is clean (the control)
	while [ "$n" -lt 150 ] || { [ "$clean" = 0 ] && [ "$n" -lt 450 ]; }; do
		n=$((n + 1))
		out=$("$sb" run -q "$@" -- sh -c 'test -e /etc/MARK && echo WON && exit
			set -- /proc/[0-9]*; [ $# -lt 20 ] && echo clean || echo "WEAK: $# processes"' 2>&1)
		rc=$?
		case $out in
		*WON* | *WEAK* | *"auto:"*) won=$((won + 1)); echo "WON: $out" | head -2 >>"$T/race-other" ;;
		clean) clean=$((clean + 1)) ;;
		*)
			# refused: 125, in stepbox's words (a link met, a grant gone)
			[ "$rc" = 125 ] && [ "${out#stepbox: }" != "$out" ] || out="WON: $rc: $out"
			case $out in WON*) won=$((won + 1)) ;; esac
			printf '%s\n' "$out" | head -1 | sed "s|$dir|DIR|g" >>"$T/race-other" ;;
		esac
	done
	kill "$swapper"
	wait "$swapper" 2>/dev/null
	[ "$won" = 0 ] && [ "$clean" -gt 0 ] && ok "$name: never followed ($clean of $n clean starts)" || {
		mapfile -t others < <(sort "$T/race-other" | uniq -c | sort -rn | head -6)
		notok "$name: never followed" "$won won, $clean clean of $n; the others began:" "${others[@]}"
	}
}
# the mount point itself, for a link to /newroot/etc (the code before lost
# 7 of 400 runs: the step read the swapper's folder as its /etc)
S="$T/race"
mkdir -p "$S/out" "$S/a/newroot/etc"
echo mark | tee "$S/out/MARK" >"$S/a/newroot/etc/MARK"
ln -s /newroot/etc "$S/lnk"
ln -s / "$S/l"
chmod -R a+rwX "$S"
swap_race "a mount point swapped for a link while the step starts" "$S" out lnk -r "$S" -w "$S/out"
# a folder above it, for a link to / (the path then reads /newroot/etc
# through it: a red-team pass won 3 of 300 runs)
swap_race "a folder above a mount point swapped for a link while the step starts" "$S" a l \
	-r "$S" -w "$S/a/newroot/etc"
# auto, raced so: never a weaker run (the code before reran one to three in
# ten under Landlock alone, the host's processes in view)
if [ "$BACKEND" = stacked ]; then
	RACE_SB=$STEPBOX swap_race "auto, a mount point raced: 125 with its cause, never a weaker run" \
		"$S" out lnk -r "$S" -w "$S/out"
	RACE_SB=$STEPBOX swap_race "auto, a folder above a mount point raced: 125 with its cause, never a weaker run" \
		"$S" a l -r "$S" -w "$S/a/newroot/etc"
fi
rm -rf "$S"

# a read grant inside a write grant renamed away and back while the step
# starts: the start fails, or the grant is read-only; never a run where it
# is writable (a red-team pass: 33 of 60 runs wrote it; without
# mount_setattr, 3 of 60, its mount taking the write grant's flags by the
# name mountinfo showed)
# vanish_race NAME [WRAPPER...]: 60 starts, through WRAPPER
vanish_race() {
	local name=$1 S="$T/vanish" won=0 clean=0 out i mover
	shift
	mkdir -p "$S/ro"
	echo orig >"$S/ro/data"
	chmod -R a+rwX "$S"
	python3 -c '
import os, sys, time
a, b = sys.argv[1] + "/ro", sys.argv[1] + "/gone"
while True:
    os.rename(a, b); time.sleep(0.0003); os.rename(b, a); time.sleep(0.0003)
' "$S" &
	mover=$!
	for i in $(seq 60); do
		out=$("$@" "$SB" run -q -w "$S" -r "$S/ro" -- sh -c "for k in 1 2 3 4 5 6 7 8 9 10; do [ -d '$S/ro' ] && break; sleep 0.01; done
			if (echo pwned >'$S/ro/data') 2>/dev/null; then echo WON; else echo clean; fi" 2>&1)
		case $out in *WON*) won=$((won + 1)) ;; *clean) clean=$((clean + 1)) ;; esac
	done
	kill "$mover"
	wait "$mover" 2>/dev/null
	[ -d "$S/gone" ] && mv "$S/gone" "$S/ro" # the mover stopped between its renames
	[ "$won" = 0 ] && [ "$clean" -gt 0 ] && grep -qx orig "$S/ro/data" &&
		ok "$name: never writable ($clean of 60 clean)" ||
		notok "$name: never writable" "$won won, $clean clean"
	rm -rf "$S"
}
vanish_race "a read grant in a write grant renamed away while the step starts"
if is_root && [ -x "$kprobe" ]; then
	vanish_race "the same without mount_setattr" "$kprobe" deny-mount-setattr
fi

# the whole tree dies with stepbox (a PID namespace)
m=$((RANDOM % 900 + 100))
"$SB" run -- sh -c "sleep 6${m}1 & (setsid sleep 6${m}2 &); sleep 6${m}3" &
sb=$!
wait_for running "sleep 6${m}[123]" 3
kill -KILL "$sb"
wait "$sb" 2>/dev/null
wait_for none_left "sleep 6${m}[123]"
! pgrep -f "sleep 6${m}[123]" >/dev/null && ok "killing stepbox kills the whole tree, setsid'd grandchildren too" ||
	notok "killing stepbox kills the whole tree, setsid'd grandchildren too"

# user namespaces switched off: SANDBOX_UNAVAILABLE with the hint. The host's
# sysctl is left alone: a user namespace of the test's own, mapping every uid,
# has user.max_user_namespaces at 0 (tests/integration/userns-zero.py).
if is_root; then
	mkdir -p "$T/nobody"
	chmod 777 "$T/nobody"
	zero="$TESTDIR/userns-zero.py"
	as_nobody="cd '$T/nobody' && exec setpriv --reuid=65534 --regid=65534 --clear-groups"
	out=$(python3 "$zero" sh -c "$as_nobody '$STEPBOX' run --backend mountns -- true" 2>&1)
	rc=$?
	[ "$rc" = 125 ] && echo "$out" | grep -q "SANDBOX_UNAVAILABLE" && echo "$out" | grep -q "user.max_user_namespaces" &&
		ok "user namespaces off: SANDBOX_UNAVAILABLE naming the sysctl" || notok "user namespaces off: SANDBOX_UNAVAILABLE naming the sysctl" "rc=$rc $out"
	out=$(python3 "$zero" sh -c "$as_nobody env STEPBOX_LANDLOCK_ABI=0 '$STEPBOX' run -- true" 2>&1)
	rc=$?
	[ "$rc" = 125 ] && echo "$out" | grep -q "landlock: Landlock is capped" && echo "$out" | grep -q "mountns: cannot create" &&
		ok "auto with nothing available names what it tried and why" || notok "auto with nothing available names what it tried and why" "rc=$rc $out"
	out=$(python3 "$zero" sh -c "$as_nobody '$STEPBOX' check" 2>&1)
	echo "$out" | grep -q "mountns: not available" && ok "check says mountns is not available, and why" || notok "check says mountns is not available, and why" "$out"
else
	skip "user namespaces switched off" "needs root to make a user namespace that maps other users"
fi

# a masked /proc (as in a container): the kernel refuses a new procfs to a user
# namespace; auto falls back to Landlock alone, a forced stacked says why
if is_root && [ "$BACKEND" = stacked ]; then
	mkdir -p "$T/masked"
	chmod 777 "$T/masked"
	out=$(unshare -m --propagation private sh -c "mount --bind /dev/null /proc/timer_list &&
		cd '$T/masked' && setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/usr/bin:/bin \
		'$STEPBOX' run -q --report '$T/masked/r.json' -- sh -c 'echo ran'" 2>&1)
	echo "$out" | grep -q "^ran$" &&
		echo "$out" | grep -q "^stepbox: auto: stacked could not start here (namespaces: cannot mount a new /proc.*); running under landlock$" &&
		python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["backend"] == "landlock", r["backend"]
t = r["auto_tried"]
assert len(t) == 1 and t[0]["backend"] == "stacked" and t[0]["when"] == "start", t
assert "cannot mount a new /proc" in t[0]["error"] and "masked /proc" in t[0]["hint"], t
' "$T/masked/r.json" &&
		ok "masked /proc: auto runs under Landlock alone, says so even with -q, and the report records why" ||
		notok "masked /proc: auto runs under Landlock alone, says so even with -q, and the report records why" "$out"
	out=$(unshare -m --propagation private sh -c "mount --bind /dev/null /proc/timer_list &&
		cd '$T/masked' && setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/usr/bin:/bin \
		'$STEPBOX' run --backend stacked -- sh -c 'echo ran'" 2>&1)
	rc=$?
	[ "$rc" = 125 ] && echo "$out" | grep -q "SANDBOX_UNAVAILABLE: namespaces: cannot mount a new /proc" &&
		echo "$out" | grep -q "hint:.*masked /proc" && ! echo "$out" | grep -q "^ran$" &&
		ok "masked /proc: --backend stacked is 125 naming the cause" || notok "masked /proc: --backend stacked is 125 naming the cause" "rc=$rc $out"
	# check agrees with run: it tries the procfs too
	out=$(unshare -m --propagation private sh -c "mount --bind /dev/null /proc/timer_list &&
		cd '$T/masked' && setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/usr/bin:/bin \
		'$STEPBOX' check --json" 2>&1)
	echo "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["auto_backend"] == "landlock", d["auto_backend"]
for b in ("stacked", "mountns"):
    assert not d["backends"][b]["available"] and "cannot mount a new /proc" in d["backends"][b]["error"], d["backends"][b]
' && ok "masked /proc: check says what run meets (auto is landlock, the namespaces' procfs refused)" ||
		notok "masked /proc: check says what run meets (auto is landlock, the namespaces' procfs refused)" "$out"
fi

# root without CAP_SYS_ADMIN (a container's root): a user namespace mapping
# itself, as for anyone else; /etc's secrets stay hidden (walked: no idmap)
if is_root && [ "$BACKEND" = stacked ]; then
	mkdir -p "$T/nocap"
	out=$(cd "$T/nocap" && setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin -- \
		"$STEPBOX" run --backend stacked -- sh -c 'echo written >f && cat f; head -c1 /etc/passwd >/dev/null && echo CONTROL; cat /etc/shadow >/dev/null 2>&1 && echo LEAK; id -u' 2>&1)
	if echo "$out" | grep -qx written && echo "$out" | grep -qx CONTROL && ! echo "$out" | grep -q LEAK &&
		echo "$out" | tail -1 | grep -qx 0; then
		ok "root without CAP_SYS_ADMIN: the stacked layers through a user namespace, /etc secrets hidden"
	else
		notok "root without CAP_SYS_ADMIN: the stacked layers through a user namespace, /etc secrets hidden" "$out"
	fi
fi
