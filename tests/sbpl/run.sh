#!/bin/bash
# tests/sbpl/run.sh STEPBOX [--update]: the Seatbelt profiles, on Linux.
# For each policy in cases/: `stepbox policy --format sbpl` against the golden
# profile beside it (--update rewrites them), then read with Guile's Scheme
# reader (well-formed s-expressions) and checked against the same policy's
# JSON by check.py (every grant with its rights, nothing else allowed). The
# checker is itself tried on broken profiles, which it must refuse. The
# policies name a fixed tree, made here: a profile holds paths.
set -u
sb=$(realpath "$1")
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=/tmp/stepbox-sbpl-golden
ok() { echo "ok - $1"; }
notok() { echo "not ok - $1"; shift; for l in "$@"; do echo "# $l"; done; }

rm -rf "$root"
mkdir -p "$root/home" "$root/work" "$root/data" "$root/out" "$root/sockets" \
	"$root/with space" "$root/quote\"d" "$root/back\\slash" "$root/paren(s)" "$root/ünïcödé ✓"
touch "$root/home/.gitconfig"
# a checkout whose core.hooksPath names a folder of its worktree, whose
# config includes a file of it, with a checkout one level down (hooks-path.json)
mkdir -p "$root/repo/.git/hooks" "$root/repo/.githooks" "$root/repo/sub/.git/hooks"
printf '[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../.gitconfig.project\n' \
	>"$root/repo/.git/config"
T=$(mktemp -d)
trap 'rm -rf "$T" "$root"' EXIT
# what the profile depends on is set here: HOME, the folder, no extra system paths
sbx() { (cd "$root/work" && env -i HOME="$root/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "$sb" "$@"); }
have_guile=$(command -v guile)

check_profile() { # NAME PROFILE POLICY-JSON
	if [ -z "$have_guile" ]; then
		echo "skip - $1: well-formed and within the policy: guile is not installed"
		return
	fi
	if ! guile --no-auto-compile -s "$here/sexp.scm" "$2" >"$T/forms" 2>"$T/guile.err"; then
		notok "$1: Guile reads the profile" "$(tail -2 "$T/guile.err")"
		return
	fi
	if python3 "$here/check.py" "$T/forms" "$3" >"$T/check.out"; then
		ok "$1: $(sed 's/^ok - //' "$T/check.out")"
	else
		notok "$1: the profile holds the policy and nothing else" "$(head -5 "$T/check.out")"
	fi
	# what its deny rules refuse, evaluated path by path (cases/NAME.denies)
	if [ -f "$here/cases/$1.denies" ]; then
		python3 "$here/denies.py" "$T/forms" "$here/cases/$1.denies" "/private$root" |
			sed "s/^\(not \)\{0,1\}ok - /&$1: /"
	fi
}

for c in "$here"/cases/*.json; do
	name=$(basename "$c" .json)
	if ! sbx policy -p "$c" --format sbpl >"$T/$name.sb" 2>"$T/err"; then
		notok "$name: stepbox policy --format sbpl" "$(head -3 "$T/err")"
		continue
	fi
	sed -i "s/^; stepbox [^:]*:/; stepbox VERSION:/" "$T/$name.sb"
	if [ "$update" = --update ]; then
		cp "$T/$name.sb" "$here/cases/$name.sb"
	fi
	if diff -u "$here/cases/$name.sb" "$T/$name.sb" >"$T/diff"; then
		ok "$name: the profile is the golden one"
	else
		notok "$name: the profile is the golden one" "$(head -12 "$T/diff")"
	fi
	sbx policy -p "$c" >"$T/$name.json" 2>/dev/null
	check_profile "$name" "$T/$name.sb" "$T/$name.json"
done

# the checker's positive control: what it must refuse, each in a copy of a good profile
if [ -n "$have_guile" ]; then
	checked() { # SED-SCRIPT CASE: whether the checker takes that case's profile so changed
		sed "$1" "$T/$2.sb" >"$T/bad.sb"
		guile --no-auto-compile -s "$here/sexp.scm" "$T/bad.sb" >"$T/forms" 2>/dev/null &&
			python3 "$here/check.py" "$T/forms" "$T/$2.json" >/dev/null
	}
	mutate() { # NAME SED-SCRIPT [CASE]
		if checked "$2" "${3:-full}"; then
			notok "the checker refuses $1"
		else
			ok "the checker refuses $1"
		fi
	}
	mutate "a write beneath a read grant" 's|^(allow file-read\* process-exec file-map-executable$|(allow file-write* file-read* process-exec file-map-executable|'
	mutate "allow default" 's|^(deny default)|(allow default)|'
	mutate "a host folder" '$a (allow file-read* (subpath "/Users"))'
	mutate "a missing write grant" "s|(subpath \"/private$root/out\")||"
	mutate "any UNIX socket" '$a (allow network-outbound (remote unix-socket))'
	mutate "a port off the list" 's|(remote tcp "\*:443")|(remote tcp "*:22")|'
	mutate "another mach service" 's|"com.apple.logd"|"com.apple.security.authhost"|'
	mutate "a port beside the proxy's, with hosts" '$a (allow network-outbound (remote tcp "*:443"))' net-hosts
	mutate "name lookups with hosts" '$a (allow mach-lookup (global-name "com.apple.dnssd.service"))' net-hosts
	# and the run's own rule, which the printed profile holds as a comment, it takes
	if checked '$a (allow network-outbound (remote tcp "localhost:4321"))' net-hosts; then
		ok "the checker takes the proxy's one port, with hosts"
	else
		notok "the checker takes the proxy's one port, with hosts"
	fi
	mutate "a second proxy port" '$a (allow network-outbound (remote tcp "localhost:1") (remote tcp "localhost:2"))' net-hosts
	if printf '(allow file-read* (subpath "/x")' >"$T/bad.sb" &&
		! guile --no-auto-compile -s "$here/sexp.scm" "$T/bad.sb" >/dev/null 2>&1; then
		ok "the reader refuses a form left open"
	else
		notok "the reader refuses a form left open"
	fi
fi

# a path SBPL cannot hold is an error naming it, and nothing is printed
bad=$root/$'\xff'
mkdir -p "$bad"
sbx policy --format sbpl -w "$bad" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 125 ] && [ ! -s "$T/out" ] && grep -q "cannot be written in a Seatbelt profile" "$T/err"; then
	ok "a path that is not UTF-8: 125, named, nothing printed"
else
	notok "a path that is not UTF-8: 125, named, nothing printed" "exit $rc" "$(head -2 "$T/err")"
fi
# --format belongs to policy
sbx env --format sbpl >/dev/null 2>&1
[ $? = 125 ] && ok "--format is refused by other commands (125)" ||
	notok "--format is refused by other commands (125)"
