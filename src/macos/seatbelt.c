/* seatbelt: see seatbelt.h. */
#include "seatbelt.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "command.h"
#include "egress.h"
#include "limitcfg.h"
#include "persist.h"
#include "prepare.h"
#include "protect.h"
#include "reportfile.h"
#include "sbpl.h"
#include "show.h"
#include "strv.h"

/* How the command ended, for the exit status and the run report. */
struct outcome {
	int code;   /* stepbox's exit status */
	int status; /* the command's own exit status, or -1 */
	int signal; /* the signal that ended it, or 0 */
	bool started, timed_out, graced;
	double duration_s;
};

int seatbelt_prepare(const struct stepbox_config *cfg, char *const *inherited,
		     struct seatbelt_ctx *ctx, struct stepbox_err *err)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->host.runner = STEPBOX_SANDBOX_EXEC;
	struct grants_host host = {0};
	struct prepare_out out = {&ctx->grants, &ctx->env, &ctx->report_dir};
	int r = prepare_step(cfg, &host, -1, inherited, &out, err);
	if (r < 0)
		seatbelt_release(ctx);
	return r;
}

void seatbelt_release(struct seatbelt_ctx *ctx)
{
	backend_release(&ctx->backend);
	grants_release(&ctx->grants);
	env_release(&ctx->env);
	free(ctx->report_dir);
	ctx->report_dir = NULL;
}

static const char *const gives[] = {
	"files (deny by default)", "exec", "network", "unix-sockets", "signals", "rlimits", NULL};
static const char *const lacks[] = {"private-tmp", "pid-namespace", "memory-limit",
				    "tasks-limit", "output-limit",  "explain",
				    NULL};

/* The run report, in the Linux backends' keys where they mean the same. */
static int write_report(const struct stepbox_config *cfg, const struct seatbelt_ctx *ctx,
			char *const *argv, const struct outcome *o, const struct persist_lock *lock,
			const char *reached, const struct protect_record *prot,
			const struct egress *eg, struct stepbox_err *err)
{
	json_t *root = json_pack(
		"{s:i, s:o, s:b, s:i, s:o, s:o, s:b, s:b, s:f, s:s, s:o, s:o, s:n, s:s, s:o, s:o, "
		"s:{s:b}}",
		"version", 1, "command", show_list_json((const char *const *)argv), "started",
		o->started, "exit_code", o->code, "status",
		o->status >= 0 ? json_integer(o->status) : json_null(), "signal",
		o->signal ? json_integer(o->signal) : json_null(), "timed_out", o->timed_out,
		"graced", o->graced, "duration_s", o->duration_s, "backend", "seatbelt", "network",
		show_network_json(cfg), "missing_protections", show_list_json(lacks), "denials",
		"denials_source",
		"none: Seatbelt's denials are in macOS's unified log (docs/seatbelt.md)",
		"env_dropped", show_dropped_json(&ctx->env.dropped), "limit_reached",
		reached ? json_string(reached) : json_null(), "layers", "seatbelt", true);
	if (root && ctx->env.persist)
		json_object_set_new(root, "persistent",
				    json_pack("{s:s, s:s, s:f}", "path", ctx->env.persist, "mode",
					      lock->shared ? "shared" : "exclusive", "waited_s",
					      lock->waited_s));
	if (root && cfg->net == NET_HOSTS)
		json_object_set_new(root, "hosts", egress_reached_json(eg));
	if (root) {
		json_object_set_new(root, "protected", protect_json(prot));
		json_object_set_new(root, "unprotected", protect_json_unprotected(prot));
	}
	return reportfile_write(cfg->report_file, "--report", ctx->report_dir, root, err);
}

/* The limits an rlimit enforces here; the rest have no mechanism on a Mac. */
static const enum limit_kind rlimits[] = {LIMIT_CPU, LIMIT_FILE_SIZE, LIMIT_OPEN_FILES};

/* The backend's probe: the runner is here, and every asked limit holds. */
static int probe(struct backend *b, const struct stepbox_config *cfg, struct stepbox_err *err)
{
	if (access(b->host->runner, X_OK) < 0) {
		err_set(err, ERR_UNAVAILABLE, errno, "the Seatbelt backend runs a step under %s",
			b->host->runner);
		err_hint(err, "it ships with macOS; on Linux, build stepbox with its Linux "
			      "backends (meson setup -Dlinux_backends=enabled)");
		return -EOPNOTSUPP;
	}
	for (int k = 0; k < LIMIT_N; k++) {
		bool rlimit = false;
		for (size_t i = 0; i < sizeof(rlimits) / sizeof(*rlimits); i++)
			rlimit |= rlimits[i] == (enum limit_kind)k;
		if (cfg->limits.v[k] && !rlimit) {
			int r = err_set(err, ERR_UNAVAILABLE, 0,
					"the %s limit cannot be enforced by the Seatbelt backend",
					limitcfg_names[k]);
			err_hint(err, "macOS gives a sandbox no cgroup, PID namespace or "
				      "private /tmp; only cpu_s, file_size and open_files "
				      "hold here: drop the others, or run the step on Linux");
			return r;
		}
	}
	return 0;
}

/* The plan: the profile, as the one string sandbox-exec -p takes, and its command line. */
static int plan(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	size_t len = 0;
	struct backend_built *p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(err, ERR_UNAVAILABLE, ENOMEM, "seatbelt: plan");
	b->built = p;
	FILE *f = open_memstream(&p->profile, &len);
	if (!f)
		return err_set(err, ERR_UNAVAILABLE, errno, "seatbelt: build the profile");
	int r = sbpl_write(f, in->cfg, in->grants, in->proxy_port, err);
	if (fclose(f) != 0 && r == 0)
		r = err_set(err, ERR_UNAVAILABLE, errno, "seatbelt: build the profile");
	const char *const head[] = {"sandbox-exec", "-p", p->profile, "--", in->file};
	for (size_t i = 0; r == 0 && i < sizeof(head) / sizeof(*head); i++)
		r = strv_push(&p->runner_argv, head[i]);
	for (size_t i = 1; r == 0 && in->argv[i]; i++)
		r = strv_push(&p->runner_argv, in->argv[i]);
	if (r == -ENOMEM)
		err_set(err, ERR_UNAVAILABLE, ENOMEM, "seatbelt: the command line");
	p->envp = in->envp;
	return r;
}

/* In the command's process: sandbox-exec applies the profile, then executes the command. */
static int apply(const struct backend *b, enum backend_stage stage, struct backend_failure *why)
{
	if (stage != BACKEND_IN_COMMAND)
		return 0;
	execve(b->host->runner, b->built->runner_argv.v, b->built->envp);
	why->errnum = errno;
	snprintf(why->detail, sizeof(why->detail), "cannot start %s", b->host->runner);
	return -why->errnum;
}

static void describe(const struct backend *b, char *buf, size_t cap)
{
	snprintf(buf, cap, "seatbelt: a Seatbelt profile applied by %s", b->host->runner);
}

static int missing(const struct backend *b, struct strv *out)
{
	(void)b;
	int r = 0;
	for (size_t i = 0; r == 0 && lacks[i]; i++)
		r = strv_push(out, lacks[i]);
	return r;
}

static void release(struct backend *b)
{
	if (!b->built)
		return;
	free(b->built->profile);
	strv_release(&b->built->runner_argv);
	free(b->built);
	b->built = NULL;
}

static const struct backend_ops seatbelt = {
	BACKEND_SEATBELT, probe, plan, apply, describe, missing, release,
};

const struct backend_ops *const backend_table[] = {&seatbelt, NULL};

void backend_host_probe_all(struct backend_host *host)
{
	(void)host; /* the probe asks everything already */
}

int backend_none_usable(const struct backend_host *host, const struct stepbox_err *e, size_t n,
			struct stepbox_err *err)
{
	(void)host;
	(void)n;
	*err = e[0]; /* one backend: its own words */
	return -EOPNOTSUPP;
}

int backend_not_here(enum policy_backend name, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, 0,
		"the %s backend is Linux's; this build has the "
		"Seatbelt backend",
		policy_backend_name(name));
	err_hint(err, "drop --backend (or \"backend\" in the policy), or say seatbelt");
	return -EOPNOTSUPP;
}

static void on_signal(int sig)
{
	(void)sig; /* taken by sigwait; a handler keeps a default-ignored SIGCHLD pending */
}

static const int waited[] = {SIGCHLD, SIGALRM, SIGINT, SIGTERM, SIGHUP};

/*
 * The child: its own process group (the step's tree, killed as one), the
 * terminal's foreground when stepbox had it, the rlimits, then sandbox-exec,
 * which applies the profile and executes the command. An exec failure goes
 * back over report (close-on-exec).
 */
static void child(const struct stepbox_config *cfg, struct seatbelt_ctx *ctx, bool tty,
		  const sigset_t *oldmask, int report, int lock)
{
	int e = 0;
	setpgid(0, 0);
	/*
	 * The command holds the workflow cache's lock too (the same open file):
	 * macOS has no parent-death signal, so if stepbox is killed the tree
	 * runs on, and the next step must still wait for it.
	 */
	if (lock >= 0)
		fcntl(lock, F_SETFD, 0);
	if (tty) {
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, getpid());
	}
	for (size_t i = 0; i < sizeof(waited) / sizeof(*waited); i++)
		signal(waited[i], SIG_DFL);
	signal(SIGTTOU, SIG_DFL);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
	for (size_t i = 0; !e && i < sizeof(rlimits) / sizeof(*rlimits); i++) {
		uint64_t v = cfg->limits.v[rlimits[i]];
		int r = v ? limitcfg_setrlimit(rlimits[i], v) : 0;
		e = r < 0 ? -r : 0;
	}
	if (!e && chdir(ctx->grants.workdir) < 0)
		e = errno;
	struct backend_failure why = {0};
	if (!e && ctx->backend.ops->apply(&ctx->backend, BACKEND_IN_COMMAND, &why) < 0)
		e = why.errnum;
	ssize_t n = write(report, &e, sizeof(e));
	(void)n;
	_exit(127);
}

/* Wake in seconds (0: never). */
static void alarm_in(double seconds)
{
	struct itimerval it = {{0, 0}, {0, 0}};
	if (seconds > 0) {
		it.it_value.tv_sec = (time_t)seconds;
		it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

/* Wait for the command: the timeout, signals passed on, --grace after them. */
static void wait_command(const struct stepbox_config *cfg, pid_t pid, const sigset_t *set,
			 struct outcome *o)
{
	double start = clock_now_s(), grace_end = 0;
	double timeout_end = cfg->timeout_s > 0 ? start + (double)cfg->timeout_s : 0;
	int passed = 0, status = 0;
	for (;;) {
		double next = timeout_end;
		if (grace_end && (!next || grace_end < next))
			next = grace_end;
		alarm_in(next ? next - clock_now_s() : 0);
		int sig = 0;
		if (sigwait(set, &sig) != 0)
			continue;
		if (sig == SIGCHLD) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				break;
			continue;
		}
		if (sig == SIGALRM) {
			double t = clock_now_s();
			o->timed_out = timeout_end && t >= timeout_end;
			o->graced = !o->timed_out && grace_end && t >= grace_end;
			if (!o->timed_out && !o->graced)
				continue;
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		/* SIGINT, SIGTERM, SIGHUP: the step's to handle, within --grace */
		kill(-pid, sig);
		if (!passed && cfg->grace_s > 0)
			grace_end = clock_now_s() + (double)cfg->grace_s;
		passed = sig;
	}
	o->duration_s = clock_now_s() - start;
	o->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	o->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	o->code = command_status(status);
	if (o->timed_out) {
		fprintf(stderr,
			"stepbox: timed out after %ld s: killed the command's process "
			"tree\n",
			cfg->timeout_s);
		o->code = 124;
	} else if (o->graced) {
		fprintf(stderr,
			"stepbox: the command still ran %ld s after SIG%s was passed on "
			"(--grace): killed its process tree\n",
			cfg->grace_s,
			passed == SIGINT   ? "INT"
			: passed == SIGHUP ? "HUP"
					   : "TERM");
		o->signal = SIGKILL;
		o->code = 128 + SIGKILL;
	}
}

/*
 * Run the planned backend's command in a child and wait for it, the
 * signals stepbox waits for blocked meanwhile and restored after. o says how
 * it ended; o->started false, with err, when sandbox-exec could not start.
 */
static void launch(const struct stepbox_config *cfg, struct seatbelt_ctx *ctx, int lock,
		   struct outcome *o, struct stepbox_err *err)
{
	sigset_t set, oldmask;
	sigemptyset(&set);
	struct sigaction sa, old[sizeof(waited) / sizeof(*waited)];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	for (size_t i = 0; i < sizeof(waited) / sizeof(*waited); i++) {
		sigaddset(&set, waited[i]);
		sigaction(waited[i], &sa, &old[i]);
	}
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	int report[2];
	o->code = 125;
	if (pipe(report) < 0) {
		err_set(err, ERR_UNAVAILABLE, errno, "seatbelt: create a pipe");
		goto out;
	}
	fcntl(report[0], F_SETFD, FD_CLOEXEC);
	fcntl(report[1], F_SETFD, FD_CLOEXEC);
	pid_t pid = fork();
	if (pid == 0)
		child(cfg, ctx, tty, &oldmask, report[1], lock);
	close(report[1]);
	if (pid < 0) {
		err_set(err, ERR_UNAVAILABLE, errno, "seatbelt: fork");
		close(report[0]);
		goto out;
	}
	setpgid(pid, pid); /* as the child does: whichever runs first */
	int e = 0;
	ssize_t n;
	do
		n = read(report[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(pid, NULL, 0);
		err_set(err, ERR_UNAVAILABLE, e, "seatbelt: could not start %s in '%s'",
			ctx->host.runner, ctx->grants.workdir);
		goto out;
	}
	o->started = true;
	wait_command(cfg, pid, &set, o);
	kill(-pid, SIGKILL); /* what the command left in its process group */
out:
	alarm_in(0);
	if (tty) {
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, getpgrp());
		signal(SIGTTOU, SIG_DFL);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	for (size_t i = 0; i < sizeof(waited) / sizeof(*waited); i++)
		sigaction(waited[i], &old[i], NULL);
}

/*
 * Network by name: the proxy on the host's loopback, every request carrying
 * the run's secret, the step's clients pointed at it; the profile lets the
 * step reach that port alone. Seatbelt cannot confine the proxy's own
 * process from here: it runs with the caller's rights (docs/network.md).
 */
static int start_proxy(const struct stepbox_config *cfg, struct seatbelt_ctx *ctx,
		       struct egress *eg, struct stepbox_err *err)
{
	int r = egress_start(eg, cfg, false, NULL, NULL, err);
	if (r == 0 && env_set_proxy(&ctx->env, eg->url, false) < 0)
		r = err_set(err, ERR_UNAVAILABLE, ENOMEM, "point the step at the proxy");
	return r;
}

/* --explain: what the proxy refused, as the step asked it (the rest is in the unified log). */
static void explain_host(void *ctx, const struct denial_host *h)
{
	(void)ctx;
	fprintf(stderr, "stepbox: explain: the proxy refused %s:%d (%s)%s%s: %s%s%s\n", h->name,
		h->port, h->proto ? h->proto : "connect", h->addr ? " at " : "",
		h->addr ? h->addr : "", h->why, h->detail ? ": " : "", h->detail ? h->detail : "");
}

int seatbelt_run(const struct stepbox_config *cfg, struct seatbelt_ctx *ctx, char *const *argv)
{
	struct egress eg;
	egress_init(&eg);
	struct stepbox_err err = {0}, rerr = {0};
	struct persist_lock lock = {.fd = -1, .path_fd = -1};
	char *file = NULL;
	const char *reached = NULL;
	struct outcome o = {.code = 125, .status = -1};
	struct protect_record *prot = NULL;
	if (backend_choose(cfg, &ctx->host, &ctx->backend, &err) < 0 ||
	    env_prepare_step(cfg, &ctx->grants, &ctx->env, &lock, &err) < 0 ||
	    !(prot = protect_record_grants(cfg, &ctx->grants, &err)) ||
	    (cfg->net == NET_HOSTS && start_proxy(cfg, ctx, &eg, &err) < 0))
		goto fail;
	int r = command_find(argv[0], ctx->env.env.v, ctx->grants.workdir, &file, &err);
	if (r == 0)
		r = command_check(sbpl_may_exec, &ctx->grants, file, &err);
	if (r < 0) {
		/* not run: said, and in the report as a run that did not start */
		o.code = err_exit_code(&err);
		err_print(&err);
		goto report;
	}
	struct backend_input in = {.cfg = cfg,
				   .grants = &ctx->grants,
				   .idmap_userns = -1,
				   .file = file,
				   .argv = argv,
				   .envp = ctx->env.env.v,
				   .proxy_port = eg.port};
	if (backend_plan(&ctx->backend, &in, &err) < 0)
		goto fail;
	if (cfg->explain && cfg->verbosity >= 0)
		fprintf(stderr, "stepbox: explain: the Seatbelt backend's denials are in macOS's "
				"unified log, which stepbox does not read yet: log show --last 5m "
				"--predicate 'sender == \"Sandbox\"'\n");
	if (cfg->verbosity > 0)
		backend_say(stderr, &ctx->backend, ctx->grants.n);
	launch(cfg, ctx, lock.fd, &o, &err);
	/* the step's process group is gone: what the proxy refused and reached */
	const struct denial_sink said_host = {.host = explain_host};
	egress_stop(&eg, cfg->explain && cfg->verbosity >= 0 ? &said_host : NULL);
	if (cfg->explain && cfg->verbosity >= 0)
		egress_say_unrecorded(&eg, stderr);
	if (!o.started)
		goto fail; /* nothing ran: 125 */
	char said[256];
	reached = o.signal ? limitcfg_signalled(o.signal, cfg->limits.v, said, sizeof(said)) : NULL;
	if (reached && cfg->verbosity >= 0)
		fprintf(stderr, "stepbox: %s\n", said);
	persist_check_intact(&lock, ctx->grants.persist);
	/* the net after the step, as on Linux (the profile's denies held while it ran) */
	if (protect_check(prot, NULL, cfg->verbosity < 0) && !cfg->protect_report_only)
		o.code = PROTECT_EXIT;
report:
	if (cfg->report_file &&
	    write_report(cfg, ctx, argv, &o, &lock, reached, prot, &eg, &err) < 0)
		err_print(&err); /* the command ran (or could not): its status stands */
	goto out;
fail:
	err_print(&err);
	if (cfg->report_file && reportfile_error(cfg->report_file, cfg, &err, &rerr) < 0)
		err_print(&rerr);
out:
	egress_release(&eg);
	persist_unlock(&lock);
	protect_free(prot);
	free(file);
	return o.code;
}

bool seatbelt_check(FILE *out, const struct stepbox_config *cfg, bool json)
{
	struct backend_host host = {STEPBOX_SANDBOX_EXEC};
	struct stepbox_config one = *cfg;
	one.backend = BACKEND_AUTO;
	struct backend b;
	struct stepbox_err err = {0};
	bool here = backend_choose(&one, &host, &b, &err) == 0;
	backend_init(&b, BACKEND_SEATBELT, &host); /* described whether it can run or not */
	struct strv m = STRV_INIT;
	char what[256];
	backend_describe(&b, what, sizeof(what));
	backend_missing(&b, &m);
	if (json) {
		json_t *o =
			json_pack("{s:s, s:{s:{s:b, s:s, s:s, s:s?, s:s?, s:o, s:o}}}", "auto",
				  here ? "seatbelt" : "none", "backends", "seatbelt", "available",
				  here, "runner", host.runner, "what", what, "why",
				  here ? NULL : err.msg, "hint", here ? NULL : err.hint, "gives",
				  show_list_json(gives), "missing", show_strv_json(&m));
		strv_release(&m);
		return show_dump(out, o) == 0 && here;
	}
	if (here)
		fprintf(out, "backend %s\n", what);
	else
		fprintf(out, "backend seatbelt: not available: %s\n  hint: %s\n", err.msg,
			err.hint);
	fputs("  gives:", out);
	for (size_t i = 0; gives[i]; i++)
		fprintf(out, "%s %s", i ? "," : "", gives[i]);
	fputs("\n  cannot give here:", out);
	for (size_t i = 0; i < m.n; i++)
		fprintf(out, "%s %s", i ? "," : "", m.v[i]);
	fputs("\n  the step's tree: its process group (a daemon that calls setsid leaves it)\n",
	      out);
	strv_release(&m);
	return here;
}
