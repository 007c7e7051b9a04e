/*
 * run: the pipeline every subcommand shares. run_prepare turns a config into
 * the backend choice, grants and environment without touching anything;
 * run_exec applies them and launches. So `policy` and `env` print exactly
 * what `run` applies.
 */
#ifndef STEPBOX_RUN_H
#define STEPBOX_RUN_H

#include "backend.h"
#include "env.h"
#include "grants.h"
#include "harden.h"
#include "layers.h"
#include "launch.h"
#include "limit.h"
#include "mountns.h"
#include "policy.h"

struct run_ctx {
	char *const *inherited; /* the caller's environment */
	char tty_names[3][64];  /* the step's own terminals */
	const char *ttys[4];
	const char *cgroups[6];   /* the cgroup folders the step reads (the limits' own) */
	struct strv dev_mounts;   /* Landlock alone: where device file systems are mounted */
	char *report_dir;         /* --report's folder, canonical before the run */
	struct backend_host host; /* the kernel's Landlock, probed once */
	struct backend backend;   /* resolved: never BACKEND_AUTO; planned by run_exec */
	struct grants grants;
	struct env_result env;
	int idmap_userns;         /* root's /etc bound idmapped (mountns_idmap_userns), or -1 */
	struct limit_plan limits; /* how each limit is enforced (made for real by run_exec) */
};

/*
 * Probe the kernel, choose the backend, build grants and environment for
 * cfg, with inherited as the caller's environment. Nothing is created or
 * changed on disk. 0 or a negative errno with err filled.
 */
int run_prepare(const struct stepbox_config *cfg, char *const *inherited, bool for_run,
		struct run_ctx *ctx, struct stepbox_err *err);
void run_release(struct run_ctx *ctx);

/* What `stepbox learn` gathers over its rounds. */
struct learn {
	struct json_t *policy; /* the policy as asked, with what was learned merged in */
	struct strv refused;   /* what was denied and is never proposed, each with why */
	int added;             /* entries the last round added */
};

/*
 * Create the workdir, persistent and routed folders, build the sandbox and
 * run argv in it. Returns stepbox's exit status (the command's, 124, 126,
 * 127, 128+N); 125 after printing err when the sandbox could not be applied.
 * With cfg->explain the denials follow on stderr; with learn (not NULL) they
 * are merged into learn->policy instead.
 */
int run_exec(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
	     struct learn *learn);

/*
 * The decisions run_exec takes from the layer plan, for the tests at that
 * seam. Whether System V IPC is refused for want of anything bounding it
 * (lp: the limits as planned); the hardening the plan asks (traced: the
 * tracer explains, not the kernel's audit records).
 */
bool run_sysv_unbounded(const struct backend_layers *l, const struct limit_plan *lp);
void run_harden_opts(const struct backend_layers *l, bool traced, struct harden_opts *o);

#endif
