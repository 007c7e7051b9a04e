/*
 * grants_int.h: what the files of grants_build share, and no other module
 * sees. grants.c holds the build, the grant list and what the grants cover;
 * grants_walk.c the walks of /etc (root's secrets hidden) and /dev (device
 * nodes left out); grants_baseline.c what stepbox grants of its own (the
 * baseline, SANDBOX_EXTRA_SYSTEM_PATHS, the browser, HOME). The gb_ prefix
 * marks a function private to them.
 */
#ifndef STEPBOX_GRANTS_INT_H
#define STEPBOX_GRANTS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "canon.h"
#include "grants.h"
#include "strv.h"

#define RX (GRANT_READ | GRANT_EXEC)
#define DEVRW (GRANT_READ | GRANT_WRITE | GRANT_DEV)

#define ETC_MAX_DEPTH 32
#define ETC_MAX_ENTRIES 200000

/* A place the step may write, where a previous step may have planted symlinks. */
struct wloc {
	char *path;       /* canonical */
	const char *what; /* "write grant", "workdir", "persistent folder" */
	bool writable;    /* by this step (a shared persistent folder is read-only to it) */
};

struct wlocs {
	struct wloc *v; /* sorted by path once complete */
	size_t n, cap;
};

/* The state of one grants_build: what every resolution is checked against. */
struct build {
	struct grants *g;
	const struct grants_host *host;
	const struct stepbox_config *cfg;
	struct stepbox_err *err;
	size_t budget;          /* entries the walks may still visit */
	char *etc;              /* canonical /etc */
	struct strv devs;       /* canonical /dev and the other device mounts (walks_dev) */
	bool devices;           /* the walk leaves out device nodes, not secrets */
	bool yields;            /* the walk adds nothing in a place the step writes */
	char *home, *home_norm; /* canonical and normalized HOME, or NULL */
	struct wlocs all;       /* every write location (a browser inside is covered) */
	struct wlocs check;     /* those a crossed symlink must not lie in */
	const char *req;        /* the grant being resolved, for messages */
	enum grant_origin origin;
	bool refused;     /* err holds a refusal that must reach the caller as is */
	struct strv dirs; /* real folders resolution has met (canon_memo) */
	size_t fds_left;  /* read grants' fds it may still hold (grants_host.open_fds) */
};

/* grants.c */

/* Takes ownership of path and requested. */
int gb_add(struct grants *g, char *path, char *requested, unsigned access, enum grant_origin origin,
	   bool exists);
/* Say why path (as asked) gets no grant. */
int gb_skip(struct grants *g, const char *path, enum grant_origin origin, const char *why);
bool gb_world_readable(const struct stat *st);
/* The location in l that holds path (path itself or one of its folders), or NULL. */
const struct wloc *gb_holder(const struct wlocs *l, const char *path);
/* Resolve req as the caller, refusing a crossed symlink in a write location. */
int gb_resolve(struct build *b, const char *req, enum grant_origin origin, char **canon,
	       bool *exists, struct canon_fd *held);
/* / is not one; /usr, /etc... themselves are. */
bool gb_system_top(const char *path);
/* Grant one requested path after resolving it (grants.c says how). */
int gb_add_requested(struct build *b, const char *req, unsigned access, enum grant_origin origin,
		     bool create);

/* grants_walk.c */

/* Whether canon, a resolved grant with access, is walked rather than one rule. */
bool gb_walked(const struct build *b, const char *canon, unsigned access);
/* Grant path showing only what others may read: 1 whole, 0 split or left out, -errno. */
int gb_add_world_readable(struct build *b, int dfd, const char *name, const char *path,
			  const char *req, unsigned access, enum grant_origin origin,
			  unsigned char type);
/* A grant gb_walked() says to walk; takes ownership of canon. */
int gb_add_walked(struct build *b, char *canon, const char *req, unsigned access,
		  enum grant_origin origin);

/* grants_baseline.c */

int gb_add_baseline(struct build *b);
/* SANDBOX_EXTRA_SYSTEM_PATHS and AGENT_BROWSER_EXECUTABLE_PATH's folder. */
int gb_add_extras(struct build *b);
int gb_add_home_files(struct build *b);
int gb_add_home(struct build *b);

#endif
