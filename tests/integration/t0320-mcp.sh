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
