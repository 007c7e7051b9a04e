/* mcp_run: the MCP server's run tool (see mcp.h, mcp_int.h). */
#include "mcp_int.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "env.h"
#include "err.h"
#include "path.h"
#include "run.h"

extern char **environ;

/* One argument of a command line: the kernel's own (MAX_ARG_STRLEN) */
#define MCP_ARG_MAX (128u << 10)
/* argv entries and env variables of a call, and the bytes of each list */
#define MCP_LIST_MAX 4096
#define MCP_LIST_BYTES (1u << 20)

/* ---- the run tool ---- */

json_t *mcp_run_tool(const struct server *sv)
{
	char *desc = NULL;
	if (asprintf(&desc,
		     "Run a shell command in stepbox's sandbox: a fresh sandbox for every call, "
		     "with this server's fixed policy. Give `command` (run as /bin/sh -c) or "
		     "`argv`. The result has the exit status, stdout and stderr (each capped at "
		     "%zu bytes), the duration, and what the sandbox denied. A non-zero exit is a "
		     "normal result. What this sandbox allows:\n\n%s",
		     sv->o.max_output, sv->guide) < 0)
		desc = NULL;
	json_t *t = json_pack(
		"{s:s, s:s, s:s?, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:{s:s}, s:i, s:s}, s:{s:s, "
		"s:s},"
		" s:{s:s, s:i, s:s}, s:{s:s, s:{s:s}, s:s}}, s:b}}",
		"name", "run", "title", "Run a command in the sandbox", "description", desc,
		"inputSchema", "type", "object", "properties", "command", "type", "string",
		"description", "a shell command line, run as /bin/sh -c", "argv", "type", "array",
		"items", "type", "string", "minItems", 1, "description",
		"the command and its arguments, run as they are (instead of command)", "cwd",
		"type", "string", "description",
		"the folder to start in: inside the workdir, relative to it or absolute",
		"timeout_s", "type", "integer", "minimum", 1, "description",
		"seconds before the whole process tree is killed (the policy's timeout caps it)",
		"env", "type", "object", "additionalProperties", "type", "string", "description",
		"variables to set (names that look secret, loader hooks and socket locators are "
		"refused)",
		"additionalProperties", 0);
	free(desc);
	return t;
}

static bool check_argv(struct server *sv, json_t *id, json_t *v)
{
	bool good =
		json_is_array(v) && json_array_size(v) > 0 && json_array_size(v) <= MCP_LIST_MAX;
	size_t bytes = 0;
	for (size_t i = 0; good && i < json_array_size(v); i++) {
		json_t *a = json_array_get(v, i);
		good = json_is_string(a) && json_string_length(a) < MCP_ARG_MAX;
		bytes += good ? json_string_length(a) + 1 : 0;
	}
	if (!good || bytes > MCP_LIST_BYTES) {
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
				"run: argv must be a non-empty array of at most %d strings, "
				"each under %u KiB, %u KiB in all",
				MCP_LIST_MAX, MCP_ARG_MAX >> 10, MCP_LIST_BYTES >> 10);
		return false;
	}
	return true;
}

static bool check_env(struct server *sv, json_t *id, json_t *v)
{
	const char *name;
	json_t *val;
	size_t bytes = 0;
	if (!json_is_object(v) || json_object_size(v) > MCP_LIST_MAX) {
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
				"run: env must be an object of at most %d variables", MCP_LIST_MAX);
		return false;
	}
	json_object_foreach(v, name, val)
	{
		if (!json_is_string(val) || !policy_env_name_ok(name) ||
		    json_string_length(val) >= MCP_ARG_MAX) {
			mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
					"run: env '%.100s' must be a variable name with a "
					"string value under %u KiB",
					name, MCP_ARG_MAX >> 10);
			return false;
		}
		bytes += strlen(name) + json_string_length(val) + 2;
	}
	if (bytes > MCP_LIST_BYTES) {
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
				"run: env holds %zu bytes: at most %u KiB", bytes,
				MCP_LIST_BYTES >> 10);
		return false;
	}
	return true;
}

/* The arguments, checked before anything runs: a JSON-RPC error when they are wrong. */
static bool check_args(struct server *sv, json_t *id, json_t *args)
{
	if (!json_is_object(args)) {
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS, "run: arguments must be an object");
		return false;
	}
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v)
	{
		if (strcmp(key, "command") == 0) {
			if (!json_is_string(v) || !json_string_length(v) ||
			    json_string_length(v) >= MCP_ARG_MAX) {
				mcp_reply_error(
					sv, id, RPC_INVALID_PARAMS,
					"run: command must be a non-empty string under %u KiB (the "
					"kernel's bound on one argument)",
					MCP_ARG_MAX >> 10);
				return false;
			}
		} else if (strcmp(key, "argv") == 0) {
			if (!check_argv(sv, id, v))
				return false;
		} else if (strcmp(key, "cwd") == 0 &&
			   (!json_is_string(v) || json_string_length(v) >= PATH_MAX)) {
			mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
					"run: cwd must be a path (a string)");
			return false;
		} else if (strcmp(key, "timeout_s") == 0 &&
			   (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > POLICY_MAX_TIMEOUT)) {
			mcp_reply_error(
				sv, id, RPC_INVALID_PARAMS,
				"run: timeout_s must be a whole number of seconds from 1 to %ld",
				POLICY_MAX_TIMEOUT);
			return false;
		} else if (strcmp(key, "env") == 0) {
			if (!check_env(sv, id, v))
				return false;
		} else if (strcmp(key, "cwd") != 0 && strcmp(key, "timeout_s") != 0) {
			mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
					"run: unknown argument '%.100s'", key);
			return false;
		}
	}
	if (!json_object_get(args, "command") == !json_object_get(args, "argv")) {
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
				"run: give command or argv (one of them)");
		return false;
	}
	return true;
}

/*
 * What a call may not do that its arguments ask, said as the tool's error
 * (the agent can fix it): a cwd outside the workdir, a variable stepbox
 * would drop. NULL when it may run; *cwd gets the folder to start in.
 */
static const char *refused(const struct server *sv, json_t *args, char **cwd, char *why, size_t cap)
{
	const char *workdir = sv->workdir;
	json_t *c = json_object_get(args, "cwd");
	*cwd = NULL;
	if (c) {
		char joined[PATH_MAX * 2], real[PATH_MAX];
		const char *p = json_string_value(c);
		snprintf(joined, sizeof(joined), "%s%s%s", p[0] == '/' ? "" : workdir,
			 p[0] == '/' ? "" : "/", p);
		if (!realpath(joined, real)) {
			snprintf(why, cap, "cwd '%s': %s", p, strerror(errno));
			return why;
		}
		if (!path_beneath(real, workdir)) {
			snprintf(why, cap, "cwd '%s' is outside the workdir '%s'", p, workdir);
			return why;
		}
		*cwd = strdup(real);
	}
	const char *name;
	json_t *val;
	json_object_foreach(json_object_get(args, "env"), name, val)
	{
		const char *r = env_drop_reason(name, json_string_value(val));
		if (r) {
			snprintf(why, cap, "env '%s' is refused: %s", name, r);
			free(*cwd);
			*cwd = NULL;
			return why;
		}
	}
	return NULL;
}

/* The run tool's worker: the command, as `stepbox run` runs it. */
void mcp_run_start(struct server *sv, struct call *c)
{
	struct stepbox_config *cfg = sv->cfg;
	struct stepbox_err e = {0};
	cfg->report_file = c->report;
	cfg->explain = sv->explain;
	cfg->explain_silent = true; /* the result lists them, worded as --explain would */
	cfg->grace_s = 0;           /* a cancellation ends the tree at once */
	json_t *t = json_object_get(c->args, "timeout_s");
	if (t && (!cfg->timeout_s || json_integer_value(t) < cfg->timeout_s))
		cfg->timeout_s = (long)json_integer_value(t);
	const char *name;
	json_t *val;
	json_object_foreach(json_object_get(c->args, "env"), name, val)
	{
		char *a = NULL;
		if (asprintf(&a, "%s=%s", name, json_string_value(val)) < 0 ||
		    policy_add_env(cfg, a, &e) < 0) {
			if (!e.msg[0])
				err_set(&e, ERR_USAGE, ENOMEM, "env");
			err_print(&e);
			_exit(125);
		}
		free(a);
	}
	json_t *argv_j = json_object_get(c->args, "argv");
	size_t n = argv_j ? json_array_size(argv_j) : 3;
	char **argv = calloc(n + 6, sizeof(*argv));
	if (!argv)
		_exit(125);
	size_t k = 0;
	if (c->cwd) { /* sh starts the command in its folder */
		argv[k++] = "/bin/sh";
		argv[k++] = "-c";
		argv[k++] = "cd -- \"$1\" && shift && exec \"$@\"";
		argv[k++] = "stepbox-cwd";
		argv[k++] = c->cwd;
	}
	if (argv_j) {
		for (size_t i = 0; i < n; i++)
			argv[k++] = (char *)json_string_value(json_array_get(argv_j, i));
	} else {
		argv[k++] = "/bin/sh";
		argv[k++] = "-c";
		argv[k++] = (char *)json_string_value(json_object_get(c->args, "command"));
	}
	struct run_ctx ctx;
	if (run_prepare(cfg, environ, true, &ctx, &e) < 0) {
		err_print(&e);
		_exit(125);
	}
	int code = run_exec(cfg, &ctx, argv, NULL);
	run_release(&ctx);
	fflush(NULL);
	_exit(code);
}

/* A result the agent reads as the tool's error (isError): the call did not run. */
static void tool_error(struct server *sv, json_t *id, const char *text)
{
	mcp_reply(sv, id,
		  json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
			    "isError", 1));
}

static void put_stream(FILE *f, const char *title, const char *buf, size_t kept, uint64_t total)
{
	if (!total)
		return;
	fprintf(f, "--- %s ---\n%.*s%s", title, (int)kept, buf,
		kept && buf[kept - 1] != '\n' ? "\n" : "");
	if (total > kept)
		fprintf(f, "[stepbox: %s truncated: the first %zu of %" PRIu64 " bytes]\n", title,
			kept, total);
}

/*
 * One denial, worded for an agent as --explain words it (the report's
 * "advice"); NULL for a failure that was not the sandbox's (a file's own
 * permissions: the command's stderr says it) or did not matter (a miss of a
 * name that then ran from another folder).
 */
static char *denial_text(json_t *d)
{
	if (!json_is_true(json_object_get(d, "sandbox")) ||
	    json_is_true(json_object_get(d, "moot")))
		return NULL;
	const char *op = json_string_value(json_object_get(d, "operation"));
	const char *path = json_string_value(json_object_get(d, "path"));
	const char *host = json_string_value(json_object_get(d, "host"));
	const char *sock = json_string_value(json_object_get(d, "socket"));
	const char *error = json_string_value(json_object_get(d, "error"));
	const char *advice = json_string_value(json_object_get(d, "advice"));
	char *s = NULL;
	if (asprintf(&s, "the sandbox denied %s %s%s%s%s%s%s", op ? op : "access",
		     path   ? path
		     : host ? host
		     : sock ? sock
			    : "?",
		     error ? " (" : "", error ? error : "", error ? ")" : "", advice ? ": " : "",
		     advice ? advice : "") < 0)
		return NULL;
	return s;
}

/* The run tool's answer: the exit status, the streams, the denials. */
void mcp_run_finish(struct server *sv, struct call *c)
{
	int code = WIFEXITED(c->status)     ? WEXITSTATUS(c->status)
		   : WIFSIGNALED(c->status) ? 128 + WTERMSIG(c->status)
					    : 125;
	json_t *rep = json_load_file(c->report, 0, NULL);
	bool started = rep && json_is_true(json_object_get(rep, "started"));
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (code == 125 && !started) {
		/* the sandbox could not be made: stepbox's message is the tool's error */
		if (f) {
			fprintf(f, "stepbox could not run the command (exit 125):\n%.*s",
				(int)c->kept[1], c->buf[1] ? c->buf[1] : "");
			fclose(f);
		}
		tool_error(sv, c->id, text ? text : "stepbox failed");
		free(text);
		json_decref(rep);
		return;
	}
	double duration = clock_now_s() - c->start;
	bool timed_out = json_is_true(json_object_get(rep, "timed_out"));
	const char *reached = json_string_value(json_object_get(rep, "limit_reached"));
	json_t *denials = json_array();
	size_t i;
	json_t *d;
	/* the likely cause first, as --explain lists it */
	json_array_foreach(json_object_get(rep, "denials"), i, d)
	{
		char *s = denial_text(d);
		bool cause = json_is_true(json_object_get(d, "cause"));
		if (s && cause)
			json_array_insert_new(denials, 0, json_string(s));
		else if (s)
			json_array_append_new(denials, json_string(s));
		free(s);
	}
	if (f) {
		fprintf(f, "exit %d%s after %.1f s%s%s\n", code,
			timed_out ? " (timed out: the whole process tree was killed)" : "",
			duration, reached ? "; it reached its limit of " : "",
			reached ? reached : "");
		put_stream(f, "stdout", c->buf[0], c->kept[0], c->total[0]);
		put_stream(f, "stderr", c->buf[1], c->kept[1], c->total[1]);
		json_array_foreach(denials, i, d)
		{
			fprintf(f, "%s%s\n", i ? "" : "--- denied by the sandbox ---\n",
				json_string_value(d));
		}
		fclose(f);
	}
	json_t *sc = json_pack(
		"{s:i, s:O?, s:b, s:f, s:s%, s:s%, s:I, s:I, s:b, s:b, s:o, s:s?}", "exit_code",
		code, "signal", json_object_get(rep, "signal"), "timed_out", timed_out,
		"duration_s", duration, "stdout", c->buf[0] ? c->buf[0] : "", c->kept[0], "stderr",
		c->buf[1] ? c->buf[1] : "", c->kept[1], "stdout_bytes", (json_int_t)c->total[0],
		"stderr_bytes", (json_int_t)c->total[1], "stdout_truncated",
		c->total[0] > c->kept[0], "stderr_truncated", c->total[1] > c->kept[1], "denials",
		denials, "limit_reached", reached);
	mcp_reply(sv, c->id,
		  json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
			    text ? text : "", "structuredContent", sc ? sc : json_object(),
			    "isError", 0));
	free(text);
	json_decref(rep);
}

/*
 * The run tool's arguments, checked before anything runs: false when
 * answered, as a JSON-RPC error (malformed) or as the tool's error (a cwd or
 * a variable the agent can fix); *cwd gets the folder to start in.
 */
bool mcp_run_check(struct server *sv, json_t *id, json_t *args, char **cwd)
{
	char why[PATH_MAX + 128];
	if (!check_args(sv, id, args))
		return false;
	if (refused(sv, args, cwd, why, sizeof(why))) {
		tool_error(sv, id, why);
		return false;
	}
	return true;
}
