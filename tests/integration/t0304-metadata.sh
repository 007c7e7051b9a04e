#!/bin/bash
# t0304 (red team): metadata outside every write grant. Under Landlock alone
# chmod 4777, utimes and setxattr worked on files outside the write grants
# (as root, chmod 4755 on /usr/bin/python3 gives every local user root), and
# fchmod worked through a read-only grant. Allowed only beneath write grants:
# the supervisor under Landlock alone, read-only mounts (EROFS) otherwise.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/ro"
echo data >"$T/ro/f"
chmod 644 "$T/ro/f"
touch -d 2001-02-03 "$T/ro/f"
echo mine >"$T/w/mine"
chmod 644 "$T/w/mine"
before=$(stat -c '%a %Y %U' "$T/ro/f")

meta() { # the same calls on a path: prints one word per call
	cat <<'PY'
import errno, fcntl, os, struct, sys
p = sys.argv[1]
mode = int(sys.argv[2], 8)  # the control beneath a write grant: no set-id bit
def t(name, f):
    try:
        f(); print(name + "=OK")
    except OSError as e:
        print(name + "=" + errno.errorcode.get(e.errno, str(e.errno)))
t("chmod", lambda: os.chmod(p, mode))
t("utime", lambda: os.utime(p, (0, 0)))
t("chown", lambda: os.chown(p, os.getuid(), os.getgid()))
t("setxattr", lambda: os.setxattr(p, "user.stepbox", b"1"))
def fdchmod():
    fd = os.open(p, os.O_RDONLY)
    try: os.fchmod(fd, mode)
    finally: os.close(fd)
t("fchmod", fdchmod)
def futime():
    fd = os.open(p, os.O_RDONLY)
    try: os.utime(fd, (0, 0))
    finally: os.close(fd)
t("futime", futime)
def chattr():
    fd = os.open(p, os.O_RDONLY)
    try: fcntl.ioctl(fd, 0x40086602, struct.pack("i", 0x40))  # FS_IOC_SETFLAGS, noatime
    finally: os.close(fd)
t("chattr", chattr)
def lchmod_fallback():  # glibc's AT_SYMLINK_NOFOLLOW path: /proc/self/fd of an O_PATH fd
    fd = os.open(p, os.O_PATH)
    try: os.chmod("/proc/self/fd/%d" % fd, mode)
    finally: os.close(fd)
t("procfd", lambda: lchmod_fallback())
PY
}
meta >"$T/w/meta.py"
run_sb run -r "$T/ro" -- python3 meta.py "$T/ro/f" 4777
bad=$(echo "$OUT" | grep -E "=OK$" | tr '\n' ' ')
if [ "$RC" = 0 ] && [ -z "$bad" ] && [ "$(echo "$OUT" | wc -l)" = 8 ]; then ok "metadata outside the write grants refused: $(echo $OUT)"
else notok "metadata outside the write grants refused" "rc=$RC allowed: $bad" "$OUT"; fi
[ "$(stat -c '%a %Y %U' "$T/ro/f")" = "$before" ] && ok "the file outside is unchanged" || notok "the file outside is unchanged" "$(stat -c '%a %Y %U' "$T/ro/f")"
getfattr -n user.stepbox "$T/ro/f" >/dev/null 2>&1 && notok "no xattr was set outside" || ok "no xattr was set outside"
# positive control: the same program on a file beneath the write grant (chattr and
# setxattr depend on the filesystem under the test folder: only refusals by the
# sandbox count as failures there)
run_sb run -- python3 meta.py "$T/w/mine" 777
bad=$(echo "$OUT" | grep -vE "=OK$|^(setxattr|chattr)=(ENOTSUP|EOPNOTSUPP|ENOTTY|EPERM|EINVAL)$" | tr '\n' ' ')
[ "$RC" = 0 ] && [ -z "$bad" ] && ok "the same calls beneath the write grant work" || notok "the same calls beneath the write grant work" "rc=$RC $bad"
[ "$(stat -c '%a' "$T/w/mine")" = 777 ] && ok "chmod beneath the write grant reached the file" || notok "chmod beneath the write grant reached the file"

# a folder beside a write grant named "<grant> (deleted)": the kernel marks an
# unlinked file's path so, and the supervisor took the name for the grant
# (red-team pass 3: chmod, utime and setxattr of it under Landlock alone)
mkdir -p "$T/dw/w" "$T/dw/w (deleted)"
echo y >"$T/dw/w/g"
chmod 644 "$T/dw/w/g"
chmod -R a+rwX "$T/dw"
chmod 755 "$T/dw/w (deleted)"
before=$(stat -c '%a %Y' "$T/dw/w (deleted)")
run_sb run -r "$T/dw" -w "$T/dw/w" -- python3 meta.py "$T/dw/w (deleted)" 777
bad=$(echo "$OUT" | grep -E "=OK$" | tr '\n' ' ')
[ "$RC" = 0 ] && [ -z "$bad" ] && [ "$(echo "$OUT" | wc -l)" = 8 ] &&
	[ "$(stat -c '%a %Y' "$T/dw/w (deleted)")" = "$before" ] &&
	ok "metadata of a folder named '<write grant> (deleted)' refused: $(echo $OUT)" ||
	notok "metadata of a folder named '<write grant> (deleted)' refused" "rc=$RC allowed: $bad"
run_sb run -r "$T/dw" -w "$T/dw/w" -- python3 meta.py "$T/dw/w/g" 777
[ "$RC" = 0 ] && echo "$OUT" | grep -qx "chmod=OK" && [ "$(stat -c '%a' "$T/dw/w/g")" = 777 ] &&
	ok "control: chmod in the write grant beside it works" ||
	notok "control: chmod in the write grant beside it works" "rc=$RC $OUT"

# fchownat and utimensat on "" with AT_EMPTY_PATH name an fd, O_PATH ones too,
# which the kernel allows and the supervisor answered EBADF (red-team pass 3):
# beneath the write grant they work, outside they are refused
cat >"$T/w/emptypath.py" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
res = []
for name, f in [("fchownat", lambda fd: libc.fchownat(fd, b"", os.getuid(), os.getgid(), 0x1000)),
                ("utimensat", lambda fd: libc.utimensat(fd, b"", None, 0x1000))]:
    for flags, kind in ((os.O_PATH, "opath"), (os.O_RDONLY, "rdonly")):
        fd = os.open(sys.argv[1], flags)
        r = f(fd)
        res.append("%s/%s=%s" % (name, kind, "OK" if r == 0 else errno.errorcode.get(ctypes.get_errno())))
        os.close(fd)
print(" ".join(res))
PY
run_sb run -- python3 emptypath.py "$T/w/mine"
[ "$OUT" = "fchownat/opath=OK fchownat/rdonly=OK utimensat/opath=OK utimensat/rdonly=OK" ] &&
	ok "fchownat and utimensat with AT_EMPTY_PATH on O_PATH and open fds beneath the write grant work" ||
	notok "fchownat and utimensat with AT_EMPTY_PATH on O_PATH and open fds beneath the write grant work" "rc=$RC $OUT"
run_sb run -r "$T/ro" -- python3 emptypath.py "$T/ro/f"
case "$OUT" in
*=OK*|"") notok "the same outside the write grants are refused" "rc=$RC $OUT" ;;
*) ok "the same outside the write grants are refused ($OUT)" ;;
esac

# system files: chmod to the mode they already have (harmless if it were allowed)
for f in /usr/bin/python3 /etc/passwd /dev/null; do
	f=$(readlink -f "$f")
	mode=$(stat -c '%a' "$f")
	run_sb run -- python3 -c "
import os, errno
try:
    os.chmod('$f', 0o$mode); print('OK')
except OSError as e:
    print(errno.errorcode.get(e.errno))"
	[ "$RC" = 0 ] && [ "$OUT" != OK ] && ok "chmod $f refused ($OUT)" || notok "chmod $f refused" "rc=$RC out=$OUT"
done

# fds 0-2 are the caller's files: a file outside every grant given as stdout
# (a root step made it a setuid program), and the step's own terminal
echo before >"$T/ro/stdout-file"
chmod 644 "$T/ro/stdout-file"
"$SB" run -- python3 -c "
import os, errno, sys
out = []
for name, f in [('fchmod', lambda: os.fchmod(1, 0o4755)), ('chmod /dev/stdout', lambda: os.chmod('/dev/stdout', 0o4755)),
                ('chmod /proc/self/fd/1', lambda: os.chmod('/proc/self/fd/1', 0o4755)),
                ('futimens', lambda: os.utime(1, (0, 0))), ('fchown', lambda: os.fchown(1, -1, -1))]:
    try: f(); out.append(name + '=OK')
    except OSError as e: out.append(name + '=' + errno.errorcode[e.errno])
print(' '.join(out), file=sys.stderr)" >>"$T/ro/stdout-file" 2>"$T/out/err"
got=$(cat "$T/out/err")
case "$got" in
*=OK*) notok "metadata of a file outside the grants given as stdout is refused" "$got" ;;
*) ok "metadata of a file outside the grants given as stdout is refused ($got)" ;;
esac
[ "$(stat -c %a "$T/ro/stdout-file")" = 644 ] && ok "the stdout file keeps its mode" || notok "the stdout file keeps its mode" "$(stat -c %a "$T/ro/stdout-file")"
# positive control: stdout given as a file beneath the write grant
"$SB" run -- python3 -c "import os; os.fchmod(1, 0o600)" >"$T/w/out-file"
[ "$(stat -c %a "$T/w/out-file")" = 600 ] && ok "fchmod of stdout beneath the write grant works" || notok "fchmod of stdout beneath the write grant works"

# a set-id bit beneath the write grant: the host's file too, where it would
# run with its owner's rights (a root step's: root's). Refused however it is
# set (chmod, fchmod, a mode at creation, mknod; openat2, whose mode the
# filter cannot see, is ENOSYS), and explained; the same calls without the
# bits, and g+s on a folder, are the controls
cat >"$T/w/setid.py" <<'PY'
import ctypes, errno, os, stat
res = []
def t(name, f):
    try:
        f(); res.append(name + "=OK")
    except OSError as e:
        res.append(name + "=" + errno.errorcode[e.errno])
open("sf", "w").close()
t("chmod-0755", lambda: os.chmod("sf", 0o755))
t("chmod-4755", lambda: os.chmod("sf", 0o4755))
t("chmod-2755", lambda: os.chmod("sf", 0o2755))
fd = os.open("sf", os.O_RDONLY)
t("fchmod-4755", lambda: os.fchmod(fd, 0o4755))
os.close(fd)
t("create-0755", lambda: os.close(os.open("sc0", os.O_CREAT | os.O_WRONLY, 0o755)))
t("create-4755", lambda: os.close(os.open("sc1", os.O_CREAT | os.O_WRONLY, 0o4755)))
t("create-2755", lambda: os.close(os.open("sc2", os.O_CREAT | os.O_WRONLY, 0o2755)))
t("open-4755-no-create", lambda: os.close(os.open("sc0", os.O_RDONLY, 0o4755)))
t("tmpfile-0644", lambda: os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o644)))
t("tmpfile-4755", lambda: os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o4755)))
t("mknod-0644", lambda: os.mknod("sm0", 0o644 | stat.S_IFREG))
t("mknod-4755", lambda: os.mknod("sm1", 0o4755 | stat.S_IFREG))
os.mkdir("sd")
t("dir-g+s", lambda: os.chmod("sd", 0o2775))
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
libc = ctypes.CDLL(None, use_errno=True)
how = How(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
r = libc.syscall(437, -100, b"so2", ctypes.byref(how), ctypes.c_size_t(24))
res.append("openat2=" + ("OK" if r >= 0 else errno.errorcode[ctypes.get_errno()]))
print(" ".join(res))
PY
chmod 644 "$T/w/setid.py"
run_sb run --explain -- /usr/bin/python3 setid.py
want="chmod-0755=OK chmod-4755=EPERM chmod-2755=EPERM fchmod-4755=EPERM create-0755=OK create-4755=EPERM create-2755=EPERM open-4755-no-create=OK tmpfile-0644=OK tmpfile-4755=EPERM mknod-0644=OK mknod-4755=EPERM dir-g+s=OK openat2=ENOSYS"
[ "$OUT" = "$want" ] && ok "a set-id bit is refused however it is set; without it the same calls work" ||
	notok "a set-id bit is refused however it is set; without it the same calls work" "got:  $OUT" "want: $want" "$ERR"
setid=$(find "$T/w" -perm /6000 -type f)
[ -z "$setid" ] && [ -e "$T/w/sc0" ] && [ ! -e "$T/w/sc1" ] && [ "$(stat -c %a "$T/w/sf")" = 755 ] &&
	[ "$(stat -c %a "$T/w/sd")" = 2775 ] && ok "no set-id file was left in the workdir (control: g+s on a folder stays)" ||
	notok "no set-id file was left in the workdir (control: g+s on a folder stays)" "$setid" "$(ls -la "$T/w")"
grep -q "set a set-user-ID or set-group-ID bit on '$T/w/sf' (3 times): never allowed" "$T/out/err" &&
	grep -q "set a set-user-ID or set-group-ID bit on 'sc1'" "$T/out/err" &&
	ok "explain names the set-id refusals as the sandbox's" || notok "explain names the set-id refusals as the sandbox's" "$ERR"

# fd-form metadata from many threads and processes, each on its own file at
# the same fd number (the supervisor keeps a pidfd per thread: each call must
# reach its own caller's fd, never another's), beside an fd of a file
# outside the grants given to each (refused every time)
echo keep >"$T/r/outside" && chmod 644 "$T/r/outside"
cat >"$T/w/fdmeta.py" <<'PY'
import os, sys, threading
outside = sys.argv[1]
def work(tag, n):
    bad = 0
    for i in range(n):
        p = "fm-%s-%d" % (tag, i)
        fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
        os.fchmod(fd, 0o600)
        os.utime(fd, (1000000 + i, 1000000 + i))
        os.close(fd)
        fd = os.open(outside, os.O_RDONLY)
        try:
            os.fchmod(fd, 0o666)
            bad += 1
        except PermissionError:
            pass
        os.close(fd)
    return bad
bad = [0]
def thread(k):
    bad[0] += work("t%d" % k, 20)
ts = [threading.Thread(target=thread, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
for k in range(20):
    pid = os.fork()
    if pid == 0:
        os._exit(1 if work("p%d" % k, 5) else 0)
    _, st = os.waitpid(pid, 0)
    bad[0] += os.waitstatus_to_exitcode(st)
print("outside-changed=%d" % bad[0])
PY
chmod 644 "$T/w/fdmeta.py"
run_sb run -r "$T/r" -- /usr/bin/python3 fdmeta.py "$T/r/outside"
modes=$(cd "$T/w" && stat -c '%a %Y' fm-* | sort | uniq -c | awk '{print $2}' | sort -u | tr '\n' ' ')
n=$(cd "$T/w" && find . -name 'fm-*' -perm 600 | wc -l)
[ "$OUT" = "outside-changed=0" ] && [ "$n" = 260 ] && [ "$modes" = "600 " ] &&
	[ "$(stat -c %a "$T/r/outside")" = 644 ] &&
	ok "fd-form metadata from 8 threads and 20 processes: each reached its own file, none outside" ||
	notok "fd-form metadata from 8 threads and 20 processes: each reached its own file" "rc=$RC $OUT n=$n modes=$modes"
