#!/bin/sh
# bench/run.sh [BUILD]: start-up, grant scaling and peak memory, as ratios
# measured side by side in one run (shared machines are noisy: never assert
# times). Needs hyperfine and bwrap (scripts/deps.sh --test).
set -eu
build=$(cd "${1:-build}" && pwd)
exec /usr/bin/python3 "$(dirname "$0")/bench.py" "$build"
