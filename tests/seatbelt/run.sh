#!/bin/bash
# tests/seatbelt/run.sh LINUX-STEPBOX: the portable core built alone
# (meson -Dlinux_backends=disabled), as macOS builds it, and its Seatbelt
# backend's launcher, on Linux.
#
# Two builds: one as shipped (sandbox-exec at /usr/bin/sandbox-exec, which
# Linux lacks: every run must be SANDBOX_UNAVAILABLE, nothing run), and one
# whose runner is a stand-in made here. The stand-in is not a sandbox: it
# keeps the profile it was handed and executes the command, so this suite
# proves the launcher (the profile handed over is the one `policy --format
# sbpl` prints, exit statuses, timeout, passed-on signals, the process
# group, rlimits, refused limits, exec refusals, folders and the workflow
# cache made) and the split (the portable build's unit tests, and `policy`
# and `env` printing what the Linux build prints). What Seatbelt enforces is
# proven only on a Mac (.github/workflows/macos.yml). As root and as uid
# 65534, from a world-readable copy.
set -u
linux=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
stage=$(mktemp -d /tmp/stepbox-seatbelt.XXXXXX)
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; shift; for l in "$@"; do echo "# $l"; done; }

# the stand-in runner: sandbox-exec's command line, the profile kept
cat >"$stage/sandbox-exec" <<EOF
#!/bin/sh
[ "\$1" = -p ] && [ "\$3" = -- ] || { echo "stand-in: unexpected arguments: \$*" >&2; exit 71; }
printf '%s' "\$2" >"$stage/profiles/last.\$(id -u)"
shift 3
exec "\$@"
EOF
chmod 755 "$stage/sandbox-exec"
mkdir -m 1777 "$stage/profiles"

build() { # DIR [MESON-OPTIONS...]
	local dir=$1
	shift
	if meson setup "$dir" "$top" -Dlinux_backends=disabled "$@" >"$stage/setup.log" 2>&1 &&
		ninja -C "$dir" >"$stage/ninja.log" 2>&1; then
		ok "the portable core builds alone ($*)"
	else
		notok "the portable core builds alone ($*)" "$(cat "$stage/setup.log" "$stage/ninja.log" | tail -5)"
		return 1
	fi
}
build "$stage/shipped" || exit 0
build "$stage/standin" -Dsandbox_exec="$stage/sandbox-exec" || exit 0
if meson test -C "$stage/shipped" >"$stage/unit.log" 2>&1; then
	ok "the portable build's unit tests pass ($(grep -c '^ *[0-9]*/[0-9]* .* OK' "$stage/unit.log") suites)"
else
	notok "the portable build's unit tests pass" "$(tail -5 "$stage/unit.log")"
fi
if nm "$stage/shipped/stepbox" | grep -qE ' T (landlock|mountns|supervise|harden|launch)_'; then
	notok "the portable binary holds none of the Linux backends"
else
	ok "the portable binary holds none of the Linux backends"
fi
cp "$stage/shipped/stepbox" "$stage/stepbox-shipped"
cp "$linux" "$stage/stepbox-linux" # the clone may sit where uid 65534 cannot enter
linux=$stage/stepbox-linux
cp "$stage/standin/stepbox" "$stage/stepbox-mac"
chmod 755 "$stage"/stepbox-*

run_as() { # USER LABEL: every check as that user
	local user=$1 u=$2 as=() w="$stage/w-$1"
	[ "$user" = root ] || as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	mkdir -p "$w/work" "$w/home" "$w/out"
	cp /bin/true "$w/out/outside-true"
	chmod -R a+rwX "$w"
	local sb="$stage/stepbox-mac" id
	id=$([ "$user" = root ] && echo 0 || echo 65534)
	# the environment the results depend on, set here
	sbx() { (cd "$w/work" && env -i HOME="$w/home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
		"${as[@]}" "$@"); }
	local out rc

	out=$(sbx "$stage/stepbox-shipped" run -- true 2>&1); rc=$?
	if [ $rc = 125 ] && grep -q "/usr/bin/sandbox-exec" <<<"$out"; then
		ok "$u: as shipped on Linux, run is 125 naming /usr/bin/sandbox-exec"
	else
		notok "$u: as shipped on Linux, run is 125 naming /usr/bin/sandbox-exec" "rc=$rc $out"
	fi
	out=$(sbx "$stage/stepbox-shipped" check 2>&1); rc=$?
	if [ $rc = 1 ] && grep -q "not available: the Seatbelt backend runs a step under /usr/bin/sandbox-exec" <<<"$out"; then
		ok "$u: check says the Seatbelt backend cannot run here (1)"
	else
		notok "$u: check says the Seatbelt backend cannot run here (1)" "rc=$rc $out"
	fi
	out=$(sbx "$sb" check --json 2>&1); rc=$?
	if [ $rc = 0 ] && python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["auto"]=="seatbelt" and d["backends"]["seatbelt"]["available"] and "memory-limit" in d["backends"]["seatbelt"]["missing"]' <<<"$out"; then
		ok "$u: check --json: seatbelt available with its runner, what it cannot give listed"
	else
		notok "$u: check --json: seatbelt available with its runner" "rc=$rc $out"
	fi

	# the profile handed over is the one policy --format sbpl prints
	rm -f "$stage/profiles/last.$id"
	out=$(sbx "$sb" run --read "$w/out" --net none -- sh -c 'exit 3' 2>&1); rc=$?
	sbx "$sb" policy --read "$w/out" --net none --format sbpl >"$stage/printed.$id" 2>/dev/null
	if [ $rc = 3 ] && [ -s "$stage/printed.$id" ] &&
		cmp -s "$stage/printed.$id" "$stage/profiles/last.$id"; then
		ok "$u: run hands sandbox-exec exactly the profile policy --format sbpl prints; the command's status (3)"
	else
		notok "$u: run hands sandbox-exec the printed profile" "rc=$rc $out" \
			"$(diff "$stage/printed.$id" "$stage/profiles/last.$id" 2>&1 | head -5)"
	fi
	# policy and env print what the Linux build prints (the portable modules are one)
	local a b
	a=$(sbx "$sb" policy --persist "$w/p" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("resolved_backend"); d.pop("grants"); d.pop("skipped"); print(json.dumps(d, sort_keys=True))')
	b=$(sbx "$linux" policy --persist "$w/p" 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("resolved_backend"); d.pop("grants"); d.pop("skipped"); print(json.dumps(d, sort_keys=True))')
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "$u: policy prints the same policy, persistent folder and routed folders as the Linux build"
	else
		notok "$u: policy prints what the Linux build prints" "mac: $a" "linux: $b"
	fi
	a=$(sbx "$sb" env --persist "$w/p" 2>&1)
	b=$(sbx "$linux" env --persist "$w/p" 2>&1)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "$u: env prints the same variables as the Linux build ($(wc -l <<<"$a") lines)"
	else
		notok "$u: env prints what the Linux build prints" "$(diff <(echo "$a") <(echo "$b") | head -6)"
	fi
	# the step's environment is the routed one, and the folders and the cache are made
	out=$(sbx "$sb" run --persist "$w/p" -- sh -c 'echo "$PIP_CACHE_DIR|$npm_config_cache"' 2>&1); rc=$?
	local want
	want=$(sbx "$sb" env --persist "$w/p" 2>/dev/null | sed -n 's/^PIP_CACHE_DIR=//p')
	if [ $rc = 0 ] && [ -n "$want" ] && [ "${out%%|*}" = "$want" ] && [ -d "$want" ] &&
		[ -f "$w/p/.stepbox-lock" ]; then
		ok "$u: the step gets the routed environment; routed folders and the workflow cache's lock made"
	else
		notok "$u: routed environment and folders" "rc=$rc out=$out want=$want" "$(ls -a "$w/p" 2>&1)"
	fi

	# the command holds the workflow cache's lock itself (no parent-death signal on a Mac);
	# ls's complaint about an fd the shell closes while it lists them is not the answer
	out=$(sbx "$sb" run --persist "$w/p" -- sh -c 'ls -l /proc/$$/fd 2>/dev/null | grep -c "\.stepbox-lock"' 2>&1); rc=$?
	[ $rc = 0 ] && [ "$out" = 1 ] && ok "$u: the command holds the workflow cache's lock" ||
		notok "$u: the command holds the workflow cache's lock" "rc=$rc $out"
	out=$(sbx "$sb" run -- no-such-command-xyz 2>&1); rc=$?
	[ $rc = 127 ] && grep -q "command not found" <<<"$out" &&
		ok "$u: a missing command: 127, said" || notok "$u: a missing command: 127" "rc=$rc $out"
	touch "$w/work/notexec"
	out=$(sbx "$sb" run -- ./notexec 2>&1); rc=$?
	[ $rc = 126 ] && ok "$u: a file that is not executable: 126" ||
		notok "$u: a file that is not executable: 126" "rc=$rc $out"
	# exec outside every grant: refused before anything runs, the denial named; the same
	# binary inside the workdir runs (the control)
	out=$(sbx "$sb" run -- "$w/out/outside-true" 2>&1); rc=$?
	cp /bin/true "$w/work/inside-true" 2>/dev/null || true
	sbx "$sb" run -- "$w/work/inside-true" >/dev/null 2>&1; local rc2=$?
	if [ $rc = 126 ] && grep -q "the sandbox refused it" <<<"$out" && grep -q -- "--read $w/out" <<<"$out" &&
		[ $rc2 = 0 ]; then
		ok "$u: exec outside every execute grant: 126, the sandbox named with the grant to add; inside the workdir it runs"
	else
		notok "$u: exec outside every grant: 126, named; control runs" "rc=$rc rc2=$rc2 $out"
	fi
	out=$(sbx "$sb" run --read "$w/out" -- "$w/out/outside-true" 2>&1); rc=$?
	[ $rc = 0 ] && ok "$u: ... and with --read on its folder it runs" ||
		notok "$u: ... and with --read on its folder it runs" "rc=$rc $out"

	local t0=$SECONDS
	out=$(sbx "$sb" run --timeout 1 -- sleep 30 2>&1); rc=$?
	if [ $rc = 124 ] && grep -q "timed out after 1 s" <<<"$out" && [ $((SECONDS - t0)) -lt 10 ]; then
		ok "$u: --timeout: 124, said, the command killed"
	else
		notok "$u: --timeout: 124" "rc=$rc $out"
	fi
	out=$(sbx "$sb" run -- sh -c 'kill -TERM $$' 2>&1); rc=$?
	[ $rc = 143 ] && ok "$u: killed by a signal: 128+N (143)" || notok "$u: killed by a signal: 143" "rc=$rc $out"
	# the process group: what the command left behind is gone when run returns
	rm -f "$w/work/bg.pid"
	sbx "$sb" run -- sh -c 'sleep 300 & echo $! > bg.pid' >/dev/null 2>&1
	local bg
	bg=$(cat "$w/work/bg.pid" 2>/dev/null)
	# gone, or a zombie its new parent has not reaped yet: killed either way
	# (the SIGKILL is sent before run returns; on a busy machine the kernel
	# ends the process a moment later)
	dead() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
	for _ in $(seq 40); do [ -z "$bg" ] || dead "$bg" && break; sleep 0.05; done
	if [ -n "$bg" ] && dead "$bg"; then
		ok "$u: a background process the command left is killed with its process group"
	else
		notok "$u: the command's process group is killed" "pid=$bg $(ps -o pid,pgid,cmd -p "$bg" 2>&1 | tail -1)"
		[ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
	fi
	# a signal to stepbox is passed on; --grace then ends the tree
	# (env, setpriv and stepbox are one process: the signal reaches stepbox)
	out=$(cd "$w/work" && { env -i HOME="$w/home" PATH=/usr/bin:/bin "${as[@]}" "$sb" run --grace 1 -- \
		sh -c 'trap "" TERM; sleep 30' 2>&1 & p=$!; sleep 0.5; kill -TERM $p; wait $p; }); rc=$?
	if [ $rc = 137 ] && grep -q -- "--grace" <<<"$out"; then
		ok "$u: SIGTERM passed on; ignored past --grace, the tree is killed (137, said)"
	else
		notok "$u: SIGTERM passed on, --grace" "rc=$rc $out"
	fi
	t0=$SECONDS
	out=$(cd "$w/work" && { env -i HOME="$w/home" PATH=/usr/bin:/bin "${as[@]}" "$sb" run -- \
		sleep 30 2>&1 & p=$!; sleep 0.5; kill -TERM $p; wait $p; }); rc=$?
	[ $((SECONDS - t0)) -lt 10 ] || rc="$rc (took $((SECONDS - t0)) s)"
	[ $rc = 143 ] && ok "$u: SIGTERM passed on to the command (143)" ||
		notok "$u: SIGTERM passed on to the command (143)" "rc=$rc $out"

	# limits: the rlimits hold; what a Mac cannot enforce is refused, nothing run
	out=$(sbx "$sb" run --limit cpu_s=1 -- sh -c 'while :; do :; done' 2>&1); rc=$?
	[ $rc = 152 ] && grep -q "reached its CPU time limit" <<<"$out" &&
		ok "$u: --limit cpu_s=1 ends a busy loop (152, SIGXCPU), said" ||
		notok "$u: --limit cpu_s=1 ends a busy loop (152), said" "rc=$rc $out"
	out=$(sbx "$sb" run --limit open_files=20 -- sh -c 'ulimit -n' 2>&1); rc=$?
	[ $rc = 0 ] && [ "$out" = 20 ] && ok "$u: --limit open_files=20 is the step's rlimit" ||
		notok "$u: --limit open_files=20" "rc=$rc $out"
	rm -f "$w/work/ran"
	for l in memory=1G tasks=100 output=1M tmp=1G; do
		out=$(sbx "$sb" run --limit $l -- touch ran 2>&1); rc=$?
		if [ $rc = 125 ] && grep -q "the ${l%%=*} limit cannot be enforced by the Seatbelt backend" <<<"$out" &&
			[ ! -e "$w/work/ran" ]; then
			ok "$u: --limit $l: 125, the Seatbelt backend cannot enforce it; nothing ran"
		else
			notok "$u: --limit $l refused" "rc=$rc $out"
		fi
	done
	# the run report, in the Linux backends' keys
	rep() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
	rm -f "$w/out/r.json"
	out=$(sbx "$sb" run --report "$w/out/r.json" --timeout 5 -- sh -c 'exit 3' 2>&1); rc=$?
	if [ $rc = 3 ] && [ "$(rep "$w/out/r.json" '(d["started"], d["exit_code"], d["status"], d["backend"], d["timed_out"], d["denials"])')" = "(True, 3, 3, 'seatbelt', False, None)" ]; then
		ok "$u: --report: started, the exit code and status, the backend, no denials recorded"
	else
		notok "$u: --report of a run" "rc=$rc $out" "$(cat "$w/out/r.json" 2>&1 | head -20)"
	fi
	out=$(sbx "$sb" run --report "$w/out/r.json" -- no-such-command-xyz 2>&1); rc=$?
	[ $rc = 127 ] && [ "$(rep "$w/out/r.json" '(d["started"], d["exit_code"])')" = "(False, 127)" ] &&
		ok "$u: --report of a command not found: not started, 127" ||
		notok "$u: --report of a command not found" "rc=$rc $out"
	out=$(sbx "$sb" run --report "$w/out/r.json" --limit memory=1G -- touch ran 2>&1); rc=$?
	[ $rc = 125 ] && [ ! -e "$w/work/ran" ] &&
		[ "$(rep "$w/out/r.json" '(d["started"], d["exit_code"], d["error"]["kind"])')" = "(False, 125, 'sandbox_unavailable')" ] &&
		ok "$u: --report of a refused limit: 125 with the error, nothing ran" ||
		notok "$u: --report of a refused limit" "rc=$rc $out"
	rm -f "$w/out/r.json"
	out=$(sbx "$sb" run --report "$w/out/r.json" --write "$w/missing-folder" -- touch ran 2>&1); rc=$?
	[ $rc = 125 ] && [ ! -e "$w/work/ran" ] &&
		[ "$(rep "$w/out/r.json" '(d["started"], d["exit_code"], d["error"]["kind"])')" = "(False, 125, 'usage')" ] &&
		ok "$u: --report of a policy refused before the run (a missing write path): 125 with the error" ||
		notok "$u: --report of a policy refused before the run" "rc=$rc $out"
	ln -sfn "$w/out" "$w/work/rlink"
	out=$(sbx "$sb" run --report "$w/work/rlink/r2.json" -- touch ran 2>&1); rc=$?
	[ $rc = 125 ] && grep -q "symlink in a write grant" <<<"$out" && [ ! -e "$w/out/r2.json" ] &&
		[ ! -e "$w/work/ran" ] &&
		ok "$u: --report through a symlink in a write grant: 125, nothing written or run" ||
		notok "$u: --report through a planted symlink refused" "rc=$rc $out"
	rm -f "$w/work/rlink"
	out=$(sbx "$sb" run --backend landlock -- touch ran 2>&1); rc=$?
	[ $rc = 125 ] && grep -q "Linux's" <<<"$out" && [ ! -e "$w/work/ran" ] &&
		ok "$u: --backend landlock in the portable build: 125, nothing ran" ||
		notok "$u: --backend landlock refused" "rc=$rc $out"
	out=$(sbx "$linux" run --backend seatbelt -- touch ran 2>&1); rc=$?
	[ $rc = 125 ] && grep -q "macOS's" <<<"$out" && [ ! -e "$w/work/ran" ] &&
		ok "$u: --backend seatbelt in the Linux build: 125 naming policy --format sbpl" ||
		notok "$u: --backend seatbelt on Linux refused" "rc=$rc $out"
	out=$(sbx "$sb" run --explain -- true 2>&1); rc=$?
	[ $rc = 0 ] && grep -q "unified log" <<<"$out" && ok "$u: --explain says where the denials are" ||
		notok "$u: --explain says where the denials are" "rc=$rc $out"
	# network by name: the proxy on loopback, the profile's one way out (the stand-in
	# enforces nothing: what holds the step to that port on a Mac is the profile)
	local pport
	rm -f "$w/out/h.json" "$stage/profiles/last.$id"
	out=$(sbx "$sb" run --report "$w/out/h.json" --net "host:127.0.0.1:$web" -- sh -c \
		'curl -sS -o /dev/null -w "%{http_code} " "http://127.0.0.1:$1/"; echo "${HTTP_PROXY##*:}"' \
		sh "$web" 2>&1); rc=$?
	pport=${out##* }
	if [ $rc = 0 ] && [ "${out%% *}" = 200 ] &&
		[ "$(grep -c 'network-outbound (remote tcp' "$stage/profiles/last.$id")" = 1 ] &&
		grep -qx "(allow network-outbound (remote tcp \"localhost:$pport\"))" "$stage/profiles/last.$id" &&
		! grep -q 'remote ip\|dnssd' "$stage/profiles/last.$id" &&
		[ "$(rep "$w/out/h.json" '[(h["host"], h["port"]) for h in d["hosts"]["reached"]]')" = "[('127.0.0.1', $web)]" ]; then
		ok "$u: hosts: a listed host through the proxy (200), the profile's one TCP rule its port, the report names the host"
	else
		notok "$u: hosts: a listed host through the proxy" "rc=$rc $out" "$(grep -n network "$stage/profiles/last.$id")"
	fi
	if ! curl -sS -o /dev/null --max-time 5 "http://127.0.0.1:$pport/" 2>/dev/null; then
		ok "$u: hosts: the proxy is gone with the step"
	else
		notok "$u: hosts: the proxy is gone with the step" "port $pport still answers"
	fi
	out=$(sbx "$sb" run --explain --net host:files.example.org -- \
		curl -sS -o /dev/null -w "%{http_code}\n" "http://127.0.0.1:$web/" 2>&1); rc=$?
	if [ $rc = 0 ] && grep -qx 403 <<<"$out" &&
		grep -q "explain: the proxy refused 127.0.0.1:$web (http) at 127.0.0.1: ip_literal" <<<"$out"; then
		ok "$u: hosts: an unlisted host refused by the proxy (403), --explain names it"
	else
		notok "$u: hosts: an unlisted host refused by the proxy" "rc=$rc $out"
	fi
	out=$(sbx "$sb" run --net "host:127.0.0.1:$web" -- sh -c \
		'curl -sS -o /dev/null -w "%{http_code}" -x "http://127.0.0.1:${HTTP_PROXY##*:}" "http://127.0.0.1:$1/"' \
		sh "$web" 2>&1); rc=$?
	[ $rc = 0 ] && [ "$out" = 407 ] &&
		ok "$u: hosts: the proxy without the run's secret: 407" ||
		notok "$u: hosts: the proxy without the run's secret: 407" "rc=$rc $out"

	out=$(sbx "$sb" learn -- true 2>&1); rc=$?
	[ $rc = 125 ] && grep -q "not in this build" <<<"$out" && ok "$u: learn: 125, not in this build" ||
		notok "$u: learn refused" "rc=$rc $out"
}

# a web server on loopback, for the hosts runs
python3 -c 'import http.server, sys
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
print(s.server_address[1], flush=True)
sys.stderr = open("/dev/null", "w")
s.serve_forever()' >"$stage/web.port" &
web_pid=$!
trap 'kill "$web_pid" 2>/dev/null; rm -rf "$stage"' EXIT
for _ in $(seq 50); do [ -s "$stage/web.port" ] && break; sleep 0.1; done
web=$(cat "$stage/web.port")

run_as root root
if [ "$(id -u)" = 0 ]; then
	run_as nobody "uid 65534"
else
	echo "skip - the Seatbelt launcher as uid 65534: needs root to switch user"
fi
