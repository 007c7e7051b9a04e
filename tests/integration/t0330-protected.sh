#!/bin/bash
# t0330 (issue 35): what a step leaves behind cannot run outside it. A step
# that may write its workdir wrote .git/hooks/pre-commit and core.fsmonitor,
# and the person's next git status or git commit, outside any sandbox, ran
# the step's code with the person's rights. Each attack beside a positive
# control on an unprotected sibling; after each run, the person's own git
# status and git commit run outside the sandbox and must run nothing of the
# step's (the planted code touches a marker). Live under the namespaces
# (read-only binds) and under Landlock alone (the supervisor), after the
# step everywhere (moved aside, original back). t0331 checks each call live.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || { skip "protected paths" "git is not installed"; exit 0; }
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e GIT_TERMINAL_PROMPT=0
M=$T/marker
PLANT="#!/bin/sh
touch '$M'"

empty_w() { # $T/w is the current folder: emptied, never removed
	find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	rm -f "$T/out/rep.json" "$M"
}
fresh() { # a checkout of the person's, with one commit, in $T/w
	empty_w
	(cd "$T/w" && git init -q && echo a >f && git add f && git commit -qm init) || exit 1
}
person_git() { # what the person runs afterwards, outside any sandbox
	(cd "${1:-$T/w}" && git status >/dev/null 2>&1 && echo x >>f && git add f &&
		git commit -qm person >/dev/null 2>&1 && git checkout -q -b "p$RANDOM" >/dev/null 2>&1)
	true
}
# held NAME CONTROL: the attack was refused live or caught after the step,
# nothing of the step's ran outside, and the control beside it was written
held() {
	local name=$1 control=$2
	person_git "${3:-}"
	if [ -e "$M" ]; then
		notok "$name: nothing of the step's runs outside" "the marker appeared (rc=$RC)"
	elif [ ! -s "$control" ]; then
		notok "$name: the control beside it was written" "no $control (rc=$RC)"
	elif ! grep -qE "Read-only file system|Device or resource busy|Permission denied|stepbox: protected" "$T/out/err"; then
		notok "$name: refused or caught" "rc=$RC, nothing said"
	else
		ok "$name (rc=$RC)"
	fi
}
in_report() { # the report names PATH, and what it names is where it says
	python3 - "$T/out/rep.json" "$1" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
for f in r["protected"]:
    if f["path"].endswith(sys.argv[2]):
        assert f["moved_to"] and os.path.lexists(f["moved_to"]), f
        print("moved " + f["moved_to"]); sys.exit(0)
sys.exit(1)
PY
}

# a hook written into .git/hooks
fresh
run_sb run --report "$T/out/rep.json" -- sh -c "printf '%s\n' \"$PLANT\" >.git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; printf '%s\n' \"$PLANT\" >ctl-hook"
held "a hook written" "$T/w/ctl-hook"
if [ "$RC" = 123 ]; then
	in_report .git/hooks/pre-commit >/dev/null && ok "the report says where the hook went" || notok "the report says where the hook went" "$(cat "$T/out/rep.json")"
fi

# core.fsmonitor and core.hooksPath in .git/config; the control: a config file beside it
for key in core.fsmonitor core.hooksPath; do
	fresh
	mkdir -p "$T/w/hk" && printf '%s\n' "$PLANT" >"$T/w/hk/pre-commit" && chmod +x "$T/w/hk/pre-commit"
	val="touch $M"
	[ $key = core.hooksPath ] && val=hk
	run_sb run --report "$T/out/rep.json" -- sh -c "git config $key '$val'; git config --file ctl.cfg $key '$val'"
	held "$key added" "$T/w/ctl.cfg"
	[ -z "$(cd "$T/w" && git config --get $key)" ] && ok "$key: the original config is back" || notok "$key: the original config is back" "$(cat "$T/w/.git/config")"
done

# a hook renamed in, and chmod +x of a sample (which git never runs)
fresh
run_sb run -- sh -c "printf '%s\n' \"$PLANT\" >x.sh; chmod +x x.sh; mv x.sh .git/hooks/post-checkout; chmod +x .git/hooks/pre-commit.sample; printf '%s\n' \"$PLANT\" >ctl-hook"
held "a hook renamed onto .git/hooks/post-checkout" "$T/w/ctl-hook"

# a hook hard-linked in from a file beside it: the link is moved, the file stays
fresh
run_sb run -- sh -c "printf '%s\n' \"$PLANT\" >ctl-hook; chmod +x ctl-hook; ln ctl-hook .git/hooks/pre-commit"
held "a hook hard-linked in" "$T/w/ctl-hook"

# .envrc, .vscode/tasks.json, .mcp.json, .claude/settings.json: each a finding, the sibling kept
for f in .envrc .vscode/tasks.json .mcp.json .claude/settings.json; do
	fresh
	run_sb run --report "$T/out/rep.json" -- sh -c "mkdir -p \$(dirname $f); echo 'touch $M' >$f; echo ok >ctl-$(basename $f)"
	if [ -e "$T/w/$f" ]; then
		notok "$f: not left where the step wrote it" "rc=$RC"
	elif [ "$(cat "$T/w/ctl-$(basename $f)" 2>/dev/null)" != ok ]; then
		notok "$f: the control beside it was written" "rc=$RC"
	elif [ "$RC" = 0 ] && grep -q "Permission denied" "$T/out/err"; then
		ok "$f: refused live"
	elif [ "$RC" != 123 ]; then
		notok "$f: the run exits 123" "rc=$RC"
	else
		ok "$f: moved aside ($(in_report "$f"))"
	fi
done

# a .git file naming a gitdir elsewhere in a write grant (a separate gitdir)
empty_w
(cd "$T/w" && git init -q --separate-git-dir "$T/w/gd" wt && cd wt && echo a >f && git add f && git commit -qm i) || exit 1
run_sb run -w "$T/w" -C "$T/w/wt" -- sh -c "h=\$(git rev-parse --git-path hooks)/pre-commit; printf '%s\n' \"$PLANT\" >\$h; chmod +x \$h; printf '%s\n' \"$PLANT\" >ctl-hook"
held "a hook in the gitdir a .git file names" "$T/w/wt/ctl-hook" "$T/w/wt"

# a linked worktree: its hooks are the main gitdir's (commondir)
fresh
(cd "$T/w" && git worktree add -q "$T/w/wt2" 2>/dev/null) || exit 1
run_sb run -w "$T/w" -C "$T/w/wt2" -- sh -c "h=\$(git rev-parse --git-common-dir)/hooks/pre-commit; printf '%s\n' \"$PLANT\" >\$h; chmod +x \$h; printf '%s\n' \"$PLANT\" >ctl-hook"
held "a hook through a linked worktree" "$T/w/wt2/ctl-hook" "$T/w/wt2"

# a submodule: its gitdir under .git/modules, its hooks and config
fresh
rm -rf "$T/subsrc" && mkdir -p "$T/subsrc" && (cd "$T/subsrc" && git init -q && echo s >s && git add s && git commit -qm s) || exit 1
(cd "$T/w" && git -c protocol.file.allow=always submodule add -q "$T/subsrc" sm >/dev/null 2>&1 && git commit -qm sm) || exit 1
run_sb run -- sh -c "cd sm && git config core.fsmonitor 'touch $M'; h=\$(git rev-parse --git-path hooks)/post-checkout; printf '%s\n' \"$PLANT\" >\$h; chmod +x \$h; cd .. && echo ok >ctl"
held "a submodule's config and hooks" "$T/w/ctl" "$T/w/sm"

# ordinary work where the gitdir's modules/ and worktrees/ exist already: a
# second submodule initialized, a worktree added and removed in one step
rm -rf "$T/sub2" && mkdir -p "$T/sub2" && (cd "$T/sub2" && git init -q && echo t >t && git add t &&
	git commit -qm t) && (cd "$T/w" && git -c protocol.file.allow=always submodule add -q \
	"$T/sub2" sm2 >/dev/null 2>&1 && git commit -qm sm2 && git submodule deinit -q sm2 &&
	rm -rf .git/modules/sm2) || exit 1
run_sb run -r "$T/sub2" -- sh -c 'set -e; git -c protocol.file.allow=always submodule update -q --init sm2
	git worktree add -q wt3 2>/dev/null; git worktree remove wt3; test -f sm2/t; echo done'
[ "$RC" = 0 ] && [ "$OUT" = "done" ] && ! grep -q "stepbox: protected" "$T/out/err" &&
	ok "submodule update --init beside an existing one; a worktree added and removed: no finding" ||
	notok "submodule update --init beside an existing one; a worktree added and removed" "rc=$RC $OUT"

# a full workflow inside the step leaves no finding
fresh
rm -rf "$T/bare" "$T/src" && git init -q --bare "$T/bare" && (cd "$T/w" && git push -q "$T/bare" HEAD:refs/heads/main) &&
	git clone -q "$T/bare" "$T/src" 2>/dev/null || exit 1
run_sb run -r "$T/bare" -r "$T/src" -- sh -c 'set -e; echo b >>f; git add f; git commit -qm b; git checkout -q -b topic; echo c >>f; git stash -q; git stash pop -q; git commit -qam c; git fetch -q "$0" main; git clone -q "$1" cl; mkdir n && cd n && git init -q && echo x >x && git add x && git commit -qm x && echo done' "$T/bare" "$T/src"
if [ "$RC" = 0 ] && [ "$OUT" = "done" ] && ! grep -q "stepbox: protected" "$T/out/err"; then ok "add, commit, checkout -b, stash, fetch, clone, init inside: no finding"
else notok "add, commit, checkout -b, stash, fetch, clone, init inside: no finding" "rc=$RC out=$OUT"; fi
rm -rf "$T/w/n"
run_sb run -- sh -c 'git init -q n2 && cd n2 && git init -q . && echo ok'
[ "$RC" = 0 ] && ok "git init in a fresh folder: no finding" || notok "git init in a fresh folder: no finding" "rc=$RC"

# unprotect and protected_paths, each way
fresh
run_sb run --unprotect .git/hooks -- sh -c "echo '#!/bin/sh' >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"
[ "$RC" = 0 ] && [ -s "$T/w/.git/hooks/pre-commit" ] && ok "--unprotect .git/hooks: the hook stays" || notok "--unprotect .git/hooks: the hook stays" "rc=$RC"
echo '{"version": 1, "unprotect": [".envrc"]}' >"$T/unp.json"
run_sb run -p "$T/unp.json" -- sh -c "echo use flake >.envrc"
[ "$RC" = 0 ] && [ -s "$T/w/.envrc" ] && ok "unprotect .envrc in the policy: it stays" || notok "unprotect .envrc in the policy: it stays" "rc=$RC"
echo '{"version": 1, "unprotect": ["*"]}' >"$T/unp.json"
run_sb run -v -p "$T/unp.json" -- true
grep -q "unprotect '\*' is broad" "$T/out/err" && ok "a broad unprotect is named with -v" || notok "a broad unprotect is named with -v"
echo '{"version": 1, "protected_paths": ["ci/*.sh"]}' >"$T/pp.json"
run_sb run -p "$T/pp.json" -- sh -c "mkdir -p ci; echo x >ci/run.sh; echo x >ci/notes.txt"
{ [ "$RC" = 123 ] || grep -q "Permission denied" "$T/out/err"; } && [ ! -e "$T/w/ci/run.sh" ] && [ -s "$T/w/ci/notes.txt" ] &&
	ok "protected_paths ci/*.sh: run.sh refused or moved aside, notes.txt stays" ||
	notok "protected_paths ci/*.sh: run.sh refused or moved aside, notes.txt stays" "rc=$RC"
echo '{"version": 1,
 "unprotect": ["../x"]}' >"$T/bad.json"
expect "unprotect with '..' is refused, with its line" 125 "line 2" -- run -p "$T/bad.json" -- true
run_sb run --protect-report-only -- sh -c "echo x >.mcp.json; true"
if [ "$BACKEND" = landlock ] && [ "$RC" = 0 ] && [ ! -e "$T/w/.mcp.json" ] && grep -q "Permission denied" "$T/out/err"; then
	ok "--protect-report-only: refused live under Landlock alone (nothing left to report)"
else
	[ "$RC" = 0 ] && [ ! -e "$T/w/.mcp.json" ] && ok "--protect-report-only: exit 0, still moved aside" || notok "--protect-report-only: exit 0, still moved aside" "rc=$RC"
fi

# .git swapped for a symlink to a gitdir outside the grant: the link is moved aside
fresh
rm -rf "$T/evil" && git init -q --bare "$T/evil" && printf '%s\n' "$PLANT" >"$T/evil/hooks/pre-commit" && chmod +x "$T/evil/hooks/pre-commit"
run_sb run -- sh -c "mv .git .git-old && ln -s '$T/evil' .git; echo ok >ctl"
held ".git swapped for a symlink" "$T/w/ctl"

# guide tells the agent what it may not write, and what the operator opened
run_sb guide --unprotect .envrc
if grep -q '`.git/hooks`' "$T/out/out" && ! grep -q '^- `.envrc`' "$T/out/out" && grep -q 'lets you write: `.envrc`' "$T/out/out"; then
	ok "guide names the protected paths and the unprotected ones"
else
	notok "guide names the protected paths and the unprotected ones" "$OUT"
fi
