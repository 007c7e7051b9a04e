#!/bin/bash
# t0306 (red team): host System V IPC, /dev/shm and /proc. A step attached a
# host program's shared memory segment and rewrote it, used the host's
# /dev/shm (files that outlive the run) and read every host process's command
# line. The namespace layers give a new IPC namespace, a private /dev/shm and
# a private procfs; Landlock alone refuses System V IPC and /dev/shm.
. "$(dirname "$0")/lib.sh"

# a host segment with a known key, and a host process with a secret argument
key=$((0x5b000000 + $$ % 65536))
python3 - "$key" "$T/shm" <<'PY' &
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key = int(sys.argv[1])
sid = libc.shmget(key, 4096, 0o1666)  # IPC_CREAT | 0666
assert sid >= 0, ctypes.get_errno()
addr = libc.shmat(sid, None, 0)
ctypes.memmove(addr, b"host-data", 9)
open(sys.argv[2], "w").write(str(sid))
time.sleep(60)
libc.shmctl(sid, 0, None)  # IPC_RMID
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -s "$T/shm" ] && break; sleep 0.1; done
sleep 300 --stepbox-secret-argument-$$ 2>/dev/null &
BG_PIDS="$BG_PIDS $!"
sleep 300 &
victim=$!
BG_PIDS="$BG_PIDS $victim"

cat >"$T/w/shm.py" <<'PY'
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget(int(sys.argv[1]), 0, 0)
if sid < 0:
    print(errno.errorcode.get(ctypes.get_errno())); sys.exit()
addr = libc.shmat(sid, None, 0)
if addr in (None, ctypes.c_void_p(-1).value):
    print(errno.errorcode.get(ctypes.get_errno())); sys.exit()
ctypes.memmove(addr, b"PWNED-BY-STEP", 13)
print("ATTACHED")
PY
# positive control: the same program outside the sandbox finds the segment
python3 "$T/w/shm.py" "$key" >/dev/null 2>&1
outside=$(python3 -c "
import ctypes,sys; l=ctypes.CDLL(None); print(l.shmget($key, 0, 0) >= 0)")
[ "$outside" = True ] && ok "the host segment exists (positive control)" || notok "the host segment exists"
run_sb run -- python3 shm.py "$key"
[ "$RC" = 0 ] && [ "$OUT" != ATTACHED ] && ok "the host's System V segment is out of reach ($OUT)" ||
	notok "the host's System V segment is out of reach" "rc=$RC out=$OUT"
in_box "System V message queues of the host are out of reach" "python3 -c '
import ctypes; l = ctypes.CDLL(None, use_errno=True)
q = l.msgget($key, 0)
assert q < 0, q'"
if [ "$BACKEND" = landlock ]; then
	denied "System V IPC is refused (no IPC namespace)" "python3 -c '
import ctypes, os; l = ctypes.CDLL(None, use_errno=True)
if l.shmget(0, 4096, 0o1600) < 0: raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))'"
	denied "the host's /dev/shm is refused" 'echo x > /dev/shm/stepbox-leak'
	[ ! -e /dev/shm/stepbox-leak ] && ok "nothing was left in the host's /dev/shm" || { rm -f /dev/shm/stepbox-leak; notok "nothing was left in the host's /dev/shm"; }
	skip "host processes hidden" "Landlock alone: the host's /proc stays visible (docs/security.md)"
	denied "/proc/PID/environ of a host process" "cat /proc/$victim/environ"
else
	# System V IPC of its own where something bounds it: the IPC namespace's
	# limits (set by a root it maps) or a cgroup; refused otherwise
	run_sb run --report "$T/out/sysv.json" -- true
	by=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["limits"]["memory"]["enforced_by"], d["layers"]["sysv_refused"])' "$T/out/sysv.json")
	sysv='import ctypes, os; l = ctypes.CDLL(None, use_errno=True)
if l.shmget(0, 4096, 0o1600) < 0: raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))'
	if is_root || [ "${by%% *}" = cgroup ]; then
		[ "${by##* }" = False ] && ok "System V IPC is not refused where its limits hold (${by})" ||
			notok "System V IPC is not refused where its limits hold" "$by"
		in_box "System V IPC of its own works (an IPC namespace)" "python3 -c '$sysv'"
	else
		python3 -c "$sysv" && ok "System V IPC works outside (positive control)" ||
			notok "System V IPC works outside (positive control)"
		[ "${by##* }" = True ] && ok "System V IPC is refused where nothing bounds it (the report says so)" ||
			notok "System V IPC is refused where nothing bounds it (the report says so)" "$by"
		denied "a System V segment is refused where nothing bounds it" "python3 -c '$sysv'"
		"$SB" run -v -- true 2>&1 | grep -q "System V IPC refused (its limits cannot be set" &&
			ok "-v says why System V IPC is refused" || notok "-v says why System V IPC is refused"
	fi
	in_box "a private /dev/shm works" 'echo x > /dev/shm/stepbox-private && python3 -c "
import multiprocessing as m; l = m.Lock(); l.acquire(); l.release()"'
	[ ! -e /dev/shm/stepbox-private ] && ok "the private /dev/shm does not reach the host" || { rm -f /dev/shm/stepbox-private; notok "the private /dev/shm does not reach the host"; }
	# the private /tmp holds no more inodes than pages: empty files cost kernel
	# memory too (100,000 in a 1 MiB /tmp held 123 MiB); the control: it
	# holds hundreds
	run_sb run --limit tmp=1M -- python3 -c '
import os
n = 0
try:
    for n in range(5000):
        open("/tmp/f%d" % n, "w").close()
except OSError as e:
    print(n, e.errno)'
	n=${OUT%% *}
	[ "$RC" = 0 ] && [ "${OUT#* }" = 28 ] && [ "$n" -gt 500 ] && [ "$n" -le 1100 ] &&
		ok "a 1 MiB /tmp takes about 1,024 empty files, then ENOSPC ($n)" ||
		notok "a 1 MiB /tmp takes about 1,024 empty files, then ENOSPC" "rc=$RC out=$OUT"
	# System V segments bounded by the tmp limit: a 64 MiB one is refused
	# under tmp=16M (it stayed resident with nothing attached), 1 MiB is the
	# control; the kernel lets only a root it maps set the bound
	shm='import ctypes, os, sys; l = ctypes.CDLL(None, use_errno=True)
sid = l.shmget(0, int(sys.argv[1]) << 20, 0o1600)
print(sid >= 0, ctypes.get_errno() if sid < 0 else 0)'
	if is_root; then
		run_sb run --limit tmp=16M -- sh -c "python3 -c '$shm' 64; python3 -c '$shm' 1; cat /proc/sys/kernel/shm_rmid_forced"
		[ "$RC" = 0 ] && [ "$OUT" = "$(printf 'False 22\nTrue 0\n1')" ] &&
			ok "a 64 MiB System V segment is refused under tmp=16M, 1 MiB is made, orphans are removed" ||
			notok "a 64 MiB System V segment is refused under tmp=16M, 1 MiB is made, orphans are removed" "rc=$RC out=$OUT"
	else
		skip "System V segments bounded by the tmp limit" "a user namespace that maps the caller to itself may not set the IPC namespace's limits (docs/security.md)"
	fi
	run_sb run -- sh -c "cat /proc/*/cmdline | tr '\\0' ' '"
	echo "$OUT" | grep -q "stepbox-secret-argument-$$" && notok "host command lines are not visible" || ok "host command lines are not visible"
	denied "a host process is not there" "cat /proc/$victim/status"
fi

# POSIX shared memory and semaphores (glibc's /dev/shm, a path no program
# chooses) work on every backend: a private tmpfs under the namespaces, a
# folder of the step's own served by the supervisor under Landlock alone.
# The host's objects stay out of reach by name, and nothing is left behind.
cat >"$T/w/mp.py" <<'PY'
import multiprocessing as mp, os, sys
from multiprocessing import shared_memory
def sq(x): return x * x
if __name__ == "__main__":
    q = mp.Queue(); q.put(41)
    with mp.Pool(2) as p: total = sum(p.map(sq, range(10)))
    sm = shared_memory.SharedMemory(create=True, size=64); sm.buf[0] = 7
    again = shared_memory.SharedMemory(name=sm.name)
    print(q.get() + 1, total, again.buf[0])
    again.close(); sm.close(); sm.unlink()
    # as shm_open does (multiprocessing's tracker would unlink what it opens):
    # one left for the end of the step, and the host's by its name
    shape = os.O_NOFOLLOW | os.O_CLOEXEC
    os.open("/dev/shm/stepbox-left-%s" % sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL | shape, 0o600)
    try:
        os.open("/dev/shm/" + sys.argv[2], os.O_RDONLY | shape)
        print("HOST-OBJECT-OPENED")
    except FileNotFoundError:
        print("host object: not there")
PY
host_obj=stepbox-host-$$
printf 'host-secret' >/dev/shm/$host_obj 2>/dev/null && chmod 666 /dev/shm/$host_obj
# positive control: the same program outside opens the host's object
python3 -c "import os; print(os.read(os.open('/dev/shm/$host_obj', os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), 4))" >"$T/out/ctl" 2>&1
grep -q "b'host'" "$T/out/ctl" && ok "the host's shared memory object opens outside (positive control)" ||
	notok "the host's shared memory object opens outside (positive control)" "$(cat "$T/out/ctl")"
run_sb run -- python3 mp.py $$ $host_obj
[ "$RC" = 0 ] && [ "$OUT" = "$(printf '42 285 7\nhost object: not there')" ] &&
	ok "multiprocessing's Queue, Pool and shared_memory work; the host's objects are not there" ||
	notok "multiprocessing's Queue, Pool and shared_memory work; the host's objects are not there" "rc=$RC $OUT" "$ERR"
# a step's folder that outlived it has no run holding it (other runs' stay held)
orphans() {
	python3 -c 'import fcntl, glob, os
n = 0
for d in glob.glob("/dev/shm/stepbox-shm.*"):
    if os.path.exists(d + "/planted-by-t0306"):
        continue  # the stale folder planted below, by this test beside us
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        continue
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); n += os.stat(d).st_uid == os.getuid()
    except OSError:
        pass
    os.close(fd)
print(n)'
}
[ ! -e /dev/shm/stepbox-left-$$ ] && [ "$(cat /dev/shm/$host_obj)" = host-secret ] &&
	[ "$(orphans)" = 0 ] &&
	ok "nothing the step made in /dev/shm outlives it, on the host" ||
	{ rm -f /dev/shm/stepbox-left-$$; notok "nothing the step made in /dev/shm outlives it, on the host" "$(ls -A /dev/shm)"; }
if [ -x "${FIXTURES:-/nonexistent}/kprobe" ]; then
	"$FIXTURES/kprobe" deny-getfd "$SB" run -- python3 mp.py $$ $host_obj >"$T/out/out" 2>"$T/out/err"
	[ "$?" = 0 ] && [ "$(head -1 "$T/out/out")" = "42 285 7" ] &&
		ok "shared memory works where pidfd_getfd is refused (a container's profile)" ||
		notok "shared memory works where pidfd_getfd is refused (a container's profile)" "$(cat "$T/out/out")"
fi
rm -f /dev/shm/$host_obj
if [ "$BACKEND" = landlock ]; then
	# only glibc's shapes are served, and only /dev/shm/NAME: the same calls
	# elsewhere are Landlock's, which refuses them outside the write grants
	# (their positive control: the workdir)
	run_sb run -- python3 -c '
import os
for p in ("/usr/stepbox-t0306", "/dev/shm/../../usr/stepbox-t0306", "/dev/shm/x/../../../usr/stepbox-t0306"):
    try:
        os.close(os.open(p, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC)); print("MADE", p)
    except OSError as e:
        print(e.errno)
os.close(os.open("mine", os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC))
os.link("mine", "mine2"); os.unlink("mine"); os.unlink("mine2"); print("workdir ok")'
	[ "$RC" = 0 ] && [ "$OUT" = "$(printf '13\n13\n2\nworkdir ok')" ] && [ ! -e /usr/stepbox-t0306 ] &&
		ok "Landlock alone: served calls reach /dev/shm/NAME alone; elsewhere Landlock judges" ||
		notok "Landlock alone: served calls reach /dev/shm/NAME alone; elsewhere Landlock judges" "rc=$RC $OUT"
	# a folder a killed run left is removed by the next; one whose run holds it is not
	stale=$(mktemp -d /dev/shm/stepbox-shm.XXXXXX) && : >"$stale/sem.x" && : >"$stale/planted-by-t0306"
	live=$(mktemp -d /dev/shm/stepbox-shm.XXXXXX)
	python3 -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print("held", flush=True); time.sleep(30)' "$live" >"$T/out/held" &
	holder=$!
	BG_PIDS="$BG_PIDS $holder"
	for _ in $(seq 50); do [ -s "$T/out/held" ] && break; sleep 0.1; done
	run_sb run -- true
	[ ! -e "$stale" ] && [ -d "$live" ] && ok "a folder a killed run left in /dev/shm is removed; a held one stays" ||
		notok "a folder a killed run left in /dev/shm is removed; a held one stays" "$(ls -A /dev/shm)"
	kill $holder 2>/dev/null
	rm -rf "$stale" "$live"
	# --explain sees a creation the supervisor let go on (tracer or audit)
	run_sb run --explain -- python3 -c 'import tempfile; tempfile.mkstemp(dir="/usr")'
	[ "$RC" != 0 ] && grep -q "/usr" "$T/out/err" && grep -qi "denied\|refused" "$T/out/err" &&
		ok "--explain names a creation the supervisor let Landlock refuse" ||
		notok "--explain names a creation the supervisor let Landlock refuse" "rc=$RC $ERR"
fi

# extended attribute values past 4 KiB are refused (a POSIX ACL on a tmpfs
# is kernel memory nothing charges: 64 KiB ones held about 1 GiB under
# tmp=16M); the control: the same 8 KiB value outside, on a tmpfs, and 1 KiB
# inside
cat >"$T/w/xattr.py" <<'PY'
import os, struct, sys
p = sys.argv[1]
open(p, "w").close()
os.setxattr(p, "user.small", b"x" * 1024)
out = ["small"]
try:
    os.setxattr(p, "user.big", b"x" * 8192); out.append("BIG-SET")
except OSError as e:
    out.append("big=%d" % e.errno)
if os.getuid() == 0:
    # an ACL naming 1,000 users: version 2, then (tag, perm, id) entries
    acl = struct.pack("<I", 2) + struct.pack("<HHI", 1, 6, 0xffffffff)
    acl += b"".join(struct.pack("<HHI", 2, 4, 1000 + i) for i in range(1000))
    acl += struct.pack("<HHI", 4, 4, 0xffffffff) + struct.pack("<HHI", 0x10, 4, 0xffffffff)
    acl += struct.pack("<HHI", 0x20, 4, 0xffffffff)
    try:
        os.setxattr(p, "system.posix_acl_access", acl); out.append("ACL-SET")
    except OSError as e:
        out.append("acl=%d" % e.errno)
print(" ".join(out))
os.unlink(p)
PY
if python3 "$T/w/xattr.py" /dev/shm/stepbox-xattr-$$ 2>/dev/null | grep -q "small BIG-SET"; then
	ok "an 8 KiB extended attribute is set outside, on a tmpfs (positive control)"
	where=/tmp/xattr-probe
	[ "$BACKEND" = landlock ] && where=xattr-probe
	run_sb run -- python3 xattr.py "$where"
	want="small big=7"
	is_root && want="$want acl=7"
	[ "$RC" = 0 ] && [ "$OUT" = "$want" ] && ok "extended attribute values past 4 KiB are refused, E2BIG ($OUT)" ||
		notok "extended attribute values past 4 KiB are refused, E2BIG" "rc=$RC out=$OUT"
else
	skip "xattr bound" "this kernel's tmpfs takes no user xattrs (Linux 6.6): no control"
fi
rm -f /dev/shm/stepbox-xattr-$$

# POSIX message queues and other processes by pid (limits, priority, affinity)
mq=stepbox-mq-$$
python3 -c "import ctypes, os; l = ctypes.CDLL(None); assert l.mq_open(b'/$mq', os.O_CREAT | os.O_RDWR, 0o666, None) >= 0"
run_sb run -- python3 -c "
import ctypes, os; l = ctypes.CDLL(None, use_errno=True)
print(l.mq_unlink(b'/$mq'), l.mq_open(b'/$mq-new', os.O_CREAT | os.O_RDWR, 0o666, None))"
python3 -c "import ctypes; l = ctypes.CDLL(None); raise SystemExit(l.mq_unlink(b'/$mq') != 0)" &&
	ok "a host message queue survives the step" || notok "a host message queue survives the step" "$OUT"
python3 -c "import ctypes; l = ctypes.CDLL(None); raise SystemExit(l.mq_unlink(b'/$mq-new') == 0)" &&
	ok "the step made no host message queue" || notok "the step made no host message queue"
in_box "a message queue of its own works (positive control where there is an IPC namespace)" \
	"[ $BACKEND = landlock ] || python3 -c \"
import ctypes, os; l = ctypes.CDLL(None); assert l.mq_open(b'/mine', os.O_CREAT | os.O_RDWR, 0o600, None) >= 0\""
run_sb run -- python3 -c "
import os, errno, resource
out = []
for name, f in [('prlimit', lambda: resource.prlimit($victim, resource.RLIMIT_NOFILE, (17, 17))),
                ('setpriority', lambda: os.setpriority(os.PRIO_PROCESS, $victim, 19)),
                ('affinity', lambda: os.sched_setaffinity($victim, {0}))]:
    try: f(); out.append(name + '=OK')
    except OSError as e: out.append(name + '=' + errno.errorcode[e.errno])
print(' '.join(out))"
case "$OUT" in
*=OK*) notok "limits, priority and affinity of a host process are out of reach" "$OUT" ;;
*) [ "$RC" = 0 ] && ok "limits, priority and affinity of a host process are out of reach ($OUT)" || notok "host process by pid" "rc=$RC" ;;
esac
[ "$(prlimit --nofile --noheadings --output SOFT --pid "$victim")" != 17 ] && ok "the host process keeps its limits" || notok "the host process keeps its limits"
in_box "the step sets its own limits and priority (positive control)" "python3 -c \"
import os, resource
resource.prlimit(0, resource.RLIMIT_NOFILE, (64, 64)); os.setpriority(os.PRIO_PROCESS, 0, 5)\""

# Named pipes (FIFOs) in a read grant: the kernel opens a FIFO for writing on
# a read-only mount, and under stacked the write rule of a place above (the
# private /tmp, a write grant) reached down into a read grant bound there: a
# step wrote into a host process's pipe (red-team pass 3, 5 of 5). A host
# reader holds each pipe open; the step's write must be refused where it is
# only read, and arrive where it is written (the control).
mkdir -p "$T/ro" "$T/w/ro"
mkfifo "$T/ro/fifo" "$T/w/fifo" "$T/w/ro/fifo" "$T/ro/lone"
chmod 666 "$T/ro/fifo" "$T/w/fifo" "$T/w/ro/fifo" "$T/ro/lone"
chmod -R a+rwX "$T/ro" "$T/w/ro"
python3 - "$T/fifolog" "$T/ro/fifo" "$T/w/fifo" "$T/w/ro/fifo" "$T/ro/lone" <<'PY' &
import os, select, sys, time
log = open(sys.argv[1], "a", buffering=1)
fds = {os.open(p, os.O_RDONLY | os.O_NONBLOCK): p for p in sys.argv[2:]}
end = time.time() + 60
while time.time() < end:
    for fd in select.select(list(fds), [], [], 0.2)[0]:
        try:  # readable for a writer gone (EOF), then another opened: EAGAIN
            data = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if data:
            log.write("%s %s\n" % (fds[fd], data.decode(errors="replace").strip()))
PY
BG_PIDS="$BG_PIDS $!"
sleep 0.5
cat >"$T/w/fifo.py" <<'PY'
import errno, os, sys
for p in sys.argv[1:]:
    try:
        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"from-step\n")
        os.close(fd)
        print(p, "WROTE")
    except OSError as e:
        print(p, errno.errorcode.get(e.errno, e.errno))
PY
if [ "$BACKEND" = mountns ]; then
	skip "named pipes in a read grant outside /run" "mountns alone: no Landlock rule stands behind a read-only bind, which does not hold for pipes (docs/security.md)"
else
	run_sb run -r "$T/ro" -- python3 fifo.py "$T/ro/fifo" "$T/w/fifo"
	sleep 0.5
	got=$(cat "$T/fifolog" 2>/dev/null)
	case "$OUT" in
	"$T/ro/fifo "E*$'\n'"$T/w/fifo WROTE")
		echo "$got" | grep -q "^$T/ro/fifo" && notok "a named pipe in a read grant is not written" "it arrived: $got" ||
			{ echo "$got" | grep -q "^$T/w/fifo from-step" &&
				ok "a named pipe in a read grant beneath /tmp is not written (${OUT%%$'\n'*}); one in the workdir is (the control)" ||
				notok "control: a named pipe in the workdir is written" "log: $got"; } ;;
	*) notok "a named pipe in a read grant is not written, one in the workdir is" "rc=$RC $OUT" ;;
	esac
	# a grant that is itself a named pipe
	run_sb run -r "$T/ro/lone" -- python3 fifo.py "$T/ro/lone"
	case "$OUT" in
	*WROTE*) notok "a read grant that is a named pipe is not written" "$OUT" ;;
	*) [ "$RC" = 0 ] && ok "a read grant that is a named pipe is not written (${OUT##* })" ||
		notok "a read grant that is a named pipe is not written" "rc=$RC $ERR" ;;
	esac
fi
# a system pipe in /run, shaped like systemd's /run/initctl, under -r /: the
# one place mountns alone searches too (a root step wrote a root-only pipe
# there, red-team pass 3); the control is the workdir's pipe, written
if is_root; then
	run_dir=$(mktemp -d /run/stepbox-t0306.XXXXXX)
	mkfifo -m 600 "$run_dir/initctl"
	python3 - "$T/runlog" "$run_dir/initctl" <<'PY' &
import os, select, sys, time
log = open(sys.argv[1], "a", buffering=1)
fd = os.open(sys.argv[2], os.O_RDONLY | os.O_NONBLOCK)
end = time.time() + 30
while time.time() < end:
    if select.select([fd], [], [], 0.2)[0]:
        try:  # as above
            data = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if data:
            log.write(data.decode(errors="replace"))
PY
	BG_PIDS="$BG_PIDS $!"
	sleep 0.5
	run_sb run -r / -- python3 fifo.py "$run_dir/initctl" "$T/w/fifo"
	sleep 0.5
	case "$OUT" in
	*initctl\ WROTE*) notok "-r /: a root-only pipe in /run is not written" "$OUT" ;;
	*"$T/w/fifo WROTE"*) [ ! -s "$T/runlog" ] && ok "-r /: a root-only pipe in /run is not written (${OUT%%$'\n'*}); the workdir's is" ||
		notok "-r /: a root-only pipe in /run is not written" "it arrived: $(cat "$T/runlog")" ;;
	*) notok "-r /: the workdir's pipe is written (the control)" "rc=$RC $OUT" ;;
	esac
	rm -rf "$run_dir"
fi
# past the search's 20,000 entries the rest is not searched: said, naming the
# grant and what to do (stacked)
if [ "$BACKEND" = stacked ]; then
	python3 -c '
import os, sys
for d in range(21):
    os.makedirs("%s/%d" % (sys.argv[1], d))
    for f in range(1000):
        open("%s/%d/%d" % (sys.argv[1], d, f), "w").close()' "$T/w/big"
	run_sb run -r "$T/w/big" -- true
	grep -q "'$T/w/big' was not searched whole for named pipes (over 20,000 entries in all): .*keep it out of /tmp, HOME and the write grants, or grant it read-write.*find '$T/w/big' -type p" "$T/out/err" && [ "$RC" = 0 ] &&
		ok "a read grant past the pipe search's budget is named, with what to do" ||
		notok "a read grant past the pipe search's budget is named, with what to do" "rc=$RC $ERR"
	# said once for that folder (a warning on every run is noise), again with -v
	run_sb run -r "$T/w/big" -- true
	quiet=$(grep -c "not searched whole" "$T/out/err")
	run_sb run -v -r "$T/w/big" -- true
	[ "$quiet" = 0 ] && grep -q "'$T/w/big' was not searched whole" "$T/out/err" &&
		grep -qx "$T/w/big" "$HOME/.local/state/stepbox/pipes-unsearched" &&
		ok "the unsearched grant is said once, then with -v" ||
		notok "the unsearched grant is said once, then with -v" "quiet run said it $quiet times" "$ERR"
	rm -rf "$T/w/big"
fi
# a read grant inside the workdir (the namespaces bind it read-only there;
# Landlock alone refuses the run, 125)
if [ "$BACKEND" = stacked ]; then
	run_sb run -r "$T/w/ro" -- python3 fifo.py "$T/w/ro/fifo"
	sleep 0.5
	case "$OUT" in
	*WROTE*) notok "a named pipe in a read grant inside the workdir is not written" "$OUT" ;;
	*) [ "$RC" = 0 ] && ! grep -q "^$T/w/ro/fifo" "$T/fifolog" &&
		ok "a named pipe in a read grant inside the workdir is not written (${OUT##* })" ||
		notok "a named pipe in a read grant inside the workdir is not written" "rc=$RC $ERR" ;;
	esac
fi
