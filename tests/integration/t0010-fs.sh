#!/bin/bash
# t0010: reads and writes inside and outside the grants.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/data" "$T/secret" "$T/w/sub"
echo data >"$T/data/file"
echo secret >"$T/secret/file"
echo mine >"$T/w/mine"

in_box "write in the workdir" 'echo x > new && cat new && mkdir d && rm -r d'
in_box "read in the workdir" 'cat mine'
denied "read outside every grant" "cat '$T/secret/file'"
denied "list outside every grant" "ls '$T/secret'"
denied "write outside every grant" "echo x > '$T/secret/new'"
if [ "$BACKEND" = landlock ]; then
	denied "write to the home folder" "echo x > '$HOME/new'"
else
	# under the namespaces HOME is the step's own: written there, gone after
	run_sb run -- sh -c "echo x > '$HOME/new' && cat '$HOME/new'"
	[ "$RC" = 0 ] && [ "$OUT" = x ] && [ ! -e "$HOME/new" ] &&
		ok "HOME is private: a write there stays in the step" ||
		notok "HOME is private: a write there stays in the step" "rc=$RC" "$(ls -A "$HOME")"
fi
in_box "--read grants reading" "cat '$T/data/file'" -r "$T/data"
denied "--read does not grant writing" "echo x > '$T/data/new'" -r "$T/data"
denied "--read does not grant deleting" "rm -f '$T/data/file'" -r "$T/data"
in_box "--write grants writing" "echo x > '$T/data/new' && rm '$T/data/new'" -w "$T/data"
in_box "relative --read against the current folder" "cat '$T/data/file'" -r ../data
in_box "system: /usr, /etc, /proc, /dev/null" 'ls /usr/bin >/dev/null && cat /etc/hostname /etc/passwd >/dev/null 2>&1; head -c1 /proc/self/status >/dev/null && echo x > /dev/null'
if [ "$BACKEND" = landlock ]; then
	denied "/tmp is not granted" 'echo x > /tmp/stepbox-should-not-exist'
else
	in_box "/tmp is a private tmpfs" 'echo x > /tmp/stepbox-should-not-exist && grep -q " /tmp tmpfs " /proc/self/mounts'
fi
[ ! -e /tmp/stepbox-should-not-exist ] && ok "nothing reached the host's /tmp" || { rm -f /tmp/stepbox-should-not-exist; notok "nothing reached the host's /tmp"; }
denied "/var is not granted" 'ls /var/log'

# the workdir
mkdir -p "$T/wd"
in_box "-C makes the workdir writable and current" "pwd | grep -qx '$T/wd' && echo x > f" -C "$T/wd"
denied "--workdir-readonly" 'echo x > f2' -C "$T/wd" --workdir-readonly
in_box "--workdir-readonly still reads" 'cat f' -C "$T/wd" --workdir-readonly
run_sb run -C "$T/newwd" -- sh -c 'pwd'
[ "$RC" = 0 ] && [ -d "$T/newwd" ] && ok "a missing workdir is created" || notok "a missing workdir is created"
run_sb run -C "$T/new/deep/wd" -- sh -c 'pwd'
[ "$RC" = 125 ] && [ ! -e "$T/new" ] && ok "a missing workdir is created, never the folders above it" ||
	notok "a missing workdir is created, never the folders above it" "rc=$RC" "$ERR"

# missing paths: a read is skipped with a warning, a write is an error
expect "missing --read is skipped with a warning" 0 "does not exist" -- run -r "$T/nope" -- true
expect "missing --write is an error (125)" 125 "write path '$T/nope'" -- run -w "$T/nope" -- true
run_sb run -w "$T/nope" -- touch "$T/w/should-not-run"
[ ! -e "$T/w/should-not-run" ] && ok "a bad policy never runs the command" || notok "a bad policy never runs the command"

# renames, truncation, links inside a write grant
in_box "rename within the workdir" 'echo a > a && mv a sub/b && mv sub/b c && test -f c'
in_box "rename between two write grants" "echo a > a2 && mv a2 '$T/data/a2' && mv '$T/data/a2' ." -w "$T/data"
in_box "truncate inside a write grant" 'echo abc > t && truncate -s 1 t && test "$(cat t)" = a'
in_box "symlink and hard link inside a write grant" 'echo a > l && ln -s l l2 && ln l l3 && cat l2 l3 >/dev/null'
denied "truncate a read-only file" "truncate -s 0 '$T/data/file'" -r "$T/data"
[ "$(cat "$T/data/file")" = data ] && ok "read-only file intact" || notok "read-only file intact"

# a config file under HOME/.config is readable only when granted (incident 1)
mkdir -p "$HOME/.config/broker"
echo 'login=saved' >"$HOME/.config/broker/config"
denied "HOME/.config not granted by default" "cat '$HOME/.config/broker/config'"
in_box "HOME/.config readable when granted" "grep -q saved '$HOME/.config/broker/config'" -r "$HOME/.config/broker"

# many read grants under a low open-files limit: the fds held for their rules
# leave room for the rest (EMFILE with 2,000 grants at 1,024 once)
mkdir -p "$T/many"
python3 - "$T/many" "$T/many.json" <<'PY'
import json, os, sys
paths = []
for i in range(2000):
    p = os.path.join(sys.argv[1], "d%d" % i)
    os.makedirs(p, exist_ok=True)
    paths.append(p)
open(os.path.join(paths[-1], "f"), "w").write("last\n")
os.makedirs(os.path.join(sys.argv[1], "ungranted"), exist_ok=True)
open(os.path.join(sys.argv[1], "ungranted", "f"), "w").write("no\n")
json.dump({"version": 1, "read_paths": paths}, open(sys.argv[2], "w"))
PY
(ulimit -n 1024 && run_sb run -p "$T/many.json" -- sh -c "cat '$T/many/d1999/f'" && echo "rc=$RC out=$OUT err=$ERR" >"$T/out/many")
grep -q "^rc=0 out=last" "$T/out/many" && ok "2,000 read grants under ulimit -n 1024" ||
	notok "2,000 read grants under ulimit -n 1024" "$(head -c 600 "$T/out/many")"
(ulimit -n 1024 && denied "... and what none of them grants stays denied" "cat '$T/many/ungranted/f'" -p "$T/many.json")

# a read grant asked inside a write grant that is not there is refused (on
# every backend): what appeared there later would be writable, and a step
# beside this one that may write the folder can move it away while this
# one starts. The control: once there, the same grants run (and under the
# namespaces it is read-only inside).
mkdir -p "$T/mrw"
expect "a missing read grant inside a write grant is 125, naming both" 125 "lies in the write grant" -- run -w "$T/mrw" -r "$T/mrw/.git" -- true
# not resolvable for the moment (a folder on the way made a file): the same
echo file >"$T/mrw/cfg"
expect "a read grant inside a write grant that cannot be resolved is 125" 125 "lies in the write grant" -- run -w "$T/mrw" -r "$T/mrw/cfg/ro" -- true
mkdir -p "$T/mrw/.git"
if [ "$BACKEND" = landlock ]; then
	expect "control: there, under Landlock alone it is refused as before" 125 "cannot take writing away" -- run -w "$T/mrw" -r "$T/mrw/.git" -- true
else
	denied "control: there, it runs and is read-only inside" "touch '$T/mrw/ok' && touch '$T/mrw/.git/x'" -w "$T/mrw" -r "$T/mrw/.git"
	[ -e "$T/mrw/ok" ] && ok "control: the write grant around it is writable" || notok "control: the write grant around it is writable"
fi
