#!/bin/bash
# t0320: stepbox mcp, driven as an agent's MCP client would drive it: the
# official MCP TypeScript SDK's client (installed from the npm registry by
# tests/run.sh into the fixtures), and a protocol fuzzer feeding it malformed
# and hostile messages. Every backend, root and unprivileged.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/mcp/wd" "$T/mcp/outside"
timeout 300 python3 "$TESTDIR/mcp-fuzz.py" "$SB" "$T/mcp/wd" 2>"$T/out/fuzz.err"
rc=$?
[ "$rc" = 0 ] || { echo "not ok - mcp fuzz: ran to its end (exit $rc)"; sed 's/^/#   stderr: /' "$T/out/fuzz.err" | tail -5; }
sdk=${FIXTURES:-/nonexistent}/mcp-sdk
if [ -d "$sdk/node_modules/@modelcontextprotocol/sdk" ]; then
	timeout 300 node "$TESTDIR/mcp-client.mjs" "$sdk" "$SB" "$T/mcp/wd" "$T/mcp/outside" 2>"$T/out/client.err"
	rc=$?
	[ "$rc" = 0 ] || { echo "not ok - mcp: the SDK's client ran to its end (exit $rc)"; sed 's/^/#   stderr: /' "$T/out/client.err" | tail -8; }
else
	skip "mcp: the official TypeScript SDK's client" "not installed: the npm registry could not be reached when the tests were set up"
fi

# a host where nothing may be traced (a container's profile refusing ptrace,
# planted with kprobe; Yama's scope 3 alike): the server says so at start and
# each call still runs, without its denials, instead of failing to trace
kprobe=${FIXTURES:-/nonexistent}/kprobe
if [ -x "$kprobe" ]; then
	(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"command":"echo traced-or-not"}}}'
	 sleep 3) | (cd "$T/mcp/wd" && "$kprobe" deny-ptrace "$SB" mcp) >"$T/out/out" 2>"$T/out/err"
	if grep -q '"id":2,"result".*traced-or-not' "$T/out/out" && grep -q "refuses ptrace" "$T/out/err"; then
		ok "mcp where ptrace is refused: says so, and a call runs"
	else
		notok "mcp where ptrace is refused: says so, and a call runs" "$(head -c 300 "$T/out/out")"
	fi
else
	skip "mcp where ptrace is refused" "the kprobe fixture is missing"
fi

# one wording: a call's denials in the result are --explain's own lines
# (a hidden /etc entry is said hidden, never offered as a grant), and the
# call's stderr holds the command's, not stepbox's explanation
mcp_call() { # COMMAND: the run tool's answer for it, in $T/out/mcp
	(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}'
	 python3 -c 'import json,sys; print(json.dumps({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"command":sys.argv[1]}}}))' "$1"
	 sleep 4) | (cd "$T/mcp/wd" && "$SB" mcp --backend "$BACKEND") >"$T/out/mcp" 2>"$T/out/mcp.err"
}
echo out >"$T/mcp/outside/f"
mcp_call "cat /etc/shadow; cat '$T/mcp/outside/f'"
run_sb run --backend "$BACKEND" --explain -C "$T/mcp/wd" -- sh -c "cat /etc/shadow; cat '$T/mcp/outside/f'"
python3 - "$T/out/mcp" "$T/out/err" "$T/mcp/outside/f" <<'PY' && ok "mcp: the result's denials are --explain's words, a hidden entry never a grant" || notok "mcp: the result's denials are --explain's words, a hidden entry never a grant" "$(head -c 600 "$T/out/mcp")" "$(grep -A3 'denied' "$T/out/err")"
import json, sys
res = next(json.loads(l) for l in open(sys.argv[1]) if '"id":2' in l)["result"]["structuredContent"]
denials = res["denials"]
explain = open(sys.argv[2]).read()
outside = [d for d in denials if sys.argv[3] in d]
assert outside and "grant with --read" in outside[0], denials
# the advice after the path is the line --explain printed for it
advice = outside[0].split(": ", 1)[1]
assert advice in explain, (advice, explain)
shadow = [d for d in denials if "/etc/shadow" in d]
assert all("read_paths" not in d and "grant with" not in d for d in shadow), shadow
assert "denied nothing" not in res.get("stderr", ""), res.get("stderr")
assert "stepbox: explain" not in res.get("stderr", ""), res.get("stderr")
PY
