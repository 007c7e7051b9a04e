#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * Where each tool writes, routed through the tool's own variable (HOME never
 * changes, so config lookups keep working). docs/environment.md says why each
 * variable was chosen. Incident 2 routed the first five into the run folder;
 * incident 3 moved installs into the workflow's persistent folder P.
 */
const struct env_route env_routes[] = {
	{"PYTHONUSERBASE", "python", ".local", "pip --user"},
	{"PIP_CACHE_DIR", "pip", ".cache/pip", "pip"},
	{"XDG_CACHE_HOME", "cache", ".cache", "XDG caches"},
	{"npm_config_cache", "npm", ".cache/npm", "npm"},
	/* without P, -g installs into R/.local, whose bin is already on PATH */
	{"npm_config_prefix", "npm-global", ".local", "npm install -g"},
	{"GOPATH", "go", NULL, "go"},
	{"GOCACHE", "go/cache", NULL, "go build cache"},
	{"CARGO_HOME", "cargo", NULL, "cargo"},
	{"RUSTUP_HOME", "rustup", NULL, "rustup"},
	{"PIPX_HOME", "pipx", NULL, "pipx"},
	{"PIPX_BIN_DIR", "bin", NULL, "pipx"},
	{"UV_CACHE_DIR", "uv/cache", NULL, "uv"},
	{"UV_TOOL_DIR", "uv/tools", NULL, "uv tool"},
	{"UV_TOOL_BIN_DIR", "bin", NULL, "uv tool"},
	{"UV_PYTHON_INSTALL_DIR", "uv/python", NULL, "uv python"},
	{"YARN_CACHE_FOLDER", "yarn/cache", NULL, "yarn"},
	{"YARN_GLOBAL_FOLDER", "yarn/berry", NULL, "yarn berry"},
	{"PNPM_HOME", "pnpm", NULL, "pnpm"},
	{"BUN_INSTALL", "bun", NULL, "bun"},
	{"BUN_INSTALL_CACHE_DIR", "bun/cache", NULL, "bun"},
	{"GEM_HOME", "gem", NULL, "gem"},
	{"GEM_SPEC_CACHE", "gem/specs", NULL, "gem"},
	{"GRADLE_USER_HOME", "gradle", NULL, "gradle"},
	{"DENO_DIR", "deno", NULL, "deno cache"},
	{"DENO_INSTALL_ROOT", "deno", NULL, "deno install"},
	{"PLAYWRIGHT_BROWSERS_PATH", "ms-playwright", NULL, "playwright"},
	{"TMPDIR", NULL, ".tmp", "scratch (never in P)"},
	{NULL, NULL, NULL, NULL},
};

/* P's bin folders, leading PATH in this order (DESIGN.md first, then ours). */
static const char *const persist_bins[] = {
	"bin", "python/bin", "npm-global/bin", "go/bin", "cargo/bin",
	"pnpm", "bun/bin", "gem/bin", "deno/bin", NULL,
};

/* Kept by --clean-env. */
static const char *const clean_keep[] = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TZ",
					 NULL};

static const char *const secret_words[] = {"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL",
					   NULL};

const char *env_drop_reason(const char *name)
{
	static const char *const reasons[] = {
		"name looks secret (*KEY*)", "name looks secret (*SECRET*)",
		"name looks secret (*TOKEN*)", "name looks secret (*PASSWORD*)",
		"name looks secret (*CREDENTIAL*)",
	};
	if (strcmp(name, "LD_PRELOAD") == 0 || strcmp(name, "LD_AUDIT") == 0)
		return "loader hook";
	/*
	 * A credential agent's socket lets the step sign in as the caller, and
	 * Landlock below ABI 9 does not control connecting to a socket path.
	 */
	if (strcmp(name, "SSH_AUTH_SOCK") == 0 || strcmp(name, "GPG_AGENT_INFO") == 0)
		return "credential agent socket";
	for (size_t i = 0; secret_words[i]; i++)
		if (strcasestr(name, secret_words[i]))
			return reasons[i];
	return NULL;
}

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
static int base_env(const struct stepbox_config *cfg, char *const *inherited,
		    struct env_result *r)
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
			why = env_drop_reason(name);
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
 * the first such write grant; never inside P, where scratch would pile up.
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
	if (wd_ok && !(g->persist && is_beneath(g->workdir, g->persist)))
		return g->workdir;
	return first;
}

static int route(struct env_result *r, const char *P, const char *R)
{
	int rc = 0;
	for (size_t i = 0; env_routes[i].name && rc == 0; i++) {
		const struct env_route *rt = &env_routes[i];
		const char *base, *sub;
		if (P && rt->persist_sub) {
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
		/* npm reads npm_config_* case-insensitively: no upper-case rival */
		if (rc == 0 && strncmp(rt->name, "npm_config_", 11) == 0) {
			for (size_t k = 0; k < r->env.n;) {
				const char *e = r->env.v[k];
				size_t nl = strcspn(e, "=");
				if (nl == strlen(rt->name) && strncasecmp(e, rt->name, nl) == 0 &&
				    strncmp(e, rt->name, nl) != 0) {
					rc = note_drop(r, e, "would override the routed npm setting");
					remove_at(&r->env, k);
					continue;
				}
				k++;
			}
		}
		free(val);
	}
	if (rc < 0)
		return rc;
	rc = set_var(&r->env, "PIP_BREAK_SYSTEM_PACKAGES", "1");
	if (rc < 0)
		return rc;

	/* PATH: the routed bin folders first */
	const char *old = env_get(r->env.v, "PATH");
	char *path = strdup("");
	for (size_t i = 0; P && persist_bins[i] && path; i++) {
		char *n = strv_fmt("%s%s/%s:", path, P, persist_bins[i]);
		free(path);
		path = n;
	}
	if (!P && path) {
		char *n = strv_fmt("%s/.local/bin:", R);
		free(path);
		path = n;
	}
	char *full = path ? strv_fmt("%s%s", path, old ? old : "/usr/local/bin:/usr/bin:/bin") : NULL;
	free(path);
	if (!full)
		return -ENOMEM;
	rc = set_var(&r->env, "PATH", full);
	free(full);
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
			rc = route(out, P, R);
	}
	/*
	 * TCP port lists refuse UDP, so DNS can only work over TCP: when port 53
	 * is allowed, glibc's resolver is told to use it (RES_OPTIONS use-vc).
	 */
	bool dns53 = false;
	for (unsigned i = 0; cfg->net == NET_TCP && i < cfg->connect_tcp.n; i++)
		dns53 |= cfg->connect_tcp.v[i] == 53;
	if (rc == 0 && dns53) {
		const char *ro = env_get(out->env.v, "RES_OPTIONS");
		char *v = ro && *ro ? strv_fmt("%s use-vc", ro) : strdup("use-vc");
		rc = v ? set_var(&out->env, "RES_OPTIONS", v) : -ENOMEM;
		free(v);
	}
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
	strv_release(&r->dirs);
	free(r->persist);
	free(r->run_base);
	memset(r, 0, sizeof(*r));
}

int env_prepare_dirs(const struct env_result *r, struct stepbox_err *err)
{
	for (size_t i = 0; i < r->dirs.n; i++) {
		int rc = grants_mkdir_p(r->dirs.v[i], 0755);
		if (rc < 0)
			return err_set(err, ERR_UNAVAILABLE, -rc, "create routed folder '%s'",
				       r->dirs.v[i]);
	}
	return 0;
}
