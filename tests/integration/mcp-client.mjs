// mcp-client.mjs SDK_DIR STEPBOX WORKDIR OUTSIDE [STEPBOX ARGS...]: the
// official MCP TypeScript SDK's client drives `stepbox mcp` over stdio, as an
// agent would. Prints TAP-like lines ("ok - ...", "not ok - ...") for t0320.
import path from "node:path";
import fs from "node:fs";
import { pathToFileURL } from "node:url";

const [sdkDir, stepbox, workdir, outside, ...extra] = process.argv.slice(2);
const esm = path.join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(pathToFileURL(path.join(esm, "client/index.js")));
const { StdioClientTransport } = await import(pathToFileURL(path.join(esm, "client/stdio.js")));

let failed = 0;
const ok = (cond, name, detail) => {
  console.log(`${cond ? "ok" : "not ok"} - mcp: ${name}`);
  if (!cond) {
    failed++;
    if (detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 600)}`);
  }
};
const text = (r) => (r.content || []).map((c) => c.text || "").join("");
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const transport = new StdioClientTransport({
  command: stepbox,
  args: ["mcp", "-C", workdir, ...extra],
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "stepbox-test", version: "1.0.0" });
await client.connect(transport);
ok(client.getServerVersion()?.name === "stepbox" && client.getServerCapabilities()?.tools,
  "the SDK's handshake succeeds (it refuses a protocol version it does not speak)",
  client.getServerVersion());

const tools = (await client.listTools()).tools;
const run = tools.find((t) => t.name === "run");
ok(run && /sandbox/.test(run.description) && /write/i.test(run.description),
  "the run tool is listed, its description generated from the guide", tools);

const guide = await client.readResource({ uri: "stepbox://guide" });
ok(guide.contents?.[0]?.text?.length > 100, "the guide is a resource");

let r = await client.callTool({ name: "run", arguments: { command: "echo hello from a step" } });
ok(!r.isError && r.structuredContent?.exit_code === 0 && /hello from a step/.test(r.structuredContent.stdout),
  "echo: exit 0 and its stdout", r);

r = await client.callTool({ name: "run", arguments: { argv: ["sh", "-c", "echo made > inside.txt"] } });
ok(r.structuredContent?.exit_code === 0 && fs.readFileSync(path.join(workdir, "inside.txt"), "utf8") === "made\n",
  "a write in the workdir lands (the positive control)", r);

r = await client.callTool({ name: "run", arguments: { command: `echo made > '${outside}/x.txt'` } });
ok(r.structuredContent?.exit_code !== 0 && !fs.existsSync(path.join(outside, "x.txt")) &&
  r.structuredContent.denials.some((d) => d.includes(outside)) && /denied/.test(text(r)),
  "a write outside is denied, and the denial is in the result", r);

r = await client.callTool({ name: "run", arguments: { command: "sleep 30", timeout_s: 1 } });
ok(r.structuredContent?.exit_code === 124 && r.structuredContent.timed_out, "a timeout ends the call: 124", r);

r = await client.callTool({ name: "run", arguments: { command: "pwd", cwd: "sub" } }).catch((e) => e);
ok(r.isError && /cwd/.test(text(r)), "a cwd that does not exist is the tool's error", r);
fs.mkdirSync(path.join(workdir, "sub"), { recursive: true });
r = await client.callTool({ name: "run", arguments: { command: "pwd", cwd: "sub" } });
ok(r.structuredContent?.stdout?.trim() === fs.realpathSync(path.join(workdir, "sub")), "cwd: the command starts there", r);
r = await client.callTool({ name: "run", arguments: { command: "pwd", cwd: "/" } });
ok(r.isError && /outside the workdir/.test(text(r)), "a cwd outside the workdir is refused", r);
r = await client.callTool({ name: "run", arguments: { command: "true", env: { API_TOKEN: "x" } } });
ok(r.isError && /API_TOKEN/.test(text(r)), "a secret-looking variable is refused", r);
r = await client.callTool({ name: "run", arguments: { command: "echo $GREETING", env: { GREETING: "hi" } } });
ok(r.structuredContent?.stdout === "hi\n", "a plain variable is set", r);

// a flood: capped, with the byte count
r = await client.callTool({ name: "run", arguments: { command: "head -c 300000 /dev/zero | tr '\\0' a" } });
ok(r.structuredContent?.stdout_truncated && r.structuredContent.stdout_bytes === 300000 &&
  r.structuredContent.stdout.length === 65536 && /truncated/.test(text(r)),
  "output is capped, with a marker and the byte count", r.structuredContent && { ...r.structuredContent, stdout: "" });

// two calls at once: both finish in about the time of one
let t0 = Date.now();
const both = await Promise.all([1, 2].map((i) =>
  client.callTool({ name: "run", arguments: { command: `sleep 2; echo ${i}` } })));
let took = Date.now() - t0;
ok(both.every((b, i) => b.structuredContent?.stdout === `${i + 1}\n`) && took < 3800,
  `two calls run at once (${took} ms for two 2 s calls)`, both);

// progress, when asked
let ticks = 0;
r = await client.callTool({ name: "run", arguments: { command: "sleep 2.5; echo done" } }, undefined,
  { onprogress: () => ticks++, timeout: 60000 });
ok(r.structuredContent?.exit_code === 0 && ticks >= 2, `progress notifications (${ticks})`, r);

// cancellation: the whole tree is gone within a second
const pidfile = path.join(workdir, "tree.pid");
fs.rmSync(pidfile, { force: true });
const ac = new AbortController();
// a duration no other test uses: the host's other sleepers are not this tree's
const tag = String(3000 + (process.pid % 5000));
const p = client.callTool({ name: "run", arguments: { command: `sh -c 'sleep ${tag} & echo $! > ${pidfile}; wait'` } },
  undefined, { signal: ac.signal }).then(() => "answered", (e) => "rejected");
for (let i = 0; i < 50 && !fs.existsSync(pidfile); i++) await sleep(100);
const treePid = parseInt(fs.readFileSync(pidfile, "utf8"), 10);
t0 = Date.now();
await client.ping();
const listed = (await client.listTools()).tools.length;
took = Date.now() - t0;
ok(listed === 1 && took < 1000, `the server answers while a call runs (ping and tools/list in ${took} ms)`);
const sleepers = () => fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d)).filter((d) => {
  try {
    return fs.readFileSync(`/proc/${d}/cmdline`, "utf8") === `sleep\u0000${tag}\u0000`;
  } catch {
    return false;
  }
});
// the pid is the step's own (a PID namespace): the host's is found by its
// command line once, then only that process is looked at (a walk of all of
// /proc on a busy machine took longer than the kill)
const before = sleepers();
const running = before.length;
const ended = (d) => {
  try {
    const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] === "Z" ||
      fs.readFileSync(`/proc/${d}/cmdline`, "utf8") !== `sleep\u0000${tag}\u0000`;
  } catch {
    return true;
  }
};
const abortAt = Date.now();
ac.abort();
ok((await p) === "rejected", "a cancelled call is given up");
let gone = -1;
for (let waited = 0; waited <= 3000; waited = Date.now() - abortAt) {
  if (before.every(ended)) {
    gone = Date.now() - abortAt;
    break;
  }
  await sleep(25);
}
ok(!Number.isNaN(treePid) && running === 1 && gone >= 0 && gone <= 1000,
  `the cancelled call's whole tree is gone within a second (${gone} ms)`, { running, gone, left: sleepers() });

// still answering after all that
r = await client.callTool({ name: "run", arguments: { command: "echo still here" } });
ok(r.structuredContent?.stdout === "still here\n", "the server still answers");

r = await client.callTool({ name: "nope", arguments: {} }).catch((e) => e);
ok(r instanceof Error && /unknown tool/.test(r.message), "an unknown tool is a JSON-RPC error", String(r));
r = await client.callTool({ name: "run", arguments: { command: 5 } }).catch((e) => e);
ok(r instanceof Error && /command/.test(r.message), "a wrong argument type is a JSON-RPC error", String(r));

await client.close();
process.exit(failed ? 1 : 0);
