#!/bin/bash
# t0020: the policy file through the command line; stepbox policy's output.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/data" "$T/wf/run"
echo data >"$T/data/f"
cat >"$T/p.json" <<JSON
{
  "version": 1,
  "workdir": "$T/wf/run",
  "read_paths": ["$T/data"],
  "write_paths": ["$T/wf/run", "$T/wf/.sandbox-cache"],
  "env": {"set": {"GREETING": "hi"}},
  "timeout_s": 60
}
JSON
run_sb run -p "$T/p.json" -- sh -c 'cat '"$T"'/data/f; pwd; echo $GREETING; echo $SANDBOX_PERSISTENT_DIR'
if [ "$RC" = 0 ] && [ "$OUT" = "data
$T/wf/run
hi
$T/wf/.sandbox-cache" ]; then ok "run with a policy file"; else notok "run with a policy file" "rc=$RC" "$OUT"; fi
[ -f "$T/wf/.sandbox-cache/CACHEDIR.TAG" ] && [ "$(stat -c %a "$T/wf/.sandbox-cache")" = 700 ] &&
	ok "persistent folder created 0700 with CACHEDIR.TAG" || notok "persistent folder created 0700 with CACHEDIR.TAG"
head -1 "$T/wf/.sandbox-cache/CACHEDIR.TAG" | grep -qx 'Signature: 8a477f597d28d172789f06886806bc55' &&
	ok "CACHEDIR.TAG signature" || notok "CACHEDIR.TAG signature"
echo "user text" >"$T/wf/.sandbox-cache/CACHEDIR.TAG"
run_sb run -p "$T/p.json" -- true
grep -q "user text" "$T/wf/.sandbox-cache/CACHEDIR.TAG" && ok "an existing CACHEDIR.TAG is never overwritten" ||
	notok "an existing CACHEDIR.TAG is never overwritten"

out=$(cat "$T/p.json" | "$SB" run -p - -- sh -c 'echo $GREETING' 2>/dev/null)
[ "$out" = hi ] && ok "policy from standard input" || notok "policy from standard input" "$out"

cp "$T/p.json" "$T/once.json"
run_sb run -p "$T/once.json" --consume -- true
[ "$RC" = 0 ] && [ ! -e "$T/once.json" ] && ok "--consume deletes the policy" || notok "--consume deletes the policy"
expect "a consumed policy is gone the second time, and the message says why" 125 "deleted once it is read" -- run -p "$T/once.json" --consume -- true
# --consume never through a symlink (a step's, where a launcher keeps its
# policies in a folder a step writes): the file it names elsewhere stays
mkdir -p "$T/elsewhere" "$T/w/drop"
cp "$T/p.json" "$T/elsewhere/once.json"
ln -s "$T/elsewhere" "$T/w/drop/sub"
expect "--consume refuses a path through a symlink" 125 "through real folders only" -- run -p "$T/w/drop/sub/once.json" --consume -- true
[ -e "$T/elsewhere/once.json" ] && ok "--consume: the file behind the symlink stays" || notok "--consume: the file behind the symlink stays"
cp "$T/p.json" "$T/w/drop/once.json"
(cd "$T/w/drop" && "$SB" run -p once.json --consume -- true) && [ ! -e "$T/w/drop/once.json" ] &&
	ok "--consume with a relative path through real folders deletes it (control)" ||
	notok "--consume with a relative path through real folders deletes it (control)"
expect "a missing policy names the file and hints" 125 "hint:" -- run -p "$T/missing.json" -- true

# every error class: exit 125, a message with line and column, nothing runs
bad() { # NAME JSON PATTERN
	printf '%s' "$2" >"$T/bad.json"
	run_sb run -p "$T/bad.json" -- touch "$T/w/ran"
	if [ "$RC" = 125 ] && grep -q -- "$3" "$T/out/err" && [ ! -e "$T/w/ran" ]; then ok "$1"; else notok "$1" "rc=$RC"; fi
	rm -f "$T/w/ran"
}
bad "syntax error: line and column" '{"version": 1,
  "workdir": }' "line 2, column"
bad "unknown key" '{"version": 1, "writepaths": []}' "line 1, column 16: writepaths: unknown key"
bad "wrong type" '{"version": 1, "timeout_s": "10"}' "timeout_s: must be"
bad "relative path" '{"version": 1, "read_paths": ["data"]}' "read_paths\[0\]: must be an absolute path"
bad "empty path" '{"version": 1, "write_paths": [""]}' "must not be empty"
bad "control character" '{"version": 1, "read_paths": ["/a\nb"]}' "control character"
bad "duplicate key" '{"version": 1, "read_paths": [], "read_paths": []}' "duplicate"
bad "invalid UTF-8" "$(printf '{"version": 1, "workdir": "/a\xc3"}')" "unable to decode"
bad "missing version" '{}' "version' is required"
printf '{"version": 1, "backend": "none"}' >"$T/bad.json"
expect "a flag contradicting the file is 125" 125 "two backends" -- run --backend landlock -p "$T/bad.json" -- true
printf '{"version": 1, "workdir": "/elsewhere"}' >"$T/bad.json"
expect "a workdir contradicting -C is 125" 125 "contradicts" -- run -C "$T/w" -p "$T/bad.json" -- true

# stepbox policy: canonical paths with origins, valid JSON
mkdir -p "$T/linked"
ln -s "$T/linked" "$T/datalink"
run_sb policy -p "$T/p.json" -r "$T/datalink" -w "$T/w"
if [ "$RC" = 0 ] && echo "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
g = {x["path"]: x for x in d["grants"]}
T = sys.argv[1]
assert g["/usr"]["origin"] == "baseline" and g["/usr"]["access"] == "rx"
assert g[T + "/data"]["origin"] in ("policy", "flag")
assert g[T + "/linked"]["requested"] == T + "/datalink" and g[T + "/linked"]["origin"] == "flag"
assert g[T + "/w"]["access"] == "rwx" and g[T + "/w"]["origin"] == "flag"
assert g[T + "/wf/run"]["origin"] in ("policy", "workdir")
assert d["persistent_dir"] == T + "/wf/.sandbox-cache"
assert d["workdir"] == T + "/wf/run" and d["timeout_s"] == 60
assert all(x["path"].startswith("/") and "/./" not in x["path"] for x in d["grants"])
' "$T"; then ok "policy prints canonical grants with origins"; else notok "policy prints canonical grants with origins" "$OUT"; fi

# what `stepbox policy` prints is a policy: fed back, the same step runs
mkdir -p "$T/pr"
echo data >"$T/pr/file"
run_sb policy -r "$T/pr" --env STEPBOX_T=1 --timeout 30
echo "$OUT" >"$T/printed.json"
run_sb run -p "$T/printed.json" -- sh -c "cat '$T/pr/file' && echo \$STEPBOX_T"
[ "$RC" = 0 ] && [ "$OUT" = "data
1" ] && ok "stepbox policy > p.json && stepbox run -p p.json: the same grants and env" ||
	notok "stepbox policy > p.json && stepbox run -p p.json: the same grants and env" "rc=$RC" "$OUT" "$ERR"

# messages that say what is wrong (issue 12)
expect "a missing policy file: said so, nothing about --consume" 125 "policy file '$T/nope.json' does not exist" -- run -p "$T/nope.json" -- true
! grep -q -e consume -e SANDBOX_UNAVAILABLE "$T/out/err" && ok "a missing policy file is not called a sandbox failure" ||
	notok "a missing policy file is not called a sandbox failure" "$ERR"
expect "a missing policy file with --consume: the hint names it" 125 "deleted once it is read" -- run -p "$T/nope.json" --consume -- true
expect "run -- a folder: it is a directory" 126 "cannot execute '/tmp': it is a directory" -- run -- /tmp
! grep -q -e "refused" -e "--read" "$T/out/err" && ok "run -- a folder: no sandbox hint" || notok "run -- a folder: no sandbox hint" "$ERR"
printf '{"version": 1,\n "write_paths": ["%s",\n   "%s/missing-w"]}\n' "$T/w" "$T" >"$T/mw.json"
expect "a missing write path names the file, line, column and key" 125 "(policy '$T/mw.json', line 3, column 4: write_paths\[1\])" -- run -p "$T/mw.json" -- true
expect "-C into a folder that does not exist: refused" 125 "its folder '$T/nonexist'" -- run -C "$T/nonexist/x" -- true
[ ! -e "$T/nonexist" ] && ok "-C with a typo creates nothing" || notok "-C with a typo creates nothing" "$(find "$T/nonexist")"
# the caller's own folder, when it is not the workdir, gets nothing routed
mkdir -p "$T/caller" "$T/wd"
(cd "$T/caller" && "$SB" run -q -C "$T/wd" -- true && "$SB" policy -C "$T/wd" >/dev/null &&
	"$SB" env -C "$T/wd" >/dev/null && "$SB" learn -C "$T/wd" -- true >/dev/null 2>&1 &&
	"$SB" run -q -C "$T/wd/new" -- true)
left=$(ls -A "$T/caller")
[ -z "$left" ] && [ -d "$T/wd/.tmp" ] && [ -d "$T/wd/new/.tmp" ] &&
	ok "nothing is left in the caller's folder when it is not the workdir (the control: the workdir has its routed folders)" ||
	notok "nothing is left in the caller's folder when it is not the workdir" "left: $left" "$(ls -A "$T/wd")"
if [ "$(abi)" -ge 1 ]; then
	STEPBOX_LANDLOCK_ABI=0 expect "Landlock capped to 0 where the kernel has it: the hint names the cap, not lsm=" 125 "unset STEPBOX_LANDLOCK_ABI" -- run --backend landlock -- true
	! grep -q "lsm=" "$T/out/err" && ok "no boot advice when only the cap hides Landlock" || notok "no boot advice when only the cap hides Landlock" "$ERR"
fi
