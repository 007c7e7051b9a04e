#!/bin/bash
# t0120: network policies, against listeners this test starts on 127.0.0.1
# (loopback only: no other address is ever a target).
. "$(dirname "$0")/lib.sh"

# two listeners on free loopback ports; their ports are written to files
python3 - "$T/ports" <<'PY' &
import socket, sys, time
socks = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    socks.append(s)
open(sys.argv[1], "w").write(" ".join(str(s.getsockname()[1]) for s in socks))
time.sleep(120)
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 50); do [ -s "$T/ports" ] && break; sleep 0.1; done
read -r P1 P2 <"$T/ports"
FREE=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$T/probe.py" <<'PY'
"""probe.py WHAT [PORT]: exit 0 when WHAT works, 13 when refused (EACCES or
EPERM), 1 otherwise; prints the errno name."""
import errno, socket, sys
what, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
try:
    if what == "connect":
        s = socket.socket(); s.settimeout(3); s.connect(("127.0.0.1", port))
    elif what == "connect6":
        s = socket.socket(socket.AF_INET6); s.settimeout(3); s.connect(("::ffff:127.0.0.1", port))
    elif what == "bind":
        s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(1)
    elif what == "udp":
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port))
    elif what == "raw":
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    elif what == "mptcp":
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)
    elif what == "sctp":
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)
    elif what == "packet":
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    elif what == "unix":
        a, b = socket.socketpair()
    print("works")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
    sys.exit(13 if e.errno in (errno.EACCES, errno.EPERM) else 1)
PY
chmod 644 "$T/probe.py"
probe() { # NAME WANT(works|refused) NET-ARGS... -- WHAT [PORT]
	local name=$1 want=$2
	shift 2
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	run_sb run "${args[@]}" -r "$T" -- /usr/bin/python3 "$T/probe.py" "$@"
	if { [ "$want" = works ] && [ "$RC" = 0 ]; } || { [ "$want" = refused ] && [ "$RC" = 13 ]; }; then
		ok "$name"
	else notok "$name" "rc=$RC want $want: $OUT"; fi
}

probe "default: TCP connect works" works -- connect "$P1"
probe "default: UDP works" works -- udp "$FREE"

probe "none: TCP connect refused" refused --net none -- connect "$P1"
probe "none: TCP over IPv6 refused" refused --net none -- connect6 "$P1"
probe "none: UDP sendto refused" refused --net none -- udp "$FREE"
probe "none: raw socket refused" refused --net none -- raw
probe "none: MPTCP refused" refused --net none -- mptcp
probe "none: packet socket refused" refused --net none -- packet
probe "none: bind refused" refused --net none -- bind "$FREE"
probe "none: UNIX sockets still work" works --net none -- unix
start=$(date +%s%N)
run_sb run --net none -- getent hosts stepbox-test.example.com
ms=$((($(date +%s%N) - start) / 1000000))
[ "$RC" != 0 ] && [ "$ms" -lt 5000 ] && ok "none: DNS fails fast (${ms} ms)" || notok "none: DNS fails fast" "rc=$RC ${ms} ms"

a=$(abi)
if [ "$BACKEND" = mountns ]; then
	expect "mountns: a port policy is SANDBOX_UNAVAILABLE" 125 "cannot enforce a TCP port policy" -- run --net "tcp:$P1" -- true
	run_sb run --net none -- cat /proc/net/dev
	[ "$RC" = 0 ] && ! echo "$OUT" | grep -qE "^ *(eth|ens|enp|veth)" && ok "mountns --net none: a network namespace with only loopback" ||
		notok "mountns --net none: a network namespace with only loopback" "$OUT"
elif [ "$a" -ge 4 ]; then
	probe "tcp:P1 allows P1" works --net "tcp:$P1" -- connect "$P1"
	probe "tcp:P1 refuses P2" refused --net "tcp:$P1" -- connect "$P2"
	probe "tcp:P1 refuses UDP" refused --net "tcp:$P1" -- udp "$P1"
	probe "tcp:P1 refuses raw" refused --net "tcp:$P1" -- raw
	probe "tcp:P1 refuses MPTCP" refused --net "tcp:$P1" -- mptcp
	probe "tcp:P1 refuses SCTP" refused --net "tcp:$P1" -- sctp
	probe "tcp:P1 refuses binding" refused --net "tcp:$P1" -- bind "$FREE"
	probe "tcp:P1,P2 allows both" works --net "tcp:$P1,$P2" -- connect "$P2"
	printf '{"version": 1, "network": {"connect_tcp": [%s], "bind_tcp": [%s]}}' "$P2" "$FREE" >"$T/net.json"
	probe "policy connect_tcp allows its port" works -p "$T/net.json" -- connect "$P2"
	probe "policy connect_tcp refuses another" refused -p "$T/net.json" -- connect "$P1"
	probe "policy bind_tcp allows its port" works -p "$T/net.json" -- bind "$FREE"
	other=$((FREE == 65535 ? FREE - 1 : FREE + 1))
	probe "policy bind_tcp refuses another port" refused -p "$T/net.json" -- bind "$other"
	run_sb env --net tcp:53,443
	echo "$OUT" | grep -qx "RES_OPTIONS=use-vc timeout:2 attempts:1" && ok "tcp with port 53: DNS over TCP (RES_OPTIONS=use-vc)" ||
		notok "tcp with port 53: DNS over TCP (RES_OPTIONS=use-vc)"
else
	skip "TCP port lists" "Landlock ABI $a < 4"
fi

if [ "$BACKEND" = landlock ]; then
	export STEPBOX_LANDLOCK_ABI=3
	expect "ABI 3 with a port policy: SANDBOX_UNAVAILABLE" 125 "needs Landlock ABI 4" -- run --net "tcp:$P1" -- true
	grep -q "STEPBOX_LANDLOCK_ABI caps it to 3" "$T/out/err" && grep -q "^hint: unset STEPBOX_LANDLOCK_ABI" "$T/out/err" &&
		ok "... naming the cap, not the kernel, and how to lift it" ||
		notok "... naming the cap, not the kernel, and how to lift it" "$(cat "$T/out/err")"
	probe "ABI 3: none still enforced (seccomp)" refused --net none -- connect "$P1"
	unset STEPBOX_LANDLOCK_ABI
fi

# what policy, guide and the report say
run_sb policy --backend landlock --net "tcp:$P1"
echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["network"] == {"connect_tcp": [int(sys.argv[1])], "bind_tcp": []}' "$P1" &&
	ok "policy shows the port list" || notok "policy shows the port list"
run_sb guide --net none
echo "$OUT" | grep -q "Network: none" && ok "guide says: no network" || notok "guide says: no network"
run_sb guide --backend landlock --net "tcp:$P1"
echo "$OUT" | grep -q "Network: TCP only, connecting to port $P1" && ok "guide says which ports" || notok "guide says which ports"
run_sb run --net none --report "$T/r.json" -- true
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["network"] == "none"' "$T/r.json" && ok "report names the network policy" || notok "report names the network policy"
expect "two network policies are an error, naming both" 125 "two network policies asked for: 'none' and 'allow'" -- run --net none --net allow -- true
