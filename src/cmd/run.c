#include "run.h"

#include "reportfile.h"
#include "show.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "egress.h"
#include "harden.h"
#include "landlock.h"
#include "persist.h"
#include "path.h"
#include "prepare.h"
#include "protect.h"
#include "report.h"
#include "shm.h"

/*
 * The step's own terminal: a terminal on stdin, stdout or stderr, by name
 * (Landlock alone grants it, and /dev/ptmx, instead of the host's /dev/pts).
 */
static const char *const *own_ttys(struct run_ctx *ctx)
{
	size_t n = 0;
	for (int fd = 0; fd < 3; fd++) {
		char name[sizeof(ctx->tty_names[0])];
		if (!isatty(fd) || ttyname_r(fd, name, sizeof(name)) != 0 ||
		    strncmp(name, "/dev/pts/", 9) != 0)
			continue;
		bool seen = false;
		for (size_t i = 0; i < n; i++)
			seen |= strcmp(ctx->tty_names[i], name) == 0;
		if (!seen)
			memcpy(ctx->tty_names[n++], name, sizeof(name));
	}
	for (size_t i = 0; i < n; i++)
		ctx->ttys[i] = ctx->tty_names[i];
	ctx->ttys[n] = NULL;
	return ctx->ttys;
}

/*
 * The cgroup folders a step reads its limits from (node, pnpm, the JVM
 * read /proc/self/cgroup and then the folder it names): the caller's own,
 * and the step's own that stepbox made for its limits, wherever that is.
 */
static const char *const *own_cgroups(struct run_ctx *ctx, const struct limit_plan *lim)
{
	size_t n = 0;
	for (int i = 0; i < 3; i++)
		if (lim->own[i])
			ctx->cgroups[n++] = lim->own[i];
	for (int i = 0; i < 2; i++)
		if (lim->cg_dir[i])
			ctx->cgroups[n++] = lim->cg_dir[i];
	ctx->cgroups[n] = NULL;
	return ctx->cgroups;
}

/*
 * The limits under the chosen layers. A run makes the step's cgroup here,
 * before the grants: its folder is one (the step reads its limits there),
 * and a limit that cannot be enforced is refused before anything is made.
 */
static int plan_limits(const struct stepbox_config *cfg, struct run_ctx *ctx, bool create,
		       const char *mountinfo, struct stepbox_err *err)
{
	const struct backend *b = &ctx->backend;
	return limit_plan(&cfg->limits, b->layers.userns, b->layers.ns, create, mountinfo,
			  &ctx->limits, err);
}

int run_prepare(const struct stepbox_config *cfg, char *const *inherited, bool for_run,
		struct run_ctx *ctx, struct stepbox_err *err)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->idmap_userns = -1;
	ctx->limits.cg_procs[0] = ctx->limits.cg_procs[1] = ctx->limits.cg_fd = -1;
	ctx->inherited = inherited;
	int r = layers_host(&ctx->host, !for_run, err);
	if (r == 0)
		r = backend_choose(cfg, &ctx->host, &ctx->backend, err);
	/* the host's mounts, read once: the cgroup hierarchies, and the device mounts below */
	char *mountinfo = r == 0 ? path_read_file("/proc/self/mountinfo", 64u << 20) : NULL;
	int mountinfo_err = mountinfo ? 0 : errno ? errno : EIO;
	if (r == 0)
		r = plan_limits(cfg, ctx, for_run, mountinfo, err);
	if (r < 0) {
		free(mountinfo);
		return r;
	}
	bool hide_etc = grants_should_hide_etc();
	/*
	 * Root under the namespaces: /etc is bound through an idmapped mount
	 * that shows it as others see it, instead of walked at every launch.
	 * STEPBOX_IDMAP=0 walks anyway (tests of the walk; a file system that
	 * takes an idmap but misbehaves).
	 */
	const char *want_idmap = getenv("STEPBOX_IDMAP");
	dev_t idmap_dev = 0;
	if (ctx->backend.layers.ns && hide_etc && geteuid() == 0 &&
	    !(want_idmap && strcmp(want_idmap, "0") == 0))
		ctx->idmap_userns = mountns_idmap_userns("/etc", &idmap_dev);
	/* Landlock alone has no nodev: every device mount is walked (a chroot's /dev) */
	if (!ctx->backend.layers.ns && ctx->backend.layers.landlock)
		r = mountinfo ? landlock_dev_mounts(mountinfo, &ctx->dev_mounts) : -mountinfo_err;
	free(mountinfo);
	if (r < 0) {
		run_release(ctx);
		return err_set(err, ERR_UNAVAILABLE, -r, "read /proc/self/mountinfo");
	}
	struct grants_host host = {
		.idmap = ctx->idmap_userns >= 0,
		.idmap_dev = idmap_dev,
		.keep_links = ctx->backend.layers.ns,
		.bind_entries = ctx->backend.layers.ns && !ctx->backend.layers.landlock,
		.open_fds = ctx->backend.layers.landlock,
		.namespaces = ctx->backend.layers.ns,
		.ttys = own_ttys(ctx),
		.dev_mounts = (const char *const *)ctx->dev_mounts.v,
		.cgroups = own_cgroups(ctx, &ctx->limits),
	};
	struct prepare_out out = {&ctx->grants, &ctx->env, &ctx->report_dir};
	r = prepare_step(cfg, &host, hide_etc, inherited, &out, err);
	if (r < 0)
		run_release(ctx);
	return r;
}

void run_release(struct run_ctx *ctx)
{
	limit_release(&ctx->limits);
	backend_release(&ctx->backend);
	if (ctx->idmap_userns >= 0)
		close(ctx->idmap_userns);
	ctx->idmap_userns = -1;
	free(ctx->report_dir);
	ctx->report_dir = NULL;
	grants_release(&ctx->grants);
	env_release(&ctx->env);
	strv_release(&ctx->dev_mounts);
}

/*
 * Under a port list UDP is refused, so a name lookup either goes over TCP
 * (port 53 listed) or nowhere: said at the start, before a client waits on
 * it, once.
 */
static void say_dns(const struct stepbox_config *cfg)
{
	bool dns53 = false;
	for (unsigned i = 0; i < cfg->connect_tcp.n; i++)
		dns53 |= cfg->connect_tcp.v[i] == 53;
	if (cfg->net != NET_TCP || cfg->verbosity < 0)
		return;
	if (!dns53)
		fprintf(stderr, "stepbox: note: names will not resolve (but for /etc/hosts): a "
				"port list refuses UDP and does not list 53; add 53 for DNS over "
				"TCP, or name the hosts with --net host:\n");
	else if (cfg->verbosity > 0)
		fprintf(stderr, "stepbox: note: DNS goes over TCP to port 53 only (RES_OPTIONS "
				"use-vc); a resolver that does not answer over TCP fails in 2 s\n");
}

static void say_what_is_missing(const struct stepbox_config *cfg, const struct run_ctx *ctx)
{
	const struct grants *g = &ctx->grants;
	/* a walk skips many for one reason (-r /: every device node): three each, then a count */
	struct {
		const struct grant_skip *first;
		size_t n;
	} seen[8] = {{0}};
	for (size_t i = 0; cfg->verbosity >= 0 && i < g->nskipped; i++) {
		const struct grant_skip *s = &g->skipped[i];
		/* hidden /etc secrets are the design, not news; say them with -v */
		bool routine = s->origin == ORIGIN_BASELINE || s->origin == ORIGIN_BASELINE_TARGET;
		if (routine && cfg->verbosity == 0)
			continue;
		size_t k = 0;
		while (k < 8 && seen[k].first &&
		       (seen[k].first->origin != s->origin ||
			strcmp(seen[k].first->reason, s->reason) != 0))
			k++;
		if (k < 8 && !seen[k].first)
			seen[k].first = s;
		if (k < 8 && ++seen[k].n > 3 && cfg->verbosity == 0)
			continue;
		err_warn("not granting %s path '%s': %s", grants_origin_name(s->origin), s->path,
			 s->reason);
	}
	for (size_t k = 0; cfg->verbosity == 0 && k < 8 && seen[k].first; k++)
		if (seen[k].n > 3)
			err_warn("not granting %zu more %s paths: %s (-v lists them)",
				 seen[k].n - 3, grants_origin_name(seen[k].first->origin),
				 seen[k].first->reason);
	/* names and reasons only: a dropped value may be the secret itself */
	for (size_t i = 0; cfg->verbosity > 0 && i < ctx->env.dropped.n; i++)
		fprintf(stderr, "stepbox: env: dropped %s\n", ctx->env.dropped.v[i]);
	for (size_t i = 0; cfg->verbosity > 0 && i < ctx->env.unseen.n; i++)
		fprintf(stderr, "stepbox: not granted from HOME: %s\n", ctx->env.unseen.v[i]);
	/* once a run: an attempt before a fallback said it already */
	bool said = false;
	for (size_t i = 0; i < ctx->backend.ntried; i++)
		said |= ctx->backend.tried[i].at_start;
	if (ctx->backend.layers.outer_supervisor && cfg->verbosity >= 0 && !said)
		fprintf(stderr,
			"stepbox: nested in another sandbox: its supervisor, not this one, "
			"decides the step's UNIX socket connects and metadata changes, by its "
			"own rules (every other layer here is this step's)\n");
	say_dns(cfg);
	if (ctx->backend.name == BACKEND_NONE) {
		fprintf(stderr, "stepbox: WARNING: --backend none: the command runs WITHOUT a "
				"filesystem sandbox (debugging only)\n");
		return;
	}
	if (cfg->verbosity > 0)
		backend_say(stderr, &ctx->backend, g->n);
}

/* A run that never started: its error said, and in the report. */
static int not_started(const struct stepbox_config *cfg, const struct stepbox_err *err)
{
	struct stepbox_err rerr = {0};
	err_print(err);
	if (cfg->report_file && reportfile_error(cfg->report_file, cfg, err, &rerr) < 0)
		err_print(&rerr);
	return 125;
}

/*
 * auto chose a backend with namespaces, and the host refused them when the
 * step started (why: a cause the probe names; nothing ran). The next
 * backend is backend_fall_back's to choose; the run is prepared anew for it,
 * said on stderr whatever -q (a run weaker than auto's first choice is
 * never silent), and recorded in the report (auto_tried).
 */
static int fall_back(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
		     struct learn *learn, const struct stepbox_err *why)
{
	struct backend b = ctx->backend; /* released: its name and record only */
	struct stepbox_config next = *cfg;
	struct stepbox_err err = {0};
	char *const *inherited = ctx->inherited;
	if (backend_fall_back(cfg, &ctx->host, &b, why, &err) < 0)
		return not_started(cfg, &err);
	fprintf(stderr, "stepbox: auto: %s could not start here (%s); running under %s\n",
		policy_backend_name(ctx->backend.name), why->msg, policy_backend_name(b.name));
	next.backend = b.name;
	run_release(ctx);
	if (run_prepare(&next, inherited, true, ctx, &err) < 0)
		return not_started(cfg, &err);
	memcpy(ctx->backend.tried, b.tried, b.ntried * sizeof(*b.tried));
	ctx->backend.ntried = b.ntried;
	return run_exec(&next, ctx, argv, learn);
}

/*
 * Where the supervisor lets a step reach a pathname socket or change
 * metadata: its write grants (not the device nodes: chmod /dev/null is no
 * step's business); the private /tmp and /dev/shm of the namespaces apart.
 */
static int supervised_places(const struct run_ctx *ctx, struct strv *out, struct strv *unix_dirs,
			     struct stepbox_err *err)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < ctx->grants.n; i++) {
		const struct grant *g = &ctx->grants.v[i];
		if ((g->access & GRANT_WRITE) && !(g->access & (GRANT_DEV | GRANT_PRIVATE)))
			r = strv_push(out, g->path);
		if (r == 0 && (g->access & GRANT_CONNECT))
			r = strv_push(unix_dirs, g->path);
	}
	return r < 0 ? err_set(err, ERR_UNAVAILABLE, -r, "list the supervised places") : 0;
}

/*
 * What Landlock alone lets a step read, write and execute, for the
 * supervisor's answers to access(2): every grant's path by its rights.
 */
static int access_places(const struct run_ctx *ctx, struct strv rights[3], struct stepbox_err *err)
{
	static const unsigned bit[3] = {GRANT_READ, GRANT_WRITE, GRANT_EXEC};
	int r = 0;
	for (size_t i = 0; r == 0 && i < ctx->grants.n; i++)
		for (int k = 0; r == 0 && k < 3; k++)
			if (ctx->grants.v[i].access & bit[k])
				r = strv_push(&rights[k], ctx->grants.v[i].path);
	return r < 0 ? err_set(err, ERR_UNAVAILABLE, -r, "list the granted places") : 0;
}

/*
 * The output limit: two pipes (out[0..1] stdout, out[2..3] stderr) and the
 * thread that passes them on.
 */
static int output_pipes(const struct limit_plan *lp, int out[4], struct limit_pump **pump,
			struct stepbox_err *err)
{
	if (lp->how[LIMIT_OUTPUT] != LIMIT_PIPE)
		return 0;
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(out + 2, O_CLOEXEC) < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "create the output limit's pipes");
	int r = limit_pump_start(pump, out[0], out[2], lp->v[LIMIT_OUTPUT], err);
	if (r == 0)
		out[0] = out[2] = -1; /* the pump's now */
	return r;
}

/*
 * --explain's source: the kernel's own records are the better one (no
 * tracing cost, the exact object Landlock checked), where stepbox may read
 * them: root, Landlock ABI 7, audit on. Otherwise the tracer, saying why.
 * Under the namespaces an ungranted path is absent (ENOENT) and Landlock
 * never sees the access, so its records would miss most denials: the
 * tracer, which sees every failing call, is the source there.
 */
static bool explain_by_audit(const struct stepbox_config *cfg, const struct run_ctx *ctx,
			     struct audit *au, struct explain *x)
{
	if (!ctx->backend.layers.landlock || ctx->backend.layers.ns)
		return false;
	bool use = false;
	if (geteuid() != 0)
		snprintf(au->why, sizeof(au->why), "audit records need root");
	else if (!landlock_log_flags(&ctx->host.features))
		snprintf(au->why, sizeof(au->why), "Landlock ABI %d logs no denials (needs 7)",
			 ctx->host.features.abi);
	else
		use = audit_prepare(au, cfg->enable_audit);
	if (use)
		x->source = "audit";
	else if (cfg->verbosity >= 0 && !cfg->explain_silent)
		fprintf(stderr, "stepbox: explain: %s; using the tracer\n", au->why);
	return use;
}

/*
 * After a run that started (or whose command could not be executed): the
 * workflow cache's lock checked, the denials gathered and said (or learned
 * from), the report written.
 */
static void after_run(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
		      struct learn *learn, const struct launch_result *res,
		      const struct persist_lock *lock, struct audit *au, struct explain *x,
		      const struct egress *eg, const struct protect_record *prot)
{
	struct stepbox_err err = {0};
	persist_check_intact(lock, ctx->grants.persist);
	if (au->fd >= 0) /* the kernel's records are the source */
		audit_collect(au, res->domain_creator, x);
	if (cfg->explain)
		explain_rank(x, res->exit_code);
	if (learn) {
		if (!learn->policy)
			learn->policy = show_policy_json(cfg, &ctx->grants);
		learn->added = learn->policy ? explain_learn(x, learn->policy, &learn->refused) : 0;
	} else if (cfg->explain && !cfg->explain_silent) {
		explain_print(stderr, x);
		/* not a file denial, but as likely the cause: a variable the step never
		 * got (OLDPWD, which every shell that moved has, never is one) */
		size_t said = 0;
		for (size_t i = 0; i < ctx->env.dropped.n; i++)
			if (strncmp(ctx->env.dropped.v[i], "OLDPWD:", 7) != 0)
				fprintf(stderr, "%s%s\n",
					said++ ? "  "
					       : "stepbox: explain: not passed on from the "
						 "environment:\n  ",
					ctx->env.dropped.v[i]);
		/* nor a file: a config the step's tools went without, unread */
		for (size_t i = 0; i < ctx->env.unseen.n; i++)
			fprintf(stderr, "%s%s\n",
				i ? "  "
				  : "stepbox: explain: dotfiles of HOME the step's tools ran "
				    "without (--home-file NAME grants one read-only):\n  ",
				ctx->env.unseen.v[i]);
	}
	struct report_in in = {cfg,  argv,         &ctx->backend,           &ctx->env, res,
			       lock, &ctx->limits, cfg->explain ? x : NULL, eg,        prot};
	if (cfg->report_file && report_run(cfg->report_file, ctx->report_dir, &in, &err) < 0)
		err_print(&err); /* the command ran: its status stands */
}

/* What one run_exec holds from the step's preparation to its release. */
struct exec_state {
	struct stepbox_err err;
	struct harden h;
	struct explain x;
	struct audit au;
	bool use_audit;
	int out[4]; /* the output limit's pipes: stdout, stderr */
	struct limit_pump *pump;
	struct persist_lock lock;
	struct harden_opts ho;
	struct strv write, unix_dirs;
	struct strv rights[3];
	struct shm_place shm;
	struct supervise_config sc;
	struct denial_sink sink;
	struct egress eg;            /* network by name: the proxy */
	struct sockaddr_in proxy_at; /* ... on the host's loopback: where the step may connect */
	struct landlock_proxy proxy_confine; /* ... and how it confines itself */
	struct protect_record *prot;         /* the protected paths before the step */
};

/*
 * The step prepared: its environment and persist lock, the backend's plan,
 * the hardening, the places the supervisor serves. Returns 0 or negative
 * (st->err filled).
 */
bool run_sysv_unbounded(const struct backend_layers *l, const struct limit_plan *lp)
{
	/*
	 * The IPC namespace's System V limits follow the tmp limit only where a
	 * root it maps sets them (mountns_apply.c): under a user namespace that maps
	 * the caller to itself they stay the kernel's, and message queues and
	 * detached segments are kernel memory that only a cgroup charges. With
	 * neither, System V IPC is refused, as under Landlock alone.
	 */
	return l->userns && lp->how[LIMIT_MEMORY] != LIMIT_CGROUP;
}

void run_harden_opts(const struct backend_layers *l, bool traced, struct harden_opts *o)
{
	*o = (struct harden_opts){
		.traced = traced,
		.traced_lookups = traced && l->ns,
		.refuse_sysv = l->refuse_sysv,
		.refuse_unbounded_sysv = l->unbounded_sysv,
		.supervise = l->supervise,
		.supervise_nofd = l->supervise_nofd,
		/* Landlock alone: access(2) and /dev/shm's calls (harden_filter_notify*_alone) */
		.supervise_alone = l->landlock && !l->ns,
	};
}

/* The proxy in itself: its Landlock domain, then no capability and its call filter. */
static int confine_proxy(void *lp)
{
	int r = landlock_confine_proxy(lp);
	return r < 0 ? r : harden_confine_proxy();
}

/*
 * Network by name: the proxy started where the backend can hold the step to
 * it (its own network namespace, or the host's loopback), the step's
 * clients pointed at it.
 */
static int exec_egress(struct run_ctx *ctx, const struct stepbox_config *cfg, struct exec_state *st)
{
	bool own_netns = ctx->backend.layers.ns;
	/* the proxy reads every byte the step sends: it confines itself first */
	st->proxy_confine = (struct landlock_proxy){&ctx->host.features, &cfg->net_hosts};
	int rc = egress_start(&st->eg, cfg, own_netns, confine_proxy, &st->proxy_confine, &st->err);
	if (rc == 0 && env_set_proxy(&ctx->env, st->eg.url, own_netns) < 0)
		rc = err_set(&st->err, ERR_UNAVAILABLE, ENOMEM, "point the step at the proxy");
	st->proxy_at = (struct sockaddr_in){
		.sin_family = AF_INET,
		.sin_port = htons(st->eg.port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	return rc;
}

/*
 * The protected paths in the write grants, recorded before the step (the
 * net after it compares), and those that exist handed to the plan (the
 * namespaces bind them read-only). Only the protected names are looked at.
 */
static int protect_prepare(const struct stepbox_config *cfg, struct run_ctx *ctx,
			   struct exec_state *st)
{
	if (!(st->prot = protect_record_grants(cfg, &ctx->grants, &st->err)))
		return -EIO;
	int r = protect_places(st->prot, &ctx->grants.protected_ro, &ctx->grants.protected_pins);
	return r < 0 ? err_set(&st->err, ERR_UNAVAILABLE, -r, "list the protected paths") : 0;
}

static int exec_prepare(const struct stepbox_config *cfg, struct run_ctx *ctx,
			struct exec_state *st)
{
	struct backend *b = &ctx->backend;
	int rc = env_prepare_step(cfg, &ctx->grants, &ctx->env, &st->lock, &st->err);
	if (rc == 0 && cfg->net == NET_HOSTS)
		rc = exec_egress(ctx, cfg, st);
	if (rc == 0)
		rc = protect_prepare(cfg, ctx, st);
	struct backend_input in = {
		.cfg = cfg,
		.grants = &ctx->grants,
		.tmp_size = ctx->limits.v[LIMIT_TMP],
		.idmap_userns = ctx->idmap_userns,
		.proxy_port = st->eg.handoff < 0 ? st->eg.port : 0,
	};
	if (rc == 0)
		rc = backend_plan(b, &in, &st->err);
	if (rc == 0)
		b->layers.unbounded_sysv = run_sysv_unbounded(&b->layers, &ctx->limits);
	grants_close_fds(&ctx->grants); /* the rules hold what they need: none for the child */
	run_harden_opts(&b->layers, cfg->explain && !st->use_audit, &st->ho);
	st->ho.supervise_guard = st->ho.supervise && protect_any(st->prot);
	st->ho.explain_sockets = cfg->explain; /* by either source: the supervisor hears them */
	/* the kernel counts no fork RLIMIT_NPROC refused: the tracer does */
	st->ho.traced_forks = st->ho.traced && (ctx->limits.how[LIMIT_TASKS] == LIMIT_NPROC_NS ||
						ctx->limits.how[LIMIT_TASKS] == LIMIT_NPROC_USER);
	harden_prepare(&st->h, cfg, &st->ho);
	if (rc == 0)
		rc = supervised_places(ctx, &st->write, &st->unix_dirs, &st->err);
	if (rc == 0 && st->ho.supervise_alone)
		rc = access_places(ctx, st->rights, &st->err);
	if (rc == 0 && b->layers.serve_shm)
		rc = shm_place_make(&st->shm, &st->err);
	return rc;
}

/* The supervisor's config: the places it serves and how it judges. */
static void exec_supervise_config(const struct stepbox_config *cfg, const struct backend *b,
				  struct exec_state *st)
{
	st->sc = (struct supervise_config){
		.write_dirs = st->write.v,
		.nwrite = st->write.n,
		.unix_dirs = st->unix_dirs.v,
		.nunix = st->unix_dirs.n,
		.by_mount = b->layers.ns,
		.own_netns = b->layers.ns && (cfg->net == NET_NONE || cfg->net == NET_HOSTS),
		.resolvers = st->eg.transparent.dns,
		.nresolvers = cfg->net == NET_HOSTS && b->layers.ns ? st->eg.transparent.ndns : 0,
		.only_peer = cfg->net == NET_HOSTS && !b->layers.ns ? &st->proxy_at : NULL,
		.host_names = cfg->net == NET_ALLOW,
		.no_getfd = b->layers.supervise_nofd,
		.diag_fd = -1, /* the child's, taken with the listener */
		.net_ruleset = layers_net_ruleset(b),
		.connect_ports = cfg->net == NET_TCP ? &cfg->connect_tcp : NULL,
		.bind_ports = cfg->net == NET_TCP ? &cfg->bind_tcp : NULL,
		.shm_dir = st->shm.dirfd,
		.judge = st->ho.traced,
		.read_dirs = st->rights[0].v,
		.nread = st->rights[0].n,
		.writable_dirs = st->rights[1].v,
		.nwritable = st->rights[1].n,
		.exec_dirs = st->rights[2].v,
		.nexec = st->rights[2].n,
		/* the protected paths, live (the namespaces also bind what exists) */
		.protect = st->ho.supervise_guard ? st->prot : NULL,
		.fs_ruleset = layers_fs_ruleset(b),
		.fs_refer = layers_fs_refer(b),
		/* ours (a container's), the hardening filters, the supervisor's */
		.step_filters = harden_filter_count() + (int)st->h.n + 1,
	};
}

/* The launch, and what its end settles: the output pump, the limits' findings. */
static int exec_launch(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
		       struct exec_state *st, struct launch_result *res)
{
	struct backend *b = &ctx->backend;
	st->sink = explain_sink(&st->x); /* the layers' refusals, for --explain */
	struct launch_spec spec = {
		.argv = argv,
		.envp = ctx->env.env.v,
		.workdir = ctx->grants.workdir,
		.backend = b,
		.supervise = b->layers.supervise ? &st->sc : NULL,
		.harden = &st->h,
		.grants = &ctx->grants,
		.timeout_s = cfg->timeout_s,
		.grace_s = cfg->grace_s,
		.explain = cfg->explain && !st->use_audit ? &st->x : NULL,
		.denials = cfg->explain ? &st->sink : NULL,
		.limits = &ctx->limits,
		.net_handoff = st->eg.handoff > 0 ? st->eg.handoff : 0,
		.net_transparent = st->eg.handoff > 0 ? &st->eg.transparent : NULL,
		.spare = st->eg.proxy > 0 ? st->eg.proxy : 0,
		.output = {st->out[1], st->out[3]},
	};
	int rc = launch_run(&spec, res, &st->err);
	st->out[1] = st->out[3] = -1; /* launch_run closed them */
	/* the tree is gone: the proxy's refusals go where the supervisor's went */
	egress_stop(&st->eg, cfg->explain ? &st->sink : NULL);
	if (cfg->explain && cfg->verbosity >= 0)
		egress_say_unrecorded(&st->eg, stderr);
	if (rc == 0 && res->not_run.msg[0])
		err_print(&res->not_run);
	ctx->limits.output_dropped = limit_pump_stop(st->pump);
	st->pump = NULL;
	if (rc == 0) {
		struct rusage ru;
		long maxrss = getrusage(RUSAGE_CHILDREN, &ru) == 0 ? ru.ru_maxrss : 0;
		ctx->limits.forks_refused = st->ho.traced_forks ? st->x.forks_refused : 0;
		limit_finish(&ctx->limits, res->exit_code, res->tasks_seen, maxrss,
			     cfg->verbosity < 0);
	}
	return rc;
}

/* After the step, run or not: all that run_exec held, released. */
static void exec_release(struct run_ctx *ctx, struct exec_state *st)
{
	/*
	 * The tree is gone (launch_run waits for all of it): the next step may
	 * start. The init holds the lock too (inherited), so if stepbox is
	 * killed the lock outlives it until the init has ended the tree.
	 */
	persist_unlock(&st->lock);
	for (int i = 0; i < 4; i++)
		if (st->out[i] >= 0)
			close(st->out[i]);
	limit_pump_stop(st->pump);
	limit_release(&ctx->limits);
	backend_release(&ctx->backend); /* the step's rulesets and mount plan: a retry plans anew */
	strv_release(&st->write);
	strv_release(&st->unix_dirs);
	shm_place_remove(&st->shm);
	egress_release(&st->eg);
	for (int k = 0; k < 3; k++)
		strv_release(&st->rights[k]);
	audit_release(&st->au);
	explain_release(&st->x);
	protect_free(st->prot);
	st->prot = NULL;
	strv_release(&ctx->grants.protected_ro);
	strv_release(&ctx->grants.protected_pins);
}

int run_exec(const struct stepbox_config *cfg, struct run_ctx *ctx, char *const *argv,
	     struct learn *learn)
{
	struct exec_state st = {
		.au = {-1, -1, ""},
		.out = {-1, -1, -1, -1},
		.lock = {.fd = -1, .path_fd = -1},
		.write = STRV_INIT,
		.unix_dirs = STRV_INIT,
		.rights = {STRV_INIT, STRV_INIT, STRV_INIT},
		.shm = {.dirfd = -1},
	};
	egress_init(&st.eg);
	explain_init(&st.x, &ctx->grants, cfg);
	st.use_audit = cfg->explain && explain_by_audit(cfg, ctx, &st.au, &st.x);
	int code = 125;
	bool retry = false;
	struct launch_result res;
	int rc = exec_prepare(cfg, ctx, &st);
	st.x.prot = st.prot;
	st.x.moves_unseen = st.ho.supervise_guard; /* the live layer performs them */
	if (rc < 0)
		goto out;
	/* the output limit's pipes, or no run: never one without the limit it asked */
	if ((rc = output_pipes(&ctx->limits, st.out, &st.pump, &st.err)) < 0)
		goto out;
	if (cfg->verbosity > 0) {
		char said[1024];
		limit_describe(&ctx->limits, said, sizeof(said));
		fprintf(stderr, "stepbox: limits: %s\n", said);
	}
	say_what_is_missing(cfg, ctx);
	exec_supervise_config(cfg, &ctx->backend, &st);
	rc = exec_launch(cfg, ctx, argv, &st, &res);
	/*
	 * auto chose from a probe, and the host refused the real namespaces (a
	 * container's masked /proc, a security module): the attempt was the
	 * better probe, and nothing ran. Any other failure to build a layer
	 * (a mount point raced by a step beside this one) is this run's answer:
	 * a retry with fewer layers is what such a race would be after.
	 */
	retry = rc < 0 && res.ns_refused && cfg->backend == BACKEND_AUTO;
	if (rc < 0)
		goto out;
	code = res.exit_code;
	/* the whole tree is gone: what it left among the protected paths is judged */
	if (protect_check(st.prot, NULL, cfg->verbosity < 0) && !cfg->protect_report_only)
		code = PROTECT_EXIT;
	after_run(cfg, ctx, argv, learn, &res, &st.lock, &st.au, &st.x,
		  cfg->net == NET_HOSTS ? &st.eg : NULL, st.prot);
out:
	if (rc < 0 && !retry)
		not_started(cfg, &st.err);
	exec_release(ctx, &st);
	return retry ? fall_back(cfg, ctx, argv, learn, &st.err) : code;
}
