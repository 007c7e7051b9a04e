#!/bin/bash
# t0196: the step reads its own cgroup's limits, as node and pnpm do (issue
# 11), and nothing else of the cgroup tree; it can change none of them.
. "$(dirname "$0")/lib.sh"

# the caller's own cgroup: v2's, else v1's memory controller
own=$(awk -F: '$2 == "" && $3 != "/" {print "/sys/fs/cgroup" $3; exit}
	$2 ~ /memory/ && $3 != "/" {print "/sys/fs/cgroup/" $2 $3; exit}' /proc/self/cgroup)
file=
for f in memory.max memory.limit_in_bytes cgroup.procs; do
	[ -n "$own" ] && [ -r "$own/$f" ] && { file="$own/$f"; break; }
done
if [ -z "$file" ]; then
	skip "the step's own cgroup limits" "this process is in a root cgroup, or none is readable here"
	exit 0
fi
want=$(head -c 200 "$file")
run_sb run -- sh -c "head -c 200 '$file'"
[ "$RC" = 0 ] && [ "$OUT" = "$want" ] && ok "the step reads its own cgroup's $(basename "$file") (the control: the same as outside)" ||
	notok "the step reads its own cgroup's $(basename "$file") (the control: the same as outside)" "rc=$RC" "$OUT" "$ERR"
denied "its cgroup cannot be changed" "echo 1 > '$file'"
parent=$(dirname "$own")
run_sb run -- sh -c "ls '$parent'"
if [ "$RC" != 0 ] || [ "$OUT" = "$(basename "$own")" ]; then
	ok "no other cgroup is there to see"
else
	notok "no other cgroup is there to see" "$OUT"
fi
