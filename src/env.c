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
	/*
	 * pnpm 11 and later (its Rust CLI) keep the store by the project's
	 * mount unless told: the workdir and P are separate mounts under the
	 * namespaces, so it went into the run folder and was lost with it
	 */
	{"pnpm_config_store_dir", "pnpm/store", NULL, "pnpm store"},
	{"BUN_INSTALL", "bun", NULL, "bun"},
	{"BUN_INSTALL_CACHE_DIR", "bun/cache", NULL, "bun"},
	{"GEM_HOME", "gem", NULL, "gem"},
	{"GEM_SPEC_CACHE", "gem/specs", NULL, "gem"},
	{"GRADLE_USER_HOME", "gradle", NULL, "gradle"},
	{"DENO_DIR", "deno", NULL, "deno cache"},
	{"DENO_INSTALL_ROOT", "deno", NULL, "deno install"},
	{"PLAYWRIGHT_BROWSERS_PATH", "ms-playwright", NULL, "playwright"},
	{"TMPDIR", NULL, ".tmp", "scratch (never in P)"},
	/*
	 * the per-user runtime folder, where locks go whatever TMPDIR says
	 * (pnpm's store locks, else in /tmp: not writable under Landlock
	 * alone); the caller's, in /run/user, is not the step's
	 */
	{"XDG_RUNTIME_DIR", NULL, ".tmp/run", "runtime folder (never in P)"},
	{NULL, NULL, NULL, NULL},
};

/*
 * With P shared (read-only in this step), what tools write while they only
 * use what is installed goes to R instead.
 */
static const struct {
	const char *name, *run_sub;
} shared_caches[] = {
	{"PIP_CACHE_DIR", ".cache/pip"},        {"XDG_CACHE_HOME", ".cache"},
	{"npm_config_cache", ".cache/npm"},     {"GOCACHE", ".cache/go-build"},
	{"UV_CACHE_DIR", ".cache/uv"},          {"YARN_CACHE_FOLDER", ".cache/yarn"},
	{"BUN_INSTALL_CACHE_DIR", ".cache/bun"}, {"GEM_SPEC_CACHE", ".cache/gem-specs"},
};

static const char *shared_cache(const char *name)
{
	for (size_t i = 0; i < sizeof(shared_caches) / sizeof(shared_caches[0]); i++)
		if (strcmp(shared_caches[i].name, name) == 0)
			return shared_caches[i].run_sub;
	return NULL;
}

/* P's bin folders, leading PATH in this order (DESIGN.md first, then ours). */
static const char *const persist_bins[] = {
	"bin", "python/bin", "npm-global/bin", "go/bin", "cargo/bin",
	"pnpm", "bun/bin", "gem/bin", "deno/bin", NULL,
};

/* Kept by --clean-env. */
static const char *const clean_keep[] = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "TERM", "TZ",
					 NULL};

/*
 * Names dropped whatever their value. A control socket lets the step drive a
 * process outside the sandbox: an agent signs in as the caller, the Docker or
 * Podman daemon starts containers as root, D-Bus reaches the session, a
 * terminal multiplexer or an editor types commands into the caller's
 * terminal. Landlock below ABI 9 does not control connecting to a socket
 * path; the default paths stay guessable, but tools no longer find and use
 * the caller's sockets on their own (git and ssh use SSH_AUTH_SOCK, docker
 * DOCKER_HOST, tmux TMUX).
 */
static const struct {
	const char *name, *why;
} named_drops[] = {
	{"LD_PRELOAD", "loader hook"},
	{"LD_AUDIT", "loader hook"},
	{"SSH_AUTH_SOCK", "credential agent socket"},
	{"GPG_AGENT_INFO", "credential agent socket"},
	{"DBUS_SESSION_BUS_ADDRESS", "control socket locator"},
	{"DBUS_SYSTEM_BUS_ADDRESS", "control socket locator"},
	{"DOCKER_HOST", "control socket locator"},
	{"CONTAINER_HOST", "control socket locator"},
	{"TMUX", "control socket locator"},
	{"TMUX_PANE", "control socket locator"},
	/* beyond DESIGN.md's list: the same escape through other terminals */
	{"STY", "control socket locator"},
	{"KITTY_LISTEN_ON", "control socket locator"},
	{"NVIM", "control socket locator"},
	{"NVIM_LISTEN_ADDRESS", "control socket locator"},
	/* where the caller was before: none of the step's business (PWD is the workdir) */
	{"OLDPWD", "the caller's previous folder"},
};

/* Words of a secret-looking name, in any case; PASSWORD before PASS. */
static const struct {
	const char *word, *why;
} secret_words[] = {
	{"KEY", "name looks secret (*KEY*)"},
	{"SECRET", "name looks secret (*SECRET*)"},
	{"TOKEN", "name looks secret (*TOKEN*)"},
	{"PASSWORD", "name looks secret (*PASSWORD*)"},
	{"CREDENTIAL", "name looks secret (*CREDENTIAL*)"},
	{"PASS", "name looks secret (*PASS*)"},
	{"PWD", "name looks secret (*PWD*)"},
	{"DSN", "name looks secret (*DSN*)"},
	{"AUTH", "name looks secret (*AUTH*)"},
	{"COOKIE", "name looks secret (*COOKIE*)"},
	{"SESSION", "name looks secret (*SESSION*)"},
	/* a webhook URL is its own credential (SLACK_WEBHOOK_URL); CI_JOB_JWT */
	{"WEBHOOK", "name looks secret (*WEBHOOK*)"},
	{"JWT", "name looks secret (*JWT*)"},
};

/* ASCII only: a value's bytes are never read through the locale. */
static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Whole words that hold a secret word and are no secret. */
static const struct {
	const char *word, *longer;
} not_secret[] = {
	{"AUTH", "AUTHOR"},  /* git's commit identity: GIT_AUTHOR_NAME, _EMAIL */
	{"PASS", "PASSENV"}, /* tox: which names a test env passes on */
};

static bool has_word(const char *name, const char *word)
{
	for (const char *p = name; (p = strcasestr(p, word)); p++) {
		bool excused = false;
		for (size_t i = 0; i < sizeof(not_secret) / sizeof(not_secret[0]); i++) {
			size_t ll = strlen(not_secret[i].longer);
			excused |= strcmp(word, not_secret[i].word) == 0 &&
				   strncasecmp(p, not_secret[i].longer, ll) == 0 &&
				   !is_alnum(p[ll]);
		}
		if (!excused)
			return true;
	}
	return false;
}

static const char *name_reason(const char *name)
{
	for (size_t i = 0; i < sizeof(named_drops) / sizeof(named_drops[0]); i++)
		if (strcmp(name, named_drops[i].name) == 0)
			return named_drops[i].why;
	/* the shell's own working folder, which every tool reads (OLDPWD went above) */
	bool shell_pwd = strcmp(name, "PWD") == 0;
	for (size_t i = 0; i < sizeof(secret_words) / sizeof(secret_words[0]); i++) {
		if (shell_pwd && strcmp(secret_words[i].word, "PWD") == 0)
			continue;
		if (has_word(name, secret_words[i].word))
			return secret_words[i].why;
	}
	/* a personal access token: GH_PAT, AZURE_DEVOPS_PAT (PATH ends in H) */
	size_t nl = strlen(name);
	if (nl >= 3 && strcasecmp(name + nl - 3, "PAT") == 0)
		return "name looks secret (*PAT)";
	return NULL;
}

/* The characters a token's body is made of, after its prefix. */
enum tok_class {
	TOK_ALNUM,  /* A-Z a-z 0-9 */
	TOK_WORD,   /* and _ */
	TOK_B64URL, /* and _ - */
	TOK_DASHED, /* and - */
	TOK_UPNUM,  /* A-Z 0-9 */
	TOK_HEX,    /* 0-9 a-f */
};

static bool in_class(char c, enum tok_class k)
{
	switch (k) {
	case TOK_ALNUM:
		return is_alnum(c);
	case TOK_WORD:
		return is_alnum(c) || c == '_';
	case TOK_B64URL:
		return is_alnum(c) || c == '_' || c == '-';
	case TOK_DASHED:
		return is_alnum(c) || c == '-';
	case TOK_UPNUM:
		return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
	case TOK_HEX:
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
	}
	return false;
}

static size_t run_len(const char *s, enum tok_class k)
{
	size_t n = 0;
	while (s[n] && in_class(s[n], k))
		n++;
	return n;
}

/*
 * Well-known token formats: a fixed prefix at the start of a word, then a
 * body of at least min (at most max, when not 0) characters of one class.
 * The body's length is what keeps a path like /opt/sk-tools or a folder
 * named hf_cache from matching: no ordinary word is 30 characters long.
 */
struct token_rule {
	const char *prefix;
	enum tok_class cls;
	unsigned short min, max;
	const char *why;
};
#define TOKEN(p, c, lo, hi, what) {p, c, lo, hi, "value looks secret (" what ")"}
static const struct token_rule token_rules[] = {
	TOKEN("ghp_", TOK_ALNUM, 36, 0, "a GitHub token"),
	TOKEN("gho_", TOK_ALNUM, 36, 0, "a GitHub token"),
	TOKEN("ghu_", TOK_ALNUM, 36, 0, "a GitHub token"),
	TOKEN("ghs_", TOK_ALNUM, 36, 0, "a GitHub token"),
	TOKEN("ghr_", TOK_ALNUM, 36, 0, "a GitHub token"),
	TOKEN("github_pat_", TOK_WORD, 40, 0, "a GitHub token"),
	TOKEN("glpat-", TOK_B64URL, 20, 0, "a GitLab token"),
	TOKEN("gldt-", TOK_B64URL, 20, 0, "a GitLab token"),
	TOKEN("glrt-", TOK_B64URL, 20, 0, "a GitLab token"),
	TOKEN("glptt-", TOK_B64URL, 20, 0, "a GitLab token"),
	TOKEN("xoxa-", TOK_DASHED, 10, 0, "a Slack token"),
	TOKEN("xoxb-", TOK_DASHED, 10, 0, "a Slack token"),
	TOKEN("xoxp-", TOK_DASHED, 10, 0, "a Slack token"),
	TOKEN("xoxr-", TOK_DASHED, 10, 0, "a Slack token"),
	TOKEN("xoxs-", TOK_DASHED, 10, 0, "a Slack token"),
	TOKEN("xapp-", TOK_DASHED, 10, 0, "a Slack token"),
	TOKEN("AKIA", TOK_UPNUM, 16, 16, "an AWS access key id"),
	TOKEN("ASIA", TOK_UPNUM, 16, 16, "an AWS access key id"),
	TOKEN("AIza", TOK_B64URL, 35, 0, "a Google API key"),
	TOKEN("ya29.", TOK_B64URL, 30, 0, "a Google OAuth token"),
	TOKEN("sk-", TOK_B64URL, 32, 0, "an OpenAI or Anthropic key"),
	TOKEN("sk_live_", TOK_ALNUM, 16, 0, "a Stripe key"),
	TOKEN("rk_live_", TOK_ALNUM, 16, 0, "a Stripe key"),
	TOKEN("sk_test_", TOK_ALNUM, 16, 0, "a Stripe key"),
	TOKEN("rk_test_", TOK_ALNUM, 16, 0, "a Stripe key"),
	TOKEN("npm_", TOK_ALNUM, 36, 36, "an npm token"),
	TOKEN("pypi-", TOK_B64URL, 50, 0, "a PyPI token"),
	TOKEN("hf_", TOK_ALNUM, 30, 0, "a Hugging Face token"),
	TOKEN("dckr_pat_", TOK_B64URL, 20, 0, "a Docker Hub token"),
	TOKEN("rubygems_", TOK_HEX, 48, 48, "a RubyGems key"),
	TOKEN("dop_v1_", TOK_HEX, 64, 64, "a DigitalOcean token"),
	TOKEN("hvs.", TOK_B64URL, 24, 0, "a Vault token"),
	TOKEN("SG.", TOK_B64URL, 20, 0, "a SendGrid key"),
	TOKEN("sntrys_", TOK_B64URL, 40, 0, "a Sentry token"),
	TOKEN("sntryu_", TOK_HEX, 64, 64, "a Sentry token"),
	TOKEN("AGE-SECRET-KEY-1", TOK_UPNUM, 50, 0, "an age secret key"),
	TOKEN("shpat_", TOK_HEX, 32, 32, "a Shopify token"),
	TOKEN("shpca_", TOK_HEX, 32, 32, "a Shopify token"),
	TOKEN("shppa_", TOK_HEX, 32, 32, "a Shopify token"),
	TOKEN("shpss_", TOK_HEX, 32, 32, "a Shopify secret"),
	TOKEN("whsec_", TOK_B64URL, 24, 0, "a webhook signing secret"),
	TOKEN("lin_api_", TOK_ALNUM, 32, 0, "a Linear key"),
	TOKEN("ATATT", TOK_B64URL, 40, 0, "an Atlassian API token"),
	TOKEN("ATCTT", TOK_B64URL, 40, 0, "an Atlassian API token"),
};
#undef TOKEN

/* A JSON Web Token: two base64url JSON objects ("eyJ" is '{"') and a dot. */
static bool is_jwt(const char *s)
{
	if (strncmp(s, "eyJ", 3) != 0)
		return false;
	size_t n = run_len(s, TOK_B64URL);
	if (n < 10 || s[n] != '.' || strncmp(s + n + 1, "eyJ", 3) != 0)
		return false;
	size_t m = run_len(s + n + 1, TOK_B64URL);
	return m >= 10 && s[n + 1 + m] == '.';
}

/*
 * Settings that carry a password inside a longer value, at a word's start:
 * ODBC and ADO.NET connection strings (Password=, Pwd=), URL queries
 * (?password=, ?token=, ?access_token=, ?api_key=), Azure storage
 * connection strings (AccountKey=, SharedAccessKey=) and SAS URLs (sig=).
 */
static const char *const password_keys[] = {
	"password=", "passwd=", "pwd=",          "accountkey=", "sharedaccesskey=",
	"sig=",      "token=",  "access_token=", "api_key=",    "api-key=",
	"apikey=",   "secret=", "client_secret=",
};

/*
 * A password as a property inside a longer word, where no word starts:
 * -Dhttp.proxyPassword=... in MAVEN_OPTS or JAVA_TOOL_OPTIONS.
 */
static bool embedded_password(const char *v)
{
	static const char *const keys[] = {"password=", "passwd="};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		for (const char *p = strcasestr(v, keys[k]); p; p = strcasestr(p + 1, keys[k])) {
			char c = p[strlen(keys[k])];
			if (c && !strchr(";& \t\r\n", c))
				return true;
		}
	return false;
}

/*
 * An HTTP header that signs in, as OTEL_EXPORTER_OTLP_HEADERS
 * ("Authorization=Bearer ..."), GIT_CONFIG_VALUE_n ("Authorization: Basic
 * ...") or a curl header list carry one: an Authorization header with a
 * value, or a Bearer or Basic credential of some length.
 */
static bool auth_header(const char *v)
{
	for (const char *p = strcasestr(v, "authorization"); p;
	     p = strcasestr(p + 1, "authorization")) {
		const char *q = p + 13;
		q += strspn(q, " \t");
		if (*q == ':' || *q == '=') {
			q++;
			q += strspn(q, " \t");
			if (*q && !strchr(";,&\r\n", *q))
				return true;
		}
	}
	static const char *const schemes[] = {"bearer ", "bearer%20", "basic ", "basic%20",
					      "token "};
	for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
		for (const char *p = strcasestr(v, schemes[k]); p; p = strcasestr(p + 1, schemes[k])) {
			const char *t = p + strlen(schemes[k]);
			size_t n = 0;
			while (t[n] && (in_class(t[n], TOK_B64URL) || strchr("+/=.~", t[n])))
				n++;
			if ((p == v || !is_alnum(p[-1])) && n >= 16)
				return true;
		}
	return false;
}

static const char *word_reason(const char *s)
{
	for (size_t k = 0; k < sizeof(token_rules) / sizeof(token_rules[0]); k++) {
		const struct token_rule *t = &token_rules[k];
		size_t pl = strlen(t->prefix);
		if (s[0] != t->prefix[0] || strncmp(s, t->prefix, pl) != 0)
			continue;
		size_t n = run_len(s + pl, t->cls);
		if (n >= t->min && (t->max == 0 || n <= t->max))
			return t->why;
	}
	if (is_jwt(s))
		return "value looks secret (a JSON Web Token)";
	for (size_t k = 0; k < sizeof(password_keys) / sizeof(password_keys[0]); k++) {
		size_t kl = strlen(password_keys[k]);
		if (strncasecmp(s, password_keys[k], kl) == 0 && s[kl] &&
		    !strchr(";& \t\r\n", s[kl]))
			return "value looks secret (a password= setting)";
	}
	return NULL;
}

/*
 * scheme://user:password@host (RFC 3986 3.2.1): the authority ends at the
 * first / ? # or blank, the userinfo at its last @. A user without a
 * password (https://user@host, ssh://git@host) is kept: it names, it does
 * not sign in.
 */
static bool url_with_password(const char *v)
{
	for (const char *s = strstr(v, "://"); s; s = strstr(s + 3, "://")) {
		if (s == v || !(is_alnum(s[-1]) || strchr("+-.", s[-1])))
			continue; /* no scheme before it */
		const char *a = s + 3, *end = a + strcspn(a, "/?# \t\r\n"), *at = NULL;
		for (const char *p = a; p < end; p++)
			if (*p == '@')
				at = p;
		const char *colon = at ? memchr(a, ':', (size_t)(at - a)) : NULL;
		if (colon && colon + 1 < at)
			return true;
		/* a token as the user name (https://TOKEN@github.com/...): no
		 * name is 20 token characters long with no separator */
		if (at && !colon && run_len(a, TOK_B64URL) == (size_t)(at - a) && at - a >= 20)
			return true;
	}
	return false;
}

/*
 * A webhook URL: whoever holds it may post (Slack's hooks.slack.com/services/
 * T/B/SECRET, Discord's /api/webhooks/ID/SECRET, Teams' webhook.office.com,
 * Zapier's hooks.zapier.com/hooks/catch/ID/SECRET/): a URL whose host says
 * "hook" and whose path holds a segment of at least 6 token characters (a
 * hook host serves nothing else), or whose path says "hook" and holds a
 * segment of at least 20. A link to a page about hooks has no such part.
 */
static bool webhook_url(const char *v)
{
	for (const char *s = strstr(v, "://"); s; s = strstr(s + 3, "://")) {
		const char *a = s + 3, *end = a + strcspn(a, "?# \t\r\n");
		const char *path = memchr(a, '/', (size_t)(end - a));
		const char *host_end = path ? path : end;
		bool host_hook = false, hook = false;
		for (const char *p = a; !hook && p + 4 <= end; p++)
			if (strncasecmp(p, "hook", 4) == 0)
				hook = true, host_hook = p + 4 <= host_end;
		size_t need = host_hook ? 6 : 20;
		for (const char *p = path; hook && p && p < end; p = memchr(p + 1, '/', (size_t)(end - p - 1))) {
			size_t n = run_len(p + 1, TOK_B64URL);
			/* a segment that is a word of letters alone ("catch", "hooks") names */
			bool letters = true;
			for (size_t i = 0; i < n; i++)
				letters &= (p[1 + i] >= 'a' && p[1 + i] <= 'z') || (p[1 + i] >= 'A' && p[1 + i] <= 'Z');
			if (n >= need && (n >= 20 || !letters))
				return true;
		}
	}
	return false;
}

/*
 * Why a value looks secret, or NULL. It reads the value and nothing more:
 * the reason names the rule, never the value, which is neither copied nor
 * printed, so that `stepbox env`, -v and the report cannot leak it.
 */
static const char *value_reason(const char *v)
{
	if (strstr(v, "-----BEGIN"))
		return "value looks secret (a PEM block)";
	if (url_with_password(v))
		return "value looks secret (a URL with a password)";
	if (webhook_url(v))
		return "value looks secret (a webhook URL)";

	for (size_t i = 0; v[i]; i++) {
		/* a token starts a word: "sk-" inside desk-... is not a key */
		if (i > 0 && is_alnum(v[i - 1]))
			continue;
		const char *why = word_reason(v + i);
		if (why)
			return why;
	}
	if (auth_header(v))
		return "value looks secret (an Authorization header or credential)";
	if (embedded_password(v))
		return "value looks secret (a password= setting)";
	return NULL;
}

const char *env_drop_reason(const char *name, const char *value)
{
	const char *why = name_reason(name);
	return why || !value ? why : value_reason(value);
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
		if (nl == strlen(name) && strncasecmp(e, name, nl) == 0 && strncmp(e, name, nl) != 0) {
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

static int route(struct env_result *r, const char *P, const char *R, bool shared)
{
	int rc = 0;
	for (size_t i = 0; env_routes[i].name && rc == 0; i++) {
		const struct env_route *rt = &env_routes[i];
		const char *base, *sub;
		if (P && shared && R && shared_cache(rt->name)) {
			base = R;
			sub = shared_cache(rt->name);
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
			yes |= (g->v[i].access & GRANT_PRIVATE) && path_beneath(canon, g->v[i].path);
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
		bool found = cand && len && p[0] == '/' && access(cand, X_OK) == 0 && realpath(cand, real);
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
			rc = strv_push_owned(&r->unseen, strv_fmt("~/%s (%s)", home_dotfiles[i].name,
								  home_dotfiles[i].breaks));
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
static int route_config(struct env_result *r, const struct grants *g, const char *P,
			const char *R, bool enforced)
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
	char *git = base ? strv_fmt("%s/git", base) : NULL;
	char *gitcfg = git ? strv_fmt("%s/config", git) : strdup("/dev/null");
	char *npmrc = base ? strv_fmt("%s/npmrc", base) : strdup("/dev/null");
	int rc = npmrc && gitcfg && (!(P || R) || git) ? 0 : -ENOMEM;
	const char *xdg = env_get(r->env.v, "XDG_CONFIG_HOME");
	bool xdg_granted = xdg && xdg[0] == '/' ? home_granted(g, xdg, ".")
			   : home && home_granted(g, home, ".config");
	if (rc == 0 && enforced && !xdg_granted && base)
		rc = set_var(&r->env, "XDG_CONFIG_HOME", base);
	/* the same for the data tools keep (gem --user-install, uv, pipx's older homes) */
	const char *xdata = env_get(r->env.v, "XDG_DATA_HOME");
	bool data_granted = xdata && xdata[0] == '/' ? home_granted(g, xdata, ".")
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
	if (rc == 0 && enforced && !(home && (home_granted(g, home, ".gitconfig") ||
				  (xdg_granted && home_granted(g, home, ".config/git/config")))))
		rc = set_var(&r->env, "GIT_CONFIG_GLOBAL", gitcfg);
	if (rc == 0 && enforced && !(home && home_granted(g, home, ".npmrc"))) {
		rc = set_var(&r->env, "npm_config_userconfig", npmrc);
		if (rc == 0)
			rc = drop_npm_rivals(r, "npm_config_userconfig");
	}
	if (rc == 0 && env_get(r->env.v, "npm_config_prefix") &&
	    !has_any_case(&r->env, "npm_config_globalconfig")) {
		char *prefix = npm_own_prefix(env_get(r->env.v, "PATH"));
		char *gc = prefix ? strv_fmt("%s/etc/npmrc", strcmp(prefix, "/") ? prefix : "")
				  : NULL;
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
	if (rc == 0 && base && strv_find(&r->dirs, base) < 0)
		rc = strv_push(&r->dirs, base);
	if (rc == 0 && git && strv_find(&r->dirs, git) < 0)
		rc = strv_push(&r->dirs, git);
	free(base);
	free(git);
	free(gitcfg);
	free(npmrc);
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
			err_hint(err, "remove the link '%s' (an earlier step may have made it); "
				      "stepbox never follows a link where it creates folders", bad);
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
		     const struct env_result *r, struct persist_lock *lock,
		     struct stepbox_err *err)
{
	int rc = grants_prepare_dirs(g, err);
	if (rc == 0 && g->persist)
		rc = persist_lock(lock, g->persist, cfg->persist_shared, cfg->persist_wait_s,
				  cfg->verbosity < 0, err);
	return rc == 0 ? env_prepare_dirs(r, err) : rc;
}
