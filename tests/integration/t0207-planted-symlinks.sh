#!/bin/bash
# t0207: symlinks a step plants where it may write redirect nothing in the next
# run (issue 10, item 8). stepbox resolves grants and makes its folders as the
# caller before any sandbox exists, so run 1 plants and run 2 must refuse (125),
# start nothing, create nothing and grant nothing outside.
. "$(dirname "$0")/lib.sh"

wf=$T/wf
P=$wf/.sandbox-cache
mkdir -p "$wf/run1" "$T/target" "$T/elsewhere"
echo topsecret >"$T/target/secret" # stands for ~/.ssh/id_ed25519
chmod 755 "$T/target"

# positive control: the reading program works where a grant really allows it
in_box "control: a granted secret is readable" "cat '$T/target/secret' | grep -q topsecret" -r "$T/target"
denied "control: without a grant it is not" "cat '$T/target/secret'"

# run 1 plants links in its workdir, in the persistent folder and in the workflow root
run_sb run -C "$wf/run1" --persist "$P" -- sh -c "
	ln -s '$T/target' ssh &&
	ln -s '$T/target' '$P/tools' &&
	mkdir -p '$P/chrome' && ln -s '$T/target/secret' '$P/chrome/chrome'"
[ "$RC" = 0 ] && [ -L "$wf/run1/ssh" ] && [ -L "$P/tools" ] && ok "run 1 plants its symlinks" ||
	notok "run 1 plants its symlinks" "rc=$RC"
run_sb run -C "$wf" -- sh -c "ln -s '$T/elsewhere' run2 && ln -s '$T/elsewhere' sub"
[ "$RC" = 0 ] && [ -L "$wf/run2" ] && ok "run 1 plants a link in the workflow root" ||
	notok "run 1 plants a link in the workflow root" "rc=$RC"

# refused: run 2 exits 125 naming the grant, the link and its target, and never starts
refused() { # NAME LINK TARGET ARGS...: run 2 with ARGS is refused
	local name=$1 link=$2 target=$3
	shift 3
	rm -f "$T/ran"
	run_sb run "$@" -- sh -c "cat '$T/target/secret'; touch '$T/ran'"
	if [ "$RC" = 125 ] && grep -qF "symlink '$link' -> '$target'" "$T/out/err" &&
		grep -q "hint: .*remove" "$T/out/err" && [ ! -e "$T/ran" ] && ! echo "$OUT" | grep -q topsecret; then
		ok "$name"
	else
		notok "$name" "exit $RC, want 125 naming '$link' -> '$target'; started: $([ -e "$T/ran" ] && echo yes || echo no)"
	fi
}
refused "read grant through a link in the workdir" "$wf/run1/ssh" "$T/target" \
	-C "$wf/run1" -r "$wf/run1/ssh"
refused "read grant through a link in the persistent folder" "$P/tools" "$T/target" \
	--persist "$P" -r "$P/tools"
SANDBOX_EXTRA_SYSTEM_PATHS="$P/tools" refused "SANDBOX_EXTRA_SYSTEM_PATHS through a link in the persistent folder" \
	"$P/tools" "$T/target" --persist "$P"
refused "write grant through a link in another write grant" "$wf/run1/ssh" "$T/target" \
	-w "$wf/run1" -w "$wf/run1/ssh"
refused "workdir through a link in a write grant" "$wf/run2" "$T/elsewhere" -w "$wf" -C "$wf/run2/deep"
[ -z "$(ls -A "$T/elsewhere")" ] && ok "no workdir was created where the link points" ||
	notok "no workdir was created where the link points" "$(ls -A "$T/elsewhere")"

# the persistent folder itself replaced by a link, in a workdir that is the workflow root
mv "$P" "$wf/cache.real"
ln -s "$T/elsewhere" "$P"
refused "persistent folder that is a link in the workdir" "$P" "$T/elsewhere" -C "$wf" --persist "$P"
[ ! -e "$T/elsewhere/CACHEDIR.TAG" ] && ok "no CACHEDIR.TAG where the link points" ||
	notok "no CACHEDIR.TAG where the link points"
rm "$P"
mv "$wf/cache.real" "$P"
# positive control: the same run with the real folder starts and tags it
run_sb run -C "$wf" --persist "$P" -- true
[ "$RC" = 0 ] && [ -f "$P/CACHEDIR.TAG" ] && ok "control: the real persistent folder is used" ||
	notok "control: the real persistent folder is used" "rc=$RC"

# a browser inside the persistent folder is covered there: nothing more is granted, no error
AGENT_BROWSER_EXECUTABLE_PATH="$P/chrome/chrome" run_sb run --persist "$P" -- cat "$T/target/secret"
if [ "$RC" != 0 ] && [ "$RC" != 125 ] && ! echo "$OUT" | grep -q topsecret; then
	ok "a browser in the persistent folder grants nothing outside"
else
	notok "a browser in the persistent folder grants nothing outside" "exit $RC"
fi
AGENT_BROWSER_EXECUTABLE_PATH="$P/chrome/chrome" run_sb policy --persist "$P"
echo "$OUT" | grep -q "already covered by the persistent folder" && ok "policy says the browser is already covered" ||
	notok "policy says the browser is already covered"

# a link outside every write grant is the user's own: fine (merged /usr's /lib64 is one)
ln -s "$T/target" "$T/mine"
in_box "control: a link outside the write grants is followed" "grep -q topsecret '$T/target/secret'" -r "$T/mine"

# nothing in the target changed
[ "$(ls -A "$T/target")" = secret ] && [ "$(cat "$T/target/secret")" = topsecret ] &&
	ok "the link target is untouched" || notok "the link target is untouched" "$(ls -A "$T/target")"

# the report's folder in the workdir, replaced by a symlink during the run:
# the report is not written through it
mkdir -p "$T/reports-out" "$T/w/rep"
run_sb run --report "$T/w/rep/r.json" -- sh -c "rm -rf '$T/w/rep' && ln -s '$T/reports-out' '$T/w/rep'"
[ ! -e "$T/reports-out/r.json" ] && grep -q "goes through a symlink (one a step may have planted)" "$T/out/err" && ok "a report folder replaced by a symlink during the run is not written through" ||
	notok "a report folder replaced by a symlink during the run is not written through" "rc=$RC"
rm -f "$T/w/rep"
mkdir -p "$T/w/rep"
run_sb run --report "$T/w/rep/r.json" -- true
[ -s "$T/w/rep/r.json" ] && ok "a report in a real folder is written (positive control)" || notok "a report in a real folder is written"
rm -rf "$T/w/rep"
ln -s "$T/reports-out" "$T/w/rep"
expect "a report folder that is a symlink in a write grant is 125" 125 "symlink in a write grant" -- run --report "$T/w/rep/r.json" -- true
rm -f "$T/w/rep"
