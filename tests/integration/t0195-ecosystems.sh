#!/bin/bash
# t0195: the two-run proof for every ecosystem stepbox routes (issue 11):
# run 1 installs or builds into the persistent folder P, run 2 in a fresh run
# folder uses it with no network. Real tools from Debian's packages
# (scripts/deps.sh --test), or from the npm registry (skipped without it).
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
unset GOPATH GOCACHE GOFLAGS GOPROXY CARGO_HOME RUSTUP_HOME GEM_HOME GEM_PATH PIPX_HOME \
	PIPX_BIN_DIR PIP_INDEX_URL PIP_FIND_LINKS PIP_CONFIG_FILE npm_config_registry
export PIP_DISABLE_PIP_VERSION_CHECK=1 npm_config_update_notifier=false npm_config_fund=false \
	npm_config_audit=false GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod
# a HOME with the user's git identity in it: cargo's git library reads it
printf '[user]\n\tname = Real User\n' >"$HOME/.gitconfig"

P="$T/wf/.sandbox-cache"
src="$T/src"
mkdir -p "$src" "$T/wf/r1" "$T/wf/r2"
# run N: a fresh run folder each time, the same P; run 2 has no network
run1() { rm -rf "$T/wf/r1"; mkdir -p "$T/wf/r1"; run_sb run -C "$T/wf/r1" -r "$src" --persist "$P" -- sh -c "$1"; }
run2() { rm -rf "$T/wf/r2"; mkdir -p "$T/wf/r2"; run_sb run -C "$T/wf/r2" -r "$src" --persist "$P" --net none -- sh -c "$1"; }
need() { # TOOL: a Debian-packaged tool at its Debian path, or skip
	[ -x "/usr/bin/$1" ] && return 0
	skip "$2" "/usr/bin/$1 is not installed (scripts/deps.sh --test installs it)"
	return 1
}

# go: go install persists its binary, go build reuses GOCACHE. Both runs
# build the read-only source where it is: a compile's cache key holds its
# folder, and -trimpath (which drops it) would rebuild the standard library
# Debian ships built (5 s of a 2-core machine, six times a suite).
if need go "go: install and build cache"; then
	mkdir -p "$src/gohello"
	printf 'module example.org/gohello\n\ngo 1.19\n' >"$src/gohello/go.mod"
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("gohello ran") }\n' >"$src/gohello/main.go"
	run1 "w=\$PWD && cd '$src/gohello' && go build -o \$w/hello . && go install . && \$w/hello"
	if [ "$RC" = 0 ] && [ "$OUT" = "gohello ran" ] && [ -x "$P/go/bin/gohello" ] && [ -x "$T/wf/r1/hello" ]; then
		run2 "w=\$PWD && cd '$src/gohello' && go build -x -o \$w/hello . 2>&1 | grep -c '/compile ' ; gohello"
		if [ "$RC" = 0 ] && [ "$(echo "$OUT" | head -1)" = 0 ] && echo "$OUT" | grep -q "gohello ran"; then
			ok "go: run 2 finds go install's binary and rebuilds from GOCACHE (nothing compiled)"
		else
			notok "go: run 2 finds go install's binary and rebuilds from GOCACHE (nothing compiled)" "rc=$RC" "$OUT" "$ERR"
		fi
	else
		notok "go: run 1 builds and installs into P" "rc=$RC" "$OUT" "$ERR"
	fi
fi

# cargo: cargo new (its git library reads HOME's .gitconfig), install, build --offline
if need cargo "cargo: new, install and build --offline"; then
	run1 "cargo new -q cargohello && cd cargohello && cargo build -q && cargo install -q --path . && ./target/debug/cargohello"
	if [ "$RC" = 0 ] && [ "$OUT" = "Hello, world!" ] && [ -x "$P/cargo/bin/cargohello" ]; then
		cp -r "$T/wf/r1/cargohello" "$src/"
		rm -rf "$src/cargohello/target"
		run2 "cp -r '$src/cargohello' . && cd cargohello && cargo build -q --offline && ./target/debug/cargohello && cargohello"
		[ "$RC" = 0 ] && [ "$(echo "$OUT" | grep -c 'Hello, world!')" = 2 ] &&
			ok "cargo: new and install in run 1, build --offline and the installed binary in run 2" ||
			notok "cargo: new and install in run 1, build --offline and the installed binary in run 2" "rc=$RC" "$OUT" "$ERR"
	else
		notok "cargo: run 1 runs cargo new, build and install" "rc=$RC" "$OUT" "$ERR"
	fi
fi

# cargo with a git dependency: a local repository read through a read grant.
# libgit2 opens cargo's git database and skips HOME's .gitconfig only when
# access(R_OK) says it is unreadable (under Landlock alone the supervisor
# answers access). Control: the .gitconfig itself stays unreadable.
if need cargo "cargo: a git dependency" && need git "cargo: a git dependency"; then
	mkdir -p "$src/rtdep/src" "$src/rtapp/src"
	printf '[package]\nname = "rtdep"\nversion = "0.1.0"\nedition = "2021"\n' >"$src/rtdep/Cargo.toml"
	printf 'pub fn hi() -> &%sstatic str { "rtdep works" }\n' "'" >"$src/rtdep/src/lib.rs"
	(cd "$src/rtdep" && git init -q && git add . &&
		git -c user.name=t -c user.email=t@example.org commit -qm init) >/dev/null 2>&1
	printf '[package]\nname = "rtapp"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nrtdep = { git = "file://%s/rtdep" }\n' \
		"$src" >"$src/rtapp/Cargo.toml"
	printf 'fn main() { println!("{}", rtdep::hi()); }\n' >"$src/rtapp/src/main.rs"
	gitdep="cp -r '$src/rtapp' . && cd rtapp && cargo build -q && ./target/debug/rtapp"
	run1 "$gitdep"
	if [ "$RC" = 0 ] && [ "$OUT" = "rtdep works" ] && ls -d "$P"/cargo/git/db/rtdep-* >/dev/null 2>&1; then
		run2 "$gitdep; if cat \"\$HOME/.gitconfig\" >/dev/null 2>&1; then echo GITCONFIG-READ; fi"
		[ "$RC" = 0 ] && [ "$OUT" = "rtdep works" ] &&
			ok "cargo: a git dependency (file://, a read grant) in run 1 and, with no network, run 2; ~/.gitconfig still unreadable" ||
			notok "cargo: a git dependency in run 2, ~/.gitconfig still unreadable" "rc=$RC" "$OUT" "$ERR"
	else
		notok "cargo: run 1 builds with a git dependency into P/cargo/git" "rc=$RC" "$OUT" "$ERR"
	fi
fi

# gem: a local gem with an executable, installed into GEM_HOME
if need gem "gem: install and require"; then
	mkdir -p "$src/sbgem/lib" "$src/sbgem/bin"
	printf 'module Sbgem\n  def self.hi\n    "sbgem works"\n  end\nend\n' >"$src/sbgem/lib/sbgem.rb"
	printf '#!/usr/bin/env ruby\nrequire "sbgem"\nputs Sbgem.hi\n' >"$src/sbgem/bin/sbgem"
	chmod 755 "$src/sbgem/bin/sbgem"
	cat >"$src/sbgem/sbgem.gemspec" <<'GS'
Gem::Specification.new do |s|
  s.name = "sbgem"
  s.version = "1.0.0"
  s.summary = "stepbox test gem"
  s.authors = ["stepbox"]
  s.files = ["lib/sbgem.rb", "bin/sbgem"]
  s.executables = ["sbgem"]
  s.license = "MIT"
end
GS
	(cd "$src/sbgem" && gem build -q sbgem.gemspec >/dev/null 2>&1)
	run1 "gem install --local --no-document '$src/sbgem/sbgem-1.0.0.gem' >/dev/null && sbgem"
	if [ "$RC" = 0 ] && [ "$OUT" = "sbgem works" ]; then
		run2 "sbgem && ruby -e 'require \"sbgem\"; puts Sbgem.hi'"
		[ "$RC" = 0 ] && [ "$(echo "$OUT" | grep -c 'sbgem works')" = 2 ] &&
			ok "gem: installed in run 1, its command and require work in run 2" ||
			notok "gem: installed in run 1, its command and require work in run 2" "rc=$RC" "$OUT" "$ERR"
	else
		notok "gem: run 1 installs a local gem" "rc=$RC" "$OUT" "$ERR"
	fi
	# --user-install goes to Gem.user_dir: beneath XDG_DATA_HOME, routed into P
	run1 "gem install --user-install --local --no-document '$src/sbgem/sbgem-1.0.0.gem' >/dev/null && ruby -e 'puts Gem.user_dir'"
	if [ "$RC" = 0 ] && echo "$OUT" | grep -q "^$P/share/gem/" && ls -d "$P"/share/gem/ruby/*/gems/sbgem-1.0.0 >/dev/null 2>&1; then
		ok "gem install --user-install: into P (XDG_DATA_HOME), on every backend"
	else
		notok "gem install --user-install: into P (XDG_DATA_HOME), on every backend" "rc=$RC" "$OUT" "$ERR"
	fi
fi

# pipx: a local wheel into its own venv, with no index (pip's own wheels from Debian)
if need pipx "pipx: install"; then
	$PY "$TESTDIR/mkwheel.py" "$src/whl" sbtool 1.0 sbtool >/dev/null
	run1 "PIP_NO_INDEX=1 PIP_FIND_LINKS=/usr/share/python-wheels pipx install '$src/whl/sbtool-1.0-py3-none-any.whl' >/dev/null 2>&1; sbtool"
	if [ "$RC" = 0 ] && [ "$OUT" = "sbtool 1.0 works" ]; then
		run2 "sbtool && pipx list --short"
		[ "$RC" = 0 ] && echo "$OUT" | grep -q "sbtool 1.0 works" && echo "$OUT" | grep -q "^sbtool 1.0" &&
			ok "pipx: installed in run 1, its command and pipx list in run 2" ||
			notok "pipx: installed in run 1, its command and pipx list in run 2" "rc=$RC" "$OUT" "$ERR"
	else
		notok "pipx: run 1 installs a local wheel" "rc=$RC" "$OUT" "$ERR"
	fi
fi

# the npm registry's tools: yarn, pnpm, esbuild (a native binary), installed once
if ! timeout 20 npm ping >/dev/null 2>&1; then
	skip "yarn, pnpm, esbuild, bun and deno from the npm registry" "the npm registry cannot be reached"
	exit 0
fi
# one download cache for this user's runs of the suite (bun and deno are large)
npmcache="${TMPDIR:-/tmp}/stepbox-npm-cache-$(id -u)"
mkdir -p "$npmcache"
rm -rf "$T/wf/r1"
mkdir -p "$T/wf/r1"
run_sb run -C "$T/wf/r1" -r "$src" --persist "$P" -w "$npmcache" --env npm_config_cache="$npmcache" -- sh -c \
	"npm install -g yarn@1 pnpm@9 esbuild bun deno >/dev/null 2>&1 && yarn --version && pnpm --version && esbuild --version && bun --version && deno --version | head -1"
if [ "$RC" = 0 ] && [ "$(echo "$OUT" | wc -l)" = 5 ]; then
	run2 "yarn --version && pnpm --version && esbuild --version && echo 'console.log(1+1)' | esbuild --minify &&
		echo 'console.log(2+2)' >x.js && bun x.js && deno eval 'console.log(3+3)'"
	[ "$RC" = 0 ] && echo "$OUT" | grep -q "console.log(2)" && echo "$OUT" | grep -qx 4 && echo "$OUT" | grep -qx 6 &&
		ok "yarn, pnpm, esbuild, bun and deno (native binaries): installed in run 1, run offline in run 2" ||
		notok "yarn, pnpm, esbuild, bun and deno (native binaries): installed in run 1, run offline in run 2" "rc=$RC" "$OUT" "$ERR"
	# yarn 1 reads the routed npmrc, never the user's (unreadable under Landlock alone)
	printf '//registry.example.org/:_authToken=x\n' >"$HOME/.npmrc"
	chmod 600 "$HOME/.npmrc"
	mkdir -p "$src/yproj"
	printf '{"name":"yproj","version":"1.0.0","license":"MIT"}\n' >"$src/yproj/package.json"
	run2 "cp -r '$src/yproj' . && cd yproj && yarn install --offline >/dev/null && echo YARN-OK"
	if [ "$RC" = 0 ] && echo "$OUT" | grep -q YARN-OK; then
		ok "yarn 1 install with the user's .npmrc present: not read, no EACCES"
	elif [ "$BACKEND" = landlock ] && is_root && grep -q "EACCES.*\.npmrc" "$T/out/err"; then
		# yarn 1 run by root also reads $HOME/.npmrc, whatever npm_config_userconfig says
		skip "yarn 1 as root with the user's .npmrc" "Landlock alone cannot hide it, and yarn 1 reads it as root regardless of npm_config_userconfig (docs/environment.md)"
	else
		notok "yarn 1 install with the user's .npmrc present: not read, no EACCES" "rc=$RC" "$OUT" "$ERR"
	fi
else
	notok "npm install -g yarn pnpm esbuild bun deno in run 1" "rc=$RC" "$OUT" "$ERR"
fi

# pnpm, twice on the workflow cache: run 1 adds a package, run 2 (no network)
# installs it from the lockfile out of the store. pnpm 9 (JavaScript) keeps
# the store in PNPM_HOME; pnpm 12 (Rust) beside the project's mount unless
# pnpm_config_store_dir says (the run folder under the namespaces, lost with
# it), and its store locks in XDG_RUNTIME_DIR, else /tmp (not writable under
# Landlock alone). Controls: the store is P's, the locks the run folder's.
mkdir -p "$src/pnproj"
printf '{"name":"pnproj","version":"1.0.0","license":"MIT"}\n' >"$src/pnproj/package.json"
for v in 9 12; do
	Pv="$T/pn$v/.sandbox-cache"
	mkdir -p "$T/pn$v/r1" "$T/pn$v/r2"
	run_sb run -C "$T/pn$v/r1" -r "$src" --persist "$Pv" -w "$npmcache" -- sh -c \
		"npm install -g --cache '$npmcache' pnpm@$v >/dev/null 2>&1 && cp -r '$src/pnproj' . && cd pnproj &&
		pnpm add is-number@7 >/dev/null && pnpm store path && ls \"\$XDG_RUNTIME_DIR\" && echo \"RUNTIME=\$XDG_RUNTIME_DIR\""
	if [ "$RC" != 0 ] || ! echo "$OUT" | grep -q "^$Pv/pnpm/store/" || ! echo "$OUT" | grep -qx "RUNTIME=$T/pn$v/r1/.tmp/run" ||
		{ [ "$v" = 12 ] && ! echo "$OUT" | grep -q '^pnpm-store-operation-locks-'; }; then
		notok "pnpm $v add in run 1: the store in P, its locks in the run folder" "rc=$RC" "$OUT" "$ERR"
		continue
	fi
	cp "$T/pn$v/r1/pnproj/package.json" "$T/pn$v/r1/pnproj/pnpm-lock.yaml" "$src/pnproj/"
	run_sb run -C "$T/pn$v/r2" -r "$src" --persist "$Pv" --net none -- sh -c \
		"cp -r '$src/pnproj' . && cd pnproj && pnpm install --offline --frozen-lockfile >/dev/null &&
		node -e 'console.log(require(\"is-number\")(7))' && pnpm add --offline is-number@7 >/dev/null && echo ADD-OK"
	[ "$RC" = 0 ] && echo "$OUT" | grep -qx true && echo "$OUT" | grep -qx ADD-OK &&
		ok "pnpm $v: add in run 1, install and add --offline from P's store in run 2 (no network)" ||
		notok "pnpm $v: add in run 1, install and add --offline from P's store in run 2 (no network)" "rc=$RC" "$OUT" "$ERR"
	rm -f "$src/pnproj/pnpm-lock.yaml"
	printf '{"name":"pnproj","version":"1.0.0","license":"MIT"}\n' >"$src/pnproj/package.json"
done
