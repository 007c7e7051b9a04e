#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "tap.h"

static struct grants g;

static void grant(const char *path, unsigned access, enum grant_origin o)
{
	g.v = realloc(g.v, (g.n + 1) * sizeof(*g.v));
	g.v[g.n++] = (struct grant){strdup(path), strdup(path), access, o, true};
}

#define W (GRANT_READ | GRANT_WRITE | GRANT_EXEC)

static char *const inherited[] = {
	"PATH=/usr/bin:/bin", "HOME=/home/u", "AWS_SECRET_ACCESS_KEY=s", "GITHUB_TOKEN=t",
	"db_password=p", "MY_CREDENTIALS=c", "LD_PRELOAD=/x.so", "LANG=C", "LC_ALL=C",
	"NPM_CONFIG_PREFIX=/usr/local", "NPM_CONFIG_CACHE=/root/.npm", "FOO=bar", "FOO=second",
	"PIP_FIND_LINKS=/opt/wheels", "MAVEN_OPTS=-Xmx1g", NULL,
};

static struct env_result build(struct stepbox_config *cfg)
{
	struct env_result r;
	struct stepbox_err err;
	if (env_build(cfg, &g, inherited, &r, &err) < 0)
		printf("# env_build: %s\n", err.msg);
	return r;
}

static bool dropped(const struct env_result *r, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < r->dropped.n; i++)
		if (strncmp(r->dropped.v[i], name, nl) == 0 && r->dropped.v[i][nl] == ':')
			return true;
	return false;
}

int main(void)
{
	struct stepbox_config cfg;
	policy_init(&cfg);

	/* with the persistent folder P and the run folder R */
	g.workdir = strdup("/wf/runs/1");
	g.persist = strdup("/wf/.sandbox-cache");
	grant("/usr", GRANT_READ | GRANT_EXEC, ORIGIN_BASELINE);
	grant("/dev/shm", GRANT_READ | GRANT_WRITE, ORIGIN_BASELINE);
	grant("/wf/.sandbox-cache", W, ORIGIN_PERSISTENT);
	grant("/wf/runs/1", W, ORIGIN_WORKDIR);
	struct env_result r = build(&cfg);
	char *const *e = r.env.v;
	CHECK_STR(env_get(e, "PIP_BREAK_SYSTEM_PACKAGES"), "1");
	CHECK_STR(env_get(e, "PYTHONUSERBASE"), "/wf/.sandbox-cache/python");
	CHECK_STR(env_get(e, "PIP_CACHE_DIR"), "/wf/.sandbox-cache/pip");
	CHECK_STR(env_get(e, "XDG_CACHE_HOME"), "/wf/.sandbox-cache/cache");
	CHECK_STR(env_get(e, "npm_config_cache"), "/wf/.sandbox-cache/npm");
	CHECK_STR(env_get(e, "npm_config_prefix"), "/wf/.sandbox-cache/npm-global");
	CHECK_STR(env_get(e, "GOPATH"), "/wf/.sandbox-cache/go");
	CHECK_STR(env_get(e, "GOCACHE"), "/wf/.sandbox-cache/go/cache");
	CHECK_STR(env_get(e, "CARGO_HOME"), "/wf/.sandbox-cache/cargo");
	CHECK_STR(env_get(e, "PIPX_HOME"), "/wf/.sandbox-cache/pipx");
	CHECK_STR(env_get(e, "PIPX_BIN_DIR"), "/wf/.sandbox-cache/bin");
	CHECK_STR(env_get(e, "UV_TOOL_BIN_DIR"), "/wf/.sandbox-cache/bin");
	CHECK_STR(env_get(e, "TMPDIR"), "/wf/runs/1/.tmp"); /* never in P */
	CHECK_STR(env_get(e, "SANDBOX_PERSISTENT_DIR"), "/wf/.sandbox-cache");
	CHECK_STR(env_get(e, "HOME"), "/home/u"); /* never changed */
	CHECK_HAS(env_get(e, "PATH"),
		  "/wf/.sandbox-cache/bin:/wf/.sandbox-cache/python/bin:"
		  "/wf/.sandbox-cache/npm-global/bin:/wf/.sandbox-cache/go/bin:"
		  "/wf/.sandbox-cache/cargo/bin:");
	CHECK(strstr(env_get(e, "PATH"), ":/usr/bin:/bin") != NULL);
	CHECK_STR(env_get(e, "MAVEN_OPTS"),
		  "-Xmx1g -Dmaven.repo.local=/wf/.sandbox-cache/maven/repository");
	/* secrets and loader hooks dropped, with the reason */
	CHECK(!env_get(e, "AWS_SECRET_ACCESS_KEY") && dropped(&r, "AWS_SECRET_ACCESS_KEY"));
	CHECK(!env_get(e, "GITHUB_TOKEN") && !env_get(e, "db_password"));
	CHECK(!env_get(e, "MY_CREDENTIALS") && !env_get(e, "LD_PRELOAD"));
	CHECK(dropped(&r, "LD_PRELOAD"));
	/* npm's upper-case variables would override the routed ones */
	CHECK(!env_get(e, "NPM_CONFIG_PREFIX") && dropped(&r, "NPM_CONFIG_PREFIX"));
	CHECK(!env_get(e, "NPM_CONFIG_CACHE"));
	CHECK_STR(env_get(e, "FOO"), "bar"); /* the first duplicate, as getenv */
	CHECK_STR(env_get(e, "PIP_FIND_LINKS"), "/opt/wheels");
	CHECK(strv_find(&r.dirs, "/wf/runs/1/.tmp") >= 0);
	CHECK(strv_find(&r.dirs, "/wf/.sandbox-cache/python") >= 0);
	env_release(&r);

	/* explicit values win over routing; keep and --env NAME keep secrets */
	policy_add_env(&cfg, "TMPDIR=/elsewhere", NULL);
	strv_push(&cfg.env_keep, "GITHUB_TOKEN");
	strv_push(&cfg.env_unset, "FOO");
	r = build(&cfg);
	e = r.env.v;
	CHECK_STR(env_get(e, "TMPDIR"), "/elsewhere");
	CHECK_STR(env_get(e, "GITHUB_TOKEN"), "t");
	CHECK(!env_get(e, "FOO") && dropped(&r, "FOO"));
	env_release(&r);
	policy_release(&cfg);
	policy_init(&cfg);

	/* --clean-env keeps the minimal set */
	cfg.clean_env = true;
	r = build(&cfg);
	e = r.env.v;
	CHECK(env_get(e, "HOME") && env_get(e, "LANG") && env_get(e, "LC_ALL"));
	CHECK(!env_get(e, "PIP_FIND_LINKS") && dropped(&r, "PIP_FIND_LINKS"));
	CHECK(env_get(e, "PYTHONUSERBASE") != NULL); /* routing still applies */
	env_release(&r);
	cfg.clean_env = false;

	/* no P: incident 2's run-folder routing */
	free(g.persist);
	g.persist = NULL;
	g.v[2].origin = ORIGIN_FLAG;
	free(g.v[2].path);
	g.v[2].path = strdup("/wf/other");
	r = build(&cfg);
	e = r.env.v;
	CHECK_STR(env_get(e, "PYTHONUSERBASE"), "/wf/runs/1/.local");
	CHECK_STR(env_get(e, "PIP_CACHE_DIR"), "/wf/runs/1/.cache/pip");
	CHECK_STR(env_get(e, "XDG_CACHE_HOME"), "/wf/runs/1/.cache");
	CHECK_STR(env_get(e, "npm_config_cache"), "/wf/runs/1/.cache/npm");
	CHECK_STR(env_get(e, "TMPDIR"), "/wf/runs/1/.tmp");
	CHECK_STR(env_get(e, "npm_config_prefix"), "/wf/runs/1/.local");
	CHECK(!env_get(e, "GOPATH"));
	CHECK(!env_get(e, "SANDBOX_PERSISTENT_DIR"));
	CHECK_STR(env_get(e, "PATH"), "/wf/runs/1/.local/bin:/usr/bin:/bin");
	env_release(&r);

	/* a read-only workdir: R is the first write grant */
	g.v[3].access = GRANT_READ | GRANT_EXEC;
	r = build(&cfg);
	CHECK_STR(env_get(r.env.v, "TMPDIR"), "/wf/other/.tmp");
	env_release(&r);

	/* no write grant at all: nothing routed (baseline /dev/shm does not count) */
	g.v[2].access = GRANT_READ | GRANT_EXEC;
	r = build(&cfg);
	e = r.env.v;
	CHECK(!env_get(e, "TMPDIR") && !env_get(e, "PYTHONUSERBASE"));
	CHECK(!env_get(e, "PIP_BREAK_SYSTEM_PACKAGES"));
	CHECK_STR(env_get(e, "PATH"), "/usr/bin:/bin");
	CHECK(r.dirs.n == 0);
	env_release(&r);

	/* P but no R: TMPDIR left as inherited, never put in P */
	g.persist = strdup("/wf/.sandbox-cache");
	grant("/wf/.sandbox-cache", W, ORIGIN_PERSISTENT);
	r = build(&cfg);
	e = r.env.v;
	CHECK_STR(env_get(e, "PYTHONUSERBASE"), "/wf/.sandbox-cache/python");
	CHECK(!env_get(e, "TMPDIR"));
	env_release(&r);

	/* DNS over TCP when a port list allows 53 */
	cfg.net = NET_TCP;
	cfg.connect_tcp.n = 1;
	cfg.connect_tcp.v[0] = 53;
	r = build(&cfg);
	CHECK_STR(env_get(r.env.v, "RES_OPTIONS"), "use-vc");
	env_release(&r);
	cfg.connect_tcp.v[0] = 443;
	r = build(&cfg);
	CHECK(!env_get(r.env.v, "RES_OPTIONS"));
	env_release(&r);
	cfg.net = NET_ALLOW;

	CHECK(env_drop_reason("api_key") != NULL && env_drop_reason("PATH") == NULL);
	CHECK(env_drop_reason("LD_AUDIT") != NULL);
	CHECK_STR(env_drop_reason("SSH_AUTH_SOCK"), "credential agent socket");
	grants_release(&g);
	policy_release(&cfg);
	return tap_done();
}
