#!/bin/bash
# t0145: the explain corpus, one case a file (explain-corpus/*.case), each
# run the way an agent runs commands (sh -c) on this backend and user. For
# each: --explain names the denial, with its hint, in the sandbox's list; the
# report carries the same advice and proposes the same grant (or none, for
# what is never proposed); learn adds that grant (or refuses it); the MCP
# result carries --explain's own line; and the hint, followed, gets the
# command past that denial. A case of harmless misses expects none of them.
#
# A case file is bash, sourced with C (the case's folder, its workdir C/w)
# and HOME set. It sets: command (a shell line); denial (an ERE for the
# line's "OP 'PATH'" part) and advice (a string the line holds); grant (the
# report's proposed grant, "" for none); learn_has / learn_not (strings
# learn's policy holds / does not hold); follow (the flags that follow the
# hint, alone: the flags are not added) and expect (what the command then
# prints); optionally flags (for every run but the followed one), setup (a
# function run in C/w first; the file is sourced again after it, so that
# its values may read what setup made), backends (where it applies) and nothing=1
# (harmless misses: no denial at all, and nothing proposed) and no_follow (why
# a hint has no flags to follow: it proposes none, on purpose). Under
# Landlock alone a create, a delete or a rename is the supervisor's (the
# protected paths' live layer performs it), so the audit source names it
# as the tracer does.
. "$(dirname "$0")/lib.sh"

section() { # the sandbox's denials in $T/out/err, one a line
	awk '/^stepbox: explain: the sandbox denied/{s=1; next} /^stepbox: explain:/{s=0} s' "$T/out/err"
}

AUDIT_ABI=0
[ "$BACKEND" = landlock ] && is_root && AUDIT_ABI=$(abi)
for f in "$TESTDIR"/explain-corpus/*.case; do
	name=$(basename "$f" .case)
	C="$T/corpus/$name"
	mkdir -p "$C/w"
	unset -f setup
	command='' denial='' no_follow='' advice='' grant='' learn_has='' learn_not='' expect='' nothing=''
	follow=() flags=()
	backends="stacked landlock mountns auto"
	# shellcheck source=/dev/null
	. "$f"
	case " $backends " in
	*" $BACKEND "*) ;;
	*) skip "corpus $name" "not a case on $BACKEND"; continue ;;
	esac
	cd "$C/w" || exit 1
	if declare -f setup >/dev/null && ! setup; then
		notok "corpus $name: its setup"
		cd "$T/w" || exit 1
		continue
	fi
	# again, for what the setup made (a listener's port, read from a file)
	# shellcheck source=/dev/null
	. "$f"

	# 1. --explain
	run_sb run "${flags[@]}" --explain --report "$C/report.json" -- sh -c "$command"
	cp "$T/out/err" "$C/explain.err"
	line=$(section | grep -E "\] ($denial)" | head -1)
	if [ -n "$nothing" ]; then
		grep -q "the sandbox denied nothing" "$T/out/err" && grep -q "not needed" "$T/out/err" &&
			ok "corpus $name: harmless misses are no denial" ||
			notok "corpus $name: harmless misses are no denial" "rc=$RC" "$(cat "$T/out/err")"
	else
		[ "$RC" != 0 ] && [ -n "$line" ] && case "$line" in *"$advice"*) true ;; *) false ;; esac &&
			ok "corpus $name: --explain names it, with its hint" ||
			notok "corpus $name: --explain names it, with its hint" "rc=$RC want /$denial/ and '$advice'" "$(cat "$T/out/err")"
	fi

	# 1b. the kernel's audit records (root, Landlock alone, ABI 7): the same judgment
	if [ "$BACKEND" = landlock ] && is_root && [ "$AUDIT_ABI" -ge 7 ]; then
		run_sb run "${flags[@]}" --explain --enable-audit --report "$C/audit.json" -- sh -c "$command"
		src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["denials_source"])' "$C/audit.json")
		aline=$(section | grep -E "\] ($denial)" | head -1)
		if [ -n "$nothing" ]; then
			[ "$src" = audit ] && grep -q "the sandbox denied nothing" "$T/out/err" &&
				ok "corpus $name: the audit source: no denial either" ||
				notok "corpus $name: the audit source: no denial either" "source $src" "$(cat "$T/out/err")"
		else
			[ "$src" = audit ] && [ -n "$aline" ] && case "$aline" in *"$advice"*) true ;; *) false ;; esac &&
				ok "corpus $name: the audit source says the same" ||
				notok "corpus $name: the audit source says the same" "source $src" "$(cat "$T/out/err")"
		fi
	fi

	# 2. the report: the same advice, the same grant or none
	python3 - "$C/report.json" "$advice" "$grant" "$nothing" <<'PY' &&
import json, sys
d = json.load(open(sys.argv[1]))["denials"]
advice, grant, nothing = sys.argv[2], sys.argv[3], sys.argv[4]
live = [x for x in d if x["sandbox"] and not x.get("moot")]
if nothing:
    assert not live and all("grant" not in x for x in d), d
else:
    hit = [x for x in live if advice in x.get("advice", "")]
    assert hit, d
    got = [v for x in hit for v in x.get("grant", {}).values()]
    assert (set(got) == {grant}) if grant else not got, (got, grant)
PY
		ok "corpus $name: the report says the same" ||
		notok "corpus $name: the report says the same" "$(head -c 800 "$C/report.json")"

	# 3. learn
	run_sb learn "${flags[@]}" -- sh -c "$command"
	{ [ -z "$learn_has" ] || grep -qF -- "$learn_has" "$T/out/out"; } &&
		{ [ -z "$learn_not" ] || ! grep -qF -- "$learn_not" "$T/out/out"; } &&
		ok "corpus $name: learn proposes what --explain does" ||
		notok "corpus $name: learn proposes what --explain does" "has '$learn_has' not '$learn_not'" "$OUT"

	# 4. the MCP result: --explain's own line (or no denial)
	if timeout 60 python3 "$TESTDIR/mcp-once.py" "$STEPBOX" "$BACKEND" "$command" "${flags[@]}" >"$C/mcp.json" 2>"$C/mcp.err"; then
		python3 - "$C/mcp.json" "$C/explain.err" "$advice" "$nothing" <<'PY' &&
import json, sys
res = json.load(open(sys.argv[1]))
explain, advice, nothing = open(sys.argv[2]).read(), sys.argv[3], sys.argv[4]
denials = res.get("denials") or []
if nothing:
    assert not denials, denials
else:
    hit = [d for d in denials if advice in d]
    assert hit, denials
    said = hit[0].split("): ", 1)[1]
    assert said in explain, (said, explain)
assert "denied nothing" not in res.get("stderr", "")
PY
			ok "corpus $name: the MCP result says what --explain does" ||
			notok "corpus $name: the MCP result says what --explain does" "$(head -c 800 "$C/mcp.json")"
	else
		notok "corpus $name: the MCP result says what --explain does" "the server gave no answer" "$(cat "$C/mcp.err")"
	fi

	# 5. the hint, followed (a case whose hint proposes no grant says why)
	if [ -z "$nothing" ] && [ ${#follow[@]} = 0 ]; then
		skip "corpus $name: the hint, followed" "$no_follow"
	elif [ -z "$nothing" ]; then
		run_sb run --explain "${follow[@]}" -- sh -c "$command"
		[ "$RC" = 0 ] && [ "$OUT" = "$expect" ] && ! section | grep -qE "\] ($denial)" &&
			ok "corpus $name: the hint, followed, gets it past" ||
			notok "corpus $name: the hint, followed, gets it past" "rc=$RC out='$OUT' want '$expect' (${follow[*]})" "$(cat "$T/out/err")"
	fi
	cd "$T/w" || exit 1
done
