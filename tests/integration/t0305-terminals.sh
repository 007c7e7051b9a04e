#!/bin/bash
# t0305 (red team): the user's other terminals. The baseline granted the
# host's /dev/pts: a step read a password typed in another terminal and wrote
# a fake prompt on it. The namespace layers mount a devpts of their own;
# Landlock alone grants only the step's own terminal and /dev/ptmx.
. "$(dirname "$0")/lib.sh"

# another terminal of this user, open outside the sandbox
python3 - "$T/pts" <<'PY' &
import os, pty, sys, time
m, s = pty.openpty()
open(sys.argv[1], "w").write(os.ttyname(s))
time.sleep(60)
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -s "$T/pts" ] && break; sleep 0.1; done
other=$(cat "$T/pts")
[ -n "$other" ] || { notok "a terminal to attack" "no pty"; exit 0; }

open_tty() {
	cat <<'PY'
import errno, os, sys
try:
    fd = os.open(sys.argv[1], (os.O_RDONLY if sys.argv[2:] == ["r"] else os.O_RDWR) | os.O_NOCTTY)
    st = os.fstat(fd)
    print("OK %d" % st.st_rdev)
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
}
open_tty >"$T/w/opentty.py"
rdev=$(stat -c '%t:%T' "$other")
run_sb run -- python3 opentty.py "$other"
case "$OUT" in
"OK "*)
	# under a private devpts the same name may be another (our own) terminal
	inside=$(printf '%x:%x' $(( ${OUT#OK } >> 8 )) $(( ${OUT#OK } & 255 )))
	if [ "$BACKEND" != landlock ] && [ "$inside" != "$rdev" ]; then ok "$other inside is not the host's terminal"
	else notok "another terminal of the user cannot be opened" "opened $other"; fi ;;
*) [ "$RC" = 0 ] && ok "another terminal of the user cannot be opened ($OUT)" || notok "another terminal cannot be opened" "rc=$RC $OUT" ;;
esac
run_sb run -- sh -c "echo fake-prompt > $other"
[ "$RC" != 0 ] || [ "$BACKEND" != landlock ] && ok "nothing is written to another terminal" || notok "nothing is written to another terminal"
# A grant that covers /dev (-r /, -r /dev, -r /dev/pts) gives no device node
# (opened for reading: typed input stolen):
# the namespaces bind it nodev, Landlock alone leaves the nodes out of its
# rules (red team: -r / opened the user's other terminals under Landlock).
# The control: a regular file beneath the same grant reads.
echo granted >"$T/w/plain"
for g in / /dev /dev/pts "$other"; do
	run_sb run -r "$g" -- sh -c "cat '$T/w/plain' && python3 opentty.py '$other' r"
	case "$OUT" in
	granted*"OK "*)
		inside=$(printf '%x:%x' $(( ${OUT##*OK } >> 8 )) $(( ${OUT##*OK } & 255 )))
		if [ "$BACKEND" != landlock ] && [ "$inside" != "$rdev" ]; then ok "-r $g: $other inside is not the host's terminal"
		else notok "-r $g: another terminal of the user cannot be opened" "opened $other"; fi ;;
	granted*) [ "$RC" = 0 ] && ok "-r $g: another terminal cannot be opened, a file beside reads (${OUT##*$'\n'})" ||
		notok "-r $g: another terminal cannot be opened" "rc=$RC $OUT" ;;
	*) notok "-r $g: the control file reads" "rc=$RC $OUT" ;;
	esac
done
# A write grant inside a grant walked for its devices is the write grant's:
# -r /dev -w /dev/shm runs, /dev/shm takes a file, and the other terminal
# stays closed (Landlock alone refused the start, 125: the walk gave
# /dev/shm a read rule inside the write grant)
# (the file is named by the test's own pid and uid: in a PID namespace every
# step is pid 2, and the root and 65534 runs go side by side)
run_sb run --allow-broad-grants -r /dev -w /dev/shm -- sh -c "f=/dev/shm/stepbox-t0305-$$-$(id -u); echo x >\$f && rm \$f && echo wrote; python3 opentty.py '$other' r"
case "$OUT" in
wrote*"OK "*) [ "$BACKEND" != landlock ] && ok "-r /dev -w /dev/shm: runs, /dev/shm writable (the terminal inside is the step's own)" ||
	notok "-r /dev -w /dev/shm: another terminal cannot be opened" "$OUT" ;;
wrote*) ok "-r /dev -w /dev/shm: runs, /dev/shm writable, another terminal cannot be opened (${OUT##*$'\n'})" ;;
*) notok "-r /dev -w /dev/shm: runs, /dev/shm writable" "rc=$RC $OUT" ;;
esac
# /dev bound into a folder (a chroot's, as schroot and mock do), granted
# whole: its device nodes stay out too (second red-team pass). As root, and
# as nobody in the same mount namespace; the control is a file beside. Then
# with the chroot's own work folder as the workdir, a write location inside
# the walked grant: it runs and writes there (it was refused, 125).
if is_root && command -v unshare >/dev/null; then
	mkdir -p "$T/chroot/dev" "$T/chroot/work"
	echo granted >"$T/chroot/plain"
	cp "$T/w/opentty.py" "$T/chroot/work/"
	chmod -R a+rX "$T/chroot"
	chmod a+x "$T"
	chmod 777 "$T/chroot/work"
	wmode=$(stat -c %a "$T/w")
	chmod 777 "$T/w"
	for as in root nobody; do
		who=""
		# nobody may open the terminal outside (its mode), so only the sandbox stands
		[ "$as" = nobody ] && who="setpriv --reuid=65534 --regid=65534 --clear-groups" && chmod 666 "$other"
		for wd in "$T/w" "$T/chroot/work"; do
			out=$(cd "$wd" && unshare -m --propagation private sh -c "mount --rbind /dev '$T/chroot/dev' &&
				$who '$SB' run -C '$wd' -r '$T/chroot' -- sh -c \"cat '$T/chroot/plain' && touch '$wd/made' && python3 opentty.py '$T/chroot$other' r\"" 2>/dev/null)
			what="a chroot's bound /dev ($as, workdir ${wd#"$T/"})"
			case "$out" in
			granted*"OK "*) notok "$what: another terminal cannot be opened" "$out" ;;
			granted*) [ -e "$wd/made" ] && ok "$what: another terminal cannot be opened, a file beside reads, the workdir takes a file (${out##*$'\n'})" ||
				notok "$what: the workdir takes a file" "$out" ;;
			*) notok "$what: the control file reads" "$out" ;;
			esac
			rm -f "$wd/made"
		done
	done
	chmod 620 "$other"
	chmod "$wmode" "$T/w"
	# /dev shown through an overlay (lowerdir=/dev) in the chroot: its nodes
	# are the devtmpfs's (red-team pass 3 read /dev/vcs so under Landlock alone)
	# (a fourth pass: the layer named through a symlink, or with its ':' and
	# ',' escaped as overlayfs takes them)
	if [ -e /dev/vcs ] && grep -qw overlay /proc/filesystems; then
		mkdir -p "$T/chroot/odev" "$T/chroot/empty" "$T/chroot/a,b:c d"
		ln -sfn /dev "$T/chroot/devlink"
		for layer in /dev "$T/chroot/devlink" "$T/chroot/a\\,b\\:c d"; do
			case $layer in *"c d") bind="mount --rbind /dev '$T/chroot/a,b:c d' &&" ;; *) bind= ;; esac
			out=$(cd "$T/w" && unshare -m --propagation private sh -c "$bind mount -t overlay overlay \
				-o 'lowerdir=$layer:$T/chroot/empty' '$T/chroot/odev' &&
				'$SB' run -C '$T/w' -r '$T/chroot' -- sh -c \"cat '$T/chroot/plain' && python3 opentty.py '$T/chroot/odev/vcs' r\"" 2>/dev/null)
			what="an overlay of /dev in a grant (layer ${layer#"$T/"})"
			case "$out" in
			granted*"OK "*) notok "$what: /dev/vcs through it cannot be opened" "$out" ;;
			granted*) ok "$what: /dev/vcs through it cannot be opened, a file beside reads (${out##*$'\n'})" ;;
			*) notok "$what: the control file reads" "$out" ;;
			esac
		done
	fi
fi
if [ "$BACKEND" = landlock ]; then
	run_sb run --explain -r /dev -- python3 opentty.py "$other" r
	grep -q "'$other': a device node, which no grant gives" "$T/out/err" &&
		ok "--explain says the other terminal is a device node no grant gives" ||
		notok "--explain says the other terminal is a device node no grant gives" "$(cat "$T/out/err")"
fi
if is_root && [ -e /dev/vcs ]; then
	denied "-r /dev: the console's screen (/dev/vcs) cannot be read as root" 'head -c 1 /dev/vcs' -r /dev
	in_box "-r /dev: the baseline's devices still read and write (head on /dev/urandom)" 'head -c 1 /dev/urandom >/dev/null && echo x >/dev/null' -r /dev
	run_sb run --explain -r /dev -- head -c 1 /dev/vcs
	grep -q "read '/dev/vcs': a device node, which no grant gives" "$T/out/err" &&
		ok "--explain says a device node is never granted" || notok "--explain says a device node is never granted" "$(cat "$T/out/err")"
fi
if [ "$BACKEND" = landlock ]; then
	denied "the host's /dev/pts cannot be listed" 'ls /dev/pts/'
else
	in_box "/dev/pts holds only the step's own terminals" 'test -z "$(ls /dev/pts | grep -v ptmx)"'
fi

# positive controls: a new pty works everywhere; the step's own terminal works
if [ "$BACKEND" = landlock ]; then
	# the new pty's slave lives in the host's /dev/pts, which Landlock alone
	# does not grant (it would grant the user's other terminals too)
	denied "Landlock alone: a new pty cannot be opened (documented)" 'python3 -c "import os; os.openpty()"'
else
	in_box "a new pty can be opened" 'python3 -c "import pty, os; m, s = pty.openpty(); os.write(m, b\"x\\n\"); assert os.read(s, 2)"'
fi
python3 - "$SB" "$T/w" <<'PY' >"$T/out/own" 2>&1
import os, pty, subprocess, sys
sb, wd = sys.argv[1], sys.argv[2]
m, s = pty.openpty()
name = os.ttyname(s)
p = subprocess.run([sb, "run", "-C", wd, "--", "python3", "-c",
    "import os,sys; print(os.isatty(0)); os.write(1, b'to-own-terminal\\n')"],
    stdin=s, stdout=s, stderr=subprocess.PIPE, cwd=wd)
os.close(s)
out = b""
try:
    while True:
        b = os.read(m, 1024)
        if not b: break
        out += b
except OSError:
    pass
print(p.returncode, out.decode(errors="replace").replace("\r", "").strip().replace("\n", " "))
PY
grep -q "^0 True to-own-terminal" "$T/out/own" && ok "the step's own terminal reads and writes" || notok "the step's own terminal reads and writes" "$(cat "$T/out/own")"
