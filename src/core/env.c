#include "env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canon.h"
#include "path.h"

/*
 * Where each tool writes, routed through the tool's own variable (HOME never
 * changes, so config lookups keep working). docs/environment.md says why each
 * variable was chosen. Incident 2 routed the first five into the run folder;
 * incident 3 moved installs into the workflow's persistent folder P. One row
 * per variable: a new package manager is one row here (and its line in
 * docs/environment.md).
 *
 * shared: with P shared (read-only in this step), what tools write while
 * they only use what is installed goes to R instead, there.
 *
 * bin, path: P's bin folders lead PATH, P/bin first (docs/environment.md)
 * (ENV_PATH_FIRST), then ours in the table's order (ENV_PATH_NEXT); without
 * P, the bin folder beneath R (R/.local/bin) where the row routes to R.
 *
 * config, dotfile, xdg_dotfile: user-level configuration (route_config),
 * a file beneath P/config (R/.config), read and written in place of HOME's
 * dotfile, unless a grant covers the dotfile (or xdg_dotfile, where a grant
 * covers the XDG config folder too).
 */
#define NONE NULL, NULL, NULL
const struct env_route env_routes[] = {
	{"PYTHONUSERBASE", "python", ".local", NULL, "bin", ENV_PATH_NEXT, NONE, "pip --user"},
	{"PIP_CACHE_DIR", "pip", ".cache/pip", ".cache/pip", NULL, 0, NONE, "pip"},
	{"XDG_CACHE_HOME", "cache", ".cache", ".cache", NULL, 0, NONE, "XDG caches"},
	{"npm_config_cache", "npm", ".cache/npm", ".cache/npm", NULL, 0, NONE, "npm"},
	/* without P, -g installs into R/.local, whose bin is already on PATH */
	{"npm_config_prefix", "npm-global", ".local", NULL, "bin", ENV_PATH_NEXT, NONE,
	 "npm install -g"},
	{"GOPATH", "go", NULL, NULL, "bin", ENV_PATH_NEXT, NONE, "go"},
	{"GOCACHE", "go/cache", NULL, ".cache/go-build", NULL, 0, NONE, "go build cache"},
	{"CARGO_HOME", "cargo", NULL, NULL, "bin", ENV_PATH_NEXT, NONE, "cargo"},
	{"RUSTUP_HOME", "rustup", NULL, NULL, NULL, 0, NONE, "rustup"},
	{"PIPX_HOME", "pipx", NULL, NULL, NULL, 0, NONE, "pipx"},
	{"PIPX_BIN_DIR", "bin", NULL, NULL, "", ENV_PATH_FIRST, NONE, "pipx"},
	{"UV_CACHE_DIR", "uv/cache", NULL, ".cache/uv", NULL, 0, NONE, "uv"},
	{"UV_TOOL_DIR", "uv/tools", NULL, NULL, NULL, 0, NONE, "uv tool"},
	{"UV_TOOL_BIN_DIR", "bin", NULL, NULL, "", ENV_PATH_FIRST, NONE, "uv tool"},
	{"UV_PYTHON_INSTALL_DIR", "uv/python", NULL, NULL, NULL, 0, NONE, "uv python"},
	{"YARN_CACHE_FOLDER", "yarn/cache", NULL, ".cache/yarn", NULL, 0, NONE, "yarn"},
	{"YARN_GLOBAL_FOLDER", "yarn/berry", NULL, NULL, NULL, 0, NONE, "yarn berry"},
	{"PNPM_HOME", "pnpm", NULL, NULL, "", ENV_PATH_NEXT, NONE, "pnpm"},
	/*
	 * pnpm 11 and later (its Rust CLI) keep the store by the project's
	 * mount unless told: the workdir and P are separate mounts under the
	 * namespaces, so it went into the run folder and was lost with it
	 */
	{"pnpm_config_store_dir", "pnpm/store", NULL, NULL, NULL, 0, NONE, "pnpm store"},
	{"BUN_INSTALL", "bun", NULL, NULL, "bin", ENV_PATH_NEXT, NONE, "bun"},
	{"BUN_INSTALL_CACHE_DIR", "bun/cache", NULL, ".cache/bun", NULL, 0, NONE, "bun"},
	{"GEM_HOME", "gem", NULL, NULL, "bin", ENV_PATH_NEXT, NONE, "gem"},
	{"GEM_SPEC_CACHE", "gem/specs", NULL, ".cache/gem-specs", NULL, 0, NONE, "gem"},
	{"GRADLE_USER_HOME", "gradle", NULL, NULL, NULL, 0, NONE, "gradle"},
	{"DENO_DIR", "deno", NULL, NULL, NULL, 0, NONE, "deno cache"},
	{"DENO_INSTALL_ROOT", "deno", NULL, NULL, "bin", ENV_PATH_NEXT, NONE, "deno install"},
	{"PLAYWRIGHT_BROWSERS_PATH", "ms-playwright", NULL, NULL, NULL, 0, NONE, "playwright"},
	{"TMPDIR", NULL, ".tmp", NULL, NULL, 0, NONE, "scratch (never in P)"},
	/*
	 * the per-user runtime folder, where locks go whatever TMPDIR says
	 * (pnpm's store locks, else in /tmp: not writable under Landlock
	 * alone); the caller's, in /run/user, is not the step's
	 */
	{"XDG_RUNTIME_DIR", NULL, ".tmp/run", NULL, NULL, 0, NONE, "runtime folder (never in P)"},
	{"GIT_CONFIG_GLOBAL", NULL, NULL, NULL, NULL, 0, "git/config", ".gitconfig",
	 ".config/git/config", "git config --global"},
	{"npm_config_userconfig", NULL, NULL, NULL, NULL, 0, "npmrc", ".npmrc", NULL,
	 "npm config set"},
	{NULL, NULL, NULL, NULL, NULL, 0, NONE, NULL},
};
#undef NONE

/* Kept by --clean-env. */
static const char *const clean_keep[] = {"PATH", "HOME", "USER", "LOGNAME",
					 "LANG", "TERM", "TZ",   NULL};

const char *env_get(char *const *env, const char *name)
{
	size_t nl = strlen(name);
	for (; env && *env; env++)
		if (strncmp(*env, name, nl) == 0 && (*env)[nl] == '=')
			return *env + nl + 1;
	return NULL;
}

static long find(const struct strv *sv, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < sv->n; i++)
		if (strncmp(sv->v[i], name, nl) == 0 && sv->v[i][nl] == '=')
			return (long)i;
	return -1;
}

static void remove_at(struct strv *sv, size_t i)
{
	free(sv->v[i]);
	memmove(&sv->v[i], &sv->v[i + 1], (sv->n - i) * sizeof(char *));
	sv->n--;
}

static int set_var(struct strv *sv, const char *name, const char *value)
{
	char *e = strv_fmt("%s=%s", name, value);
	if (!e)
		return -ENOMEM;
	long i = find(sv, name);
	if (i >= 0) {
		free(sv->v[i]);
		sv->v[i] = e;
		return 0;
	}
	return strv_push_owned(sv, e);
}

/*
 * The variables the step's clients read for a proxy: the conventional ones
 * in both cases (curl reads only http_proxy for plain HTTP, wget only the
 * lowercase ones), and those of the tools that prefer their own
 * (docs/network.md lists who reads which).
 */
static const char *const proxy_vars[] = {
	"HTTP_PROXY",
	"HTTPS_PROXY",
	"ALL_PROXY",
	"http_proxy",
	"https_proxy",
	"all_proxy",
	"npm_config_proxy",
	"npm_config_https_proxy",
	"YARN_HTTP_PROXY",
	"YARN_HTTPS_PROXY",
	"PIP_PROXY",
	"CARGO_HTTP_PROXY",
	"GLOBAL_AGENT_HTTP_PROXY",
};

/* Ways around it a caller's variables would open: they go. */
static const char *const proxy_unset[] = {
	"npm_config_noproxy", "YARN_NO_PROXY", "GLOBAL_AGENT_NO_PROXY",
	"GIT_PROXY_COMMAND",  "PIP_NO_PROXY",
};

int env_set_proxy(struct env_result *r, const char *url, bool own_netns)
{
	const char *direct = own_netns ? "localhost,127.0.0.1,::1" : "";
	int e = 0;
	for (size_t i = 0; e == 0 && i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
		e = set_var(&r->env, proxy_vars[i], url);
	for (size_t i = 0; i < sizeof(proxy_unset) / sizeof(proxy_unset[0]); i++) {
		long k = find(&r->env, proxy_unset[i]);
		if (k >= 0)
			remove_at(&r->env, (size_t)k);
	}
	if (e == 0)
		e = set_var(&r->env, "NO_PROXY", direct);
	if (e == 0)
		e = set_var(&r->env, "no_proxy", direct);
	/* Node's own fetch and http read the variables only when asked (Node 22.21, 24.5) */
	if (e == 0)
		e = set_var(&r->env, "NODE_USE_ENV_PROXY", "1");
	return e;
}

static int note_drop(struct env_result *r, const char *entry, const char *why)
{
	size_t nl = strcspn(entry, "=");
	return strv_push_owned(&r->dropped, strv_fmt("%.*s: %s", (int)nl, entry, why));
}

static bool kept_by_clean(const char *entry)
{
	if (strncmp(entry, "LC_", 3) == 0)
		return true;
	size_t nl = strcspn(entry, "=");
	for (size_t i = 0; clean_keep[i]; i++)
		if (strlen(clean_keep[i]) == nl && strncmp(entry, clean_keep[i], nl) == 0)
			return true;
	return false;
}

static bool explicitly_set(const struct stepbox_config *cfg, const char *name)
{
	return find(&cfg->env_set, name) >= 0 || strv_find(&cfg->env_keep, name) >= 0;
}

/* The inherited base, minus what --clean-env, the secret filter and unset drop. */
static int base_env(const struct stepbox_config *cfg, char *const *inherited, struct env_result *r)
{
	for (char *const *e = inherited; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (!eq || eq == *e)
			continue;
		char name[256];
		size_t nl = (size_t)(eq - *e);
		if (nl >= sizeof(name))
			continue;
		memcpy(name, *e, nl);
		name[nl] = '\0';
		int rc = 0;
		const char *why = NULL;
		if (find(&r->env, name) >= 0)
			continue; /* the first of duplicate entries is what getenv sees */
		if (cfg->clean_env && !kept_by_clean(*e) && strv_find(&cfg->env_keep, name) < 0)
			why = "--clean-env";
		else if (strv_find(&cfg->env_unset, name) >= 0)
			why = "unset by --unset or env.unset";
		else if (!explicitly_set(cfg, name))
			why = env_drop_reason(name, eq + 1);
		rc = why ? note_drop(r, *e, why) : strv_push(&r->env, *e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static bool is_beneath(const char *path, const char *dir)
{
	size_t dl = strlen(dir);
	return strcmp(dir, "/") == 0 ||
	       (strncmp(path, dir, dl) == 0 && (path[dl] == '\0' || path[dl] == '/'));
}

/*
 * R: the workdir when it lies inside a write grant the step asked for, else
 * the first such write grant; never inside P, where scratch would pile up,
 * and never the root (a workdir of / with allow_broad_grants: its folders
 * would be made in the host's /, and a user but root could not make them).
 */
static const char *run_base(const struct grants *g)
{
	const char *first = NULL;
	bool wd_ok = false;
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		bool mine = gr->origin == ORIGIN_POLICY || gr->origin == ORIGIN_FLAG ||
			    gr->origin == ORIGIN_WORKDIR;
		if (!mine || !(gr->access & GRANT_WRITE))
			continue;
		if (g->persist && is_beneath(gr->path, g->persist))
			continue;
		if (!first && gr->origin != ORIGIN_WORKDIR)
			first = gr->path;
		if (is_beneath(g->workdir, gr->path))
			wd_ok = true;
	}
	if (wd_ok && strcmp(g->workdir, "/") != 0 &&
	    !(g->persist && is_beneath(g->workdir, g->persist)))
		return g->workdir;
	return first;
}

/*
 * npm reads npm_config_* case-insensitively, and pnpm pnpm_config_*: no
 * upper-case rival of a routed name.
 */
static int drop_npm_rivals(struct env_result *r, const char *name)
{
	if (strncmp(name, "npm_config_", 11) != 0 && strncmp(name, "pnpm_config_", 12) != 0)
		return 0;
	for (size_t k = 0; k < r->env.n;) {
		const char *e = r->env.v[k];
		size_t nl = strcspn(e, "=");
		if (nl == strlen(name) && strncasecmp(e, name, nl) == 0 &&
		    strncmp(e, name, nl) != 0) {
			int rc = note_drop(r, e, "would override the routed npm setting");
			remove_at(&r->env, k);
			if (rc < 0)
				return rc;
			continue;
		}
		k++;
	}
	return 0;
}

/* Is name set, in any case (npm's way)? */
static bool has_any_case(const struct strv *env, const char *name)
{
	size_t len = strlen(name);
	for (size_t k = 0; k < env->n; k++)
		if (strncasecmp(env->v[k], name, len) == 0 && env->v[k][len] == '=')
			return true;
	return false;
}

/*
 * The bin folder of env_routes row rt, beneath P, or beneath R without P
 * (R/.local/bin); NULL for none, or on ENOMEM (*nomem set).
 */
static char *bin_folder(const struct env_route *rt, const char *P, const char *R, bool *nomem)
{
	const char *base = P ? P : R, *sub = P ? rt->persist_sub : rt->run_sub;
	if (!rt->bin || !sub)
		return NULL;
	char *d = strv_fmt("%s/%s%s%s", base, sub, rt->bin[0] ? "/" : "", rt->bin);
	*nomem |= !d;
	return d;
}

/* PATH: the routed bin folders first, each once, in env_routes' order. */
static int route_path(struct env_result *r, const char *P, const char *R)
{
	struct strv bins = {0};
	bool nomem = false;
	for (enum env_path rank = ENV_PATH_FIRST; rank <= ENV_PATH_NEXT; rank++) {
		for (size_t i = 0; env_routes[i].name && !nomem; i++) {
			char *d = env_routes[i].path == rank
					  ? bin_folder(&env_routes[i], P, R, &nomem)
					  : NULL;
			if (d && strv_find(&bins, d) < 0)
				nomem |= strv_push_owned(&bins, d) < 0;
			else
				free(d);
		}
	}
	const char *old = env_get(r->env.v, "PATH");
	char *path = nomem ? NULL : strdup("");
	for (size_t i = 0; i < bins.n && path; i++) {
		char *n = strv_fmt("%s%s:", path, bins.v[i]);
		free(path);
		path = n;
	}
	strv_release(&bins);
	char *full =
		path ? strv_fmt("%s%s", path, old ? old : "/usr/local/bin:/usr/bin:/bin") : NULL;
	free(path);
	if (!full)
		return -ENOMEM;
	int rc = set_var(&r->env, "PATH", full);
	free(full);
	return rc;
}

static int route(struct env_result *r, const char *P, const char *R, bool shared)
{
	int rc = 0;
	for (size_t i = 0; env_routes[i].name && rc == 0; i++) {
		const struct env_route *rt = &env_routes[i];
		const char *base, *sub;
		if (P && shared && R && rt->shared_sub) {
			base = R;
			sub = rt->shared_sub;
		} else if (P && rt->persist_sub) {
			base = P;
			sub = rt->persist_sub;
		} else if (R && rt->run_sub) {
			base = R;
			sub = rt->run_sub;
		} else {
			continue;
		}
		char *val = strv_fmt("%s/%s", base, sub);
		if (!val)
			return -ENOMEM;
		rc = set_var(&r->env, rt->name, val);
		if (rc == 0 && strv_find(&r->dirs, val) < 0)
			rc = strv_push(&r->dirs, val);
		if (rc == 0)
			rc = drop_npm_rivals(r, rt->name);
		free(val);
	}
	if (rc < 0)
		return rc;
	rc = set_var(&r->env, "PIP_BREAK_SYSTEM_PACKAGES", "1");
	if (rc == 0)
		rc = route_path(r, P, R);
	if (rc == 0 && P) {
		rc = set_var(&r->env, "SANDBOX_PERSISTENT_DIR", P);
		const char *mo = env_get(r->env.v, "MAVEN_OPTS");
		char *m = strv_fmt("%s%s-Dmaven.repo.local=%s/maven/repository", mo ? mo : "",
				   mo && *mo ? " " : "", P);
		rc = rc ? rc : m ? set_var(&r->env, "MAVEN_OPTS", m) : -ENOMEM;
		free(m);
	}
	return rc;
}

/* Whether a grant lets the step read HOME/rel (canonically: HOME may be a link). */
static bool home_granted(const struct grants *g, const char *home, const char *rel)
{
	char *canon = NULL, *path = strv_fmt("%s/%s", home, rel);
	bool exists, yes = path && canon_path("/", path, &canon, &exists) == 0 &&
			   grants_covers(g, canon, GRANT_READ);
	free(path);
	free(canon);
	return yes;
}

/* Under the namespaces HOME is a private place of the step's own. */
static bool home_private(const struct grants *g, const char *home)
{
	char *canon = NULL;
	bool exists, yes = false;
	if (canon_path("/", home, &canon, &exists) == 0)
		for (size_t i = 0; i < g->n; i++)
			yes |= (g->v[i].access & GRANT_PRIVATE) &&
			       path_beneath(canon, g->v[i].path);
	free(canon);
	return yes;
}

static bool home_has(const char *home, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;
	return snprintf(path, sizeof(path), "%s/%s", home, rel) < (int)sizeof(path) &&
	       lstat(path, &st) == 0;
}

static int set_if_unset(struct strv *env, const char *name, const char *value)
{
	return env_get(env->v, name) ? 0 : set_var(env, name, value);
}

/* The prefix npm computes for itself: the folder above node's own (/usr for /usr/bin/node). */
static char *npm_own_prefix(const char *path)
{
	for (const char *p = path; p && *p;) {
		size_t len = strcspn(p, ":");
		char *cand = strv_fmt("%.*s/node", (int)len, p), real[PATH_MAX];
		bool found = cand && len && p[0] == '/' && access(cand, X_OK) == 0 &&
			     realpath(cand, real);
		free(cand);
		if (found) {
			char *slash = strrchr(real, '/');
			*slash = '\0';
			slash = strrchr(real, '/');
			if (slash)
				*slash = '\0';
			return strdup(real[0] ? real : "/");
		}
		p += len;
		p += *p == ':';
	}
	return NULL;
}

/*
 * The dotfiles everyday tools read from HOME, and what goes without one the
 * sandbox keeps from the step: nothing in the step says why (git: "unable
 * to auto-detect email address"), so stepbox does (-v, --explain, the
 * report, doctor), and a deployment hands over those it means to
 * (--home-file), never a secret by accident.
 */
static const struct {
	const char *name, *breaks;
} home_dotfiles[] = {
	{".gitconfig", "git commits carry no identity of the user's"},
	{".config/git/config", "git commits carry no identity of the user's"},
	{".npmrc", "the user's npm registry and its login are not used"},
	{".yarnrc", "the user's yarn settings are not used"},
	{".ssh/config", "ssh does not know the user's host aliases"},
	{".config/pip/pip.conf", "the user's pip index settings are not used"},
	{".pip/pip.conf", "the user's pip index settings are not used"},
	{".cargo/config.toml", "the user's cargo settings are not used"},
	{".gemrc", "the user's gem settings are not used"},
	{".netrc", "logins that curl and git read from it are not used"},
};

static int note_unseen(struct env_result *r, const struct grants *g, const char *home)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof(home_dotfiles) / sizeof(home_dotfiles[0]); i++)
		if (home_has(home, home_dotfiles[i].name) &&
		    !home_granted(g, home, home_dotfiles[i].name))
			rc = strv_push_owned(&r->unseen,
					     strv_fmt("~/%s (%s)", home_dotfiles[i].name,
						      home_dotfiles[i].breaks));
	return rc;
}

/*
 * env_routes' configuration files, beneath base (P/config, R/.config), or
 * /dev/null with nowhere to write (the tools read an empty file instead of
 * the user's): not where a grant covers the user's own.
 */
static int route_config_files(struct env_result *r, const struct grants *g, const char *home,
			      const char *base, bool xdg_granted)
{
	int rc = 0;
	for (size_t i = 0; env_routes[i].name && rc == 0; i++) {
		const struct env_route *rt = &env_routes[i];
		if (!rt->config || (home && (home_granted(g, home, rt->dotfile) ||
					     (xdg_granted && rt->xdg_dotfile &&
					      home_granted(g, home, rt->xdg_dotfile)))))
			continue;
		char *file = base ? strv_fmt("%s/%s", base, rt->config) : strdup("/dev/null");
		rc = file ? set_var(&r->env, rt->name, file) : -ENOMEM;
		if (rc == 0)
			rc = drop_npm_rivals(r, rt->name);
		free(file);
	}
	return rc;
}

/* base, and the folders of env_routes' configuration files beneath it, to create. */
static int config_dirs(struct env_result *r, const char *base)
{
	int rc = strv_find(&r->dirs, base) < 0 ? strv_push(&r->dirs, base) : 0;
	for (size_t i = 0; env_routes[i].name && rc == 0; i++) {
		const char *slash =
			env_routes[i].config ? strrchr(env_routes[i].config, '/') : NULL;
		if (!slash)
			continue;
		char *dir = strv_fmt("%s/%.*s", base, (int)(slash - env_routes[i].config),
				     env_routes[i].config);
		rc = !dir ? -ENOMEM : strv_find(&r->dirs, dir) < 0 ? strv_push(&r->dirs, dir) : 0;
		free(dir);
	}
	return rc;
}

/*
 * Where tools keep their user-level configuration. Reads and writes land in
 * P/config (else R/.config), so `git config --global`, `npm config set` and
 * `pip config set` persist for the workflow, and the dotfiles in HOME are
 * never opened (under Landlock alone they are there but unreadable, which
 * git, cargo and yarn take as fatal). A file of HOME that a grant covers
 * (-r ~/.gitconfig, the user's identity handed over on purpose) is read as
 * usual. System-wide configuration is never moved: with npm's prefix
 * routed, its globalconfig stays the etc/npmrc of npm's own prefix (a
 * registry mirror's cafile lives there). Where nothing is enforced
 * (--backend none) the user's files are readable: routing would hide them,
 * and routing changes where tools write, never what they read, so the
 * configuration stays as it is there.
 */
static int route_config(struct env_result *r, const struct grants *g, const char *P, const char *R,
			bool enforced)
{
	const char *home = env_get(r->env.v, "HOME");
	if (!home || home[0] != '/')
		home = NULL;
	if (enforced && home) {
		int rc = note_unseen(r, g, home);
		if (rc < 0)
			return rc;
	}
	/* nowhere to write: the tools read an empty file instead of the user's */
	char *base = P ? strv_fmt("%s/config", P) : R ? strv_fmt("%s/.config", R) : NULL;
	int rc = (P || R) && !base ? -ENOMEM : 0;
	const char *xdg = env_get(r->env.v, "XDG_CONFIG_HOME");
	bool xdg_granted = xdg && xdg[0] == '/' ? home_granted(g, xdg, ".")
						: home && home_granted(g, home, ".config");
	if (rc == 0 && enforced && !xdg_granted && base)
		rc = set_var(&r->env, "XDG_CONFIG_HOME", base);
	/* the same for the data tools keep (gem --user-install, uv, pipx's older homes) */
	const char *xdata = env_get(r->env.v, "XDG_DATA_HOME");
	bool data_granted = xdata && xdata[0] == '/'
				    ? home_granted(g, xdata, ".")
				    : home && home_granted(g, home, ".local/share");
	char *share = P ? strv_fmt("%s/share", P) : R ? strv_fmt("%s/.local/share", R) : NULL;
	if (rc == 0 && (P || R) && !share)
		rc = -ENOMEM;
	if (rc == 0 && share && !data_granted) {
		rc = set_var(&r->env, "XDG_DATA_HOME", share);
		if (rc == 0 && strv_find(&r->dirs, share) < 0)
			rc = strv_push(&r->dirs, share);
	}
	free(share);
	if (rc == 0 && enforced)
		rc = route_config_files(r, g, home, base, xdg_granted);
	if (rc == 0 && env_get(r->env.v, "npm_config_prefix") &&
	    !has_any_case(&r->env, "npm_config_globalconfig")) {
		char *prefix = npm_own_prefix(env_get(r->env.v, "PATH"));
		char *gc =
			prefix ? strv_fmt("%s/etc/npmrc", strcmp(prefix, "/") ? prefix : "") : NULL;
		if (gc)
			rc = set_var(&r->env, "npm_config_globalconfig", gc);
		free(prefix);
		free(gc);
	}
	/*
	 * Landlock alone leaves the user's dotfiles in place but unreadable, and
	 * cargo's libgit2 reads ~/.gitconfig whatever GIT_CONFIG_GLOBAL says and
	 * takes EACCES as fatal: cargo fetches with the git command instead
	 * (which honours it) and `cargo new` makes no repository. Under the
	 * namespaces HOME is private, and nothing needs to change.
	 */
	if (rc == 0 && enforced && home && !home_private(g, home) &&
	    !home_granted(g, home, ".gitconfig") &&
	    (home_has(home, ".gitconfig") || home_has(home, ".config/git/config"))) {
		rc = set_if_unset(&r->env, "CARGO_NET_GIT_FETCH_WITH_CLI", "true");
		if (rc == 0)
			rc = set_if_unset(&r->env, "CARGO_CARGO_NEW_VCS", "none");
	}
	if (rc == 0 && base)
		rc = config_dirs(r, base);
	free(base);
	return rc;
}

int env_build(const struct stepbox_config *cfg, const struct grants *g, char *const *inherited,
	      struct env_result *out, struct stepbox_err *err)
{
	memset(out, 0, sizeof(*out));
	int rc = base_env(cfg, inherited, out);
	const char *R = run_base(g);
	const char *P = g->persist;
	if (rc == 0 && (P || R)) {
		out->persist = P ? strdup(P) : NULL;
		out->run_base = R ? strdup(R) : NULL;
		if ((P && !out->persist) || (R && !out->run_base))
			rc = -ENOMEM;
		else
			rc = route(out, P, R, cfg->persist_shared);
	}
	if (rc == 0)
		rc = route_config(out, g, P, R, cfg->backend != BACKEND_NONE || cfg->plan_only);
	/*
	 * TCP port lists refuse UDP, so DNS can only work over TCP: when port 53
	 * is allowed, glibc's resolver is told to use it (RES_OPTIONS use-vc).
	 */
	bool dns53 = false;
	for (unsigned i = 0; cfg->net == NET_TCP && i < cfg->connect_tcp.n; i++)
		dns53 |= cfg->connect_tcp.v[i] == 53;
	if (rc == 0 && dns53) {
		const char *ro = env_get(out->env.v, "RES_OPTIONS");
		/* and to give up in seconds where the resolver does not answer over
		 * TCP, never the minute npm waited on EAI_AGAIN */
		char *v = ro && *ro ? strv_fmt("%s use-vc timeout:2 attempts:1", ro)
				    : strdup("use-vc timeout:2 attempts:1");
		rc = v ? set_var(&out->env, "RES_OPTIONS", v) : -ENOMEM;
		free(v);
	}
	/* the shell's working folder is the step's: a stale PWD (the caller's
	 * folder, absent in the step) costs a lookup and misleads */
	if (rc == 0 && g->workdir)
		rc = set_var(&out->env, "PWD", g->workdir);
	/* explicit values win over routing */
	for (size_t i = 0; rc == 0 && i < cfg->env_set.n; i++) {
		const char *e = cfg->env_set.v[i];
		size_t nl = strcspn(e, "=");
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)nl, e);
		rc = set_var(&out->env, name, e + nl + 1);
	}
	if (rc < 0) {
		env_release(out);
		return err_set(err, ERR_USAGE, -rc, "build the environment");
	}
	if (!out->env.v) /* execve wants a vector, even an empty one */
		rc = strv_push(&out->env, "PATH=/usr/local/bin:/usr/bin:/bin");
	return rc < 0 ? err_set(err, ERR_USAGE, -rc, "build the environment") : 0;
}

void env_release(struct env_result *r)
{
	strv_release(&r->env);
	strv_release(&r->dropped);
	strv_release(&r->unseen);
	strv_release(&r->dirs);
	free(r->persist);
	free(r->run_base);
	memset(r, 0, sizeof(*r));
}

int env_prepare_dirs(const struct env_result *r, struct stepbox_err *err)
{
	for (size_t i = 0; i < r->dirs.n; i++) {
		const char *d = r->dirs.v[i];
		char bad[PATH_MAX];
		/*
		 * P and R are folders earlier steps could write: a link planted
		 * there (P/python -> /root/.ssh) must not make stepbox, with the
		 * caller's rights, create folders wherever it points.
		 */
		/* a runtime folder is its user's alone (XDG Base Directory) */
		const char *run = env_get(r->env.v, "XDG_RUNTIME_DIR");
		int fd = path_mkdir_nofollow(d, run && !strcmp(run, d) ? 0700 : 0755, bad,
					     sizeof(bad));
		if (fd == -ELOOP) {
			err_set(err, ERR_UNAVAILABLE, 0,
				"cannot create routed folder '%s': '%s' is a symbolic link", d,
				bad);
			err_hint(err,
				 "remove the link '%s' (an earlier step may have made it); "
				 "stepbox never follows a link where it creates folders",
				 bad);
			return -ELOOP;
		}
		if (fd < 0 && bad[0] && strcmp(bad, d) != 0)
			return err_set(err, ERR_UNAVAILABLE, -fd,
				       "cannot create routed folder '%s' at '%s'", d, bad);
		if (fd < 0)
			return err_set(err, ERR_UNAVAILABLE, -fd,
				       "cannot create routed folder '%s'", d);
		close(fd);
	}
	return 0;
}

int env_prepare_step(const struct stepbox_config *cfg, const struct grants *g,
		     const struct env_result *r, struct persist_lock *lock, struct stepbox_err *err)
{
	int rc = grants_prepare_dirs(g, err);
	if (rc == 0 && g->persist)
		rc = persist_lock(lock, g->persist, cfg->persist_shared, cfg->persist_wait_s,
				  cfg->verbosity < 0, err);
	return rc == 0 ? env_prepare_dirs(r, err) : rc;
}
