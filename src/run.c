#include "run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "harden.h"
#include "report.h"

static void landlock_why(const struct landlock_features *f, char *buf, size_t cap)
{
	if (f->kernel_abi > 0)
		snprintf(buf, cap, "Landlock is capped to ABI %d by STEPBOX_LANDLOCK_ABI", f->abi);
	else
		snprintf(buf, cap, "this kernel has no Landlock (%s)", strerror(f->kernel_errno));
}

int run_mountns_usable(const struct stepbox_config *cfg, struct stepbox_err *err)
{
	struct mountns_plan plan;
	struct grants none = {0};
	mountns_plan(&plan, cfg, &none);
	return mountns_probe(&plan, err);
}

enum policy_backend run_auto_backend(const struct landlock_features *f,
				     const struct stepbox_config *cfg, struct stepbox_err *err)
{
	if (f->abi > 0)
		return BACKEND_LANDLOCK;
	struct stepbox_err merr = {0};
	if (run_mountns_usable(cfg, &merr) == 0)
		return BACKEND_MOUNTNS;
	char why[128];
	landlock_why(f, why, sizeof(why));
	err_set(err, ERR_UNAVAILABLE, 0, "no sandbox backend: landlock: %s; mountns: %s", why,
		merr.msg);
	err_hint(err, "Landlock needs Linux 5.13 or newer with 'landlock' in the lsm= boot "
		      "parameter (CONFIG_LSM); for mountns, %s", merr.hint);
	return BACKEND_NONE;
}

const char *run_abi_cap(void)
{
	const char *cap = getenv("STEPBOX_LANDLOCK_ABI");
	return cap && *cap ? cap : NULL; /* empty: no cap, the most protection */
}

static int choose_backend(const struct stepbox_config *cfg, struct run_ctx *ctx,
			  struct stepbox_err *err)
{
	const struct landlock_features *f = &ctx->features;
	switch (cfg->backend) {
	case BACKEND_NONE:
		ctx->backend = BACKEND_NONE;
		return 0;
	case BACKEND_AUTO:
		ctx->backend = run_auto_backend(f, cfg, err);
		if (ctx->backend == BACKEND_NONE)
			return -EOPNOTSUPP;
		break;
	case BACKEND_LANDLOCK:
		ctx->backend = BACKEND_LANDLOCK;
		if (f->abi <= 0) {
			char why[128];
			landlock_why(f, why, sizeof(why));
			err_set(err, ERR_UNAVAILABLE, 0, "%s", why);
			err_hint(err, "Landlock needs Linux 5.13 or newer with 'landlock' in the lsm= "
				      "boot parameter (CONFIG_LSM); --backend mountns works without "
				      "it; see `stepbox check`");
			return -EOPNOTSUPP;
		}
		break;
	case BACKEND_MOUNTNS:
		ctx->backend = BACKEND_MOUNTNS;
		break;
	}
	if (ctx->backend == BACKEND_LANDLOCK)
		return landlock_check_net(f, cfg, err);
	if (cfg->net == NET_TCP) {
		/* no port filter without Landlock, and never silently none */
		err_set(err, ERR_UNAVAILABLE, 0,
			"the mountns backend cannot enforce a TCP port policy");
		err_hint(err, "port lists need the landlock backend (ABI 4); mountns gives "
			      "--net none (a network namespace) or --net allow");
		return -EOPNOTSUPP;
	}
	return 0;
}

int run_prepare(const struct stepbox_config *cfg, char *const *inherited, struct run_ctx *ctx,
		struct stepbox_err *err)
{
	memset(ctx, 0, sizeof(*ctx));
	int r = landlock_probe(&ctx->features, run_abi_cap(), err);
	if (r == 0)
		r = choose_backend(cfg, ctx, err);
	if (r < 0)
		return r;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return err_set(err, ERR_USAGE, errno, "cannot read the current folder");
	struct grants_host host = {
		.root = "/",
		.cwd = cwd,
		.extra_paths = getenv("SANDBOX_EXTRA_SYSTEM_PATHS"),
		.browser_exe = getenv("AGENT_BROWSER_EXECUTABLE_PATH"),
		.hide_etc_secrets = grants_should_hide_etc(),
		.keep_links = ctx->backend == BACKEND_MOUNTNS,
	};
	r = grants_build(cfg, &host, &ctx->grants, err);
	if (r == 0)
		r = env_build(cfg, &ctx->grants, inherited, &ctx->env, err);
	if (r == 0 && ctx->backend == BACKEND_MOUNTNS)
		mountns_plan(&ctx->mountns, cfg, &ctx->grants);
	if (r < 0)
		run_release(ctx);
	return r;
}

void run_release(struct run_ctx *ctx)
{
	grants_release(&ctx->grants);
	env_release(&ctx->env);
}

static void say_what_is_missing(const struct stepbox_config *cfg, const struct run_ctx *ctx)
{
	const struct grants *g = &ctx->grants;
	for (size_t i = 0; cfg->verbosity >= 0 && i < g->nskipped; i++) {
		const struct grant_skip *s = &g->skipped[i];
		/* hidden /etc secrets are the design, not news; say them with -v */
		bool routine = s->origin == ORIGIN_BASELINE || s->origin == ORIGIN_BASELINE_TARGET;
		if (!routine || cfg->verbosity > 0)
			err_warn("not granting %s path '%s': %s", grants_origin_name(s->origin),
				 s->path, s->reason);
	}
	/* names and reasons only: a dropped value may be the secret itself */
	for (size_t i = 0; cfg->verbosity > 0 && i < ctx->env.dropped.n; i++)
		fprintf(stderr, "stepbox: env: dropped %s\n", ctx->env.dropped.v[i]);
	if (ctx->backend == BACKEND_NONE) {
		fprintf(stderr, "stepbox: WARNING: --backend none: the command runs WITHOUT a "
				"filesystem sandbox (debugging only)\n");
		return;
	}
	if (cfg->verbosity > 0 && ctx->backend == BACKEND_MOUNTNS) {
		fprintf(stderr, "stepbox: backend mountns (%s), %zu grants\n",
			ctx->mountns.userns ? "user namespace" : "as root", g->n);
	} else if (cfg->verbosity > 0) {
		char missing[256];
		landlock_missing(&ctx->features, missing, sizeof(missing));
		fprintf(stderr, "stepbox: backend landlock, ABI %d (kernel %d), %zu grants\n",
			ctx->features.abi, ctx->features.kernel_abi, g->n);
		if (missing[0])
			fprintf(stderr, "stepbox: this kernel cannot give: %s\n", missing);
	}
}

int run_exec(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
	     bool learn)
{
	struct stepbox_err err = {0};
	struct harden h = {0};
	struct explain x;
	struct audit au = {-1, -1, ""};
	explain_init(&x, &ctx->grants, cfg);
	/*
	 * The kernel's own records are the better source (no tracing cost, the
	 * exact object Landlock checked), where stepbox may read them: root,
	 * Landlock ABI 7, audit on. Otherwise the tracer, saying why.
	 */
	bool use_audit = false;
	if (cfg->explain && ctx->backend == BACKEND_LANDLOCK) {
		if (geteuid() != 0)
			snprintf(au.why, sizeof(au.why), "audit records need root");
		else if (!landlock_log_flags(&ctx->features))
			snprintf(au.why, sizeof(au.why), "Landlock ABI %d logs no denials (needs 7)",
				 ctx->features.abi);
		else
			use_audit = audit_prepare(&au, cfg->enable_audit);
		if (use_audit)
			x.source = "audit";
		else if (cfg->verbosity >= 0)
			fprintf(stderr, "stepbox: explain: %s; using the tracer\n", au.why);
	}
	int ruleset = -1, code = 125;
	int r = grants_prepare_dirs(&ctx->grants, &err);
	if (r == 0)
		r = env_prepare_dirs(&ctx->env, &err);
	if (r == 0 && ctx->backend == BACKEND_LANDLOCK) {
		ruleset = landlock_build(&ctx->features, &ctx->grants, cfg, &err);
		r = ruleset < 0 ? ruleset : 0;
	}
	if (r == 0)
		r = harden_prepare(&h, cfg, cfg->explain && !use_audit, &err);
	if (r < 0)
		goto out;
	say_what_is_missing(cfg, ctx);
	struct launch_spec spec = {
		.argv = argv,
		.envp = ctx->env.env.v,
		.workdir = ctx->grants.workdir,
		.ruleset_fd = ruleset,
		.mountns = ctx->backend == BACKEND_MOUNTNS ? &ctx->mountns : NULL,
		/* --explain: the kernel logs denials after exec too (audit, ABI 7) */
		.restrict_flags = ctx->backend == BACKEND_LANDLOCK && cfg->explain
					  ? landlock_log_flags(&ctx->features)
					  : 0,
		.harden = &h,
		.grants = &ctx->grants,
		.timeout_s = cfg->timeout_s,
		.explain = cfg->explain && !use_audit ? &x : NULL,
	};
	struct launch_result res;
	r = launch_run(&spec, &res, &err);
	if (r < 0)
		goto out;
	code = res.exit_code;
	if (use_audit)
		audit_collect(&au, res.child, &x);
	if (learn)
		explain_fragment(stdout, &x);
	else if (cfg->explain)
		explain_print(stderr, &x);
	if (cfg->report_file && report_run(cfg->report_file, cfg, argv, ctx->backend,
					   &ctx->features, &ctx->env, &res,
					   cfg->explain ? &x : NULL, &err) < 0)
		err_print(&err); /* the command ran: its status stands */
out:
	if (r < 0)
		err_print(&err);
	if (ruleset >= 0)
		close(ruleset);
	harden_release(&h);
	audit_release(&au);
	explain_release(&x);
	return code;
}
