# A thread swaps a TCP socket and a UNIX one in and out of one fd number
# while the main thread binds that fd to an abstract UNIX name: prints 1 if
# the UNIX socket ever got the name, else 0 (t0302, t0311). The supervisor
# must judge the socket it binds, not one it looked at before.
# Usage: unix-swap.py TAG N
import ctypes, os, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
name = b"\0stepbox-swap-" + sys.argv[1].encode()
addr = ctypes.create_string_buffer(socket.AF_UNIX.to_bytes(2, sys.byteorder) + name)
tcp = socket.socket()
uni = socket.socket(socket.AF_UNIX)
fd = os.dup(tcp.fileno())
stop = False
def swap():
    while not stop:
        os.dup2(uni.fileno(), fd)
        os.dup2(tcp.fileno(), fd)
t = threading.Thread(target=swap)
t.start()
won = 0
for i in range(int(sys.argv[2])):
    libc.bind(fd, addr, 2 + len(name))
    if uni.getsockname() not in ("", b""):
        won = 1
        break
stop = True
t.join()
print(won)
