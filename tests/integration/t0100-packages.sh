#!/bin/bash
# t0100: package managers inside a step (field notes, incidents 2 and 3), with
# Debian's externally managed /usr/bin/python3, real pip, venv, npm and node.
# Packages are built here: a wheel is a zip file, an npm package a tarball.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
# The host's own settings must not decide a result.
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE PIP_REQUIRE_VIRTUALENV PIP_USER \
	PIP_BREAK_SYSTEM_PACKAGES PYTHONPATH npm_config_userconfig NPM_CONFIG_USERCONFIG \
	npm_config_registry NPM_CONFIG_REGISTRY GOPATH CARGO_HOME
export PIP_DISABLE_PIP_VERSION_CHECK=1 npm_config_update_notifier=false npm_config_fund=false \
	npm_config_audit=false
chmod 555 "$HOME" # HOME exists but is not writable, and no grant covers it

src="$T/src"
mkdir -p "$src/npm/bin" "$T/wf/runs/1" "$T/wf/runs/2"
$PY "$TESTDIR/mkwheel.py" "$src/wheels" sbdemo 1.0 sbdemo-cli >/dev/null
printf '{"name":"sbhello","version":"1.0.0","bin":{"sbhello":"bin/sbhello.js"}}\n' >"$src/npm/package.json"
printf '#!/usr/bin/env node\nconsole.log("sbhello ran");\n' >"$src/npm/bin/sbhello.js"
chmod 755 "$src/npm/bin/sbhello.js"
(cd "$src/npm" && npm_config_cache="$T/outside-npm" npm pack --silent --pack-destination "$src" >/dev/null 2>&1)
tgz="$src/sbhello-1.0.0.tgz"
[ -f "$tgz" ] || notok "npm pack made a tarball"

$PY -c 'import sysconfig, os, sys; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)' &&
	ok "Debian's python3 is externally managed (PEP 668)" || skip "PEP 668 marker" "this python3 is not externally managed"

# 1. only the run folder writable: incident 2's routing
run1="$T/wf/runs/1"
run_sb run -C "$run1" -r "$src" -- sh -c "
$PY -m pip install --user --no-index --find-links '$src/wheels' sbdemo &&
$PY -c 'import sbdemo, sys; print(sbdemo.__file__); print(sbdemo.hello())' &&
sbdemo-cli"
if [ "$RC" = 0 ] && echo "$OUT" | grep -q "^$run1/.local/lib/python3.*/site-packages/sbdemo/__init__.py$" &&
	echo "$OUT" | grep -q "sbdemo 1.0 works"; then
	ok "pip install --user into the run folder, import, console script on PATH"
else notok "pip install --user into the run folder, import, console script on PATH" "rc=$RC" "$OUT"; fi

run_sb run -C "$run1" -r "$src" -- sh -c "
$PY -m venv venv && venv/bin/python -m pip install --no-index --find-links '$src/wheels' sbdemo &&
venv/bin/python -c 'import sbdemo; print(sbdemo.hello())'"
[ "$RC" = 0 ] && echo "$OUT" | grep -q "sbdemo 1.0 works" && ok "python3 -m venv, and pip inside the venv" || notok "python3 -m venv, and pip inside the venv" "rc=$RC" "$OUT"

run_sb run -C "$run1" -r "$src" -- sh -c "npm install '$tgz' && npx sbhello && npm install -g '$tgz' && command -v sbhello && sbhello"
if [ "$RC" = 0 ] && echo "$OUT" | grep -q "^$run1/.local/bin/sbhello$" && [ "$(echo "$OUT" | grep -c 'sbhello ran')" = 2 ]; then
	ok "npm install and npm install -g of a local tarball, bin on PATH"
else notok "npm install and npm install -g of a local tarball, bin on PATH" "rc=$RC" "$OUT"; fi
[ -z "$(ls -A "$HOME")" ] && ok "nothing written to HOME" || notok "nothing written to HOME" "$(ls -A "$HOME")"

# 2. the two-run proof (incident 3): installs persist in .sandbox-cache
cache="$T/wf/.sandbox-cache"
run_sb run -C "$run1" -w "$cache" -r "$src" -- sh -c "
$PY -m pip install --user --no-index --find-links '$src/wheels' sbdemo &&
npm install -g '$tgz' && echo TMPDIR=\$TMPDIR"
[ "$RC" = 0 ] && echo "$OUT" | grep -q "TMPDIR=$run1/.tmp" && ok "run 1 installs into the persistent folder, scratch stays in the run folder" ||
	notok "run 1 installs into the persistent folder, scratch stays in the run folder" "rc=$RC" "$OUT"
rm -rf "$run1" "$src"
run2="$T/wf/runs/2"
run_sb run -C "$run2" -w "$cache" -- sh -c "
$PY -m pip install --user --no-index sbdemo &&
$PY -c 'import sbdemo; print(sbdemo.hello())' && sbdemo-cli && sbhello"
if [ "$RC" = 0 ] && echo "$OUT" | grep -q "sbdemo 1.0 works" && echo "$OUT" | grep -q "sbhello ran"; then
	ok "run 2 in a fresh run folder: pip --no-index, import and npm bin, from the persistent folder"
else notok "run 2 in a fresh run folder: pip --no-index, import and npm bin, from the persistent folder" "rc=$RC" "$OUT"; fi
[ -f "$cache/CACHEDIR.TAG" ] && [ ! -e "$cache/.tmp" ] && ok "the persistent folder is tagged and holds no scratch" || notok "the persistent folder is tagged and holds no scratch"

# 3. with no write grant at all, nothing is routed
mkdir -p "$T/ro"
run_sb run -C "$T/ro" --workdir-readonly -- sh -c 'echo "T=${TMPDIR:-unset} P=${PYTHONUSERBASE:-unset} B=${PIP_BREAK_SYSTEM_PACKAGES:-unset}"'
[ "$OUT" = "T=unset P=unset B=unset" ] && ok "no write grant: nothing routed" || notok "no write grant: nothing routed" "$OUT"
run_sb run -C "$T/ro" --workdir-readonly -- $PY -m pip install --user --no-index sbdemo
[ "$RC" != 0 ] && ok "no write grant: pip fails as it would without stepbox" || notok "no write grant: pip fails as it would without stepbox"

# 4. the npm registry: run 1 online, run 2 offline from the persistent cache
if npm_config_cache="$T/probe-npm" timeout 20 npm view is-number version >/dev/null 2>&1; then
	rm -rf "$T/wf/runs/3" "$T/wf/runs/4"
	mkdir -p "$T/wf/runs/3" "$T/wf/runs/4"
	run_sb run -C "$T/wf/runs/3" -w "$cache" -- npm install is-number@7.0.0
	r1=$RC
	run_sb run -C "$T/wf/runs/4" -w "$cache" -- sh -c 'npm install --offline is-number@7.0.0 && node -e "console.log(require(\"is-number\")(5))"'
	[ "$r1" = 0 ] && [ "$RC" = 0 ] && echo "$OUT" | grep -q true && ok "npm registry install, then --offline from the persistent cache" ||
		notok "npm registry install, then --offline from the persistent cache" "run1=$r1 run2=$RC"
else
	skip "npm registry install, then --offline from the persistent cache" "the npm registry cannot be reached"
fi
