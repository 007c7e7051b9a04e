/*
 * mcp's private parts, shared by mcp.c (the server) and mcp_run.c (the run
 * tool): a call, the server, a tool's row, and how an answer is sent. Not
 * included elsewhere.
 */
#ifndef STEPBOX_MCP_INT_H
#define STEPBOX_MCP_INT_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mcp.h"

/* JSON-RPC 2.0's error codes, and MCP's for a resource */
enum {
	RPC_PARSE = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_NO_METHOD = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL = -32603,
	MCP_NO_RESOURCE = -32002,
};

struct call {
	const struct tool *tool; /* what it runs (tools[]) */
	json_t *id;              /* the request's id */
	json_t *token;           /* its progressToken, or NULL */
	json_t *args;            /* the tool's arguments */
	char *cwd;               /* where the command starts, inside the workdir, or NULL */
	pid_t pid;               /* the worker; 0 while the call waits its turn */
	int pidfd;
	int fd[2];    /* its stdout and stderr, read ends; -1 at their end */
	char *buf[2]; /* what is kept of each */
	size_t kept[2];
	uint64_t total[2];
	int status;
	bool exited, cancelled;
	double start, next_progress, kill_at;
	char report[PATH_MAX];
	struct call *next;
};

struct server {
	struct stepbox_config *cfg;
	const char *guide;
	const char *workdir; /* canonical */
	bool explain;        /* the denials can be traced here (not under Yama's scope 3) */
	struct mcp_opts o;
	bool initialized, eof, discarding, gone;
	char *in;
	size_t inlen, incap;
	struct call *calls;
	int running;
	unsigned seq;
	char dir[PATH_MAX - 64]; /* the calls' reports, private */
};

/*
 * The tools this server offers, each a row with its functions beside it: a
 * new tool is local. schema: its tools/list entry; check: its arguments,
 * before the call waits its turn; start: what the call's forked worker runs
 * (it never returns); finish: the answer, once the worker has ended and its
 * output is read.
 */
struct tool {
	const char *name;
	json_t *(*schema)(const struct server *sv);
	bool (*check)(struct server *sv, json_t *id, json_t *args, char **cwd);
	void (*start)(struct server *sv, struct call *c);
	void (*finish)(struct server *sv, struct call *c);
};

/* The answer to a request: its result (taken), or a JSON-RPC error. */
void mcp_reply(struct server *sv, json_t *id, json_t *result);
__attribute__((format(printf, 4, 5))) void mcp_reply_error(struct server *sv, json_t *id, int code,
							   const char *fmt, ...);

/* The run tool's row: mcp_run.c */
json_t *mcp_run_tool(const struct server *sv);
bool mcp_run_check(struct server *sv, json_t *id, json_t *args, char **cwd);
__attribute__((noreturn)) void mcp_run_start(struct server *sv, struct call *c);
void mcp_run_finish(struct server *sv, struct call *c);

#endif
