#!/usr/bin/env python3
"""Run one shell command of an agent's step under stepbox, the policy on stdin.

usage: run_step.py WORKDIR CACHE COMMAND
Prints the command's exit status, its output, and what the sandbox denied.
"""
import json
import subprocess
import sys
import tempfile

workdir, cache, command = sys.argv[1:4]
policy = {
    "version": 1,
    "workdir": workdir,
    "write_paths": [workdir],
    "persistent_dir": cache,
    "timeout_s": 300,
}
with tempfile.TemporaryDirectory() as tmp:
    report = f"{tmp}/report.json"
    done = subprocess.run(
        ["stepbox", "run", "-p", "-", "--explain", "--report", report,
         "--", "/bin/sh", "-c", command],
        input=json.dumps(policy), capture_output=True, text=True)
    result = json.load(open(report))
print("exit", done.returncode)
print(done.stdout, end="")
print(done.stderr, end="", file=sys.stderr)  # the command's, and stepbox's own "stepbox: " lines
if result.get("error"):  # the sandbox could not be applied (exit 125)
    print("stepbox:", result["error"]["message"])
for d in result.get("denials") or []:
    if d["sandbox"]:
        print("denied:", d["operation"], d.get("path"))
