/*
 * run.c's decisions at the layer plan's seam: which hardening each
 * backend's plan asks for, and when System V IPC is refused for want of
 * anything bounding it. The plans are the backends' own (their probes, on
 * this host), each checked beside the plan that decides the other way.
 */
#include <string.h>

#include "harden.h"
#include "run.h"
#include "tap.h"

static struct backend planned(enum policy_backend name, const struct backend_host *host)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	cfg.backend = name;
	struct backend b;
	struct stepbox_err err = {0};
	memset(&b, 0, sizeof(b));
	if (backend_choose(&cfg, host, &b, &err) < 0)
		printf("# %s: %s\n", policy_backend_name(name), err.msg);
	policy_release(&cfg);
	return b;
}

int main(void)
{
	struct backend_host host;
	struct stepbox_err err = {0};
	if (layers_host(&host, false, &err) < 0 || host.features.abi <= 0 || host.supervisor < 0) {
		printf("1..0 # SKIP no Landlock or supervisor here: %s\n", err.msg);
		return 0;
	}
	struct harden_opts o;
	/* stacked: the namespaces hold IPC and /dev/shm; nothing of Landlock alone's */
	struct backend st = planned(BACKEND_STACKED, &host);
	run_harden_opts(&st.layers, false, &o);
	CHECK(o.supervise && !o.supervise_alone && !o.refuse_sysv && !o.traced);
	/* landlock: the host's IPC refused, access(2) and /dev/shm served */
	struct backend ll = planned(BACKEND_LANDLOCK, &host);
	run_harden_opts(&ll.layers, true, &o);
	CHECK(o.supervise && o.supervise_alone && o.refuse_sysv && o.traced);
	/* mountns: namespaces without Landlock; not "alone" either */
	struct backend mn = planned(BACKEND_MOUNTNS, &host);
	run_harden_opts(&mn.layers, false, &o);
	CHECK(o.supervise && !o.supervise_alone && !o.refuse_sysv);
	/* nested: the outer supervisor holds the listener; ours is not asked */
	struct backend_layers nested = ll.layers;
	nested.supervise = false;
	nested.outer_supervisor = true;
	run_harden_opts(&nested, false, &o);
	CHECK(!o.supervise);
	/* the hardening each asks is a different notify filter */
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct harden hs, hl;
	run_harden_opts(&st.layers, false, &o);
	harden_prepare(&hs, &cfg, &o);
	run_harden_opts(&ll.layers, false, &o);
	harden_prepare(&hl, &cfg, &o);
	CHECK(hs.notify.len > 0 && hl.notify.len > 0 && hs.notify.filter != hl.notify.filter);
	CHECK(hs.n >= 1 && hl.n >= 1 && hs.filters[0].filter != hl.filters[0].filter);
	/* --explain under --net none: the socket refusals move to the supervisor's
	 * filter (where an ERRNO does not outrank them), and only where it runs */
	cfg.net = NET_NONE;
	run_harden_opts(&st.layers, false, &o);
	harden_prepare(&hs, &cfg, &o);
	o.explain_sockets = true;
	harden_prepare(&hl, &cfg, &o);
	CHECK(hs.filters[0].filter != hl.filters[0].filter && hs.notify.filter != hl.notify.filter);
	CHECK(hl.filters[0].len < hs.filters[0].len);
	o.supervise = false;
	harden_prepare(&hl, &cfg, &o);
	CHECK(hl.filters[0].filter == hs.filters[0].filter && hl.notify.len == 0);
	cfg.net = NET_ALLOW;
	/* System V IPC: refused in a user namespace with no memory cgroup, */
	struct limit_plan lp;
	memset(&lp, 0, sizeof(lp));
	struct backend_layers userns = {.ns = true, .userns = true};
	lp.how[LIMIT_MEMORY] = LIMIT_UNENFORCED;
	CHECK(run_sysv_unbounded(&userns, &lp));
	/* not where a cgroup charges it, */
	lp.how[LIMIT_MEMORY] = LIMIT_CGROUP;
	CHECK(!run_sysv_unbounded(&userns, &lp));
	/* nor where a root it maps sets its limits (no user namespace) */
	struct backend_layers root = {.ns = true, .userns = false};
	lp.how[LIMIT_MEMORY] = LIMIT_UNENFORCED;
	CHECK(!run_sysv_unbounded(&root, &lp));
	userns.unbounded_sysv = true;
	run_harden_opts(&userns, false, &o);
	harden_prepare(&hs, &cfg, &o);
	struct harden h0;
	userns.unbounded_sysv = false;
	run_harden_opts(&userns, false, &o);
	harden_prepare(&h0, &cfg, &o);
	CHECK(hs.filters[0].filter != h0.filters[0].filter);
	policy_release(&cfg);
	backend_release(&st);
	backend_release(&ll);
	backend_release(&mn);
	return tap_done();
}
