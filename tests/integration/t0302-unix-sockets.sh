#!/bin/bash
# t0302 (red team): UNIX sockets. A step reached the host's control sockets
# (a tmux server, a D-Bus bus, a Docker-style socket, an ssh-agent) by path,
# and host services on abstract names. Rule for every backend: connect and
# addressed sends to a pathname socket only beneath a write grant (or a
# unix_sockets entry); abstract names only when the step bound them.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/host"
# a host service on a pathname socket (stream and datagram) and an abstract name,
# readable by every user; the step is given read access to the folder
python3 - "$T/host" "$$" <<'PY' &
import os, socket, sys, time
d, tag = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX); s.bind(d + "/svc.sock"); s.listen(8)
g = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); g.bind(d + "/log.sock")
a = socket.socket(socket.AF_UNIX); a.bind("\0stepbox-host-" + tag); a.listen(8)
for p in ("/svc.sock", "/log.sock"):
    os.chmod(d + p, 0o777)
open(d + "/ready", "w").close()
time.sleep(120)
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -e "$T/host/ready" ] && break; sleep 0.1; done
chmod -R a+rx "$T/host"
ln -s "$T/host/svc.sock" "$T/w/link.sock"

probe() { # connect/sendto a target from inside: prints OK or the errno name
	cat <<PY
import errno, socket, sys
def go(kind, addr):
    try:
        if kind == "dgram":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b"x", addr)
        elif kind == "dgram-connect":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.connect(addr); s.send(b"x")
        else:
            s = socket.socket(socket.AF_UNIX); s.connect(addr)
        print("OK")
    except OSError as e:
        print(errno.errorcode.get(e.errno, e.errno))
go(sys.argv[1], sys.argv[2].replace("@", "\0", 1) if sys.argv[2].startswith("@") else sys.argv[2])
PY
}
probe >"$T/w/probe.py"

# outside every write grant: refused, whatever the way of naming it
for case in "stream:$T/host/svc.sock" "dgram:$T/host/log.sock" "dgram-connect:$T/host/log.sock" \
	"stream:link.sock" "stream:../w/../host/svc.sock"; do
	kind=${case%%:*} addr=${case#*:}
	run_sb run -r "$T/host" -- python3 probe.py "$kind" "$addr"
	if [ "$RC" = 0 ] && [ "$OUT" = EACCES ]; then ok "$kind $addr outside the write grants: EACCES"
	else notok "$kind $addr outside the write grants: EACCES" "rc=$RC out=$OUT"; fi
done
# the same socket through /proc/self/fd (an O_PATH fd opened outside Landlock's reach)
run_sb run -r "$T/host" -- python3 -c "
import os, socket, errno
fd = os.open('$T/host/svc.sock', os.O_PATH)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('/proc/self/fd/%d' % fd); print('OK')
except OSError as e:
    print(errno.errorcode.get(e.errno))"
[ "$RC" = 0 ] && [ "$OUT" = EACCES ] && ok "through /proc/self/fd: EACCES" || notok "through /proc/self/fd: EACCES" "rc=$RC out=$OUT"

# positive controls: the same program, the same socket, once its folder is granted
run_sb run -w "$T/host" -- python3 probe.py stream "$T/host/svc.sock"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "the same socket beneath a write grant connects" || notok "the same socket beneath a write grant connects" "rc=$RC out=$OUT"
run_sb run -w "$T/host" -- python3 probe.py dgram "$T/host/log.sock"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "a datagram beneath a write grant is sent" || notok "a datagram beneath a write grant is sent" "rc=$RC out=$OUT"
run_sb run -- python3 -c "
import socket, os
a = socket.socket(socket.AF_UNIX); a.bind('in.sock'); a.listen(1)
b = socket.socket(socket.AF_UNIX); b.connect('in.sock')
c, _ = a.accept(); b.send(b'hi'); assert c.recv(2) == b'hi'
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind('d.sock')
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); e.sendto(b'yo', 'd.sock'); assert d.recv(2) == b'yo'
x, y = socket.socketpair(); x.sendmsg([b'pair']); assert y.recv(4) == b'pair'
print('OK')"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "sockets the step makes in its workdir work (stream, datagram, pair)" || notok "sockets the step makes in its workdir work" "rc=$RC out=$OUT"
# fds passed over a socket arrive (the supervisor performs sendmsg with SCM_RIGHTS)
run_sb run -- python3 -c "
import socket, os, array
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
r, w = os.pipe()
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.bind('fdp.sock')
e = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
e.sendmsg([b'f'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [w]))], 0, 'fdp.sock')
msg, anc, _, _ = d.recvmsg(1, socket.CMSG_SPACE(4))
fd = array.array('i', anc[0][2])[0]
os.write(fd, b'ok'); print(os.read(r, 2).decode().upper())"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "SCM_RIGHTS through an addressed sendmsg" || notok "SCM_RIGHTS through an addressed sendmsg" "rc=$RC out=$OUT"

# large messages: a stream's sendmsg is cut to what the supervisor holds (a
# short write, which senders loop over); the bytes arrive whole and in order
run_sb run -- python3 -c "
import hashlib, os, socket, threading
a, b = socket.socketpair()
data = os.urandom(3 << 20)
got = []
def read():
    while True:
        x = b.recv(1 << 16)
        if not x: break
        got.append(x)
t = threading.Thread(target=read); t.start()
sent, calls = 0, 0
while sent < len(data):
    sent += a.sendmsg([data[sent:]]); calls += 1
a.close(); t.join()
assert hashlib.sha256(b''.join(got)).digest() == hashlib.sha256(data).digest()
print('OK', calls > 1)"
[ "$RC" = 0 ] && [ "$OUT" = "OK True" ] && ok "a 3 MiB stream sendmsg arrives whole, in short writes" || notok "a 3 MiB stream sendmsg arrives whole" "rc=$RC out=$OUT"

# abstract names: a host service's is refused; one the step bound is reached
run_sb run -- python3 probe.py stream "@stepbox-host-$$"
if [ "$RC" = 0 ] && { [ "$OUT" = EPERM ] || [ "$OUT" = ECONNREFUSED ]; }; then ok "a host abstract name is refused ($OUT)"
else notok "a host abstract name is refused" "rc=$RC out=$OUT"; fi
run_sb run --net none -- python3 probe.py stream "@stepbox-host-$$"
if [ "$RC" = 0 ] && [ "$OUT" != OK ]; then ok "a host abstract name is refused with --net none ($OUT)"
else notok "a host abstract name is refused with --net none" "rc=$RC out=$OUT"; fi
run_sb run -- python3 -c "
import socket
a = socket.socket(socket.AF_UNIX); a.bind('\0stepbox-inner-$$'); a.listen(1)
b = socket.socket(socket.AF_UNIX); b.connect('\0stepbox-inner-$$')
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); u.bind('')
v = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); v.sendto(b'x', u.getsockname()); assert u.recv(1) == b'x'
print('OK')"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "abstract names (and autobind) the step binds are reached" || notok "abstract names the step binds are reached" "rc=$RC out=$OUT"
# a name the step let go of and the host took is refused
run_sb run -- python3 -c "
import socket, subprocess, sys, time, errno
a = socket.socket(socket.AF_UNIX); a.bind('\0stepbox-reuse-$$'); a.listen(1); a.close()
h = subprocess.Popen([sys.executable, '-c', 'import socket,time; s=socket.socket(socket.AF_UNIX); s.bind(\"\\\\0stepbox-reuse-$$\"); s.listen(1); print(1, flush=True); time.sleep(5)'], stdout=subprocess.PIPE)
h.stdout.readline()
try:
    socket.socket(socket.AF_UNIX).connect('\0stepbox-reuse-$$'); print('OK')
except OSError as e:
    print('refused' if e.errno in (errno.EPERM, errno.EACCES) else e)
h.kill()" 2>&1
# inside the sandbox the helper that re-binds is itself part of the step: allowed
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "a name re-bound inside the step is the step's" || notok "a name re-bound inside the step is the step's" "rc=$RC out=$OUT"

# A name of the step's choosing among the host's abstract names (red team:
# a step squatted one under --net none and a port list, and a host client
# talked to it): only --net allow or a network namespace of the step's own
# let it take one. The controls in the same step: an autobound name and a
# pathname socket in the workdir.
cat >"$T/w/squat.py" <<'PY'
import errno, os, socket, sys
def t(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def named():
    socket.socket(socket.AF_UNIX).bind("\0stepbox-squat-" + sys.argv[1])
def auto():
    socket.socket(socket.AF_UNIX).bind("")
def path():
    p = os.path.join(os.getcwd(), "own.sock")
    if os.path.exists(p):
        os.unlink(p)
    socket.socket(socket.AF_UNIX).bind(p)
print(t(named), t(auto), t(path))
PY
for net in allow none tcp:443; do
	if [ "$BACKEND" = mountns ] && [ "$net" = tcp:443 ]; then
		continue # 125: port lists need Landlock
	fi
	want="EACCES ok ok"
	[ "$net" = allow ] && want="ok ok ok"
	[ "$net" = none ] && [ "$BACKEND" != landlock ] && want="ok ok ok" # a network namespace of its own
	run_sb run --net "$net" --explain -- python3 squat.py "$$-$net"
	if [ "$RC" = 0 ] && [ "$OUT" = "$want" ]; then ok "--net $net: a host abstract name of the step's choosing: ${OUT%% *}, autobind and pathname bind"
	else notok "--net $net: a host abstract name of the step's choosing" "rc=$RC out=$OUT want=$want"; fi
	if [ "$want" = "EACCES ok ok" ]; then
		grep -q "@stepbox-squat-$$-$net.*abstract sockets" "$T/out/err" && ok "--net $net: --explain names the refused name" ||
			notok "--net $net: --explain names the refused name" "$(cat "$T/out/err")"
	fi
done

# There a pathname bind is made by the supervisor from its copy of the
# address (a thread of the step flipping the name's first byte to NUL after
# the check got an abstract name from the kernel: 470 of 2,000 binds). It
# keeps the kernel's meaning: the step's umask, a working listen and
# connect, and no socket where the step may not write.
cp "$TESTDIR/unix-race.py" "$T/w/race.py"
cat >"$T/w/pathbind.py" <<'PY'
import errno, os, socket, stat, sys
os.umask(0o077)
if os.path.exists("own.sock"):
    os.unlink("own.sock")
srv = socket.socket(socket.AF_UNIX)
srv.bind("own.sock")
srv.listen(1)
mode = stat.S_IMODE(os.lstat("own.sock").st_mode)
c = socket.socket(socket.AF_UNIX)
c.connect(os.path.abspath("own.sock"))
a, _ = srv.accept()
c.sendall(b"hi")
got = a.recv(2).decode()
try:
    socket.socket(socket.AF_UNIX).bind(sys.argv[1] + "/x.sock")
    ro = "bound"
except OSError as e:
    ro = errno.errorcode.get(e.errno, str(e.errno))
print(oct(mode), got, ro)
PY
mkdir -p "$T/ro"
for net in none tcp:443; do
	if [ "$BACKEND" = mountns ] && [ "$net" = tcp:443 ] || { [ "$BACKEND" != landlock ] && [ "$net" = none ]; }; then
		continue # 125 there, or a network namespace of the step's own
	fi
	run_sb run --net "$net" -- python3 race.py "$$" 400
	[ "$RC" = 0 ] && [ "$OUT" = "0 True" ] && ok "--net $net: a name flipped to abstract after the check is never bound" ||
		notok "--net $net: a name flipped to abstract after the check is never bound" "rc=$RC out=$OUT $ERR"
	if [ "$net" != none ]; then # (no TCP socket to swap under --net none)
		cp "$TESTDIR/unix-swap.py" "$T/w/swap.py"
		run_sb run --net "$net" -- python3 swap.py "$$" 2000
		[ "$RC" = 0 ] && [ "$OUT" = 0 ] && ok "--net $net: a UNIX socket swapped into a TCP bind's fd takes no abstract name" ||
			notok "--net $net: a UNIX socket swapped into a TCP bind's fd takes no abstract name" "rc=$RC out=$OUT"
	fi
	run_sb run --net "$net" --explain -r "$T/ro" -- python3 pathbind.py "$T/ro"
	if [ "$RC" = 0 ] && echo "$OUT" | grep -qE "^0o700 hi (EACCES|EROFS)$"; then ok "--net $net: a pathname bind keeps the umask, listens and connects; none outside the write grants ($OUT)"
	else notok "--net $net: a pathname bind keeps the kernel's meaning" "rc=$RC out=$OUT"; fi
	grep -q "$T/ro/x.sock" "$T/out/err" && ok "--net $net: --explain names the socket refused outside the write grants" ||
		notok "--net $net: --explain names the refused socket" "$(cat "$T/out/err")"
done

# unix_sockets / --unix: sockets beneath the folder connect, nothing else is granted
echo private >"$T/host/notes"
run_sb run --unix "$T/host" -- python3 probe.py stream "$T/host/svc.sock"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "--unix: a socket beneath it connects" || notok "--unix: a socket beneath it connects" "rc=$RC out=$OUT"
run_sb run --unix "$T/host" -- python3 probe.py dgram "$T/host/log.sock"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "--unix: a datagram beneath it is sent" || notok "--unix: a datagram beneath it is sent" "rc=$RC out=$OUT"
printf '{"version": 1, "unix_sockets": ["%s"]}' "$T/host" >"$T/unix.json"
run_sb run -p "$T/unix.json" -- python3 probe.py stream "$T/host/svc.sock"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "unix_sockets in a policy" || notok "unix_sockets in a policy" "rc=$RC out=$OUT"
# (beneath the private /tmp of the namespaces, Landlock's rule on that /tmp
# covers the folder too: the check uses a folder outside /tmp)
if [ "$BACKEND" = mountns ]; then
	skip "--unix grants no reading" "mountns alone binds the folder read-only: its files are readable (docs/security.md)"
elif U=$(mktemp -d /var/tmp/stepbox-unix.XXXXXX 2>/dev/null); then
	echo private >"$U/notes"
	chmod -R a+rX "$U"
	denied "--unix grants no reading" "cat '$U/notes'" --unix "$U"
	in_box "--unix: the folder's files are read with a read grant (positive control)" "cat '$U/notes'" --unix "$U" -r "$U"
	rm -rf "$U"
else
	skip "--unix grants no reading" "no /var/tmp folder for the test"
fi
run_sb run --unix "$T/host" -- python3 probe.py stream "$T/w/link.sock"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "--unix: a link in the workdir to a socket beneath it connects" || notok "--unix: a link to a socket beneath it" "rc=$RC out=$OUT"

# the denial is named by --explain
run_sb run --explain -r "$T/host" -- python3 probe.py stream "$T/host/svc.sock"
grep -q "connect '$T/host/svc.sock'" "$T/out/err" && ok "--explain names the refused socket" || notok "--explain names the refused socket"
