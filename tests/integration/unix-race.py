# A thread flips the first byte of a UNIX socket name between 'x' (a
# pathname in the current folder) and NUL (an abstract name) while the main
# thread binds fresh sockets to it: prints how many got an abstract name and
# whether any got the pathname (t0302, t0311); with none, why on stderr.
# Usage: unix-race.py TAG N. At least N binds, and on (up to 5N) until one
# has landed as the pathname: under load the two threads can fall into step
# so that the supervisor reads the NUL every time for hundreds of binds (all
# refused, as they must be), which says nothing about the pathname.
import ctypes, os, random, socket, sys, threading
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
why = {}
n = int(sys.argv[2])
i = 0
while i < n or (paths == 0 and i < 5 * n):
    i += 1
    for _ in range(random.randrange(64)):  # out of step with the flipper
        pass
    s = socket.socket(socket.AF_UNIX)
    if libc.bind(s.fileno(), ctypes.byref(sa), 2 + len(name)) == 0:
        got = s.getsockname()
        if (got[:1] in ("\0", b"\0")):
            abstract += 1
        else:
            paths += 1
            os.unlink(name.decode())
    else:
        e = os.strerror(ctypes.get_errno())
        why[e] = why.get(e, 0) + 1
    s.close()
stop = True
t.join()
print(abstract, paths > 0)
if paths == 0:
    print("%d binds failed:" % i, why, file=sys.stderr)
