#!/bin/bash
# t0080: --report FILE and stepbox env.
. "$(dirname "$0")/lib.sh"

run_sb run --report "$T/r.json" -- sh -c 'exit 7'
python3 - "$T/r.json" "$BACKEND" <<'PY' && ok "report: exit, backend, layers, ABI, missing" || notok "report: exit, backend, layers, ABI, missing"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["exit_code"] == 7 and d["status"] == 7 and d["signal"] is None
assert d["timed_out"] is False and d["started"] is True and d["backend"] == sys.argv[2]
assert d["landlock_abi"] >= 1 and isinstance(d["missing_protections"], list)
assert d["duration_s"] >= 0 and d["command"] == ["sh", "-c", "exit 7"]
want = {"stacked": (True, True), "landlock": (False, True), "mountns": (True, False)}[sys.argv[2]]
l = d["layers"]
assert (l["namespaces"], l["landlock"]) == want and l["supervisor"], l
if sys.argv[2] == "landlock":
    assert "private-proc" in d["missing_protections"], d["missing_protections"]
if sys.argv[2] == "mountns":
    assert "tcp" in d["missing_protections"], d["missing_protections"]
PY
run_sb run --timeout 1 --report "$T/r2.json" -- sleep 30
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["timed_out"] and d["exit_code"] == 124' "$T/r2.json" &&
	ok "report: timed out" || notok "report: timed out"
run_sb run --report "$T/r3.json" -- sh -c 'kill -9 $$'
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["signal"] == 9 and d["exit_code"] == 137' "$T/r3.json" &&
	ok "report: signal" || notok "report: signal"

# stepbox env prints exactly what run gives
export SOME_API_TOKEN=t PLAIN=p
run_sb env
echo "$OUT" | grep -qx "PLAIN=p" && echo "$OUT" | grep -q "^# dropped SOME_API_TOKEN: name looks secret" &&
	ok "env: kept and dropped" || notok "env: kept and dropped"
envout=$(echo "$OUT" | grep -v '^#' | sort)
runout=$("$SB" run -- env 2>/dev/null | sort)
[ "$envout" = "$runout" ] && ok "env prints exactly what run gives" || notok "env prints exactly what run gives" "$(diff <(echo "$envout") <(echo "$runout") | head -5)"
in_box "TMPDIR exists and is writable" 'test -d "$TMPDIR" && echo x > "$TMPDIR/f"'
in_box "HOME is unchanged" "test \"\$HOME\" = '$HOME'"

# a run that never started still gets its report: version, started false, the error
run_sb run -w "$T/missing-dir" --report "$T/err.json" -- echo RAN
if [ "$RC" = 125 ] && ! echo "$OUT" | grep -q RAN && python3 - "$T/err.json" "$T/missing-dir" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["started"] is False and d["exit_code"] == 125, d
e = d["error"]
assert e["kind"] == "usage" and e["path"] == sys.argv[2] and "write path" in e["message"], e
assert e["hint"], e
PY
then ok "--report on exit 125: version, started false, error with kind, path, message, hint"
else notok "--report on exit 125: version, started false, error with kind, path, message, hint" "rc=$RC" "$(cat "$T/err.json" 2>&1)"; fi
