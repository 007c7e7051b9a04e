# A client that resolves a name itself, as a program that ignores the proxy
# variables does (t0346): one DNS query over UDP for the name's A record to
# the first nameserver of /etc/resolv.conf (127.0.0.1 where none), then,
# with a port, a connect to the address answered and one GET, over TLS with
# "tls" (the server name SNI, the name itself unless given), with the CA in
# $CA. Prints "rcode N" (exit 3) for a name not resolved; else "addr ADDR"
# without a port, or the status line and the body, or what failed (exit 4).
# With DNS_TCP=1 the query goes over TCP (after its length, RFC 1035 4.2.2),
# twice in one write, and both answers must agree.
# Usage: resolve-connect.py NAME [PORT [tls [SNI]]]
import os, socket, ssl, struct, sys
name = sys.argv[1]
ns = "127.0.0.1"
try:
    for line in open("/etc/resolv.conf"):
        w = line.split()
        if len(w) >= 2 and w[0] == "nameserver":
            ns = w[1]
            break
except OSError:
    pass
q = struct.pack(">HHHHHH", 0x5b0c, 0x0100, 1, 0, 0, 0)
for label in name.split("."):
    q += bytes([len(label)]) + label.encode()
q += b"\0" + struct.pack(">HH", 1, 1)
family = socket.AF_INET6 if ":" in ns else socket.AF_INET
if os.environ.get("DNS_TCP") == "1":
    s = socket.create_connection((ns, 53), timeout=5)
    s.sendall(2 * (struct.pack(">H", len(q)) + q))
    f = s.makefile("rb")
    answers = []
    for _ in range(2):
        n = struct.unpack(">H", f.read(2))[0]
        answers.append(f.read(n))
    if answers[0] != answers[1]:
        print("answers differ")
        sys.exit(4)
    r = answers[0]
else:
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(q, (ns, 53))
    r = s.recv(512)
if r[:2] != q[:2] or r[3] & 15 or struct.unpack(">H", r[6:8])[0] != 1:
    print("rcode", r[3] & 15)
    sys.exit(3)
addr = socket.inet_ntoa(r[-4:])
if len(sys.argv) < 3:
    print("addr", addr)
    sys.exit(0)
try:
    c = socket.create_connection((addr, int(sys.argv[2])), timeout=10)
    if len(sys.argv) > 3:
        ctx = ssl.create_default_context(cafile=os.environ.get("CA"))
        ctx.check_hostname = False  # the SNI may be another name: the proxy judges it
        c = ctx.wrap_socket(c, server_hostname=sys.argv[4] if len(sys.argv) > 4 else name)
    c.sendall(b"GET /hello HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % name.encode())
    data = b""
    while True:
        d = c.recv(4096)
        if not d:
            break
        data += d
    head, _, body = data.partition(b"\r\n\r\n")
    print(head.split(b"\r\n")[0].decode() or "nothing", body.decode().strip())
except (OSError, ssl.SSLError) as e:
    print("failed", type(e).__name__)
    sys.exit(4)
