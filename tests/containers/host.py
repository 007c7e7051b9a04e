# host.py DIR: services a step must not reach, until killed: a pathname
# socket DIR/svc.sock, an abstract name, a TCP echo on 127.0.0.1 (its port in
# DIR/port, written last), and a file DIR/file.
import os
import socket
import sys
import threading
import time

d = sys.argv[1]
u = socket.socket(socket.AF_UNIX)
u.bind(d + "/svc.sock")
u.listen(8)
os.chmod(d + "/svc.sock", 0o777)
a = socket.socket(socket.AF_UNIX)
a.bind("\0stepbox-ct-host")
a.listen(8)
t = socket.socket()
t.bind(("127.0.0.1", 0))
t.listen(8)
with open(d + "/file", "w") as f:
    f.write("x")
os.chmod(d + "/file", 0o666)


def serve():
    while True:
        c, _ = t.accept()
        c.sendall(c.recv(5) + b"y")
        c.close()


threading.Thread(target=serve, daemon=True).start()
with open(d + "/port.new", "w") as f:
    f.write(str(t.getsockname()[1]))
os.rename(d + "/port.new", d + "/port")
time.sleep(300)
