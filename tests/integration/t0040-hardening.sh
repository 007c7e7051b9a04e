#!/bin/bash
# t0040: capabilities, no_new_privs, seccomp, session, fds.
. "$(dirname "$0")/lib.sh"

run_sb run -- cat /proc/self/status
st=$OUT
for f in CapInh CapPrm CapEff CapAmb; do
	echo "$st" | grep -q "^$f:[[:space:]]*0000000000000000$" && ok "$f is empty" || notok "$f is empty" "$(echo "$st" | grep "^$f")"
done
if is_root || [ "$BACKEND" = mountns ]; then
	# mountns: inside its user namespace the caller holds CAP_SETPCAP and drops it all
	echo "$st" | grep -q "^CapBnd:[[:space:]]*0000000000000000$" && ok "bounding set empty" || notok "bounding set empty"
	run_sb run -- cat /proc/self/status # securebits keep an exec'd root without capabilities
	echo "$OUT" | grep -q "^CapEff:[[:space:]]*0000000000000000$" && ok "root's exec gains no capabilities" || notok "root's exec gains no capabilities"
else
	skip "bounding set empty" "an unprivileged caller cannot drop it; no_new_privs makes it unreachable (docs/security.md)"
fi
echo "$st" | grep -q "^NoNewPrivs:[[:space:]]*1$" && ok "no_new_privs" || notok "no_new_privs"
echo "$st" | grep -q "^Seccomp:[[:space:]]*2$" && ok "seccomp filter mode" || notok "seccomp filter mode"

run_sb run -- python3 -c '
import os, sys, errno
assert os.getsid(0) != int(sys.argv[1]), "still in the caller session"
try:
    open("/dev/tty")
    raise SystemExit("has a controlling terminal")
except OSError as e:
    assert e.errno == errno.ENXIO, e
' "$(ps -o sid= -p $$ | tr -d " ")"
[ "$RC" = 0 ] && ok "a new session, no controlling terminal" || notok "a new session, no controlling terminal"
in_box "TIOCSTI refused" 'python3 -c "
import os, fcntl, termios, errno
# a terminal to type into: a new pty where there is one (Landlock alone
# opens no new pty: its multiplexer is enough, seccomp refuses the call first)
try:
    m, s = os.openpty()
except OSError:
    s = os.open(\"/dev/ptmx\", os.O_RDWR | os.O_NOCTTY)
try:
    fcntl.ioctl(s, termios.TIOCSTI, b\"x\")
    raise SystemExit(\"TIOCSTI worked\")
except OSError as e:
    assert e.errno == errno.EPERM, e
"'
in_box "mount(2) refused" 'mkdir -p m && python3 -c "
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
assert libc.mount(b\"none\", b\"m\", b\"tmpfs\", 0, None) == -1
assert ctypes.get_errno() == errno.EPERM, ctypes.get_errno()
"'
denied "new user namespace refused" 'unshare -U true'
denied "new user+mount namespace refused" 'unshare -Ur true'
if [ "$(uname -m)" = x86_64 ]; then
	in_box "keyctl, bpf, perf_event_open, kexec refused (EPERM)" 'python3 -c "
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
for name, nr in ((\"keyctl\", 250), (\"bpf\", 321), (\"perf_event_open\", 298), (\"kexec_load\", 246), (\"init_module\", 175)):
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    assert r == -1 and ctypes.get_errno() == errno.EPERM, (name, r, ctypes.get_errno())
"'
else
	skip "syscall filter by number" "syscall numbers are x86_64's"
fi

# inherited file descriptors are closed
mkdir -p "$T/secret"
echo topsecret >"$T/secret/f"
out=$(exec 7<"$T/secret/f"; "$SB" run -- sh -c 'cat <&7; ls /proc/self/fd' 2>&1)
if ! echo "$out" | grep -q topsecret && ! echo "$out" | grep -qx 7; then ok "inherited fd closed"; else notok "inherited fd closed" "$out"; fi

# a setuid binary gains nothing (no_new_privs)
if ! is_root && [ -u "$FIXTURES/suid-id" ] && [ "$("$FIXTURES/suid-id" -u)" = 0 ]; then
	run_sb run -r "$FIXTURES" -- "$FIXTURES/suid-id" -u
	[ "$OUT" = "$(id -u)" ] && ok "setuid binary runs without its privilege" || notok "setuid binary runs without its privilege" "euid $OUT"
else
	skip "setuid binary runs without its privilege" "needs the unprivileged run and a setuid fixture on a suid mount"
fi
