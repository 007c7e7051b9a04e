#!/bin/bash
# t0070: older kernels played by capping the ABI (STEPBOX_LANDLOCK_ABI).
. "$(dirname "$0")/lib.sh"
if [ "$BACKEND" != landlock ]; then
	skip "Landlock ABI caps" "landlock backend only"
	exit 0
fi

kernel=$("$SB" check --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernel_landlock_abi"])')
mkdir -p "$T/data" "$T/w/a" "$T/w/b"
for cap in 1 3 5; do
	if [ "$kernel" -lt "$cap" ]; then skip "ABI $cap" "kernel ABI $kernel"; continue; fi
	export STEPBOX_LANDLOCK_ABI=$cap
	got=$("$SB" check --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["landlock_abi"], ",".join(d["missing"]))')
	case $cap in
	1) want="1 refer,truncate,tcp,ioctl-dev,scope,audit-log,tsync,unix-path" ;;
	3) want="3 tcp,ioctl-dev,scope,audit-log,tsync,unix-path" ;;
	5) want="5 scope,audit-log,tsync,unix-path" ;;
	esac
	[ "$got" = "$want" ] && ok "ABI $cap: check says what is missing" || notok "ABI $cap: check says what is missing" "got $got"
	in_box "ABI $cap: write inside" 'echo x > f && cat f >/dev/null'
	denied "ABI $cap: read outside" "cat /root/.bashrc /etc/shadow '$HOME/.profile' 2>&1; ls '$HOME'"
	echo data >"$T/data/f"
	if [ "$cap" -ge 3 ]; then
		denied "ABI $cap: truncate of a read-only file refused" "truncate -s 0 '$T/data/f'" -r "$T/data"
	else
		# truncate(2) on a path needs no open for writing: only ABI 3 covers it
		run_sb run -r "$T/data" -- python3 -c "import os; os.truncate('$T/data/f', 0)"
		[ "$RC" = 0 ] && ok "ABI $cap: truncate(2) not enforced, as check says" || notok "ABI $cap: truncate(2) not enforced, as check says"
		denied "ABI $cap: opening a read-only file for writing still refused" "echo x >> '$T/data/f'" -r "$T/data"
	fi
	echo x >"$T/w/a/f"
	run_sb run -- python3 -c 'import os; os.rename("a/f", "b/f")'
	if [ "$cap" -ge 2 ]; then
		[ "$RC" = 0 ] && ok "ABI $cap: rename across folders in a write grant" || notok "ABI $cap: rename across folders in a write grant"
		mv "$T/w/b/f" "$T/w/a/f"
	else
		[ "$RC" != 0 ] && grep -q "Invalid cross-device link" "$T/out/err" && ok "ABI 1: rename across folders refused (EXDEV), as documented" ||
			notok "ABI 1: rename across folders refused (EXDEV), as documented"
		in_box "ABI 1: rename within one folder" 'mv a/f a/g && mv a/g a/f'
	fi
	if [ "$cap" -lt 6 ]; then
		sleep 60 &
		v=$!
		run_sb run -- kill -0 "$v"
		[ "$RC" = 0 ] && ok "ABI $cap: signals not scoped, as check says" || notok "ABI $cap: signals not scoped, as check says"
		kill "$v"
	fi
done
export STEPBOX_LANDLOCK_ABI=0
expect "ABI 0, --backend landlock: SANDBOX_UNAVAILABLE" 125 "SANDBOX_UNAVAILABLE: landlock: Landlock is capped" -- run --backend landlock -- true
grep -q "hint:.*mountns" "$T/out/err" && ok "ABI 0: the hint names mountns" || notok "ABI 0: the hint names mountns"
expect "ABI 0, --backend stacked: SANDBOX_UNAVAILABLE" 125 "SANDBOX_UNAVAILABLE: stacked: Landlock is capped" -- run --backend stacked -- true
# auto, not the backend this pass forces
"$STEPBOX" run --report "$T/auto.json" -- sh -c 'echo x > f' >"$T/out/out" 2>"$T/out/err"
RC=$?
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["backend"] == "mountns"' "$T/auto.json" && [ "$RC" = 0 ] &&
	ok "ABI 0: auto chooses mountns" || notok "ABI 0: auto chooses mountns" "rc=$RC"
"$SB" check --json | python3 -c '
import json,sys; d=json.load(sys.stdin)
assert d["auto_backend"] == "mountns" and d["namespaces"], d
assert not d["backends"]["stacked"]["available"] and not d["backends"]["landlock"]["available"]
assert d["backends"]["mountns"]["available"] and "tcp" in d["auto_missing"]' &&
	ok "ABI 0: check says auto picks mountns" || notok "ABI 0: check says auto picks mountns"
export STEPBOX_LANDLOCK_ABI=x
expect "a bad STEPBOX_LANDLOCK_ABI is 125" 125 "STEPBOX_LANDLOCK_ABI" -- run -- true
unset STEPBOX_LANDLOCK_ABI
