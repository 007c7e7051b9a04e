"""denies.py FORMS EXPECTED ROOT: what a Seatbelt profile's deny rules refuse.

FORMS: the profile's forms as JSON lines (sexp.scm). EXPECTED: lines
"deny REL" or "allow REL" (# comments), REL beneath ROOT (as macOS names it):
whether a write there is refused by the profile's (deny file-write* ...)
forms, evaluated here as Seatbelt evaluates filters (subpath, literal,
regex, require-all, require-any, require-not), independently of
src/core/sbpl_protect.c. The regexes are matched on the path's bytes.
Prints one "ok - ..." or "not ok - ..." line for each; exits 1 on a failure.
"""
import json
import re
import sys


def s(x):
    return x["str"] if isinstance(x, dict) else None


def match(flt, p):
    kind = flt[0]
    if kind == "subpath":
        d = s(flt[1])
        return p == d or p.startswith(d.rstrip("/") + "/")
    if kind == "literal":
        return p == s(flt[1])
    if kind == "regex":
        lit = flt[1]  # ["regex-literal", {"str": ...}]
        return re.search(s(lit[1]).encode(), p.encode()) is not None
    if kind == "require-all":
        return all(match(f, p) for f in flt[1:])
    if kind == "require-any":
        return any(match(f, p) for f in flt[1:])
    if kind == "require-not":
        return not match(flt[1], p)
    raise SystemExit("denies.py: a filter it does not know: %r" % flt)


forms = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
denies = [flt for f in forms if f[:2] == ["deny", "file-write*"] for flt in f[2:]]
root = sys.argv[3].rstrip("/")
failed = 0
for line in open(sys.argv[2], encoding="utf-8"):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    want, rel = line.split(None, 1)
    path = root + "/" + rel
    got = "deny" if any(match(f, path) for f in denies) else "allow"
    if got == want:
        print("ok - a write to %s: %s" % (rel, want))
    else:
        failed = 1
        print("not ok - a write to %s: %s" % (rel, want))
        print("# the profile's deny rules %s it" % ("refuse" if got == "deny" else "let through"))
sys.exit(failed)
