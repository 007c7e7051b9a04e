"""The modes of what a step makes under the umasks it sets: by a thread, in
a child forked after a change, after a change back. Run in the step and
outside it; t0331 compares the two (the live layer makes these files for
the step, and keeps each thread's umask while umask(2) is trapped)."""
import os
import threading

os.umask(0o077)
open("m1", "w").close()
os.umask(0o022)
open("m2", "w").close()
os.mkdir("d1")
os.umask(0o027)
os.mkdir("d2")
th = threading.Thread(target=lambda: open("m3", "w").close())
th.start()
th.join()
if os.fork() == 0:
    os.umask(0o070)
    open("m4", "w").close()
    os._exit(0)
os.wait()
open("m5", "w").close()  # the parent's, not the child's
t = threading.Thread(target=lambda: os.umask(0o002))
t.start()
t.join()
open("m6", "w").close()  # a thread's change, seen by the process
print(" ".join("%s:%o" % (f, os.stat(f).st_mode & 0o777)
               for f in ("m1", "m2", "d1", "d2", "m3", "m4", "m5", "m6")))
