#!/bin/sh
# Commit subjects under 72 characters, the why in the body: every commit
# since the rule was checked (the ones before it were written without it).
# Outside a git clone (a release tarball) there is nothing to check.
cd "$(dirname "$0")/.." || exit 1
since=d6a624e9c45960c20b9500f646918d323414691a
git rev-parse -q --verify "$since^{commit}" >/dev/null 2>&1 || exit 0
long=$(git log --format='%h %s' "$since..HEAD" | awk '{ s = substr($0, index($0, " ") + 1) }
	length(s) > 72 { print "  " $0 " (" length(s) ")" }')
if [ -n "$long" ]; then
	echo "commit subjects over 72 characters (say the why in the body):" >&2
	echo "$long" >&2
	exit 1
fi
