/*
 * run: the pipeline every subcommand shares. run_prepare turns a config into
 * the backend choice, grants and environment without touching anything;
 * run_exec applies them and launches. So `policy` and `env` print exactly
 * what `run` applies.
 */
#ifndef STEPBOX_RUN_H
#define STEPBOX_RUN_H

#include "env.h"
#include "grants.h"
#include "landlock.h"
#include "launch.h"
#include "mountns.h"
#include "policy.h"

struct run_ctx {
	struct landlock_features features;
	enum policy_backend backend; /* resolved: never BACKEND_AUTO */
	struct grants grants;
	struct env_result env;
	struct mountns_plan mountns; /* with the mountns backend */
};

/*
 * Probe the kernel, choose the backend, build grants and environment for
 * cfg, with inherited as the caller's environment. Nothing is created or
 * changed on disk. 0 or a negative errno with err filled.
 */
int run_prepare(const struct stepbox_config *cfg, char *const *inherited, struct run_ctx *ctx,
		struct stepbox_err *err);
void run_release(struct run_ctx *ctx);

/*
 * Which backend auto picks for cfg here: landlock, else mountns when the
 * namespaces can be created; BACKEND_NONE means none can run, and err then
 * says what was tried and why each failed.
 */
enum policy_backend run_auto_backend(const struct landlock_features *f,
				     const struct stepbox_config *cfg, struct stepbox_err *err);

/* Whether the mountns namespaces can be made for cfg here: 0, or -errno with err. */
int run_mountns_usable(const struct stepbox_config *cfg, struct stepbox_err *err);

/* STEPBOX_LANDLOCK_ABI, or NULL when unset or empty. */
const char *run_abi_cap(void);

/*
 * Create the workdir, persistent and routed folders, build the sandbox and
 * run argv in it. Returns stepbox's exit status (the command's, 124, 126,
 * 127, 128+N); 125 after printing err when the sandbox could not be applied.
 * With cfg->explain the denials follow on stderr; with learn, a policy
 * fragment granting them goes to stdout instead.
 */
int run_exec(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
	     bool learn);

#endif
