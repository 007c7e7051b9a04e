#!/bin/bash
# t0140: --explain, --report's denials and learn: what the sandbox denied,
# from evidence, told apart from ordinary permission errors.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/secret" "$T/tools/bin" "$T/w/sub"
echo topsecret >"$T/secret/file"
printf '#!/bin/sh\necho tool\n' >"$T/tools/bin/tool"
chmod 755 "$T/tools/bin/tool"
echo mine >"$T/w/mine"

# $1: name, $2: operation, $3: path; the explanation must list it as the sandbox's
listed() {
	awk '/the sandbox denied/{s=1; next} /came from file permissions/{s=0} s' "$T/out/err" |
		grep -F -- "] $2 '$3'" | grep -qF "outside every" && ok "$1" || notok "$1" "op $2 path $3"
}
run_sb run --explain -- sh -c "
cat '$T/secret/file'
echo x > '$T/secret/new'
mkdir '$T/secret/dir'
python3 -c 'import os; os.rename(\"mine\", \"$T/secret/moved\")'
'$T/tools/bin/tool'
true"
listed "explain: a denied read" read "$T/secret/file"
listed "explain: a denied write (create)" create "$T/secret/new"
listed "explain: a denied mkdir" create "$T/secret/dir"
listed "explain: a denied rename, by its destination" rename "$T/secret/moved"
listed "explain: a denied exec" execute "$T/tools/bin/tool"
grep -q "grant with --write $T/secret" "$T/out/err" && grep -q "grant with --read $T/tools/bin" "$T/out/err" &&
	ok "explain: each names the grant that would allow it" || notok "explain: each names the grant that would allow it"
run_sb run --explain -- sh -c "sh -c 'sh -c \"cat $T/secret/file\"'"
grep -q "cat\[[0-9]*\] read '$T/secret/file'" "$T/out/err" && ok "explain: a grandchild's denial names the program" || notok "explain: a grandchild's denial names the program"

# lookups: under the namespaces an ungranted path is absent, so a shell's
# PATH search (stat), ls and os.path.exists fail with ENOENT, not EACCES;
# under Landlock alone the exec or the open is refused instead. Either way
# the explanation names the path, and its hint, followed, gets the step past.
run_sb run --explain -- sh -c "PATH='$T/tools/bin':/usr/bin:/bin; tool"
[ "$RC" = 127 ] || [ "$RC" = 126 ] && awk '/the sandbox denied/{s=1; next} s' "$T/out/err" |
	grep -E "\] (look up|execute) '$T/tools/bin/tool'" | grep -q "outside every" &&
	ok "explain: a tool missed by sh -c's PATH search is named" ||
	notok "explain: a tool missed by sh -c's PATH search is named" "rc=$RC" "$(cat "$T/out/err")"
hint=$(sed -n "s/.*'$(printf %s "$T" | sed 's/[.[\*^$/]/\\&/g')\/tools\/bin\/tool'.*grant with \(--read [^ ]*\).*/\1/p" "$T/out/err" | head -1)
run_sb run --explain $hint -- sh -c "PATH='$T/tools/bin':/usr/bin:/bin; tool"
[ -n "$hint" ] && [ "$RC" = 0 ] && [ "$OUT" = tool ] && grep -q "the sandbox denied nothing" "$T/out/err" &&
	ok "explain: the PATH search's hint, followed, runs the tool" ||
	notok "explain: the PATH search's hint, followed, runs the tool" "hint '$hint' rc=$RC" "$OUT" "$(cat "$T/out/err")"
run_sb run --explain -- ls "$T/secret"
[ "$RC" != 0 ] && awk '/the sandbox denied/{s=1; next} s' "$T/out/err" |
	grep -E "\] (look up|read) '$T/secret'" | grep -q "grant with --read $T/secret" &&
	ok "explain: ls of an ungranted folder is named" ||
	notok "explain: ls of an ungranted folder is named" "rc=$RC" "$(cat "$T/out/err")"
run_sb run --explain -- python3 -c "import os; print(os.path.exists('$T/secret/file'))"
if [ "$BACKEND" = landlock ]; then
	# Landlock does not hide a path from stat: nothing to explain
	[ "$OUT" = True ] && grep -q "the sandbox denied nothing" "$T/out/err" &&
		ok "explain: os.path.exists under Landlock alone sees the file, nothing denied" ||
		notok "explain: os.path.exists under Landlock alone sees the file, nothing denied" "$OUT" "$(cat "$T/out/err")"
else
	[ "$OUT" = False ] && grep -q "look up '$T/secret/file'" "$T/out/err" &&
		ok "explain: os.path.exists of an ungranted file is named" ||
		notok "explain: os.path.exists of an ungranted file is named" "$OUT" "$(cat "$T/out/err")"
fi
# a miss of a path that does not exist outside either is no denial (control:
# the same shell's miss of an existing path above was one)
run_sb run --explain -- sh -c "test -e '$T/no-such/x' || ls '$T/no-such' 2>/dev/null; PATH='$T/no-such':/usr/bin:/bin; true"
grep -q "the sandbox denied nothing" "$T/out/err" &&
	ok "explain: lookups of paths that exist nowhere are no denial" ||
	notok "explain: lookups of paths that exist nowhere are no denial" "$(cat "$T/out/err")"

# a PATH folder tried before the one that had the command (a HOME tool's
# shim folder ahead of /usr/bin) is no cause: listed apart, never the fix
mkdir -p "$T/shims"
printf '#!/bin/sh\necho shim\n' >"$T/shims/cat"
chmod 755 "$T/shims/cat"
run_sb run --explain --report "$T/moot.json" -- sh -c "PATH='$T/shims':/usr/bin:/bin; cat /etc/os-release >/dev/null && echo ran"
[ "$RC" = 0 ] && [ "$OUT" = ran ] && grep -q "the sandbox denied nothing" "$T/out/err" &&
	grep -A1 "then ran from another folder" "$T/out/err" | grep -q "'$T/shims/cat': not needed" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["denials"]; assert all(x.get("moot") and "grant" not in x for x in d if "/shims/" in x.get("path", "")), d' "$T/moot.json" &&
	ok "explain: a PATH miss before the folder that had the command is not the cause" ||
	notok "explain: a PATH miss before the folder that had the command is not the cause" "rc=$RC $OUT" "$(cat "$T/out/err")"

# a tool installed in HOME (a pyenv-like shim that runs more of its tree):
# named as such, with the grant of its whole installation, and that grant,
# followed, runs it; never --home-file of the shim
mkdir -p "$HOME/.pyenv/shims" "$HOME/.pyenv/libexec"
printf '#!/bin/sh\nexec %s/.pyenv/libexec/pyenv exec "$@"\n' "$HOME" >"$HOME/.pyenv/shims/pytool"
printf '#!/bin/sh\necho pyenv-ran\n' >"$HOME/.pyenv/libexec/pyenv"
chmod 755 "$HOME/.pyenv/shims/pytool" "$HOME/.pyenv/libexec/pyenv"
run_sb run --explain -- sh -c "'$HOME/.pyenv/shims/pytool'"
grep -q "a tool installed in HOME by pyenv.*--read $HOME/.pyenv," "$T/out/err" && ! grep -q "home-file" "$T/out/err" &&
	ok "explain: a shim of a tool in HOME names its whole installation" ||
	notok "explain: a shim of a tool in HOME names its whole installation" "$(cat "$T/out/err")"
# the launch's own refusal (no shell between) gives the same judgment
run_sb run -- "$HOME/.pyenv/shims/pytool"
grep -q "^hint: a tool installed in HOME by pyenv.*--read $HOME/.pyenv," "$T/out/err" &&
	! grep -q -- "--read $HOME/.pyenv/shims" "$T/out/err" &&
	ok "explain: the launch's refusal of a HOME tool's shim words it as --explain does" ||
	notok "explain: the launch's refusal of a HOME tool's shim words it as --explain does" "$(cat "$T/out/err")"
run_sb run --explain --read "$HOME/.pyenv" -- sh -c "'$HOME/.pyenv/shims/pytool'"
[ "$RC" = 0 ] && [ "$OUT" = pyenv-ran ] &&
	ok "explain: the HOME tool's grant, followed, runs it" ||
	notok "explain: the HOME tool's grant, followed, runs it" "rc=$RC $OUT" "$(cat "$T/out/err")"
# keys: named, never proposed (not by --explain, the report, nor learn)
mkdir -p "$HOME/.ssh"
echo key >"$HOME/.ssh/id_ed25519"
run_sb run --explain --report "$T/keys.json" -- cat "$HOME/.ssh/id_ed25519"
grep -q "keys or credentials, which stepbox never proposes" "$T/out/err" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["denials"]; assert d and all("grant" not in x for x in d), d' "$T/keys.json" &&
	ok "explain: a key file is named, never proposed as a grant" ||
	notok "explain: a key file is named, never proposed as a grant" "$(cat "$T/out/err")"
run_sb learn -- cat "$HOME/.ssh/id_ed25519"
! grep -q "id_ed25519" "$T/out/out" && grep -q "not proposed.*holds keys" "$T/out/err" &&
	ok "learn: a key file is not proposed" || notok "learn: a key file is not proposed" "$OUT" "$(cat "$T/out/err")"

run_sb run --explain -- sh -c 'echo ok > fine'
grep -q "the sandbox denied nothing" "$T/out/err" && ok "explain: nothing denied says so" || notok "explain: nothing denied says so"

# ranked by cause: when the command fails, the last denial before it comes
# first (here the exec, after a read); when it succeeds, or fails with no
# denial of an exec (127 of a name that exists nowhere), none is the cause
run_sb run --explain --report "$T/cause.json" -- sh -c "cat '$T/secret/file'; '$T/tools/bin/tool'"
first=$(awk '/the sandbox denied/{getline; print; exit}' "$T/out/err")
case "$RC:$first" in
12[67]:*"execute '$T/tools/bin/tool'"*)
	grep -q "the likely cause" "$T/out/err" &&
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["denials"]; c=[x["path"] for x in d if x.get("cause")]; assert c == [sys.argv[2]], d' "$T/cause.json" "$T/tools/bin/tool" &&
		ok "explain: the denial that made the command fail comes first, and the report marks it" ||
		notok "explain: the denial that made the command fail comes first, and the report marks it" "$(cat "$T/out/err")" ;;
*) notok "explain: the denial that made the command fail comes first, and the report marks it" "rc=$RC first: $first" "$(cat "$T/out/err")" ;;
esac
run_sb run --explain --report "$T/nocause.json" -- sh -c "cat '$T/secret/file'; nosuchtool-anywhere"
run_sb2=$RC
ncause=$(python3 -c 'import json,sys; print(sum(1 for x in json.load(open(sys.argv[1]))["denials"] if x.get("cause")))' "$T/nocause.json")
run_sb run --explain -- sh -c "cat '$T/secret/file'; true"
[ "$run_sb2" = 127 ] && [ "$ncause" = 0 ] && [ "$RC" = 0 ] && ! grep -q "likely cause" "$T/out/err" &&
	grep -q "the sandbox denied 1 access" "$T/out/err" &&
	ok "explain: a denial is not named the cause of a 127 with no exec denied, nor of a success" ||
	notok "explain: a denial is not named the cause of a 127 with no exec denied, nor of a success" "rc=$run_sb2 causes=$ncause rc=$RC" "$(cat "$T/out/err")"

# network refusals, every mode: each socket and each connect the mode refuses
# is named with what would allow it (nothing is sent: no network in --net
# none's namespace or under its filter, 192.0.2.1 on a port not listed is
# refused before any packet, and under names a direct connect is refused).
# The UNIX socket in the same program is the positive control.
netprog='
import socket, sys
u = socket.socket(socket.AF_UNIX); print("unix-ok")
for fam, typ, addr in ((socket.AF_INET, socket.SOCK_DGRAM, ("192.0.2.1", 53)),
                       (socket.AF_INET, socket.SOCK_STREAM, ("192.0.2.1", 81))):
    try:
        s = socket.socket(fam, typ); s.settimeout(3); s.connect(addr); print("reached", addr)
    except OSError as e:
        print("refused", e.errno)
'
run_sb run --net none --explain --report "$T/net.json" -- python3 -c "$netprog"
denied() { awk '/the sandbox denied/{s=1; next} s' "$T/out/err" | grep -q "$1"; }
[ "$(echo "$OUT" | head -1)" = unix-ok ] && ! grep -q reached "$T/out/out" &&
	denied "open a socket (IPv4 UDP): the network is off (--net none)" &&
	denied "open a socket (IPv4 TCP): the network is off" &&
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["denials"]; assert {x.get("socket") for x in d} == {"IPv4 UDP", "IPv4 TCP"} and all(x["sandbox"] and "grant" not in x and x["advice"] for x in d), d' "$T/net.json" &&
	ok "explain: --net none names each socket it refused" ||
	notok "explain: --net none names each socket it refused" "$OUT" "$(cat "$T/out/err")"
if [ "$BACKEND" = mountns ]; then
	skip "explain: a port list names the UDP socket and the port it refused" "port lists need Landlock"
else
run_sb run --net tcp:443 --explain -- python3 -c "$netprog"
[ "$(echo "$OUT" | head -1)" = unix-ok ] && ! grep -q reached "$T/out/out" &&
	denied "open a socket (IPv4 UDP): a port list allows TCP streams alone" &&
	denied "connect tcp port 81: not allowed by the network policy; allow with --net tcp:81" &&
	ok "explain: a port list names the UDP socket and the port it refused" ||
	notok "explain: a port list names the UDP socket and the port it refused" "$OUT" "$(cat "$T/out/err")"
fi
# (under the namespaces a UDP socket is the step's, in its own network
# namespace where stepbox's resolver listens: its connect out is what is named)
udp_named="open a socket (IPv4 UDP): under network by name only TCP leaves"
[ "$BACKEND" = landlock ] || udp_named="reach '192.0.2.1' port 53: a connect around the proxy"
run_sb run --net host:example.org --explain -- python3 -c "$netprog"
[ "$(echo "$OUT" | head -1)" = unix-ok ] && ! grep -q reached "$T/out/out" &&
	denied "$udp_named" &&
	denied "reach '192.0.2.1' port 81: a connect around the proxy" &&
	ok "explain: network by name names the UDP socket and the connect around the proxy" ||
	notok "explain: network by name names the UDP socket and the connect around the proxy" "$OUT" "$(cat "$T/out/err")"

# the tracer serves stops that never end (four threads opening in a loop)
# and the wait loop still gets to the timeout: 124, in about its time
start=$(date +%s)
run_sb run --explain --timeout 2 -- python3 -c "
import os, threading
def spin():
    while True: os.close(os.open('/etc/hostname', os.O_RDONLY))
for _ in range(4): threading.Thread(target=spin, daemon=True).start()
spin()"
took=$(( $(date +%s) - start ))
[ "$RC" = 124 ] && [ "$took" -lt 10 ] && ok "explain: a step that stops without end still times out" ||
	notok "explain: a step that stops without end still times out" "rc=$RC after ${took}s" "$ERR"

# the tracer lets a read run without waiting for its result when the name
# is in a folder just read through no symlink and is itself no symlink: a
# link there, to a file or a folder, is still followed to the denial
mkdir -p "$T/w/near/real"
echo x >"$T/w/near/a"
ln -s "$T/secret/file" "$T/w/near/to-file"
ln -s "$T/secret" "$T/w/near/to-dir"
run_sb run --explain -- python3 -c "
import os
for name in ('a', 'to-file'):
    try: open('$T/w/near/' + name).close(); print('read', name)
    except OSError as e: print('refused', name, e.errno)
for name in ('real', 'to-dir'):
    try: os.listdir('$T/w/near/' + name); print('listed', name)
    except OSError as e: print('refused', name, e.errno)
"
if grep -q "^read a$" "$T/out/out" && grep -q "^listed real$" "$T/out/out" &&
	grep -q "^refused to-file" "$T/out/out" && grep -q "^refused to-dir" "$T/out/out"; then
	listed "explain: a link beside a file just read is followed to the denial" read "$T/secret/file"
	listed "explain: a link beside a folder just listed is followed to the denial" read "$T/secret"
else
	notok "explain: links beside a file and a folder just read (controls)" "$(cat "$T/out/out")"
fi

# ... nor can the folder cache be led around: a name spelled with '..' out
# of a folder just read, and a folder just read then swapped for a link to
# an ungranted one, are each followed to the denial
rm -rf "$T/w/swap" "$T/w/swap.old"
mkdir -p "$T/w/swap"
echo x >"$T/w/swap/f"
echo x >"$T/secret/f"
run_sb run --explain -- python3 -c "
import os
open('$T/w/mine').close()
for what, f in (('dotdot', lambda: os.listdir('$T/w/..')),
                ('up', lambda: os.listdir('$T/w/../secret')),
                ('up-file', lambda: open('$T/w/../secret/file').close())):
    try: f(); print(what, 'allowed')
    except OSError as e: print(what, 'refused', e.errno)
open('$T/w/swap/f').close(); print('swap read')
os.rename('$T/w/swap', '$T/w/swap.old')
os.symlink('$T/secret', '$T/w/swap')
try: open('$T/w/swap/f').close(); print('swapped allowed')
except OSError as e: print('swapped refused', e.errno)
"
if grep -q "^up refused" "$T/out/out" && grep -q "^up-file refused" "$T/out/out" &&
	grep -q "^swap read$" "$T/out/out" && grep -q "^swapped refused" "$T/out/out"; then
	listed "explain: a name with '..' out of a folder just read is followed to the denial" read "$T/secret/file"
	listed "explain: a folder just read, then swapped for a link, is followed to the denial" read "$T/secret/f"
else
	notok "explain: '..' and a swapped folder (controls)" "$(cat "$T/out/out")"
fi

# a plain permission error inside a granted folder is not the sandbox's
if is_root; then
	mkdir -p "$T/priv"
	echo x >"$T/priv/secret"
	chown 65534:65534 "$T/priv/secret"
	chmod 600 "$T/priv/secret"
	priv="$T/priv"
else
	priv="$FIXTURES/private"
fi
run_sb run --explain -r "$priv" -- cat "$priv/secret"
if [ "$RC" != 0 ] && grep -q "came from file permissions, not the sandbox" "$T/out/err" &&
	! awk '/the sandbox denied/{s=1; next} /came from file permissions/{s=0} s' "$T/out/err" | grep -q "$priv/secret"; then
	ok "explain: a file's own permissions are not reported as a sandbox denial"
else notok "explain: a file's own permissions are not reported as a sandbox denial"; fi

# connect, against a listener on loopback
if [ "$BACKEND" != mountns ] && [ "$(abi)" -ge 4 ]; then
	python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); open("'"$T"'/port","w").write(str(s.getsockname()[1])); time.sleep(60)' &
	BG_PIDS="$BG_PIDS $!"
	for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
	P=$(cat "$T/port")
	run_sb run --explain --net tcp:1 -- python3 -c "import socket; socket.socket().connect(('127.0.0.1', $P))"
	grep -q "connect tcp port $P: not allowed by the network policy; allow with --net tcp:$P" "$T/out/err" &&
		ok "explain: a denied connect names the port" || notok "explain: a denied connect names the port"
else
	skip "explain: a denied connect" "TCP port policies need the landlock backend and ABI 4"
fi

# the report carries the denials
run_sb run --explain --report "$T/r.json" -- cat "$T/secret/file"
python3 - "$T/r.json" "$T/secret/file" <<'PY' && ok "report: denials with program, pid, operation, path and grant" || notok "report: denials with program, pid, operation, path and grant"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["denials_source"] == "tracer" and d["exit_code"] == 1
x = [e for e in d["denials"] if e["sandbox"]]
assert x and x[0]["program"] == "cat" and x[0]["operation"] == "read"
assert x[0]["path"] == sys.argv[2] and x[0]["pid"] > 0
assert x[0]["grant"] == {"read_paths": sys.argv[2]}  # the file itself, the narrowest grant
PY
run_sb run --report "$T/r2.json" -- true
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["denials"] is None' "$T/r2.json" &&
	ok "report: no --explain, no denials claimed" || notok "report: no --explain, no denials claimed"

# learn: the fragment, merged into the policy, makes the same command succeed
cmd="cat '$T/secret/file'; echo x > '$T/secret/learned'; '$T/tools/bin/tool'"
run_sb learn -- sh -c "$cmd"
echo "$OUT" >"$T/fragment.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"] == 1 and d["read_paths"] and d["write_paths"]' "$T/fragment.json" &&
	ok "learn prints a policy fragment" || notok "learn prints a policy fragment" "$OUT"
[ ! -e "$T/secret/learned" ] && ok "learn applied nothing itself" || notok "learn applied nothing itself"
run_sb run -p "$T/fragment.json" -- sh -c "$cmd"
[ "$RC" = 0 ] && [ -e "$T/secret/learned" ] && ok "the learned fragment makes the command succeed" || notok "the learned fragment makes the command succeed" "rc=$RC"

# learn writes the whole policy: the one given merged with what it learned,
# the command's own output kept out of it, round after round until nothing new
mkdir -p "$T/lp" "$T/lh"
echo one >"$T/lp/a"
echo two >"$T/lp/b"
printf '[user]\n\tname = L\n' >"$T/lh/.gitconfig"
echo '{"version": 1, "read_paths": ["/usr/share/doc"], "env": {"set": {"KEEP": "1"}}}' >"$T/given.json"
lcmd="echo COMMAND-OUTPUT; cat '$T/lp/a' || exit 3; cat '$T/lp/b' || exit 4; cat \"\$HOME/.gitconfig\" >/dev/null || exit 5; cat /etc/shadow >/dev/null 2>&1; exit 0"
HOME="$T/lh" run_sb learn -p "$T/given.json" --rounds 5 -- sh -c "$lcmd"
if [ "$RC" = 0 ] && ! echo "$OUT" | grep -q COMMAND-OUTPUT && grep -q COMMAND-OUTPUT "$T/out/err" &&
	echo "$OUT" | python3 -c '
import json, sys
d = json.load(sys.stdin)
lp = sys.argv[1]
assert "/usr/share/doc" in d["read_paths"] and d["env"]["set"] == {"KEEP": "1"}, d
assert lp + "/a" in d["read_paths"] and lp + "/b" in d["read_paths"], d["read_paths"]
assert d["home_files"] == [".gitconfig"], d.get("home_files")
assert not any(p.startswith("/etc") for p in d["read_paths"]), d["read_paths"]
assert lp not in d["read_paths"], "the folder, not the files"
' "$T/lp"; then
	ok "learn --rounds: the given policy merged with the files denied round after round, HOME's as home_files, stdout only the policy"
else
	notok "learn --rounds: the given policy merged with the files denied round after round, HOME's as home_files, stdout only the policy" "rc=$RC" "$OUT" "$(tail -5 "$T/out/err")"
fi
if is_root; then
	grep -q "not proposed: /etc/shadow: hidden on purpose" "$T/out/err" && ok "learn never proposes a hidden /etc entry" ||
		notok "learn never proposes a hidden /etc entry" "$(grep learn: "$T/out/err")"
fi
HOME="$T/lh" run_sb learn --rounds 5 -o "$T/learned.json" -p "$T/given.json" -- sh -c "$lcmd"
HOME="$T/lh" run_sb run -p "$T/learned.json" -- sh -c "$lcmd"
[ "$RC" = 0 ] && ok "learn -o FILE: the learned policy runs the command" || notok "learn -o FILE: the learned policy runs the command" "rc=$RC" "$ERR"
mkdir -p "$T/keys"
echo k >"$T/keys/id_ed25519"
run_sb learn -- sh -c "touch '$T/keys/new'"
echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert sys.argv[1] not in d.get("write_paths", [])' "$T/keys" &&
	grep -q "not proposed: $T/keys: holds keys" "$T/out/err" && ok "learn never proposes a folder holding keys" ||
	notok "learn never proposes a folder holding keys" "$OUT" "$ERR"

# learn -o FILE in the step's write grant: a folder on the way swapped for a
# symlink by the step is not followed after it (the victim keeps its
# content); the same without the swap writes the file (control)
mkdir -p "$T/victim" "$T/w/lo" "$T/w/lo2"
echo orig >"$T/victim/p.json"
run_sb learn -o "$T/w/lo/p.json" -- sh -c "mv '$T/w/lo' '$T/w/lo.real' && ln -s '$T/victim' '$T/w/lo'"
[ "$RC" = 125 ] && [ "$(cat "$T/victim/p.json")" = orig ] && grep -q "write -o '$T/w/lo/p.json'" "$T/out/err" &&
	ok "learn -o: a symlink the step planted on the way is not followed" ||
	notok "learn -o: a symlink the step planted on the way is not followed" "rc=$RC" "$(cat "$T/victim/p.json")" "$ERR"
run_sb learn -o "$T/w/lo2/p.json" -- true
[ "$RC" = 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/w/lo2/p.json" &&
	ok "learn -o: the policy is written in the step's write grant (control)" ||
	notok "learn -o: the policy is written in the step's write grant (control)" "rc=$RC" "$ERR"

# learn --rounds applies what it learned unreviewed: never a write grant in a
# system folder's subfolder (cron.d, /usr/local/bin) or in HOME (start-up
# files, autostart), whose files the host runs; a folder of the test's is the
# control, learned and written in round 2
sysd=$(mktemp -d /var/tmp/stepbox-t0140.XXXXXX)
mkdir -p "$sysd/sub" "$T/lh3/.config/autostart" "$T/ctl"
chmod -R 777 "$sysd" "$T/lh3" "$T/ctl"
HOME="$T/lh3" run_sb learn --rounds 3 -- sh -c "echo x > '$T/ctl/f'; echo x > '$sysd/sub/planted'; echo x > '$T/lh3/.config/autostart/planted'; exit 0"
if [ -e "$T/ctl/f" ] && [ ! -e "$sysd/sub/planted" ] && [ ! -e "$T/lh3/.config/autostart/planted" ] &&
	grep -q "not proposed: $sysd/sub: a system folder" "$T/out/err" &&
	grep -q "not proposed: $T/lh3/.config/autostart: in HOME" "$T/out/err" &&
	echo "$OUT" | python3 -c '
import json, sys
w = json.load(sys.stdin).get("write_paths", [])
assert sys.argv[1] + "/ctl" in w, w
assert not any(p.startswith(sys.argv[2]) or p.startswith(sys.argv[3]) for p in w), w' "$T" "$sysd" "$T/lh3"; then
	ok "learn --rounds: never a write grant in a system subfolder or HOME (control: a folder of the test's, learned and written)"
else
	notok "learn --rounds: never a write grant in a system subfolder or HOME (control: a folder of the test's, learned and written)" \
		"rc=$RC" "$OUT" "$(grep -a "proposed\|learn" "$T/out/err" | head -5)" "$(ls -la "$sysd" "$T/ctl" 2>&1)"
fi
rm -rf "$sysd"

# a learned grant is the path the next round resolves, or nothing: a denied
# path spelled through symlinks too long to resolve on the host (ENAMETOOLONG)
# was learned raw, and round 2 resolved it, the links gone, to a folder no
# grant names (here $T/outside; in the attack, /etc/cron.d)
mkdir -p "$T/nc" "$T/outside"
echo keep >"$T/outside/probe"
chmod -R 777 "$T/nc" "$T/outside"
cat >"$T/nc/s.py" <<'PY'
import os, sys
w, target = os.getcwd(), sys.argv[1]
if not os.path.exists("round1"):
    os.makedirs("X", exist_ok=True)
    os.symlink("./" * 2000, "L2")
    os.symlink("L2/" + "./" * 1990 + "X", "L1")
    up = "../" * (w.count("/") + 1) + target.lstrip("/")
    p = os.path.dirname(w) + "/./" + os.path.basename(w) + "/L1/" + "./" * 1800 + up + "/new"
    try:
        open(p, "w")
    except OSError:
        pass
    os.unlink("L1"); os.unlink("L2"); os.mkdir("L1")
    open("round1", "w").close()
else:
    try:
        os.close(os.open(target + "/probe", os.O_WRONLY | os.O_APPEND)); print("WROTE")
    except OSError as e:
        print("refused", e.strerror)
PY
run_sb learn --rounds 2 -C "$T/nc" -- /usr/bin/python3 s.py "$T/outside"
# Where the supervisor makes the call (the live layer under Landlock alone)
# it resolves the spelled path as the kernel does and names the folder it
# reached: the canonical $T/outside, what a plain write there proposes too
# (and /etc/cron.d would be refused as a system folder, above). Either way
# nothing is proposed through the step's links, nor anything not canonical.
if echo "$OUT" | python3 -c '
import json, os, sys
w = json.load(sys.stdin)["write_paths"]
assert not any("L1" in p or "/./" in p or "/../" in p or os.path.realpath(p) != p for p in w), w
assert all(not p.startswith(sys.argv[1]) or p == sys.argv[1] for p in w), w' "$T/outside" &&
	if grep -q "not proposed: .*: not a canonical path" "$T/out/err"; then
		! grep -q WROTE "$T/out/err"
	else
		echo "$OUT" | grep -q "\"$T/outside\""
	fi; then
	ok "learn: a path that does not resolve on the host is never proposed (round 2 cannot write where it led)"
else
	notok "learn: a path that does not resolve on the host is never proposed (round 2 cannot write where it led)" \
		"$(grep -a "proposed\|WROTE\|refused" "$T/out/err" | cut -c1-200 | head -5)"
fi

# HOME is looked for in /etc/passwd too (HOME unset: root's /root), and a
# folder holding HOME, /opt and another user's home are never learned for
# writing; the workdir's own folders are (control, above)
mkdir -p "$T/lh4/home" && chmod -R 777 "$T/lh4"
# (under the namespaces $T lies in the private /tmp: the write lands there)
HOME="$T/lh4/home" run_sb learn -- sh -c "echo x > '$T/lh4/sibling'; exit 0"
echo "$OUT" | python3 -c 'import json,sys; w=json.load(sys.stdin)["write_paths"]; assert sys.argv[1] not in w, w' "$T/lh4" &&
	{ [ "$BACKEND" != landlock ] || grep -q "not proposed: $T/lh4: holds HOME ($T/lh4/home)" "$T/out/err"; } &&
	ok "learn: a folder that holds HOME is never proposed for writing" ||
	notok "learn: a folder that holds HOME is never proposed for writing" "$(grep -a proposed "$T/out/err")"
if is_root; then
	env -u HOME "$SB" learn -- sh -c "mkdir /root/.stepbox-t0140-probe; echo x > /opt/stepbox-t0140-probe; echo x > /home/stepbox-t0140-probe; exit 0" >"$T/out/out" 2>"$T/out/err"
	grep -q "not proposed: /root: holds HOME (/root)\|not proposed: /root: HOME itself" "$T/out/err" &&
		grep -q "not proposed: /opt: in /opt" "$T/out/err" && grep -q "not proposed: /home: \(in a user's home folder\|holds HOME\)" "$T/out/err" &&
		[ ! -e /root/.stepbox-t0140-probe ] &&
		ok "learn, HOME unset: root's home from /etc/passwd, /opt and /home are never proposed for writing" ||
		notok "learn, HOME unset: root's home from /etc/passwd, /opt and /home are never proposed for writing" "$(grep -a proposed "$T/out/err")"
fi

# the two sources: the kernel's audit records (root, ABI 7, audit on), else the tracer
audit_enabled() {
	python3 -c '
import socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9); s.bind((0, 0))
s.send(struct.pack("IHHII", 16, 1000, 1, 1, 0))
for _ in range(3):
    d = s.recv(8192)
    if struct.unpack("H", d[4:6])[0] == 1000:
        print(struct.unpack("8I", d[16:48])[1]); break'
}
src() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["denials_source"])' "$1"; }
if [ "$BACKEND" != landlock ]; then
	skip "explain from audit records" "under the namespaces ungranted paths are absent: the tracer is the source"
elif ! is_root; then
	run_sb run --explain --report "$T/u.json" -- cat "$T/secret/file"
	grep -q "audit records need root; using the tracer" "$T/out/err" && [ "$(src "$T/u.json")" = tracer ] &&
		ok "unprivileged: the tracer, and why" || notok "unprivileged: the tracer, and why"
elif [ "$(abi)" -lt 7 ]; then
	skip "explain from audit records" "Landlock ABI < 7 logs no denials"
else
	before=$(audit_enabled)
	if [ "$before" = 0 ]; then
		run_sb run --explain --report "$T/off.json" -- cat "$T/secret/file"
		grep -q "audit is disabled here (add --enable-audit" "$T/out/err" && [ "$(src "$T/off.json")" = tracer ] &&
			grep -q "read '$T/secret/file'" "$T/out/err" &&
			ok "root, audit off: says so and uses the tracer" || notok "root, audit off: says so and uses the tracer"
	fi
	run_sb run --explain --enable-audit --report "$T/on.json" -- sh -c "
cat '$T/secret/file'; echo x > '$T/secret/new'; rm -f '$T/secret/file'
'$T/tools/bin/tool'; sh -c 'cat $T/secret/file'; exit 0"
	[ "$(src "$T/on.json")" = audit ] && ok "root, audit on: the kernel's records are the source" || notok "root, audit on: the kernel's records are the source"
	grep -q "cat\[[0-9]*\] read '$T/secret/file'" "$T/out/err" && ok "audit: a denied read, with program and pid" || notok "audit: a denied read, with program and pid"
	# the supervisor's under Landlock alone (it performs them): by the name, as the tracer says
	grep -qE "create '$T/secret(/new)?'" "$T/out/err" && ok "audit: a denied create names the folder" || notok "audit: a denied create names the folder"
	grep -qE "delete '$T/secret(/file)?'" "$T/out/err" && ok "audit: a denied delete" || notok "audit: a denied delete"
	grep -q "execute '$T/tools/bin/tool'" "$T/out/err" && ok "audit: a denied exec" || notok "audit: a denied exec"
	grep -q "(2 times)" "$T/out/err" && ok "audit: the grandchild's denial is counted" || notok "audit: the grandchild's denial is counted"
	python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); open("'"$T"'/aport","w").write(str(s.getsockname()[1])); time.sleep(60)' &
	BG_PIDS="$BG_PIDS $!"
	for _ in $(seq 50); do [ -s "$T/aport" ] && break; sleep 0.1; done
	AP=$(cat "$T/aport")
	for _ in 1 2 3; do # several pids: odd and even digit counts alike
		run_sb run --explain --enable-audit --net tcp:1 -- python3 -c "import socket; socket.socket().connect(('127.0.0.1', $AP))"
		grep -q "python3\[[0-9]*\] connect tcp port $AP: not allowed by the network policy" "$T/out/err" || break
	done
	grep -q "connect tcp port $AP" "$T/out/err" && ok "audit: a denied connect names the port" || notok "audit: a denied connect names the port"
	[ "$(audit_enabled)" = "$before" ] && ok "audit setting restored ($before)" || notok "audit setting restored ($before)"
fi

# not only files: a variable the step never got is named too (by name, never its value)
GITHUB_TOKEN=ghp_notreallyasecret0000000000000000000 run_sb run --explain -- sh -c 'test -n "$GITHUB_TOKEN"'
[ "$RC" != 0 ] && grep -q "not passed on from the environment" "$T/out/err" && grep -q "^  GITHUB_TOKEN: " "$T/out/err" &&
	! grep -q ghp_ "$T/out/err" && ok "explain: a secret dropped from the environment is named, its value never" ||
	notok "explain: a secret dropped from the environment is named, its value never" "$ERR"
