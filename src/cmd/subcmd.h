/*
 * subcmd: stepbox's commands, one table. Each row says how the command is
 * called, what it does (its --help), what it takes, and the function that
 * runs it in this build; main parses the arguments and calls that function,
 * and nothing else decides which command runs what.
 */
#ifndef STEPBOX_SUBCMD_H
#define STEPBOX_SUBCMD_H

#include <stdbool.h>

#include "policy.h"

/* What the command line asks besides the policy: output forms and a command's own options. */
struct subcmd_cli {
	bool json, nul;
	int policy_options; /* how many policy options were given (check takes none) */
	const char *output; /* learn -o FILE */
	long rounds;        /* learn --rounds N */
	long max_parallel;  /* mcp --max-parallel N */
	bool sbpl;          /* policy --format sbpl */
	bool format;        /* --format was given */
};

/* What a command takes after its options. */
enum subcmd_operands { SUBCMD_NONE, SUBCMD_COMMAND };

struct subcmd {
	const char *name, *synopsis, *what;
	bool options;                  /* takes the policy options */
	enum subcmd_operands operands; /* a COMMAND to run, or nothing */
	/* run it: stepbox's exit status; cfg is the caller's to release */
	int (*run)(struct stepbox_config *cfg, const struct subcmd_cli *cli, char **operands);
};

/* The command called name, or NULL. */
const struct subcmd *subcmd_find(const char *name);

/* Every command's name, in the table's order, for a usage hint ("run, learn, ..."). */
const char *subcmd_names(void);

/*
 * Whether n operands (and cli's policy options) are what c takes: 0, or
 * -EINVAL with err saying how it is called.
 */
int subcmd_check_operands(const struct subcmd *c, int n, const struct subcmd_cli *cli,
			  struct stepbox_err *err);

/*
 * 125, with err said on stderr, and in the run report when cfg (may be NULL)
 * asks for one with --report.
 */
int subcmd_fail(const struct stepbox_config *cfg, const struct stepbox_err *err);

#endif
