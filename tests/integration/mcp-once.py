"""mcp-once.py STEPBOX BACKEND COMMAND [FLAG...]: one call of `stepbox mcp`'s run tool.

Starts the server in the current folder, initializes, calls run with
COMMAND, prints the call's structuredContent as JSON and ends the server
(its stdin closed) as soon as the answer came: no fixed sleep.
"""
import json
import subprocess
import sys

sb, backend, command = sys.argv[1:4]
p = subprocess.Popen([sb, "mcp", "--backend", backend] + sys.argv[4:], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "corpus", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "run", "arguments": {"command": command}}}]
for m in msgs:
    p.stdin.write(json.dumps(m) + "\n")
p.stdin.flush()
result = None
for line in p.stdout:
    m = json.loads(line)
    if m.get("id") == 2:
        result = m.get("result", {}).get("structuredContent", m)
        break
p.stdin.close()
p.wait(timeout=30)
print(json.dumps(result))
sys.exit(0 if result is not None else 1)
