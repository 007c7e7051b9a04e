#!/bin/bash
# t0346: network by name for clients that ignore the proxy variables (the
# namespace backends): stepbox's resolver in the step's network namespace
# answers a listed name with a loopback address of its own, and a
# connection there is carried to the name as a CONNECT would be, with every
# check a CONNECT meets; an unlisted name is NXDOMAIN, and --explain says
# what would allow it. Every target is a server this test runs on
# 127.0.0.1, reached by the name localhost: a refusal that failed open
# would still reach only these servers.
. "$(dirname "$0")/lib.sh"

if [ "$BACKEND" = landlock ]; then
	skip "transparent mode" "the namespace backends only: under Landlock alone the step's lookups use the host's resolver, and its connects are held to the proxy (t0340)"
	exit 0
fi
command -v openssl >/dev/null || {
	skip "transparent mode" "openssl is needed"
	exit 0
}

test_ca
test_servers
cp "$TESTDIR/resolve-connect.py" "$T/rc.py"
chmod a+r "$T/rc.py" "$T/ca.pem"
NET=(--net "host:localhost:$HP,localhost:$SP,127.0.0.1")
rc() { # ARGS...: resolve-connect.py in the step, its output in OUT
	run_sb run "${NET[@]}" -r "$T" --env "CA=$T/ca.pem" -- python3 "$T/rc.py" "$@"
}

rc localhost
case "$OUT" in
"addr 127.77."*) ok "a listed name resolves, by stepbox's resolver, to an address of its own ($OUT)" ;;
*) notok "a listed name resolves to an address of stepbox's resolver" "rc=$RC $OUT" "$(tail -3 "$T/out/err")" ;;
esac

# DNS over TCP (a client that asks for it, or retries a truncated answer):
# the same answers, two queries on one connection
run_sb run "${NET[@]}" --explain -r "$T" --env DNS_TCP=1 -- sh -c "python3 '$T/rc.py' localhost; python3 '$T/rc.py' files.example.org"
case "$OUT" in
"addr 127.77."*"rcode 3")
	grep -q "look up the name 'files.example.org'" "$T/out/err" &&
		ok "over TCP too: a listed name resolves, an unlisted one is no such name, and said" ||
		notok "over TCP too: an unlisted name is said" "$(tail -4 "$T/out/err")"
	;;
*) notok "over TCP too: a listed name resolves, an unlisted one is no such name" "rc=$RC $OUT" "$(tail -3 "$T/out/err")" ;;
esac

rc localhost "$HP"
[ "$(echo "$OUT" | tail -1)" = "HTTP/1.0 200 OK hello-from-upstream" ] &&
	ok "a client that resolves names itself reaches a listed host: plain HTTP" ||
	notok "a client that resolves names itself reaches a listed host: plain HTTP" "rc=$RC $OUT" "$(tail -3 "$T/out/err")"
rc localhost "$SP" tls
[ "$(echo "$OUT" | tail -1)" = "HTTP/1.0 200 OK hello-from-upstream" ] &&
	ok "... and HTTPS, the server name the name resolved (the control of the next)" ||
	notok "... and HTTPS, the server name the name resolved" "rc=$RC $OUT" "$(tail -3 "$T/out/err")"
run_sb run "${NET[@]}" --explain -r "$T" --env "CA=$T/ca.pem" -- python3 "$T/rc.py" localhost "$SP" tls other.example.com
if [ "$(echo "$OUT" | tail -1)" != "HTTP/1.0 200 OK hello-from-upstream" ] && grep -q "other.example.com" "$T/out/err"; then
	ok "a ClientHello naming another host than the name resolved is refused, and named ($(echo "$OUT" | tail -1))"
else
	notok "a ClientHello naming another host than the name resolved is refused, and named" "rc=$RC $OUT" "$(tail -4 "$T/out/err")"
fi

# an unlisted name: NXDOMAIN for any client, said with what would allow it
run_sb run "${NET[@]}" --explain -r "$T" -- sh -c "python3 '$T/rc.py' files.example.org; getent hosts files.example.org || echo unknown"
if [ "$OUT" = "$(printf 'rcode 3\nunknown')" ] && grep -q "look up the name 'files.example.org'" "$T/out/err" &&
	grep -q -- "--net host:files.example.org" "$T/out/err"; then
	ok "an unlisted name is no such name, and --explain says what would allow it"
else
	notok "an unlisted name is no such name, and --explain says what would allow it" "rc=$RC $OUT" "$(tail -4 "$T/out/err")"
fi
run_sb run --net "host:files.example.org" -r "$T" -- python3 "$T/rc.py" files.example.org
case "$OUT" in
"addr 127.77."*) ok "... and resolves once listed (the control)" ;;
*) notok "... and resolves once listed" "rc=$RC $OUT" "$(tail -3 "$T/out/err")" ;;
esac

# a connection to an address the resolver did not give, on a port the hosts name
cat >"$T/direct.py" <<'PY'
import socket, sys
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    c.sendall(b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
    print("got", c.recv(100) or b"nothing")
except OSError as e:
    print("failed", type(e).__name__)
PY
chmod a+r "$T/direct.py"
run_sb run "${NET[@]}" --explain -r "$T" -- python3 "$T/direct.py" "$HP"
if echo "$OUT" | grep -qv hello-from-upstream && grep -q "127.0.0.1' port $HP.*an address stepbox's resolver did not give" "$T/out/err"; then
	ok "a connection to an address the resolver did not give is refused, and named ($OUT)"
else
	notok "a connection to an address the resolver did not give is refused, and named" "rc=$RC $OUT" "$(tail -4 "$T/out/err")"
fi

# the report lists the host reached, as for the proxy's own clients
run_sb run "${NET[@]}" --report "$T/r.json" -r "$T" -- python3 "$T/rc.py" localhost "$HP"
python3 - "$T/r.json" "$HP" <<'PY' && ok "the report lists the host reached by a client that resolved it itself" || notok "the report lists the host reached" "$(cat "$T/r.json")"
import json, sys
r = json.load(open(sys.argv[1]))
reached = r["hosts"]["reached"]
assert any(h["host"] == "localhost" and h["port"] == int(sys.argv[2]) and h["bytes_up"] > 0
           for h in reached), reached
PY
