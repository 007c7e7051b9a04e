/*
 * env_drop.c: which inherited variables a step never sees (env_drop_reason,
 * env.h): loader hooks, control socket locators, and what looks secret by
 * its name or its value. Pure: a value is read, never copied or printed.
 */
#include "env.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

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
	/* beyond the usual list: the same escape through other terminals */
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
#define TOKEN(p, c, lo, hi, what)                                                                  \
	{                                                                                          \
		p, c, lo, hi, "value looks secret (" what ")"                                      \
	}
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
	"password=", "passwd=", "pwd=",           "accountkey=", "sharedaccesskey=",
	"sig=",      "token=",  "access_token=",  "api_key=",    "api-key=",
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
		for (const char *p = strcasestr(v, schemes[k]); p;
		     p = strcasestr(p + 1, schemes[k])) {
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
		for (const char *p = path; hook && p && p < end;
		     p = memchr(p + 1, '/', (size_t)(end - p - 1))) {
			size_t n = run_len(p + 1, TOK_B64URL);
			/* a segment that is a word of letters alone ("catch", "hooks") names */
			bool letters = true;
			for (size_t i = 0; i < n; i++)
				letters &= (p[1 + i] >= 'a' && p[1 + i] <= 'z') ||
					   (p[1 + i] >= 'A' && p[1 + i] <= 'Z');
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
