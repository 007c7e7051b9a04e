/* layers: see layers.h. */
#include "layers.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harden.h"
#include "path.h"
#include "pipes.h"
#include "strbuf.h"
#include "supervise.h"

const char *layers_abi_cap(void)
{
	const char *cap = getenv("STEPBOX_LANDLOCK_ABI");
	return cap && *cap ? cap : NULL; /* empty: no cap, the most protection */
}

int layers_host(struct backend_host *host, bool probe_ns, struct stepbox_err *err)
{
	memset(host, 0, sizeof(*host));
	host->probe_ns = probe_ns;
	host->supervisor = supervise_probe(&host->supervisor_err);
	return landlock_probe(&host->features, layers_abi_cap(), err);
}

int layers_probe_ns(const struct stepbox_config *cfg, struct stepbox_err *err)
{
	struct mountns_plan plan;
	struct grants none = {0};
	int r = mountns_plan(&plan, cfg, &none);
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "plan the mounts");
	r = mountns_probe(&plan, err);
	mountns_release(&plan);
	return r;
}

static void landlock_why(const struct landlock_features *f, char *buf, size_t cap)
{
	if (f->kernel_abi > 0)
		snprintf(buf, cap, "Landlock is capped to ABI %d by STEPBOX_LANDLOCK_ABI", f->abi);
	else if (f->kernel_errno == EPERM)
		snprintf(buf, cap, "the Landlock calls are refused here (%s)", strerror(EPERM));
	else
		snprintf(buf, cap, "%s has no Landlock (%s)",
			 harden_gvisor() ? "gVisor" : "this kernel", strerror(f->kernel_errno));
}

/* What would give Landlock here, from how landlock_create_ruleset failed. */
static const char *landlock_hint(const struct landlock_features *f)
{
	switch (f->kernel_errno) {
	case EOPNOTSUPP: /* built in, not enabled at boot */
		return "this kernel has Landlock but did not enable it: add 'landlock' to the "
		       "lsm= boot parameter (or CONFIG_LSM)";
	case EPERM:
		return "a seccomp filter refuses the Landlock calls (an older container "
		       "profile): allow landlock_create_ruleset, landlock_add_rule and "
		       "landlock_restrict_self in it";
	default: /* ENOSYS: before 5.13, built without it, or gVisor */
		if (harden_gvisor())
			return "gVisor (runsc) implements no Landlock";
		return "Landlock needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK "
		       "(gVisor has none)";
	}
}

/* The layers b stacks; every one with the supervisor (no kernel stepbox
 * knows limits pathname UNIX sockets: Landlock ABI 9). */
static void stack(struct backend *b, bool ns, bool landlock)
{
	b->layers.ns = ns;
	b->layers.userns = ns && mountns_userns();
	b->layers.landlock = landlock;
	b->layers.supervise = true;
	b->layers.refuse_sysv = !ns;
}

/* A refusal in the words of the backend that asked, with e's hint. */
static int refuse(const struct backend *b, const struct stepbox_err *e, struct stepbox_err *err)
{
	/* e.msg says its errno already */
	err_set(err, ERR_UNAVAILABLE, 0, "%s: %s", policy_backend_name(b->name), e->msg);
	err->errnum = e->errnum;
	err_hint(err, "%s", e->hint);
	return -EOPNOTSUPP;
}

static int need_landlock(const struct backend *b, const struct stepbox_config *cfg,
			 struct stepbox_err *err)
{
	const struct landlock_features *f = &b->host->features;
	if (f->abi <= 0) {
		char why[128];
		landlock_why(f, why, sizeof(why));
		err_set(err, ERR_UNAVAILABLE, 0, "%s: %s", policy_backend_name(b->name), why);
		/* the kernel has it, and only the cap hides it: say that, not how to boot */
		if (f->kernel_abi > 0)
			err_hint(err,
				 "unset STEPBOX_LANDLOCK_ABI (or raise it) to use this "
				 "kernel's Landlock ABI %d; the mountns backend works without "
				 "Landlock",
				 f->kernel_abi);
		else if (harden_gvisor())
			err_hint(err,
				 "%s, nor what the mountns backend needs (`stepbox check` "
				 "says what): run stepbox where Linux answers the step's calls "
				 "(a runc or crun container, or the host)",
				 landlock_hint(f));
		else
			err_hint(err,
				 "%s; the mountns backend works without it (`stepbox check` "
				 "says what this host can run)",
				 landlock_hint(f));
		return -EOPNOTSUPP;
	}
	/* what cfg asks that the layer cannot give: never silently less */
	return landlock_check_net(f, cfg, err);
}

/*
 * The supervisor, and how it works here: SUPERVISE_NO_GETFD is not a
 * failure, and neither is SUPERVISE_NESTED, where the sandbox stepbox runs
 * in supervises the step by its own grants (said at every run: run.c).
 */
static int need_supervisor(struct backend *b, struct stepbox_err *err)
{
	const struct stepbox_err *e = &b->host->supervisor_err;
	int sup = b->host->supervisor;
	b->layers.supervise_nofd = sup == SUPERVISE_NO_GETFD;
	b->layers.outer_supervisor = sup == SUPERVISE_NESTED;
	b->layers.supervise = sup != SUPERVISE_NESTED;
	if (sup >= 0)
		return 0;
	err_set(err, ERR_UNAVAILABLE, 0, "%s: the supervisor cannot run: %s",
		policy_backend_name(b->name), e->msg);
	err->errnum = e->errnum;
	err_hint(err, "%s", e->hint);
	return -EOPNOTSUPP;
}

/*
 * The namespaces are tried for real in a child only when the host asks
 * (check, policy, doctor): a run makes them anyway, and a failure there
 * falls back as this would (run.c).
 */
static int need_ns(const struct backend *b, const struct stepbox_config *cfg,
		   struct stepbox_err *err)
{
	struct stepbox_err e = {0};
	if (b->host->probe_ns && layers_probe_ns(cfg, &e) < 0)
		return refuse(b, &e, err);
	return 0;
}

static int probe_stacked(struct backend *b, const struct stepbox_config *cfg,
			 struct stepbox_err *err)
{
	stack(b, true, true);
	int r = need_landlock(b, cfg, err);
	r = r < 0 ? r : need_supervisor(b, err);
	return r < 0 ? r : need_ns(b, cfg, err);
}

static int probe_landlock(struct backend *b, const struct stepbox_config *cfg,
			  struct stepbox_err *err)
{
	stack(b, false, true);
	int r = need_landlock(b, cfg, err);
	return r < 0 ? r : need_supervisor(b, err);
}

static int probe_mountns(struct backend *b, const struct stepbox_config *cfg,
			 struct stepbox_err *err)
{
	stack(b, true, false);
	int r = need_supervisor(b, err);
	if (r == 0 && (r = need_ns(b, cfg, err)) == 0 && cfg->net == NET_TCP) {
		/* no port filter without Landlock, and never silently none */
		err_set(err, ERR_UNAVAILABLE, 0,
			"the mountns backend cannot enforce a TCP port policy");
		err_hint(err, "port lists need Landlock (ABI 4): the stacked or landlock backend; "
			      "mountns gives --net none (a network namespace) or --net allow");
		r = -EOPNOTSUPP;
	}
	return r;
}

static int probe_none(struct backend *b, const struct stepbox_config *cfg, struct stepbox_err *err)
{
	(void)cfg;
	(void)err;
	stack(b, false, false);
	b->layers.supervise = false;
	b->layers.refuse_sysv = false;
	return 0;
}

static int plan_none(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	(void)in;
	assert(!b->built);
	if (!(b->built = calloc(1, sizeof(*b->built))))
		return err_set(err, ERR_UNAVAILABLE, ENOMEM, "plan the layers");
	b->built->ruleset = b->built->net_ruleset = -1;
	b->built->mountns.idmap_userns = -1;
	return 0;
}

/* The namespaces: the mounts of the new root, planned purely. */
static int plan_ns(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	struct mountns_plan *m = &b->built->mountns;
	int r = mountns_plan(m, in->cfg, in->grants);
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "plan the mounts");
	mountns_set_tmp_size(m, in->tmp_size);
	m->idmap_userns = in->idmap_userns;
	if (in->cfg->verbosity >= 0)
		pipes_say_unsearched(&m->unsearched, &m->unsearched_why, in->cfg->verbosity);
	return 0;
}

/* Landlock: the grants' ruleset (the grants' folders exist by now). */
static int plan_landlock(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	const struct landlock_features *f = &b->host->features;
	const struct stepbox_config *cfg = in->cfg;
	struct backend_built *l = b->built;
	struct policy_ports *proxy = malloc(sizeof(*proxy));
	struct landlock_tcp tcp;
	if (!proxy)
		return err_set(err, ERR_UNAVAILABLE, ENOMEM, "plan the layers");
	landlock_tcp_of(cfg, b->layers.ns, in->proxy_port, proxy, &tcp);
	l->ruleset = landlock_build(f, in->grants, cfg, &tcp, err);
	/* the supervisor connects for the step under the step's own port rules */
	if (l->ruleset >= 0 && tcp.handled && tcp.connect &&
	    (l->net_ruleset = landlock_build_net(f, &tcp, err)) < 0) {
		free(proxy);
		return l->net_ruleset;
	}
	free(proxy);
	if (l->ruleset < 0)
		return l->ruleset;
	/* --explain: the kernel logs denials after exec too (audit, ABI 7) */
	l->restrict_flags = cfg->explain ? landlock_log_flags(f) : 0;
	return 0;
}

static int plan_stacked(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	int r = plan_none(b, in, err);
	r = r < 0 ? r : plan_ns(b, in, err);
	return r < 0 ? r : plan_landlock(b, in, err);
}

static int plan_landlock_alone(struct backend *b, const struct backend_input *in,
			       struct stepbox_err *err)
{
	int r = plan_none(b, in, err);
	b->layers.serve_shm =
		b->layers.supervise && !grants_covers(in->grants, "/dev/shm", GRANT_WRITE);
	return r < 0 ? r : plan_landlock(b, in, err);
}

static int plan_mountns(struct backend *b, const struct backend_input *in, struct stepbox_err *err)
{
	int r = plan_none(b, in, err);
	return r < 0 ? r : plan_ns(b, in, err);
}

static void release(struct backend *b)
{
	struct backend_built *l = b->built;
	if (!l)
		return;
	mountns_release(&l->mountns);
	if (l->ruleset >= 0)
		close(l->ruleset);
	if (l->net_ruleset >= 0)
		close(l->net_ruleset);
	free(l);
	b->built = NULL;
}

/* A bounded copy that allocates nothing (the command's process, before exec). */
static void put(char *to, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);
	memcpy(to, s, n);
	to[n] = '\0';
}

static int fail(struct backend_failure *why, int r, const char *detail, const char *hint)
{
	why->errnum = -r;
	put(why->detail, sizeof(why->detail), detail);
	put(why->hint, sizeof(why->hint), hint);
	return r;
}

/* In the init, after the maps are written: the new root, pivoted into. */
static int apply_root(const struct backend *b, struct backend_failure *why)
{
	const char *what = NULL, *path = NULL;
	bool refused = false;
	const struct mountns_plan *m = &b->built->mountns;
	int r = mountns_setup_root(m, &what, &path, &refused);
	/* no step needs it; root could enter it (its owner) */
	if (m->idmap_userns >= 0)
		close(m->idmap_userns);
	if (r < 0) {
		why->errnum = -r;
		why->layers = true;
		why->refused = refused;
		snprintf(why->detail, sizeof(why->detail), "cannot %s%s%s%s", what,
			 path ? " '" : "", path ? path : "", path ? "'" : "");
		if (r == -ELOOP)
			put(why->hint, sizeof(why->hint), PATH_LINK_APPEARED_HINT);
	}
	return r;
}

static const char enforce_hint[] = "try a lower STEPBOX_LANDLOCK_ABI, or check `stepbox check`";

/*
 * Stacked: the ruleset the parent built holds the grants (bind mounts share
 * the host's inodes); what the init mounted itself is new and gets its
 * rules here. The new root lists (its folders are only mount points), /proc
 * reads, the private devpts is a terminal, the private tmpfs are written.
 */
static int private_rules(const struct backend *b)
{
	const struct landlock_features *f = &b->host->features;
	const struct backend_built *l = b->built;
	int r = landlock_add_path(l->ruleset, f, "/", 0);
	for (size_t i = 0; r == 0 && i < l->mountns.n; i++) {
		const struct mountns_entry *e = &l->mountns.v[i];
		unsigned access = e->kind == MNT_PROC     ? GRANT_READ
				  : e->kind == MNT_DEVPTS ? GRANT_READ | GRANT_WRITE | GRANT_DEV
				  : e->kind == MNT_TMPFS  ? GRANT_READ | GRANT_WRITE | GRANT_EXEC
				  : e->kind == MNT_MQUEUE ? GRANT_READ | GRANT_WRITE
							  : 0;
		if (access)
			r = landlock_add_path(l->ruleset, f, e->path, access);
		if (r == -ENOENT && e->kind == MNT_MQUEUE)
			r = 0; /* not made: a host /dev granted whole has no place for it */
	}
	return r;
}

/*
 * Stacked: the init enters the Landlock domain itself (it holds
 * CAP_SYS_ADMIN in its namespace, so no no_new_privs is needed), and the
 * command inherits it: the domain's creator is then the process stepbox
 * knows, whose audit records --explain reads. The init keeps its
 * capabilities, so the command (with none) cannot trace it, and as a PID
 * namespace's init it ignores the command's signals.
 */
static int apply_stacked(const struct backend *b, enum backend_stage stage,
			 struct backend_failure *why)
{
	if (stage != BACKEND_IN_INIT)
		return 0;
	int r = apply_root(b, why);
	if (r == 0 && (r = private_rules(b)) < 0)
		return fail(why, r, "cannot add Landlock rules for the private mounts",
			    enforce_hint);
	if (r == 0 && (r = landlock_enforce(b->built->ruleset, b->built->restrict_flags)) < 0)
		return fail(why, r, "cannot enforce the Landlock ruleset", enforce_hint);
	return r;
}

/* Landlock alone: the command is the domain's creator (after no_new_privs). */
static int apply_landlock(const struct backend *b, enum backend_stage stage,
			  struct backend_failure *why)
{
	int r = stage == BACKEND_IN_COMMAND
			? landlock_enforce(b->built->ruleset, b->built->restrict_flags)
			: 0;
	return r < 0 ? fail(why, r, "cannot enforce the Landlock ruleset", enforce_hint) : 0;
}

static int apply_mountns(const struct backend *b, enum backend_stage stage,
			 struct backend_failure *why)
{
	return stage == BACKEND_IN_INIT ? apply_root(b, why) : 0;
}

static int apply_none(const struct backend *b, enum backend_stage stage,
		      struct backend_failure *why)
{
	(void)b;
	(void)stage;
	(void)why;
	return 0;
}

static int missing(const struct backend *b, struct strv *out)
{
	const struct landlock_features *f = &b->host->features;
	int r = 0;
	for (unsigned i = 0; b->layers.landlock && r == 0 && i < landlock_feature_count; i++) {
		const struct landlock_feature_info *fi = &landlock_feature_table[i];
		/* the supervisor gives unix-path on every ABI; PID and network
		 * namespaces and the supervisor give what scope would */
		if (fi->abi <= f->abi || fi->abi > LANDLOCK_ABI_KNOWN ||
		    (b->layers.ns && strcmp(fi->name, "scope") == 0))
			continue;
		r = strv_push(out, fi->name);
	}
	if (r == 0 && !b->layers.ns) {
		const char *const alone[] = {"private-proc", "private-tmp", "pid-namespace"};
		for (size_t i = 0; r == 0 && i < 3; i++)
			r = strv_push(out, alone[i]);
	}
	if (r == 0 && b->layers.outer_supervisor)
		r = strv_push(out, "own-supervisor");
	if (r == 0 && !b->layers.landlock) {
		const char *const alone[] = {"tcp", "per-right"};
		for (size_t i = 0; r == 0 && i < 2; i++)
			r = strv_push(out, alone[i]);
	}
	return r;
}

static int missing_none(const struct backend *b, struct strv *out)
{
	(void)b;
	return strv_push(out, "filesystem");
}

static void describe(const struct backend *b, char *buf, size_t cap)
{
	const struct landlock_features *f = &b->host->features;
	const struct backend_layers *l = &b->layers;
	struct strbuf sb;
	strbuf_init(&sb, buf, cap);
	strbuf_add(&sb, "%s: %s%s%s%s", policy_backend_name(b->name),
		   l->ns ? (l->userns ? "user, mount, PID and IPC namespaces"
				      : "mount, PID and IPC namespaces")
			 : "",
		   l->ns && l->landlock ? " + " : "", l->landlock ? "Landlock" : "",
		   l->outer_supervisor ? " + the outer sandbox's supervisor (nested: its rules "
					 "decide UNIX sockets and metadata)"
		   : !l->supervise     ? ""
		   : l->supervise_nofd
			   ? " + supervisor (without pidfd_getfd: connects re-made, UNIX "
			     "datagram sockets refused)"
			   : " + supervisor");
	if (l->landlock)
		strbuf_add(&sb, " (Landlock ABI %d, kernel %d)", f->abi, f->kernel_abi);
	if (l->serve_shm)
		strbuf_add(&sb, "; /dev/shm: a folder of the step's own, served by the supervisor");
	if (l->unbounded_sysv)
		strbuf_add(&sb, "; System V IPC refused (its limits cannot be set in this user "
				"namespace, and no cgroup bounds its memory)");
}

static const struct backend_ops stacked = {
	BACKEND_STACKED, probe_stacked, plan_stacked, apply_stacked, describe, missing, release,
};
static const struct backend_ops landlock = {
	BACKEND_LANDLOCK, probe_landlock, plan_landlock_alone, apply_landlock, describe,
	missing,          release,
};
static const struct backend_ops mountns = {
	BACKEND_MOUNTNS, probe_mountns, plan_mountns, apply_mountns, describe, missing, release,
};
static const struct backend_ops none = {
	BACKEND_NONE, probe_none, plan_none, apply_none, describe, missing_none, release,
};

/* auto tries them in this order; none only when asked for */
const struct backend_ops *const backend_table[] = {&stacked, &landlock, &mountns, &none, NULL};

int backend_none_usable(const struct backend_host *host, const struct stepbox_err *e, size_t n,
			struct stepbox_err *err)
{
	/* stacked fails for what one of the two alone fails for: say those two */
	const struct stepbox_err *ll = n > 1 ? &e[1] : &e[0], *ns = n > 2 ? &e[2] : ll;
	if (harden_gvisor()) {
		/* none of it an old kernel's or a setting's: no advice to change one */
		err_set(err, ERR_UNAVAILABLE, 0, "no sandbox backend under gVisor: %.300s; %.300s",
			ll->msg, ns->msg);
		err_hint(err,
			 "gVisor (runsc) gives no Landlock, no seccomp user notification (the "
			 "supervisor) and none of the mount calls the namespace layers build "
			 "the step's root with: run stepbox where Linux answers the step's "
			 "calls (a runc or crun container: Docker's, Podman's and containerd's "
			 "default runtime; or the host), docs/containers.md");
		return -EOPNOTSUPP;
	}
	err_set(err, ERR_UNAVAILABLE, 0, "no sandbox backend here: %.300s; %.300s", ll->msg,
		ns->msg);
	/*
	 * One cause under both (the supervisor), or a kernel that has Landlock
	 * (capped by STEPBOX_LANDLOCK_ABI, or refusing what the policy asks: a
	 * port list below ABI 4): that refusal's own hint, not how to get
	 * Landlock or the namespaces.
	 */
	if ((ll->errnum && ll->errnum == ns->errnum && strcmp(ll->hint, ns->hint) == 0 &&
	     strstr(ll->msg, "supervisor")) ||
	    host->features.kernel_abi > 0)
		err_hint(err, "%s", ll->hint);
	else
		err_hint(err,
			 "%s; or make user namespaces available for the namespace layers "
			 "(see `stepbox check`)",
			 landlock_hint(&host->features));
	return -EOPNOTSUPP;
}

int backend_not_here(enum policy_backend name, struct stepbox_err *err)
{
	err_set(err, ERR_UNAVAILABLE, 0, "the %s backend is macOS's", policy_backend_name(name));
	err_hint(err, "here: auto, stacked, landlock or mountns; `stepbox policy --format "
		      "sbpl` prints the profile a Mac would enforce");
	return -EOPNOTSUPP;
}

void backend_host_probe_all(struct backend_host *host)
{
	host->probe_ns = true;
}

int layers_fs_ruleset(const struct backend *b)
{
	return b->built && b->layers.landlock ? b->built->ruleset : -1;
}

bool layers_fs_refer(const struct backend *b)
{
	return b->layers.landlock && b->host->features.abi >= 2;
}

int layers_net_ruleset(const struct backend *b)
{
	return b->built ? b->built->net_ruleset : -1;
}

int layers_clone_flags(const struct backend *b)
{
	return b->layers.ns ? b->built->mountns.clone_flags : 0;
}

int layers_child_born(const struct backend *b, pid_t child, struct stepbox_err *err)
{
	return b->layers.ns ? mountns_write_maps(&b->built->mountns, child, err) : 0;
}

bool layers_clone_failed(const struct backend *b, int e, struct stepbox_err *err)
{
	if (!b->layers.ns) {
		err_set(err, ERR_UNAVAILABLE, e, "fork");
		return false;
	}
	mountns_unavailable(&b->built->mountns, e, err);
	/* the kernel's word on namespaces here; EAGAIN or ENOMEM (a sibling's
	 * fork bomb, memory) would make them as well a moment later */
	return e == EPERM || e == EACCES || e == ENOSPC || e == EUSERS || e == EINVAL ||
	       e == ENOSYS;
}

int layers_read_mounts(const struct backend *b, pid_t child, struct mountns_mounts *mm)
{
	memset(mm, 0, sizeof(*mm));
	return b->layers.ns ? mountns_read_mounts(&b->built->mountns, child, mm) : 0;
}

void layers_failure_hint(int errnum, const char *detail, struct stepbox_err *err)
{
	/* the causes the probe names (check), with the same words: the first mount
	 * of all refused, or the new procfs */
	bool first = strstr(detail, "make the mounts private") != NULL;
	if (errnum != EPERM || !(first || strstr(detail, "new /proc")))
		return;
	struct stepbox_err why = {0};
	if (first)
		mountns_mount_refused(EPERM, &why);
	else
		mountns_proc_failed(EPERM, &why);
	memcpy(err->hint, why.hint, sizeof(err->hint));
}
