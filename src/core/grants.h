/*
 * grants: turns a config into the list of canonical grants a backend
 * applies, each with the origin that asked for it. Pure apart from reading
 * the file tree under host->root, so `stepbox policy` prints what `run` uses
 * (grants.c, grants_walk.c, grants_baseline.c; grants_int.h between them).
 * Making the folders a step's grants name is grants_prepare_dirs' alone.
 */
#ifndef STEPBOX_GRANTS_H
#define STEPBOX_GRANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"
#include "policy.h"
#include "strv.h"

/* Access bits; a backend maps them to its own rights. */
#define GRANT_READ 1u  /* read files, list folders */
#define GRANT_EXEC 2u  /* execute files */
#define GRANT_WRITE 4u /* write, create, delete, rename, truncate beneath */
#define GRANT_DEV 8u   /* ioctl on the device nodes beneath */
/*
 * Made anew by the namespace layers, never the host's: a private procfs,
 * devpts or tmpfs mounted at the path. Landlock gets no rule for the host's
 * path; the child adds one for what it mounted.
 */
#define GRANT_PRIVATE 16u
/* Connect to the pathname UNIX sockets beneath (unix_sockets, --unix): nothing else. */
#define GRANT_CONNECT 32u

enum grant_origin {
	ORIGIN_BASELINE,
	ORIGIN_BASELINE_TARGET, /* canonical target of an explicit /etc entry */
	ORIGIN_EXTRA,           /* SANDBOX_EXTRA_SYSTEM_PATHS */
	ORIGIN_BROWSER,         /* AGENT_BROWSER_EXECUTABLE_PATH's folder */
	ORIGIN_POLICY,
	ORIGIN_FLAG,
	ORIGIN_WORKDIR,
	ORIGIN_PERSISTENT,
};

struct grant {
	char *path;      /* canonical, absolute in the sandbox's view */
	char *requested; /* as asked for, before resolution */
	unsigned access;
	enum grant_origin origin;
	bool exists; /* false only for a workdir or persistent folder to create */
	/*
	 * Only what others may read is open beneath it (root's /etc under the
	 * namespaces): bound through an idmapped mount on which every owner is
	 * unmapped, so the kernel's own permission check hides the rest and
	 * nothing is walked. See grants_host.idmap.
	 */
	bool world_readable_only;
	/*
	 * has_fd: fd is an O_PATH descriptor on it from its resolution (a read
	 * grant, when grants_host.open_fds asked), so its Landlock rule needs no
	 * second lookup; grants_close_fds closes them.
	 */
	bool has_fd, fd_dir;
	int fd;
};

struct grant_skip {
	char *path;
	enum grant_origin origin;
	char *reason;
	bool missing; /* asked for, and not there (or not resolvable) when resolved */
};

/*
 * A folder a read grant covered that holds entries hidden from the sandbox
 * (root's /etc): its world-readable entries are granted one by one. The
 * namespaces bind it whole and cover the hidden entries instead.
 */
struct grant_split {
	char *path;
	unsigned access;
};

/* A symlink in a folder split on the way to /etc (-r /). */
struct grant_link {
	char *path;
	char *target; /* as readlink(2) gives it */
};

struct grants {
	struct grant *v;
	size_t n, cap;
	/*
	 * Symlinks of folders split on the way to /etc: Landlock needs no rule
	 * for them (access is decided on the target, and a rule would follow
	 * the link), but a mount namespace must recreate them.
	 */
	struct grant_link *links;
	size_t nlinks, caplinks;
	struct grant_split *splits;
	size_t nsplits, capsplits;
	bool bind_entries;          /* grants_host.bind_entries: links holds a split folder's too */
	struct grant_skip *skipped; /* dropped allows, each with why */
	size_t nskipped, capskipped;
	char *workdir; /* canonical */
	char *persist; /* canonical persistent folder, or NULL */
	/*
	 * The protected paths in the write grants that exist when the step
	 * starts (protect_places, filled by run before the plan): the
	 * namespaces bind each read-only, and the folders between it and its
	 * write grant (pins) onto themselves, so none can be renamed away.
	 */
	struct strv protected_ro, protected_pins;
};

/* What grants_build reads from the host, passed in so tests can fake it. */
struct grants_host {
	const char *root;        /* "/" in a real run; a fake tree in unit tests */
	const char *cwd;         /* default workdir */
	const char *extra_paths; /* SANDBOX_EXTRA_SYSTEM_PATHS, or NULL */
	const char *browser_exe; /* AGENT_BROWSER_EXECUTABLE_PATH, or NULL */
	/*
	 * The caller's HOME, which is never a workdir or write grant itself
	 * unless allow_broad_grants; NULL reads $HOME, "" names none.
	 */
	const char *home;
	/*
	 * Every read grant that covers /etc or lies in it shows only its
	 * world-readable entries (a grant naming a hidden entry exactly gets
	 * it); set when the sandboxed user is root or has groups.
	 */
	bool hide_etc_secrets;
	/*
	 * The namespaces can bind a folder through an idmapped mount that leaves
	 * only its world-readable entries open (mountns_idmap_userns worked):
	 * such read grants are granted whole, world_readable_only, instead of
	 * walked entry by entry at every launch, when they lie on idmap_dev
	 * (the file system the idmap was tried on).
	 */
	bool idmap;
	dev_t idmap_dev;
	bool keep_links; /* record symlinks of split folders (mountns needs them) */
	/*
	 * The namespaces without Landlock: a split folder (root's walked /etc)
	 * is bound entry by entry, its symlinks recreated, rather than whole
	 * with its secrets covered (a secret the host replaces or adds while
	 * the step runs would be in the bind, uncovered).
	 */
	bool bind_entries;
	bool open_fds;   /* keep read grants' O_PATH fds (struct grant.fd): Landlock */
	bool namespaces; /* the namespace layers run: private /proc, /dev/pts, /dev/shm, /tmp */
	const char *const *ttys; /* Landlock alone: the step's own terminal(s), NULL-terminated */
	/* Landlock alone: where device file systems are mounted besides /dev (a
	 * chroot's bind of it), walked as /dev is; NULL-terminated, or NULL */
	const char *const *dev_mounts;
	/*
	 * The caller's own cgroup folders (v2, and v1's memory and cpu),
	 * NULL-terminated: read-only, so node and pnpm find their memory and CPU
	 * limits. Never a root cgroup, which would show every other one.
	 */
	const char *const *cgroups;
};

/*
 * Build the effective grants for cfg. Returns 0, or a negative errno with err
 * filled: a missing write path, two persistent folders, an unresolvable
 * path; a workdir or write grant that is /, a top-level system folder or
 * HOME itself, unless cfg->allow_broad_grants; a grant of any origin whose
 * resolution goes through a symlink lying in a write grant, the writable
 * workdir or the persistent folder (a previous step may have planted it).
 * On success the caller owns out and frees it with grants_release.
 */
int grants_build(const struct stepbox_config *cfg, const struct grants_host *host,
		 struct grants *out, struct stepbox_err *err);
/* Close the fds the grants hold (struct grant.has_fd), if any: before a fork. */
void grants_close_fds(struct grants *g);

void grants_release(struct grants *g);

/*
 * Whether some grant allows every bit of access on the host's canonical path
 * (a private place of the namespaces covers none of the host's paths).
 */
bool grants_covers(const struct grants *g, const char *path, unsigned access);
/* /, a top-level system folder (/usr, /etc, /var...) or one beneath: never a step's to write. */
bool grants_system_folder(const char *path);

/*
 * Whether the folder dir holds what looks like keys or credentials, by name
 * (id_ed25519, credentials, .netrc, *.pem, *.key...): a grant of it hands
 * them over, where one of its files, named, would not. false when unlisted.
 */
bool grants_holds_keys(const char *dir);
/* name is a key's or a credential file's (id_ed25519, .netrc, *.pem...). */
bool grants_key_name(const char *name);
/*
 * path lies in a tool that installs itself in HOME, shims and all (pyenv,
 * nvm, rustup...): who installed it, and its root in root; NULL when not, or
 * when home is NULL. One file of it is a grant that leads to the next denial.
 */
const char *grants_home_tool(const char *path, const char *home, char *root, size_t cap);

/*
 * path is hidden from the sandbox on purpose: the walk left it out, or it
 * lies beneath a world_readable_only grant and is not open to others.
 */
bool grants_hidden(const struct grants *g, const char *path);

/*
 * grants_dirs.c, the one part that writes: create the workdir and the
 * persistent folder (0700, with CACHEDIR.TAG) without following any
 * symlink: one met on the way is an error naming it. An existing
 * CACHEDIR.TAG (or anything by that name) is left alone.
 */
int grants_prepare_dirs(const struct grants *g, struct stepbox_err *err);

/* Whether the host decides that /etc secrets must be hidden: root, or groups. */
bool grants_should_hide_etc(void);

const char *grants_origin_name(enum grant_origin o);
/* "r", "rx", "rw", "rwx", with "+dev" for device ioctls. */
const char *grants_access_name(unsigned access);

#endif
