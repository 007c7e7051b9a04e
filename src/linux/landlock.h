/*
 * landlock: the Landlock layer, alone (the landlock backend) or stacked on
 * the namespaces (stacked, auto's first choice). Probes the kernel's ABI
 * once, takes away the rights an older ABI lacks in one switch that falls
 * through from the oldest (as the kernel's sandboxer sample does), builds
 * the ruleset in the parent, and restricts the child.
 */
#ifndef STEPBOX_LANDLOCK_H
#define STEPBOX_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"
#include "grants.h"
#include "strv.h"

/* The newest ABI whose rights stepbox knows how to use. */
#define LANDLOCK_ABI_KNOWN 7

struct landlock_features {
	int kernel_abi;             /* what the kernel reports: <= 0 without Landlock */
	int kernel_errno;           /* why it is missing (ENOSYS, EOPNOTSUPP) */
	int abi;                    /* what stepbox uses: min(kernel, cap, known) */
	int cap;                    /* STEPBOX_LANDLOCK_ABI, or -1 */
	uint64_t fs;                /* handled filesystem rights */
	uint64_t net;               /* handled network rights */
	uint64_t scoped;            /* IPC scopes */
	uint32_t restrict_flags_ok; /* landlock_restrict_self flags this ABI takes */
};

/*
 * Probe the kernel and apply cap_text (STEPBOX_LANDLOCK_ABI, or NULL).
 * Returns 0 even without Landlock (f->abi is then 0); a cap that is not a
 * number from 0 to 99 is an error.
 */
int landlock_probe(struct landlock_features *f, const char *cap_text, struct stepbox_err *err);

/* Fill fs/net/scoped/restrict_flags_ok for f->abi: the one degradation switch. */
void landlock_degrade(struct landlock_features *f);

/* The Landlock rights a grant maps to under f, masked for a non-folder. */
uint64_t landlock_rights(const struct landlock_features *f, unsigned access, bool is_dir);

/*
 * Whether f can enforce cfg's network policy: "none" always can (seccomp
 * refuses every socket but AF_UNIX), TCP port lists need ABI 4.
 */
int landlock_check_net(const struct landlock_features *f, const struct stepbox_config *cfg,
		       struct stepbox_err *err);

/*
 * Create the ruleset for g and cfg's network policy in the calling (parent)
 * process. Returns an
 * O_CLOEXEC ruleset fd, or a negative errno with err naming the path.
 */
/*
 * What the step's TCP is held to: nothing (handled false), or the ports
 * listed (NULL: none).
 */
struct landlock_tcp {
	bool handled;
	const struct policy_ports *connect, *bind;
};

/*
 * The TCP rules cfg's network policy asks for. Network by name: the step's
 * own network namespace holds it (own_netns: TCP not handled, its loopback
 * is its own), else TCP connects only to the proxy's port (proxy_port,
 * written into *proxy, which must outlive *out).
 */
void landlock_tcp_of(const struct stepbox_config *cfg, bool own_netns, unsigned short proxy_port,
		     struct policy_ports *proxy, struct landlock_tcp *out);

int landlock_build(const struct landlock_features *f, const struct grants *g,
		   const struct stepbox_config *cfg, const struct landlock_tcp *tcp,
		   struct stepbox_err *err);

/*
 * A ruleset that handles only TCP, with tcp's port rules: what the supervisor
 * restricts itself with before it connects for the step. fd or -errno.
 */
int landlock_build_net(const struct landlock_features *f, const struct landlock_tcp *tcp,
		       struct stepbox_err *err);

/*
 * In the child, for a folder it mounted itself (a private procfs, devpts or
 * tmpfs): add a rule for access beneath path; access 0 allows listing only.
 * Allocates nothing. 0 or -errno.
 */
int landlock_add_path(int ruleset, const struct landlock_features *f, const char *path,
		      unsigned access);

/*
 * The network proxy's own confinement, for proxy_cfg.confine (it reads every
 * byte the step sends it): no file but what the resolver reads (/etc, /usr,
 * /lib, the folder resolv.conf links to), read-only; TCP connects only to
 * the ports the hosts name (80 and 443 for a name without one) and 53; no
 * bind; signals and abstract sockets scoped to itself. ctx: a struct landlock_proxy. In the proxy's
 * child, before it serves: 0 (also without Landlock, which leaves it as it
 * was), or -errno, and the proxy then does not serve.
 */
struct hostrules;
struct landlock_proxy {
	const struct landlock_features *f;
	const struct hostrules *allow;
};
int landlock_confine_proxy(void *ctx);

/* restrict_self flags that log denials after exec too, where the ABI has them. */
uint32_t landlock_log_flags(const struct landlock_features *f);

/* In the child, after no_new_privs: enforce. Returns 0 or -errno. */
int landlock_enforce(int ruleset_fd, uint32_t flags);

/* Human and JSON descriptions of what this kernel gives (stepbox check). */
void landlock_describe(FILE *out, const struct landlock_features *f);
/* Write the names of protections missing at f->abi, comma separated. */
void landlock_missing(const struct landlock_features *f, char *buf, size_t cap);

/* One line per ABI feature, for check and --report. */
struct landlock_feature_info {
	int abi;
	const char *name;
	const char *what;
};
extern const struct landlock_feature_info landlock_feature_table[];
extern const unsigned landlock_feature_count;

/*
 * Where a device file system (devtmpfs, devpts) is mounted on this host, /dev
 * and any other (a chroot's bind of /dev), from the text of
 * /proc/self/mountinfo: Landlock has no nodev, so a grant over one is walked
 * and its device nodes get no rule (grants_host.dev_mounts). 0, or -ENOMEM.
 */
int landlock_dev_mounts(const char *mountinfo, struct strv *out);

#endif
