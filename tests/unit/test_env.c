#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "tap.h"

static struct grants g;

static void grant(const char *path, unsigned access, enum grant_origin o)
{
	g.v = realloc(g.v, (g.n + 1) * sizeof(*g.v));
	g.v[g.n++] = (struct grant){.path = strdup(path),
				    .requested = strdup(path),
				    .access = access,
				    .origin = o,
				    .exists = true};
}

#define W (GRANT_READ | GRANT_WRITE | GRANT_EXEC)

static char *const inherited[] = {
	"PATH=/usr/bin:/bin",
	"HOME=/home/u",
	"AWS_SECRET_ACCESS_KEY=s",
	"GITHUB_TOKEN=t",
	"db_password=p",
	"MY_CREDENTIALS=c",
	"LD_PRELOAD=/x.so",
	"LANG=C",
	"LC_ALL=C",
	"NPM_CONFIG_PREFIX=/usr/local",
	"NPM_CONFIG_CACHE=/root/.npm",
	"PNPM_CONFIG_STORE_DIR=/s",
	"XDG_RUNTIME_DIR=/run/user/1000",
	"FOO=bar",
	"FOO=second",
	"PIP_FIND_LINKS=/opt/wheels",
	"MAVEN_OPTS=-Xmx1g",
	NULL,
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

/* The reason name=value is dropped for, or "kept". */
static const char *why(const char *name, const char *value)
{
	const char *r = env_drop_reason(name, value);
	return r ? r : "kept";
}

/* Name rules, each with a near-miss that must be kept. */
static void test_names(void)
{
	CHECK_STR(why("STRIPE_KEY", "x"), "name looks secret (*KEY*)");
	CHECK_STR(why("client_secret", "x"), "name looks secret (*SECRET*)");
	CHECK_STR(why("CI_JOB_TOKEN", "x"), "name looks secret (*TOKEN*)");
	CHECK_STR(why("DB_PASSWORD", "x"), "name looks secret (*PASSWORD*)");
	CHECK_STR(why("GOOGLE_APPLICATION_CREDENTIALS", "x"), "name looks secret (*CREDENTIAL*)");
	CHECK_STR(why("DB_PASS", "x"), "name looks secret (*PASS*)");
	CHECK_STR(why("SSHPASS", "x"), "name looks secret (*PASS*)");
	CHECK_STR(why("MYSQL_PWD", "x"), "name looks secret (*PWD*)");
	CHECK_STR(why("mysql_pwd", "x"), "name looks secret (*PWD*)");
	CHECK_STR(why("GH_PAT", "x"), "name looks secret (*PAT)");
	CHECK_STR(why("azure_devops_pat", "x"), "name looks secret (*PAT)");
	CHECK_STR(why("SENTRY_DSN", "x"), "name looks secret (*DSN*)");
	CHECK_STR(why("DOCKER_AUTH_CONFIG", "{}"), "name looks secret (*AUTH*)");
	CHECK_STR(why("XAUTHORITY", "/x"), "name looks secret (*AUTH*)"); /* AUTHOR + ITY */
	CHECK_STR(why("HTTP_AUTHORIZATION", "x"), "name looks secret (*AUTH*)");
	CHECK_STR(why("oauth_client", "x"), "name looks secret (*AUTH*)");
	CHECK_STR(why("JAR_COOKIE", "x"), "name looks secret (*COOKIE*)");
	CHECK_STR(why("XDG_SESSION_ID", "3"), "name looks secret (*SESSION*)");
	/* decided: KEYBOARD-like names go too; a name is cheap to --env back */
	CHECK_STR(why("KEYBOARD_LAYOUT", "us"), "name looks secret (*KEY*)");
	/* near-misses kept */
	CHECK_STR(why("PWD", "/w"), "kept");
	CHECK_STR(why("OLDPWD", "/w"), "the caller's previous folder");
	CHECK_STR(why("GIT_AUTHOR_NAME", "Ann"), "kept");
	CHECK_STR(why("GIT_AUTHOR_EMAIL", "ann@example.org"), "kept");
	CHECK_STR(why("AUTHOR", "Ann"), "kept");
	CHECK_STR(why("TOX_TESTENV_PASSENV", "PIP_* SSL_CERT_FILE"), "kept");
	CHECK_STR(why("TOX_PASSENVX", "x"), "name looks secret (*PASS*)"); /* words only */
	CHECK_STR(why("GIT_AUTHOR_TOKEN", "x"), "name looks secret (*TOKEN*)");
	CHECK_STR(why("PATH", "/usr/bin"), "kept");
	CHECK_STR(why("MANPATH", "/usr/share/man"), "kept"); /* PATH, not *PAT */
	CHECK_STR(why("PATCH_LEVEL", "2"), "kept");          /* PAT only at the end */
	CHECK_STR(why("HOME", "/home/u"), "kept");
	CHECK_STR(why("TMUX_TMPDIR", "/tmp"), "kept");
	/* socket locators and loader hooks, whatever their value */
	const char *sockets[] = {"DBUS_SESSION_BUS_ADDRESS",
				 "DBUS_SYSTEM_BUS_ADDRESS",
				 "DOCKER_HOST",
				 "CONTAINER_HOST",
				 "TMUX",
				 "TMUX_PANE",
				 "STY",
				 "KITTY_LISTEN_ON",
				 "NVIM",
				 "NVIM_LISTEN_ADDRESS"};
	for (size_t i = 0; i < sizeof(sockets) / sizeof(sockets[0]); i++)
		CHECK_STR(why(sockets[i], "unix:path=/run/x"), "control socket locator");
	CHECK_STR(why("GPG_AGENT_INFO", "/run/gpg:1:1"), "credential agent socket");
	CHECK_STR(why("LD_PRELOAD", "/x.so"), "loader hook");
	CHECK_STR(why("docker_host", "tcp://h:2375"), "kept"); /* exact names only */
}

/* Value rules, whatever the name, each with near-misses that must be kept. */
static void test_values(void)
{
	const char *url = "value looks secret (a URL with a password)";
	CHECK_STR(why("DATABASE_URL", "postgres://app:hunter2@db:5432/app"), url);
	CHECK_STR(why("HTTPS_PROXY", "http://user:pw@proxy:3128"), url);
	CHECK_STR(why("https_proxy", "http://u:p%40ss@proxy:3128/"), url);
	CHECK_STR(why("REDIS_URL", "redis://:s3cret@cache:6379/0"), url);
	CHECK_STR(why("BROKER", "amqp://u:p@ss@rabbit/vhost"), url); /* '@' in the password */
	CHECK_STR(why("PIP_EXTRA_INDEX_URL", "https://a.org/simple https://u:p@b.org/simple"), url);
	CHECK_STR(why("GIT_URL", "https://user@host/repo.git"), "kept"); /* no password */
	CHECK_STR(why("GIT_URL", "ssh://git@github.com/o/r.git"), "kept");
	CHECK_STR(why("GIT_URL", "git@github.com:o/r.git"), "kept");
	CHECK_STR(why("REGISTRY", "https://host:8080/@scope/pkg"), "kept"); /* port, then path */
	CHECK_STR(why("EMPTY_PW", "https://user:@host/"), "kept");
	CHECK_STR(why("NO_PROXY", "localhost,127.0.0.1,.internal"), "kept");

	/* token prefixes: one of each, and a value that embeds one after a blank */
	static const struct {
		const char *value, *why;
	} tokens[] = {
		{"ghp_0123456789abcdefghijABCDEFGHIJklmnop", "a GitHub token"},
		{"gho_0123456789abcdefghijABCDEFGHIJklmnop", "a GitHub token"},
		{"ghs_0123456789abcdefghijABCDEFGHIJklmnop", "a GitHub token"},
		{"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
		 "0123456789ABCDEFGHIJKLMNOPQRSTUV",
		 "a GitHub token"},
		{"glpat-abcDEF0123456789_-xy", "a GitLab token"},
		{"xoxb-1234567890-0987654321-AbCdEfGh", "a Slack token"},
		{"xoxp-1234567890-0987654321-AbCdEfGh", "a Slack token"},
		{"AKIAIOSFODNN7EXAMPLE", "an AWS access key id"},
		{"ASIAIOSFODNN7EXAMPLE", "an AWS access key id"},
		{"AIzaSyA-0123456789abcdefghijklmnopqrstu", "a Google API key"},
		{"sk-proj-0123456789abcdefghijklmnopqrstuvwxyz", "an OpenAI or Anthropic key"},
		{"sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz", "an OpenAI or Anthropic key"},
		{"sk_live_0123456789abcdefghij", "a Stripe key"},
		{"rk_live_0123456789abcdefghij", "a Stripe key"},
		{"npm_0123456789abcdefghijABCDEFGHIJklmnop", "an npm token"},
		{"pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAw"
		 "MDAwMDAwMDAwMAACKlszLCJk",
		 "a PyPI token"},
		{"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "a Hugging Face token"},
		{"dckr_pat_0123456789abcdefghijklmn", "a Docker Hub token"},
		{"hvs.CAESIJ0123456789abcdefghijklmn", "a Vault token"},
		{"Bearer ghp_0123456789abcdefghijABCDEFGHIJklmnop", "a GitHub token"},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
		 "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		 "a JSON Web Token"},
		{"Server=db;Database=app;User Id=app;Password=hunter2;", "a password= setting"},
		{"postgres://db/app?user=app&password=hunter2", "a password= setting"},
		{"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==;",
		 "a password= setting"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXk=\\n", "a PEM block"},
		/* the shapes a red team found missed */
		{"Authorization=Bearer%20abc.def", "an Authorization header"}, /* OTLP headers */
		{"api-name=x,Authorization=Basic dXNlcjpwYXNz", "an Authorization header"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==",
		 "an Authorization header"}, /* GIT_CONFIG_VALUE_0 */
		{"X-Trace: 1\nAuthorization:token abcdef",
		 "an Authorization header"}, /* CURL_HEADERS */
		{"Bearer 0123456789abcdefABCDEF", "an Authorization header"},
		{"-Xmx1g -Dhttp.proxyPassword=hunter2 -Dx=y",
		 "a password= setting"}, /* MAVEN_OPTS */
		{"https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=AbCd%2Bef%3D",
		 "a password= setting"}, /* Azure SAS */
		{"https://x.example/api?token=abcdef", "a password= setting"},
		{"https://0123456789abcdef0123456789abcdef01234567@github.com/o/r.git",
		 "a URL with a password"}, /* a token as the user */
		{"https://hooks.zapier.com/hooks/catch/123456/abc12de/", "a webhook URL"},
		{"shpat_0123456789abcdef0123456789abcdef", "a Shopify token"},
		{"whsec_abcdefghijklmnopqrstuvwxyz012345", "a webhook signing secret"},
		{"lin_api_abcdefghijklmnopqrstuvwxyz0123456789AB", "a Linear key"},
		{"ATATT3xFfGF0abcdefghijklmnopqrstuvwxyz0123456789_-ABCDEF",
		 "an Atlassian API token"},
	};
	for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
		const char *r = why("PLAIN_NAME", tokens[i].value);
		int ok = strncmp(r, "value looks secret (", 20) == 0 &&
			 strncmp(r + 20, tokens[i].why, strlen(tokens[i].why)) == 0;
		if (!ok)
			printf("# value %zu: got '%s', want '%s'\\n", i, r, tokens[i].why);
		CHECK(ok);
	}
	/* near-misses: ordinary values that share a prefix */
	const char *kept[] = {
		"/home/u/desk-0123456789abcdefghijklmnopqrstuvwxyz", /* sk- inside a word */
		"/opt/sk-tools/bin:/usr/bin",                        /* sk- but short */
		"/srv/hf_cache",
		"/srv/pypi-mirror/simple",
		"ghp_short",
		"AKIAIOSFODNN7EXAMPLE0",                     /* 17 after AKIA: not a key id */
		"npm_0123456789abcdefghijABCDEFGHIJklmnopq", /* 37 after npm_ */
		"my-task-sk-builder",
		"OLDPWD=/w",          /* pwd= inside a word */
		"Password=;Server=x", /* an empty password */
		"eyJub3QiOiJhIEpXVCJ9",
		"/usr/local/share/ca-certificates/BEGIN",
		"C.UTF-8",
		"https://github.com/org/repo/settings/hooks", /* a page about hooks */
		"https://hooks.example.org/docs/catch",       /* words, not ids */
		"https://builder@ci.example.org/job",         /* a name as the user */
		"the token expired",
		"Authorization header not set",
		"basic authentication",
		"-Dhttp.proxyUser=app -Dhttp.proxyPassword=",
		"",
	};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		const char *r = why("PLAIN_NAME", kept[i]);
		if (strcmp(r, "kept") != 0)
			printf("# kept %zu: got '%s'\\n", i, r);
		CHECK(strcmp(r, "kept") == 0);
	}
	/* the name alone, when there is no value to judge */
	CHECK(env_drop_reason("PLAIN_NAME", NULL) == NULL);
}

/* env_build drops by value too, keeps what is kept, and never stores a value. */
static void test_build_drops(void)
{
	static char *const inh[] = {
		"PATH=/usr/bin",
		"DATABASE_URL=postgres://app:hunter2@db/app",
		"CI_BOT=ghp_0123456789abcdefghijABCDEFGHIJklmnop",
		"TMUX=/tmp/tmux-0/default,1,0",
		"GIT_AUTHOR_NAME=Ann",
		"PWD=/w",
		"PLAIN=ordinary",
		NULL,
	};
	struct stepbox_config cfg;
	struct grants none = {0};
	struct env_result r;
	policy_init(&cfg);
	none.workdir = "/w";
	CHECK(env_build(&cfg, &none, inh, &r, NULL) == 0);
	CHECK(!env_get(r.env.v, "DATABASE_URL") && dropped(&r, "DATABASE_URL"));
	CHECK(!env_get(r.env.v, "CI_BOT") && dropped(&r, "CI_BOT"));
	CHECK(!env_get(r.env.v, "TMUX") && dropped(&r, "TMUX"));
	CHECK_STR(env_get(r.env.v, "GIT_AUTHOR_NAME"), "Ann");
	CHECK_STR(env_get(r.env.v, "PWD"), "/w");
	CHECK_STR(env_get(r.env.v, "PLAIN"), "ordinary");
	bool leaked = false;
	for (size_t i = 0; i < r.dropped.n; i++)
		leaked |= strstr(r.dropped.v[i], "hunter2") || strstr(r.dropped.v[i], "ghp_") ||
			  strstr(r.dropped.v[i], "tmux-0");
	CHECK(!leaked && r.dropped.n == 3);
	CHECK_HAS(r.dropped.v[0], "DATABASE_URL: value looks secret (a URL with a password)");
	env_release(&r);
	/* kept with --env NAME, as the name rules are */
	strv_push(&cfg.env_keep, "DATABASE_URL");
	strv_push(&cfg.env_keep, "TMUX");
	CHECK(env_build(&cfg, &none, inh, &r, NULL) == 0);
	CHECK_STR(env_get(r.env.v, "DATABASE_URL"), "postgres://app:hunter2@db/app");
	CHECK_STR(env_get(r.env.v, "TMUX"), "/tmp/tmux-0/default,1,0");
	CHECK(!env_get(r.env.v, "CI_BOT"));
	env_release(&r);
	policy_release(&cfg);
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Routed folders are created without following a link planted in P or R. */
static void test_prepare_dirs(void)
{
	char tmpl[] = "/tmp/stepbox-test-env.XXXXXX", top[PATH_MAX], path[PATH_MAX + 64];
	if (!mkdtemp(tmpl) || !realpath(tmpl, top)) {
		CHECK(!"mkdtemp");
		return;
	}
	struct env_result r = {0};
	struct stepbox_err err = {0};
	snprintf(path, sizeof(path), "%s/p/go/cache", top);
	strv_push(&r.dirs, path);
	snprintf(path, sizeof(path), "%s/p/python", top);
	strv_push(&r.dirs, path);
	int before = count_fds();
	CHECK(env_prepare_dirs(&r, &err) == 0);
	CHECK(count_fds() == before); /* every fd closed */
	struct stat st;
	CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	env_release(&r);

	/* P/python -> outside, as an earlier step could leave it */
	snprintf(path, sizeof(path), "%s/outside", top);
	mkdir(path, 0755);
	char link[PATH_MAX + 64];
	snprintf(link, sizeof(link), "%s/p/uv", top);
	CHECK(symlink(path, link) == 0);
	snprintf(path, sizeof(path), "%s/p/uv/cache", top);
	strv_push(&r.dirs, path);
	memset(&err, 0, sizeof(err));
	CHECK(env_prepare_dirs(&r, &err) == -ELOOP);
	CHECK(err.kind == ERR_UNAVAILABLE);
	CHECK(strstr(err.msg, link) && strstr(err.msg, "symbolic link"));
	CHECK(strstr(err.hint, "remove the link"));
	snprintf(path, sizeof(path), "%s/outside/cache", top);
	CHECK(access(path, F_OK) < 0); /* nothing created where the link points */
	CHECK(count_fds() == before);
	env_release(&r);

	/* the leaf itself a link: refused too, not taken as the folder */
	snprintf(path, sizeof(path), "%s/p/python", top);
	rmdir(path);
	snprintf(link, sizeof(link), "%s/outside", top);
	CHECK(symlink(link, path) == 0);
	strv_push(&r.dirs, path);
	CHECK(env_prepare_dirs(&r, &err) == -ELOOP && strstr(err.msg, path));
	env_release(&r);

	/* a file where a folder should be */
	snprintf(path, sizeof(path), "%s/p/file", top);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	snprintf(path, sizeof(path), "%s/p/file/sub", top);
	strv_push(&r.dirs, path);
	CHECK(env_prepare_dirs(&r, &err) == -ENOTDIR && strstr(err.msg, "/p/file'"));
	env_release(&r);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	CHECK(system(cmd) == 0);
}

/* A file of HOME handed over on purpose is read as usual; with nowhere to write, /dev/null. */
static void test_config_grants(void)
{
	struct grants h = {0};
	struct stepbox_config cfg;
	policy_init(&cfg);
	h.workdir = strdup("/w");
	h.v = calloc(3, sizeof(*h.v));
	h.v[h.n++] = (struct grant){.path = strdup("/home/u/.gitconfig"),
				    .requested = strdup("/home/u/.gitconfig"),
				    .access = GRANT_READ,
				    .origin = ORIGIN_FLAG,
				    .exists = true};
	h.v[h.n++] = (struct grant){.path = strdup("/home/u/.config"),
				    .requested = strdup("/home/u/.config"),
				    .access = GRANT_READ,
				    .origin = ORIGIN_EXTRA,
				    .exists = true};
	struct env_result r;
	CHECK(env_build(&cfg, &h, inherited, &r, NULL) == 0);
	CHECK(env_get(r.env.v, "GIT_CONFIG_GLOBAL") == NULL); /* the granted ~/.gitconfig counts */
	CHECK(env_get(r.env.v, "XDG_CONFIG_HOME") == NULL); /* incident 1's set-up keeps working */
	CHECK_STR(env_get(r.env.v, "npm_config_userconfig"), "/dev/null");
	env_release(&r);
	grants_release(&h);
	policy_release(&cfg);
}

/*
 * The dotfiles a sandbox keeps from the step are named (doctor, --explain,
 * the report); --backend none keeps nothing and routes no config over them.
 */
static void test_unseen(void)
{
	char home[] = "/tmp/stepbox-env-home.XXXXXX";
	CHECK(mkdtemp(home) != NULL);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.gitconfig", home);
	FILE *f = fopen(path, "w");
	CHECK(f && fputs("[user]\n", f) >= 0 && fclose(f) == 0);
	char *homevar = strv_fmt("HOME=%s", home);
	char *inh[] = {homevar, "PATH=/usr/bin:/bin", NULL};
	struct grants gr = {0};
	gr.workdir = strdup("/w");
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct env_result r;
	CHECK(env_build(&cfg, &gr, inh, &r, NULL) == 0);
	CHECK(r.unseen.n == 1 && strncmp(r.unseen.v[0], "~/.gitconfig (git commits", 25) == 0);
	CHECK(env_get(r.env.v, "GIT_CONFIG_GLOBAL") != NULL);
	env_release(&r);
	/* granted: read as usual, nothing unseen */
	gr.v = calloc(1, sizeof(*gr.v));
	gr.v[gr.n++] = (struct grant){.path = strdup(path),
				      .requested = strdup(path),
				      .access = GRANT_READ,
				      .origin = ORIGIN_FLAG,
				      .exists = true};
	CHECK(env_build(&cfg, &gr, inh, &r, NULL) == 0);
	CHECK(r.unseen.n == 0 && env_get(r.env.v, "GIT_CONFIG_GLOBAL") == NULL);
	env_release(&r);
	grants_release(&gr);
	/* nothing enforced: nothing hidden, no config routed over the user's */
	memset(&gr, 0, sizeof(gr));
	gr.workdir = strdup("/w");
	cfg.backend = BACKEND_NONE;
	CHECK(env_build(&cfg, &gr, inh, &r, NULL) == 0);
	CHECK(r.unseen.n == 0 && env_get(r.env.v, "GIT_CONFIG_GLOBAL") == NULL &&
	      env_get(r.env.v, "XDG_CONFIG_HOME") == NULL &&
	      env_get(r.env.v, "npm_config_userconfig") == NULL);
	env_release(&r);
	/* ... unless none only stands for "no backend planned" (doctor) */
	cfg.plan_only = true;
	CHECK(env_build(&cfg, &gr, inh, &r, NULL) == 0);
	CHECK(r.unseen.n == 1 && env_get(r.env.v, "GIT_CONFIG_GLOBAL") != NULL);
	env_release(&r);
	grants_release(&gr);
	policy_release(&cfg);
	unlink(path);
	rmdir(home);
	free(homevar);
}

/* env_routes: every row says all stepbox does with its variable, consistently. */
static void test_routes_table(void)
{
	size_t firsts = 0;
	for (size_t i = 0; env_routes[i].name; i++) {
		const struct env_route *rt = &env_routes[i];
		for (size_t k = 0; k < i; k++)
			CHECK(strcmp(env_routes[k].name, rt->name) != 0); /* one row a variable */
		/* a shared cache or a bin folder is a folder routed into P */
		CHECK(!rt->shared_sub || rt->persist_sub);
		CHECK(!rt->bin == (rt->path == ENV_PATH_NONE));
		CHECK(!rt->bin || rt->persist_sub);
		firsts += rt->path == ENV_PATH_FIRST;
		/* a configuration file names a dotfile and routes no folder */
		CHECK(!rt->config || (rt->dotfile && !rt->persist_sub && !rt->run_sub));
		CHECK(rt->tool != NULL);
	}
	CHECK(firsts > 0); /* P/bin leads PATH (docs/environment.md) */
}

int main(void)
{
	test_config_grants();
	test_unseen();
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
	/* locks that ignore TMPDIR (pnpm's): the step's, never the caller's /run/user */
	CHECK_STR(env_get(e, "XDG_RUNTIME_DIR"), "/wf/runs/1/.tmp/run");
	CHECK(strv_find(&r.dirs, "/wf/runs/1/.tmp/run") >= 0);
	/* pnpm 11+'s store in P, not beside the run folder's mount */
	CHECK_STR(env_get(e, "pnpm_config_store_dir"), "/wf/.sandbox-cache/pnpm/store");
	CHECK(!env_get(e, "PNPM_CONFIG_STORE_DIR") && dropped(&r, "PNPM_CONFIG_STORE_DIR"));
	CHECK_STR(env_get(e, "SANDBOX_PERSISTENT_DIR"), "/wf/.sandbox-cache");
	CHECK_STR(env_get(e, "HOME"), "/home/u"); /* never changed */
	/* user configuration: read and written in P, never HOME's dotfiles */
	CHECK_STR(env_get(e, "XDG_CONFIG_HOME"), "/wf/.sandbox-cache/config");
	CHECK_STR(env_get(e, "XDG_DATA_HOME"), "/wf/.sandbox-cache/share");
	CHECK_STR(env_get(e, "GIT_CONFIG_GLOBAL"), "/wf/.sandbox-cache/config/git/config");
	CHECK_STR(env_get(e, "npm_config_userconfig"), "/wf/.sandbox-cache/config/npmrc");
	CHECK(strv_find(&r.dirs, "/wf/.sandbox-cache/config/git") >= 0);
	CHECK_HAS(env_get(e, "PATH"), "/wf/.sandbox-cache/bin:/wf/.sandbox-cache/python/bin:"
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
	CHECK_STR(env_get(r.env.v, "RES_OPTIONS"), "use-vc timeout:2 attempts:1");
	env_release(&r);
	/* network by name: every client pointed at the proxy, the ways around gone */
	r = build(&cfg);
	CHECK(env_set_proxy(&r, "http://127.0.0.1:3128", true) == 0);
	CHECK_STR(env_get(r.env.v, "HTTPS_PROXY"), "http://127.0.0.1:3128");
	CHECK_STR(env_get(r.env.v, "http_proxy"), "http://127.0.0.1:3128");
	CHECK_STR(env_get(r.env.v, "npm_config_https_proxy"), "http://127.0.0.1:3128");
	CHECK_STR(env_get(r.env.v, "NO_PROXY"), "localhost,127.0.0.1,::1");
	CHECK(env_set_proxy(&r, "http://stepbox:s@127.0.0.1:9", false) == 0);
	CHECK_STR(env_get(r.env.v, "PIP_PROXY"), "http://stepbox:s@127.0.0.1:9");
	CHECK_STR(env_get(r.env.v, "no_proxy"), "");
	env_release(&r);
	cfg.connect_tcp.v[0] = 443;
	r = build(&cfg);
	CHECK(!env_get(r.env.v, "RES_OPTIONS"));
	env_release(&r);
	cfg.net = NET_ALLOW;

	CHECK(env_drop_reason("api_key", NULL) != NULL);
	/* webhooks and JWTs: by name, and a webhook URL by its value */
	CHECK_HAS(env_drop_reason("SLACK_WEBHOOK_URL", "x"), "*WEBHOOK*");
	CHECK_HAS(env_drop_reason("CI_JOB_JWT", "x"), "*JWT*");
	CHECK_HAS(env_drop_reason("N", "https://hooks.slack.com/services/T0/B0/"
				       "AbCdEfGhIjKlMnOpQrStUvWx"),
		  "a webhook URL");
	CHECK_HAS(env_drop_reason("N", "x https://outlook.webhook.office.com/webhookb2/"
				       "0123456789abcdef0123456789abcdef/IncomingWebhook/x"),
		  "a webhook URL");
	CHECK(env_drop_reason("N", "https://docs.example.org/webhooks/getting-started") == NULL);
	CHECK(env_drop_reason("N", "https://example.org/AbCdEfGhIjKlMnOpQrStUvWx") == NULL);
	CHECK(env_drop_reason("N", "https://hooks.example.org") == NULL);
	CHECK_HAS(env_drop_reason("OLDPWD", "/srv/old"), "previous folder");
	CHECK(env_drop_reason("PWD", "/srv/now") == NULL);
	CHECK(env_drop_reason("PATH", "/usr/bin") == NULL);
	CHECK(env_drop_reason("LD_AUDIT", NULL) != NULL);
	CHECK_STR(env_drop_reason("SSH_AUTH_SOCK", "/tmp/a"), "credential agent socket");
	grants_release(&g);
	policy_release(&cfg);

	test_names();
	test_values();
	test_build_drops();
	test_prepare_dirs();
	test_routes_table();
	return tap_done();
}
