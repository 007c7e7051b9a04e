# shellcheck shell=bash
# shellcheck disable=SC2034 # what is set here, the tests that source it read
# lib.sh: sourced by every tNNNN-*.sh. Each test prints one line:
# "ok - NAME", "not ok - NAME" (with "# ..." detail lines) or "skip - NAME: WHY".
# tests/run.sh counts them. Environment: STEPBOX (the binary), FIXTURES
# (prepared by root: a setuid copy of id), TEST_USER (root | unprivileged).
set -u
: "${STEPBOX:?STEPBOX must name the binary}"
SB=$STEPBOX
TESTDIR=$(cd "$(dirname "$0")" && pwd) # before any cd: helpers live beside the tests
T=$(mktemp -d "${TMPDIR:-/tmp}/stepbox-t.XXXXXX")
chmod 755 "$T"
mkdir -p "$T/home" "$T/w" "$T/r" "$T/out"
trap 'rm -rf "$T" 2>/dev/null; [ -n "${BG_PIDS:-}" ] && kill $BG_PIDS 2>/dev/null; true' EXIT
BG_PIDS=
# The backend under test: the same suite runs against each (tests/run.sh).
BACKEND=${STEPBOX_TEST_BACKEND:-stacked}
if [ "$BACKEND" != auto ]; then
	# ask for the backend, unless the test chose one itself
	cat >"$T/sb" <<WRAP
#!/bin/sh
case "\$1" in run|learn|policy|env|guide|mcp) ;; *) exec "$STEPBOX" "\$@" ;; esac
for a in "\$@"; do
	[ "\$a" = -- ] && break
	case "\$a" in --backend|--backend=*) exec "$STEPBOX" "\$@" ;; esac
done
cmd=\$1
shift
exec "$STEPBOX" "\$cmd" --backend $BACKEND "\$@"
WRAP
	chmod 755 "$T/sb"
	SB=$T/sb
fi
# Tests set what they depend on: a host's PIP_*, LD_PRELOAD or SANDBOX_* must
# not decide a result.
export HOME="$T/home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8
unset SANDBOX_EXTRA_SYSTEM_PATHS AGENT_BROWSER_EXECUTABLE_PATH STEPBOX_LANDLOCK_ABI STEPBOX_IDMAP \
	PIP_FIND_LINKS PIP_INDEX_URL PIP_CONFIG_FILE LD_PRELOAD PYTHONUSERBASE TMPDIR \
	npm_config_prefix NPM_CONFIG_PREFIX npm_config_cache NPM_CONFIG_CACHE XDG_CACHE_HOME \
	XDG_STATE_HOME
cd "$T/w" || exit 1

is_root() { [ "$(id -u)" = 0 ]; }
abi() { "$SB" check --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["landlock_abi"])'; }

ok() { echo "ok - $1"; }
notok() {
	echo "not ok - $1"
	shift
	for l in "$@"; do printf '# %s\n' "$l"; done
	[ -s "$T/out/err" ] && sed 's/^/#   stderr: /' "$T/out/err" | head -5
	true
}
skip() { echo "skip - $1: $2"; }
# An event, never a guess at how long it takes: wait_for COMMAND... asks
# every 50 ms, for at most 5 s, whether COMMAND succeeds (then asks once more).
wait_for() {
	local _
	for _ in $(seq 100); do "$@" && return 0; sleep 0.05; done
	"$@"
}
# running PATTERN [N]: N processes (1 if not said) whose whole command line is PATTERN
running() { [ "$(pgrep -fxc "$1")" -ge "${2:-1}" ]; }
# none_left PATTERN: no process's command line holds PATTERN
none_left() { ! pgrep -f "$1" >/dev/null; }

# run_sb ARGS...: run stepbox, stdout to $OUT, stderr to $ERR, status in $RC
run_sb() {
	"$SB" "$@" >"$T/out/out" 2>"$T/out/err"
	RC=$?
	OUT=$(cat "$T/out/out")
	ERR=$(cat "$T/out/err")
}

# expect NAME CODE [GREP-IN-STDERR] -- ARGS: stepbox ARGS exits CODE
expect() {
	local name=$1 code=$2 pat=
	shift 2
	if [ "$1" != -- ]; then pat=$1; shift; fi
	shift
	run_sb "$@"
	if [ "$RC" != "$code" ]; then
		notok "$name" "exit $RC, want $code" "stdout: $(echo "$OUT" | head -3)"
	elif [ -n "$pat" ] && ! grep -q -- "$pat" "$T/out/err"; then
		notok "$name" "stderr lacks: $pat"
	else
		ok "$name"
	fi
}

# in_box NAME SCRIPT [STEPBOX-ARGS...]: SCRIPT (sh) succeeds inside the sandbox
in_box() {
	local name=$1 script=$2
	shift 2
	run_sb run "$@" -- sh -c "$script"
	if [ "$RC" = 0 ]; then ok "$name"; else notok "$name" "exit $RC" "stdout: $OUT"; fi
}

# denied NAME SCRIPT [ARGS]: SCRIPT fails inside with "Permission denied" or
# "Operation not permitted" (a denial, not a missing file). Under mountns what
# is not granted does not exist, and read-only grants are read-only mounts.
DENIALS="Permission denied|Operation not permitted|EACCES|EPERM|PermissionError"
[ "$BACKEND" != landlock ] && DENIALS="$DENIALS|No such file or directory|Directory nonexistent|ENOENT|Read-only file system|EROFS|No such process|ESRCH"
denied() {
	local name=$1 script=$2
	shift 2
	run_sb run "$@" -- sh -c "$script"
	if [ "$RC" != 0 ] && grep -qiE "$DENIALS" "$T/out/err" "$T/out/out"; then
		ok "$name"
	else
		notok "$name" "exit $RC, want a denial" "stdout: $OUT"
	fi
}

# test_ca: a test CA (T/ca.pem) and a certificate for localhost signed by it
# (T/srv.pem, T/srv.key), readable by the step, for an HTTPS server on loopback
test_ca() {
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=stepbox-test-ca \
		-keyout "$T/ca.key" -out "$T/ca.pem" >/dev/null 2>&1
	openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$T/srv.key" \
		-out "$T/srv.csr" >/dev/null 2>&1
	printf 'subjectAltName=DNS:localhost\n' >"$T/san"
	openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
		-days 2 -extfile "$T/san" -out "$T/srv.pem" >/dev/null 2>&1
	chmod 644 "$T"/*.pem "$T"/*.key
}

# test_servers: an HTTP and an HTTPS server (test_ca's certificate) on free
# loopback ports, serving T/site (with T/site/hello), for up to 300 s; their
# ports in HP and SP
test_servers() {
	mkdir -p "$T/site" && echo hello-from-upstream >"$T/site/hello" && chmod -R a+rX "$T/site"
	python3 - "$T/ports" "$T/site" "$T/srv.pem" "$T/srv.key" <<'PY' &
import functools, http.server, ssl, sys, threading
ports, site, cert, key = sys.argv[1:5]
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
H = functools.partial(Quiet, directory=site)
plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
tls = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
for s in (plain, tls):
    threading.Thread(target=s.serve_forever, daemon=True).start()
open(ports, "w").write("%d %d" % (plain.server_address[1], tls.server_address[1]))
threading.Event().wait(300)
PY
	BG_PIDS="$BG_PIDS $!"
	for _ in $(seq 100); do [ -s "$T/ports" ] && break; sleep 0.1; done
	read -r HP SP <"$T/ports"
}
