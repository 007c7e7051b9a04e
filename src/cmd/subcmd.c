#include "subcmd.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "reportfile.h"
#include "sbpl.h"
#include "show.h"
#ifdef STEPBOX_LINUX
#include "doctor.h"
#include "guide.h"
#include "learn.h"
#include "mcp.h"
#include "report.h"
#include "run.h"
#else
#include "seatbelt.h"
#endif

extern char **environ;

int subcmd_fail(const struct stepbox_config *cfg, const struct stepbox_err *err)
{
	struct stepbox_err rerr = {0};
	if (cfg && cfg->report_file && reportfile_error(cfg->report_file, cfg, err, &rerr) < 0)
		err_print(&rerr);
	err_print(err);
	return 125;
}

#ifdef STEPBOX_LINUX
/* ---- the Linux build ----------------------------------------------------- */

static int cmd_check(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)operands;
	struct stepbox_err err = {0};
	struct backend_host host;
	if (layers_host(&host, true, &err) < 0)
		return subcmd_fail(NULL, &err);
	return report_check(stdout, &host, cfg, cli->json) ? 0 : 1;
}

static int cmd_mcp(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)operands;
	struct mcp_opts mo = {(int)cli->max_parallel, 64 * 1024};
	return mcp_main(cfg, &mo);
}

/* What a command does with the prepared step: its exit status. */
typedef int (*with_step)(struct stepbox_config *cfg, const struct subcmd_cli *cli,
			 struct run_ctx *ctx, char **operands);

/*
 * Every other command prepares the step the same way (run_prepare), so that
 * policy, env, guide and doctor say exactly what run applies. A run's
 * failure goes into its report too.
 */
static int prepared(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands,
		    bool for_run, with_step then)
{
	struct stepbox_err err = {0};
	struct run_ctx ctx;
	if (run_prepare(cfg, environ, for_run, &ctx, &err) < 0)
		return subcmd_fail(for_run ? cfg : NULL, &err);
	int code = then(cfg, cli, &ctx, operands);
	run_release(&ctx);
	return code;
}

static int then_run(struct stepbox_config *cfg, const struct subcmd_cli *cli, struct run_ctx *ctx,
		    char **operands)
{
	(void)cli;
	return run_exec(cfg, ctx, operands, NULL);
}

static int then_learn(struct stepbox_config *cfg, const struct subcmd_cli *cli, struct run_ctx *ctx,
		      char **operands)
{
	return learn_run(cfg, ctx, operands, cli->output, cli->rounds);
}

static int then_policy(struct stepbox_config *cfg, const struct subcmd_cli *cli,
		       struct run_ctx *ctx, char **operands)
{
	(void)operands;
	struct stepbox_err err = {0};
	if (cli->sbpl)
		return sbpl_write(stdout, cfg, &ctx->grants, 0, &err) < 0 ? subcmd_fail(NULL, &err)
									  : 0;
	return show_policy(stdout, cfg, &ctx->grants, &ctx->env,
			   policy_backend_name(ctx->backend.name)) < 0
		       ? 125
		       : 0;
}

static int then_env(struct stepbox_config *cfg, const struct subcmd_cli *cli, struct run_ctx *ctx,
		    char **operands)
{
	(void)cfg;
	(void)operands;
	return show_env(stdout, &ctx->env, cli->json, cli->nul) < 0 ? 125 : 0;
}

static int then_guide(struct stepbox_config *cfg, const struct subcmd_cli *cli, struct run_ctx *ctx,
		      char **operands)
{
	(void)cli;
	(void)operands;
	guide_write(stdout, cfg, &ctx->grants, &ctx->env, &ctx->limits);
	return 0;
}

static int then_doctor(struct stepbox_config *cfg, const struct subcmd_cli *cli,
		       struct run_ctx *ctx, char **operands)
{
	(void)operands;
	return doctor_run(stdout, cfg, ctx, "/etc", cli->json) ? 1 : 0;
}

/* doctor reports on every backend, and a Mac's profile on none of these */
static void plan_only(struct stepbox_config *cfg)
{
	cfg->backend = BACKEND_NONE;
	cfg->plan_only = true;
}

static int cmd_run(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	return prepared(cfg, cli, operands, true, then_run);
}

static int cmd_learn(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	cfg->explain = true;
	return prepared(cfg, cli, operands, true, then_learn);
}

static int cmd_policy(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	if (cli->sbpl)
		plan_only(cfg);
	return prepared(cfg, cli, operands, false, then_policy);
}

static int cmd_env(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	return prepared(cfg, cli, operands, false, then_env);
}

static int cmd_guide(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	return prepared(cfg, cli, operands, false, then_guide);
}

static int cmd_doctor(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	plan_only(cfg);
	return prepared(cfg, cli, operands, false, then_doctor);
}
#else
/* ---- the portable build (the Seatbelt backend) --------------------------- */

static int cmd_check(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)operands;
	return seatbelt_check(stdout, cfg, cli->json) ? 0 : 1;
}

/* What a command does with the prepared profile: its exit status. */
typedef int (*with_step)(struct stepbox_config *cfg, const struct subcmd_cli *cli,
			 struct seatbelt_ctx *ctx, char **operands);

/* run, policy and env: the profile's grants and environment, prepared once */
static int prepared(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands,
		    bool for_run, with_step then)
{
	struct stepbox_err err = {0};
	if (cfg->backend != BACKEND_AUTO && !backend_find(cfg->backend) && !cli->sbpl) {
		backend_not_here(cfg->backend, &err);
		return subcmd_fail(for_run ? cfg : NULL, &err);
	}
	struct seatbelt_ctx ctx;
	if (seatbelt_prepare(cfg, environ, &ctx, &err) < 0)
		return subcmd_fail(for_run ? cfg : NULL, &err);
	int code = then(cfg, cli, &ctx, operands);
	seatbelt_release(&ctx);
	return code;
}

static int then_run(struct stepbox_config *cfg, const struct subcmd_cli *cli,
		    struct seatbelt_ctx *ctx, char **operands)
{
	(void)cli;
	return seatbelt_run(cfg, ctx, operands);
}

static int then_policy(struct stepbox_config *cfg, const struct subcmd_cli *cli,
		       struct seatbelt_ctx *ctx, char **operands)
{
	(void)operands;
	struct stepbox_err err = {0};
	if (cli->sbpl)
		return sbpl_write(stdout, cfg, &ctx->grants, 0, &err) < 0 ? subcmd_fail(NULL, &err)
									  : 0;
	return show_policy(stdout, cfg, &ctx->grants, &ctx->env, "seatbelt") < 0 ? 125 : 0;
}

static int then_env(struct stepbox_config *cfg, const struct subcmd_cli *cli,
		    struct seatbelt_ctx *ctx, char **operands)
{
	(void)cfg;
	(void)operands;
	return show_env(stdout, &ctx->env, cli->json, cli->nul) < 0 ? 125 : 0;
}

static int cmd_run(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	return prepared(cfg, cli, operands, true, then_run);
}

static int cmd_policy(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	return prepared(cfg, cli, operands, false, then_policy);
}

static int cmd_env(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	return prepared(cfg, cli, operands, false, then_env);
}

/* learn, guide, doctor and mcp need the Linux layers (their tracer, limits, supervisor) */
static int not_here(const char *name)
{
	struct stepbox_err err = {0};
	err_set(&err, ERR_USAGE, 0, "'%s' is not in this build (the Seatbelt backend)", name);
	err_hint(&err, "this build has run, check, policy and env; the Linux build has every "
		       "command");
	return subcmd_fail(NULL, &err);
}

static int cmd_learn(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)cfg, (void)cli, (void)operands;
	return not_here("learn");
}

static int cmd_guide(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)cfg, (void)cli, (void)operands;
	return not_here("guide");
}

static int cmd_doctor(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)cfg, (void)cli, (void)operands;
	return not_here("doctor");
}

static int cmd_mcp(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands)
{
	(void)cfg, (void)cli, (void)operands;
	return not_here("mcp");
}
#endif

/* ---- the table ----------------------------------------------------------- */

static const struct subcmd table[] = {
	{"run", "stepbox run [OPTIONS] [--] COMMAND [ARG...]",
	 "Run COMMAND in a sandbox that grants only what the policy says.", true, SUBCMD_COMMAND,
	 cmd_run},
	{"learn", "stepbox learn [OPTIONS] [-o FILE] [--rounds N] [--] COMMAND [ARG...]",
	 "Run COMMAND with --explain, then print the policy (the one given, with -p and\n"
	 "the flags) with the narrowest grants that allow what was denied, for review:\n"
	 "the file itself, a file of HOME as home_files, never a hidden /etc entry, HOME\n"
	 "or a folder holding keys. --rounds N runs again, up to N times, until nothing\n"
	 "new is denied (the command runs each time). The command's own output goes to\n"
	 "stderr; the policy to stdout, or to FILE with -o.",
	 true, SUBCMD_COMMAND, cmd_learn},
	{"check", "stepbox check [--json]",
	 "Say what this kernel and host give: Landlock's ABI and features, the namespaces,\n"
	 "each backend, and the one auto would choose. Exits 1 when none is usable.",
	 false, SUBCMD_NONE, cmd_check},
	{"policy", "stepbox policy [OPTIONS] [--format json|sbpl]",
	 "Print the effective policy as JSON: every path canonical, with its origin, what\n"
	 "was skipped and why. The output is valid input for -p. --format sbpl prints the\n"
	 "macOS Seatbelt profile a Mac would enforce for it instead, on any OS.",
	 true, SUBCMD_NONE, cmd_policy},
	{"env", "stepbox env [OPTIONS] [--json | -0]",
	 "Print the environment the command would get, and what was dropped and why;\n"
	 "--json as an object, -0 NUL-separated.",
	 true, SUBCMD_NONE, cmd_env},
	{"guide", "stepbox guide [OPTIONS]",
	 "Print, for an agent, where it may write, where installs go and whether they\n"
	 "persist, the network, and what is not available.",
	 true, SUBCMD_NONE, cmd_guide},
	{"doctor", "stepbox doctor [OPTIONS] [--json]",
	 "Check a deployment: PATH, HOME and its dotfiles, /etc secrets, resolv.conf, the\n"
	 "environment. Exits 1 when a check fails.",
	 true, SUBCMD_NONE, cmd_doctor},
	{"mcp", "stepbox mcp [OPTIONS] [--max-parallel N]",
	 "Serve MCP over stdio (JSON-RPC 2.0, a message a line): a tool, run, that runs a\n"
	 "shell command line (or an argv) as a step, each call a fresh sandbox with this\n"
	 "policy, fixed for the server's life and checked before the handshake (exit 125\n"
	 "when it is bad). The result: exit status, stdout and stderr (each capped at\n"
	 "64 KiB), the duration, and what the sandbox denied. Up to N calls run at once\n"
	 "(default 4); the policy cannot come from standard input, the protocol's.",
	 true, SUBCMD_NONE, cmd_mcp},
};

const struct subcmd *subcmd_find(const char *name)
{
	assert(name);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const char *subcmd_names(void)
{
	static char names[128];
	if (!names[0])
		for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
			size_t l = strlen(names);
			snprintf(names + l, sizeof(names) - l, "%s%s", i ? ", " : "",
				 table[i].name);
		}
	return names;
}

int subcmd_check_operands(const struct subcmd *c, int n, const struct subcmd_cli *cli,
			  struct stepbox_err *err)
{
	if (!c->options && (n > 0 || cli->policy_options > 0)) {
		err_set(err, ERR_USAGE, 0, "%s takes no arguments but --json", c->name);
		err_hint(err, "%s", c->synopsis);
		return -EINVAL;
	}
	bool takes = c->operands == SUBCMD_COMMAND;
	if (takes == (n > 0))
		return 0;
	if (takes)
		err_set(err, ERR_USAGE, 0, "%s: no command given", c->name);
	else
		err_set(err, ERR_USAGE, 0, "%s takes no command", c->name);
	err_hint(err, "%s", c->synopsis);
	return -EINVAL;
}
