"""Each call that can make, write, move or remove a protected name, beside
the same call on an unprotected control. Run in the step; prints one line
"LABEL ERRNO" per call (0: it succeeded). t0331 reads them."""
import os
import sys
import threading


def tryop(label, fn):
    try:
        fn()
        print(label, 0)
    except OSError as e:
        print(label, e.errno)


def write(p, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    def go():
        fd = os.open(p, flags, 0o755)
        os.write(fd, b"#!/bin/sh\ntouch marker\n")
        os.close(fd)
    return go


def existing(prot, ctl):
    """A name that exists: written, appended, truncated, chmod'ed, linked
    elsewhere, renamed out of, removed, renamed onto."""
    for label, p in (("p", prot), ("c", ctl)):
        tryop(f"{label}:write:{prot}", write(p, os.O_WRONLY | os.O_TRUNC))
        tryop(f"{label}:append:{prot}", write(p, os.O_WRONLY | os.O_APPEND))
        tryop(f"{label}:rdwr:{prot}", write(p, os.O_RDWR))
        tryop(f"{label}:truncate:{prot}", lambda: os.truncate(p, 0))
        tryop(f"{label}:chmod:{prot}", lambda: os.chmod(p, 0o755))
        tryop(f"{label}:linkout:{prot}", lambda: os.link(p, f"hl-{label}-{os.path.basename(p)}"))
        open(f"src-{label}", "w").write("#!/bin/sh\ntouch marker\n")
        tryop(f"{label}:renameonto:{prot}", lambda: os.rename(f"src-{label}", p))
        tryop(f"{label}:renameout:{prot}", lambda: os.rename(p, f"out-{label}"))
        if label == "c":
            os.rename(f"out-{label}", p)  # and back
        tryop(f"{label}:unlink:{prot}", lambda: os.unlink(p))


def new(prot, ctl):
    """A name that does not exist: created, written, linked, symlinked,
    renamed onto, made a FIFO or a folder."""
    for label, p in (("p", prot), ("c", ctl)):
        tryop(f"{label}:excl:{prot}", write(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        if label == "c":
            os.unlink(p)
        tryop(f"{label}:creat:{prot}", write(p))
        if label == "c":
            os.unlink(p)
        open(f"src2-{label}", "w").write("x\n")
        tryop(f"{label}:link:{prot}", lambda: os.link(f"src2-{label}", p))
        if label == "c":
            os.unlink(p)
        tryop(f"{label}:symlink:{prot}", lambda: os.symlink("/bin/true", p))
        if label == "c":
            os.unlink(p)
        tryop(f"{label}:renameonto:{prot}", lambda: os.rename(f"src2-{label}", p))
        if label == "c":
            os.unlink(p)
        tryop(f"{label}:fifo:{prot}", lambda: os.mkfifo(p))
        if label == "c":
            os.unlink(p)
        tryop(f"{label}:mkdir:{prot}", lambda: os.mkdir(p))
        if label == "c":
            os.rmdir(p)
        # through a dangling symlink beside it
        os.symlink(p if p.startswith("/") else os.path.relpath(p, "."), f"dl-{label}")
        tryop(f"{label}:dangling:{prot}", write(f"dl-{label}"))
        os.unlink(f"dl-{label}")
        if label == "c" and os.path.lexists(p):
            os.unlink(p)


def race(rounds):
    """A folder swapped for a symlink to .git/hooks while a thread creates a
    hook through it: no hook may land."""
    os.mkdir("d")
    stop = []

    def swap():
        while not stop:
            try:
                os.rename("d", "d.real")
                os.symlink(".git/hooks", "d")
                os.unlink("d")
                os.rename("d.real", "d")
            except OSError:
                pass

    t = threading.Thread(target=swap)
    t.start()
    made = refused = 0
    for _ in range(rounds):
        try:
            fd = os.open("d/pre-commit", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o755)
            os.close(fd)
            made += 1
        except OSError:
            refused += 1
    stop.append(1)
    t.join()
    landed = os.path.lexists(".git/hooks/pre-commit")
    print("race", "landed" if landed else "held", made, refused)


def linkrace(rounds):
    """A hard link of a hook (made before the step) renamed onto a name and
    back while a thread opens that name to write, making it where it is not
    there: no open may reach the hook. refused counts the opens that met the
    link (the race taken), made the new files."""
    hook = os.stat("hl-hook").st_ino
    stop = []

    def swap():
        while not stop:
            try:
                os.rename("hl-hook", "x")
                os.rename("x", "hl-hook")
            except OSError:
                pass

    t = threading.Thread(target=swap)
    t.start()
    landed = made = refused = 0
    for _ in range(rounds):
        try:
            fd = os.open("x", os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError:
            refused += 1
            continue
        if os.fstat(fd).st_ino == hook:
            landed += 1
        else:
            made += 1
        os.close(fd)
    stop.append(1)
    t.join()
    print("linkrace", "landed" if landed else "held", made, refused, landed)


what = sys.argv[1]
if what == "existing":
    existing(sys.argv[2], sys.argv[3])
elif what == "new":
    new(sys.argv[2], sys.argv[3])
elif what == "race":
    race(int(sys.argv[2]))
elif what == "linkrace":
    linkrace(int(sys.argv[2]))
