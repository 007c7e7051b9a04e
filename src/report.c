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

