/*
 * learn: `stepbox learn`, a run with --explain whose denials are merged into
 * the policy (explain_learn), run again until a round adds nothing (or
 * --rounds), then printed for review: the narrowest grants, never a hidden
 * /etc entry, HOME, or a folder holding keys.
 */
#ifndef STEPBOX_LEARN_H
#define STEPBOX_LEARN_H

#include "policy.h"
#include "run.h"

/*
 * Run argv under cfg (ctx prepared for it) for up to rounds rounds; the
 * command's stdout goes to stderr so that the learned policy alone is on
 * stdout, or in the file to (-o), written through no symlink. stepbox's exit
 * status: the last round's, or 125 (said on stderr). cfg and ctx are the
 * last round's on return: the caller releases them.
 */
int learn_run(struct stepbox_config *cfg, struct run_ctx *ctx, char **argv, const char *to,
	      long rounds);

#endif
