#include "report.h"
#include "show.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harden.h"
#include "path.h"
#include "run.h"

static json_t *missing_json(const struct landlock_features *f)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < landlock_feature_count; i++)
		if (landlock_feature_table[i].abi > f->abi)
			json_array_append_new(a, json_string(landlock_feature_table[i].name));
	return a;
}

/* What the layers of b cannot give on this host, in check's vocabulary. */
static json_t *backend_missing_json(const struct backend *b, const struct landlock_features *f)
{
	struct strv m = STRV_INIT;
	json_t *a = backend_missing(b, f, &m) == 0 ? show_strv_json(&m) : NULL;
	strv_release(&m);
	return a;
}

/* Each backend on this host: usable, or why not. */
static void check_backends(json_t *o, FILE *out, const struct landlock_features *f,
			   const struct stepbox_config *cfg)
{
	static const enum policy_backend names[] = {BACKEND_STACKED, BACKEND_LANDLOCK,
						    BACKEND_MOUNTNS};
	for (size_t i = 0; i < 3; i++) {
		struct stepbox_config one = *cfg;
		one.backend = names[i];
		struct backend b;
		struct stepbox_err e = {0};
		bool ok = backend_choose(&one, f, true, &b, &e) == 0;
		const char *name = policy_backend_name(names[i]);
		if (o) {
			const char *sup = !ok || !b.supervise ? NULL
					  : b.supervise_nofd ? "without pidfd_getfd"
							     : "full";
			json_object_set_new(o, name,
					    json_pack("{s:b, s:o, s:o, s:s?}", "available", ok, "error",
						      ok ? json_null() : json_string(e.msg),
						      "missing",
						      ok ? backend_missing_json(&b, f) : json_null(),
						      "supervisor", sup));
			continue;
		}
		if (ok) {
			char what[256];
			backend_describe(&b, f, what, sizeof(what));
			fprintf(out, "backend %s\n", what);
		} else {
			fprintf(out, "backend %s: not available: %s\n  hint: %s\n", name, e.msg, e.hint);
		}
	}
}

bool report_check(FILE *out, const struct landlock_features *f,
		  const struct stepbox_config *cfg, bool json)
{
	struct stepbox_config any = *cfg;
	any.backend = BACKEND_AUTO;
	struct backend pick;
	struct stepbox_err aerr = {0}, nerr = {0};
	bool picked = backend_choose(&any, f, true, &pick, &aerr) == 0;
	bool ns_ok = backend_probe_ns(cfg, &nerr) == 0;
	/* the limits a step of auto's layers would get here */
	struct limit_plan lp;
	struct stepbox_err lerr = {0};
	bool lim_ok = picked && limit_plan(&cfg->limits, pick.ns && mountns_userns(), pick.ns,
					   false, &lp, &lerr) == 0;
	if (json) {
		json_t *feats = json_array(), *backends = json_object();
		for (unsigned i = 0; i < landlock_feature_count; i++) {
			const struct landlock_feature_info *fi = &landlock_feature_table[i];
			json_array_append_new(feats,
					      json_pack("{s:i, s:s, s:s, s:b}", "abi", fi->abi,
							"name", fi->name, "what", fi->what,
							"available", fi->abi <= f->abi));
		}
		check_backends(backends, out, f, cfg);
		json_t *o = json_pack("{s:i, s:i, s:i, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}",
				    "version", 1, "kernel_landlock_abi", f->kernel_abi,
				    "landlock_abi", f->abi,
				    "abi_cap", f->cap >= 0 ? json_integer(f->cap) : json_null(),
				    "features", feats, "missing", missing_json(f), "namespaces",
				    ns_ok, "namespaces_error",
				    ns_ok ? json_null() : json_string(nerr.msg), "backends", backends,
				    "auto_backend",
				    picked ? json_string(policy_backend_name(pick.name)) : json_null(),
				    "auto_missing", picked ? backend_missing_json(&pick, f) : json_null(),
				    "auto_error", picked ? json_null() : json_string(aerr.msg));
		if (o)
			json_object_set_new(o, "limits",
					    lim_ok ? limit_json(&lp)
						   : json_pack("{s:s?}", "error",
							       picked ? lerr.msg : NULL));
		if (lim_ok)
			limit_release(&lp);
		show_dump(out, o);
		return picked;
	}
	landlock_describe(out, f);
	fputs("seccomp: refuses", out);
	for (const char *const *n = harden_denied_syscalls; *n; n++)
		fprintf(out, " %s", *n);
	fputs(", new user namespaces, ioctl TIOCSTI and TIOCLINUX, every syscall ABI but the "
	      "native one\n", out);
	if (ns_ok)
		fprintf(out, "namespaces: available (%s)\n",
			mountns_userns() ? "through a user namespace" : "as root");
	else
		fprintf(out, "namespaces: not available: %s\n  hint: %s\n", nerr.msg, nerr.hint);
	check_backends(NULL, out, f, cfg);
	if (!picked) {
		fprintf(out, "auto: no backend available (SANDBOX_UNAVAILABLE): %s\n", aerr.msg);
		return picked;
	}
	fprintf(out, "auto: %s\n", policy_backend_name(pick.name));
	char said[1024];
	if (lim_ok) {
		limit_describe(&lp, said, sizeof(said));
		limit_release(&lp);
	}
	fprintf(out, "limits: %s\n", lim_ok ? said : lerr.msg);
	struct strv m = STRV_INIT;
	backend_missing(&pick, f, &m);
	for (size_t i = 0; i < m.n; i++)
		fprintf(out, "%s%s%s", i ? ", " : "auto cannot give here: ", m.v[i],
			i + 1 == m.n ? "\n" : "");
	strv_release(&m);
	if (!pick.ns)
		fputs("note: without namespaces the host's /proc stays visible (other processes' "
		      "command lines), System V IPC and the host's /dev/shm are refused\n", out);
	return picked;
}

static void list_grants(FILE *out, const struct grants *g, bool writable)
{
	bool any = false;
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		bool mine = gr->origin != ORIGIN_BASELINE && gr->origin != ORIGIN_BASELINE_TARGET;
		if (!mine || (writable != !!(gr->access & GRANT_WRITE)))
			continue;
		fprintf(out, "- `%s`%s\n", gr->path,
			gr->origin == ORIGIN_PERSISTENT || (g->persist && !strcmp(gr->path, g->persist))
				? " (persistent tool folder)"
			: gr->origin == ORIGIN_WORKDIR ? " (working folder)"
						       : "");
		any = true;
	}
	if (!any)
		fprintf(out, "- nothing%s\n", writable ? ": this step cannot write files" : "");
}

static void guide_network(FILE *out, const struct stepbox_config *cfg)
{
	if (cfg->net == NET_ALLOW) {
		fprintf(out, "\nNetwork: allowed.\n");
		return;
	}
	if (cfg->net == NET_NONE) {
		fprintf(out, "\nNetwork: none. Only local UNIX sockets work; name lookups fail at "
			     "once. Package installs must come from local files or caches.\n");
		return;
	}
	fprintf(out, "\nNetwork: TCP only, connecting to port");
	for (unsigned i = 0; i < cfg->connect_tcp.n; i++)
		fprintf(out, "%s %u", i ? "," : "", cfg->connect_tcp.v[i]);
	if (!cfg->connect_tcp.n)
		fprintf(out, "s: none");
	if (cfg->bind_tcp.n) {
		fprintf(out, "; listening on port");
		for (unsigned i = 0; i < cfg->bind_tcp.n; i++)
			fprintf(out, "%s %u", i ? "," : "", cfg->bind_tcp.v[i]);
	}
	fprintf(out, ". No UDP: DNS works only over TCP to port 53, when it is listed.\n");
}

/* What bounds the step, as the agent will meet it. */
static void guide_limits(FILE *out, const struct limit_plan *lp)
{
	static const char *const meets[LIMIT_N] = {
		[LIMIT_MEMORY] = "memory",
		[LIMIT_TASKS] = "processes and threads at once: past it `fork` fails "
				"(\"Resource temporarily unavailable\")",
		[LIMIT_CPU] = "of CPU time per process: past it the process is killed",
		[LIMIT_FILE_SIZE] = "per file written: past it the write fails (SIGXFSZ)",
		[LIMIT_OPEN_FILES] = "open files per process",
		[LIMIT_OUTPUT] = "of output: the rest is dropped, so write large results "
				 "to files instead",
		[LIMIT_TMP] = "in `/tmp` (and in HOME): past it, \"No space left on device\"",
	};
	bool any = false;
	for (int k = 0; k < LIMIT_N; k++) {
		if (lp->how[k] == LIMIT_OFF || lp->how[k] == LIMIT_UNENFORCED)
			continue;
		char v[64];
		limit_value(lp, (enum limit_kind)k, v, sizeof(v));
		if (!any)
			fprintf(out, "\n## Limits\n\n");
		any = true;
		if (k == LIMIT_MEMORY)
			fprintf(out, "- %s of memory %s\n", v,
				lp->how[k] == LIMIT_CGROUP
					? "for all your processes together: past it the kernel kills "
					  "them"
					: "per process: past it an allocation fails");
		else
			fprintf(out, "- %s %s\n", v, meets[k]);
	}
}

void report_guide(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
		  const struct env_result *env, const struct limit_plan *lp)
{
	const char *tmp = env_get(env->env.v, "TMPDIR");
	bool ns = false; /* the namespace layers make private places */
	const char *home = env_get(env->env.v, "HOME");
	bool private_home = false;
	for (size_t i = 0; i < g->n; i++) {
		ns |= (g->v[i].access & GRANT_PRIVATE) != 0;
		private_home |= home && (g->v[i].access & GRANT_PRIVATE) && !strcmp(g->v[i].path, home);
	}
	fprintf(out, "# Your sandbox\n\n"
		     "Your commands run in a sandbox (stepbox). What it grants is all there is:\n%s\n\n"
		     "Working folder: `%s`\n\n",
		ns ? "a path that is not granted does not exist (\"No such file or directory\"), "
		     "and a folder granted for reading only is a read-only file system."
		   : "a denial shows up as \"Permission denied\" or \"Operation not permitted\".",
		g->workdir);
	if (home && private_home)
		fprintf(out, "HOME: `%s`, a private folder of this step: it holds nothing of the "
			     "user's but the files granted below, and what you write there is gone "
			     "after the run.\n\n", home);
	else if (home)
		fprintf(out, "HOME: `%s`, the user's: nothing in it is readable unless granted "
			     "below.\n\n", home);
	const char *xdg = env_get(env->env.v, "XDG_CONFIG_HOME");
	if (xdg && (env->persist || env->run_base))
		fprintf(out, "User configuration: `git config --global`, `npm config set` and "
			     "`pip config set` write beneath `%s`, and the next run%s sees it.\n\n",
			xdg, env->persist ? " of this workflow" : " in this folder");
	fprintf(out, "## You may write to\n\n");
	list_grants(out, g, true);
	fprintf(out, "\n## You may read (besides the system: /usr, /etc, /proc)\n\n");
	list_grants(out, g, false);
	fprintf(out, "\n## Installing tools\n\n");
	if (env->persist && cfg->persist_shared) {
		fprintf(out,
			"The workflow's tools in `$SANDBOX_PERSISTENT_DIR` (`%s`) are on `PATH` "
			"and may be run, but the workflow cache is shared read-only in this "
			"step: nothing can be installed or changed there (other steps use it at "
			"the same time). Install in a step that holds it (`--persist`). Caches "
			"go to `%s`.\n",
			env->persist, env->run_base ? env->run_base : "nowhere writable");
	} else if (env->persist) {
		fprintf(out,
			"Installs work and persist for this workflow: `pip install --user`, "
			"`npm install -g`, `go install`, `cargo install`, `pipx`, `uv tool` "
			"and their caches go to `$SANDBOX_PERSISTENT_DIR` (`%s`), and its bin "
			"folders lead `PATH`. The next run finds them there, so do not "
			"reinstall what is present. Keep a venv or a downloaded binary there "
			"on purpose (`python3 -m venv $SANDBOX_PERSISTENT_DIR/venv`). That "
			"folder is for tooling; the workflow's data and results belong in "
			"your working folder or the other folders above.\n",
			env->persist);
	} else if (env->run_base) {
		fprintf(out,
			"Installs work: `pip install --user`, `python3 -m venv`, `npm install` "
			"and `npm install -g` go into `%s` (`.local`, `.cache`). They last only "
			"as long as that folder: this step has no persistent tool folder.\n",
			env->run_base);
	} else {
		fprintf(out, "This step has no writable folder, so nothing can be installed.\n");
	}
	if (tmp)
		fprintf(out, "\nTemporary files: `$TMPDIR` (`%s`)%s.\n", tmp,
			ns ? "; `/tmp` is a private folder of this step"
			   : "; `/tmp` itself is not writable here, so a tool that ignores "
			     "`$TMPDIR` (pnpm's store locks) fails");
	guide_network(out, cfg);
	guide_limits(out, lp);
	fprintf(out, "\n## Not available\n\n"
		     "- root, `sudo` and `apt`: you have no capabilities and cannot gain any "
		     "(setuid programs do not elevate).\n"
		     "- other users' processes, the host's services' secrets, mounts, new user "
		     "namespaces.\n"
		     "\n## When something is denied\n\n"
		     "It is the sandbox, not a broken tool, a missing login or a missing "
		     "package. Do not conclude it is impossible: report the exact path that "
		     "was denied and ask the operator to grant it (`--read PATH` or "
		     "`--write PATH`, a `read_paths` / `write_paths` entry, or "
		     "`SANDBOX_EXTRA_SYSTEM_PATHS` for a tool folder).\n");
}

/*
 * Write root to path, atomically (a temporary file, then rename), in dir:
 * path's folder, canonical. The folder may lie in a step's write grants: it
 * is opened without following any symlink (one there now was planted), and
 * everything after is relative to it. Takes root.
 */
static int write_report(const char *path, const char *dir, json_t *root, struct stepbox_err *err)
{
	const char *name = path_base(path);
	char tmp[NAME_MAX + 32];
	int dfd = path_open_nofollow(dir, O_DIRECTORY);
	if (!root || dfd < 0 ||
	    snprintf(tmp, sizeof(tmp), ".%s.tmp.%d", name, (int)getpid()) >= (int)sizeof(tmp)) {
		int e = dfd < 0 ? -dfd : root ? ENAMETOOLONG : ENOMEM;
		json_decref(root);
		if (dfd >= 0)
			close(dfd);
		err_set(err, ERR_USAGE, e, "write report '%s'", path);
		if (e == ELOOP)
			err_hint(err, "the report's folder '%s' goes through a symlink (one a step "
				      "may have planted); give --report a path through real folders, "
				      "out of the step's write grants", dir);
		return -e;
	}
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	FILE *f_out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f_out) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		close(dfd);
		json_decref(root);
		return err_set(err, ERR_USAGE, e, "write report '%s/%s'", dir, tmp);
	}
	int r = show_dump(f_out, root);
	int e = 0;
	if (fclose(f_out) != 0 || r < 0 || renameat(dfd, tmp, dfd, name) < 0) {
		e = errno ? errno : EIO;
		unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return e ? err_set(err, ERR_USAGE, e, "write report '%s'", path) : 0;
}

int report_run(const char *path, const char *dir, const struct stepbox_config *cfg,
	       char *const *argv,
	       const struct backend *backend, const struct landlock_features *f,
	       const struct env_result *env, const struct launch_result *res,
	       const struct persist_lock *lock, const struct limit_plan *limits,
	       const struct explain *x, struct stepbox_err *err)
{
	json_t *cmd = json_array();
	for (char *const *a = argv; *a; a++)
		json_array_append_new(cmd, json_string(*a));
	json_t *root = json_pack(
		"{s:i, s:o, s:b, s:i, s:o, s:o, s:b, s:f, s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o}",
		"version", 1, "command", cmd, "started", res->started, "exit_code",
		res->exit_code, "status", res->status >= 0 ? json_integer(res->status) : json_null(),
		"signal", res->signal ? json_integer(res->signal) : json_null(), "timed_out",
		res->timed_out, "duration_s", res->duration_s, "backend",
		policy_backend_name(backend->name), "landlock_abi", f->abi, "kernel_landlock_abi",
		f->kernel_abi, "network", show_network_json(cfg), "missing_protections",
		backend_missing_json(backend, f),
		"denials", x ? explain_json(x) : json_null(), "denials_source",
		x ? json_string(x->source) : json_string("none: run with --explain to record them"),
		"env_dropped", show_dropped_json(&env->dropped));
	if (root && env->persist)
		json_object_set_new(root, "persistent",
				    json_pack("{s:s, s:s, s:f, s:o}", "path", env->persist, "mode",
					      lock->shared ? "shared" : "exclusive", "waited_s",
					      lock->waited_s, "waited_for",
					      lock->waited_s > 0 && lock->holder[0]
						      ? json_string(lock->holder) : json_null()));
	if (root)
		json_object_set_new(root, "graced", json_boolean(res->graced));
	if (root) {
		/* limits, cgroup, no_cgroup_why, limit_reached: at the top */
		json_t *l = limit_json(limits);
		json_object_update(root, l);
		json_decref(l);
		json_object_set_new(root, "output_dropped",
				    json_integer((json_int_t)limits->output_dropped));
	}
	if (root)
		json_object_set_new(root, "layers",
				    json_pack("{s:b, s:b, s:b}", "namespaces", backend->ns, "landlock",
					      backend->landlock, "supervisor", backend->supervise));
	return write_report(path, dir, root, err);
}

/*
 * A report for a run that never started (exit 125): what failed, as the
 * message said it, so an orchestrator reads the same thing a person does.
 */
int report_error(const char *path, const struct stepbox_config *cfg,
		 const struct stepbox_err *failure, struct stepbox_err *err)
{
	/*
	 * Nothing was resolved yet, so no grant tells which symlinks a step
	 * could have planted: the folder is taken as given, through no symlink
	 * at all (write_report opens it with RESOLVE_NO_SYMLINKS).
	 */
	char dir[PATH_MAX];
	if (!path_parent(path, dir, sizeof(dir)))
		return err_set(err, ERR_USAGE, ENAMETOOLONG, "write report '%s'", path);
	/* the path the message is about: stepbox quotes it as '...' */
	const char *q = strchr(failure->msg, '\''), *q2 = q ? strchr(q + 1, '\'') : NULL;
	json_t *error = json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind",
				  failure->kind == ERR_USAGE ? "usage" : "sandbox_unavailable",
				  "message", failure->msg, "path",
				  q2 ? json_stringn(q + 1, (size_t)(q2 - q - 1)) : json_null(), "hint",
				  failure->hint[0] ? json_string(failure->hint) : json_null(), "errno",
				  failure->errnum ? json_integer(failure->errnum) : json_null());
	json_t *root = json_pack("{s:i, s:b, s:i, s:o, s:o}", "version", 1, "started", false,
				 "exit_code", 125, "error", error, "network", show_network_json(cfg));
	return write_report(path, dir, root, err);
}

