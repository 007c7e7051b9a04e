"""mcp-fuzz.py STEPBOX WORKDIR [ARGS...]: feed `stepbox mcp` malformed and
hostile messages; it must answer each request with the JSON-RPC error the
specification names (or its result), write nothing but JSON-RPC to stdout,
never crash, run nothing it was not asked to, and leave no process behind
when its client goes away mid-call. Prints "ok - ..." / "not ok - ..." lines."""
import json, os, subprocess, sys, time

stepbox, workdir, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
failed = 0


def ok(cond, name, detail=None):
    global failed
    print("%s - mcp fuzz: %s" % ("ok" if cond else "not ok", name))
    if not cond:
        failed += 1
        if detail is not None:
            print("# %s" % str(detail)[:600])


def server():
    return subprocess.Popen([stepbox, "mcp", "-C", workdir] + extra, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def exchange(lines, wait=2.0):
    """Send raw lines, close stdin, collect every message the server wrote."""
    p = server()
    out, err = p.communicate(b"".join(lines), timeout=60)
    msgs, junk = [], []
    for l in out.splitlines():
        try:
            msgs.append(json.loads(l))
        except ValueError:
            junk.append(l)
    return p.returncode, msgs, junk, err


def by_id(msgs, i):
    return [m for m in msgs if m.get("id") == i]


init = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "fuzz", "version": "1"}}}).encode() + b"\n"


def req(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m).encode() + b"\n"


marker = os.path.join(workdir, "fuzz-ran")
# before initialize: only ping and initialize are served
rc, msgs, junk, err = exchange([req(1, "tools/list"), req(2, "ping"),
                                req(3, "tools/call", {"name": "run", "arguments": {
                                    "command": "touch %s" % marker}})])
ok(rc == 0 and not junk, "it exits 0 when stdin ends, writing only JSON-RPC", (rc, junk, err))
ok(by_id(msgs, 1) and by_id(msgs, 1)[0]["error"]["code"] == -32600,
   "a request before initialize: invalid request", msgs)
ok(by_id(msgs, 2) and by_id(msgs, 2)[0].get("result") == {}, "ping works before initialize", msgs)
ok(not os.path.exists(marker), "a tools/call before initialize runs nothing")

hostile = [
    (b"not json\n", -32700, None),
    (b"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \n", -32700, None),
    (b"[1, 2, 3]\n", -32600, None),
    (b"42\n", -32600, None),
    (b"{\"jsonrpc\": \"2.0\", \"id\": {\"x\": 1}, \"method\": \"ping\"}\n", -32600, None),
    (b"{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": 7}\n", -32600, 6),
    (b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"ping\", \"params\": 3}\n", -32600, 7),
    (req(8, "no/such/method"), -32601, 8),
    (req(9, "tools/call", {"name": "rm", "arguments": {}}), -32602, 9),
    (req(10, "tools/call", {"name": "run", "arguments": {"command": 5}}), -32602, 10),
    (req(11, "tools/call", {"name": "run", "arguments": {"argv": []}}), -32602, 11),
    (req(12, "tools/call", {"name": "run", "arguments": {"command": "x", "argv": ["y"]}}), -32602, 12),
    (req(13, "tools/call", {"name": "run", "arguments": {"command": "x", "timeout_s": -1}}), -32602, 13),
    (req(14, "tools/call", {"name": "run", "arguments": {"command": "x", "bogus": 1}}), -32602, 14),
    (req(15, "tools/call", {"name": "run", "arguments": {"command": "x", "env": {"A": 1}}}), -32602, 15),
    (req(16, "tools/call", {"name": "run", "arguments": "touch %s" % marker}), -32602, 16),
    (req(17, "resources/read", {"uri": "file:///etc/shadow"}), -32002, 17),
    (b"{\"jsonrpc\": \"2.0\", \"id\": 18, \"id\": 19, \"method\": \"ping\"}\n", -32700, None),
    (b"\x00\xff\xfe garbage \xc3\x28\n", -32700, None),
    (b"{\"jsonrpc\": \"2.0\", \"id\": 20, \"method\": \"tools/list\"}" + b" " * (5 << 20) + b"\n",
     -32700, None),
]
lines = [init] + [h[0] for h in hostile] + [req(99, "ping")]
rc, msgs, junk, err = exchange(lines)
ok(rc == 0 and not junk, "hostile input: it exits 0 and writes only JSON-RPC", (rc, junk[:3], err[-300:]))
errors = [m for m in msgs if "error" in m]
for raw, code, i in hostile:
    what = raw[:60].decode("utf-8", "replace").strip()
    if i is not None:
        got = by_id(msgs, i)
        ok(got and got[0].get("error", {}).get("code") == code,
           "%s: error %d" % (what, code), got)
    else:
        ok(any(m.get("id") is None and m["error"]["code"] == code for m in errors),
           "%s: error %d with a null id" % (what[:40], code))
ok(by_id(msgs, 99) and by_id(msgs, 99)[0].get("result") == {},
   "after all that it still answers a ping", msgs[-3:])
ok(not os.path.exists(marker), "no hostile message ran anything")

# the client goes away mid-call: every step is ended, nothing is left behind
tag = "4%d" % (os.getpid() % 100000)
p = server()
p.stdin.write(init)
for i in range(3):
    p.stdin.write(req(30 + i, "tools/call", {"name": "run", "arguments": {
        "command": "sleep %s & sleep %s & wait" % (tag, tag)}}))
p.stdin.flush()


def sleepers():
    found = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if f.read() == b"sleep\0" + tag.encode() + b"\0":
                    found.append(d)
        except OSError:
            pass
    return found


for _ in range(100):
    if len(sleepers()) >= 6:
        break
    time.sleep(0.1)
started = len(sleepers())
p.stdin.close()
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
time.sleep(0.3)
ok(started >= 6, "three calls run at once (%d of their processes seen)" % started)
ok(rc == 0 and not sleepers(), "stdin closed mid-call: the server exits, every step's tree is gone",
   (rc, sleepers()))

# the server itself killed mid-call (SIGTERM: it ends as at stdin's end;
# SIGKILL: each worker learns it from its parent-death signal)
for sig in (15, 9):
    tag = "5%d%d" % (sig, os.getpid() % 10000)
    p = server()
    p.stdin.write(init + req(50, "tools/call", {"name": "run", "arguments": {
        "command": "sleep %s & sleep %s & wait" % (tag, tag)}}))
    p.stdin.flush()
    for _ in range(100):
        if len(sleepers()) >= 2:
            break
        time.sleep(0.1)
    seen = len(sleepers())
    p.send_signal(sig)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
    for _ in range(20):
        if not sleepers():
            break
        time.sleep(0.1)
    ok(seen >= 2 and not sleepers(), "the server killed mid-call (signal %d): the step's tree "
       "is gone within two seconds" % sig, (seen, sleepers()))
    p.stdin.close()

# --max-parallel 1: the second call waits for the first (stdin stays open:
# its end would cancel them)
def answers_to(args, lines, ids):
    """A server with args, sent lines, stdin kept open until each id is answered."""
    p = subprocess.Popen([stepbox, "mcp", "-C", workdir] + args + extra, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"".join(lines))
    p.stdin.flush()
    got = {}
    while len(got) < len(ids):
        line = p.stdout.readline()
        if not line:
            break
        m = json.loads(line)
        if m.get("id") in ids:
            got[m["id"]] = m
    p.stdin.close()
    p.wait(timeout=30)
    return got


t0 = time.time()
answers = list(answers_to(["--max-parallel", "1"], [init] + [req(40 + i, "tools/call", {
    "name": "run", "arguments": {"command": "sleep 1; echo %d" % i}}) for i in range(2)],
    (40, 41)).values())
took = time.time() - t0
ok(len(answers) == 2 and all(a["result"]["structuredContent"]["exit_code"] == 0 for a in answers)
   and took >= 2.0, "--max-parallel 1: two 1 s calls take turns (%.1f s)" % took, answers)

# a sandbox that cannot be made for one call is that call's tool error, with
# stepbox's message (here a variable that contradicts the policy's own)
got = answers_to(["--env", "FOO=bar"], [init, req(60, "tools/call", {"name": "run", "arguments": {
    "command": "echo $FOO", "env": {"FOO": "baz"}}}), req(61, "tools/call", {
    "name": "run", "arguments": {"command": "echo $FOO"}})], (60, 61))
r60 = got.get(60, {}).get("result", {})
ok(r60.get("isError") is True and "FOO" in r60["content"][0]["text"] and "125" in r60["content"][0]["text"],
   "a call whose sandbox cannot be made: the tool's error, with stepbox's message", got.get(60))
ok(got.get(61, {}).get("result", {}).get("structuredContent", {}).get("stdout") == "bar\n",
   "the next call runs (the positive control)", got.get(61))

# a bad policy: 125 before the handshake, the reason on stderr
p = subprocess.run([stepbox, "mcp", "-C", workdir, "--net", "bogus"], input=init,
                   capture_output=True, timeout=30)
ok(p.returncode == 125 and p.stdout == b"" and b"--net" in p.stderr,
   "a bad policy: exit 125 before the handshake, said on stderr", p)
p = subprocess.run([stepbox, "mcp", "-C", workdir, "-p", "-"], input=init, capture_output=True,
                   timeout=30)
ok(p.returncode == 125 and b"standard input" in p.stderr, "a policy on stdin is refused", p)


def flood():
    """The server runs outside every sandbox and limit: a flood of huge calls
    (an env of 300,000 names; 120 valid calls of 4,000 arguments, most left
    waiting) must leave its own memory under the stated cap, each refused
    call answered with an error, and a call after it run (the control)."""
    import threading
    srv = subprocess.Popen([stepbox, "mcp", "-C", workdir, "--max-parallel", "1"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    got, peak, capped = {}, [0], []

    def reader():
        for l in srv.stdout:
            try:
                m = json.loads(l)
            except ValueError:
                continue
            if "memory cap" in m.get("error", {}).get("message", ""):
                capped.append(m)  # its id unread: the message was never parsed whole
            else:
                got.setdefault(m.get("id"), m)

    def hwm():
        try:
            for l in open("/proc/%d/status" % srv.pid):
                if l.startswith("VmHWM:"):
                    peak[0] = max(peak[0], int(l.split()[1]))
        except OSError:
            pass
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    srv.stdin.write(init)
    names = ",".join('"a%d":""' % i for i in range(300000))
    huge = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run",'
            '"arguments":{"command":"true","env":{' + names + '}}}}\n')
    for i in range(8):
        srv.stdin.write((huge % (1000 + i)).encode())
        srv.stdin.flush()
        hwm()
    junk = ["x" * 200] * 4000
    for i in range(120):
        srv.stdin.write(req(2000 + i, "tools/call", {"name": "run", "arguments": {
            "argv": ["sh", "-c", "sleep 30"] + junk}}))
        srv.stdin.flush()
        hwm()
    for i in range(120):
        srv.stdin.write((json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": 2000 + i}}) + "\n").encode())
    srv.stdin.write(req(3000, "tools/call", {"name": "run", "arguments": {"command": "echo control"}}))
    srv.stdin.flush()
    for _ in range(300):
        hwm()
        if 3000 in got:
            break
        time.sleep(0.1)
    srv.stdin.close()
    srv.wait(timeout=60)
    t.join(timeout=10)
    # each huge call: refused by its arguments, or by the cap before its id was read
    refused_huge = [got.get(1000 + i, {}).get("error", {}).get("code") for i in range(8)]
    answered = [i for i in range(120) if 2000 + i in got]
    ok(all(c in (-32602, None) for c in refused_huge) and
       refused_huge.count(None) <= len(capped),
       "mcp flood: each call with 300,000 variables is refused with an error", refused_huge)
    taken = 120 - (len(capped) - refused_huge.count(None)) - len(answered)
    ok(len(capped) > refused_huge.count(None) and taken > 0,
       "mcp flood: past the memory cap calls are refused, saying so (%d refused, %d taken)"
       % (len(capped), taken), (len(capped), taken, answered[:3], capped[:1]))
    ok(got.get(3000, {}).get("result", {}).get("structuredContent", {}).get("stdout") == "control\n",
       "mcp flood: a call after it runs (the positive control)", got.get(3000))
    if os.environ.get("ASAN_OPTIONS"):
        print("skip - mcp flood: the server's peak memory: a sanitized build's is not the server's")
    else:
        ok(0 < peak[0] < 100 * 1024, "mcp flood: the server's peak memory stays under 100 MiB (%d KiB)"
           % peak[0], peak[0])


flood()
sys.exit(1 if failed else 0)
