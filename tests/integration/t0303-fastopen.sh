#!/bin/bash
# t0303 (red team): TCP Fast Open. sendto/sendmsg with MSG_FASTOPEN connect
# inside the send, where Landlock's connect hook never runs: with a port list
# they reached any port. Refused (EPERM) in port-list and none modes; a plain
# connect to an allowed port still works (the positive control).
. "$(dirname "$0")/lib.sh"
if [ "$BACKEND" = mountns ]; then
	skip "TCP Fast Open under port lists" "mountns alone has no port lists (SANDBOX_UNAVAILABLE, t0120)"
	exit 0
fi
if [ "$(abi)" -lt 4 ]; then
	skip "TCP Fast Open under port lists" "Landlock ABI < 4: no port lists"
	exit 0
fi
# two listeners: one the policy allows, one it does not
python3 - "$T/ports" <<'PY' &
import socket, sys, time
ls = []
for _ in range(2):
    s = socket.socket(); s.setsockopt(socket.SOL_TCP, 23, 5)  # TCP_FASTOPEN
    s.bind(("127.0.0.1", 0)); s.listen(8); ls.append(s)
open(sys.argv[1], "w").write(" ".join(str(s.getsockname()[1]) for s in ls))
time.sleep(60)
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -s "$T/ports" ] && break; sleep 0.1; done
read -r allowed other <"$T/ports"

tfo() { # FLAGS-ARGS: sendto or sendmsg with MSG_FASTOPEN to PORT
	cat <<PY
import errno, socket, sys
port, how = int(sys.argv[1]), sys.argv[2]
try:
    s = socket.socket()
    if how == "sendto":
        s.sendto(b"GET", socket.MSG_FASTOPEN, ("127.0.0.1", port))
    elif how == "sendmsg":
        s.sendmsg([b"GET"], [], socket.MSG_FASTOPEN, ("127.0.0.1", port))
    else:
        s.connect(("127.0.0.1", port))
    print("OK")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
}
tfo >"$T/w/tfo.py"
for how in sendto sendmsg; do
	run_sb run --net "tcp:$allowed" -- python3 tfo.py "$other" "$how"
	[ "$RC" = 0 ] && [ "$OUT" = EPERM ] && ok "$how MSG_FASTOPEN to a port not listed: EPERM" ||
		notok "$how MSG_FASTOPEN to a port not listed: EPERM" "rc=$RC out=$OUT"
	run_sb run --net none -- python3 tfo.py "$other" "$how"
	[ "$RC" = 0 ] && [ "$OUT" != OK ] && ok "$how MSG_FASTOPEN with --net none: $OUT" ||
		notok "$how MSG_FASTOPEN with --net none" "rc=$RC out=$OUT"
done
run_sb run --net "tcp:$allowed" -- python3 tfo.py "$other" connect
[ "$RC" = 0 ] && [ "$OUT" = EACCES ] && ok "connect to a port not listed: EACCES" || notok "connect to a port not listed: EACCES" "rc=$RC out=$OUT"
run_sb run --net "tcp:$allowed" -- python3 tfo.py "$allowed" connect
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "connect to the listed port works (positive control)" || notok "connect to the listed port works" "rc=$RC out=$OUT"
run_sb run -- python3 tfo.py "$other" sendto
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "MSG_FASTOPEN with --net allow works (positive control)" || notok "MSG_FASTOPEN with --net allow works" "rc=$RC out=$OUT"

# listen() on an unbound TCP socket autobinds an ephemeral port nobody allowed:
# refused under a port list; listening on a listed bind port works
run_sb run --net "tcp:$allowed" -- python3 -c "
import socket, errno
s = socket.socket()
try: s.listen(1); print('LISTENING', s.getsockname()[1])
except OSError as e: print(errno.errorcode[e.errno])"
[ "$RC" = 0 ] && [ "$OUT" = EACCES ] && ok "listen without bind under a port list: EACCES" || notok "listen without bind under a port list: EACCES" "rc=$RC out=$OUT"
printf '{"version": 1, "network": {"connect_tcp": [%s], "bind_tcp": [%s]}}' "$allowed" "$((other + 1))" >"$T/bind.json"
run_sb run -p "$T/bind.json" -- python3 -c "
import socket
s = socket.socket(); s.bind(('127.0.0.1', $((other + 1)))); s.listen(1); print('OK')"
[ "$RC" = 0 ] && [ "$OUT" = OK ] && ok "bind to a listed port, then listen, works (positive control)" || notok "bind to a listed port, then listen" "rc=$RC out=$OUT"
