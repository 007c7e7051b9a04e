#!/bin/bash
# t0002: the examples the README points to work as written (paths moved into
# the test's own folder).
. "$(dirname "$0")/lib.sh"

EX="$TESTDIR/../../examples"
mkdir -p "$T/srv/wf/runs/7" "$T/srv/data/docs" "$T/bin"
sed "s|/srv/|$T/srv/|g" "$EX/step-policy.json" >"$T/step-policy.json"
# (its port list needs Landlock: read with auto, whichever backend this pass forces)
"$STEPBOX" policy -p "$T/step-policy.json" >"$T/out/out" 2>"$T/out/err"
RC=$?
OUT=$(cat "$T/out/out")
ERR=$(cat "$T/out/err")
[ "$RC" = 0 ] && echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["persistent_dir"].endswith("/srv/wf/.sandbox-cache")' &&
	ok "examples/step-policy.json is a valid policy" || notok "examples/step-policy.json is a valid policy" "$ERR"

# the callers find stepbox on PATH, as an installed one would be
ln -s "$SB" "$T/bin/stepbox"
export PATH="$T/bin:$PATH"
python3 "$EX/run_step.py" "$T/srv/wf/runs/7" "$T/srv/wf/.sandbox-cache" 'echo hello from a step; cat /etc/shadow >/dev/null 2>&1; touch /usr/x 2>/dev/null; true' >"$T/out/py" 2>&1
if grep -q "^exit 0" "$T/out/py" && grep -q "hello from a step" "$T/out/py" && grep -q "^denied: " "$T/out/py"; then
	ok "examples/run_step.py: a step with the policy on stdin, its output and its denials"
else
	notok "examples/run_step.py: a step with the policy on stdin, its output and its denials" "$(cat "$T/out/py")"
fi
grep -q "^stepbox: explain" "$T/out/py" && ok "examples/run_step.py: stepbox's and the command's stderr are shown" ||
	notok "examples/run_step.py: stepbox's and the command's stderr are shown" "$(cat "$T/out/py")"
node "$EX/run_step.mjs" "$T/srv/wf/runs/7" "$T/srv/wf/.sandbox-cache" 'echo hello from node; cat /etc/shadow >/dev/null 2>&1; touch /usr/x 2>/dev/null; true' >"$T/out/js" 2>&1
grep -q "^exit 0" "$T/out/js" && grep -q "hello from node" "$T/out/js" && grep -q "^denied: " "$T/out/js" &&
	ok "examples/run_step.mjs: the same from Node, with its denials" ||
	notok "examples/run_step.mjs: the same from Node, with its denials" "$(cat "$T/out/js")"
grep -q "^OnCalendar=" "$EX/nightly-report.timer" && ok "examples: a systemd timer" || notok "examples: a systemd timer"
# the service's ExecStart as systemd runs it (the job's paths moved into the
# test's folder, stepbox where the .deb puts it: this one, with auto), its
# User and WorkingDirectory set as the unit sets them: the job reads its two
# files, installs nothing (an empty requirements file), writes its report
R="$T/srv/reports"
mkdir -p "$R/runs"
echo "# nothing to install" >"$R/requirements.txt"
echo "open('report.txt', 'w').write('the report')" >"$R/make_report.py"
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$EX/nightly-report.service" | sed -e 's/^ExecStart=//' -e 's/\\$//' | tr -d '\n' |
	sed -e "s|/srv/|$T/srv/|g" -e "s|/usr/bin/stepbox|\"\$STEPBOX\"|")
grep -q "^ExecStart=/usr/bin/stepbox run" "$EX/nightly-report.service" || notok "the service names /usr/bin/stepbox, where the .deb installs it"
a=$(abi)
if [ "$a" -ge 4 ]; then
	(cd "$R/runs" && eval "env PIP_NO_INDEX=1 $exec_start") >"$T/out/out" 2>"$T/out/err"
	RC=$?
	[ "$RC" = 0 ] && [ "$(cat "$R/runs/report.txt" 2>/dev/null)" = "the report" ] && [ -s "$R/last-run.json" ] &&
		ok "examples/nightly-report.service: its ExecStart runs the job as written" ||
		notok "examples/nightly-report.service: its ExecStart runs the job as written" "exit $RC" "$(tail -3 "$T/out/err")"
else
	skip "examples/nightly-report.service: its ExecStart" "its port list needs Landlock ABI 4 (here $a)"
fi

# every example of the man page runs as written (paths moved into the test's
# folder, each command replaced by true): the flags it shows exist and go
# together. learn writes step.json, which policy reads back.
MAN="$TESTDIR/../../man/stepbox.1"
mkdir -p "$T/srv/wf/runs/8" "$T/srv/wf/reports" "$T/ex"
echo '[user]' >"$HOME/.gitconfig"
echo '{"version": 1}' >"$T/ex/step.json"
n=0
sed -n '/^\.SH EXAMPLES/,/^\.SH SEE ALSO/p' "$MAN" | awk '
	/^\.nf/ {on = 1; next} /^\.fi/ {on = 0; next}
	on { line = line $0; if (line ~ /\\e$/) { sub(/\\e$/, "", line); next } print line; line = "" }' |
	sed -e 's/\\-/-/g' -e "s|/srv/|$T/srv/|g" >"$T/ex/lines"
while IFS= read -r line; do
	n=$((n + 1))
	# the command after --, whatever it is, becomes true
	cmd=$(echo "$line" | sed -e 's/ -- .*/ -- true/' -e "s|\\bstepbox |\"\$STEPBOX\" |")
	(cd "$T/ex" && eval "$cmd") >"$T/out/out" 2>"$T/out/err"
	rc=$?
	case "$line" in
	*"stepbox doctor"*) want="0 1" ;; # doctor: 1 when it found something to say
	*) want=0 ;;
	esac
	case " $want " in
	*" $rc "*) ok "man page example runs: $(echo "$line" | cut -c1-70)" ;;
	*) notok "man page example runs: $line" "exit $rc" "$(head -3 "$T/out/err")" ;;
	esac
done <"$T/ex/lines"
[ "$n" -ge 10 ] && ok "the man page has its examples ($n)" || notok "the man page has its examples" "found $n"
[ -s "$T/ex/step.json" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/ex/step.json" &&
	ok "learn -o wrote a policy that reads back" || notok "learn -o wrote a policy that reads back"
