#!/bin/bash
# t0050: escape attempts from inside a write grant.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/secret" "$T/w/d"
echo topsecret >"$T/secret/file"
echo mine >"$T/w/mine"
a=$(abi)

ln -s "$T/secret/file" "$T/w/link-made-outside"
denied "symlink made outside, read inside" 'cat link-made-outside'
denied "symlink made inside, read inside" "ln -s '$T/secret/file' l && cat l"
denied "symlink to a folder outside" "ln -s '$T/secret' ld && ls ld/"
run_sb run -- sh -c "ln '$T/secret/file' hard 2>&1; cat hard 2>&1"
[ ! -e "$T/w/hard" ] && ! echo "$OUT" | grep -q topsecret && ok "hard link of an outside file refused" || notok "hard link of an outside file refused" "$OUT"
run_sb run -- python3 -c "import os; os.rename('mine', '$T/secret/stolen')"
[ "$RC" != 0 ] && [ -e "$T/w/mine" ] && [ ! -e "$T/secret/stolen" ] && ok "rename out of a write grant refused" || notok "rename out of a write grant refused"
run_sb run -- python3 -c "import os; os.rename('$T/secret/file', 'took')"
[ "$RC" != 0 ] && [ -e "$T/secret/file" ] && ok "rename into a write grant from outside refused" || notok "rename into a write grant from outside refused"
run_sb run -- sh -c 'mv mine ../mine-moved'
# with namespaces ../ may be the step's private /tmp: the move stays inside
[ ! -e "$T/mine-moved" ] && ok "mv out of the workdir reaches nothing outside" || notok "mv out of the workdir reaches nothing outside"
[ "$BACKEND" != landlock ] || [ -e "$T/w/mine" ] && ok "mv out of the workdir leaves the file (landlock)" || notok "mv out of the workdir leaves the file (landlock)"

# processes outside the sandbox
sleep 300 &
victim=$!
BG_PIDS="$BG_PIDS $victim"
denied "/proc/PID/environ of an outside process" "cat /proc/$victim/environ"
# under mountns the outside process is not even visible (PID namespace): ESRCH
in_box "ptrace of an outside process refused" "python3 -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
assert libc.ptrace(16, $victim, 0, 0) == -1, \"attached\"
assert ctypes.get_errno() in (errno.EPERM, errno.ESRCH), ctypes.get_errno()
'"
if [ "$BACKEND" = mountns ]; then
	denied "signal to an outside process (PID namespace)" "kill -TERM $victim"
	kill -0 "$victim" && ok "the outside process lives" || notok "the outside process lives"
	skip "abstract UNIX socket scoping" "mountns: abstract sockets belong to the network namespace; only --net none isolates them (docs/security.md)"
elif [ "$a" -ge 6 ]; then
	denied "signal to an outside process (ABI 6 scope)" "kill -TERM $victim"
	kill -0 "$victim" && ok "the outside process lives" || notok "the outside process lives"
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0stepbox-test-" + sys.argv[1]); s.listen(1); time.sleep(60)' "$$" &
	BG_PIDS="$BG_PIDS $!"
	wait_for grep -q "@stepbox-test-$$" /proc/net/unix
	in_box "abstract UNIX socket outside refused (ABI 6 scope)" "python3 -c '
import socket, errno
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(\"\\0stepbox-test-$$\")
    raise SystemExit(\"connected\")
except OSError as e:
    assert e.errno == errno.EPERM, e
'"
	in_box "abstract UNIX sockets inside the sandbox still work" 'python3 -c "
import socket
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); a.bind(\"\0stepbox-inner\"); a.listen(1)
b = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); b.connect(\"\0stepbox-inner\")
"'
	in_box "signals inside the sandbox still work" 'sleep 30 & kill $!'
else
	skip "signal and abstract-socket scoping" "Landlock ABI $a < 6"
fi
