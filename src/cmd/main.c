/*
 * stepbox: run one command under a filesystem, network and IPC policy, fail
 * closed. main parses the command line into one config and dispatches.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "jsonmem.h"
#include "policy.h"
#include "policyfile.h"
#include "protect.h"
#include "subcmd.h"
#ifdef STEPBOX_LINUX
#include "landlock.h"
#else
#include "seatbelt.h"
#endif

static const char synopsis[] =
	"usage: stepbox run [OPTIONS] [--] COMMAND [ARG...]\n"
	"       stepbox learn [OPTIONS] [-o FILE] [--rounds N] [--] COMMAND [ARG...]\n"
	"       stepbox check [--json]\n"
	"       stepbox policy [OPTIONS] [--format json|sbpl]  the effective policy as JSON\n"
	"                                  (valid input), or the macOS Seatbelt profile\n"
	"       stepbox env [OPTIONS] [--json | -0]  the environment the command would get\n"
	"       stepbox guide [OPTIONS]    print, for an agent, what its step may do\n"
	"       stepbox doctor [OPTIONS] [--json]  check a deployment; non-zero if a check fails\n"
	"       stepbox mcp [OPTIONS] [--max-parallel N]  an MCP server: a sandboxed shell tool\n"
	"       stepbox COMMAND --help     that command's own help; stepbox -V: version\n";

static const char options_text[] =
	"Options:\n"
	"  -p, --policy FILE      JSON policy (version 1); '-' reads standard input\n"
	"                         (not mcp's: its standard input is the protocol)\n"
	"      --consume          delete FILE after reading it\n"
	"  -r, --read PATH        grant read and execute beneath PATH (repeatable)\n"
	"  -w, --write PATH       grant read, write and execute beneath PATH (repeatable)\n"
	"  -C, --workdir DIR      working folder (default: current); granted for writing\n"
	"      --workdir-readonly grant the workdir for reading only\n"
	"      --allow-broad-grants  accept a workdir or write grant that is /, a\n"
	"                         top-level system folder (/usr, /etc, /var...) or HOME\n"
	"      --persist DIR      the workflow's persistent tool folder (created 0700),\n"
	"                         held by this step alone while it runs\n"
	"      --persist-shared DIR  the same folder, read-only, held together with other\n"
	"                         shared steps (run installed tools, install nothing)\n"
	"      --persist-wait SECONDS  give up (exit 125) if the folder is still held\n"
	"                         after SECONDS; default: wait\n"
	"      --unix PATH        allow connecting to pathname UNIX sockets beneath PATH\n"
	"      --home-file NAME   grant HOME/NAME read-only (.gitconfig: the user's git\n"
	"                         identity); HOME holds nothing else of the user's\n"
	"      --net MODE         allow (default) | none | tcp:PORT[,PORT...] (connect)\n"
	"      --backend NAME     auto (default) | stacked | landlock | mountns | none\n"
	"      --env NAME=VALUE   set a variable; --env NAME keeps an inherited one\n"
	"      --unset NAME       remove an inherited variable\n"
	"      --clean-env        start from PATH HOME USER LOGNAME LANG LC_* TERM TZ\n"
	"      --timeout SECONDS  kill the whole process tree after SECONDS (exit 124)\n"
	"      --grace SECONDS    after passing on SIGTERM, SIGINT or SIGHUP, kill the\n"
	"                         whole tree if it still runs after SECONDS (default 10)\n"
	"      --limit NAME=VALUE bound the step: memory=SIZE, tasks=N, cpu_s=SECONDS,\n"
	"                         file_size=SIZE, open_files=N, output=SIZE, tmp=SIZE\n"
	"                         (SIZE in bytes or with K, M, G; defaults: tasks=4096,\n"
	"                         memory=3/4 of RAM, tmp=1/4 of RAM)\n"
	"      --no-limits        no default limits (those asked for still apply)\n"
	"      --unprotect NAME   let the step write a protected path (.git/hooks, .envrc...;\n"
	"                         repeatable; see docs/protected-paths.md)\n"
	"      --protect-report-only  a protected path the step changed is still moved\n"
	"                         aside and named, but the exit status stays the command's\n"
	"      --explain          after the command ends, list what the sandbox denied\n"
	"      --enable-audit     with --explain as root: turn the audit subsystem on for\n"
	"                         this run if it is off (and back off after)\n"
	"      --report FILE      write a JSON run report\n"
	"  -v, --verbose / -q, --quiet\n"
	"  -h, --help             this command's help\n";

static const char environment_text[] =
	"\nEnvironment stepbox reads (besides the command's own):\n"
	"  SANDBOX_EXTRA_SYSTEM_PATHS     colon-separated folders granted read and execute\n"
	"  AGENT_BROWSER_EXECUTABLE_PATH  a browser whose folder is granted read and execute\n"
	"  STEPBOX_LANDLOCK_ABI           use at most this Landlock ABI (tests, old kernels)\n"
	"  STEPBOX_IDMAP=0                walk root's /etc instead of an idmapped mount\n"
	"  HOME, PATH                     the step's HOME and command lookup\n";

static const char exit_text[] =
	"\nExit status of run: the command's own; 128+N if killed by signal N; 124 on\n"
	"timeout; 126 if the command cannot be executed (including a sandbox denial);\n"
	"127 if not found; 125 if stepbox failed and the command never started;\n"
	"123 if the step changed a protected path (moved aside; --protect-report-only).\n"
	"See stepbox(1).\n";

static void print_help(const struct subcmd *c)
{
	if (!c) {
		fputs(synopsis, stdout);
		fputs("\n", stdout);
		fputs(options_text, stdout);
		fputs(environment_text, stdout);
		fputs(exit_text, stdout);
		return;
	}
	printf("usage: %s\n\n%s\n", c->synopsis, c->what);
	if (c->options) {
		fputs("\n", stdout);
		fputs(options_text, stdout);
		fputs(environment_text, stdout);
	}
	if (c->operands == SUBCMD_COMMAND)
		fputs(exit_text, stdout);
}

static void print_version(void)
{
	printf("stepbox %s\n", STEPBOX_VERSION);
#ifdef STEPBOX_LINUX
	printf("backends: stacked (namespaces and Landlock), landlock, mountns, none\n"
	       "Landlock: ABI 1 to %d known, the kernel's used up to that\n"
	       "seccomp: filters compiled at build time (libseccomp), a supervisor by user "
	       "notification\n",
	       LANDLOCK_ABI_KNOWN);
#else
	printf("backends: seatbelt (the profile applied by %s)\n", STEPBOX_SANDBOX_EXEC);
#endif
	printf("policy: JSON version 1 (jansson)\n"
	       "linked: %s\n",
#ifdef STEPBOX_STATIC
	       "statically"
#else
	       "dynamically"
#endif
	);
}

enum {
	OPT_CONSUME = 256,
	OPT_WD_RO,
	OPT_PERSIST,
	OPT_NET,
	OPT_BACKEND,
	OPT_ENV,
	OPT_UNSET,
	OPT_CLEAN_ENV,
	OPT_TIMEOUT,
	OPT_EXPLAIN,
	OPT_ENABLE_AUDIT,
	OPT_REPORT,
	OPT_JSON,
	OPT_VERSION,
	OPT_ALLOW_BROAD,
	OPT_UNIX,
	OPT_PERSIST_SHARED,
	OPT_PERSIST_WAIT,
	OPT_GRACE,
	OPT_HOME_FILE,
	OPT_ROUNDS,
	OPT_LIMIT,
	OPT_NO_LIMITS,
	OPT_MAX_PARALLEL,
	OPT_FORMAT,
	OPT_UNPROTECT,
	OPT_PROTECT_REPORT_ONLY
};

static const struct option options[] = {
	{"policy", required_argument, NULL, 'p'},
	{"consume", no_argument, NULL, OPT_CONSUME},
	{"read", required_argument, NULL, 'r'},
	{"write", required_argument, NULL, 'w'},
	{"workdir", required_argument, NULL, 'C'},
	{"workdir-readonly", no_argument, NULL, OPT_WD_RO},
	{"allow-broad-grants", no_argument, NULL, OPT_ALLOW_BROAD},
	{"persist", required_argument, NULL, OPT_PERSIST},
	{"persist-shared", required_argument, NULL, OPT_PERSIST_SHARED},
	{"persist-wait", required_argument, NULL, OPT_PERSIST_WAIT},
	{"grace", required_argument, NULL, OPT_GRACE},
	{"unix", required_argument, NULL, OPT_UNIX},
	{"home-file", required_argument, NULL, OPT_HOME_FILE},
	{"net", required_argument, NULL, OPT_NET},
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"env", required_argument, NULL, OPT_ENV},
	{"unset", required_argument, NULL, OPT_UNSET},
	{"clean-env", no_argument, NULL, OPT_CLEAN_ENV},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"limit", required_argument, NULL, OPT_LIMIT},
	{"no-limits", no_argument, NULL, OPT_NO_LIMITS},
	{"explain", no_argument, NULL, OPT_EXPLAIN},
	{"enable-audit", no_argument, NULL, OPT_ENABLE_AUDIT},
	{"report", required_argument, NULL, OPT_REPORT},
	{"json", no_argument, NULL, OPT_JSON},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"verbose", no_argument, NULL, 'v'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"null", no_argument, NULL, '0'},
	{"output", required_argument, NULL, 'o'},
	{"rounds", required_argument, NULL, OPT_ROUNDS},
	{"max-parallel", required_argument, NULL, OPT_MAX_PARALLEL},
	{"version", no_argument, NULL, OPT_VERSION},
	{"unprotect", required_argument, NULL, OPT_UNPROTECT},
	{"protect-report-only", no_argument, NULL, OPT_PROTECT_REPORT_ONLY},
	{NULL, 0, NULL, 0},
};

/* A path flag: absolute against the current folder, pushed to list. */
static int add_path(struct strv *list, const char *arg, const char *what, struct stepbox_err *err)
{
	char *p = NULL;
	int r = policy_abspath(arg, what, &p, err);
	if (r == 0 && (r = strv_push_owned(list, p)) < 0)
		err_set(err, ERR_USAGE, -r, "too many %s paths", what);
	return r;
}

static int set_once(char **slot, const char *arg, const char *what, struct stepbox_err *err)
{
	char *p = NULL;
	int r = policy_abspath(arg, what, &p, err);
	if (r < 0)
		return r;
	if (*slot && strcmp(*slot, p) != 0) {
		free(p);
		return err_set(err, ERR_USAGE, 0, "%s given twice", what);
	}
	free(*slot);
	*slot = p;
	return 0;
}

/*
 * The option groups parse hands each option to: each returns false when c is
 * not one of its options, else true with *r the option's result (0, or
 * negative with err filled).
 */

/* The policy file, the paths and the workdir. */
static bool opt_paths(int c, struct stepbox_config *cfg, struct stepbox_err *err, int *r)
{
	switch (c) {
	case 'p':
		if (cfg->policy_file)
			*r = err_set(err, ERR_USAGE, 0, "--policy given twice");
		else if (!(cfg->policy_file = strdup(optarg)))
			*r = err_set(err, ERR_USAGE, ENOMEM, "--policy");
		return true;
	case OPT_CONSUME:
		cfg->consume = true;
		return true;
	case 'r':
		*r = add_path(&cfg->read_flag, optarg, "--read", err);
		return true;
	case 'w':
		*r = add_path(&cfg->write_flag, optarg, "--write", err);
		return true;
	case OPT_UNIX:
		*r = add_path(&cfg->unix_flag, optarg, "--unix", err);
		return true;
	case OPT_HOME_FILE:
		if (!policy_home_file_ok(optarg))
			*r = err_set(err, ERR_USAGE, 0,
				     "--home-file '%s': a path relative to "
				     "HOME, without '..' (.gitconfig, .ssh/config)",
				     optarg);
		else
			*r = strv_push(&cfg->home_flag, optarg);
		return true;
	case 'C':
		*r = set_once(&cfg->workdir, optarg, "--workdir", err);
		return true;
	case OPT_WD_RO:
		cfg->workdir_readonly = true;
		return true;
	case OPT_ALLOW_BROAD:
		cfg->allow_broad_grants = true;
		return true;
	case OPT_PERSIST:
		*r = set_once(&cfg->persist, optarg, "--persist", err);
		return true;
	case OPT_PERSIST_SHARED:
		*r = set_once(&cfg->persist, optarg, "--persist-shared", err);
		cfg->persist_shared = true;
		return true;
	}
	return false;
}

/* The network, the backend and the environment. */
static bool opt_network_env(int c, struct stepbox_config *cfg, struct stepbox_err *err, int *r)
{
	switch (c) {
	case OPT_NET:
		*r = policy_set_net(cfg, optarg, err);
		return true;
	case OPT_BACKEND:
		*r = policy_set_backend(cfg, optarg, err);
		return true;
	case OPT_ENV:
		*r = policy_add_env(cfg, optarg, err);
		return true;
	case OPT_UNSET:
		if (!policy_env_name_ok(optarg))
			*r = err_set(err, ERR_USAGE, 0, "--unset '%s': not a variable name",
				     optarg);
		else
			*r = strv_push(&cfg->env_unset, optarg);
		return true;
	case OPT_CLEAN_ENV:
		cfg->clean_env = true;
		return true;
	}
	return false;
}

/* The limits and the timing: timeout, grace, the wait for a persist folder. */
static bool opt_limits(int c, struct stepbox_config *cfg, struct stepbox_err *err, int *r)
{
	switch (c) {
	case OPT_PERSIST_WAIT:
		*r = policy_set_seconds(&cfg->persist_wait_s, "--persist-wait", optarg, err);
		return true;
	case OPT_GRACE:
		*r = policy_set_seconds(&cfg->grace_s, "--grace", optarg, err);
		return true;
	case OPT_TIMEOUT:
		*r = policy_set_timeout(cfg, optarg, err);
		return true;
	case OPT_LIMIT:
		*r = limitcfg_set_flag(&cfg->limits, optarg, err);
		return true;
	case OPT_NO_LIMITS:
		cfg->limits.none = true;
		return true;
	}
	return false;
}

/* What is said and where: explain, audit, the report, the output's form. */
static bool opt_output(int c, struct stepbox_config *cfg, struct subcmd_cli *cli,
		       struct stepbox_err *err, int *r)
{
	switch (c) {
	case OPT_EXPLAIN:
		cfg->explain = true;
		return true;
	case OPT_ENABLE_AUDIT:
		cfg->enable_audit = true;
		return true;
	case OPT_REPORT:
		*r = set_once(&cfg->report_file, optarg, "--report", err);
		return true;
	case OPT_JSON:
		cli->json = true;
		return true;
	case OPT_FORMAT:
		if (strcmp(optarg, "sbpl") != 0 && strcmp(optarg, "json") != 0) {
			*r = err_set(err, ERR_USAGE, 0, "--format '%s': json or sbpl", optarg);
			return true;
		}
		cli->format = true;
		cli->sbpl = strcmp(optarg, "sbpl") == 0;
		return true;
	case '0':
		cli->nul = true;
		return true;
	case 'o':
		cli->output = optarg;
		return true;
	case 'v':
		cfg->verbosity = 1;
		return true;
	case 'q':
		cfg->verbosity = -1;
		return true;
	}
	return false;
}

/* The protected paths: --unprotect NAME, --protect-report-only. */
static bool opt_protect(int c, struct stepbox_config *cfg, struct stepbox_err *err, int *r)
{
	const char *why;
	switch (c) {
	case OPT_UNPROTECT:
		if ((why = protect_name_problem(optarg, false)))
			*r = err_set(err, ERR_USAGE, 0, "--unprotect '%s': %s", optarg, why);
		else if (strv_find(&cfg->unprotect, optarg) < 0)
			*r = strv_push(&cfg->unprotect, optarg);
		return true;
	case OPT_PROTECT_REPORT_ONLY:
		cfg->protect_report_only = true;
		return true;
	}
	return false;
}

/* The commands' own counts: mcp's calls at once, learn's rounds. */
static bool opt_counts(int c, struct subcmd_cli *cli, struct stepbox_err *err, int *r)
{
	switch (c) {
	case OPT_MAX_PARALLEL:
		if (policy_parse_long(optarg, 1, 64, &cli->max_parallel) < 0)
			*r = err_set(err, ERR_USAGE, 0,
				     "--max-parallel '%s': a whole number "
				     "from 1 to 64",
				     optarg);
		return true;
	case OPT_ROUNDS:
		if (policy_parse_long(optarg, 1, 100, &cli->rounds) < 0)
			*r = err_set(err, ERR_USAGE, 0,
				     "--rounds '%s': a whole number from "
				     "1 to 100",
				     optarg);
		return true;
	}
	return false;
}

/* Once the options are read: what they need of each other, then the policy file. */
static int parse_finish(char **argv, struct stepbox_config *cfg, struct stepbox_err *err)
{
	if (cfg->consume && !cfg->policy_file)
		return err_set(err, ERR_USAGE, 0, "--consume needs --policy FILE");
	/* mcp: standard input carries the protocol */
	if (cfg->policy_file && strcmp(cfg->policy_file, "-") == 0 && strcmp(argv[0], "mcp") == 0) {
		err_set(err, ERR_USAGE, 0,
			"mcp: the policy cannot come from standard input, which "
			"carries the protocol");
		err_hint(err, "give the policy as a file: stepbox mcp -p POLICY.json");
		return -EINVAL;
	}
	if (cfg->policy_file && policyfile_load_file(cfg, cfg->policy_file, cfg->consume, err) < 0)
		return -EINVAL;
	return optind;
}

/* Parse options into cfg and cli; returns optind of the first operand, or -1. */

static int parse(int argc, char **argv, struct stepbox_config *cfg, struct subcmd_cli *cli,
		 struct stepbox_err *err)
{
	int c, r = 0;
	optind = 1;
	opterr = 0;
	while (r == 0 && (c = getopt_long(argc, argv, "+p:r:w:C:vqh0o:", options, NULL)) != -1) {
		cli->policy_options += c != OPT_JSON && c != '0' && c != 'v' && c != 'q' &&
				       c != 'o' && c != OPT_ROUNDS && c != OPT_MAX_PARALLEL &&
				       c != OPT_FORMAT;
		if (opt_paths(c, cfg, err, &r) || opt_network_env(c, cfg, err, &r) ||
		    opt_limits(c, cfg, err, &r) || opt_output(c, cfg, cli, err, &r) ||
		    opt_counts(c, cli, err, &r) || opt_protect(c, cfg, err, &r))
			continue;
		if (c == 'h') {
			print_help(subcmd_find(argv[0]));
			exit(0);
		}
		err_set(err, ERR_USAGE, 0, "unknown or incomplete option '%s'", argv[optind - 1]);
		err_hint(err, "see stepbox --help");
		return -EINVAL;
	}
	if (r < 0)
		return r;
	return parse_finish(argv, cfg, err);
}

/* Inherited fds 0-2 may be closed; an fd stepbox opens must never land there. */
static void ensure_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			_exit(125);
}

int main(int argc, char **argv)
{
	ensure_std_fds();
	jsonmem_install(); /* before any JSON: every block then carries its size */
	if (argc < 2) {
		fputs(synopsis, stderr);
		return 125;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_help(argc > 2 ? subcmd_find(argv[2]) : NULL);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		print_version();
		return 0;
	}
	const struct subcmd *cmd = subcmd_find(argv[1]);
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct subcmd_cli cli = {false, false, 0, NULL, 1, 4, false, false};
	int code = 125;
	policy_init(&cfg);
	if (!cmd) {
		err_set(&err, ERR_USAGE, 0, "unknown command '%s'", argv[1]);
		err_hint(&err, "commands: %s; see stepbox --help", subcmd_names());
		code = subcmd_fail(NULL, &err);
		goto out;
	}
	int first = parse(argc - 1, argv + 1, &cfg, &cli, &err);
	if (first < 0) {
		code = subcmd_fail(&cfg, &err);
		goto out;
	}
	if (cli.format && strcmp(cmd->name, "policy") != 0) {
		err_set(&err, ERR_USAGE, 0, "--format is an option of stepbox policy");
		code = subcmd_fail(NULL, &err);
		goto out;
	}
	if (subcmd_check_operands(cmd, argc - 1 - first, &cli, &err) < 0) {
		code = subcmd_fail(NULL, &err);
		goto out;
	}
	code = cmd->run(&cfg, &cli, argv + 1 + first);
out:
	policy_release(&cfg);
	return code;
}
