/* mcp: see mcp.h. */
#include "mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "env.h"
#include "err.h"
#include "grants.h"
#include "jsonmem.h"
#include "guide.h"
#include "path.h"
#include "report.h"
#include "run.h"
#include "tracer.h"

extern char **environ;

/* A message longer than this is refused (parse error) and skipped. */
#define MCP_LINE_MAX (4u << 20)
/*
 * What jansson may hold for the calls waiting and the message being parsed
 * (jsonmem), and the reserve above it for the answers: with the input
 * buffer, the calls' output (max_parallel x 2 x max_output) and the code,
 * the server's own memory stays under about 80 MiB whatever clients send.
 */
#define MCP_JSON_BUDGET (48u << 20)
#define MCP_JSON_RESERVE (4u << 20)
/* One argument of a command line: the kernel's own (MAX_ARG_STRLEN) */
#define MCP_ARG_MAX (128u << 10)
/* argv entries and env variables of a call, and the bytes of each list */
#define MCP_LIST_MAX 4096
#define MCP_LIST_BYTES (1u << 20)
/* Calls waiting their turn beyond this are refused: the server's memory stays bounded. */
#define MCP_WAITING_MAX 256
#define GUIDE_URI "stepbox://guide"

/* What the official SDKs speak, newest first: the client's own when we know it. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
				       "2024-10-07"};

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
	json_t *id;    /* the request's id */
	json_t *token; /* its progressToken, or NULL */
	json_t *args;  /* the tool's arguments */
	char *cwd;     /* where the command starts, inside the workdir, or NULL */
	pid_t pid;     /* the worker; 0 while the call waits its turn */
	int pidfd;
	int fd[2];     /* its stdout and stderr, read ends; -1 at their end */
	char *buf[2];  /* what is kept of each */
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

/* SIGTERM, SIGINT or SIGHUP to the server: it ends as when stdin ends */
static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}


/* ---- messages out: one a line on stdout, nothing else ever goes there ---- */

static void send_msg(struct server *sv, json_t *msg)
{
	char *s = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	json_decref(msg);
	if (!s || sv->gone) {
		jsonmem_free(s);
		return;
	}
	size_t len = strlen(s);
	s[len++] = '\n'; /* json_dumps leaves room: the NUL's */
	for (size_t off = 0; off < len;) {
		ssize_t w = write(STDOUT_FILENO, s + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			sv->gone = true; /* the client is gone: nothing more to say */
			break;
		}
		off += (size_t)w;
	}
	jsonmem_free(s);
}

static void reply(struct server *sv, json_t *id, json_t *result)
{
	send_msg(sv, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

__attribute__((format(printf, 4, 5))) static void reply_error(struct server *sv, json_t *id,
							       int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	send_msg(sv, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			       id ? id : json_null(), "error", "code", code, "message", msg));
}

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

/* ---- the run tool ---- */

static json_t *run_tool(const struct server *sv)
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
		"{s:s, s:s, s:s?, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:{s:s}, s:i, s:s}, s:{s:s, s:s},"
		" s:{s:s, s:i, s:s}, s:{s:s, s:{s:s}, s:s}}, s:b}}",
		"name", "run", "title", "Run a command in the sandbox", "description", desc,
		"inputSchema", "type", "object", "properties",
		"command", "type", "string", "description", "a shell command line, run as /bin/sh -c",
		"argv", "type", "array", "items", "type", "string", "minItems", 1, "description",
		"the command and its arguments, run as they are (instead of command)",
		"cwd", "type", "string", "description",
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
	bool good = json_is_array(v) && json_array_size(v) > 0 && json_array_size(v) <= MCP_LIST_MAX;
	size_t bytes = 0;
	for (size_t i = 0; good && i < json_array_size(v); i++) {
		json_t *a = json_array_get(v, i);
		good = json_is_string(a) && json_string_length(a) < MCP_ARG_MAX;
		bytes += good ? json_string_length(a) + 1 : 0;
	}
	if (!good || bytes > MCP_LIST_BYTES) {
		reply_error(sv, id, RPC_INVALID_PARAMS,
			    "run: argv must be a non-empty array of at most %d strings, "
			    "each under %u KiB, %u KiB in all", MCP_LIST_MAX,
			    MCP_ARG_MAX >> 10, MCP_LIST_BYTES >> 10);
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
		reply_error(sv, id, RPC_INVALID_PARAMS,
			    "run: env must be an object of at most %d variables", MCP_LIST_MAX);
		return false;
	}
	json_object_foreach(v, name, val) {
		if (!json_is_string(val) || !policy_env_name_ok(name) ||
		    json_string_length(val) >= MCP_ARG_MAX) {
			reply_error(sv, id, RPC_INVALID_PARAMS,
				    "run: env '%.100s' must be a variable name with a "
				    "string value under %u KiB", name, MCP_ARG_MAX >> 10);
			return false;
		}
		bytes += strlen(name) + json_string_length(val) + 2;
	}
	if (bytes > MCP_LIST_BYTES) {
		reply_error(sv, id, RPC_INVALID_PARAMS, "run: env holds %zu bytes: at most %u KiB",
			    bytes, MCP_LIST_BYTES >> 10);
		return false;
	}
	return true;
}

/* The arguments, checked before anything runs: a JSON-RPC error when they are wrong. */
static bool check_args(struct server *sv, json_t *id, json_t *args)
{
	if (!json_is_object(args)) {
		reply_error(sv, id, RPC_INVALID_PARAMS, "run: arguments must be an object");
		return false;
	}
	const char *key;
	json_t *v;
	json_object_foreach(args, key, v) {
		if (strcmp(key, "command") == 0) {
			if (!json_is_string(v) || !json_string_length(v) ||
			    json_string_length(v) >= MCP_ARG_MAX) {
				reply_error(sv, id, RPC_INVALID_PARAMS,
					    "run: command must be a non-empty string under %u KiB (the "
					    "kernel's bound on one argument)", MCP_ARG_MAX >> 10);
				return false;
			}
		} else if (strcmp(key, "argv") == 0) {
			if (!check_argv(sv, id, v))
				return false;
		} else if (strcmp(key, "cwd") == 0 &&
			   (!json_is_string(v) || json_string_length(v) >= PATH_MAX)) {
			reply_error(sv, id, RPC_INVALID_PARAMS, "run: cwd must be a path (a string)");
			return false;
		} else if (strcmp(key, "timeout_s") == 0 &&
			   (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > POLICY_MAX_TIMEOUT)) {
			reply_error(sv, id, RPC_INVALID_PARAMS,
				    "run: timeout_s must be a whole number of seconds from 1 to %ld",
				    POLICY_MAX_TIMEOUT);
			return false;
		} else if (strcmp(key, "env") == 0) {
			if (!check_env(sv, id, v))
				return false;
		} else if (strcmp(key, "cwd") != 0 && strcmp(key, "timeout_s") != 0) {
			reply_error(sv, id, RPC_INVALID_PARAMS, "run: unknown argument '%.100s'", key);
			return false;
		}
	}
	if (!json_object_get(args, "command") == !json_object_get(args, "argv")) {
		reply_error(sv, id, RPC_INVALID_PARAMS, "run: give command or argv (one of them)");
		return false;
	}
	return true;
}

/*
 * What a call may not do that its arguments ask, said as the tool's error
 * (the agent can fix it): a cwd outside the workdir, a variable stepbox
 * would drop. NULL when it may run; *cwd gets the folder to start in.
 */
static const char *refused(const struct server *sv, json_t *args, char **cwd, char *why,
			   size_t cap)
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
	json_object_foreach(json_object_get(args, "env"), name, val) {
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

/* ---- a call's worker: the step, as `stepbox run` runs it ---- */

static __attribute__((noreturn)) void worker(struct server *sv, struct call *c, int out, int err,
					     pid_t server)
{
	/* the server killed outright: the step ends too (SIGTERM: no grace, cleaned up) */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != server)
		_exit(125);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
	    dup2(err, STDERR_FILENO) < 0)
		_exit(125);
	/* the protocol's stream and the other calls' pipes are not the step's */
	syscall(SYS_close_range, 3U, ~0U, 0U);
	jsonmem_cap(0); /* the step's own report is not the server's to bound */
	c->tool->start(sv, c);
	_exit(125);
}

/* The run tool's worker: the command, as `stepbox run` runs it. */
static __attribute__((noreturn)) void run_start(struct server *sv, struct call *c)
{
	struct stepbox_config *cfg = sv->cfg;
	struct stepbox_err e = {0};
	cfg->report_file = c->report;
	cfg->explain = sv->explain;
	cfg->grace_s = 0; /* a cancellation ends the tree at once */
	json_t *t = json_object_get(c->args, "timeout_s");
	if (t && (!cfg->timeout_s || json_integer_value(t) < cfg->timeout_s))
		cfg->timeout_s = (long)json_integer_value(t);
	const char *name;
	json_t *val;
	json_object_foreach(json_object_get(c->args, "env"), name, val) {
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

static int start(struct server *sv, struct call *c)
{
	int out[2], err[2];
	snprintf(c->report, sizeof(c->report), "%s/call-%u.json", sv->dir, ++sv->seq);
	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = errno;
		close(out[0]);
		close(out[1]);
		return -e;
	}
	fflush(NULL);
	pid_t server = getpid();
	pid_t pid = fork();
	if (pid == 0)
		worker(sv, c, out[1], err[1], server);
	int e = errno;
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		close(out[0]);
		close(err[0]);
		return -e;
	}
	c->pid = pid;
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	c->fd[0] = out[0];
	c->fd[1] = err[0];
	for (int i = 0; i < 2; i++)
		fcntl(c->fd[i], F_SETFL, O_NONBLOCK);
	c->start = clock_now_s();
	c->next_progress = c->start + 1;
	sv->running++;
	return 0;
}

static void cancel(struct call *c)
{
	if (c->cancelled)
		return;
	c->cancelled = true;
	if (c->pid > 0 && !c->exited) {
		kill(c->pid, SIGTERM); /* stepbox ends the tree (no grace) and cleans up */
		c->kill_at = clock_now_s() + 0.8;
	}
}

/* ---- a call's result ---- */

/* A result the agent reads as the tool's error (isError): the call did not run. */
static void tool_error(struct server *sv, json_t *id, const char *text)
{
	reply(sv, id, json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
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

/* One denial, worded for an agent. */
static char *denial_text(json_t *d)
{
	const char *op = json_string_value(json_object_get(d, "operation"));
	const char *path = json_string_value(json_object_get(d, "path"));
	const char *error = json_string_value(json_object_get(d, "error"));
	const char *key = NULL;
	json_t *val = NULL;
	char how[PATH_MAX + 64] = "";
	json_object_foreach(json_object_get(d, "grant"), key, val) {
		if (json_is_string(val))
			snprintf(how, sizeof(how), "; a policy would need %s: %s", key,
				 json_string_value(val));
		break;
	}
	char *s = NULL;
	if (asprintf(&s, "the sandbox denied %s %s%s%s%s%s", op ? op : "access", path ? path : "?",
		     error ? " (" : "", error ? error : "", error ? ")" : "", how) < 0)
		return NULL;
	return s;
}

/* The run tool's answer: the exit status, the streams, the denials. */
static void run_finish(struct server *sv, struct call *c)
{
	int code = WIFEXITED(c->status)	  ? WEXITSTATUS(c->status)
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
	json_array_foreach(json_object_get(rep, "denials"), i, d) {
		char *s = denial_text(d);
		if (s)
			json_array_append_new(denials, json_string(s));
		free(s);
	}
	if (f) {
		fprintf(f, "exit %d%s after %.1f s%s%s\n", code,
			timed_out ? " (timed out: the whole process tree was killed)" : "", duration,
			reached ? "; it reached its limit of " : "", reached ? reached : "");
		put_stream(f, "stdout", c->buf[0], c->kept[0], c->total[0]);
		put_stream(f, "stderr", c->buf[1], c->kept[1], c->total[1]);
		json_array_foreach(denials, i, d) {
			fprintf(f, "%s%s\n", i ? "" : "--- denied by the sandbox ---\n",
				json_string_value(d));
		}
		fclose(f);
	}
	json_t *sc = json_pack("{s:i, s:O?, s:b, s:f, s:s%, s:s%, s:I, s:I, s:b, s:b, s:o, s:s?}",
			       "exit_code", code, "signal", json_object_get(rep, "signal"),
			       "timed_out", timed_out, "duration_s", duration, "stdout",
			       c->buf[0] ? c->buf[0] : "", c->kept[0], "stderr",
			       c->buf[1] ? c->buf[1] : "", c->kept[1], "stdout_bytes",
			       (json_int_t)c->total[0], "stderr_bytes", (json_int_t)c->total[1],
			       "stdout_truncated", c->total[0] > c->kept[0], "stderr_truncated",
			       c->total[1] > c->kept[1], "denials", denials, "limit_reached", reached);
	reply(sv, c->id, json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
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
static bool run_check(struct server *sv, json_t *id, json_t *args, char **cwd)
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

/* The tools this server offers (struct tool says what each row holds). */
static const struct tool tools[] = {
	{"run", run_tool, run_check, run_start, run_finish},
};

static void finish(struct server *sv, struct call *c)
{
	if (c->cancelled) /* the client gave it up: no answer (MCP's cancellation) */
		return;
	c->tool->finish(sv, c);
}

static void call_free(struct call *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->fd[i] >= 0)
			close(c->fd[i]);
		free(c->buf[i]);
	}
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->report[0])
		unlink(c->report);
	json_decref(c->id);
	json_decref(c->token);
	json_decref(c->args);
	free(c->cwd);
	free(c);
}

/* ---- requests ---- */

static void tools_call(struct server *sv, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tool *tool = NULL;
	char names[256] = "";
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (name && strcmp(name, tools[i].name) == 0)
			tool = &tools[i];
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", tools[i].name);
	}
	if (!tool) {
		reply_error(sv, id, RPC_INVALID_PARAMS, "unknown tool '%.100s' (stepbox has: %s)",
			    name ? name : "", names);
		return;
	}
	json_t *args = json_object_get(params, "arguments");
	int waiting = 0;
	for (struct call *o = sv->calls; o; o = o->next) {
		if (json_equal(o->id, id)) {
			reply_error(sv, id, RPC_INVALID_REQUEST, "a call with this id is running");
			return;
		}
		waiting += !o->pid;
	}
	if (waiting >= MCP_WAITING_MAX) {
		reply_error(sv, id, RPC_INTERNAL, "%d calls are already waiting their turn (at most "
			    "%d run at once): try again when some have ended", waiting,
			    sv->o.max_parallel);
		return;
	}
	char *cwd = NULL;
	if (!tool->check(sv, id, args, &cwd))
		return;
	struct call *c = calloc(1, sizeof(*c));
	if (!c) {
		free(cwd);
		reply_error(sv, id, RPC_INTERNAL, "out of memory");
		return;
	}
	c->tool = tool;
	c->id = json_incref(id);
	c->args = json_incref(args);
	c->cwd = cwd;
	c->token = json_incref(json_object_get(json_object_get(params, "_meta"), "progressToken"));
	c->fd[0] = c->fd[1] = c->pidfd = -1;
	/* in the order they came */
	struct call **tail = &sv->calls;
	while (*tail)
		tail = &(*tail)->next;
	*tail = c;
}

static json_t *tools_list(const struct server *sv)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < sizeof(tools) / sizeof(tools[0]); i++)
		json_array_append_new(list, tools[i].schema(sv));
	return json_pack("{s:o}", "tools", list);
}

static void initialize(struct server *sv, json_t *id, json_t *params)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	if (!asked) {
		reply_error(sv, id, RPC_INVALID_PARAMS, "initialize: protocolVersion is missing");
		return;
	}
	const char *v = versions[0];
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(asked, versions[i]) == 0)
			v = versions[i];
	sv->initialized = true;
	reply(sv, id,
	      json_pack("{s:s, s:{s:{s:b}, s:{}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", v,
			"capabilities", "tools", "listChanged", 0, "resources", "logging",
			"serverInfo", "name", "stepbox", "title", "stepbox sandbox", "version",
			STEPBOX_VERSION, "instructions",
			"Every command runs in a fresh fail-closed sandbox; read the guide resource "
			"(stepbox://guide) or the run tool's description for what it may touch."));
}

/* One well-formed request or notification, by its method. */
static void dispatch(struct server *sv, json_t *id, const char *method, json_t *params)
{
	bool request = id != NULL;
	if (strcmp(method, "notifications/cancelled") == 0) {
		json_t *rid = json_object_get(params, "requestId");
		for (struct call *c = sv->calls; rid && c; c = c->next)
			if (json_equal(c->id, rid))
				cancel(c);
	} else if (!request) {
		/* notifications/initialized and the rest need no answer */
	} else if (strcmp(method, "initialize") == 0) {
		initialize(sv, id, params);
	} else if (strcmp(method, "ping") == 0) {
		reply(sv, id, json_object());
	} else if (!sv->initialized) {
		reply_error(sv, id, RPC_INVALID_REQUEST, "not initialized: send initialize first");
	} else if (strcmp(method, "tools/list") == 0) {
		reply(sv, id, tools_list(sv));
	} else if (strcmp(method, "tools/call") == 0) {
		if (!json_is_object(params))
			reply_error(sv, id, RPC_INVALID_PARAMS, "tools/call: params must be an object");
		else
			tools_call(sv, id, params);
	} else if (strcmp(method, "resources/list") == 0) {
		reply(sv, id,
		      json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "resources", "uri", GUIDE_URI, "name",
				"guide", "description",
				"what a step may do here: where it may write, where installs go, the "
				"network, the limits",
				"mimeType", "text/markdown"));
	} else if (strcmp(method, "resources/templates/list") == 0) {
		reply(sv, id, json_pack("{s:[]}", "resourceTemplates"));
	} else if (strcmp(method, "resources/read") == 0) {
		const char *uri = json_string_value(json_object_get(params, "uri"));
		if (!uri || strcmp(uri, GUIDE_URI) != 0)
			reply_error(sv, id, MCP_NO_RESOURCE, "resource not found: '%.200s'",
				    uri ? uri : "");
		else
			reply(sv, id, json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", GUIDE_URI,
						"mimeType", "text/markdown", "text", sv->guide));
	} else if (strcmp(method, "logging/setLevel") == 0) {
		reply(sv, id, json_object()); /* stepbox says little; it goes to stderr */
	} else {
		reply_error(sv, id, RPC_NO_METHOD, "method not found: '%.100s'", method);
	}
}

static void handle(struct server *sv, const char *line, size_t len)
{
	json_error_t je;
	jsonmem_cap(MCP_JSON_BUDGET);
	json_t *m = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	jsonmem_cap(MCP_JSON_BUDGET + MCP_JSON_RESERVE); /* the answers' reserve */
	if (!m && jsonmem_refused()) {
		int waiting = 0;
		for (struct call *c = sv->calls; c; c = c->next)
			waiting += !c->pid;
		reply_error(sv, NULL, RPC_INTERNAL,
			    "a message of %zu bytes would take the server past its memory cap "
			    "(%u MiB for messages and the %d calls waiting): send less at once, "
			    "or wait for calls to end", len, MCP_JSON_BUDGET >> 20, waiting);
		return;
	}
	if (!m) {
		reply_error(sv, NULL, RPC_PARSE, "parse error: %s (column %d)", je.text, je.column);
		return;
	}
	json_t *id = json_object_get(m, "id");
	json_t *method_j = json_object_get(m, "method");
	const char *method = json_string_value(method_j);
	json_t *params = json_object_get(m, "params");
	if (!json_is_object(m) || (id && !json_is_string(id) && !json_is_integer(id)) ||
	    (method_j && !method) || (!method && !json_object_get(m, "result") &&
				      !json_object_get(m, "error")) ||
	    (params && !json_is_object(params) && !json_is_array(params))) {
		reply_error(sv, json_is_object(m) && (json_is_string(id) || json_is_integer(id)) ? id
												  : NULL,
			    RPC_INVALID_REQUEST, json_is_array(m) ? "batches are not supported"
								 : "not a JSON-RPC 2.0 request");
		json_decref(m);
		return;
	}
	if (!method) { /* a response to nothing we asked */
		json_decref(m);
		return;
	}
	dispatch(sv, id, method, params);
	json_decref(m);
}

/* Complete lines of what stdin gave; an over-long one is refused and skipped. */
static void take_input(struct server *sv)
{
	size_t from = 0;
	for (;;) {
		char *nl = memchr(sv->in + from, '\n', sv->inlen - from);
		if (!nl)
			break;
		size_t len = (size_t)(nl - (sv->in + from));
		if (sv->discarding)
			sv->discarding = false;
		else if (len > 0 && !(len == 1 && sv->in[from] == '\r'))
			handle(sv, sv->in + from, len);
		from += len + 1;
	}
	memmove(sv->in, sv->in + from, sv->inlen - from);
	sv->inlen -= from;
	if (sv->inlen > MCP_LINE_MAX) {
		reply_error(sv, NULL, RPC_PARSE, "a message longer than %u bytes", MCP_LINE_MAX);
		sv->inlen = 0;
		sv->discarding = true;
	}
}

static void read_input(struct server *sv)
{
	if (sv->incap - sv->inlen < 65536) {
		size_t cap = sv->incap ? sv->incap * 2 : 131072;
		char *more = realloc(sv->in, cap);
		if (!more) {
			sv->eof = true;
			return;
		}
		sv->in = more;
		sv->incap = cap;
	}
	ssize_t n = read(STDIN_FILENO, sv->in + sv->inlen, sv->incap - sv->inlen);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		sv->eof = true;
		return;
	}
	if (sv->discarding) { /* skip to the end of the over-long message */
		char *nl = memchr(sv->in + sv->inlen, '\n', (size_t)n);
		if (!nl)
			return;
		size_t rest = (size_t)n - (size_t)(nl + 1 - (sv->in + sv->inlen));
		memmove(sv->in, nl + 1, rest);
		sv->inlen = rest;
		sv->discarding = false;
	} else {
		sv->inlen += (size_t)n;
	}
	take_input(sv);
}

static void read_output(struct server *sv, struct call *c, int i)
{
	char buf[65536];
	ssize_t n = read(c->fd[i], buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(c->fd[i]);
		c->fd[i] = -1;
		return;
	}
	c->total[i] += (uint64_t)n;
	size_t room = sv->o.max_output - c->kept[i];
	size_t take = (size_t)n < room ? (size_t)n : room;
	if (take && !c->buf[i] && !(c->buf[i] = malloc(sv->o.max_output)))
		take = 0;
	if (take)
		memcpy(c->buf[i] + c->kept[i], buf, take);
	c->kept[i] += take;
}

static void progress(struct server *sv, struct call *c, double now)
{
	if (!c->token || c->cancelled || now < c->next_progress)
		return;
	char msg[128];
	double elapsed = now - c->start;
	snprintf(msg, sizeof(msg), "running for %.0f s, %" PRIu64 " bytes of output", elapsed,
		 c->total[0] + c->total[1]);
	send_msg(sv, json_pack("{s:s, s:s, s:{s:O, s:f, s:s}}", "jsonrpc", "2.0", "method",
			       "notifications/progress", "params", "progressToken", c->token,
			       "progress", elapsed, "message", msg));
	c->next_progress = now + 1;
}

/* Drop what is done: answered, or cancelled before it started. */
static void drop_done(struct server *sv)
{
	for (struct call **pc = &sv->calls; *pc;) {
		struct call *c = *pc;
		bool done = c->pid ? c->exited && c->fd[0] < 0 && c->fd[1] < 0
				   : c->cancelled || c->exited;
		if (done) {
			if (c->pid) {
				finish(sv, c);
				sv->running--;
			}
			*pc = c->next;
			call_free(c);
		} else {
			pc = &c->next;
		}
	}
}

/* Start the waiting calls, in their order, as far as there is room; true: one failed. */
static bool start_waiting(struct server *sv)
{
	bool again = false;
	for (struct call *c = sv->calls; c && sv->running < sv->o.max_parallel; c = c->next) {
		if (c->pid || c->cancelled || c->exited)
			continue;
		int r = start(sv, c);
		if (r < 0) {
			reply_error(sv, c->id, RPC_INTERNAL, "cannot start the step: %s",
				    strerror(-r));
			c->exited = c->cancelled = again = true; /* answered: dropped next */
		}
	}
	return again;
}

/* What poll found on the calls' fds (pf[1...], three a running call). */
static void after_poll(struct server *sv, const struct pollfd *pf)
{
	size_t k = 1;
	double now = clock_now_s();
	for (struct call *c = sv->calls; c; c = c->next) {
		if (!c->pid)
			continue;
		for (int i = 0; i < 2; i++, k++)
			if (pf[k].fd >= 0 && pf[k].revents)
				read_output(sv, c, i);
		bool ended = pf[k].fd >= 0 && pf[k].revents;
		k++;
		if (!c->exited && (ended || c->pidfd < 0) &&
		    waitpid(c->pid, &c->status, WNOHANG) == c->pid)
			c->exited = true;
		if (c->kill_at && !c->exited && now >= c->kill_at) {
			kill(c->pid, SIGKILL); /* its init dies with it, and the tree */
			c->kill_at = 0;
		}
		progress(sv, c, now);
	}
}

static int serve(struct stepbox_config *cfg, const char *guide, const char *workdir,
		 const char *reports, const struct mcp_opts *o)
{
	struct server sv = {.cfg = cfg, .guide = guide, .workdir = workdir, .o = *o, .explain = true};
	/* where nothing may be traced (Yama's scope 3, a container's profile refusing
	 * ptrace), the calls run without their denials */
	int t = tracer_traceable();
	if (t < 0) {
		sv.explain = cfg->explain;
		fprintf(stderr, "stepbox: mcp: this host refuses ptrace (%s: Yama's ptrace_scope "
				"3, or a seccomp profile): results will not list what the sandbox "
				"denied\n", strerror(-t));
	}
	snprintf(sv.dir, sizeof(sv.dir), "%s", reports);
	jsonmem_cap(MCP_JSON_BUDGET + MCP_JSON_RESERVE);
	signal(SIGPIPE, SIG_IGN); /* a client gone: EPIPE, and the steps are ended */
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct pollfd *pf = NULL;
	size_t pfcap = 0;
	for (;;) {
		/* the client gone or done: every step ends, nothing is left behind */
		if (stop_asked)
			sv.eof = true;
		if (sv.eof || sv.gone)
			for (struct call *c = sv.calls; c; c = c->next)
				cancel(c);
		drop_done(&sv);
		if (start_waiting(&sv)) /* one failed, answered: dropped next */
			continue;
		if ((sv.eof || sv.gone) && !sv.calls)
			break;
		size_t need = 1 + 3 * (size_t)sv.running;
		if (need > pfcap) {
			struct pollfd *more = realloc(pf, need * sizeof(*pf));
			if (!more)
				break;
			pf = more;
			pfcap = need;
		}
		size_t n = 0;
		pf[n++] = (struct pollfd){sv.eof || sv.gone ? -1 : STDIN_FILENO, POLLIN, 0};
		double now = clock_now_s(), wake = 0;
		for (struct call *c = sv.calls; c; c = c->next) {
			if (!c->pid)
				continue;
			pf[n++] = (struct pollfd){c->fd[0], POLLIN, 0};
			pf[n++] = (struct pollfd){c->fd[1], POLLIN, 0};
			pf[n++] = (struct pollfd){c->exited ? -1 : c->pidfd, POLLIN, 0};
			double w = c->kill_at ? c->kill_at : c->token ? c->next_progress : 0;
			if (!c->exited && c->pidfd < 0)
				w = now + 0.05; /* no pidfd: look again soon */
			if (w && (!wake || w < wake))
				wake = w;
		}
		int timeout = wake ? (int)((wake - now) * 1000) + 1 : -1;
		if (wake && timeout < 0)
			timeout = 0;
		if (poll(pf, n, timeout) < 0 && errno != EINTR)
			break;
		if (pf[0].revents)
			read_input(&sv);
		after_poll(&sv, pf);
	}
	free(pf);
	free(sv.in);
	while (sv.calls) {
		struct call *c = sv.calls;
		sv.calls = c->next;
		if (c->pid && !c->exited)
			waitpid(c->pid, NULL, 0);
		call_free(c);
	}
	rmdir(sv.dir);
	return 0;
}

/*
 * The calls' reports: a 0700 folder in TMPDIR, else /tmp, that no write
 * grant covers (a step must not read or replace what the server reads back).
 */
static int reports_dir(const struct grants *g, char *out, size_t cap, struct stepbox_err *err)
{
	const char *tmp = getenv("TMPDIR");
	const char *bases[] = {tmp && *tmp == '/' ? tmp : "/tmp", "/tmp"};
	out[0] = '\0';
	for (size_t b = 0; b < 2; b++) {
		char real[PATH_MAX];
		if (!realpath(bases[b], real))
			continue;
		bool granted = false;
		for (size_t i = 0; i < g->n && !granted; i++)
			granted = (g->v[i].access & GRANT_WRITE) && !(g->v[i].access & GRANT_PRIVATE) &&
				  path_beneath(real, g->v[i].path);
		if (granted || (size_t)snprintf(out, cap, "%s/stepbox-mcp.XXXXXX", real) >= cap)
			continue;
		if (mkdtemp(out))
			return 0;
	}
	out[0] = '\0';
	err_set(err, ERR_UNAVAILABLE, 0, "mcp: no folder for the calls' reports outside the "
		"step's write grants ('%s', '/tmp')", bases[0]);
	err_hint(err, "point TMPDIR at a folder the policy does not grant for writing");
	return -EPERM;
}

int mcp_main(struct stepbox_config *cfg, const struct mcp_opts *o)
{
	struct run_ctx ctx;
	struct stepbox_err err = {0};
	/* the policy as a run would take it, checked once: a bad one never starts serving */
	if (run_prepare(cfg, environ, false, &ctx, &err) < 0) {
		err_print(&err);
		return 125;
	}
	char *guide = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&guide, &len);
	if (f) {
		guide_write(f, cfg, &ctx.grants, &ctx.env, &ctx.limits);
		fclose(f);
	}
	/* the workdir, canonical: a call's cwd must lie beneath it */
	char *workdir = ctx.grants.workdir ? strdup(ctx.grants.workdir) : NULL;
	char reports[PATH_MAX - 64];
	int r = reports_dir(&ctx.grants, reports, sizeof(reports), &err);
	run_release(&ctx);
	if (r == 0 && (!guide || !workdir))
		r = err_set(&err, ERR_UNAVAILABLE, ENOMEM, "mcp");
	if (r < 0) {
		err_print(&err);
		free(guide);
		free(workdir);
		if (reports[0])
			rmdir(reports);
		return 125;
	}
	int code = serve(cfg, guide, workdir, reports, o);
	free(guide);
	free(workdir);
	return code;
}
