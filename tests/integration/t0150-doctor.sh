#!/bin/bash
# t0150: stepbox doctor finds what would break a step, before it does.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/deploy/tools/bin" "$T/wheels" "$HOME/.config/broker"
printf '#!/bin/sh\n' >"$T/deploy/tools/bin/broker"
chmod 755 "$T/deploy/tools/bin/broker"
echo "login=saved" >"$HOME/.config/broker/config"

doc() { # run doctor with the environment of the test plus "$@" as options
	run_sb doctor --json "$@"
	echo "$OUT" >"$T/doctor.json"
}
verdict() { # CHECK VERDICT [TEXT]: some check named CHECK has VERDICT (and TEXT in its detail)
	python3 - "$T/doctor.json" "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
check, verdict = sys.argv[2], sys.argv[3]
text = sys.argv[4] if len(sys.argv) > 4 else ""
assert any(c["check"] == check and c["verdict"] == verdict and text in c["detail"] for c in d["checks"]), d
PY
}

PATH="$T/deploy/tools/bin:$PATH" PIP_FIND_LINKS="$T/wheels" doc -r "$T/nope"
[ "$RC" = 1 ] && ok "doctor exits non-zero when a check fails" || notok "doctor exits non-zero when a check fails" "rc=$RC"
verdict PATH fail "$T/deploy/tools/bin" && ok "doctor: a PATH folder outside the grants" || notok "doctor: a PATH folder outside the grants"
# the failure as the default run would meet it: under the namespaces the
# folder is not there (a shell's 127), under Landlock alone refused (126)
if verdict backends warn "auto picks landlock"; then want="a shell exits 126"; else want="a shell exits 127"; fi
verdict PATH fail "$want" && ok "doctor: the PATH failure as auto's backend gives it ($want)" ||
	notok "doctor: the PATH failure as auto's backend gives it ($want)" "$(cat "$T/doctor.json")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any("SANDBOX_EXTRA_SYSTEM_PATHS=" in c.get("fix","") for c in d["checks"])' "$T/doctor.json" &&
	ok "doctor: the fix names SANDBOX_EXTRA_SYSTEM_PATHS" || notok "doctor: the fix names SANDBOX_EXTRA_SYSTEM_PATHS"
verdict environment fail "PIP_FIND_LINKS names '$T/wheels'" && ok "doctor: an inherited variable naming an ungranted path" || notok "doctor: an inherited variable naming an ungranted path"
verdict "HOME/.config" warn "broker" && ok "doctor: HOME/.config unreadable inside" || notok "doctor: HOME/.config unreadable inside"
verdict "policy paths" warn "$T/nope" && ok "doctor: a policy path that does not exist" || notok "doctor: a policy path that does not exist"
verdict resolv.conf ok && ok "doctor: where resolv.conf points, and that it is granted" || notok "doctor: where resolv.conf points, and that it is granted"
verdict backends ok && ok "doctor: the backends" || notok "doctor: the backends"

# exactly the environment a deployment would pass
run_clean() {
	env -i HOME="$HOME" LANG=C.UTF-8 SANDBOX_EXTRA_SYSTEM_PATHS="$T/deploy/tools/bin" \
		PATH="$T/deploy/tools/bin:/usr/bin:/bin" PIP_FIND_LINKS="$T/wheels" \
		"$SB" doctor --json -r "$T/wheels" -r "$HOME/.config/broker"
}
OUT=$(run_clean 2>"$T/out/err")
RC=$?
[ "$RC" = 0 ] && ok "doctor passes once the fixes are applied" || notok "doctor passes once the fixes are applied" "$OUT"

run_sb doctor
echo "$OUT" | grep -q "^stepbox doctor: " && echo "$OUT" | grep -qE "^  (ok|WARN|FAIL) " && ok "doctor: text output" || notok "doctor: text output"

if is_root; then
	doc
	verdict "/etc secrets" ok "hidden from the sandbox, e.g. /etc/" && ok "doctor: root's non-world-readable /etc files are found and hidden" ||
		notok "doctor: root's non-world-readable /etc files are found and hidden"
	doc -r /etc/shadow
	verdict "/etc secrets" fail "/etc/shadow" && ok "doctor: a grant exposing /etc/shadow fails" || notok "doctor: a grant exposing /etc/shadow fails"
else
	skip "doctor: /etc secrets" "this user reads no /etc file that is not world-readable"
fi
