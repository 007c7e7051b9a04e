#include "report.h"
#include "reportfile.h"
#include "show.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harden.h"
#include "layers.h"
#include "mountns.h"
#include "path.h"

static json_t *missing_json(const struct landlock_features *f)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < landlock_feature_count; i++)
		if (landlock_feature_table[i].abi > f->abi)
			json_array_append_new(a, json_string(landlock_feature_table[i].name));
	return a;
}

/* What the layers of b cannot give on this host, in check's vocabulary. */
static json_t *backend_missing_json(const struct backend *b)
{
	struct strv m = STRV_INIT;
	json_t *a = backend_missing(b, &m) == 0 ? show_strv_json(&m) : NULL;
	strv_release(&m);
	return a;
}

/* Each backend on this host: usable, or why not. */
static void check_backends(json_t *o, FILE *out, const struct backend_host *host,
			   const struct stepbox_config *cfg)
{
	for (size_t i = 0; backend_table[i]; i++) {
		if (backend_table[i]->name == BACKEND_NONE)
			continue;
		struct stepbox_config one = *cfg;
		one.backend = backend_table[i]->name;
		struct backend b;
		struct stepbox_err e = {0};
		bool ok = backend_choose(&one, host, &b, &e) == 0;
		const char *name = policy_backend_name(one.backend);
		if (o) {
			const char *sup = !ok ? NULL
					  : b.layers.outer_supervisor
						  ? "the outer sandbox's (nested)"
					  : !b.layers.supervise     ? NULL
					  : b.layers.supervise_nofd ? "without pidfd_getfd"
								    : "full";
			json_object_set_new(
				o, name,
				json_pack("{s:b, s:o, s:o, s:s?}", "available", ok, "error",
					  ok ? json_null() : json_string(e.msg), "missing",
					  ok ? backend_missing_json(&b) : json_null(), "supervisor",
					  sup));
			continue;
		}
		if (ok) {
			char what[256];
			backend_describe(&b, what, sizeof(what));
			fprintf(out, "backend %s\n", what);
		} else {
			fprintf(out, "backend %s: not available: %s\n  hint: %s\n", name, e.msg,
				e.hint);
		}
	}
}

/* what report_check found: auto's pick, namespaces, and auto's limits */
struct check {
	struct backend pick;
	struct stepbox_err aerr, nerr, lerr;
	bool picked, ns_ok, lim_ok;
	struct limit_plan lp;
};

static bool check_json(FILE *out, const struct backend_host *host, const struct stepbox_config *cfg,
		       struct check *c)
{
	const struct landlock_features *f = &host->features;
	json_t *feats = json_array(), *backends = json_object();
	for (unsigned i = 0; i < landlock_feature_count; i++) {
		const struct landlock_feature_info *fi = &landlock_feature_table[i];
		json_array_append_new(feats, json_pack("{s:i, s:s, s:s, s:b}", "abi", fi->abi,
						       "name", fi->name, "what", fi->what,
						       "available", fi->abi <= f->abi));
	}
	check_backends(backends, out, host, cfg);
	bool picked = c->picked, ns_ok = c->ns_ok, lim_ok = c->lim_ok;
	json_t *o = json_pack("{s:i, s:i, s:i, s:o, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:o}",
			      "version", 1, "kernel_landlock_abi", f->kernel_abi, "landlock_abi",
			      f->abi, "abi_cap", f->cap >= 0 ? json_integer(f->cap) : json_null(),
			      "features", feats, "missing", missing_json(f), "namespaces", ns_ok,
			      "namespaces_error", ns_ok ? json_null() : json_string(c->nerr.msg),
			      "backends", backends, "auto_backend",
			      picked ? json_string(policy_backend_name(c->pick.name)) : json_null(),
			      "auto_missing", picked ? backend_missing_json(&c->pick) : json_null(),
			      "auto_error", picked ? json_null() : json_string(c->aerr.msg));
	if (o)
		json_object_set_new(
			o, "limits",
			lim_ok ? limit_json(&c->lp)
			       : json_pack("{s:s?}", "error", picked ? c->lerr.msg : NULL));
	if (lim_ok)
		limit_release(&c->lp);
	show_dump(out, o);
	return picked;
}

/* the text of auto's pick: its limits, what it cannot give, and notes */
static void check_auto_text(FILE *out, struct check *c)
{
	fprintf(out, "auto: %s\n", policy_backend_name(c->pick.name));
	char said[1024];
	bool sysv_unbounded =
		c->lim_ok && c->pick.layers.userns && c->lp.how[LIMIT_MEMORY] != LIMIT_CGROUP;
	if (c->lim_ok) {
		limit_describe(&c->lp, said, sizeof(said));
		limit_release(&c->lp);
	}
	fprintf(out, "limits: %s\n", c->lim_ok ? said : c->lerr.msg);
	struct strv m = STRV_INIT;
	backend_missing(&c->pick, &m);
	for (size_t i = 0; i < m.n; i++)
		fprintf(out, "%s%s%s", i ? ", " : "auto cannot give here: ", m.v[i],
			i + 1 == m.n ? "\n" : "");
	strv_release(&m);
	if (!c->pick.layers.ns)
		fputs("note: without namespaces the host's /proc stays visible (other processes' "
		      "command lines), System V IPC is refused, and /dev/shm is a folder of the "
		      "step's own that the supervisor serves\n",
		      out);
	else if (sysv_unbounded)
		fputs("note: System V IPC is refused: its limits cannot be set in a user namespace "
		      "that maps this user to itself, and no cgroup bounds its memory (run as "
		      "root, or with a delegated cgroup2)\n",
		      out);
}

static bool check_text(FILE *out, const struct backend_host *host, const struct stepbox_config *cfg,
		       struct check *c)
{
	landlock_describe(out, &host->features);
	fputs("seccomp: refuses", out);
	for (const char *const *n = harden_denied_syscalls; *n; n++)
		fprintf(out, " %s", *n);
	fputs(", new user namespaces, ioctl TIOCSTI and TIOCLINUX, every syscall ABI but the "
	      "native one\n",
	      out);
	if (c->ns_ok)
		fprintf(out, "namespaces: available (%s)\n",
			mountns_userns() ? "through a user namespace" : "as root");
	else
		fprintf(out, "namespaces: not available: %s\n  hint: %s\n", c->nerr.msg,
			c->nerr.hint);
	check_backends(NULL, out, host, cfg);
	if (!c->picked) {
		fprintf(out, "auto: no backend available (SANDBOX_UNAVAILABLE): %s\n", c->aerr.msg);
		return c->picked;
	}
	check_auto_text(out, c);
	return c->picked;
}

bool report_check(FILE *out, const struct backend_host *host, const struct stepbox_config *cfg,
		  bool json)
{
	struct stepbox_config any = *cfg;
	any.backend = BACKEND_AUTO;
	struct check c = {0};
	c.picked = backend_choose(&any, host, &c.pick, &c.aerr) == 0;
	c.ns_ok = layers_probe_ns(cfg, &c.nerr) == 0;
	/* the limits a step of auto's layers would get here */
	c.lim_ok = c.picked && limit_plan(&cfg->limits, c.pick.layers.userns, c.pick.layers.ns,
					  false, NULL, &c.lp, &c.lerr) == 0;
	return json ? check_json(out, host, cfg, &c) : check_text(out, host, cfg, &c);
}

/* What auto passed over before the backend in force, and why each. */
static json_t *tried_json(const struct backend *b)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < b->ntried; i++) {
		const struct backend_tried *t = &b->tried[i];
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s?}", "backend",
						   policy_backend_name(t->name), "when",
						   t->at_start ? "start" : "probe", "error",
						   t->why.msg, "hint",
						   t->why.hint[0] ? t->why.hint : NULL));
	}
	return a;
}

int report_run(const char *path, const char *dir, const struct report_in *in,
	       struct stepbox_err *err)
{
	const struct stepbox_config *cfg = in->cfg;
	char *const *argv = in->argv;
	const struct backend *backend = in->backend;
	const struct env_result *env = in->env;
	const struct launch_result *res = in->res;
	const struct persist_lock *lock = in->lock;
	const struct limit_plan *limits = in->limits;
	const struct explain *x = in->x;
	const struct landlock_features *f = &backend->host->features;
	json_t *cmd = show_list_json((const char *const *)argv);
	json_t *root = json_pack(
		"{s:i, s:o, s:b, s:i, s:o, s:o, s:b, s:f, s:s, s:i, s:i, s:o, s:o, s:o, s:o, s:o, "
		"s:o}",
		"version", 1, "command", cmd, "started", res->started, "exit_code", res->exit_code,
		"status", res->status >= 0 ? json_integer(res->status) : json_null(), "signal",
		res->signal ? json_integer(res->signal) : json_null(), "timed_out", res->timed_out,
		"duration_s", res->duration_s, "backend", policy_backend_name(backend->name),
		"landlock_abi", f->abi, "kernel_landlock_abi", f->kernel_abi, "network",
		show_network_json(cfg), "missing_protections", backend_missing_json(backend),
		"denials", x ? explain_json(x) : json_null(), "denials_source",
		x ? json_string(x->source) : json_string("none: run with --explain to record them"),
		"env_dropped", show_dropped_json(&env->dropped), "home_unseen",
		show_strv_json(&env->unseen));
	if (root && env->persist)
		json_object_set_new(root, "persistent",
				    json_pack("{s:s, s:s, s:f, s:o}", "path", env->persist, "mode",
					      lock->shared ? "shared" : "exclusive", "waited_s",
					      lock->waited_s, "waited_for",
					      lock->waited_s > 0 && lock->holder[0]
						      ? json_string(lock->holder)
						      : json_null()));
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
		json_object_set_new(
			root, "layers",
			json_pack("{s:b, s:b, s:b, s:b, s:b, s:b}", "namespaces",
				  backend->layers.ns, "landlock", backend->layers.landlock,
				  "supervisor", backend->layers.supervise, "outer_supervisor",
				  backend->layers.outer_supervisor, "served_shm",
				  backend->layers.serve_shm, "sysv_refused",
				  backend->layers.refuse_sysv || backend->layers.unbounded_sysv));
	if (root)
		json_object_set_new(root, "auto_tried", tried_json(backend));
	if (root && in->egress)
		json_object_set_new(root, "hosts", egress_reached_json(in->egress));
	if (root) {
		json_object_set_new(root, "protected", protect_json(in->prot));
		json_object_set_new(root, "unprotected", protect_json_unprotected(in->prot));
	}
	return reportfile_write(path, "--report", dir, root, err);
}

/*
 * A report for a run that never started (exit 125): what failed, as the
 * message said it, so an orchestrator reads the same thing a person does.
 */
