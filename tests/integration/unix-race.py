# A thread flips the first byte of a UNIX socket name between 'x' (a
# pathname in the current folder) and NUL (an abstract name) while the main
# thread binds fresh sockets to it: prints how many got an abstract name and
# whether any got the pathname (t0302, t0311). Usage: unix-race.py TAG N
import ctypes, os, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
class SA(ctypes.Structure):
    _fields_ = [("fam", ctypes.c_ushort), ("path", ctypes.c_char * 108)]
sa = SA()
sa.fam = socket.AF_UNIX
name = b"xrace-" + sys.argv[1].encode()
ctypes.memmove(ctypes.addressof(sa) + 2, name, len(name))
first = ctypes.addressof(sa) + 2
stop = False
def flip():
    while not stop:
        ctypes.memset(first, 0, 1)
        ctypes.memset(first, ord("x"), 1)
t = threading.Thread(target=flip)
t.start()
abstract = paths = 0
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    if libc.bind(s.fileno(), ctypes.byref(sa), 2 + len(name)) == 0:
        got = s.getsockname()
        if (got[:1] in ("\0", b"\0")):
            abstract += 1
        else:
            paths += 1
            os.unlink(name.decode())
    s.close()
stop = True
t.join()
print(abstract, paths > 0)
