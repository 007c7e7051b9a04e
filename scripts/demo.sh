#!/bin/sh
# The main job on an embedded default: a workflow step in the sandbox. A
# fresh workflow folder with a run folder and a persistent tool folder; the
# step writes its output, installs a Python package with pip --user (built
# locally as a wheel: no network needed), and tries what it must not do.
set -u
SB=${1:-build/stepbox}
failed=
# fail NAME: the demo did not show what it says; it ends non-zero, naming each
fail() {
	echo "stepbox demo: FAILED: $1" >&2
	failed="$failed
  $1"
}
wf=$(mktemp -d /tmp/stepbox-demo.XXXXXX)
trap 'rm -rf "$wf"' EXIT
chmod 755 "$wf"
mkdir -p "$wf/runs/1"
/usr/bin/python3 "$(dirname "$0")/mkwheel.py" "$wf/wheels" demo_tool 1.0 >/dev/null ||
	fail "making the demo's wheel (scripts/mkwheel.py)"
echo "== stepbox check"
"$SB" check || fail "stepbox check found no backend here"
echo
echo "== the step: workdir $wf/runs/1, persistent folder $wf/.sandbox-cache"
# --clean-env: a host's own PIP_FIND_LINKS or PIP_INDEX_URL must not decide the result
"$SB" run --clean-env -C "$wf/runs/1" -w "$wf/runs/1" --persist "$wf/.sandbox-cache" -r "$wf/wheels" -- sh -c '
echo "I am $(id -un), working in $(pwd)"
echo "result" > output.txt && echo "wrote output.txt"
/usr/bin/python3 -m pip install --user --no-index -q --find-links "'"$wf"'/wheels" demo_tool 2>&1 | tail -2
/usr/bin/python3 -c "import demo_tool; print(demo_tool.hello())" || exit 3
echo "installs go to: $PYTHONUSERBASE (SANDBOX_PERSISTENT_DIR=$SANDBOX_PERSISTENT_DIR)"
cat /etc/shadow 2>&1 | head -1
ls "$HOME" 2>&1 | head -1
echo x > /tmp/outside 2>&1 || true
'
rc=$?
echo "== exit status $rc"
[ "$rc" = 0 ] || fail "the step ended with $rc (the install, or the import after it)"
[ -s "$wf/runs/1/output.txt" ] || fail "the step's output.txt is not in its workdir"
ls -d "$wf"/.sandbox-cache/python/lib/python3*/site-packages/demo_tool* >/dev/null 2>&1 ||
	fail "the install did not land in the persistent folder"
echo
echo "== a tool outside every grant (field notes, incident 1)"
mkdir -p "$wf/tools/bin"
printf '#!/bin/sh\necho broker\n' >"$wf/tools/bin/broker"
chmod 755 "$wf/tools/bin/broker"
PATH="$wf/tools/bin:$PATH" "$SB" run -C "$wf/runs/1" -- broker
rc2=$?
echo "== exit status $rc2 (126: the sandbox refused it, and said how to grant it)"
[ "$rc2" = 126 ] || fail "a tool outside every grant ended with $rc2, not 126"
echo
echo "== what the sandbox denied, from evidence (--explain)"
echo note >"$wf/notes.txt"
said=$("$SB" run --explain -C "$wf/runs/1" -- sh -c "cat /etc/shadow; cat '$wf/notes.txt'; echo x > /usr/outside" 2>&1 |
	sed -n '/^stepbox: explain/,$p')
printf '%s\n' "$said"
case $said in *"$wf/notes.txt"*) ;; *) fail "--explain did not name the file it denied" ;; esac
echo
echo "== the policy with the narrowest grant that allows the read, for review (stepbox learn)"
learned=$("$SB" learn -C "$wf/runs/1" -- sh -c "cat '$wf/notes.txt'" 2>/dev/null |
	python3 -c 'import json, sys; print("read_paths:", json.load(sys.stdin)["read_paths"])')
printf '%s\n' "$learned"
case $learned in *"$wf/notes.txt"*) ;; *) fail "learn did not propose the file it needs" ;; esac
if [ -n "$failed" ]; then
	echo "stepbox demo: FAILED:$failed" >&2
	exit 1
fi
echo "== the demo showed everything it says"
