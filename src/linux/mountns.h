/*
 * mountns: the namespace layers. A mount, PID and IPC namespace (and a user
 * namespace when unprivileged, a network namespace for --net none), and a
 * new root on tmpfs holding only what is granted: each grant bind-mounted
 * with the flags its access allows, a private read-only procfs with the
 * host's sensitive entries masked, a private devpts, private size-capped
 * /tmp and /dev/shm, device nodes that cannot be changed. What is not
 * granted does not exist inside (ENOENT); read-only grants are read-only
 * mounts (EROFS), chmod and utimes included. The stacked backend adds
 * Landlock inside; mountns alone is for kernels without it.
 *
 * The mounts are planned in the parent from the grants (mountns_plan, pure)
 * and applied in the child (mountns_setup_root), so the plan is testable.
 */
#ifndef STEPBOX_MOUNTNS_H
#define STEPBOX_MOUNTNS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"
#include "grants.h"
#include "policy.h"
#include "strv.h"

enum mountns_kind {
	MNT_BIND,    /* the host's path, with flags from access */
	MNT_PROC,    /* a new procfs of the PID namespace, read-only */
	MNT_DEVPTS,  /* a new devpts instance */
	MNT_TMPFS,   /* a private, size-capped tmpfs (/tmp, /dev/shm) */
	MNT_MQUEUE,  /* the IPC namespace's POSIX message queues (/dev/mqueue) */
	MNT_MASK,    /* /dev/null over a file, an empty read-only tmpfs over a folder */
	MNT_HIDE,    /* an entry hidden from the sandbox in a folder bound whole: mode 0 */
	MNT_PIPE,    /* a named pipe in a read grant (cover_fifos): hidden, if one still */
	MNT_SYMLINK, /* a symlink to target, where nothing else is */
};

struct mountns_entry {
	enum mountns_kind kind;
	const char *path;   /* inside the new root; points into the grants or a constant */
	const char *target; /* MNT_SYMLINK */
	unsigned access;    /* MNT_BIND: the union of the grants on path */
	bool optional;      /* a read grant or mask that may have vanished: skip it */
	bool idmap;         /* MNT_BIND: through an idmapped mount (world_readable_only) */
};

struct mountns_plan {
	int clone_flags; /* CLONE_NEW* for this caller and policy */
	bool userns;     /* unprivileged: map our uid and gid */
	uid_t uid;       /* the caller's, mapped to itself */
	gid_t gid;
	int idmap_userns;  /* for idmap entries: mountns_idmap_userns's, not owned; or -1 */
	char *lock_path;   /* the persistent folder's lock, covered inside (persist.h) */
	struct strv fifos; /* named pipes hidden (cover_fifos): the entries' paths */
	/* read grants not searched whole for pipes, and the sentence for each */
	struct strv unsearched, unsearched_why;
	struct strv pins;        /* folders bound onto themselves (pin_persist): the paths */
	struct mountns_entry *v; /* mounts in path order, then symlinks */
	size_t n, nmounts;
	char tmpfs_opts[2][96]; /* private tmpfs: /tmp and /dev/shm, HOME */
	uint64_t tmp_bytes;     /* their size, and System V IPC's bound (0: none asked) */
};

/*
 * Decide the namespaces and the mounts for cfg, the grants g and the calling
 * user. 0 or -ENOMEM; release with mountns_release. With g NULL only the
 * namespaces are planned (a probe).
 */
int mountns_plan(struct mountns_plan *p, const struct stepbox_config *cfg, const struct grants *g);
void mountns_release(struct mountns_plan *p);
/*
 * Whether the namespaces come through a user namespace: for every caller but
 * root holding CAP_SYS_ADMIN (a container's root without it gets one too).
 */
bool mountns_userns(void);
/*
 * The size of each private tmpfs, in bytes (0: a quarter of RAM), with as
 * many inodes as pages (an empty file costs kernel memory too: 100,000 of
 * them in a 1 MiB /tmp held 123 MiB), and the IPC namespace's System V
 * shared memory and message queues bounded by the same (mountns_setup_root).
 */
void mountns_set_tmp_size(struct mountns_plan *p, uint64_t bytes);

/*
 * The mounts of a built namespace by what the step may do on them, by mount
 * id: write (a write grant's bind and the submounts it brought, the private
 * tmpfs and devpts) and unix (a unix_sockets bind). The supervisor judges an
 * object by the mount it lies on, never by a path the step can rename its
 * way around.
 */
struct mountns_mounts {
	int *write, *unix_, *all; /* all: every mount of the namespace */
	size_t nwrite, nunix, nall, capwrite, capunix, capall;
};

/*
 * Read init's mountinfo (before the command runs, so every mount point is
 * still where the plan put it). 0 or -errno; release with
 * mountns_mounts_release.
 */
int mountns_read_mounts(const struct mountns_plan *p, pid_t init, struct mountns_mounts *mm);
void mountns_mounts_release(struct mountns_mounts *mm);

/*
 * A user namespace for idmapped mounts on which no owner is mapped: every
 * file's owner and group are unmapped there, so only the permissions for
 * others apply, to root too (it holds no capability in the sandbox, and none
 * would count for an unmapped owner). Needs CAP_SYS_ADMIN over the file
 * system (root). Checked on a detached copy of probe, its submounts
 * included, so a file system that cannot be idmapped is found here. Returns
 * the namespace's fd (close-on-exec) and probe's device in *dev, or a
 * negative errno: the caller then walks what it would have idmapped.
 */
int mountns_idmap_userns(const char *probe, dev_t *dev);

/*
 * Whether this kernel lets the caller create the namespaces and mount a new
 * procfs in them (tried in a short-lived child and its PID 1). 0, or a negative errno with err
 * explaining what to change (sysctls, AppArmor) in its hint.
 */
int mountns_probe(const struct mountns_plan *p, struct stepbox_err *err);

/* Fill err for a new procfs the kernel refused with errno e (a masked /proc). */
int mountns_proc_failed(int e, struct stepbox_err *err);
/* The same for a new mount namespace that refuses mount() itself (an LSM). */
int mountns_mount_refused(int e, struct stepbox_err *err);

/* Fill err for namespaces that failed with errno e: what, and what to change. */
int mountns_unavailable(const struct mountns_plan *p, int e, struct stepbox_err *err);

/* In the parent, once the child exists: write its uid and gid maps. */
int mountns_write_maps(const struct mountns_plan *p, pid_t child, struct stepbox_err *err);

/*
 * In the cloned child (PID 1 of the new namespace), after the maps are
 * written: build the new root and pivot into it. Allocates, so it runs before
 * anything that needs a clean child. 0, or a negative errno and *what names
 * the step and *path the entry that failed (both static or from the plan).
 * *refused is set when the failure is one mountns_probe names: the host
 * refuses this namespace's own mounts (the first mount, a tmpfs, a new
 * procfs), whatever the grants. Any other failure (a grant's mount point
 * raced, a source gone) is a layer that could be made and was not: never a
 * reason to run with fewer layers.
 */
int mountns_setup_root(const struct mountns_plan *p, const char **what, const char **path,
		       bool *refused);

#endif
