#!/bin/bash
# t0312: a sandbox inside a sandbox. An agent that sandboxes its own
# sub-steps runs stepbox in a step; the kernel allows one seccomp listener
# per filter chain, so the inner stepbox cannot install its supervisor (it
# was 125 on every backend). It must run with every layer it can add, say
# what it takes from the outer one, and its own grants must still hold.
. "$(dirname "$0")/lib.sh"
bin=$(dirname "$STEPBOX")
mkdir -p "$T/w/inner" "$T/w/other"
# the outer step (this backend) runs the inner one (auto) on a narrower grant
run_sb run -r "$bin" -w "$T/w" -- "$STEPBOX" run -C "$T/w/inner" --report "$T/w/inner.json" -- sh -c "
	echo inside > '$T/w/inner/mine' && echo wrote-mine
	if (echo x > '$T/w/other/theirs') 2>/dev/null; then echo WROTE-OTHER; else echo other-refused; fi"
if [ "$RC" = 0 ] && echo "$OUT" | grep -qx wrote-mine && echo "$OUT" | grep -qx other-refused &&
	[ -s "$T/w/inner/mine" ] && [ ! -e "$T/w/other/theirs" ]; then
	ok "nested: the inner step runs, its own grants hold (its workdir written, a sibling refused)"
else
	notok "nested: the inner step runs, its own grants hold" "rc=$RC" "$OUT"
fi
grep -q "nested in another sandbox: its supervisor, not this one, decides" "$T/out/err" &&
	[ "$(grep -c "nested in another sandbox" "$T/out/err")" = 1 ] &&
	ok "nested: what it takes from the outer sandbox is said once" ||
	notok "nested: what it takes from the outer sandbox is said once" "$(cat "$T/out/err")"
python3 - "$T/w/inner.json" <<'PY' && ok "nested: the report names the outer supervisor and what is missing" ||
import json, sys
r = json.load(open(sys.argv[1]))
assert r["layers"]["outer_supervisor"] is True and r["layers"]["supervisor"] is False, r["layers"]
assert "own-supervisor" in r["missing_protections"], r["missing_protections"]
PY
	notok "nested: the report names the outer supervisor and what is missing"
# the control: the outer step itself may write the sibling
run_sb run -w "$T/w" -- sh -c "echo x > '$T/w/other/theirs'"
[ "$RC" = 0 ] && [ -s "$T/w/other/theirs" ] && ok "control: the outer step writes the sibling" ||
	notok "control: the outer step writes the sibling" "rc=$RC"
# the inner step reads its own /proc/self, whatever the outer layers mask in
# /proc (runc-style binds of /dev/null: they froze the inner grant of /proc
# to the pids it held when it was made); the control: a host process's entry
# of the outer step, read inside too
run_sb run -r "$bin" -w "$T/w" -- "$STEPBOX" run -C "$T/w/inner" -- sh -c \
	'head -1 /proc/self/status; head -1 /proc/1/status >/dev/null && echo one-ok'
[ "$RC" = 0 ] && echo "$OUT" | grep -q "^Name:" && echo "$OUT" | grep -qx one-ok &&
	ok "nested: the inner step reads its own /proc/self" ||
	notok "nested: the inner step reads its own /proc/self" "rc=$RC" "$OUT"
