"""check.py FORMS POLICY: a Seatbelt profile against its policy.

FORMS: the profile's forms as JSON lines (sexp.scm, Guile's reader).
POLICY: `stepbox policy --format json` for the same options.
Checks that the profile denies by default, that every grant of the policy
appears with the rights it gives (and no more), and that nothing else is
allowed but the macOS baseline written here, independently of src/core/sbpl.c:
docs/seatbelt.md is its specification. Prints "ok - ..." or "not ok - ..."
lines; exits 1 on a failure.
"""
import json
import sys

BASE_EXEC = {"/usr", "/bin", "/sbin", "/System", "/Library/Apple", "/Library/Frameworks",
             "/Library/Developer/CommandLineTools", "/opt/homebrew", "/opt/local",
             "/private/var/db/dyld", "/System/Volumes/Preboot/Cryptexes"}
BASE_READ = {"/private/etc/" + n for n in (
    "hosts", "resolv.conf", "services", "protocols", "passwd", "group", "shells", "ssl",
    "localtime", "profile", "bashrc", "zshrc", "zprofile", "paths", "paths.d")} | {
    "/private/var/run/resolv.conf", "/private/var/db/timezone"}
BASE_DEV = {"/dev/" + n for n in ("null", "zero", "random", "urandom", "tty", "stdin", "stdout",
                                  "stderr", "ptmx")}
SERVICES = {"com.apple.system.opendirectoryd.libinfo",
            "com.apple.system.opendirectoryd.membership",
            "com.apple.system.notification_center", "com.apple.system.logger", "com.apple.logd"}
NET_SERVICES = {"com.apple.trustd.agent", "com.apple.SystemConfiguration.configd"}
DNS = "com.apple.dnssd.service"
# a machine's description and the step's own processes, never another's
SYSCTL_OK = ("hw.", "kern.argmax", "kern.boottime", "kern.hostname", "kern.maxfilesperproc",
             "kern.maxproc", "kern.ngroups", "kern.os", "kern.secure_kernel",
             "kern.usrstack64", "kern.version", "machdep.cpu.", "sysctl.proc_cputype",
             "vm.loadavg")
FILE_OPS = {"file-read*", "file-write*", "file-write-data", "file-ioctl", "file-read-metadata",
            "process-exec", "file-map-executable"}

fails = []


def fail(msg):
    fails.append(msg)
    print("not ok - " + msg)


def mac(p):
    for top in ("/tmp", "/var", "/etc"):
        if p == top or p.startswith(top + "/"):
            return "/private" + p
    return p


def s(x):
    return x["str"] if isinstance(x, dict) else None


forms = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
pol = json.load(open(sys.argv[2], encoding="utf-8"))
net = pol["network"]
# none, allow, ports, or hosts (the proxy's port on localhost, chosen at run time)
mode = net if isinstance(net, str) else "hosts" if "hosts" in net else "ports"
connect = set(net.get("connect_tcp", [])) if mode == "ports" else set()
bind = set(net.get("bind_tcp", [])) if mode == "ports" else set()
R, X, W, U = set(), set(), set(), set()
for g in pol["grants"]:
    if g["origin"].startswith("baseline") or g.get("private"):
        continue
    p = mac(g["path"])
    if g.get("unix_sockets"):
        U.add(p)
    elif "w" in g["access"]:
        W.add(p)
    elif "x" in g["access"]:
        X.add(p)
    elif "r" in g["access"]:
        R.add(p)

if forms[:2] != [["version", 1], ["deny", "default"]]:
    fail("the profile begins (version 1) (deny default): %r" % forms[:2])
def strings(x):
    if isinstance(x, dict):
        yield s(x)
    elif isinstance(x, list) and x[:1] != ["regex-literal"]:
        for y in x:
            yield from strings(y)

seen = {}  # (op, kind, value) -> True
for f in forms[2:]:
    if f and f[0] == "deny":
        # the protected paths: a deny only narrows, and only beneath write grants
        if f[1] != "file-write*":
            fail("only file-write* is denied after (deny default): %r" % f)
        for flt in f[2:]:
            paths = [v for v in strings(flt) if v.startswith("/")]
            if not paths or not all(any(v == w or v.startswith(w.rstrip("/") + "/") for w in W)
                                    for v in paths):
                fail("a deny beyond the write grants: %r" % flt)
        continue
    if not f or f[0] != "allow":
        fail("only allow forms after (deny default): %r" % f)
        continue
    ops = [x for x in f[1:] if isinstance(x, str)]
    filters = [x for x in f[1:] if isinstance(x, list)]
    for op in ops:
        if not filters:
            if op not in ("process-fork", "pseudo-tty"):
                fail("%s allowed with no filter" % op)
            seen[(op, None, None)] = True
        for flt in filters:
            kind = flt[0]
            if kind == "require-all":  # the pty the step opens itself
                if flt != ["require-all", ["subpath", {"str": "/dev"}],
                           ["extension", {"str": "com.apple.sandbox.pty"}]]:
                    fail("an unknown require-all: %r" % flt)
                continue
            if kind in ("remote", "local"):
                what, arg = flt[1], flt[2] if len(flt) > 2 else None
                value = s(arg) if isinstance(arg, dict) else (s(arg[1]) if arg else None)
                seen[(op, kind + " " + what, value)] = True
                continue
            value = s(flt[1]) if len(flt) > 1 else flt
            seen[(op, kind, value)] = True

allowed_paths = BASE_EXEC | BASE_READ | BASE_DEV | R | X | W | U | {"/dev/fd"}
for (op, kind, value) in seen:
    if op in FILE_OPS:
        ok = {
            "file-write*": kind == "subpath" and value in W,
            "file-write-data": value in BASE_DEV or value == "/dev/fd",
            "file-ioctl": value in BASE_DEV,
            "process-exec": kind == "subpath" and value in BASE_EXEC | X | W,
            "file-map-executable": kind == "subpath" and value in BASE_EXEC | X | W,
            "file-read*": value in BASE_EXEC | BASE_READ | BASE_DEV | R | X | W | {"/dev/fd"},
            "file-read-metadata": kind == "literal" and any(
                p == value or p.startswith(value.rstrip("/") + "/") for p in allowed_paths),
        }[op]
        if kind == "literal" and op == "file-read*" and value in X | W:
            ok = False  # a folder grant is a subpath
    elif op == "network-outbound":
        ok = ((kind == "remote unix-socket" and value in W | U) or
              (kind == "remote tcp" and mode == "ports" and int(value.split(":")[1]) in connect) or
              (kind == "remote ip" and mode == "allow") or
              (kind == "remote tcp" and mode == "hosts" and value.startswith("localhost:") and
               len([k for k in seen if k[:2] == (op, kind)]) == 1))
    elif op in ("network-bind", "network-inbound"):
        ok = ((kind == "local unix-socket" and value in W) or
              (kind == "local tcp" and mode == "ports" and int(value.split(":")[1]) in bind) or
              (kind == "local ip" and mode == "allow"))
    elif op == "mach-lookup":
        dns = mode == "allow" or 53 in connect
        ok = kind == "global-name" and (value in SERVICES or (
            mode != "none" and (value in NET_SERVICES or (dns and value == DNS))))
    elif op == "sysctl-read":
        ok = kind in ("sysctl-name", "sysctl-name-prefix") and value.startswith(SYSCTL_OK) \
            and not value.startswith("kern.proc")
    elif op in ("signal", "process-info*"):
        ok = kind == "target" and value is None
    elif op == "system-socket":
        ok = kind == "socket-domain"
    else:
        ok = (op, kind) in (("process-fork", None), ("pseudo-tty", None))
    if not ok:
        fail("allowed beyond the policy: %s %s %s" % (op, kind, value))

# every grant appears, with the rights it gives
for p in X:
    for op in ("file-read*", "process-exec", "file-map-executable"):
        if (op, "subpath", p) not in seen:
            fail("read grant %s lacks %s" % (p, op))
for p in R:
    if ("file-read*", "literal", p) not in seen:
        fail("read-only grant %s lacks file-read*" % p)
for p in W:
    for op in ("file-read*", "file-write*", "process-exec"):
        if (op, "subpath", p) not in seen:
            fail("write grant %s lacks %s" % (p, op))
    if ("network-outbound", "remote unix-socket", p) not in seen:
        fail("write grant %s: its UNIX sockets cannot be reached" % p)
for p in U:
    if ("network-outbound", "remote unix-socket", p) not in seen:
        fail("unix_sockets %s lacks its connect" % p)
for n in connect:
    if ("network-outbound", "remote tcp", "*:%d" % n) not in seen:
        fail("connect port %d missing" % n)
for n in bind:
    if ("network-bind", "local tcp", "*:%d" % n) not in seen:
        fail("bind port %d missing" % n)
if mode == "allow" and ("network-outbound", "remote ip", None) not in seen:
    fail("network allow lacks (remote ip)")
if not fails:
    print("ok - %d forms: deny by default; grants, each with its rights: %d; nothing else" %
          (len(forms), len(R | X | W | U)))
sys.exit(1 if fails else 0)
