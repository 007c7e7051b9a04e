"""nested-domain.py nested|none WHAT ARGS: a process of the step that takes a Landlock
domain of its own (as landrun, or an agent confining its tools, does), then
asks for what stepbox's supervisor makes on the step's behalf. Prints one
line per attempt: its name, then "ok" or the errno's name. WHAT:

  tcp ALLOWED OTHER [child|orphan|subreaper]
                      the domain allows a TCP connect to port ALLOWED only;
                      connect to 127.0.0.1 on each (nothing listens there:
                      ECONNREFUSED is a connect the sandbox let through);
                      with "child" a child forked after makes them, with
                      "orphan" a grandchild once its parent is gone; with
                      "subreaper" this process makes itself a subreaper and
                      forks a child that takes the domain: the child's own
                      child, once its parent is gone (an orphan that comes
                      to this process, above the domain), makes them, then
                      a child forked after, under a domain of its own, then
                      a child forked before the domain, then this process
  unix DIR            the domain allows making sockets nowhere; bind one in DIR
  shm                 the domain allows making files nowhere; a shared memory
                      segment (/dev/shm)
  umask DIR           the domain allows making files and folders anywhere;
                      with umask 077, a file and a folder made in DIR: their
                      modes

"none" makes the same calls without a domain (the controls).
"""
import ctypes
import errno
import os
import socket
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
CONNECT_TCP = 1 << 1
MAKE_DIR, MAKE_REG, MAKE_SOCK = 1 << 7, 1 << 8, 1 << 9


def take(handled_fs, handled_net, ports=(), everywhere=0):
    attr = struct.pack("QQ", handled_fs, handled_net)
    rs = libc.syscall(444, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), 0)
    if rs < 0:
        print("no-landlock")
        sys.exit(0)
    for port in ports:
        rule = struct.pack("=QQ", CONNECT_TCP, port)
        assert libc.syscall(445, rs, 2, ctypes.c_char_p(rule), 0) == 0
    if everywhere:
        root = os.open("/", os.O_PATH | os.O_DIRECTORY)
        rule = struct.pack("=Qi", everywhere, root)
        assert libc.syscall(445, rs, 1, ctypes.c_char_p(rule), 0) == 0
    assert libc.prctl(38, 1, 0, 0, 0) == 0
    assert libc.syscall(446, rs, 0) == 0, ctypes.get_errno()
    os.close(rs)


def attempt(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))


def connect(port):
    with socket.socket() as s:
        s.connect(("127.0.0.1", port))


def bind(path):
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(path)
    os.unlink(path)


def shm():
    from multiprocessing import shared_memory

    m = shared_memory.SharedMemory(create=True, size=4096)
    m.close()
    m.unlink()


nested, what, args = sys.argv[1] == "nested", sys.argv[2], sys.argv[3:]
def connects():
    for port in args[:2]:
        attempt("connect %s" % port, lambda: connect(int(port)))
    sys.stdout.flush()


def orphan(ports=None):
    """A child (that takes a domain allowing ports, if any); its own child
    connects once it is gone."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        if ports:
            take(0, CONNECT_TCP, ports)
        if os.fork() == 0:
            parent = os.getppid()
            os.kill(parent, 9)
            while os.getppid() == parent:
                pass
            connects()
            os._exit(0)
        os.waitpid(-1, 0)
        os._exit(0)
    os.close(w)
    os.read(r, 1)  # its end: the orphan is done
    os.waitpid(pid, 0)


if what == "tcp" and args[2:] == ["subreaper"]:
    assert libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    r, w = os.pipe()
    before = os.fork()
    if before == 0:  # forked before the domain: outside it
        os.close(w)
        os.read(r, 1)
        connects()
        os._exit(0)
    os.close(r)
    orphan([int(args[0])])
    os.waitpid(-1, os.WNOHANG)  # the orphan, reaped here
    late = os.fork()
    if late == 0:  # a child got after the domain: it cannot be told from an orphan
        take(0, CONNECT_TCP, [int(args[0])])
        connects()
        os._exit(0)
    os.waitpid(late, 0)
    os.close(w)
    os.waitpid(before, 0)
    connects()
elif what == "tcp":
    if nested:
        take(0, CONNECT_TCP, [int(args[0])])
    how = args[2] if len(args) > 2 else ""
    if how == "child":
        pid = os.fork()
        if pid == 0:
            connects()
            os._exit(0)
        os.waitpid(pid, 0)
    elif how == "orphan":
        orphan()
    else:
        connects()
elif what == "unix":
    if nested:
        take(MAKE_SOCK, 0)
    attempt("bind", lambda: bind(os.path.join(args[0], "s")))
elif what == "shm":
    if nested:
        take(MAKE_REG, 0)
    attempt("shm", shm)
elif what == "umask":
    if nested:
        take(MAKE_REG | MAKE_DIR, 0, everywhere=MAKE_REG | MAKE_DIR)
    os.umask(0o077)
    f, d = os.path.join(args[0], "f"), os.path.join(args[0], "d")
    os.close(os.open(f, os.O_CREAT | os.O_WRONLY, 0o666))
    os.mkdir(d, 0o777)
    print(oct(os.stat(f).st_mode & 0o777), oct(os.stat(d).st_mode & 0o777))
    os.unlink(f)
    os.rmdir(d)
