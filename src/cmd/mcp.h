/*
 * mcp: stepbox as an MCP server over stdio (JSON-RPC 2.0, one message a
 * line, as the MCP specification's stdio transport defines). Its one tool,
 * run, runs a shell command line (or an argv) as a step: each call a fresh
 * sandbox with the server's policy, fixed for the server's life. Calls run
 * side by side (up to max_parallel, the rest wait their turn); the server
 * keeps answering meanwhile. A call is a forked worker that runs the step as
 * `stepbox run` would (--explain, a private report, no grace after a
 * cancellation); its output comes back through pipes, capped.
 */
#ifndef STEPBOX_MCP_H
#define STEPBOX_MCP_H

#include <stddef.h>

#include "policy.h"

struct mcp_opts {
	int max_parallel;  /* calls running at once (default 4) */
	size_t max_output; /* bytes kept of each of stdout and stderr a call */
};

/*
 * Check the policy (125, said on stderr, before any message is read), then
 * serve on stdin and stdout until stdin ends: every running step is ended
 * before it returns. Returns the exit status.
 */
int mcp_main(struct stepbox_config *cfg, const struct mcp_opts *o);

#endif
