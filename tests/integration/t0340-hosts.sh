#!/bin/bash
# t0340: network by name (--net host:, network.hosts). Every target is a
# server this test starts on 127.0.0.1: an HTTP one and an HTTPS one (a
# test CA made here with openssl), reached by the name localhost, which
# /etc/hosts maps to 127.0.0.1. No other address is ever a target: a
# refusal that failed open would still reach only these servers.
. "$(dirname "$0")/lib.sh"

command -v openssl >/dev/null && command -v curl >/dev/null || {
	skip "network by name" "openssl and curl are needed"
	exit 0
}

# the test CA and a certificate for localhost
test_ca
test_servers

# what a client inside sees: curl through the proxy the variables name
# (NO_PROXY cleared: inside a network namespace loopback stays direct)
get() { # URL: the body, curl's exit status on failure
	printf 'NO_PROXY= no_proxy= curl -sS --fail --max-time 20 --cacert %s %s' "$T/ca.pem" "$1"
}
fetch() { # NAME WANT(works|refused) NET-ARGS... -- URL
	local name=$1 want=$2
	shift 2
	local args=()
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	run_sb run "${args[@]}" -r "$T" -- sh -c "$(get "$1")"
	if [ "$want" = works ] && [ "$RC" = 0 ] && [ "$OUT" = hello-from-upstream ]; then
		ok "$name"
	elif [ "$want" = refused ] && [ "$RC" != 0 ] && [ "$OUT" != hello-from-upstream ]; then
		ok "$name"
	else
		notok "$name" "rc=$RC want $want" "stdout: $OUT"
	fi
}

ALLOW="localhost:$HP,localhost:$SP,127.0.0.1"
fetch "plain HTTP to a listed host" works --net "host:$ALLOW" -- "http://localhost:$HP/hello"
fetch "HTTPS through CONNECT to a listed host" works --net "host:$ALLOW" -- "https://localhost:$SP/hello"
fetch "a listed host on another port is refused" refused --net "host:localhost:$SP,127.0.0.1" -- "http://localhost:$HP/hello"
fetch "a name resolving to loopback is refused unless its address is listed" refused \
	--net "host:localhost:$HP" -- "http://localhost:$HP/hello"
fetch "an unlisted host is refused" refused --net "host:example.invalid" -- "http://localhost:$HP/hello"

# HTTP inside a tunnel (CONNECT, SOCKS5) is checked as plain HTTP is: each
# request's Host is the tunnel's target, never another virtual host there
S5='$(echo "$HTTP_PROXY" | sed s/^http:/socks5h:/)'
for how in "-p" "-x $S5"; do
	what=CONNECT
	[ "$how" = -p ] || what=SOCKS5
	run_sb run --net "host:$ALLOW" -r "$T" -- sh -c "NO_PROXY= no_proxy= curl -sS --fail \
		--max-time 20 $how http://localhost:$HP/hello; echo; NO_PROXY= no_proxy= curl -sS \
		--fail --max-time 20 $how -H 'Host: example.invalid' http://localhost:$HP/hello ||
		echo refused"
	grep -qx hello-from-upstream <<<"$OUT" && [ "$(tail -1 <<<"$OUT")" = refused ] &&
		ok "HTTP in a $what tunnel: the target's Host works, another Host refused" ||
		notok "HTTP in a $what tunnel: the target's Host works, another Host refused" "rc=$RC $OUT"
done

# --explain names the refusal as the step made it, with what would allow it
run_sb run --explain --net "host:example.invalid" -r "$T" -- sh -c "$(get "http://localhost:$HP/hello")"
grep -q "reach 'localhost' port $HP" "$T/out/err" && grep -q "not among the hosts" "$T/out/err" &&
	grep -q -- "--net host:localhost:$HP" "$T/out/err" &&
	ok "--explain names an unlisted host and the grant that allows it" ||
	notok "--explain names an unlisted host and the grant that allows it"
run_sb run --explain --net "host:localhost:$HP" -r "$T" -- sh -c "$(get "http://localhost:$HP/hello")"
grep -q "resolved to 127.0.0.1" "$T/out/err" &&
	ok "--explain says a name resolved to a loopback address" ||
	notok "--explain says a name resolved to a loopback address"

# the only way out is the proxy: a direct connect, UDP and DNS of the step's own fail
cat >"$T/direct.py" <<'PY'
import socket, sys
what, port = sys.argv[1], int(sys.argv[2])
try:
    if what == "tcp":
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /hello HTTP/1.0\r\n\r\n")
        sys.exit(0 if b"hello-from-upstream" in s.recv(4096) else 2)
    else:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port))
        sys.exit(0)
except OSError as e:
    print(e)
    sys.exit(13)
PY
chmod 644 "$T/direct.py"
# (under the namespaces the connect meets stepbox's own listener for the
# port, which carries only names its resolver gave, t0346: exit 2, nothing)
run_sb run --net "host:$ALLOW" -r "$T" -- python3 "$T/direct.py" tcp "$HP"
{ [ "$RC" = 13 ] || { [ "$BACKEND" != landlock ] && [ "$RC" = 2 ]; }; } &&
	ok "a direct connect to the upstream's address does not reach it (exit $RC)" ||
	notok "a direct connect to the upstream's address does not reach it" "rc=$RC $OUT"
# a UDP listener of the host's: nothing the step sends arrives (Landlock
# alone: refused; the namespaces: sent into the step's own namespace, where
# only stepbox's resolver listens); the control, sent from outside, arrives
python3 - "$T/udp.port" "$T/udp.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(60)
try:
    while True:
        open(sys.argv[2], "ab").write(s.recv(100) + b"\n")
except OSError:
    pass
PY
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 100); do [ -s "$T/udp.port" ] && break; sleep 0.05; done
UP=$(cat "$T/udp.port")
run_sb run --net "host:$ALLOW" -r "$T" -- python3 "$T/direct.py" udp "$UP"
python3 "$T/direct.py" udp "$UP"
for _ in $(seq 50); do [ -s "$T/udp.log" ] && break; sleep 0.05; done
sleep 0.2
if [ "$(cat "$T/udp.log" 2>/dev/null)" = x ] && { [ "$RC" = 13 ] || [ "$BACKEND" != landlock ]; }; then
	ok "UDP from the step reaches no listener of the host (exit $RC); from outside it does"
else
	notok "UDP from the step reaches no listener of the host" "rc=$RC $OUT" "log: $(cat "$T/udp.log" 2>/dev/null | tr '\n' ' ')"
fi
run_sb run --net "host:$ALLOW" -- sh -c 'getent hosts stepbox-test.example.com'
[ "$RC" != 0 ] && ok "the step's own DNS lookups do not get out" ||
	notok "the step's own DNS lookups do not get out" "$OUT"
fetch "positive control: the same policy reaches the host through the proxy" works \
	--net "host:$ALLOW" -- "http://localhost:$HP/hello"

# Landlock alone: the supervisor lets an IP peer through only as the proxy's.
# An RFC 2133 sockaddr_in6 (24 bytes, which the kernel takes) to [::1] on the
# proxy's own port must be refused by the supervisor (EACCES), not left to
# the kernel (which would try it: ECONNREFUSED); the proxy's own address, in
# full, is the positive control
if [ "$BACKEND" = landlock ]; then
	cat >"$T/short6.py" <<'PY'
import ctypes, os, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1].strip("/"))
def connect(family, addr, n):
    s = socket.socket(family, socket.SOCK_STREAM)
    return 0 if libc.connect(s.fileno(), addr, n) == 0 else ctypes.get_errno()
v6 = struct.pack("=H", socket.AF_INET6) + struct.pack("!HI16sI", port, 0, socket.inet_pton(socket.AF_INET6, "::1"), 0)
v4 = struct.pack("=H", socket.AF_INET) + struct.pack("!H4s8x", port, socket.inet_aton("127.0.0.1"))
print(connect(socket.AF_INET6, v6, 24), connect(socket.AF_INET, v4, 16))
PY
	chmod 644 "$T/short6.py"
	run_sb run --net "host:$ALLOW" -r "$T" -- python3 "$T/short6.py"
	[ "$OUT" = "13 0" ] && ok "Landlock alone: a short IPv6 address is refused, the proxy's is reached" ||
		notok "Landlock alone: a short IPv6 address is refused, the proxy's is reached" "errnos: $OUT (want 13 0)"
fi

# the proxy confines itself before it reads a byte of the step's: no
# capability, no_new_privs, and its own call filter (harden_filter_proxy;
# what it refuses, beside what it allows: test_harden)
"$SB" run --net "host:$ALLOW" -- sleep 5 >/dev/null 2>&1 &
sbpid=$!
px=
for _ in $(seq 100); do
	px=$(pgrep -P "$sbpid" -x stepbox-proxy) && break
	sleep 0.05
done
st=$( [ -n "$px" ] && cat "/proc/$px/status" 2>/dev/null)
kill "$sbpid" 2>/dev/null
wait "$sbpid" 2>/dev/null
if echo "$st" | grep -q "^CapEff:[[:space:]]*0000000000000000$" && echo "$st" | grep -q "^NoNewPrivs:[[:space:]]*1$" &&
	echo "$st" | grep -q "^Seccomp:[[:space:]]*2$"; then
	ok "the proxy runs with no capability, no_new_privs and its own call filter"
else
	notok "the proxy runs with no capability, no_new_privs and its own call filter" "pid=${px:-none}" "$(echo "$st" | grep -E "^(Cap|NoNew|Seccomp)")"
fi

# the step's clients find the proxy without the user's help
run_sb run --net "host:$ALLOW" -- sh -c 'echo "$HTTPS_PROXY|$http_proxy|$npm_config_https_proxy|$PIP_PROXY"'
echo "$OUT" | grep -qE '^http://([a-z]+:[0-9a-f]+@)?127\.0\.0\.1:[0-9]+(\|http://([a-z]+:[0-9a-f]+@)?127\.0\.0\.1:[0-9]+){3}$' &&
	ok "the proxy variables name the proxy" || notok "the proxy variables name the proxy" "$OUT"
cat >"$T/geturl.py" <<'PY'
import os, sys, urllib.request
os.environ["NO_PROXY"] = os.environ["no_proxy"] = ""
print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode().strip())
PY
chmod 644 "$T/geturl.py"
run_sb run --net "host:$ALLOW" -r "$T" -- python3 "$T/geturl.py" "http://localhost:$HP/hello"
[ "$RC" = 0 ] && [ "$OUT" = hello-from-upstream ] && ok "Python's urllib goes through it" ||
	notok "Python's urllib goes through it" "rc=$RC $OUT"

# the report lists what was reached, with bytes, and counts what was refused
run_sb run --net "host:$ALLOW" --report "$T/r.json" -r "$T" -- sh -c "$(get "http://localhost:$HP/hello"); $(get "http://localhost:9/x")"
python3 - "$T/r.json" "$HP" <<'PY' && ok "the report lists each host reached with bytes each way, and the refused" || notok "the report lists each host reached with bytes each way, and the refused" "$(cat "$T/r.json")"
import json, sys
r = json.load(open(sys.argv[1]))
h = r["hosts"]
hit = [x for x in h["reached"] if x["host"] == "localhost" and x["port"] == int(sys.argv[2])]
assert hit and hit[0]["bytes_down"] > 0 and hit[0]["bytes_up"] > 0, h
assert h["refused"] >= 1, h
assert r["network"]["hosts"][0] == "localhost:" + sys.argv[2], r["network"]
PY

# a connection still open at the step's end (a tunnel whose holder dies
# with the tree): the proxy outlives the tree, and writes it as it stops
cat >"$T/keep.py" <<'PY'
import base64, os, socket, sys, urllib.parse
u = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
s = socket.create_connection((u.hostname, u.port))
auth = ""
if u.username:
    cred = base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()
    auth = "Proxy-Authorization: Basic %s\r\n" % cred
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (sys.argv[1], sys.argv[1], auth)).encode())
got = b""
while b"\r\n\r\n" not in got:
    b = s.recv(1)
    if not b:
        break
    got += b
print(got.split(b"\r\n")[0].decode())
sys.stdout.flush()
s.set_inheritable(True)
if os.fork() == 0:  # holds the tunnel until the tree's end kills it
    os.close(1)
    os.execvp("sleep", ["sleep", "60"])
PY
chmod 644 "$T/keep.py"
run_sb run --net "host:$ALLOW" --report "$T/r.json" -r "$T" -- python3 "$T/keep.py" "localhost:$SP"
python3 - "$T/r.json" "$SP" <<'PY' && [ "$OUT" = "HTTP/1.1 200 Connection established" ] && ok "a tunnel open at the step's end: the report lists its host" || notok "a tunnel open at the step's end: the report lists its host" "rc=$RC $OUT" "$(cat "$T/r.json")"
import json, sys
h = json.load(open(sys.argv[1]))["hosts"]
assert [x for x in h["reached"] if x["host"] == "localhost" and x["port"] == int(sys.argv[2])], h
PY

# the policy file
printf '{"version": 1, "network": {"hosts": ["localhost:%s", "127.0.0.1"]}}' "$HP" >"$T/hosts.json"
fetch "network.hosts in a policy file" works -p "$T/hosts.json" -- "http://localhost:$HP/hello"
printf '{"version": 1, "network": {"hosts": ["localhost:%s", "127.0.0.1"], "deny_hosts": ["localhost"]}}' "$HP" >"$T/deny.json"
fetch "deny_hosts wins over hosts" refused -p "$T/deny.json" -- "http://localhost:$HP/hello"
printf '{"version": 1,\n "network": {"hosts": ["ok.example.org",\n   "bad%%2e.example.org"]}}' >"$T/bad.json"
expect "a bad host entry is a policy error with its line and column" 125 "line 3, column 4" -- run -p "$T/bad.json" -- true
expect "a wildcard over a public suffix is refused" 125 "net host" -- run --net 'host:*.com' -- true
printf '{"version": 1, "network": {"hosts": ["a.example.org"], "connect_tcp": [443]}}' >"$T/both.json"
expect "hosts beside a port list is refused" 125 "two network policies" -- run -p "$T/both.json" -- true
expect "hosts and --net none contradict" 125 "two network policies" -- run --net none --net host:a.example.org -- true
run_sb guide --net "host:@pypi,localhost:$HP"
echo "$OUT" | grep -q "pypi.org" && echo "$OUT" | grep -q "localhost:$HP" &&
	ok "guide names the hosts" || notok "guide names the hosts" "$OUT"
