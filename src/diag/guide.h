/*
 * guide: `stepbox guide` (and the MCP server's instructions): for an agent,
 * in Markdown, where it may write, where installs go and whether they
 * persist, that root, sudo and apt are unavailable, its limits, and how to
 * ask for more. Derived from the effective grants, environment and limits
 * only.
 */
#ifndef STEPBOX_GUIDE_H
#define STEPBOX_GUIDE_H

#include <stdio.h>

#include "env.h"
#include "grants.h"
#include "limit.h"
#include "policy.h"

void guide_write(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
		 const struct env_result *env, const struct limit_plan *lp);

#endif
