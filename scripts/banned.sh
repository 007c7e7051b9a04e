#!/bin/sh
# Functions stepbox never calls (unbounded or error-swallowing), as curl bans
# them: use snprintf, strv_fmt, strtok_r and policy_parse_long instead.
cd "$(dirname "$0")/.." || exit 1
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|strncpy|strtok|atoi|atol|atoll|gets|tmpnam|mktemp)\(' \
	src/*/*.c src/*/*.h tools/*.c bench/*.c; then
	echo "banned function used (scripts/banned.sh)" >&2
	exit 1
fi
