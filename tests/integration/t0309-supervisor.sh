#!/bin/bash
# t0309 (red team): the supervisor itself as the target. It reads the step's
# arguments and acts for it, outside the sandbox: malformed arguments must
# get the kernel's own answer and never corrupt it, a step must not wedge it
# past --timeout nor make it hold memory without bound, and the places it
# judges must not move when the step renames the folders it owns.
. "$(dirname "$0")/lib.sh"

# a sockaddr longer than sockaddr_un: EINVAL, as the kernel says; stepbox lives on
run_sb run -- python3 -c "
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(socket.AF_UNIX)
for first in (b'/', b'\\0'):
    buf = ctypes.create_string_buffer(b'\\x01\\x00' + first + b'A' * 125, 128)
    r = libc.connect(s.fileno(), buf, 128)
    print(r, errno.errorcode.get(ctypes.get_errno()))"
[ "$RC" = 0 ] && [ "$(echo $OUT)" = "-1 EINVAL -1 EINVAL" ] && ok "a 128-byte unix sockaddr: EINVAL" || notok "a 128-byte unix sockaddr: EINVAL" "rc=$RC $OUT"

# SCM_RIGHTS with cmsg_len past msg_controllen: EINVAL, as __scm_send says
run_sb run -- python3 -c "
import ctypes, errno, socket, os
libc = ctypes.CDLL(None, use_errno=True)
a, b = socket.socketpair()
fds = [os.dup(0) for _ in range(64)]
class iovec(ctypes.Structure): _fields_ = [('b', ctypes.c_void_p), ('l', ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [('n', ctypes.c_void_p), ('nl', ctypes.c_uint32), ('iov', ctypes.POINTER(iovec)),
                ('iovlen', ctypes.c_size_t), ('c', ctypes.c_void_p), ('cl', ctypes.c_size_t), ('f', ctypes.c_int)]
data = ctypes.create_string_buffer(b'x')
iov = iovec(ctypes.cast(data, ctypes.c_void_p), 1)
ctl = (ctypes.c_int * 70)()
ctl[0] = 16 + 4 * 64; ctl[1] = 0; ctl[2] = socket.SOL_SOCKET; ctl[3] = socket.SCM_RIGHTS
for i in range(64): ctl[4 + i] = fds[i]
m = msghdr(None, 0, ctypes.pointer(iov), 1, ctypes.cast(ctl, ctypes.c_void_p), 20, 0)
r = libc.sendmsg(a.fileno(), ctypes.byref(m), 0)
print(r, errno.errorcode.get(ctypes.get_errno()))"
[ "$RC" = 0 ] && [ "$OUT" = "-1 EINVAL" ] && ok "SCM_RIGHTS with cmsg_len past the control buffer: EINVAL" || notok "SCM_RIGHTS with cmsg_len past the control buffer: EINVAL" "rc=$RC $OUT"

# many blocking sends parked on a full socket, each carrying the peer: stepbox
# still ends at its timeout
start=$(date +%s)
run_sb run --timeout 3 -- python3 -c "
import array, socket, threading, time
a, b = socket.socketpair()
a.setblocking(False)
try:
    while True: a.send(b'x' * 65536)
except BlockingIOError: pass
a.setblocking(True)
fds = array.array('i', [b.fileno()])
def park():
    try: a.sendmsg([b'y' * 4096], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    except OSError: pass
for _ in range(120): threading.Thread(target=park, daemon=True).start()
time.sleep(60)"
took=$(( $(date +%s) - start ))
[ "$RC" = 124 ] && [ "$took" -lt 20 ] && ok "120 parked sends cannot hold stepbox past --timeout (${took} s)" || notok "parked sends cannot hold stepbox past --timeout" "rc=$RC took=$took"

# a sendmmsg of 1024 messages over one 4 MiB buffer, parked: stepbox holds a bounded amount
parked='
import ctypes, socket, threading, time
libc = ctypes.CDLL(None, use_errno=True)
a, b = socket.socketpair()
a.setblocking(False)
try:
    while True: a.send(b"x" * 65536)
except BlockingIOError: pass
a.setblocking(True)
class iovec(ctypes.Structure): _fields_ = [("b", ctypes.c_void_p), ("l", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("n", ctypes.c_void_p), ("nl", ctypes.c_uint32), ("iov", ctypes.POINTER(iovec)),
                ("iovlen", ctypes.c_size_t), ("c", ctypes.c_void_p), ("cl", ctypes.c_size_t), ("f", ctypes.c_int)]
class mmsghdr(ctypes.Structure): _fields_ = [("h", msghdr), ("len", ctypes.c_uint)]
big = ctypes.create_string_buffer(4 << 20)
iov = iovec(ctypes.cast(big, ctypes.c_void_p), 4 << 20)
vec = (mmsghdr * 1024)()
for i in range(1024): vec[i].h = msghdr(None, 0, ctypes.pointer(iov), 1, None, 0, 0)
for _ in range(8): threading.Thread(target=lambda: libc.sendmmsg(a.fileno(), vec, 1024, 0), daemon=True).start()
time.sleep(60)
'
# the most any process of the run held (stepbox, its supervisor thread
# among them; the step's python is a few MiB), as the kernel counts it for
# the children waited for: no process to find while it runs
rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$SB" run --timeout 6 -- python3 -c "$parked")
[ -n "$rss" ] && [ "$rss" -lt 102400 ] && ok "parked sendmmsg of 4 GiB each: the run's largest process held ${rss} KiB" || notok "parked sendmmsg: stepbox memory bounded" "rss=$rss KiB"

# the folders that hold mount points are the step's own on the private /tmp:
# renaming them moves no read-only grant under a write grant
if [ "$BACKEND" != landlock ]; then
	mkdir -p "$T/ro"
	python3 -c "
import socket, os, sys, time
p = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.bind(p); os.chmod(p, 0o777); s.listen(4); time.sleep(60)" "$T/ro/svc.sock" &
	BG_PIDS="$BG_PIDS $!"
	wait_for test -S "$T/ro/svc.sock"
	chmod -R a+rx "$T/ro"
	run_sb run -r "$T/ro" -- python3 -c "
import os, socket, errno, sys
T = sys.argv[1]
top = '/' + T.split('/')[1]          # /tmp
first = top + '/' + T.split('/')[2]  # the first folder stepbox made there
def c(p):
    s = socket.socket(socket.AF_UNIX)
    try: s.connect(p); return 'CONNECTED'
    except OSError as e: return errno.errorcode[e.errno]
print(c(T + '/ro/svc.sock'))
os.rename(first, top + '/moved')
os.makedirs(os.path.dirname(T + '/w/x'), exist_ok=True)
os.rename(top + '/moved', T + '/w/x')
print(c(T + '/w/x' + T[len(first):] + '/ro/svc.sock'))" "$T"
	[ "$RC" = 0 ] && [ "$(echo $OUT)" = "EACCES EACCES" ] && ok "renaming the folders around mount points moves no grant" ||
		notok "renaming the folders around mount points moves no grant" "rc=$RC $OUT"
else
	skip "renaming the folders around mount points" "Landlock alone binds nothing"
fi
