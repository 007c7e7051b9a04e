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
	"127 if not found; 125 if stepbox failed and the command never started.\n"
	"See stepbox(1).\n";

/* Each command: its synopsis, what it does, and whether it takes the policy options. */
static const struct command {
	const char *name, *synopsis, *what;
	bool options;
} commands[] = {
	{"run", "stepbox run [OPTIONS] [--] COMMAND [ARG...]",
	 "Run COMMAND in a sandbox that grants only what the policy says.", true},
	{"learn", "stepbox learn [OPTIONS] [-o FILE] [--rounds N] [--] COMMAND [ARG...]",
	 "Run COMMAND with --explain, then print the policy (the one given, with -p and\n"
	 "the flags) with the narrowest grants that allow what was denied, for review:\n"
	 "the file itself, a file of HOME as home_files, never a hidden /etc entry, HOME\n"
	 "or a folder holding keys. --rounds N runs again, up to N times, until nothing\n"
	 "new is denied (the command runs each time). The command's own output goes to\n"
	 "stderr; the policy to stdout, or to FILE with -o.", true},
	{"check", "stepbox check [--json]",
	 "Say what this kernel and host give: Landlock's ABI and features, the namespaces,\n"
	 "each backend, and the one auto would choose. Exits 1 when none is usable.", false},
	{"policy", "stepbox policy [OPTIONS] [--format json|sbpl]",
	 "Print the effective policy as JSON: every path canonical, with its origin, what\n"
	 "was skipped and why. The output is valid input for -p. --format sbpl prints the\n"
	 "macOS Seatbelt profile a Mac would enforce for it instead, on any OS.", true},
	{"env", "stepbox env [OPTIONS] [--json | -0]",
	 "Print the environment the command would get, and what was dropped and why;\n"
	 "--json as an object, -0 NUL-separated.", true},
	{"guide", "stepbox guide [OPTIONS]",
	 "Print, for an agent, where it may write, where installs go and whether they\n"
	 "persist, the network, and what is not available.", true},
	{"doctor", "stepbox doctor [OPTIONS] [--json]",
	 "Check a deployment: PATH, HOME and its dotfiles, /etc secrets, resolv.conf, the\n"
	 "environment. Exits 1 when a check fails.", true},
	{"mcp", "stepbox mcp [OPTIONS] [--max-parallel N]",
	 "Serve MCP over stdio (JSON-RPC 2.0, a message a line): a tool, run, that runs a\n"
	 "shell command line (or an argv) as a step, each call a fresh sandbox with this\n"
	 "policy, fixed for the server's life and checked before the handshake (exit 125\n"
	 "when it is bad). The result: exit status, stdout and stderr (each capped at\n"
	 "64 KiB), the duration, and what the sandbox denied. Up to N calls run at once\n"
	 "(default 4); the policy cannot come from standard input, the protocol's.", true},
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_help(const struct command *c)
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
	if (strcmp(c->name, "run") == 0 || strcmp(c->name, "learn") == 0)
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

enum { OPT_CONSUME = 256, OPT_WD_RO, OPT_PERSIST, OPT_NET, OPT_BACKEND, OPT_ENV, OPT_UNSET,
       OPT_CLEAN_ENV, OPT_TIMEOUT, OPT_EXPLAIN, OPT_ENABLE_AUDIT, OPT_REPORT, OPT_JSON,
       OPT_VERSION, OPT_ALLOW_BROAD, OPT_UNIX, OPT_PERSIST_SHARED, OPT_PERSIST_WAIT, OPT_GRACE,
       OPT_HOME_FILE, OPT_ROUNDS, OPT_LIMIT, OPT_NO_LIMITS, OPT_MAX_PARALLEL, OPT_FORMAT };

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
	{NULL, 0, NULL, 0},
};

static int fail(const struct stepbox_err *err)
{
	err_print(err);
	return 125;
}

/* The same, and the run report says it too: --report is written on 125 as well. */
static int fail_report(const struct stepbox_config *cfg, const struct stepbox_err *err)
{
	struct stepbox_err rerr = {0};
	if (cfg->report_file && reportfile_error(cfg->report_file, cfg, err, &rerr) < 0)
		err_print(&rerr);
	return fail(err);
}

/* A path flag: absolute against the current folder, pushed to list. */
static int add_path(struct strv *list, const char *arg, const char *what,
		    struct stepbox_err *err)
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

/* Parse options into cfg; returns optind of the first operand, or -1. */
/* What the command line asks of the output, and how many policy options it gave. */
struct cli {
	bool json, nul;
	int policy_options;
	const char *output; /* learn -o FILE */
	long rounds;        /* learn --rounds N */
	long max_parallel;  /* mcp --max-parallel N */
	bool sbpl;          /* policy --format sbpl */
	bool format;        /* --format was given */
};

static int parse(int argc, char **argv, struct stepbox_config *cfg, struct cli *cli,
		 struct stepbox_err *err)
{
	int c, r = 0;
	optind = 1;
	opterr = 0;
	while (r == 0 && (c = getopt_long(argc, argv, "+p:r:w:C:vqh0o:", options, NULL)) != -1) {
		cli->policy_options += c != OPT_JSON && c != '0' && c != 'v' && c != 'q' && c != 'o' &&
				       c != OPT_ROUNDS && c != OPT_MAX_PARALLEL && c != OPT_FORMAT;
		switch (c) {
		case 'p':
			if (cfg->policy_file)
				return err_set(err, ERR_USAGE, 0, "--policy given twice");
			if (!(cfg->policy_file = strdup(optarg)))
				return err_set(err, ERR_USAGE, ENOMEM, "--policy");
			break;
		case OPT_CONSUME:
			cfg->consume = true;
			break;
		case 'r':
			r = add_path(&cfg->read_flag, optarg, "--read", err);
			break;
		case 'w':
			r = add_path(&cfg->write_flag, optarg, "--write", err);
			break;
		case OPT_UNIX:
			r = add_path(&cfg->unix_flag, optarg, "--unix", err);
			break;
		case OPT_HOME_FILE:
			if (!policy_home_file_ok(optarg))
				return err_set(err, ERR_USAGE, 0, "--home-file '%s': a path relative to "
					       "HOME, without '..' (.gitconfig, .ssh/config)", optarg);
			r = strv_push(&cfg->home_flag, optarg);
			break;
		case 'C':
			r = set_once(&cfg->workdir, optarg, "--workdir", err);
			break;
		case OPT_WD_RO:
			cfg->workdir_readonly = true;
			break;
		case OPT_ALLOW_BROAD:
			cfg->allow_broad_grants = true;
			break;
		case OPT_PERSIST:
			r = set_once(&cfg->persist, optarg, "--persist", err);
			break;
		case OPT_PERSIST_SHARED:
			r = set_once(&cfg->persist, optarg, "--persist-shared", err);
			cfg->persist_shared = true;
			break;
		case OPT_PERSIST_WAIT:
			r = policy_set_seconds(&cfg->persist_wait_s, "--persist-wait", optarg, err);
			break;
		case OPT_GRACE:
			r = policy_set_seconds(&cfg->grace_s, "--grace", optarg, err);
			break;
		case OPT_NET:
			r = policy_set_net(cfg, optarg, err);
			break;
		case OPT_BACKEND:
			r = policy_set_backend(cfg, optarg, err);
			break;
		case OPT_ENV:
			r = policy_add_env(cfg, optarg, err);
			break;
		case OPT_UNSET:
			if (!policy_env_name_ok(optarg))
				return err_set(err, ERR_USAGE, 0, "--unset '%s': not a variable name",
					       optarg);
			r = strv_push(&cfg->env_unset, optarg);
			break;
		case OPT_CLEAN_ENV:
			cfg->clean_env = true;
			break;
		case OPT_TIMEOUT:
			r = policy_set_timeout(cfg, optarg, err);
			break;
		case OPT_LIMIT:
			r = limitcfg_set_flag(&cfg->limits, optarg, err);
			break;
		case OPT_NO_LIMITS:
			cfg->limits.none = true;
			break;
		case OPT_EXPLAIN:
			cfg->explain = true;
			break;
		case OPT_ENABLE_AUDIT:
			cfg->enable_audit = true;
			break;
		case OPT_REPORT:
			r = set_once(&cfg->report_file, optarg, "--report", err);
			break;
		case OPT_JSON:
			cli->json = true;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "sbpl") != 0 && strcmp(optarg, "json") != 0)
				return err_set(err, ERR_USAGE, 0, "--format '%s': json or sbpl", optarg);
			cli->format = true;
			cli->sbpl = strcmp(optarg, "sbpl") == 0;
			break;
		case '0':
			cli->nul = true;
			break;
		case 'o':
			cli->output = optarg;
			break;
		case OPT_MAX_PARALLEL:
			if (policy_parse_long(optarg, 1, 64, &cli->max_parallel) < 0)
				return err_set(err, ERR_USAGE, 0, "--max-parallel '%s': a whole number "
					       "from 1 to 64", optarg);
			break;
		case OPT_ROUNDS:
			if (policy_parse_long(optarg, 1, 100, &cli->rounds) < 0)
				return err_set(err, ERR_USAGE, 0, "--rounds '%s': a whole number from "
					       "1 to 100", optarg);
			break;
		case 'v':
			cfg->verbosity = 1;
			break;
		case 'q':
			cfg->verbosity = -1;
			break;
		case 'h':
			print_help(find_command(argv[0]));
			exit(0);
		default:
			err_set(err, ERR_USAGE, 0, "unknown or incomplete option '%s'",
				argv[optind - 1]);
			err_hint(err, "see stepbox --help");
			return -EINVAL;
		}
	}
	if (r < 0)
		return r;
	if (cfg->consume && !cfg->policy_file)
		return err_set(err, ERR_USAGE, 0, "--consume needs --policy FILE");
	/* mcp: standard input carries the protocol */
	if (cfg->policy_file && strcmp(cfg->policy_file, "-") == 0 && strcmp(argv[0], "mcp") == 0) {
		err_set(err, ERR_USAGE, 0, "mcp: the policy cannot come from standard input, which "
			"carries the protocol");
		err_hint(err, "give the policy as a file: stepbox mcp -p POLICY.json");
		return -EINVAL;
	}
	if (cfg->policy_file &&
	    policyfile_load_file(cfg, cfg->policy_file, cfg->consume, err) < 0)
		return -EINVAL;
	return optind;
}

#ifdef STEPBOX_LINUX
/* After the arguments: each command of the Linux build. */
static int dispatch(const char *cmd, struct stepbox_config *cfg, const struct cli *cli,
		    char **operands)
{
	struct stepbox_err err = {0};
	struct run_ctx ctx;
	int code;
	if (strcmp(cmd, "check") == 0) {
		if (layers_host(&ctx.host, true, &err) < 0)
			return fail(&err);
		return report_check(stdout, &ctx.host, cfg, cli->json) ? 0 : 1;
	}
	if (strcmp(cmd, "mcp") == 0) {
		struct mcp_opts mo = {(int)cli->max_parallel, 64 * 1024};
		return mcp_main(cfg, &mo);
	}
	bool learn = strcmp(cmd, "learn") == 0;
	bool is_run = strcmp(cmd, "run") == 0 || learn;
	bool doctor = strcmp(cmd, "doctor") == 0;
	cfg->explain |= learn;
	/* doctor reports on every backend, and a Mac's profile on none of these */
	if (doctor || cli->sbpl) {
		cfg->backend = BACKEND_NONE;
		cfg->plan_only = true;
	}
	if (run_prepare(cfg, environ, is_run, &ctx, &err) < 0)
		return is_run ? fail_report(cfg, &err) : fail(&err);
	if (learn)
		code = learn_run(cfg, &ctx, operands, cli->output, cli->rounds);
	else if (is_run)
		code = run_exec(cfg, &ctx, operands, NULL);
	else if (strcmp(cmd, "policy") == 0 && cli->sbpl)
		code = sbpl_write(stdout, cfg, &ctx.grants, &err) < 0 ? fail(&err) : 0;
	else if (strcmp(cmd, "policy") == 0)
		code = show_policy(stdout, cfg, &ctx.grants, &ctx.env,
				   policy_backend_name(ctx.backend.name)) < 0 ? 125 : 0;
	else if (doctor)
		code = doctor_run(stdout, cfg, &ctx, "/etc", cli->json) ? 1 : 0;
	else if (strcmp(cmd, "guide") == 0) {
		guide_write(stdout, cfg, &ctx.grants, &ctx.env, &ctx.limits);
		code = 0;
	} else {
		code = show_env(stdout, &ctx.env, cli->json, cli->nul) < 0 ? 125 : 0;
	}
	run_release(&ctx);
	return code;
}
#else
/* After the arguments: each command of the portable build (the Seatbelt backend). */
static int dispatch(const char *cmd, struct stepbox_config *cfg, const struct cli *cli,
		    char **operands)
{
	struct stepbox_err err = {0};
	bool is_run = strcmp(cmd, "run") == 0;
	if (strcmp(cmd, "learn") == 0 || strcmp(cmd, "doctor") == 0 || strcmp(cmd, "mcp") == 0 ||
	    strcmp(cmd, "guide") == 0) {
		err_set(&err, ERR_USAGE, 0, "'%s' is not in this build (the Seatbelt backend)", cmd);
		err_hint(&err, "this build has run, check, policy and env; the Linux build has "
			       "every command");
		return fail(&err);
	}
	if (strcmp(cmd, "check") == 0)
		return seatbelt_check(stdout, cfg, cli->json) ? 0 : 1;
	if (cfg->backend != BACKEND_AUTO && !backend_find(cfg->backend) && !cli->sbpl) {
		backend_not_here(cfg->backend, &err);
		return is_run ? fail_report(cfg, &err) : fail(&err);
	}
	struct seatbelt_ctx ctx;
	if (seatbelt_prepare(cfg, environ, &ctx, &err) < 0)
		return is_run ? fail_report(cfg, &err) : fail(&err);
	int code;
	if (is_run)
		code = seatbelt_run(cfg, &ctx, operands);
	else if (strcmp(cmd, "policy") == 0 && cli->sbpl)
		code = sbpl_write(stdout, cfg, &ctx.grants, &err) < 0 ? fail(&err) : 0;
	else if (strcmp(cmd, "policy") == 0)
		code = show_policy(stdout, cfg, &ctx.grants, &ctx.env, "seatbelt") < 0 ? 125 : 0;
	else
		code = show_env(stdout, &ctx.env, cli->json, cli->nul) < 0 ? 125 : 0;
	seatbelt_release(&ctx);
	return code;
}
#endif

/* What each command takes besides options, the same in every build. */
static int check_operands(const char *cmd, int noperands, const struct cli *cli,
			  struct stepbox_err *err)
{
	bool is_run = strcmp(cmd, "run") == 0 || strcmp(cmd, "learn") == 0;
	if (strcmp(cmd, "check") == 0) {
		if (noperands == 0 && cli->policy_options == 0)
			return 0;
		err_set(err, ERR_USAGE, 0, "check takes no arguments but --json");
		err_hint(err, "stepbox check [--json]");
		return -EINVAL;
	}
	if (strcmp(cmd, "mcp") == 0) {
		if (noperands == 0)
			return 0;
		err_set(err, ERR_USAGE, 0, "mcp takes no command");
		err_hint(err, "stepbox mcp [-p POLICY.json] [OPTIONS] [--max-parallel N]");
		return -EINVAL;
	}
	if (is_run == (noperands > 0))
		return 0;
	err_set(err, ERR_USAGE, 0, is_run ? "run: no command given" : "%s takes no command", cmd);
	err_hint(err, "stepbox run [OPTIONS] -- COMMAND [ARG...]");
	return -EINVAL;
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
		print_help(argc > 2 ? find_command(argv[2]) : NULL);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		print_version();
		return 0;
	}
	const char *cmd = argv[1];
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct cli cli = {false, false, 0, NULL, 1, 4, false, false};
	int code = 125;
	policy_init(&cfg);
	if (!find_command(cmd)) {
		err_set(&err, ERR_USAGE, 0, "unknown command '%s'", cmd);
		err_hint(&err, "commands: run, learn, check, policy, env, guide, doctor, mcp; see "
			       "stepbox --help");
		code = fail(&err);
		goto out;
	}
	int first = parse(argc - 1, argv + 1, &cfg, &cli, &err);
	if (first < 0) {
		code = fail_report(&cfg, &err);
		goto out;
	}
	if (cli.format && strcmp(cmd, "policy") != 0) {
		err_set(&err, ERR_USAGE, 0, "--format is an option of stepbox policy");
		code = fail(&err);
		goto out;
	}
	if (check_operands(cmd, argc - 1 - first, &cli, &err) < 0) {
		code = fail(&err);
		goto out;
	}
	code = dispatch(cmd, &cfg, &cli, argv + 1 + first);
out:
	policy_release(&cfg);
	return code;
}
