# probe.py HOSTDIR PORT TAG: what a step reaches, as one JSON line of
# name -> "ok", a result, or the errno's name. Run from the step's workdir.
import errno
import json
import os
import socket
import sys
import threading

host, port, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
res = {}


def run(name, f):
    try:
        r = f()
        res[name] = "ok" if r is None else r
    except OSError as e:
        res[name] = errno.errorcode.get(e.errno, str(e.errno))


def unix_here():
    p = os.path.join(os.getcwd(), "here-%s.sock" % tag)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(p)
    srv.listen(1)

    def serve():
        c, _ = srv.accept()
        c.sendall(c.recv(8).upper())
        c.close()

    th = threading.Thread(target=serve)
    th.start()
    cl = socket.socket(socket.AF_UNIX)
    cl.connect(p)
    cl.sendall(b"hi")
    r = cl.recv(8).decode()
    th.join()
    return r


def tcp():
    c = socket.socket()
    c.connect(("127.0.0.1", port))
    c.sendall(b"x")
    return c.recv(8).decode()


def fchmod(path):
    fd = os.open(path, os.O_RDONLY)
    os.fchmod(fd, 0o666)


open("mine-%s" % tag, "w").close()
run("unix_here", unix_here)
run("unix_host", lambda: socket.socket(socket.AF_UNIX).connect(host + "/svc.sock"))
run("abstract_host", lambda: socket.socket(socket.AF_UNIX).connect("\0stepbox-ct-host"))
run("tcp", tcp)
run("fchmod_here", lambda: fchmod("mine-%s" % tag))
run("fchmod_host", lambda: fchmod(host + "/file"))
run("dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
print(json.dumps(res))
