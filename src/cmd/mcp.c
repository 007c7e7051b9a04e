/* mcp: see mcp.h. */
#include "mcp.h"
#include "mcp_int.h"

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
/* Calls waiting their turn beyond this are refused: the server's memory stays bounded. */
#define MCP_WAITING_MAX 256
#define GUIDE_URI "stepbox://guide"

/* What the official SDKs speak, newest first: the client's own when we know it. */
static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
				       "2024-10-07"};

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

void mcp_reply(struct server *sv, json_t *id, json_t *result)
{
	send_msg(sv, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

void mcp_reply_error(struct server *sv, json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	send_msg(sv, json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			       id ? id : json_null(), "error", "code", code, "message", msg));
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

/* The tools this server offers (struct tool says what each row holds). */
static const struct tool tools[] = {
	{"run", mcp_run_tool, mcp_run_check, mcp_run_start, mcp_run_finish},
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
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
				"unknown tool '%.100s' (stepbox has: %s)", name ? name : "", names);
		return;
	}
	json_t *args = json_object_get(params, "arguments");
	int waiting = 0;
	for (struct call *o = sv->calls; o; o = o->next) {
		if (json_equal(o->id, id)) {
			mcp_reply_error(sv, id, RPC_INVALID_REQUEST,
					"a call with this id is running");
			return;
		}
		waiting += !o->pid;
	}
	if (waiting >= MCP_WAITING_MAX) {
		mcp_reply_error(sv, id, RPC_INTERNAL,
				"%d calls are already waiting their turn (at most "
				"%d run at once): try again when some have ended",
				waiting, sv->o.max_parallel);
		return;
	}
	char *cwd = NULL;
	if (!tool->check(sv, id, args, &cwd))
		return;
	struct call *c = calloc(1, sizeof(*c));
	if (!c) {
		free(cwd);
		mcp_reply_error(sv, id, RPC_INTERNAL, "out of memory");
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
		mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
				"initialize: protocolVersion is missing");
		return;
	}
	const char *v = versions[0];
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(asked, versions[i]) == 0)
			v = versions[i];
	sv->initialized = true;
	mcp_reply(
		sv, id,
		json_pack(
			"{s:s, s:{s:{s:b}, s:{}, s:{}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
			v, "capabilities", "tools", "listChanged", 0, "resources", "logging",
			"serverInfo", "name", "stepbox", "title", "stepbox sandbox", "version",
			STEPBOX_VERSION, "instructions",
			"Every command runs in a fresh fail-closed sandbox; read the guide "
			"resource "
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
		mcp_reply(sv, id, json_object());
	} else if (!sv->initialized) {
		mcp_reply_error(sv, id, RPC_INVALID_REQUEST,
				"not initialized: send initialize first");
	} else if (strcmp(method, "tools/list") == 0) {
		mcp_reply(sv, id, tools_list(sv));
	} else if (strcmp(method, "tools/call") == 0) {
		if (!json_is_object(params))
			mcp_reply_error(sv, id, RPC_INVALID_PARAMS,
					"tools/call: params must be an object");
		else
			tools_call(sv, id, params);
	} else if (strcmp(method, "resources/list") == 0) {
		mcp_reply(sv, id,
			  json_pack("{s:[{s:s, s:s, s:s, s:s}]}", "resources", "uri", GUIDE_URI,
				    "name", "guide", "description",
				    "what a step may do here: where it may write, where installs "
				    "go, the "
				    "network, the limits",
				    "mimeType", "text/markdown"));
	} else if (strcmp(method, "resources/templates/list") == 0) {
		mcp_reply(sv, id, json_pack("{s:[]}", "resourceTemplates"));
	} else if (strcmp(method, "resources/read") == 0) {
		const char *uri = json_string_value(json_object_get(params, "uri"));
		if (!uri || strcmp(uri, GUIDE_URI) != 0)
			mcp_reply_error(sv, id, MCP_NO_RESOURCE, "resource not found: '%.200s'",
					uri ? uri : "");
		else
			mcp_reply(sv, id,
				  json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", GUIDE_URI,
					    "mimeType", "text/markdown", "text", sv->guide));
	} else if (strcmp(method, "logging/setLevel") == 0) {
		mcp_reply(sv, id, json_object()); /* stepbox says little; it goes to stderr */
	} else {
		mcp_reply_error(sv, id, RPC_NO_METHOD, "method not found: '%.100s'", method);
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
		mcp_reply_error(
			sv, NULL, RPC_INTERNAL,
			"a message of %zu bytes would take the server past its memory cap "
			"(%u MiB for messages and the %d calls waiting): send less at once, "
			"or wait for calls to end",
			len, MCP_JSON_BUDGET >> 20, waiting);
		return;
	}
	if (!m) {
		mcp_reply_error(sv, NULL, RPC_PARSE, "parse error: %s (column %d)", je.text,
				je.column);
		return;
	}
	json_t *id = json_object_get(m, "id");
	json_t *method_j = json_object_get(m, "method");
	const char *method = json_string_value(method_j);
	json_t *params = json_object_get(m, "params");
	if (!json_is_object(m) || (id && !json_is_string(id) && !json_is_integer(id)) ||
	    (method_j && !method) ||
	    (!method && !json_object_get(m, "result") && !json_object_get(m, "error")) ||
	    (params && !json_is_object(params) && !json_is_array(params))) {
		mcp_reply_error(sv,
				json_is_object(m) && (json_is_string(id) || json_is_integer(id))
					? id
					: NULL,
				RPC_INVALID_REQUEST,
				json_is_array(m) ? "batches are not supported"
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
		mcp_reply_error(sv, NULL, RPC_PARSE, "a message longer than %u bytes",
				MCP_LINE_MAX);
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
			mcp_reply_error(sv, c->id, RPC_INTERNAL, "cannot start the step: %s",
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
	struct server sv = {
		.cfg = cfg, .guide = guide, .workdir = workdir, .o = *o, .explain = true};
	/* where nothing may be traced (Yama's scope 3, a container's profile refusing
	 * ptrace), the calls run without their denials */
	int t = tracer_traceable();
	if (t < 0) {
		sv.explain = cfg->explain;
		fprintf(stderr,
			"stepbox: mcp: this host refuses ptrace (%s: Yama's ptrace_scope "
			"3, or a seccomp profile): results will not list what the sandbox "
			"denied\n",
			strerror(-t));
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
			granted = (g->v[i].access & GRANT_WRITE) &&
				  !(g->v[i].access & GRANT_PRIVATE) &&
				  path_beneath(real, g->v[i].path);
		if (granted || (size_t)snprintf(out, cap, "%s/stepbox-mcp.XXXXXX", real) >= cap)
			continue;
		if (mkdtemp(out))
			return 0;
	}
	out[0] = '\0';
	err_set(err, ERR_UNAVAILABLE, 0,
		"mcp: no folder for the calls' reports outside the "
		"step's write grants ('%s', '/tmp')",
		bases[0]);
	err_hint(err, "point TMPDIR at a folder the policy does not grant for writing");
	return -EPERM;
}

/*
 * An agent that may have read a hostile page is the caller here: with no
 * network policy asked for, the package registries and nothing else
 * (installs work, arbitrary exfiltration does not); --net allow gives all.
 */
static const char mcp_default_hosts[] = "@pypi,@npm,@crates,@go,@rubygems,@maven";

int mcp_main(struct stepbox_config *cfg, const struct mcp_opts *o)
{
	struct run_ctx ctx;
	struct stepbox_err err = {0};
	if (!cfg->net_set && policy_add_hosts(cfg, mcp_default_hosts, false, &err) < 0) {
		err_print(&err);
		return 125;
	}
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
