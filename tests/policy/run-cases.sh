#!/bin/bash
# Data-driven policy cases: NNNN-name.json is given to `stepbox policy -p`;
# NNNN-name.expect lists what must hold, one check a line:
#   exit N                       stepbox's exit status
#   stderr TEXT                  TEXT appears on standard error
#   grant ACCESS PATH ORIGIN     the effective policy has this grant
#   nogrant PATH                 ... and not this one
#   skipped PATH                 PATH was dropped with a reason
#   key NAME VALUE               a top-level key's value (JSON text)
# @T@ stands for a scratch folder holding data/, run/, wf/ and link -> data.
set -u
: "${STEPBOX:?}"
STEPBOX=$(realpath "$STEPBOX")
here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/data" "$T/run" "$T/wf"
ln -s "$T/data" "$T/link"
for json in "$here"/[0-9]*.json; do
	name=$(basename "$json" .json)
	sed "s|@T@|$T|g" "$json" >"$T/case.json"
	sed "s|@T@|$T|g" "${json%.json}.expect" >"$T/case.expect"
	(cd "$T/run" && env -u SANDBOX_EXTRA_SYSTEM_PATHS -u STEPBOX_LANDLOCK_ABI \
		"$STEPBOX" policy -p "$T/case.json" >"$T/out" 2>"$T/err")
	echo $? >"$T/rc"
	if why=$(python3 - "$T" 2>&1 <<'PY'
import json, sys
T = sys.argv[1]
rc = int(open(T + "/rc").read())
out, err = open(T + "/out").read(), open(T + "/err").read()
d = json.loads(out) if rc == 0 else None
for line in open(T + "/case.expect"):
    w = line.rstrip("\n").split(" ")
    if not w[0]:
        continue
    if w[0] == "exit":
        assert rc == int(w[1]), "exit %d, want %s; stderr: %s" % (rc, w[1], err.strip())
    elif w[0] == "stderr":
        want = " ".join(w[1:])
        assert want in err, "stderr %r lacks %r" % (err.strip(), want)
    elif w[0] == "grant":
        assert any(g["access"] == w[1] and g["path"] == w[2] and g["origin"] == w[3]
                   for g in d["grants"]), "no grant %s" % " ".join(w[1:])
    elif w[0] == "nogrant":
        assert all(g["path"] != w[1] for g in d["grants"]), "grant %s present" % w[1]
    elif w[0] == "skipped":
        assert any(s["path"] == w[1] for s in d["skipped"]), "%s not skipped" % w[1]
    elif w[0] == "key":
        got = d[w[1]]
        assert got == json.loads(" ".join(w[2:])), "%s is %r" % (w[1], got)
    else:
        raise SystemExit("bad expect line: " + line)
PY
	); then echo "ok - policy case $name"; else echo "not ok - policy case $name"; echo "$why" | sed 's/^/# /'; fi
	# what policy printed is valid input, and means the same: the same grants again
	if [ "$(cat "$T/rc")" = 0 ]; then
		(cd "$T/run" && env -u SANDBOX_EXTRA_SYSTEM_PATHS -u STEPBOX_LANDLOCK_ABI \
			"$STEPBOX" policy -p "$T/out" >"$T/out2" 2>"$T/err2")
		if why=$(python3 - "$T" 2>&1 <<'PY'
import json, sys
T = sys.argv[1]
a, b = json.load(open(T + "/out")), json.load(open(T + "/out2"))
grants = lambda d: sorted((g["path"], g["access"]) for g in d["grants"])
assert grants(a) == grants(b), "grants differ: %r / %r" % (grants(a), grants(b))
for k in a:
    if k not in ("grants",):
        assert a[k] == b[k], "%s: %r then %r" % (k, a[k], b[k])
PY
		); then echo "ok - policy case $name: its printed policy, read back, is the same"
		else echo "not ok - policy case $name: its printed policy, read back, is the same"
			echo "$why" | sed 's/^/# /'; sed 's/^/# stderr: /' "$T/err2" | head -3; fi
	fi
done
