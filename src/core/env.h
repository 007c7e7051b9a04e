/*
 * env: the environment a command gets, as one function of the config and
 * the grants (docs/environment.md), so that
 * `stepbox env` prints exactly what `run` passes to execve.
 */
#ifndef STEPBOX_ENV_H
#define STEPBOX_ENV_H

#include "err.h"
#include "grants.h"
#include "persist.h"
#include "policy.h"
#include "strv.h"

struct env_result {
	struct strv env;     /* NAME=VALUE, what execve gets */
	struct strv dropped; /* "NAME: reason" for inherited variables left out */
	struct strv dirs;    /* routed folders to create before the command */
	/* "~/NAME (what goes without it)": the dotfiles of HOME that tools read
	 * and no grant covers (none under --backend none, which hides nothing) */
	struct strv unseen;
	char *persist;  /* P, or NULL */
	char *run_base; /* R, or NULL */
};

/*
 * Build the child's environment from inherited (the caller's environ) in
 * order: base (inherited or --clean-env), secret-like and loader variables
 * dropped unless kept, routing into P or R, then explicit --env / env.set.
 * Returns 0 or a negative errno with err filled; release with env_release.
 */
int env_build(const struct stepbox_config *cfg, const struct grants *g, char *const *inherited,
	      struct env_result *out, struct stepbox_err *err);
void env_release(struct env_result *r);

/*
 * Create every routed folder (mkdir -p) without following a symlink: a
 * link on the way is refused with -ELOOP. 0 or -errno with err naming it.
 */
int env_prepare_dirs(const struct env_result *r, struct stepbox_err *err);

/*
 * What a step needs on disk before it starts, in this order: the grants'
 * folders (the workdir, write grants, the persistent folder), the workflow
 * cache's lock (this step's, or shared, before anything is made in it),
 * then the routed folders. 0, or -errno with err; the lock may be held on
 * failure (persist_unlock it).
 */
int env_prepare_step(const struct stepbox_config *cfg, const struct grants *g,
		     const struct env_result *r, struct persist_lock *lock,
		     struct stepbox_err *err);

/*
 * Network by name: point the step's clients at the proxy (url,
 * http://[stepbox:SECRET@]127.0.0.1:PORT), overriding whatever the caller
 * or the policy set: the proxy variables in both cases, the package
 * managers' own, and NO_PROXY. own_netns: the step's loopback is its own
 * (a network namespace), so loopback stays direct; else NO_PROXY is
 * cleared (nothing but the proxy is reachable). 0 or -ENOMEM.
 */
int env_set_proxy(struct env_result *r, const char *url, bool own_netns);

/* The value of name in a NAME=VALUE vector, or NULL. */
const char *env_get(char *const *env, const char *name);

/*
 * Why NAME=VALUE would be dropped from an inherited environment, or NULL: a
 * loader hook, a control socket locator, a secret-looking name, or a
 * secret-looking value (value may be NULL: the name alone is judged). The
 * reason is a static string naming the rule, never the value; the value is
 * read, never copied, stored or printed.
 */
const char *env_drop_reason(const char *name, const char *value);

/* Whether a routed folder's bin folder goes on PATH, and where. */
enum env_path { ENV_PATH_NONE, ENV_PATH_FIRST, ENV_PATH_NEXT };

/*
 * One routed variable, for the routing, PATH, doctor, docs and tests: every
 * row of env_routes (env.c) says all stepbox does with its variable.
 */
struct env_route {
	const char *name;
	const char *persist_sub; /* beneath P, or NULL: not routed with P */
	const char *run_sub;     /* beneath R, or NULL: not routed without P */
	/* beneath R when P is shared read-only (a cache), or NULL: stays in P */
	const char *shared_sub;
	/* its bin folder beneath where it is routed ("": the folder itself), or NULL */
	const char *bin;
	enum env_path path; /* whether bin goes on PATH, and where */
	/*
	 * A configuration file beneath P/config (R/.config) the variable names,
	 * unless a grant covers HOME's dotfile (or xdg_dotfile, when a grant
	 * covers the XDG config folder too); NULL: a folder route.
	 */
	const char *config, *dotfile, *xdg_dotfile;
	const char *tool;
};
extern const struct env_route env_routes[];

#endif
