#!/usr/bin/env node
// Run one shell command of an agent's step under stepbox, the policy on stdin.
// usage: node run_step.mjs WORKDIR CACHE COMMAND
// Prints the command's exit status, its output, and what the sandbox denied.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [workdir, cache, command] = process.argv.slice(2);
const policy = {
  version: 1,
  workdir,
  write_paths: [workdir],
  persistent_dir: cache,
  timeout_s: 300,
};
const tmp = mkdtempSync(join(tmpdir(), "step-"));
const report = join(tmp, "report.json");
const done = spawnSync(
  "stepbox",
  ["run", "-p", "-", "--explain", "--report", report, "--", "/bin/sh", "-c", command],
  { input: JSON.stringify(policy), encoding: "utf8" },
);
const result = JSON.parse(readFileSync(report, "utf8"));
rmSync(tmp, { recursive: true });
console.log("exit", done.status);
process.stdout.write(done.stdout);
process.stderr.write(done.stderr); // the command's, and stepbox's own "stepbox: " lines
if (result.error) console.log("stepbox:", result.error.message); // not applied (exit 125)
for (const d of result.denials ?? []) if (d.sandbox) console.log("denied:", d.operation, d.path);
