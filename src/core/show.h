/*
 * show: what `stepbox policy` and `stepbox env` print, the same on every
 * platform (portable: jansson and the policy's own modules only), and the
 * JSON pieces the run report shares with them.
 */
#ifndef STEPBOX_SHOW_H
#define STEPBOX_SHOW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "env.h"
#include "grants.h"
#include "policy.h"
#include "strv.h"

/*
 * The policy cfg asks for, as a policy file has it (valid input for -p):
 * the paths as asked, policy and flags merged. NULL on ENOMEM.
 */
json_t *show_policy_json(const struct stepbox_config *cfg, const struct grants *g);

/*
 * The effective policy as JSON: every path canonical, with its origin;
 * backend: the one that would enforce it ("stacked", "seatbelt"...).
 */
int show_policy(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
		const struct env_result *env, const char *backend);

/*
 * NAME=VALUE lines, then "# dropped NAME: reason" lines; with nul each entry
 * ends in NUL and nothing else is printed; with json an object (version, env,
 * dropped, routed_dirs, persistent_dir, run_base).
 */
int show_env(FILE *out, const struct env_result *r, bool json, bool nul);

/* root to out, indented, in its keys' order; takes root. 0 or -EIO. */
int show_dump(FILE *out, json_t *root);

/* The pieces: a string array; the network as the policy file spells it;
 * NAME=VALUE entries as an object; "NAME: reason" entries as objects. */
json_t *show_strv_json(const struct strv *sv);
json_t *show_list_json(const char *const *v); /* a NULL-ended list (argv) */
json_t *show_network_json(const struct stepbox_config *cfg);
json_t *show_env_object(const struct strv *entries);
json_t *show_dropped_json(const struct strv *dropped);

#endif
