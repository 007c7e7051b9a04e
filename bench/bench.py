"""stepbox benchmarks: printed as a Markdown table of ratios (README.md)."""
import json, os, shutil, subprocess, sys, tempfile

build = sys.argv[1]
runs = int(os.environ.get("BENCH_RUNS", "200"))
stage = tempfile.mkdtemp(prefix="stepbox-bench.")
os.chmod(stage, 0o755)
for f in ("stepbox", "floor"):
    shutil.copy(os.path.join(build, f), stage)
sb, floor = os.path.join(stage, "stepbox"), os.path.join(stage, "floor")
work = os.path.join(stage, "w")
os.makedirs(work)
os.chmod(work, 0o777)
env = dict(os.environ, PATH="/usr/bin:/bin")
for k in [k for k in env if k.startswith(("SANDBOX_", "STEPBOX_"))]:
    del env[k]
unpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []


def rules(as_user):
    """The floor applies exactly the grants stepbox's Landlock-alone backend
    would, read from a file."""
    out = subprocess.run(as_user + [sb, "policy", "--backend", "landlock", "-C", work],
                         capture_output=True, text=True, env=env, check=True).stdout
    path = os.path.join(stage, "rules-%d.txt" % len(as_user))
    with open(path, "w") as f:
        for g in json.loads(out)["grants"]:
            f.write("%s %s\n" % (g["access"], g["path"]))
    os.chmod(path, 0o644)
    return path


def hyperfine(cmds):
    res = os.path.join(stage, "h.json")
    subprocess.run(["hyperfine", "-N", "-w", "20", "-r", str(runs), "--export-json", res]
                   + cmds, capture_output=True, check=True, cwd=work, env=env)
    # medians: a run held up by a neighbour on a shared machine moves a mean
    return [r["median"] * 1000 for r in json.load(open(res))["results"]]


def interleaved(cmds, n, warm=10, cwd=None):
    """Median wall time (ms) of each command, its runs taken in turn with
    the others' (A B A B ...): a difference smaller than a shared machine's
    drift over a hyperfine run is still seen."""
    import statistics, time
    times = [[] for _ in cmds]
    for i in range(n + warm):
        for k, c in enumerate(cmds):
            a = time.perf_counter()
            subprocess.run(c, cwd=cwd or work, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            if i >= warm:  # the first runs warm the caches
                times[k].append((time.perf_counter() - a) * 1000)
    return [statistics.median(t) for t in times]


def ratio_row(names, cmds, n):
    """One table of the commands' medians over n runs each, as ratios to the first."""
    global runs
    saved, runs = runs, n
    t = hyperfine(cmds)
    runs = saved
    print("| " + " | ".join(names) + " |")
    print("|" + "---|" * len(names))
    print("| " + " | ".join("%.1f ms (%.2fx)" % (v, v / t[0]) for v in t) + " |")


def peak_kib(cmd):
    """The launcher's own high-water RSS, read while its command sleeps
    (ru_maxrss would count the forking parent's pages, which survive exec)."""
    import time
    p = subprocess.Popen(cmd + ["sleep", "1"], cwd=work, env=env, stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    hwm = [l for l in open("/proc/%d/status" % p.pid) if l.startswith("VmHWM")][0]
    p.wait()
    return int(hwm.split()[1])


# bwrap doing the namespace layers' work: a tmpfs root, the system read-only,
# /dev, a new procfs, a private /tmp, the workdir, new PID and IPC namespaces
# (and a user namespace when unprivileged, as bwrap makes one itself)
bwrap_root = ["bwrap", "--tmpfs", "/", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
              "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
              "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
              "--ro-bind", "/sys/devices/system/cpu", "/sys/devices/system/cpu",
              "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", work, work,
              "--unshare-pid", "--unshare-ipc", "--chdir", work]

print("## Start-up: `stepbox run --backend B -- /bin/true`, medians of %d runs taken in turn\n"
      % runs)
# firejail doing what it can of the same work (its own mount, PID and IPC
# namespaces, a private /tmp and /dev, no capabilities, no_new_privs, its
# seccomp filter); it refuses the user nobody (uid 65534) by design
firejail = ["firejail", "--quiet", "--noprofile", "--private-tmp", "--private-dev",
            "--ipc-namespace", "--caps.drop=all", "--nonewprivs", "--seccomp"] \
    if shutil.which("firejail") else None
print("| user | /bin/true | floor | landlock | mountns | stacked | bwrap | firejail "
      "| landlock/floor | mountns/bwrap | stacked/bwrap | stacked/firejail |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
users = [("root" if os.geteuid() == 0 else "caller", [])]
plot_rows = {}
if unpriv:
    users.append(("unprivileged", unpriv))
for name, u in users:
    r = rules(u)
    fj = [u + firejail + ["/bin/true"]] if firejail and not u else []
    # in turn (A B C ... A B C): the machine's drift over a run falls on every
    # launcher alike, which one launcher's runs in a row would not share
    t = interleaved([u + ["/bin/true"], u + [floor, r, "/bin/true"]] +
                    [u + [sb, "run", "--backend", b, "-C", work, "--", "/bin/true"]
                     for b in ("landlock", "mountns", "stacked")] +
                    [u + bwrap_root + ["/bin/true"]] + fj, runs)
    f = t[6] if fj else None
    why = "n/a (not installed)" if not firejail else "n/a (refuses uid 65534)"
    print("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %s | **%.2fx** | "
          "**%.2fx** | **%.2fx** | %s |" % (name, t[0], t[1], t[2], t[3], t[4], t[5],
                                          "%.2f ms" % f if f else why, t[2] / t[1],
                                          t[3] / t[5], t[4] / t[5],
                                          "**%.2fx**" % (t[4] / f) if f else "-"))
    plot_rows[name] = dict(zip(["/bin/true", "floor", "landlock", "mountns", "stacked", "bwrap",
                                "firejail"], t))

print("\nGoals: landlock/floor <= 1.3; mountns and stacked no slower than bwrap "
      "doing the same work (<= 1.0).\n")
# the README's plot, from this run
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "startup.json"), "w") as f:
    json.dump({"runs": runs, "users": plot_rows}, f, indent=1)
subprocess.run([sys.executable, os.path.join(here, "plot.py"), os.path.join(here, "startup.json"),
                os.path.join(here, "startup.svg")], check=True)
print("The plot: bench/startup.svg (from bench/startup.json).\n")

print("## Peak memory of the launcher (VmHWM while its command runs)\n")
print("| stepbox | floor | bwrap |")
print("|---|---|---|")
print("| %.2f MiB | %.2f MiB | %.2f MiB |" % tuple(k / 1024 for k in (
    peak_kib([sb, "run", "-C", work, "--"]), peak_kib([floor, rules([])]),
    peak_kib(bwrap_root))))

auto_name = json.loads(subprocess.run([sb, "check", "--json"], capture_output=True, text=True,
                                    env=env).stdout or "{}").get("auto_backend", "?")
print("## Cost per grant (read_paths in a policy file)\n")
print("Under the namespaces each grant is bound into the new root (a detached copy, its "
      "flags set, attached); Landlock alone adds one rule for each.\n")
print("| grants | auto (%s) | per grant | landlock alone | per grant |" % auto_name)
print("|---|---|---|---|---|")
base = None
for n in (0, 10, 100, 1000, 10000):
    d = os.path.join(stage, "g%d" % n)
    paths = []
    for i in range(n):
        p = os.path.join(d, str(i))
        os.makedirs(p)
        paths.append(p)
    pol = os.path.join(stage, "p%d.json" % n)
    json.dump({"version": 1, "read_paths": paths}, open(pol, "w"))
    t = hyperfine([" ".join([sb, "run", "-q", "-C", work, "-p", pol] + b + ["--", "/bin/true"])
                   for b in ([], ["--backend", "landlock"])])
    base = t if base is None else base
    per = ["-" if n == 0 else "%.1f us" % ((t[k] - base[k]) * 1000 / n) for k in (0, 1)]
    print("| %d | %.2f ms | %s | %.2f ms | %s |" % (n, t[0], per[0], t[1], per[1]))

print("\n## A file-heavy workload: opening every file under /usr/share/doc\n")
work_py = ("import os\nn = 0\nfor r, _, fs in os.walk('/usr/share/doc'):\n"
           "    for f in fs:\n        try:\n            open(os.path.join(r, f), 'rb').close(); n += 1\n"
           "        except OSError: pass\n")
script = os.path.join(stage, "files.py")
open(script, "w").write(work_py)
os.chmod(script, 0o644)
cmds = ["/usr/bin/python3 " + script,
        " ".join([sb, "run", "-q", "-C", work, "-r", stage, "--", "/usr/bin/python3", script]),
        " ".join([sb, "run", "-q", "--explain", "-C", work, "-r", stage, "--", "/usr/bin/python3", script])]
names = ["bare", "stepbox", "--explain (tracer)"]
if os.geteuid() == 0:
    # the audit source is Landlock alone's (under the namespaces the tracer is)
    cmds.append(" ".join([sb, "run", "-q", "--backend", "landlock", "--explain", "--enable-audit",
                          "-C", work, "-r", stage, "--", "/usr/bin/python3", script]))
    names.append("--explain (audit, landlock)")
ratio_row(names, cmds, 20)
print("\nWithout --explain the filter holds no trace rule: the middle column is the cost.")

print("\n## A write-heavy workload: 2,000 files made, written, renamed and removed\n")
# each a call the protected paths' live layer performs (an open that creates,
# a rename, an unlink): on (the default set) against off (--unprotect '*',
# whose supervisor traps none of them), on each backend
write_py = ("import os\nos.makedirs('wb', exist_ok=True)\nfor i in range(2000):\n"
            "    p = 'wb/f%d' % i\n    with open(p + '.tmp', 'w') as f: f.write('x' * 100)\n"
            "    os.rename(p + '.tmp', p)\nfor i in range(2000): os.unlink('wb/f%d' % i)\n"
            "os.rmdir('wb')\n")
wscript = os.path.join(stage, "writes.py")
open(wscript, "w").write(write_py)
os.chmod(wscript, 0o644)
for b in ("stacked", "landlock"):
    run = [sb, "run", "-q", "--backend", b, "-C", work, "-r", stage]
    ratio_row(["%s, protection off" % b, "%s, on (the live layer)" % b],
              [" ".join(run + ["--unprotect", "'*'", "--", "/usr/bin/python3", wscript]),
               " ".join(run + ["--", "/usr/bin/python3", wscript])], 10)
print("\nWith the protection on, each of the 6,000 calls is matched by name and performed "
      "by the supervisor; off, none stops.")

print("\n## The live layer on real write-heavy work: protection off against on\n")
# the three: a 10,000-file tree unpacked, a local repository cloned, a
# 2,000-file wheel installed by a venv's pip; each removed again in the same
# run. As root on a tmpfs of its own, as /tmp is on most systems (this VM's
# disk takes a millisecond a file: it would hide what the supervisor costs).
wstage = tempfile.mkdtemp(prefix="stepbox-bench-w.")
tmpfs = os.geteuid() == 0 and subprocess.run(
    ["mount", "-t", "tmpfs", "-o", "mode=755", "stepbox-bench", wstage]).returncode == 0
wwork = os.path.join(wstage, "w")
os.makedirs(wwork)
os.chmod(wwork, 0o777)
tree = os.path.join(stage, "tree")
for i in range(10000):
    d = os.path.join(tree, "d%02d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "f%05d" % i), "w").write("x" * 64)
tarball = os.path.join(stage, "tree.tar")
subprocess.run(["tar", "-cf", tarball, "-C", stage, "tree"], check=True)
shutil.rmtree(tree)
repo = os.path.join(stage, "repo")
genv = dict(env, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_AUTHOR_NAME="b",
            GIT_AUTHOR_EMAIL="b@e", GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@e")
os.makedirs(repo)
for i in range(1000):
    open(os.path.join(repo, "f%04d.txt" % i), "w").write("line %d\n" % i)
for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "b"]):
    subprocess.run(cmd, cwd=repo, env=genv, check=True)
wheel = subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "mkwheel.py"),
                        os.path.join(stage, "wheels"), "benchpkg", "1.0", "-", "2000"],
                       capture_output=True, text=True, check=True).stdout.strip()
venv = os.path.join(stage, "venv")
have_pip = subprocess.run(["/usr/bin/python3", "-m", "venv", venv], env=env,
                          capture_output=True).returncode == 0
subprocess.run(["chmod", "-R", "a+rX", stage], check=True)
jobs = [("unpack a 10,000-file tree (tar -x, then rm -rf)",
         "tar -xf %s && rm -rf tree" % tarball),
        ("git clone of a local 1,000-file repository (then rm -rf)",
         "git clone -q %s c && rm -rf c" % repo)]
if have_pip:
    jobs.append(("pip install --target of a local 2,000-file wheel (a venv's pip; then rm -rf)",
                 "%s/bin/pip install -q --no-index --no-compile --target t %s && rm -rf t"
                 % (venv, wheel)))
print("| workload (stacked) | protection off | on | ratio | landlock off | on | ratio |")
print("|---|---|---|---|---|---|---|")
for name, job in jobs:
    row = []
    for b in ("stacked", "landlock"):
        run = [sb, "run", "-q", "--backend", b, "-C", wwork, "-r", stage, "--no-limits"]
        cmds = [run + ["--unprotect", "*", "--", "/bin/sh", "-c", job],
                run + ["--", "/bin/sh", "-c", job]]
        for c in cmds:  # a job that fails is no measure: said, and the bench stops
            subprocess.run(c, cwd=wwork, env=env, check=True, stdout=subprocess.DEVNULL)
        t = interleaved(cmds, 5, 0)
        row += ["%.0f ms" % t[0], "%.0f ms" % t[1], "**%.2fx**" % (t[1] / t[0])]
    print("| %s | %s |" % (name, " | ".join(row)))
if not have_pip:
    print("\n(no pip row: python3 -m venv failed here)")
print("\nIn %s. Goal (issue 35): 1.1x or better." % ("a tmpfs" if tmpfs else "the stage's /tmp"))

print("\n## The floor of any supervisor: the same unpack with nothing but the round trips\n")
# bench/notify traps the calls the live layer traps and does no more: each
# answered at once (continue), or an open made from the caller's cwd and
# handed back (perform); beside the command bare and stepbox off and on
notify = os.path.join(stage, "notify")
shutil.copy(os.path.join(build, "notify"), notify)
job = jobs[0][1]
run = [sb, "run", "-q", "--backend", "stacked", "-C", wwork, "-r", stage, "--no-limits"]
cmds = [["/bin/sh", "-c", job], [notify, "continue", "/bin/sh", "-c", job],
        [notify, "perform", "/bin/sh", "-c", job],
        run + ["--unprotect", "*", "--", "/bin/sh", "-c", job], run + ["--", "/bin/sh", "-c", job]]
for c in cmds:
    subprocess.run(c, cwd=wwork, env=env, check=True, stdout=subprocess.DEVNULL)
t = interleaved(cmds, 5, 0, wwork)
print("| bare | notify, continue | notify, perform | stacked, protection off | on |")
print("|---|---|---|---|---|")
print("| %s |" % " | ".join("%.0f ms (%.2fx)" % (x, x / t[0]) for x in t))
print("\nThe second column is the least any supervisor of notifications costs for this "
      "work: the call stopped, the supervisor woken on the caller's CPU, the call let go. "
      "No layer that stops each call that makes a name can come under it.")
if tmpfs:
    subprocess.run(["umount", wstage])
shutil.rmtree(wstage, ignore_errors=True)

print("\n## A shell-heavy workload: `sh -c` running 300 commands found on PATH\n")
# each a fork, a PATH search (the lookups the tracer stops at under the
# namespaces) and an exec: the shape of an agent's command line
shell = "'for i in $(seq 300); do true_=$(command -v true); env true; done'"
cmds = ["/bin/sh -c " + shell,
        " ".join([sb, "run", "-q", "-C", work, "--", "/bin/sh", "-c", shell]),
        " ".join([sb, "run", "-q", "--explain", "-C", work, "--", "/bin/sh", "-c", shell])]
names = ["bare", "stepbox", "--explain (tracer)"]
ratio_row(names, cmds, 10)
print("\nUnder --explain each fork, PATH lookup and exec is a stop of the tracer's; "
      "without it, none is.")

print("\n## The environment module's start-up cost\n")
pers = os.path.join(stage, "wf", ".sandbox-cache")
t = hyperfine([" ".join([sb, "run", "-q", "-C", work, "--workdir-readonly", "--", "/bin/true"]),
               " ".join([sb, "run", "-q", "-C", work, "--persist", pers, "--", "/bin/true"])])
routed = json.loads(subprocess.run([sb, "policy", "-C", work, "--persist", pers], env=env,
                                   capture_output=True, text=True, check=True).stdout)
print("| nothing routed | routed into P (%d folders created) | ratio |"
      % len(routed["routed_dirs"]))
print("|---|---|---|")
print("| %.2f ms | %.2f ms | **%.2fx** |" % (t[0], t[1], t[1] / t[0]))

print("\n## What the limits cost at start-up (defaults against --no-limits)\n")
print("Medians of %d runs each, taken in turn (A B A B ...): the cost is a fraction of a "
      "millisecond, below a shared machine's drift over a sequential run.\n" % runs)
print("| user | backend | enforced by | --no-limits | default limits | cost | goal |")
print("|---|---|---|---|---|---|---|")
for name, u in users:
    for backend in ("stacked", "landlock"):
        base = u + [sb, "run", "-q", "-C", work, "--backend", backend]
        rep = os.path.join(work, "limits.json")
        subprocess.run(base + ["--report", rep, "--", "/bin/true"], env=env, check=True)
        by = json.load(open(rep)).get("limits", {}).get("tasks", {}).get("enforced_by", "-")
        os.unlink(rep)
        t = interleaved([base + ["--no-limits", "--", "/bin/true"], base + ["--", "/bin/true"]],
                        runs)
        print("| %s | %s | %s | %.2f ms | %.2f ms | %.0f us | under 300 us |"
              % (name, backend, by, t[0], t[1], (t[1] - t[0]) * 1000))

print("\n## The workflow cache's lock, uncontended (bench/lockcost: lock and unlock)\n")
lockdir = tempfile.mkdtemp(prefix="stepbox-lock-")
out = subprocess.run([os.path.join(build, "lockcost"), lockdir, "2000"], capture_output=True,
                     text=True)
print("| per step | goal |")
print("|---|---|")
print("| %s us | under 100 us |" % (out.stdout.strip() if out.returncode == 0 else "failed"))
shutil.rmtree(lockdir, ignore_errors=True)

print("\n## Installs that the persistent folder made offline (npm)\n")
deps = ["is-number@7.0.0", "is-odd@3.0.1", "kind-of@6.0.3", "ms@2.1.3", "isarray@2.0.5"]
probe = subprocess.run(["timeout", "20", "npm", "view", "is-number", "version"], env=dict(
    env, npm_config_cache=os.path.join(stage, "probe")), capture_output=True)
if probe.returncode != 0:
    print("skipped: the npm registry cannot be reached")
else:
    import time
    def npm_run(run, extra):
        d = os.path.join(stage, "wf", "runs", run)
        os.makedirs(d)
        t0 = time.monotonic()
        subprocess.run([sb, "run", "-q", "-C", d, "--persist", pers, "--", "npm", "install",
                        "--no-audit", "--no-fund"] + extra + deps, env=env, check=True,
                       capture_output=True)
        return time.monotonic() - t0
    cold = npm_run("1", [])
    warm = npm_run("2", ["--prefer-offline"])
    print("| run 1: registry, cold cache | run 2: fresh run folder, --prefer-offline | ratio |")
    print("|---|---|---|")
    print("| %.0f ms | %.0f ms | **%.2fx** |" % (cold * 1000, warm * 1000, warm / cold))
# network by name: the proxy against a direct connection (bench/proxy.py)
sys.stdout.flush()
subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "proxy.py"), sb], env=env)
shutil.rmtree(stage)
