#!/bin/bash
# tests/package/run.sh: `make deb` builds a package that holds what it should
# and runs from a throw-away root (and, on CI as root, installs with dpkg -i).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok - package: $1"; }
notok() { echo "not ok - package: $1"; shift; for l in "$@"; do printf '# %s\n' "$l"; done; }
if ! command -v dpkg-deb >/dev/null; then
	echo "skip - package: dpkg-deb is not installed"
	exit 0
fi
deb=$(sh "$top/scripts/mkdeb.sh" build "$T/dist" 2>"$T/err" | tail -1)
if [ ! -f "$deb" ]; then
	notok "make deb builds a package" "$(tail -3 "$T/err")"
	exit 0
fi
ok "make deb builds $(basename "$deb")"
dpkg-deb --contents "$deb" >"$T/contents"
missing=
for f in ./usr/bin/stepbox ./usr/share/man/man1/stepbox.1.gz ./usr/share/bash-completion/completions/stepbox \
	./usr/share/doc/stepbox/copyright ./usr/share/doc/stepbox/changelog.Debian.gz; do
	grep -q " $f\$" "$T/contents" || missing="$missing $f"
done
for f in ./usr/share/doc/stepbox/README.md ./usr/share/doc/stepbox/docs/mcp.md \
	./usr/share/doc/stepbox/docs/security.md ./usr/share/doc/stepbox/examples/run_step.py \
	./usr/share/doc/stepbox/examples/nightly-report.service; do
	grep -q " $f\$" "$T/contents" || missing="$missing $f"
done
[ -z "$missing" ] && ok "it holds the binary, the compressed man page, bash completion, copyright, the docs and examples the man page names" ||
	notok "it holds the binary, the compressed man page, bash completion, copyright" "missing:$missing"
dpkg-deb -x "$deb" "$T/root"
file "$T/root/usr/bin/stepbox" | grep -q "stripped" && ! file "$T/root/usr/bin/stepbox" | grep -q "not stripped" &&
	ok "the binary is stripped" || notok "the binary is stripped" "$(file "$T/root/usr/bin/stepbox")"
"$T/root/usr/bin/stepbox" -V | grep -q "^stepbox " && "$T/root/usr/bin/stepbox" check >/dev/null &&
	ok "the packaged stepbox runs from a throw-away root: -V and check" ||
	notok "the packaged stepbox runs from a throw-away root: -V and check"
"$T/root/usr/bin/stepbox" run -C "$T" -- sh -c 'echo packaged-step' | grep -q packaged-step &&
	ok "the packaged stepbox runs a step" || notok "the packaged stepbox runs a step"
bash -c ". '$T/root/usr/share/bash-completion/completions/stepbox' && complete -p stepbox" >/dev/null 2>&1 &&
	ok "bash completion loads" || notok "bash completion loads"
got=$(bash -c ". '$T/root/usr/share/bash-completion/completions/stepbox'
	COMP_WORDS=(stepbox run --no-l); COMP_CWORD=2; _stepbox; echo \"\${COMPREPLY[*]}\"
	COMP_WORDS=(stepbox run --limit ''); COMP_CWORD=3; _stepbox; echo \"\${COMPREPLY[*]}\"" 2>&1)
echo "$got" | grep -q -- "--no-limits" && echo "$got" | grep -q "memory= tasks=" &&
	ok "bash completion knows --limit and --no-limits, and the limits' names" ||
	notok "bash completion knows --limit and --no-limits, and the limits' names" "$got"
zcat "$T/root/usr/share/man/man1/stepbox.1.gz" | grep -q "^.SH POLICY KEYS" &&
	ok "the man page is there, compressed" || notok "the man page is there, compressed"
if command -v lintian >/dev/null; then
	lintian --fail-on error "$deb" >"$T/lintian" 2>&1 &&
		ok "lintian finds no error" || notok "lintian finds no error" "$(head -5 "$T/lintian")"
else
	echo "skip - package: lintian: not installed"
fi
if [ "${CI:-}" = true ] && [ "$(id -u)" = 0 ] && ! dpkg-query -W stepbox >/dev/null 2>&1; then
	if dpkg -i "$deb" >"$T/dpkg" 2>&1 && /usr/bin/stepbox check >/dev/null; then
		ok "dpkg -i installs it, and /usr/bin/stepbox check runs"
	else
		notok "dpkg -i installs it, and /usr/bin/stepbox check runs" "$(tail -3 "$T/dpkg")"
	fi
	dpkg --purge stepbox >/dev/null 2>&1
else
	echo "skip - package: dpkg -i: only on CI as root, where no stepbox package is installed"
fi
