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
