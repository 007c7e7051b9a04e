"""stepbox's network proxy against a direct connection, side by side in one
run (bench/proxy.py STEPBOX [MIB]): a transfer's throughput, a connection's
set-up, and the start-up a hosts policy adds to --net none. Every transfer is
on loopback, from a server this script runs. The transfer is also measured
through the least a relay can do (bench/relay.c, built beside stepbox): what
the proxy costs beyond it is its own, the rest is a second connection's.
Printed as Markdown tables."""
import http.server, os, socket, socketserver, statistics, subprocess, sys, tempfile, threading, time

sb = sys.argv[1]
mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
base = tempfile.mkdtemp(prefix="stepbox-proxy-bench.")
work, home = os.path.join(base, "w"), os.path.join(base, "home")
os.makedirs(work)
os.makedirs(home)
env = {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8"}


class Zeros(http.server.BaseHTTPRequestHandler):
    """GET /N: N MiB of zeros, streamed; GET /: a few bytes."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        n = int(self.path.strip("/") or 0) << 20
        self.send_response(200)
        self.send_header("Content-Length", str(n or 2))
        self.end_headers()
        if not n:
            self.wfile.write(b"ok")
        chunk = bytes(1 << 20)
        for _ in range(n >> 20):
            self.wfile.write(chunk)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


srv = Server(("127.0.0.1", 0), Zeros)
port = srv.server_address[1]
threading.Thread(target=srv.serve_forever, daemon=True).start()
hosts = "--net=host:127.0.0.1:%d" % port


def timed(cmd, n=5):
    """Median wall time (s) of cmd, run n times after one to warm."""
    t = []
    for i in range(n + 1):
        a = time.perf_counter()
        subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        if i:
            t.append(time.perf_counter() - a)
    return statistics.median(t)


curl = ["curl", "-sS", "--fail", "-o", "/dev/null"]
url = "http://127.0.0.1:%d/" % port
# the proxy is reached by name here too: NO_PROXY cleared for the loopback target
via = ["env", "NO_PROXY=", "no_proxy="]

print("\n## Network by name: the proxy against a direct connection\n")
print("| | direct (--net allow) | through the proxy (--net host:) | ratio |")
print("|---|---|---|---|")
relay = os.path.join(os.path.dirname(os.path.abspath(sb)), "relay")
rl = subprocess.Popen([relay, str(port)], stdout=subprocess.PIPE, text=True)
rurl = "http://127.0.0.1:%s/%d" % (rl.stdout.readline().strip(), mib)
d = timed([sb, "run", "-q", "--net", "allow", "--"] + curl + [url + str(mib)])
r = timed([sb, "run", "-q", "--net", "allow", "--"] + curl + [rurl])
p = timed([sb, "run", "-q", hosts, "--"] + via + curl + [url + str(mib)])
rl.kill()
print("| %d MiB over HTTP | %.0f MiB/s | %.0f MiB/s | %.2f (%.2f of the bare relay's %.0f MiB/s) |"
      % (mib, mib / d, mib / p, d / p, r / p, mib / r))
# set-up: 200 small requests, each on a connection of its own
many = "for i in $(seq 200); do curl -sS --fail -o /dev/null %s || exit 1; done" % url
d = timed([sb, "run", "-q", "--net", "allow", "--", "sh", "-c", many], 3)
p = timed([sb, "run", "-q", hosts, "--", "sh", "-c", "export NO_PROXY= no_proxy=; " + many], 3)
print("| a connection's set-up and one request (200, each a curl) | %.2f ms | %.2f ms | %.2f |"
      % (d / 200 * 1000, p / 200 * 1000, p / d))
# start-up: the proxy started and stopped around a step that does nothing
none = timed([sb, "run", "-q", "--net", "none", "--", "/bin/true"], 20)
names = timed([sb, "run", "-q", hosts, "--", "/bin/true"], 20)
print("| start-up of `true` (--net none against --net host:) | %.2f ms | %.2f ms | +%.2f ms |"
      % (none * 1000, names * 1000, (names - none) * 1000))
print("\nEach a median, the two columns measured in turn in one run. The proxy's "
      "memory with 100 tunnels at once is measured by tests/unit/test_proxy.")
srv.shutdown()
