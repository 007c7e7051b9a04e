#!/bin/bash
# t0331 (issue 35): the protected paths held while the step runs, call by
# call, each beside the same call on an unprotected control: written,
# appended, truncated, chmod'ed, linked elsewhere, renamed onto, renamed out
# of and removed (a name that exists); created, linked, symlinked, renamed
# onto, made a FIFO or a folder, reached through a dangling symlink (a name
# that does not exist yet); a folder swapped for a symlink while a thread
# makes a hook through it. On every backend the supervisor refuses each call
# that lands on a protected name (EACCES), new names included; under the
# namespaces what exists is also bound read-only (EROFS, EBUSY, EXDEV).
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || { skip "protected paths live" "git is not installed"; exit 0; }
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e GIT_TERMINAL_PROMPT=0
cp "$TESTDIR/protect-live.py" "$T/live.py"
M=$T/w/marker

setup() { # the person's checkout, with each protected name in place
	find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	(cd "$T/w" && git init -q && echo a >f && git add f && git commit -qm init) || exit 1
	mkdir -p "$T/w/.vscode" "$T/w/.idea/runConfigurations" "$T/w/.claude/hooks" "$T/w/.cursor" \
		"$T/w/.git/info" "$T/w/.git/hooks/pre-commit.d" "$T/w/ctl"
	for f in .git/hooks/pre-commit .git/info/attributes .gitmodules .envrc .vscode/tasks.json \
		.idea/workspace.xml .mcp.json .claude/settings.json .cursor/mcp.json \
		.claude/hooks/check.sh .git/hooks/pre-commit.d/lint; do
		echo keep >"$T/w/$f" && chmod 644 "$T/w/$f"
		echo keep >"$T/w/ctl/$(basename "$f")"
	done
	echo keep >"$T/w/.git/hooks/pre-commit.sample"
}
# check OUTPUT-FILE WHAT: every "p:" line refused, every "c:" line 0
check() {
	python3 - "$1" "$2" "$BACKEND" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1]) if l.startswith(("p:", "c:"))]
bad = []
refusals = {13} if sys.argv[3] == "landlock" else {13, 30, 16, 18, 1}
for label, err in lines:
    err = int(err)
    if label.startswith("p:") and err not in refusals:
        bad.append(f"{label} errno {err} (want refused)")
    if label.startswith("c:") and err != 0:
        bad.append(f"{label} errno {err} (the control failed)")
if not lines:
    bad.append("no output")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

setup
# the last two deep in a protected folder: a script .claude/settings.json
# runs as a hook, a hook manager's folder of hooks
for f in .git/hooks/pre-commit .git/config .git/info/attributes .gitmodules .envrc .vscode/tasks.json \
	.idea/workspace.xml .mcp.json .claude/settings.json .cursor/mcp.json \
	.claude/hooks/check.sh .git/hooks/pre-commit.d/lint; do
	ctl=ctl/$(basename "$f")
	[ -e "$T/w/$ctl" ] || echo keep >"$T/w/$ctl"
	run_sb run -r "$T/live.py" -- python3 "$T/live.py" existing "$f" "$ctl"
	if why=$(check "$T/out/out" "$f"); then
		ok "$f exists: each change refused, each on the control made ($(grep -c '^p:' "$T/out/out") calls)"
	else
		notok "$f exists: each change refused, each on the control made" "$why" "$(head -3 "$T/out/err")"
	fi
done
[ "$(cat "$T/w/.envrc")" = keep ] && [ "$(cat "$T/w/.git/hooks/pre-commit")" = keep ] &&
	ok "what existed is as it was" || notok "what existed is as it was" "$(cat "$T/w/.envrc")"

# HOME in a write grant: its rc files
echo keep >"$T/home/.bashrc" && echo keep >"$T/home/bashrc.txt"
run_sb run --allow-broad-grants -w "$T/home" -C "$T/home" -r "$T/live.py" -- python3 "$T/live.py" existing .bashrc bashrc.txt
why=$(check "$T/out/out" .bashrc) && ok "HOME/.bashrc in a granted HOME: refused, the control made" ||
	notok "HOME/.bashrc in a granted HOME: refused, the control made" "$why"

# names that do not exist yet, at any depth (a clone's own .git)
setup
(cd "$T/w" && git clone -q . sub 2>/dev/null) || exit 1
for f in .git/hooks/post-checkout .git/info/attributes2 .gitmodules .envrc .mcp.json .vscode/launch.json \
	.claude/commands sub/.git/hooks/pre-push .git/modules/m/hooks/post-merge \
	.claude/hooks/new.sh .idea/runConfigurations/Run.xml .qwen/settings.json .yarnrc.yml \
	.devcontainer/devcontainer.json .npmrc .ENVRC; do
	case $f in
	.git/info/attributes2) rm -f "$T/w/.git/info/attributes"; f=.git/info/attributes ;;
	.gitmodules | .envrc | .mcp.json) rm -f "$T/w/$f" ;;
	.git/modules/*) mkdir -p "$T/w/.git/modules/m/hooks" ;;
	.qwen/* | .devcontainer/*) mkdir -p "$T/w/${f%/*}" ;;
	esac
	run_sb run -r "$T/live.py" -- python3 "$T/live.py" new "$f" "ctl/new-$(basename "$f")"
	if why=$(check "$T/out/out" "$f"); then
		ok "$f made new: each way refused, each on the control made ($(grep -c '^p:' "$T/out/out") calls)"
	else
		notok "$f made new: each way refused, each on the control made" "$why" "$(head -3 "$T/out/err")"
	fi
done

# a hard link of a hook made before the step, elsewhere in the grant: the hook, by its inode
setup
ln "$T/w/.git/hooks/pre-commit" "$T/w/hl-hook"
run_sb run -- sh -c 'echo x >>hl-hook || echo refused; echo x >>ctl/pre-commit && echo control'
[ "$OUT" = "$(printf 'refused\ncontrol')" ] && [ "$(cat "$T/w/.git/hooks/pre-commit")" = keep ] &&
	ok "a hard link of a hook made before the step: refused by its inode, the control written" ||
	notok "a hard link of a hook made before the step: refused by its inode, the control written" "$OUT"
# ... renamed onto a name and back while a thread opens that name to write:
# where it is there the open is refused, where it is not a file is made new,
# never the link opened (the two met: refused > 0; the control: files made).
# Renaming a link of the hook changes its ctime, which the net after the
# step counts as a change (set aside, the original put back): rc 123.
run_sb run -r "$T/live.py" -- python3 "$T/live.py" linkrace 3000
read -r what held made refused _ <<<"$OUT"
[ "$what $held" = "linkrace held" ] && [ "$made" -gt 0 ] && [ "$refused" -gt 0 ] &&
	[ "$(cat "$T/w/.git/hooks/pre-commit")" = keep ] &&
	ok "a hook's hard link renamed onto a name opened to be made: never opened ($OUT)" ||
	notok "a hook's hard link renamed onto a name opened to be made: never opened" "rc=$RC $OUT" "$(head -3 "$T/out/err")"
mkdir -p "$T/w/.git/modules"

# a folder above them moved away and made again, or moved in whole
run_sb run -- sh -c 'mv .git/hooks h2 2>/dev/null && echo moved-hooks; mv .git g2 2>/dev/null && echo moved-git;
	mkdir -p nx/hooks && echo evil >nx/hooks/pre-commit && mv nx/hooks .git/hooks-new && echo ok-sibling;
	mv nx .git/modules/nx 2>/dev/null && echo moved-in; echo done'
[ "$OUT" = "$(printf 'ok-sibling\ndone')" ] && ok "a folder above protected names is not moved away, nor one moved in" ||
	notok "a folder above protected names is not moved away, nor one moved in" "$OUT"

# a new gitdir's config written in place (libgit2's init, cargo's git checkouts):
# made live, and judged by its keys after the step; the control: git's own keys kept
find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
run_sb run -- sh -c 'mkdir -p n/.git e/.git && printf "[core]\n\tbare = false\n" >n/.git/config && echo plain-made;
	printf "[core]\n\tfsmonitor = touch marker\n" >e/.git/config && echo run-made'
if [ "$RC" = 123 ] && [ "$OUT" = "$(printf 'plain-made\nrun-made')" ] && grep -q "bare = false" "$T/w/n/.git/config" &&
	! grep -qs fsmonitor "$T/w/e/.git/config" && grep -q "stepbox: protected.*e/.git/config" "$T/out/err"; then
	ok "a new gitdir's config made in place: git's keys kept, a run key moved aside after the step (123)"
else
	notok "a new gitdir's config made in place: git's keys kept, a run key moved aside after the step (123)" \
		"rc=$RC $OUT" "$(head -5 "$T/out/err")"
fi
(cd "$T/w/e" && git status >/dev/null 2>&1)
[ ! -e "$M" ] && [ ! -e "$T/w/e/marker" ] && ok "the person's git status in it runs nothing of the step's" ||
	notok "the person's git status in it runs nothing of the step's"

# git init in an empty workdir, then a hook; the config by git: a run key refused, another key kept
find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
run_sb run -- sh -c 'git init -q && echo init; echo "touch marker" >.git/hooks/pre-commit || echo hook-refused;
	echo "#!/bin/sh" >.git/hooks/x.sample && echo sample-ok;
	git config core.fsmonitor "touch marker" 2>/dev/null || echo fsmonitor-refused;
	git config user.name bob && echo name-ok; git config --get user.name'
want=$(printf 'init\nhook-refused\nsample-ok\nfsmonitor-refused\nname-ok\nbob')
[ "$RC" = 0 ] && [ "$OUT" = "$want" ] && ok "git init, then a hook and core.fsmonitor refused; a sample and user.name made" ||
	notok "git init, then a hook and core.fsmonitor refused; a sample and user.name made" "rc=$RC $OUT"
(cd "$T/w" && echo a >f && git add f && git commit -qm person && git status >/dev/null)
[ ! -e "$M" ] && ok "the person's git commit outside runs nothing of the step's" || notok "the person's git commit outside runs nothing of the step's"

# a config moved onto .git/config: judged by its keys, and what lands is what was judged
run_sb run -- python3 -c '
import os
fd = os.open(".git/config.lock", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, open(".git/config", "rb").read() + b"[user]\n\temail = a@b\n")
os.rename(".git/config.lock", ".git/config")
os.write(fd, b"[core]\n\tfsmonitor = touch marker\n")  # through the fd kept
os.close(fd)
print("renamed")'
if [ "$OUT" = renamed ] && grep -q "email = a@b" "$T/w/.git/config" && ! grep -q fsmonitor "$T/w/.git/config"; then
	ok "a config renamed in lands as judged; a write through the fd kept reaches nothing"
else
	notok "a config renamed in lands as judged; a write through the fd kept reaches nothing" "$OUT $(cat "$T/w/.git/config")"
fi

# git's own config writes in the person's checkout (the config is judged,
# never bound: a bind made them EBUSY under the namespaces), beside the
# keys that run a command, refused: core.fsmonitor, and protocol.ext.allow
# (which lets a remote's URL be ext::COMMAND, run by the next fetch)
setup
run_sb run -- sh -c 'git remote add up /nowhere && echo remote-ok
	git config branch.main.remote up && echo tracking-ok
	git config core.fsmonitor "touch marker" 2>/dev/null || echo fsmonitor-refused
	git config protocol.ext.allow always 2>/dev/null || echo ext-refused
	git remote set-url up "ext::sh -c touch% marker" && echo url-ok'
want=$(printf 'remote-ok\ntracking-ok\nfsmonitor-refused\next-refused\nurl-ok')
[ "$OUT" = "$want" ] && [ "$(git -C "$T/w" config remote.up.url)" = "ext::sh -c touch% marker" ] &&
	! git -C "$T/w" config protocol.ext.allow >/dev/null && ! git -C "$T/w" config core.fsmonitor >/dev/null &&
	ok "git remote add and a tracking branch work; core.fsmonitor and protocol.ext.allow refused" ||
	notok "git remote add and a tracking branch work; core.fsmonitor and protocol.ext.allow refused" "rc=$RC $OUT" "$(head -3 "$T/out/err")"
(cd "$T/w" && git fetch -q up 2>/dev/null)
[ ! -e "$M" ] && ok "the person's git fetch outside runs nothing of the step's (ext:: stays refused)" ||
	notok "the person's git fetch outside runs nothing of the step's"

# core.hooksPath: the hooks git runs are the folder it names (a repository's
# .githooks, husky's .husky/_), protected as .git/hooks is; and the hook
# managers' own files (pre-commit, husky, lefthook, overcommit)
setup
mkdir -p "$T/w/.githooks" "$T/w/.husky"
printf '#!/bin/sh\nexit 0\n' >"$T/w/.githooks/pre-commit"
chmod 755 "$T/w/.githooks/pre-commit"
git -C "$T/w" config core.hooksPath .githooks
for f in .pre-commit-config.yaml .husky/pre-commit lefthook.yml .overcommit.yml; do echo keep >"$T/w/$f"; done
run_sb run -- sh -c 'for f in .githooks/pre-commit .githooks/post-checkout .pre-commit-config.yaml \
		.husky/pre-commit .husky/pre-push lefthook.yml .lefthook.yml .overcommit.yml \
		.gemini/settings.json .roo/mcp.json .amazonq/mcp.json .kiro/settings/mcp.json \
		opencode.json .opencode/plugin/p.js .aider.conf.yml .zed/settings.json mise.toml \
		.config/mise/config.toml; do
		(mkdir -p "${f%/*}" 2>/dev/null; echo "touch marker" >>"$f") 2>/dev/null && echo "$f written"
	done
	echo x >ctl.yml && echo ctl-ok'
want="ctl-ok"
[ "$OUT" = "$want" ] && [ "$(cat "$T/w/.pre-commit-config.yaml")" = keep ] &&
	[ ! -e "$T/w/.githooks/post-checkout" ] && ! grep -q marker "$T/w/.githooks/pre-commit" &&
	ok "core.hooksPath's folder, the hook managers' and other agents' files: refused; a control made" ||
	notok "core.hooksPath's folder, the hook managers' and other agents' files: refused; a control made" "rc=$RC $OUT"
(cd "$T/w" && echo b >>f && git commit -qam person2 && git status >/dev/null)
[ ! -e "$M" ] && ok "the person's git commit with core.hooksPath outside runs nothing of the step's" ||
	notok "the person's git commit with core.hooksPath outside runs nothing of the step's"
# ... in a worktree the step adds: git takes the relative value from its top
setup
git -C "$T/w" config core.hooksPath .githooks
run_sb run -- sh -c 'git worktree add -q .worktrees/new 2>/dev/null && mkdir -p .worktrees/new/.githooks &&
	{ printf "#!/bin/sh\ntouch '"$M"'\n" >.worktrees/new/.githooks/pre-commit 2>/dev/null && echo planted; }
	echo x >.worktrees/new/ctl && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ ! -e "$T/w/.worktrees/new/.githooks/pre-commit" ] &&
	ok "core.hooksPath in a worktree the step adds: its hook refused; a control made" ||
	notok "core.hooksPath in a worktree the step adds: its hook refused" "rc=$RC $OUT"

# ... named through a link (.githooks -> tools/hooks): the link may not be
# pointed elsewhere, nor the folder above the target moved
setup
mkdir -p "$T/w/tools/hooks"
printf '#!/bin/sh\nexit 0\n' >"$T/w/tools/hooks/pre-commit"
chmod 755 "$T/w/tools/hooks/pre-commit"
ln -s tools/hooks "$T/w/.githooks"
git -C "$T/w" config core.hooksPath .githooks
run_sb run -- sh -c 'mkdir evil && printf "#!/bin/sh\ntouch marker\n" >evil/pre-commit && chmod 755 evil/pre-commit && echo ctl-ok
	ln -sfn evil .githooks 2>/dev/null && echo relinked
	rm .githooks 2>/dev/null && echo removed
	mv tools t2 2>/dev/null && echo moved
	(echo "touch marker" >>tools/hooks/pre-commit) 2>/dev/null && echo written'
[ "$OUT" = ctl-ok ] && [ "$(readlink "$T/w/.githooks")" = tools/hooks ] &&
	ok "core.hooksPath through a link: not repointed, removed or moved; its hook not written" ||
	notok "core.hooksPath through a link: not repointed, removed or moved; its hook not written" "rc=$RC $OUT"
(cd "$T/w" && echo c >>f && git commit -qam person3)
[ ! -e "$M" ] && ok "the person's git commit through the linked hooks path runs nothing of the step's" ||
	notok "the person's git commit through the linked hooks path runs nothing of the step's"
# a workspace of clones: the set's names at the top of a checkout one level
# down are held as at the grant's (husky's scripts, direnv's, an editor's),
# and the checkout is not moved away from them
setup
git init -q "$T/w/a" && (cd "$T/w/a" && echo x >x && git add x && git commit -qm a) &&
	mkdir -p "$T/w/a/.husky" && echo keep >"$T/w/a/.husky/pre-commit" || notok "a clone set up"
run_sb run -- sh -c 'for f in a/.husky/pre-commit a/.envrc a/.vscode/tasks.json a/lefthook.yml; do
		(mkdir -p "${f%/*}" 2>/dev/null; echo "touch marker" >>"$f") 2>/dev/null && echo "$f written"
	done
	mv a b 2>/dev/null && echo moved
	mkdir -p a/src && echo x >a/src/.envrc && echo x >a/.huskyx && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ "$(cat "$T/w/a/.husky/pre-commit")" = keep ] && [ ! -e "$T/w/a/.envrc" ] &&
	ok "a checkout one level down: the set's names at its top refused, the folder not moved; controls made" ||
	notok "a checkout one level down: the set's names at its top refused" "rc=$RC $OUT"

# ... and one deeper (a GOPATH-style tree): the same names at its top, found
# from the folder each call is made in; a link to its hook refused; one the
# step makes is its own
setup
git init -q "$T/w/d1/d2/repo" && mkdir -p "$T/w/d1/d2/repo/.husky" &&
	echo keep >"$T/w/d1/d2/repo/.husky/pre-commit" || notok "a deep checkout set up"
run_sb run -- sh -c 'for f in d1/d2/repo/.husky/pre-commit d1/d2/repo/.envrc d1/d2/repo/.ENVRC \
		d1/d2/repo/.vscode/tasks.json; do
		(mkdir -p "${f%/*}" 2>/dev/null; echo "touch marker" >>"$f") 2>/dev/null && echo "$f written"
	done
	ln d1/d2/repo/.husky/pre-commit hard 2>/dev/null && echo linked
	mv d1/d2/repo/.husky h2 2>/dev/null && echo moved
	mkdir -p d1/d2/repo/src && echo x >d1/d2/repo/src/.envrc &&
	git init -q d1/mine && echo x >d1/mine/.envrc && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ "$(cat "$T/w/d1/d2/repo/.husky/pre-commit")" = keep ] &&
	[ ! -e "$T/w/d1/d2/repo/.envrc" ] &&
	ok "a checkout three levels down: its names refused, its hook not linked or moved; controls made" ||
	notok "a checkout three levels down: its names refused" "rc=$RC $OUT"

# a checkout deeper down is not moved away for a clone of the step's to take
# its name; one the step cloned there moves and goes
setup
git init -q "$T/w/src/a" || notok "a deep checkout set up"
run_sb run -- sh -c 'mv src/a src/a.old 2>/dev/null && echo moved
	git clone -q src/a src/mine && mv src/mine src/mine2 && rm -rf src/mine2 && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ -d "$T/w/src/a/.git" ] &&
	ok "a checkout two levels down not moved away; a clone of the step's moved and removed" ||
	notok "a checkout two levels down not moved away" "rc=$RC $OUT"

# ... nor a folder further up that holds one (a checkout or a bare clone, at
# any depth) for a clone of the step's at the old path; the controls: a
# folder that holds none, a folder the step made holding its own clone
setup
git init -q "$T/w/top/mid/deep/repo" && mkdir -p "$T/w/bare/x" "$T/w/plain/p/q" &&
	git init -q --bare "$T/w/bare/x/r.git" && echo p >"$T/w/plain/p/q/f" ||
	notok "checkouts further down set up"
run_sb run -- sh -c 'mv top top.old 2>/dev/null && echo moved-top
	mv top/mid m2 2>/dev/null && echo moved-mid
	rm -rf top 2>/dev/null; [ -d top/mid/deep/repo/.git ] || echo removed
	mv bare bare.old 2>/dev/null && echo moved-bare
	mv plain plain2 && mkdir -p made/in && git init -q made/in/r && mv made made2 &&
	rm -rf made2 && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ -d "$T/w/top/mid/deep/repo/.git" ] && [ -f "$T/w/bare/x/r.git/HEAD" ] &&
	[ -f "$T/w/plain2/p/q/f" ] &&
	ok "a folder holding a checkout or a bare clone at any depth not moved away; controls moved" ||
	notok "a folder holding a checkout or a bare clone at any depth not moved away" "rc=$RC $OUT"

# a folder of the person's made a gitdir, its config and hook first and its
# HEAD last (git tries a folder as a bare gitdir before looking for the .git
# above it): the HEAD refused, the person's git status and commit there run
# nothing; the control: git's own order (git init --bare) in a folder of the
# step's, and a folder that never becomes one
setup
mkdir -p "$T/w/src" && echo s >"$T/w/src/f" || notok "a source folder set up"
run_sb run -- sh -c 'cd src && mkdir hooks && printf "#!/bin/sh\ntouch '"$M"'\n" >hooks/pre-commit &&
	chmod +x hooks/pre-commit &&
	printf "[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch '"$M"'; false\"\n" >config &&
	mkdir objects refs || exit 1
	echo "ref: refs/heads/master" >HEAD 2>/dev/null && echo head-made
	cd .. && git init -q --bare mine.git && mkdir -p plain/objects plain/refs && echo x >plain/HEAD &&
	echo ctl-ok'
(cd "$T/w/src" && git status >/dev/null 2>&1; echo y >>f; git add f >/dev/null 2>&1
	git commit -qm x >/dev/null 2>&1)
[ "$OUT" = ctl-ok ] && [ ! -e "$M" ] && [ ! -e "$T/w/src/HEAD" ] &&
	ok "a folder made a gitdir with its hook and config first: its HEAD refused, nothing ran; controls made" ||
	notok "a folder made a gitdir with its hook and config first: its HEAD refused" "rc=$RC $OUT" "$(ls -a "$T/w/src")"
rm -f "$M"

# ... nor through what the live layer cannot see once it is one: a config
# that is a link (written at its target), a hooks folder that is a link, an
# fd kept on its config (also in a folder the step made again at the
# person's path, and where refs is a link to nothing yet, the folder it
# names made after) (each made a gitdir the right way, then written):
# refused where it can be told, else judged after the step and moved aside;
# the person's git status and commit there run nothing
for how in link hooklink fd remade danglingrefs; do
	setup
	mkdir -p "$T/w/src" && echo s >"$T/w/src/f" || notok "a source folder set up"
	run_sb run -- sh -c 'cd src && case '"$how"' in
	link) echo "[core]" >../.cfg && ln -s ../.cfg config ;;
	hooklink) mkdir ../.h && ln -s ../.h hooks &&
		printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n" >config ;;
	fd) exec 3>config ;;
	remade) cd .. && mv src src.old && mkdir src && cd src && exec 3>config ;;
	danglingrefs) exec 3>config && ln -s ../.r refs ;;
	esac
	[ -L refs ] || mkdir refs
	mkdir objects && echo "ref: refs/heads/master" >HEAD 2>/dev/null || exit 0
	[ -L refs ] && mkdir ../.r
	fsm="[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch '"$M"'; false\"\n"
	case '"$how"' in
	link) printf "$fsm" >../.cfg ;;
	hooklink) printf "#!/bin/sh\ntouch '"$M"'\n" >../.h/pre-commit && chmod +x ../.h/pre-commit ;;
	*) printf "$fsm" >&3 ;;
	esac
	echo written'
	(cd "$T/w/src" && git status >/dev/null 2>&1; echo y >>f; git add f >/dev/null 2>&1
		git commit -qm x >/dev/null 2>&1)
	[ ! -e "$M" ] && ok "a gitdir made the right way, then written unseen ($how): nothing ran" ||
		notok "a gitdir made the right way, then written unseen ($how): nothing ran" "rc=$RC $OUT"
	rm -f "$M"
done

# a symlink that is the person's path to a checkout elsewhere in the grant
# (there, or further down): not removed or replaced, its folder not moved
# away, for a gitdir of the step's to take the path; the controls: a link
# to none, a link of the step's to one removed after it was replaced
setup
git init -q "$T/w/real/repo" && mkdir -p "$T/w/top" && ln -s ../real/repo "$T/w/top/repo" &&
	mkdir -p "$T/w/other" && ln -s ../real "$T/w/other/plain" || notok "a symlink to a checkout set up"
mkdir -p "$T/w/real2/a" && git init -q "$T/w/real2/a/repo" && ln -s real2 "$T/w/link" &&
	ln -s real2 "$T/w/link2" || notok "a symlink to a folder holding a checkout set up"
run_sb run -- sh -c 'rm top/repo 2>/dev/null && echo removed-link
	mv top top.old 2>/dev/null && echo moved-top
	rm link 2>/dev/null && echo removed-deep-link
	ln -sfn other link2 2>/dev/null && echo replaced-link
	mv other other2 && ln -s other2 mine && ln -sfn real2 mine && rm mine && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ -L "$T/w/top/repo" ] && [ "$(readlink "$T/w/link")" = real2 ] &&
	[ "$(readlink "$T/w/link2")" = real2 ] &&
	ok "symlinks to checkouts, and their folders, not removed, replaced or moved away; controls made" ||
	notok "symlinks to checkouts, and their folders, not removed, replaced or moved away" "rc=$RC $OUT"

# a .git file read as git reads it: "gitdir: .g<newline>x" names the folder
# ".g\nx" (only the last line end cut), an uninitialised submodule's folder
# given one of the step's, its config with a fsmonitor made first: the
# person's git status in the checkout runs nothing
setup
rm -rf "$T/libsrc" && git init -q "$T/libsrc" && (cd "$T/libsrc" && echo l >l && git add l &&
	git commit -qm lib) && (cd "$T/w" &&
	git -c protocol.file.allow=always submodule add -q "$T/libsrc" lib >/dev/null 2>&1 &&
	git commit -qm sub && git submodule deinit -q -f lib) || notok "an uninitialised submodule set up"
run_sb run -- sh -c 'cd lib && G=".g
x" && mkdir -p "$G" && printf "[core]\n\tbare = false\n\tfsmonitor = \"touch '"$M"'; false\"\n" >"$G/config"
	mkdir -p "$G/objects" "$G/refs" && echo "ref: refs/heads/master" >"$G/HEAD" 2>/dev/null
	printf "gitdir: .g\nx\n" >.git && echo written'
(cd "$T/w" && git status >/dev/null 2>&1)
[ ! -e "$M" ] && ok "a .git file naming a folder with a newline in its name: judged as git reads it, nothing ran" ||
	notok "a .git file naming a folder with a newline in its name: judged as git reads it" "rc=$RC $OUT"
rm -f "$M"

# gitdirs no .git names, deeper than one level down: a bare clone, the .bare
# worktree layout; a bare repository the step makes is its own to fill and remove
setup
mkdir -p "$T/w/src/proj" && git clone -q --bare "$T/w" "$T/w/src/repo.git" &&
	git clone -q --bare "$T/w" "$T/w/src/proj/.bare" && echo "gitdir: ./.bare" >"$T/w/src/proj/.git" ||
	notok "deep gitdirs set up"
run_sb run -- sh -c 'for f in src/repo.git/hooks/pre-receive src/repo.git/config \
		src/proj/.bare/hooks/pre-commit src/proj/.bare/config; do
		(echo "touch marker" >>"$f") 2>/dev/null && echo "$f written"
	done
	git init -q --bare own.git && printf "#!/bin/sh\n" >own.git/hooks/x 2>/dev/null && echo own-hook
	git init -q --bare own.git && rm -rf own.git && echo ctl-ok'
[ "$OUT" = ctl-ok ] && ! grep -q marker "$T/w/src/repo.git/config" &&
	[ ! -e "$T/w/src/repo.git/hooks/pre-receive" ] && [ ! -e "$T/w/own.git" ] &&
	ok "a bare clone and a .bare two levels down: hooks and config refused; the step's own made and removed" ||
	notok "a bare clone and a .bare two levels down: hooks and config refused" "rc=$RC $OUT"

# ... in a submodule two levels down (husky there: its config names .husky/_,
# taken from the submodule's worktree), the person committing in it after
setup
rm -rf "$T/libsrc" && git init -q "$T/libsrc" && (cd "$T/libsrc" && echo l >l && git add l &&
	git commit -qm lib) && (cd "$T/w" &&
	git -c protocol.file.allow=always submodule add -q "$T/libsrc" third/lib >/dev/null 2>&1 &&
	git commit -qm sub && git -C third/lib config core.hooksPath .husky/_) &&
	mkdir -p "$T/w/third/lib/.husky/_" || notok "a submodule set up"
run_sb run -- sh -c 'printf "#!/bin/sh\ntouch '"$M"'\n" >third/lib/.husky/_/pre-commit 2>/dev/null &&
		chmod 755 third/lib/.husky/_/pre-commit && echo written
	echo x >third/lib/ctl.txt && echo ctl-ok'
[ "$OUT" = ctl-ok ] && [ ! -e "$T/w/third/lib/.husky/_/pre-commit" ] &&
	ok "core.hooksPath of a submodule two levels down: its hook refused; a control beside it made" ||
	notok "core.hooksPath of a submodule two levels down: its hook refused" "rc=$RC $OUT"
(cd "$T/w/third/lib" && echo m >>l && git commit -qam person-in-sub 2>/dev/null)
[ ! -e "$M" ] && ok "the person's git commit in the submodule runs nothing of the step's" ||
	notok "the person's git commit in the submodule runs nothing of the step's"
setup
mkdir -p "$T/w/.githooks"
git -C "$T/w" config core.hooksPath .githooks
echo keep >"$T/w/.githooks/pre-commit"
run_sb run --unprotect .git/hooks -- sh -c 'echo "exit 0" >>.githooks/pre-commit && echo hooks-written'
[ "$OUT" = hooks-written ] && ok "--unprotect .git/hooks opens core.hooksPath's folder too" ||
	notok "--unprotect .git/hooks opens core.hooksPath's folder too" "rc=$RC $OUT"

# a Landlock domain the step takes itself (landrun, a nested sandbox): what
# it forbids stays forbidden, though the live layer makes the step's files
# (performed with the step's rules alone, a file in b/ landed); a protected
# name stays refused inside it; the controls are made
setup
mkdir -p "$T/w/a" "$T/w/b"
cat >"$T/nested-ll.py" <<'PY'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
MAKE_REG, WRITE_FILE = 1 << 8, 1 << 1
attr = struct.pack("QQQ", MAKE_REG | WRITE_FILE, 0, 0)
rs = libc.syscall(444, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), 0)
if rs < 0:
    print("no-landlock")
    sys.exit(0)
for d in sys.argv[1].split(","):
    fd = os.open(d, os.O_PATH | os.O_DIRECTORY)
    rule = struct.pack("=Qi", MAKE_REG | WRITE_FILE, fd)
    assert libc.syscall(445, rs, 1, ctypes.c_char_p(rule), 0) == 0
libc.prctl(38, 1, 0, 0, 0)
assert libc.syscall(446, rs, 0) == 0
for p in sys.argv[2:]:
    try:
        os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))
        print(p, "made")
    except OSError as e:
        print(p, "refused")
PY
chmod a+r "$T/nested-ll.py"
run_sb run -r "$T/nested-ll.py" -- python3 "$T/nested-ll.py" a a/ok b/bad
if [ "$OUT" = no-landlock ]; then
	skip "a Landlock domain of the step's own" "no Landlock in this kernel"
elif [ "$OUT" = "$(printf 'a/ok made\nb/bad refused')" ] && [ ! -e "$T/w/b/bad" ]; then
	ok "a Landlock domain of the step's own: what it forbids stays forbidden, the control made"
else
	notok "a Landlock domain of the step's own: what it forbids stays forbidden" "rc=$RC $OUT" "$(head -3 "$T/out/err")"
fi
run_sb run -r "$T/nested-ll.py" -- python3 "$T/nested-ll.py" . .envrc ok2
[ "$OUT" = "$(printf '.envrc refused\nok2 made')" ] || [ "$OUT" = no-landlock ] &&
	ok "... and a protected name stays refused inside it, the control made" ||
	notok "... and a protected name stays refused inside it" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# a process under a Landlock domain of its own (any process of the step may
# take one) races its path's memory: the check reads a harmless name, the
# kernel would then open a hook in a nested checkout, which the net after
# the step does not look at. It landed before: its calls were let go on to
# the kernel. Now the domain's keeper makes them from the copy checked.
setup
git -C "$T/w" init -q sub && mkdir -p "$T/w/dec"
cat >"$T/flip.py" <<'PY'
import ctypes, os, struct, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
MAKE_REG = 1 << 8
rs = libc.syscall(444, ctypes.c_char_p(struct.pack("QQ", MAKE_REG, 0)), ctypes.c_size_t(16), 0)
if rs < 0:
    print("no-landlock")
    sys.exit(0)
root = os.open("/", os.O_PATH | os.O_DIRECTORY)
assert libc.syscall(445, rs, 1, ctypes.c_char_p(struct.pack("=Qi", MAKE_REG, root)), 0) == 0
libc.prctl(38, 1, 0, 0, 0)
assert libc.syscall(446, rs, 0) == 0  # a domain that refuses nothing the step may do
good, bad = b"dec/decoy-name-of-its-length\0", b"sub/.git/hooks/pre-commit\0\0\0\0"
buf = ctypes.create_string_buffer(good, len(good))
stop = []
def flip():
    while not stop:
        ctypes.memmove(buf, bad, len(bad))
        ctypes.memmove(buf, good, len(good))
t = threading.Thread(target=flip)
t.start()
for i in range(int(sys.argv[1])):
    fd = libc.open(buf, os.O_CREAT | os.O_WRONLY, 0o755)
    if fd >= 0:
        libc.close(fd)
    if os.path.exists("sub/.git/hooks/pre-commit"):
        break
stop.append(1)
t.join()
print("landed" if os.path.exists("sub/.git/hooks/pre-commit") else "held", i + 1)
PY
chmod a+r "$T/flip.py"
run_sb run -r "$T/flip.py" -- python3 "$T/flip.py" 20000
case $OUT in
no-landlock) skip "a hook raced by a process under a domain of its own" "no Landlock in this kernel" ;;
"held "*) [ ! -e "$T/w/sub/.git/hooks/pre-commit" ] && [ -e "$T/w/dec/decoy-name-of-its-length" ] &&
	ok "a process under a Landlock domain of its own races a hook into a nested checkout: none lands, the decoy is made ($OUT)" ||
	notok "a hook raced by a process under a domain of its own: none lands, the decoy is made" "$OUT" "$(ls "$T/w/dec" "$T/w/sub/.git/hooks" | head -5)" ;;
*) notok "a process under a Landlock domain of its own races a hook into a nested checkout: none lands" "rc=$RC $OUT" "$(head -3 "$T/out/err")" ;;
esac

# the race: a folder swapped for a symlink to .git/hooks while a thread makes a hook through it
setup
rm -f "$T/w/.git/hooks/pre-commit"
run_sb run -r "$T/live.py" -- python3 "$T/live.py" race 3000
case $OUT in
"race held "*) ok "a folder swapped for a symlink while a hook is made through it: none lands ($OUT)" ;;
*) notok "a folder swapped for a symlink while a hook is made through it: none lands" "$OUT" "$(head -3 "$T/out/err")" ;;
esac
# the same after another process of the step took a Landlock domain: the
# calls of a process outside that domain's line are still made by stepbox
# (those in it go on to the kernel, judged by name, and the net after)
setup
rm -f "$T/w/.git/hooks/pre-commit"
mkdir -p "$T/w/a"
run_sb run -r "$T/live.py" -r "$T/nested-ll.py" -- sh -c "python3 '$T/nested-ll.py' a a/x >/dev/null; python3 '$T/live.py' race 3000"
case $OUT in
"race held "* | no-landlock) ok "... and after another process took a Landlock domain of its own ($OUT)" ;;
*) notok "... and after another process took a Landlock domain of its own" "$OUT" "$(head -3 "$T/out/err")" ;;
esac

# what the live layer performs must answer as the kernel would: a FIFO written
# before its reader comes waits for it; a writer left waiting ends with the step
run_sb run --timeout 20 -- bash -c 'mkfifo f; (sleep 0.3; cat f) & echo tofifo >f; wait; rm f
	mkfifo g; (exec 3>g; echo never) & sleep 0.2; echo done'
[ "$RC" = 0 ] && [ "$OUT" = "$(printf 'tofifo\ndone')" ] &&
	ok "a FIFO opened to write before its reader: it waits, and the write lands" ||
	notok "a FIFO opened to write before its reader: it waits, and the write lands" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# the modes of what the live layer makes: each thread's umask as the kernel
# would apply it, through changes, a thread, a fork (compared with the same
# script run outside the sandbox)
cp "$TESTDIR/umask-modes.py" "$T/umask.py"
mkdir -p "$T/bare" && want=$(cd "$T/bare" && python3 "$T/umask.py")
find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
run_sb run -r "$T/umask.py" -- python3 "$T/umask.py"
[ -n "$want" ] && [ "$OUT" = "$want" ] && ok "umask: the modes made for the step are the kernel's ($OUT)" ||
	notok "umask: the modes made for the step are the kernel's" "got '$OUT', outside '$want'" "$(head -3 "$T/out/err")"

# a clone made and removed in one step (a build's checkout of a dependency):
# the gitdir is the step's own; the person's hooks beside it are still held
setup
run_sb run -- sh -c 'git clone -q . tmpc && rm -rf tmpc && echo removed; rm -rf .git/hooks 2>/dev/null || echo kept'
[ "$OUT" = "$(printf 'removed\nkept')" ] && [ ! -e "$T/w/tmpc" ] && [ "$(cat "$T/w/.git/hooks/pre-commit")" = keep ] &&
	ok "a clone the step made is removed whole; the person's hooks are not" ||
	notok "a clone the step made is removed whole; the person's hooks are not" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# a checkout in a folder of the grant: its .git moved away and back with a
# hook made meanwhile, or a folder with a hook moved in as a .git; a .git
# file made naming a gitdir of the step's with a hook, made before the
# folder was a gitdir (caught after the step: rc 123). The person's git outside runs nothing; the controls: a
# worktree added, a clone made and removed.
find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
(cd "$T/w" && git init -q && echo a >f && git add f && git commit -qm i && mkdir a &&
	git -C a init -q && echo b >a/g && git -C a add g && git -C a commit -qm i) || exit 1
run_sb run -- sh -c 'mv a/.git a/gd 2>/dev/null && echo moved-away
	mkdir -p tg/hooks && printf "#!/bin/sh\ntouch '"$M"'\n" >tg/hooks/pre-commit && chmod +x tg/hooks/pre-commit
	mkdir -p n && mv tg n/.git 2>/dev/null && echo moved-in
	mkdir -p ev/hooks && cp tg/hooks/pre-commit ev/hooks/ && mkdir -p ev/objects ev/refs &&
		echo "ref: refs/heads/main" >ev/HEAD
	mkdir d && echo "gitdir: ../ev" >d/.git && echo made-dotgit
	git worktree add -q wt 2>/dev/null && echo worktree
	git clone -q a c && rm -rf c && echo clone-removed'
(cd "$T/w/a" && echo x >>g && git add g && git commit -qm p >/dev/null 2>&1)
(cd "$T/w/d" && git status >/dev/null 2>&1)
[ "$OUT" = "$(printf 'made-dotgit\nworktree\nclone-removed')" ] && [ "$RC" = 123 ] && [ ! -e "$M" ] &&
	[ ! -e "$T/w/ev/hooks/pre-commit" ] && [ -d "$T/w/a/.git" ] &&
	ok "a nested checkout's .git not moved, none moved in; a .git file to a gitdir with a hook caught after; worktree and clone work" ||
	notok "a nested checkout's .git not moved, none moved in; a .git file to a gitdir with a hook caught after; worktree and clone work" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# the step's own gitdirs followed: one with a run key moved under a new name
# is judged where it went (rc 123); a name the step made and removed is its
# own no more, so the person's checkout moved there keeps its config; the
# control: a repository made, moved and removed
find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
(cd "$T/w" && git init -q && mkdir -p d/x && git -C d/x init -q a) || exit 1
run_sb run -- sh -c 'mkdir -p ev/.git/objects ev/.git/refs && echo "ref: refs/heads/main" >ev/.git/HEAD
	printf "[core]\n\tfsmonitor = \"touch '"$M"'; false\"\n" >ev/.git/config && mv ev sub && echo moved
	mkdir -p s/.git && rmdir s/.git s
	if mv d/x/a s 2>/dev/null; then rm s/.git/config 2>/dev/null || echo kept; mv s d/x/a
	else echo kept; fi # the checkout not moved at all: held the more
	git init -q c1 && mv c1 c2 && rm -rf c2 && echo control'
(cd "$T/w/sub" && git status >/dev/null 2>&1; cd "$T/w/d/x/a" && git status >/dev/null 2>&1)
[ "$OUT" = "$(printf 'moved\nkept\ncontrol')" ] && [ "$RC" = 123 ] && [ ! -e "$M" ] &&
	[ -f "$T/w/d/x/a/.git/config" ] && [ ! -e "$T/w/sub/.git/config" ] &&
	ok "a gitdir the step made is judged where it was moved; the person's checkout moved onto its old name is held" ||
	notok "a gitdir the step made is judged where it was moved; the person's checkout moved onto its old name is held" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# a .git never exchanged (renameat2 RENAME_EXCHANGE would leave its name to
# a file naming the step's gitdir, and the record to what left); a checkout
# moved into the step's own gitdir is not the step's; the controls: two
# plain files exchanged, a file of that checkout removed
find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
(cd "$T/w" && git init -q && mkdir -p p && git -C p init -q repo && echo k >p/repo/ctl &&
	echo keep >p/repo/.git/hooks/pre-commit) || exit 1
cat >"$T/xchg.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def xchg(a, b):
    r = libc.renameat2(-100, a.encode(), -100, b.encode(), 2)  # AT_FDCWD, RENAME_EXCHANGE
    return 0 if r == 0 else ctypes.get_errno()
os.makedirs("s"); open("s/.git", "w").write("gitdir: ../clean\n")
open("f", "w").write("gitdir: ../gd\n"); open("g", "w").write("g"); open("h", "w").write("h")
print("dotgit", xchg("f", "s/.git"), "plain", xchg("g", "h"))
PY
run_sb run -r "$T/xchg.py" -- sh -c 'python3 "$1"; git init -q own
	if mv p/repo own/.git/r 2>/dev/null; then
		{ rm own/.git/r/.git/hooks/pre-commit 2>/dev/null || echo hook-kept; } &&
			rm own/.git/r/ctl && echo ctl-removed
	else echo hook-kept; rm p/repo/ctl && echo ctl-removed; fi' sh "$T/xchg.py"
[ "$OUT" = "$(printf 'dotgit 13 plain 0\nhook-kept\nctl-removed')" ] &&
	{ [ -f "$T/w/own/.git/r/.git/hooks/pre-commit" ] || [ -f "$T/w/p/repo/.git/hooks/pre-commit" ]; } &&
	ok "a .git is never exchanged; a checkout moved into the step's gitdir keeps its hooks" ||
	notok "a .git is never exchanged; a checkout moved into the step's gitdir keeps its hooks" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# a config the person's .git/config includes, in the grant (a shared project
# config): written in place refused, a key that runs refused, a plain key
# set by git config (a rename, judged) made; the person's git status runs nothing
setup
printf '[user]\n\tname = p\n' >"$T/w/.gitconfig.project"
(cd "$T/w" && git config include.path ../.gitconfig.project) || exit 1
run_sb run -- sh -c 'echo "[core] fsmonitor = \"touch '"$M"'; false\"" >>.gitconfig.project 2>/dev/null || echo append-refused
	git config --file .gitconfig.project core.fsmonitor "touch '"$M"'; false" 2>/dev/null || echo key-refused
	git config --file .gitconfig.project user.email p@e && echo plain-key'
(cd "$T/w" && git status >/dev/null 2>&1)
[ "$OUT" = "$(printf 'append-refused\nkey-refused\nplain-key')" ] && [ ! -e "$M" ] &&
	grep -q "p@e" "$T/w/.gitconfig.project" &&
	ok "a config .git/config includes: appended and a run key refused, a plain key set" ||
	notok "a config .git/config includes: appended and a run key refused, a plain key set" "rc=$RC $OUT" "$(head -3 "$T/out/err")"

# the calls performed for the step move nothing from under a bind of its
# namespace (a read grant inside the write grant); the control: a sibling moved
if [ "$BACKEND" != landlock ]; then
	find "$T/w" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
	mkdir -p "$T/w/ro" "$T/w/rw" && echo keep >"$T/w/ro/file"
	run_sb run -r "$T/w/ro" -- sh -c 'mv ro ro2 || echo busy; rm -f ro/file || echo kept; mv rw rw2 && echo moved'
	[ "$OUT" = "$(printf 'busy\nkept\nmoved')" ] && [ "$(cat "$T/w/ro/file")" = keep ] && [ -d "$T/w/rw2" ] &&
		ok "a read grant bound inside the write grant is not moved or emptied; a sibling is moved" ||
		notok "a read grant bound inside the write grant is not moved or emptied; a sibling is moved" "$OUT" "$(ls "$T/w")"
fi

# --explain names it protected, with the unprotect that would allow it
setup
run_sb run --explain -- sh -c 'echo x >.envrc'
grep -q -- "--unprotect .envrc" "$T/out/err" && ok "--explain names the refusal with its unprotect" ||
	notok "--explain names the refusal with its unprotect" "$(cat "$T/out/err")"
