#!/usr/bin/env node
// Run one shell command of an agent's step under stepbox, the policy on stdin.
// usage: node run_step.mjs WORKDIR CACHE COMMAND
import { spawnSync } from "node:child_process";

const [workdir, cache, command] = process.argv.slice(2);
const policy = {
  version: 1,
  workdir,
  write_paths: [workdir],
  persistent_dir: cache,
  timeout_s: 300,
};
const done = spawnSync("stepbox", ["run", "-p", "-", "--", "/bin/sh", "-c", command], {
  input: JSON.stringify(policy),
  encoding: "utf8",
});
console.log("exit", done.status);
process.stdout.write(done.stdout);
process.stderr.write(done.stderr); // stepbox's own messages start with "stepbox: "
