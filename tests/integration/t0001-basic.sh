#!/bin/bash
# t0001: the command line and the exit status contract.
. "$(dirname "$0")/lib.sh"

run_sb --version
[ "$RC" = 0 ] && echo "$OUT" | grep -q '^stepbox [0-9]' && ok "--version" || notok "--version"
run_sb --help
[ "$RC" = 0 ] && echo "$OUT" | grep -q 'stepbox run' && ok "--help" || notok "--help"
run_sb run -- echo hello
[ "$RC" = 0 ] && [ "$OUT" = hello ] && ok "run echo" || notok "run echo" "rc=$RC out=$OUT"

expect "own exit status" 3 -- run -- sh -c 'exit 3'
expect "killed by SIGTERM is 143" 143 -- run -- sh -c 'kill -TERM $$'
expect "killed by SIGKILL is 137" 137 -- run -- sh -c 'kill -KILL $$'
expect "not found is 127" 127 "command not found: 'no-such-command'" -- run -- no-such-command
printf '#!/bin/sh\necho hi\n' >"$T/w/noexec"
chmod 644 "$T/w/noexec"
expect "not executable is 126" 126 "Permission denied" -- run -- ./noexec
printf '#!/nonexistent/interp\n' >"$T/w/badinterp"
chmod 755 "$T/w/badinterp"
expect "missing interpreter is 127" 127 "interpreter '/nonexistent/interp'" -- run -- ./badinterp

expect "no command is 125" 125 "no command given" -- run
expect "unknown option is 125" 125 "unknown or incomplete option" -- run --bogus -- true
expect "unknown subcommand is 125" 125 "unknown command" -- frobnicate
expect "bad timeout is 125" 125 "--timeout" -- run --timeout 0 -- true
expect "bad --net mode is 125" 125 "unknown network mode" -- run --net some -- true
expect "bad --net port is 125" 125 "from 1 to 65535" -- run --net tcp:70000 -- true
expect "unknown backend" 125 "unknown backend" -- run --backend docker -- true
expect "--consume without --policy" 125 "--consume needs" -- run --consume -- true
expect "backend none says so loudly" 0 "WITHOUT a filesystem sandbox" -- run --backend none -- true
expect "policy takes no command" 125 "takes no command" -- policy -- true

# arguments reach the command untouched, including ones that look like flags
run_sb run -- printf '%s|' -r --write 'a b' ''
[ "$OUT" = "-r|--write|a b||" ] && ok "argv passed verbatim" || notok "argv passed verbatim" "got $OUT"
# standard input reaches the command
out=$(echo piped | "$SB" run -- cat 2>/dev/null)
[ "$out" = piped ] && ok "stdin passed" || notok "stdin passed" "got $out"

# command-line conventions (issue 12)
for c in run learn check policy env guide doctor; do
	"$STEPBOX" "$c" --help >"$T/out/help" 2>&1
	if [ $? = 0 ] && head -1 "$T/out/help" | grep -q "^usage: stepbox $c"; then :; else
		notok "$c --help prints its own usage" "$(head -2 "$T/out/help")"
		continue
	fi
	ok "$c --help prints its own usage"
done
"$STEPBOX" -V >"$T/out/v" && grep -q "^stepbox [0-9]" "$T/out/v" && grep -q "^backends:" "$T/out/v" &&
	ok "-V: the version and what is built in" || notok "-V: the version and what is built in" "$(cat "$T/out/v")"
"$STEPBOX" --help | grep -q "SANDBOX_EXTRA_SYSTEM_PATHS" && "$STEPBOX" --help | grep -q "STEPBOX_LANDLOCK_ABI" &&
	ok "--help lists the environment variables stepbox reads" || notok "--help lists the environment variables stepbox reads"
expect "check: an unknown argument is an error" 125 "check takes no arguments" -- check --read /tmp
"$STEPBOX" check --json | python3 -c 'import json,sys; assert json.load(sys.stdin)["version"] == 1' &&
	ok "check --json carries a version" || notok "check --json carries a version"
run_sb env --env SBX=1 --json
echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["version"] == 1 and d["env"]["SBX"] == "1" and "dropped" in d' &&
	ok "env --json: an object of the variables, with a version" || notok "env --json: an object of the variables, with a version" "$OUT"
"$SB" env --env 'SBX=two words' -0 | python3 -c 'import sys; e=sys.stdin.buffer.read().split(b"\0"); assert b"SBX=two words" in e and e[-1] == b""' &&
	ok "env -0: NUL-separated" || notok "env -0: NUL-separated"
