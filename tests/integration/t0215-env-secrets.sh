#!/bin/bash
# t0215: credentials under names and values the filter knows, and control
# socket locators, do not reach the step unless kept; each drop is named by
# `stepbox env`, -v and --report, never with its value; routed folders are
# never created through a symlink planted in P or R.
. "$(dirname "$0")/lib.sh"

# NAME -> the reason stepbox must give. Every value holds a marker (zq...)
# or a path that must never be printed.
declare -A WHY=(
	[DATABASE_URL]="value looks secret (a URL with a password)"
	[https_proxy]="value looks secret (a URL with a password)"
	[GH_PAT]="name looks secret (*PAT)"
	[MYSQL_PWD]="name looks secret (*PWD*)"
	[DB_PASS]="name looks secret (*PASS*)"
	[SSHPASS]="name looks secret (*PASS*)"
	[DOCKER_AUTH_CONFIG]="name looks secret (*AUTH*)"
	[SENTRY_DSN]="name looks secret (*DSN*)"
	[JAR_COOKIE]="name looks secret (*COOKIE*)"
	[WEB_SESSION_ID]="name looks secret (*SESSION*)"
	[CI_BOT]="value looks secret (a GitHub token)"
	[AWS_ID]="value looks secret (an AWS access key id)"
	[LLM]="value looks secret (an OpenAI or Anthropic key)"
	[SLACK_BOT]="value looks secret (a Slack token)"
	[MY_CERT]="value looks secret (a PEM block)"
	[DBUS_SESSION_BUS_ADDRESS]="control socket locator"
	[DBUS_SYSTEM_BUS_ADDRESS]="control socket locator"
	[DOCKER_HOST]="control socket locator"
	[CONTAINER_HOST]="control socket locator"
	[TMUX]="control socket locator"
	[TMUX_PANE]="control socket locator"
	[SSH_AUTH_SOCK]="credential agent socket"
	[GPG_AGENT_INFO]="credential agent socket"
	[SLACK_WEBHOOK_URL]="name looks secret (*WEBHOOK*)"
	[CI_JOB_JWT]="name looks secret (*JWT*)"
	[NOTIFY]="value looks secret (a webhook URL)"
	[ALERTS]="value looks secret (a webhook URL)"
	[OIDC]="value looks secret (a JSON Web Token)"
	[OLDPWD]="the caller's previous folder"
)
# shellcheck disable=SC2054 # a value with commas, not an array of them
declare -A VAL=(
	[DATABASE_URL]=postgres://app:zq1pw@db.internal:5432/app
	[https_proxy]=http://proxyuser:zq2pw@proxy.internal:3128
	[GH_PAT]=zq3pat
	[MYSQL_PWD]=zq4pw
	[DB_PASS]=zq5pw
	[SSHPASS]=zq6pw
	[DOCKER_AUTH_CONFIG]='{"auths":{"r":{"auth":"zq7au"}}}'
	[SENTRY_DSN]=https://zq8dsn@o1.ingest.sentry.io/1
	[JAR_COOKIE]=zq9ck
	[WEB_SESSION_ID]=zq10s
	[CI_BOT]=ghp_zq11abcdefghijABCDEFGHIJklmnopqrstuv
	[AWS_ID]=AKIAZQ12ODNN7EXAMPLE
	[LLM]=sk-proj-zq13abcdefghijklmnopqrstuvwxyz0123456789
	[SLACK_BOT]=xoxb-1234567890-zq14AbCdEfGh
	[MY_CERT]="-----BEGIN PRIVATE KEY-----
zq15pem
-----END PRIVATE KEY-----"
	[DBUS_SESSION_BUS_ADDRESS]=unix:path=/run/user/zq16/bus
	[DBUS_SYSTEM_BUS_ADDRESS]=unix:path=/run/zq17/system_bus_socket
	[DOCKER_HOST]=unix:///var/run/zq18/docker.sock
	[CONTAINER_HOST]=unix:///run/zq19/podman.sock
	[TMUX]=/tmp/tmux-zq20/default,1,0
	[TMUX_PANE]=%zq21
	[SSH_AUTH_SOCK]=/tmp/ssh-zq22/agent.1
	[GPG_AGENT_INFO]=/run/zq23/S.gpg-agent:0:1
	[SLACK_WEBHOOK_URL]=https://example.org/zq24
	[CI_JOB_JWT]=zq25jwt
	[NOTIFY]=https://hooks.slack.com/services/T0000ZQ26/B00000000/zq26AbCdEfGhIjKlMnOpQrSt
	[ALERTS]=https://discord.com/api/webhooks/123456789012/zq27-AbCdEfGhIjKlMnOpQrStUvWxYz0123
	[OIDC]=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ6cTI4In0.zq28sigAbCdEfGh
	[OLDPWD]=/srv/zq29old
)
# near-misses that must reach the step, and the positive control PLAIN
declare -A KEEP=(
	[PLAIN]=ordinary
	[DOCS_URL]=https://docs.example.org/webhooks/getting-started
	[GIT_AUTHOR_NAME]="Ann Example"
	[GIT_AUTHOR_EMAIL]=ann@example.org
	[GIT_URL]=https://user@git.example.org/r.git
	[DESK]=/home/u/desk-0123456789abcdefghijklmnopqrstuvwxyz
	[TOX_TESTENV_PASSENV]="PIP_* SSL_CERT_FILE"
)
for n in "${!VAL[@]}"; do export "$n=${VAL[$n]}"; done
for n in "${!KEEP[@]}"; do export "$n=${KEEP[$n]}"; done

# no_leak NAME FILE...: no dropped value's marker appears in FILE
no_leak() {
	local name=$1 leaked=
	shift
	for n in "${!VAL[@]}"; do
		local mark
		mark=$(printf '%s' "${VAL[$n]}" | grep -oi 'zq[0-9]*[a-z]*' | head -1)
		[ -n "$mark" ] || leaked="$leaked $n(no-marker)"
		[ -n "$mark" ] && grep -qF -- "$mark" "$@" && leaked="$leaked $n"
	done
	[ -z "$leaked" ] && ok "$name" || notok "$name" "values printed:$leaked"
}

# each kind of variable is absent inside, next to the ones that are kept
run_sb run -- env
cp "$T/out/out" "$T/inside"
if [ "$RC" != 0 ] || ! grep -qx "PLAIN=ordinary" "$T/inside"; then
	notok "run -- env works (positive control)" "exit $RC"
else
	ok "run -- env works (positive control)"
fi
for n in $(printf '%s\n' "${!WHY[@]}" | sort); do
	grep -q "^$n=" "$T/inside" && notok "$n does not reach the step" || ok "$n does not reach the step"
done
for n in $(printf '%s\n' "${!KEEP[@]}" | sort); do
	grep -qxF -- "$n=${KEEP[$n]}" "$T/inside" && ok "$n reaches the step" ||
		notok "$n reaches the step" "$(grep "^$n=" "$T/inside")"
done
grep -q "^PWD=" "$T/inside" && ok "PWD reaches the step" || notok "PWD reaches the step"
no_leak "no dropped value inside" "$T/inside"
in_box "sh -c: secrets unset, PLAIN set" \
	'test -z "${DATABASE_URL+x}${GH_PAT+x}${DOCKER_HOST+x}${TMUX+x}${CI_BOT+x}" && test "$PLAIN" = ordinary'

# kept with --env NAME, each with its value
keep=()
for n in "${!WHY[@]}"; do keep+=(--env "$n"); done
run_sb run "${keep[@]}" -- env
missing=
for n in "${!WHY[@]}"; do
	[ "$n" = MY_CERT ] && continue # three lines: checked below
	grep -qxF -- "$n=${VAL[$n]}" "$T/out/out" || missing="$missing $n"
done
grep -qx "MY_CERT=-----BEGIN PRIVATE KEY-----" "$T/out/out" || missing="$missing MY_CERT"
[ "$RC" = 0 ] && [ -z "$missing" ] && ok "--env NAME keeps each" || notok "--env NAME keeps each" "exit $RC, missing:$missing"
in_box "--env NAME keeps a value intact (sh -c)" '[ "$DATABASE_URL" = postgres://app:zq1pw@db.internal:5432/app ]' --env DATABASE_URL

# stepbox env names each drop and its reason, never the value
run_sb env
cp "$T/out/out" "$T/envout"
missing=
for n in "${!WHY[@]}"; do
	grep -qxF -- "# dropped $n: ${WHY[$n]}" "$T/envout" || missing="$missing $n"
done
[ -z "$missing" ] && ok "stepbox env names each drop with its reason" ||
	notok "stepbox env names each drop with its reason" "missing:$missing" "$(grep '^# dropped' "$T/envout" | head -30)"
grep -qx "PLAIN=ordinary" "$T/envout" && ok "stepbox env prints PLAIN" || notok "stepbox env prints PLAIN"
no_leak "stepbox env prints no dropped value" "$T/envout" "$T/out/err"

# -v names each drop
run_sb run -v -- true
missing=
for n in "${!WHY[@]}"; do
	grep -qF -- "stepbox: env: dropped $n: ${WHY[$n]}" "$T/out/err" || missing="$missing $n"
done
[ "$RC" = 0 ] && [ -z "$missing" ] && ok "-v names each drop with its reason" ||
	notok "-v names each drop with its reason" "exit $RC, missing:$missing"
grep -q "dropped PLAIN" "$T/out/err" && notok "-v names no kept variable" || ok "-v names no kept variable"
no_leak "-v prints no dropped value" "$T/out/err" "$T/out/out"
run_sb run -- true
grep -q "env: dropped" "$T/out/err" && notok "without -v, drops are quiet" || ok "without -v, drops are quiet"

# the report names each drop
run_sb run --report "$T/r.json" -- true
for n in "${!WHY[@]}"; do printf '%s\t%s\n' "$n" "${WHY[$n]}"; done >"$T/want"
python3 - "$T/r.json" "$T/want" <<'PY' && ok "report names each drop with its reason" || notok "report names each drop with its reason"
import json, sys
d = json.load(open(sys.argv[1]))
got = {e["name"]: e["reason"] for e in d["env_dropped"]}
want = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[2]))
bad = {n: (got.get(n), w) for n, w in want.items() if got.get(n) != w}
assert not bad, bad
assert not {"PLAIN", "DOCS_URL", "GIT_AUTHOR_NAME", "GIT_URL", "DESK"} & set(got), got
PY
no_leak "report holds no dropped value" "$T/r.json"

# a symlink planted in P or R: refused, nothing created where it points
mkdir -p "$T/p" "$T/outside"
ln -s "$T/outside" "$T/p/python"
run_sb run --persist "$T/p" -- sh -c "touch '$T/ran'"
if [ "$RC" = 125 ] && grep -qF "'$T/p/python' is a symbolic link" "$T/out/err" &&
	grep -q "^hint: remove the link" "$T/out/err" && [ ! -e "$T/ran" ]; then
	ok "a link at P/python: exit 125, named, command not run"
else
	notok "a link at P/python: exit 125, named, command not run" "exit $RC"
fi
mkdir -p "$T/p2" "$T/outside2"
ln -s "$T/outside2" "$T/p2/go"
run_sb run --persist "$T/p2" -- true
[ "$RC" = 125 ] && [ -z "$(ls -A "$T/outside2")" ] && ok "a link at P/go: exit 125, nothing created at its target" ||
	notok "a link at P/go: exit 125, nothing created at its target" "exit $RC" "$(ls -A "$T/outside2")"
mkdir -p "$T/w2" "$T/outside3"
ln -s "$T/outside3" "$T/w2/.cache"
run_sb run -C "$T/w2" -- true
[ "$RC" = 125 ] && grep -qF "'$T/w2/.cache' is a symbolic link" "$T/out/err" && [ -z "$(ls -A "$T/outside3")" ] &&
	ok "a link in the run folder: exit 125, nothing created at its target" ||
	notok "a link in the run folder: exit 125, nothing created at its target" "exit $RC" "$(ls -A "$T/outside3")"
# positive control: the same folders without a link
rm "$T/p2/go" "$T/w2/.cache"
run_sb run --persist "$T/p2" -C "$T/w2" -- true
[ "$RC" = 0 ] && [ -d "$T/p2/go/cache" ] && [ ! -L "$T/p2/go" ] && [ -d "$T/w2/.tmp" ] &&
	ok "without a link the routed folders are created" || notok "without a link the routed folders are created" "exit $RC"
