#!/bin/bash
# t0311: where a container's seccomp profile refuses pidfd_getfd (Docker's
# and containerd's defaults), the supervisor cannot copy the step's sockets.
# stepbox must still run there, and hold: a connect is re-made on a socket of
# the supervisor's, UNIX datagram sockets and listen() under a port list are
# refused and explained, metadata calls on fds still checked. The refusal is
# planted as Docker plants it (a seccomp filter answering EPERM, kprobe), and
# every check runs beside its positive control without it.
. "$(dirname "$0")/lib.sh"

kprobe=${FIXTURES:-/nonexistent}/kprobe
if [ ! -x "$kprobe" ]; then
	skip "no getfd" "the kprobe fixture is missing (tests/run.sh builds it)"
	exit 0
fi
cat >"$T/nofd" <<W
#!/bin/sh
exec "$kprobe" deny-getfd "$SB" "\$@"
W
# containerd's default without CAP_SYS_PTRACE also refuses process_vm_readv
cat >"$T/novm" <<W
#!/bin/sh
exec "$kprobe" deny-getfd-vmread "$SB" "\$@"
W
chmod 755 "$T/nofd" "$T/novm"

# the refusal is planted: pidfd_getfd answers EPERM, as under Docker
got=$("$kprobe" deny-getfd python3 -c 'import ctypes, os
r = ctypes.CDLL(None, use_errno=True).syscall(438, -1, 0, 0)
print(os.strerror(ctypes.get_errno()))')
if [ "$got" != "Operation not permitted" ]; then
	notok "pidfd_getfd refused by the planted filter" "got: $got"
	exit 0
fi

# check says what the supervisor can do here, and run agrees
run_sb check --json
want=$(echo "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["backends"]["'"$BACKEND"'"].get("supervisor"))')
"$T/nofd" check --json >"$T/out/nofd.json" 2>"$T/out/err"
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["backends"]["'"$BACKEND"'"].get("supervisor"))' "$T/out/nofd.json")
if [ "$want" = full ] && [ "$got" = "without pidfd_getfd" ]; then
	ok "check: the supervisor is full, and without pidfd_getfd where it is refused"
else
	notok "check: the supervisor is full, and without pidfd_getfd where it is refused" \
		"without the filter: $want; with it: $got"
fi
"$T/nofd" check >"$T/out/out" 2>"$T/out/err"
if grep -q "backend $BACKEND: .*supervisor (without pidfd_getfd" "$T/out/out"; then
	ok "check's text names the reduced supervisor"
else
	notok "check's text names the reduced supervisor" "$(grep "backend $BACKEND" "$T/out/out")"
fi

# the host: a pathname socket outside every grant, an abstract name, a TCP server
mkdir -p "$T/host"
python3 - "$T/host" "$$" <<'PY' &
import os, socket, sys, threading, time
d, tag = sys.argv[1], sys.argv[2]
u = socket.socket(socket.AF_UNIX); u.bind(d + "/svc.sock"); u.listen(8)
os.chmod(d + "/svc.sock", 0o777)
a = socket.socket(socket.AF_UNIX); a.bind("\0stepbox-nofd-host-" + tag); a.listen(8)
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(8)
def serve():
    while True:
        c, _ = t.accept(); c.sendall(c.recv(5) + b"y"); c.close()
threading.Thread(target=serve, daemon=True).start()
with open(d + "/port.new", "w") as f: f.write(str(t.getsockname()[1]))
os.rename(d + "/port.new", d + "/port")
time.sleep(120)
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -e "$T/host/port" ] && break; sleep 0.1; done
chmod -R a+rx "$T/host"
port=$(cat "$T/host/port")
echo secret >"$T/host/file"
chmod 666 "$T/host/file"

cat >"$T/w/probe.py" <<'PY'
import errno, fcntl, json, os, select, socket, sys, threading
host, port, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
res = {}
def run(name, f):
    try:
        r = f()
        res[name] = "ok" if r is None else r
    except OSError as e:
        res[name] = errno.errorcode.get(e.errno, str(e.errno))
def unix_here():  # a server and a client of the step, in the workdir
    p = os.path.join(os.getcwd(), "here.sock")
    srv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)
    def serve():
        c, _ = srv.accept(); c.sendall(c.recv(8).upper()); c.close()
    th = threading.Thread(target=serve); th.start()
    cl = socket.socket(socket.AF_UNIX); fd = cl.fileno()
    cl.connect(p); cl.sendall(b"hi"); r = cl.recv(8).decode(); th.join()
    return r if cl.fileno() == fd else "moved"
def abstract_own():
    srv = socket.socket(socket.AF_UNIX); srv.bind("\0stepbox-nofd-own-" + tag); srv.listen(1)
    socket.socket(socket.AF_UNIX).connect("\0stepbox-nofd-own-" + tag)
def tcp():
    c = socket.socket(); c.connect(("127.0.0.1", port)); c.sendall(b"x"); return c.recv(8).decode()
def tcp_nonblocking():  # EINPROGRESS, then the socket in place keeps its flags
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
    try:
        c.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    select.select([], [c], [], 5)
    err = c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    nb = bool(fcntl.fcntl(c.fileno(), fcntl.F_GETFL) & os.O_NONBLOCK)
    ce = bool(fcntl.fcntl(c.fileno(), fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
    return "err=%d nonblock=%s cloexec=%s" % (err, nb, ce)
def connected_again():  # a connected socket: EISCONN, as the kernel says
    a, b = socket.socketpair()
    a.connect(os.path.join(os.getcwd(), "here.sock"))
def fchmod(path):
    fd = os.open(path, os.O_RDONLY)
    os.fchmod(fd, 0o644)
def listen_tcp():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
run("unix_here", unix_here)
run("unix_host", lambda: socket.socket(socket.AF_UNIX).connect(host + "/svc.sock"))
run("abstract_own", abstract_own)
run("abstract_host", lambda: socket.socket(socket.AF_UNIX).connect("\0stepbox-nofd-host-" + tag))
run("dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
run("raw", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW).close())
run("dgram_pair", lambda: [s.close() for s in socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)] and None)
def dgram_high():  # AF_UNIX with the register's upper half set: the kernel reads an int
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = {"x86_64": 41, "aarch64": 198}[os.uname().machine]  # socket(2)
    r = libc.syscall(ctypes.c_long(nr),
                     ctypes.c_long(0x100000001), ctypes.c_long(socket.SOCK_DGRAM), ctypes.c_long(0))
    if r < 0:
        raise OSError(ctypes.get_errno(), "socket")
    os.close(r)
run("dgram_high", dgram_high)
def fake_proc_line():
    # a socket path holding a newline and a whole /proc/net/unix line of the
    # step's making, claiming its stream socket is a datagram one: the
    # supervisor must not be fooled into making a datagram socket for it
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for round_ in range(20):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ino = os.fstat(s.fileno()).st_ino
        for i in range(64):
            name = "fake%d-%d\n0000000000000000: 00000002 00000000 00000000 0802 01 %d" % (round_, i, ino)
            b = socket.socket(socket.AF_UNIX)
            b.bind(name)
            with open("/proc/self/net/unix", "rb") as f:
                rows = [l.split() for l in f.read().split(b"\n")]
            mine = [r for r in rows if len(r) >= 7 and r[6] == str(ino).encode()]
            if mine and mine[0][4] == b"0802":
                class SA(ctypes.Structure):
                    _fields_ = [("fam", ctypes.c_ushort), ("pad", ctypes.c_char * 14)]
                libc.connect(s.fileno(), ctypes.byref(SA(0)), 16)
                return {1: "stream", 2: "datagram"}.get(s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE), "other")
    return "not arranged"
run("fake_proc_line", fake_proc_line)
def squat():  # a name among the host's abstract names, through a re-made socket
    p = os.path.join(os.getcwd(), "squat.sock")
    if os.path.exists(p):
        os.unlink(p)
    srv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(p)
    c.bind("\0stepbox-nofd-squat-" + tag)
run("squat", squat)
run("stream_pair", lambda: [s.close() for s in socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)] and None)
run("tcp", tcp)
run("tcp_nonblocking", tcp_nonblocking)
run("connected_again", connected_again)
open("mine", "w").close()
run("fchmod_here", lambda: fchmod("mine"))
run("fchmod_host", lambda: fchmod(host + "/file"))
run("listen_tcp", listen_tcp)
print(json.dumps(res))
PY

# field NAME: the probe's answer for NAME in the last run's output
field() { echo "$OUT" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1]).get(sys.argv[1]))' "$1" 2>/dev/null; }
# same NAME WANT: the answer is WANT (a regex)
same() {
	local got
	got=$(field "$1")
	if echo "$got" | grep -qxE "$2"; then ok "$MODE: $1: $got"; else notok "$MODE: $1" "got $got, want $2"; fi
}

refused='EACCES|EPERM'
[ "$BACKEND" != landlock ] && refused='EACCES|EPERM|ENOENT'

for MODE in full no-getfd no-getfd-vmread; do
	rm -f "$T/w/here.sock" "$T/w/mine"
	case $MODE in
	full) sbx=$SB ;;
	no-getfd) sbx=$T/nofd ;;
	*) sbx=$T/novm ;;
	esac
	"$sbx" run --net allow -r "$T/host" --explain -- python3 probe.py "$T/host" "$port" "$$" \
		>"$T/out/out" 2>"$T/out/err"
	RC=$?
	OUT=$(cat "$T/out/out")
	if [ "$RC" != 0 ] || [ -z "$(field tcp)" ]; then
		notok "$MODE: the step runs" "exit $RC" "stdout: $OUT"
		continue
	fi
	ok "$MODE: the step runs"
	# positive controls: the step's own sockets, TCP, its own files
	same unix_here HI
	same abstract_own ok
	same stream_pair ok
	same tcp xy
	same tcp_nonblocking "err=0 nonblock=True cloexec=True"
	same fchmod_here ok
	same listen_tcp ok
	# the same calls where no grant allows them
	same unix_host "$refused"
	same abstract_host "$refused"
	same fchmod_host "$refused"
	if [ $MODE = full ]; then
		same dgram ok
		same dgram_high ok
		same raw ok
		same dgram_pair ok
		same connected_again "EISCONN|ECONNREFUSED"
	else
		same dgram EACCES
		same dgram_high EACCES
		same fake_proc_line "stream|not arranged"
		same raw EACCES
		same dgram_pair EACCES
		same connected_again EISCONN
		if grep -q "use 'a UNIX datagram socket'.*refuses pidfd_getfd" "$T/out/err"; then
			ok "$MODE: explain names the refused datagram socket and why"
		else
			notok "$MODE: explain names the refused datagram socket and why" "$(grep -i datagram "$T/out/err")"
		fi
	fi
done

# the namespaces with --net none: the step's abstract names are in a network
# namespace the supervisor is not in, so a socket it makes could only reach
# the host's: refused, and said
if [ "$BACKEND" != landlock ]; then
	MODE="no-getfd, --net none"
	rm -f "$T/w/here.sock" "$T/w/mine"
	"$T/nofd" run --net none -r "$T/host" --explain -- python3 probe.py "$T/host" 0 "$$" \
		>"$T/out/out" 2>"$T/out/err"
	OUT=$(cat "$T/out/out")
	same unix_here HI
	same abstract_host EACCES
	same abstract_own EACCES
	# the re-made socket lives in the host's namespace: it may not take a host name
	same squat EINVAL
	if python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind('\0stepbox-nofd-squat-' + sys.argv[1])" "$$"; then
		ok "$MODE: the host's abstract names stay free of the step's"
	else
		notok "$MODE: the host's abstract names stay free of the step's"
	fi
	if grep -q "abstract socket in the step's own network namespace'.*pidfd_getfd" "$T/out/err"; then
		ok "$MODE: explain names the refused abstract connect and why"
	else
		notok "$MODE: explain names the refused abstract connect and why" "$(grep -i abstract "$T/out/err")"
	fi
fi

# Where the step may take no host abstract name, a UNIX bind with a name is
# made on a socket of the supervisor's from its copy of the address and put in
# place of the step's: a name flipped to abstract after the check is never
# bound (left to the kernel, 239 of 1,000 were), the pathname still is.
cp "$TESTDIR/unix-race.py" "$T/w/race.py"
for net in none "tcp:$port"; do
	if [ "$BACKEND" = mountns ] && [ "$net" != none ] || { [ "$BACKEND" != landlock ] && [ "$net" = none ]; }; then
		continue
	fi
	OUT=$("$T/nofd" run --net "$net" -- python3 race.py "$$" 400 2>"$T/out/err")
	RC=$?
	[ "$RC" = 0 ] && [ "$OUT" = "0 True" ] && ok "no-getfd, --net $net: a name flipped to abstract after the check is never bound" ||
		notok "no-getfd, --net $net: a name flipped to abstract after the check is never bound" "rc=$RC out=$OUT $(cat "$T/out/err")"
	if [ "$net" != none ]; then
		cp "$TESTDIR/unix-swap.py" "$T/w/swap.py"
		OUT=$("$T/nofd" run --net "$net" -- python3 swap.py "$$" 2000 2>"$T/out/err")
		RC=$?
		[ "$RC" = 0 ] && [ "$OUT" = 0 ] && ok "no-getfd, --net $net: a UNIX socket swapped into a TCP bind's fd takes no abstract name" ||
			notok "no-getfd, --net $net: a UNIX socket swapped into a TCP bind's fd takes no abstract name" "rc=$RC out=$OUT $(cat "$T/out/err")"
	fi
done

if [ "$BACKEND" = mountns ]; then
	skip "no-getfd, port list" "mountns has no port lists"
	exit 0
fi
# a port list: the listed port reached through a re-made socket, listen() refused
# (the supervisor cannot see whether the step's socket is bound)
MODE=no-getfd
rm -f "$T/w/here.sock" "$T/w/mine"
"$T/nofd" run --net "tcp:$port" -r "$T/host" --explain -- python3 probe.py "$T/host" "$port" "$$" \
	>"$T/out/out" 2>"$T/out/err"
RC=$?
OUT=$(cat "$T/out/out")
MODE="no-getfd, port list"
same tcp xy
same listen_tcp EACCES
# a name of its choosing among the host's abstract names: only --net allow
# (the kernel binds it here: the name is read first, docs/security.md); the
# same bind under --net allow is the control above (abstract_own ok)
same abstract_own EACCES
if grep -q "use 'listen() under a TCP port list'.*pidfd_getfd" "$T/out/err"; then
	ok "$MODE: explain names the refused listen and why"
else
	notok "$MODE: explain names the refused listen and why" "$(grep -i listen "$T/out/err")"
fi
# a port not on the list stays refused by the re-made socket's connect
run_sb run --net tcp:1 -- python3 -c "
import socket, errno
try:
    socket.create_connection(('127.0.0.1', $port), timeout=5); print('connected')
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))"
want=$OUT
"$T/nofd" run --net tcp:1 -- python3 -c "
import socket, errno
try:
    socket.create_connection(('127.0.0.1', $port), timeout=5); print('connected')
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))" >"$T/out/out" 2>"$T/out/err"
got=$(cat "$T/out/out")
if [ "$want" = EACCES ] && [ "$got" = EACCES ]; then
	ok "$MODE: a port off the list is EACCES, as with pidfd_getfd"
else
	notok "$MODE: a port off the list is EACCES, as with pidfd_getfd" "with: $want, without: $got"
fi
