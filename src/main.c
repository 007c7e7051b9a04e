/*
 * stepbox: run one command under a filesystem, network and IPC policy, fail
 * closed. main parses the command line into one config and dispatches.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "policy.h"
#include "doctor.h"
#include "report.h"
#include "run.h"

extern char **environ;

static const char usage[] =
	"usage: stepbox run [OPTIONS] [--] COMMAND [ARG...]\n"
	"       stepbox check [--json]\n"
	"       stepbox policy [OPTIONS]   print the effective policy as JSON\n"
	"       stepbox env [OPTIONS]      print the environment the command would get\n"
	"       stepbox guide [OPTIONS]    print, for an agent, what its step may do\n"
	"       stepbox doctor [OPTIONS] [--json]  check a deployment; non-zero if a check fails\n"
	"       stepbox learn [OPTIONS] [--] COMMAND [ARG...]\n"
	"                                  run with --explain; print a policy fragment that\n"
	"                                  grants what was denied, for review\n"
	"\n"
	"Options of run, policy and env:\n"
	"  -p, --policy FILE      JSON policy (version 1); '-' reads standard input\n"
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
	"      --explain          after the command ends, list what the sandbox denied\n"
	"      --enable-audit     with --explain as root: turn the audit subsystem on for\n"
	"                         this run if it is off (and back off after)\n"
	"      --report FILE      write a JSON run report\n"
	"  -v, --verbose / -q, --quiet\n"
	"\n"
	"Exit status of run: the command's own; 128+N if killed by signal N; 124 on\n"
	"timeout; 126 if the command cannot be executed (including a sandbox denial);\n"
	"127 if not found; 125 if stepbox failed and the command never started.\n"
	"See stepbox(1).\n";

enum { OPT_CONSUME = 256, OPT_WD_RO, OPT_PERSIST, OPT_NET, OPT_BACKEND, OPT_ENV, OPT_UNSET,
       OPT_CLEAN_ENV, OPT_TIMEOUT, OPT_EXPLAIN, OPT_ENABLE_AUDIT, OPT_REPORT, OPT_JSON,
       OPT_VERSION, OPT_ALLOW_BROAD, OPT_UNIX, OPT_PERSIST_SHARED, OPT_PERSIST_WAIT, OPT_GRACE,
       OPT_HOME_FILE };

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
	{"explain", no_argument, NULL, OPT_EXPLAIN},
	{"enable-audit", no_argument, NULL, OPT_ENABLE_AUDIT},
	{"report", required_argument, NULL, OPT_REPORT},
	{"json", no_argument, NULL, OPT_JSON},
	{"verbose", no_argument, NULL, 'v'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

static int fail(const struct stepbox_err *err)
{
	err_print(err);
	return 125;
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
static int parse(int argc, char **argv, struct stepbox_config *cfg, bool *json,
		 struct stepbox_err *err)
{
	int c, r = 0;
	optind = 1;
	opterr = 0;
	while (r == 0 && (c = getopt_long(argc, argv, "+p:r:w:C:vqh", options, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cfg->policy_file)
				return err_set(err, ERR_USAGE, 0, "--policy given twice");
			cfg->policy_file = strdup(optarg);
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
			*json = true;
			break;
		case 'v':
			cfg->verbosity = 1;
			break;
		case 'q':
			cfg->verbosity = -1;
			break;
		case 'h':
			fputs(usage, stdout);
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
	if (cfg->policy_file &&
	    policy_load_file(cfg, cfg->policy_file, cfg->consume, err) < 0)
		return -EINVAL;
	return optind;
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
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 125 : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("stepbox %s\n", STEPBOX_VERSION);
		return 0;
	}
	const char *cmd = argv[1];
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct run_ctx ctx;
	bool json = false;
	policy_init(&cfg);
	int first = parse(argc - 1, argv + 1, &cfg, &json, &err);
	int code = 125;
	if (first < 0) {
		code = fail(&err);
		goto out;
	}
	char **operands = argv + 1 + first;
	int noperands = argc - 1 - first;
	if (strcmp(cmd, "check") == 0) {
		if (landlock_probe(&ctx.features, backend_abi_cap(), &err) < 0) {
			code = fail(&err);
			goto out;
		}
		report_check(stdout, &ctx.features, &cfg, json);
		code = 0;
		goto out;
	}
	bool learn = strcmp(cmd, "learn") == 0;
	bool is_run = strcmp(cmd, "run") == 0 || learn;
	bool doctor = strcmp(cmd, "doctor") == 0;
	if (!is_run && strcmp(cmd, "policy") != 0 && strcmp(cmd, "env") != 0 &&
	    strcmp(cmd, "guide") != 0 && !doctor) {
		err_set(&err, ERR_USAGE, 0, "unknown command '%s'", cmd);
		err_hint(&err, "commands: run, learn, check, policy, env, guide, doctor; see stepbox "
			       "--help");
		code = fail(&err);
		goto out;
	}
	if (is_run != (noperands > 0)) {
		err_set(&err, ERR_USAGE, 0, is_run ? "run: no command given" : "%s takes no command",
			cmd);
		err_hint(&err, "stepbox run [OPTIONS] -- COMMAND [ARG...]");
		code = fail(&err);
		goto out;
	}
	cfg.explain |= learn;
	if (doctor) /* it reports on every backend; the grants do not depend on one */
		cfg.backend = BACKEND_NONE;
	if (run_prepare(&cfg, environ, is_run, &ctx, &err) < 0) {
		code = fail(&err);
		goto out;
	}
	if (is_run)
		code = run_exec(&cfg, &ctx, operands, learn);
	else if (strcmp(cmd, "policy") == 0)
		code = report_policy(stdout, &cfg, &ctx.grants, &ctx.env, ctx.backend.name) < 0 ? 125 : 0;
	else if (doctor)
		code = doctor_run(stdout, &cfg, &ctx, "/etc", json) ? 1 : 0;
	else if (strcmp(cmd, "guide") == 0) {
		report_guide(stdout, &cfg, &ctx.grants, &ctx.env);
		code = 0;
	} else {
		report_env(stdout, &ctx.env);
		code = 0;
	}
	run_release(&ctx);
out:
	policy_release(&cfg);
	return code;
}
