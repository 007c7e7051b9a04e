#!/bin/bash
# t0110: stepbox guide tells an agent the truth about its step.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/wf/run" "$T/data"
run_sb guide -C "$T/wf/run" --persist "$T/wf/.sandbox-cache" -r "$T/data"
g=$OUT
has() { echo "$g" | grep -qF -- "$2" && ok "$1" || notok "$1" "lacks: $2"; }
has "guide: the working folder" "Working folder: \`$T/wf/run\`"
has "guide: the persistent folder is writable" "- \`$T/wf/.sandbox-cache\` (persistent tool folder)"
has "guide: read grants" "- \`$T/data\`"
has "guide: installs persist" "Installs work and persist for this workflow"
has "guide: tooling only in the persistent folder" "the workflow's data and results belong in"
has "guide: no root, sudo or apt" "root, \`sudo\` and \`apt\`"
has "guide: how to ask for more" "ask the operator to grant it"
has "guide: TMPDIR in the run folder" "\`$T/wf/run/.tmp\`"
has "guide: network" "Network: allowed."
[ ! -e "$T/wf/.sandbox-cache" ] && ok "guide creates nothing" || notok "guide creates nothing"

run_sb guide -C "$T/wf/run"
echo "$OUT" | grep -q "They last only as long as that folder" && ok "guide without a persistent folder" || notok "guide without a persistent folder"
run_sb guide -C "$T/wf/run" --workdir-readonly
echo "$OUT" | grep -q "nothing can be installed" && echo "$OUT" | grep -q "this step cannot write files" &&
	ok "guide with no write grant" || notok "guide with no write grant"
