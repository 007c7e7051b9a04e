#!/bin/bash
# t0190: everyday tools on a real HOME (issue 11). A HOME full of the user's
# dotfiles (an identity, a registry token, ssh hosts, pip and cargo settings,
# shell start-up files): none of it reaches the step unless granted file by
# file, git, npm and pip work and their config writes persist for the
# workflow, and npm keeps its own system-wide npmrc.
# shellcheck disable=SC2088 # "~/..." is the text stepbox prints
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
unset PIP_CONFIG_FILE PIP_INDEX_URL PIP_USER npm_config_userconfig NPM_CONFIG_USERCONFIG \
	npm_config_globalconfig NPM_CONFIG_GLOBALCONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM \
	XDG_CONFIG_HOME XDG_DATA_HOME GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
	GIT_COMMITTER_EMAIL EMAIL
export PIP_DISABLE_PIP_VERSION_CHECK=1 npm_config_update_notifier=false GIT_CONFIG_NOSYSTEM=1

# the user's HOME, as a deployment has it
H="$T/rhome"
mkdir -p "$H/.ssh" "$H/.config/pip" "$H/.cargo"
printf '[user]\n\tname = Real User\n\temail = real@example.org\n' >"$H/.gitconfig"
printf '//registry.example.org/:_authToken=npm_SECRETTOKEN\nfund=true\n' >"$H/.npmrc"
chmod 600 "$H/.npmrc"
printf 'Host build\n\tHostName build.example.org\n\tUser deploy\n' >"$H/.ssh/config"
printf '[global]\ntimeout = 42\n' >"$H/.config/pip/pip.conf"
printf 'echo BASHRC-RAN\n' >"$H/.bashrc"
printf 'echo PROFILE-RAN\n' >"$H/.profile"
printf '[net]\nretry = 9\n' >"$H/.cargo/config.toml"
export HOME="$H"
P="$T/wf/.sandbox-cache"
mkdir -p "$T/wf/r1" "$T/wf/r2"

# the control: the files are there and readable outside
[ -r "$H/.npmrc" ] && [ -r "$H/.gitconfig" ] && ok "control: the user's dotfiles are readable outside" ||
	notok "control: the user's dotfiles are readable outside"

in_box "HOME exists inside" 'test -d "$HOME"'

run_sb run -- sh -c 'cat "$HOME/.npmrc" 2>&1; cat "$HOME/.gitconfig" 2>&1; echo END'
if echo "$OUT" | grep -q END && ! echo "$OUT" | grep -q -e SECRETTOKEN -e "Real User"; then
	ok "the user's dotfiles do not reach the step"
else
	notok "the user's dotfiles do not reach the step" "$OUT"
fi
if [ "$BACKEND" != landlock ]; then
	echo "$OUT" | grep -q "No such file or directory" && ok "under the namespaces an ungranted dotfile is absent (ENOENT)" ||
		notok "under the namespaces an ungranted dotfile is absent (ENOENT)" "$OUT"
fi

# git: works, and config --global persists for the workflow
run_sb run -C "$T/wf/r1" --persist "$P" -- sh -c '
git config --global user.name "Step Bot" && git config --global user.email bot@example.org &&
git init -q repo && git -C repo commit -q --allow-empty -m one && git -C repo log --format="%an <%ae>"'
[ "$RC" = 0 ] && [ "$OUT" = "Step Bot <bot@example.org>" ] && ok "git init, config --global and commit in a step" ||
	notok "git init, config --global and commit in a step" "rc=$RC" "$OUT" "$ERR"
run_sb run -C "$T/wf/r2" --persist "$P" -- git config --global user.name
[ "$RC" = 0 ] && [ "$OUT" = "Step Bot" ] && ok "git config --global persists into the next run of the workflow" ||
	notok "git config --global persists into the next run of the workflow" "rc=$RC" "$OUT"
[ "$(git config --file "$H/.gitconfig" user.name)" = "Real User" ] && ok "the user's own .gitconfig is untouched" ||
	notok "the user's own .gitconfig is untouched"

# a commit without the user's identity says why, in --explain and the report;
# --home-file .gitconfig (below) is its positive control
run_sb run -C "$T/wf/r1" --explain --report "$T/out/unseen.json" -- sh -c 'git init -q noid && git -C noid commit -q --allow-empty -m x'
[ "$RC" != 0 ] && grep -q "unable to auto-detect email address" "$T/out/err" &&
	grep -A3 "dotfiles of HOME the step's tools ran without" "$T/out/err" | grep -qF '~/.gitconfig (git commits carry no identity' &&
	python3 -c 'import json, sys; u = json.load(open(sys.argv[1]))["home_unseen"]; assert any(x.startswith("~/.gitconfig (") for x in u), u' "$T/out/unseen.json" &&
	ok "a commit without the user's identity: --explain and the report name ~/.gitconfig" ||
	notok "a commit without the user's identity: --explain and the report name ~/.gitconfig" "rc=$RC" "$ERR"
rm -rf "$T/wf/r1/noid"
# --backend none hides nothing: git reads the user's own file (routing moves
# where tools write, never what they read)
if [ "$BACKEND" = stacked ]; then
	run_sb run -C "$T/wf/r1" --backend none -- sh -c 'echo "global=${GIT_CONFIG_GLOBAL:-unset}"; git config user.email'
	[ "$RC" = 0 ] && [ "$OUT" = "$(printf 'global=unset\nreal@example.org')" ] &&
		ok "--backend none: git reads the user's .gitconfig (nothing routed over it)" ||
		notok "--backend none: git reads the user's .gitconfig (nothing routed over it)" "rc=$RC" "$OUT"
fi

# the user's identity handed over on purpose, read-only: a file grant, or home_files
run_sb run -C "$T/wf/r1" --home-file .gitconfig -- sh -c 'git init -q id && git -C id commit -q --allow-empty -m x && git -C id log --format="%an"; git config --global user.name changed 2>/dev/null && echo WROTE; true'
[ "$RC" = 0 ] && [ "$(echo "$OUT" | head -1)" = "Real User" ] && ! echo "$OUT" | grep -q WROTE &&
	ok "--home-file .gitconfig: commits carry the user's identity, the file stays read-only" ||
	notok "--home-file .gitconfig: commits carry the user's identity, the file stays read-only" "rc=$RC" "$OUT" "$ERR"
echo '{"version": 1, "home_files": [".gitconfig", ".ssh/config"]}' >"$T/home-policy.json"
# (ssh itself reads the passwd entry's home, not $HOME: the file is checked directly)
run_sb run -C "$T/wf/r1" -p "$T/home-policy.json" -- sh -c 'git config --global user.name; grep HostName "$HOME/.ssh/config"; cat "$HOME/.npmrc" 2>/dev/null; cat "$HOME/.config/pip/pip.conf" 2>/dev/null; true'
if [ "$RC" = 0 ] && echo "$OUT" | grep -qx "Real User" && echo "$OUT" | grep -q "HostName build.example.org" &&
	! echo "$OUT" | grep -q -e SECRETTOKEN -e timeout; then
	ok "home_files in a policy: those files only (git identity, ssh hosts), not the rest"
else
	notok "home_files in a policy: those files only (git identity, ssh hosts), not the rest" "rc=$RC" "$OUT" "$ERR"
fi
expect "home_files must stay inside HOME" 125 "without '..'" -- run --home-file ../etc/passwd -- true
# a folder holding keys is never handed over whole; its files one by one are
mkdir -p "$H/.ssh"
echo zq-key >"$H/.ssh/id_ed25519"
run_sb run -C "$T/wf/r1" --home-file .ssh -- cat "$H/.ssh/id_ed25519"
[ "$RC" = 125 ] && grep -q "folder holding keys or credentials" "$T/out/err" && grep -q "one by one" "$T/out/err" &&
	! echo "$OUT" | grep -q zq-key && ok "--home-file .ssh (a key inside): 125, named, never read" ||
	notok "--home-file .ssh (a key inside): 125, named, never read" "rc=$RC" "$OUT"
expect "--home-file . (HOME itself): 125, named" 125 "is HOME itself" -- run -C "$T/wf/r1" --home-file . -- true
expect "--home-file ./ (HOME itself): 125" 125 "is HOME itself" -- run -C "$T/wf/r1" --home-file ./ -- true
in_box "--home-file .ssh/config: that file is read (the control)" "grep -q HostName '$H/.ssh/config'" \
	-C "$T/wf/r1" --home-file .ssh/config

# npm: config set persists, the user's token is never seen, the system npmrc is read
# (the user's .npmrc says fund=true, npm's default too: false can only be the step's own)
run_sb run -C "$T/wf/r1" --persist "$P" -- npm config set fund=false
run_sb run -C "$T/wf/r2" --persist "$P" -- sh -c 'npm config get fund; npm config get userconfig; npm config list 2>/dev/null | grep -c registry.example.org; npm config get globalconfig'
node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
want_gc="${node_prefix%/}/etc/npmrc"
if [ "$RC" = 0 ] && [ "$(echo "$OUT" | sed -n 1p)" = false ] && [ "$(echo "$OUT" | sed -n 2p)" = "$P/config/npmrc" ] &&
	[ "$(echo "$OUT" | sed -n 3p)" = 0 ] && [ "$(echo "$OUT" | sed -n 4p)" = "$want_gc" ]; then
	ok "npm config set persists, the user's .npmrc is not read, globalconfig stays npm's own ($want_gc)"
else
	notok "npm config set persists, the user's .npmrc is not read, globalconfig stays npm's own ($want_gc)" "rc=$RC" "$OUT" "$ERR"
fi
if [ -s "$want_gc" ]; then
	key=$(sed -n 's/^\([a-z-]*\)=.*/\1/p' "$want_gc" | head -1)
	want=$(sed -n "s/^$key=//p" "$want_gc" | head -1)
	if [ -n "$key" ]; then
		run_sb run -C "$T/wf/r1" --persist "$P" -- npm config get "$key"
		[ "$OUT" = "$want" ] && ok "the host's system-wide npmrc is in force in a step ($key)" ||
			notok "the host's system-wide npmrc is in force in a step ($key)" "got '$OUT', want '$want'"
	fi
else
	skip "the host's system-wide npmrc" "npm has none here ($want_gc)"
fi

# pip: config set persists; the user's pip.conf is not read
run_sb run -C "$T/wf/r1" --persist "$P" -- $PY -m pip config set global.timeout 7
run_sb run -C "$T/wf/r2" --persist "$P" -- $PY -m pip config get global.timeout
[ "$RC" = 0 ] && [ "$OUT" = 7 ] && ok "pip config set persists for the workflow (not the user's 42)" ||
	notok "pip config set persists for the workflow (not the user's 42)" "rc=$RC" "$OUT" "$ERR"

# without any writable folder: git still works, on an empty global config
run_sb run --workdir-readonly -- sh -c 'git config --global --list 2>&1; git --version'
[ "$RC" = 0 ] && ! echo "$OUT" | grep -q -e "Real User" -e "unknown error" && ok "read-only step: git reads an empty global config, never the user's" ||
	notok "read-only step: git reads an empty global config, never the user's" "rc=$RC" "$OUT"

# shells: the user's start-up files do not run
run_sb run -- bash -lc 'echo LOGIN-OK'
if [ "$RC" = 0 ] && echo "$OUT" | grep -q LOGIN-OK && ! echo "$OUT" | grep -q PROFILE-RAN; then
	if [ "$BACKEND" = landlock ] && grep -q "Permission denied" "$T/out/err"; then
		ok "bash -l: the user's .profile does not run (Landlock alone: bash says it cannot read it)"
	else
		ok "bash -l: the user's .profile does not run, and nothing is said"
	fi
else
	notok "bash -l: the user's .profile does not run" "rc=$RC" "$OUT" "$ERR"
fi

# guide and doctor say what HOME is, where config goes, what is left out
run_sb guide --persist "$P"
if echo "$OUT" | grep -q "^HOME: \`$H\`" && echo "$OUT" | grep -q "git config --global"; then
	ok "guide: what HOME is and where config writes go"
else
	notok "guide: what HOME is and where config writes go" "$(echo "$OUT" | head -12)"
fi
run_sb doctor
echo "$OUT" | grep "HOME dotfiles" | grep -qF '~/.gitconfig (git commits carry no identity' &&
	echo "$OUT" | grep "HOME dotfiles" | grep -qF '~/.npmrc' &&
	ok "doctor names the dotfiles left out, and what each breaks" ||
	notok "doctor names the dotfiles left out, and what each breaks" "$(echo "$OUT" | grep -A1 dotfiles)"

# --explain: the one file, never HOME
run_sb run --explain -- sh -c 'cat "$HOME/.gitconfig" >/dev/null 2>&1; true'
if grep -q "read '$H/.gitconfig': a file of HOME.*--home-file .gitconfig" "$T/out/err" && ! grep -q -- "--read $H\$" "$T/out/err"; then
	ok "--explain: a denied dotfile is granted by name, never all of HOME"
else
	notok "--explain: a denied dotfile is granted by name, never all of HOME" "$ERR"
fi
