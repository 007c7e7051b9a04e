#include "backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grants.h"
#include "mountns.h"
#include "supervise.h"

void backend_layers(enum policy_backend name, struct backend *b)
{
	memset(b, 0, sizeof(*b));
	b->name = name;
	if (name == BACKEND_NONE || name == BACKEND_AUTO)
		return;
	b->ns = name == BACKEND_STACKED || name == BACKEND_MOUNTNS;
	b->landlock = name == BACKEND_STACKED || name == BACKEND_LANDLOCK;
	/* no kernel stepbox knows limits pathname UNIX sockets (Landlock ABI 9) */
	b->supervise = true;
	b->refuse_sysv = !b->ns;
}

const char *backend_abi_cap(void)
{
	const char *cap = getenv("STEPBOX_LANDLOCK_ABI");
	return cap && *cap ? cap : NULL; /* empty: no cap, the most protection */
}

int backend_probe_ns(const struct stepbox_config *cfg, struct stepbox_err *err)
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
		snprintf(buf, cap, "this kernel has no Landlock (%s)", strerror(f->kernel_errno));
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
		return "Landlock needs Linux 5.13 or newer built with CONFIG_SECURITY_LANDLOCK "
		       "(gVisor has none)";
	}
}

/*
 * The layers of name are usable here, in *out (with how the supervisor
 * works); err says which is not, and why. The
 * namespaces are tried for real in a child only with probe_ns: a run makes
 * them anyway, and a failure there falls back as this would (run.c).
 */
static int usable(enum policy_backend name, const struct stepbox_config *cfg,
		  const struct landlock_features *f, bool probe_ns, struct backend *out,
		  struct stepbox_err *err)
{
	backend_layers(name, out);
	const struct backend b = *out;
	if (b.landlock && f->abi <= 0) {
		char why[128];
		landlock_why(f, why, sizeof(why));
		err_set(err, ERR_UNAVAILABLE, 0, "%s: %s", policy_backend_name(name), why);
		/* the kernel has it, and only the cap hides it: say that, not how to boot */
		if (f->kernel_abi > 0)
			err_hint(err, "unset STEPBOX_LANDLOCK_ABI (or raise it) to use this "
				      "kernel's Landlock ABI %d; the mountns backend works without "
				      "Landlock", f->kernel_abi);
		else
			err_hint(err, "%s; the mountns backend works without it (`stepbox check` "
				      "says what this host can run)", landlock_hint(f));
		return -EOPNOTSUPP;
	}
	struct stepbox_err e = {0};
	int sup = b.supervise ? supervise_probe(&e) : 0;
	/* how the supervisor works here: SUPERVISE_NO_GETFD is not a failure */
	out->supervise_nofd = sup == SUPERVISE_NO_GETFD;
	if (sup < 0) {
		/* e.msg says its errno already */
		err_set(err, ERR_UNAVAILABLE, 0, "%s: the supervisor cannot run: %s",
			policy_backend_name(name), e.msg);
		err->errnum = e.errnum;
		err_hint(err, "%s", e.hint);
		return -EOPNOTSUPP;
	}
	if (b.ns && probe_ns && backend_probe_ns(cfg, &e) < 0) {
		/* e.msg says its errno already */
		err_set(err, ERR_UNAVAILABLE, 0, "%s: %s", policy_backend_name(name), e.msg);
		err->errnum = e.errnum;
		err_hint(err, "%s", e.hint);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* What cfg asks that the layers of b cannot give: never silently less. */
static int check_policy(const struct backend *b, const struct stepbox_config *cfg,
			const struct landlock_features *f, struct stepbox_err *err)
{
	if (b->landlock)
		return landlock_check_net(f, cfg, err);
	if (b->name == BACKEND_MOUNTNS && cfg->net == NET_TCP) {
		/* no port filter without Landlock, and never silently none */
		err_set(err, ERR_UNAVAILABLE, 0,
			"the mountns backend cannot enforce a TCP port policy");
		err_hint(err, "port lists need Landlock (ABI 4): the stacked or landlock backend; "
			      "mountns gives --net none (a network namespace) or --net allow");
		return -EOPNOTSUPP;
	}
	return 0;
}

int backend_choose(const struct stepbox_config *cfg, const struct landlock_features *f,
		   bool probe_ns, struct backend *b, struct stepbox_err *err)
{
	if (cfg->backend == BACKEND_SEATBELT) {
		backend_layers(BACKEND_NONE, b);
		err_set(err, ERR_UNAVAILABLE, 0, "the seatbelt backend is macOS's");
		err_hint(err, "here: auto, stacked, landlock or mountns; `stepbox policy --format "
			      "sbpl` prints the profile a Mac would enforce");
		return -EOPNOTSUPP;
	}
	if (cfg->backend != BACKEND_AUTO) {
		backend_layers(cfg->backend, b);
		int r = cfg->backend == BACKEND_NONE ? 0
						     : usable(cfg->backend, cfg, f, probe_ns, b, err);
		return r < 0 ? r : check_policy(b, cfg, f, err);
	}
	/* strongest first; each refusal is kept to say why nothing ran */
	static const enum policy_backend order[] = {BACKEND_STACKED, BACKEND_LANDLOCK,
						    BACKEND_MOUNTNS};
	char why[3][700];
	struct stepbox_err e[3];
	for (size_t i = 0; i < 3; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		if (usable(order[i], cfg, f, probe_ns, b, &e[i]) == 0)
			return check_policy(b, cfg, f, err);
		snprintf(why[i], sizeof(why[i]), "%.600s", e[i].msg);
	}
	backend_layers(BACKEND_NONE, b);
	err_set(err, ERR_UNAVAILABLE, 0, "no sandbox backend here: %.300s; %.300s", why[1], why[2]);
	/* one cause under both (the supervisor): its own hint, not Landlock's or the namespaces' */
	if (e[1].errnum && e[1].errnum == e[2].errnum && strcmp(e[1].hint, e[2].hint) == 0 &&
	    strstr(e[1].msg, "supervisor"))
		err_hint(err, "%s", e[1].hint);
	else
		err_hint(err, "%s; or make user namespaces available for the namespace layers "
			      "(see `stepbox check`)", landlock_hint(f));
	return -EOPNOTSUPP;
}

int backend_missing(const struct backend *b, const struct landlock_features *f,
		    struct strv *out)
{
	int r = 0;
	if (b->name == BACKEND_NONE)
		return strv_push(out, "filesystem");
	for (unsigned i = 0; b->landlock && r == 0 && i < landlock_feature_count; i++) {
		const struct landlock_feature_info *fi = &landlock_feature_table[i];
		/* the supervisor gives unix-path on every ABI; PID and network
		 * namespaces and the supervisor give what scope would */
		if (fi->abi <= f->abi || fi->abi > LANDLOCK_ABI_KNOWN ||
		    (b->ns && strcmp(fi->name, "scope") == 0))
			continue;
		r = strv_push(out, fi->name);
	}
	if (r == 0 && !b->ns) {
		const char *const alone[] = {"private-proc", "private-tmp", "pid-namespace"};
		for (size_t i = 0; r == 0 && i < 3; i++)
			r = strv_push(out, alone[i]);
	}
	if (r == 0 && !b->landlock) {
		const char *const alone[] = {"tcp", "per-right"};
		for (size_t i = 0; r == 0 && i < 2; i++)
			r = strv_push(out, alone[i]);
	}
	return r;
}

void backend_describe(const struct backend *b, const struct landlock_features *f, char *buf,
		      size_t cap)
{
	snprintf(buf, cap, "%s: %s%s%s%s", policy_backend_name(b->name),
		 b->ns ? (geteuid() ? "user, mount, PID and IPC namespaces" :
				      "mount, PID and IPC namespaces")
		       : "",
		 b->ns && b->landlock ? " + " : "", b->landlock ? "Landlock" : "",
		 !b->supervise ? ""
		 : b->supervise_nofd ? " + supervisor (without pidfd_getfd: connects re-made, UNIX "
				       "datagram sockets refused)"
				     : " + supervisor");
	if (b->landlock) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, " (Landlock ABI %d, kernel %d)", f->abi, f->kernel_abi);
	}
}
