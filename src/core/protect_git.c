/*
 * protect_git: git's own files, read as git reads them. A config is judged
 * by its keys: git commit, git checkout -b and git remote add write config
 * too, and only a key that runs a command or loads configuration from
 * elsewhere makes a change a finding. The keys are git-config(1)'s (git
 * 2.39) that name a program, a shell command, a hook folder or another
 * config file; docs/protected-paths.md lists them.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "protect_int.h"

enum sub { SUB_NONE, SUB_ANY, SUB_EITHER };

/* name NULL: any variable of the section; bang: only a value starting '!' */
static const struct runkey {
	const char *section;
	enum sub sub;
	const char *name;
	bool bang;
} runkeys[] = {
	{"core", SUB_NONE, "fsmonitor", false},
	{"core", SUB_NONE, "hookspath", false},
	{"core", SUB_NONE, "sshcommand", false},
	{"core", SUB_NONE, "gitproxy", false},
	{"core", SUB_NONE, "askpass", false},
	{"core", SUB_NONE, "editor", false},
	{"core", SUB_NONE, "pager", false},
	{"core", SUB_NONE, "alternaterefscommand", false},
	{"sequence", SUB_NONE, "editor", false},
	{"pager", SUB_NONE, NULL, false},
	{"interactive", SUB_NONE, "difffilter", false},
	{"diff", SUB_NONE, "external", false},
	{"diff", SUB_ANY, "textconv", false},
	{"diff", SUB_ANY, "command", false},
	{"filter", SUB_ANY, "clean", false},
	{"filter", SUB_ANY, "smudge", false},
	{"filter", SUB_ANY, "process", false},
	{"merge", SUB_ANY, "driver", false},
	{"credential", SUB_EITHER, "helper", false},
	{"gpg", SUB_EITHER, "program", false},
	{"gpg", SUB_ANY, "defaultkeycommand", false},
	/*
	 * Every alias: "!cmd" runs cmd; "-c k=v cmd", "--git-dir=D cmd" set a
	 * key or use another gitdir's hooks; and a command's own options run
	 * programs too ("ls-remote --upload-pack=CMD", "difftool --extcmd=CMD",
	 * "grep -O CMD"); a repository's alias also hides the person's own.
	 */
	{"alias", SUB_EITHER, NULL, false},
	{"include", SUB_NONE, "path", false},
	{"includeif", SUB_ANY, "path", false},
	{"uploadpack", SUB_NONE, "packobjectshook", false},
	{"remote", SUB_ANY, "uploadpack", false},
	{"remote", SUB_ANY, "receivepack", false},
	{"submodule", SUB_ANY, "update", true},
	{"difftool", SUB_ANY, "cmd", false},
	{"difftool", SUB_ANY, "path", false},
	{"mergetool", SUB_ANY, "cmd", false},
	{"mergetool", SUB_ANY, "path", false},
	{"browser", SUB_ANY, "cmd", false},
	{"browser", SUB_ANY, "path", false},
	{"man", SUB_ANY, "cmd", false},
	{"man", SUB_ANY, "path", false},
	{"guitool", SUB_ANY, "cmd", false},
	{"sendemail", SUB_EITHER, "tocmd", false},
	{"sendemail", SUB_EITHER, "cccmd", false},
	{"sendemail", SUB_EITHER, "smtpserver", false},
	{"sendemail", SUB_EITHER, "sendmailcmd", false},
	{"imap", SUB_NONE, "tunnel", false},
	{"trailer", SUB_ANY, "command", false},
	{"trailer", SUB_ANY, "cmd", false},
	{"hook", SUB_ANY, "command", false},
	{"tar", SUB_ANY, "command", false},       /* git archive's compressor */
	{"instaweb", SUB_NONE, "httpd", false},   /* git instaweb's server */
	{"init", SUB_NONE, "templatedir", false}, /* hooks copied into every new repository */
	{"remote", SUB_ANY, "vcs", false},        /* git-remote-VCS, a helper run by name */
	{"lfs", SUB_ANY, "path", false},          /* git-lfs: lfs.customtransfer.NAME.path */
	{"lfs", SUB_NONE, "standalonetransferagent", false},
	/* lets a remote's URL be ext::COMMAND, run by the next fetch or push */
	{"protocol", SUB_EITHER, "allow", false},
};

static bool is_runkey(const char *section, const char *sub, const char *name, const char *value)
{
	for (size_t i = 0; i < sizeof(runkeys) / sizeof(runkeys[0]); i++) {
		const struct runkey *k = &runkeys[i];
		if (strcmp(k->section, section) != 0 || (k->name && strcmp(k->name, name) != 0))
			continue;
		if ((k->sub == SUB_NONE && sub) || (k->sub == SUB_ANY && !sub))
			continue;
		if (k->bang && !(value && value[strspn(value, " \t")] == '!'))
			continue;
		return true;
	}
	return false;
}

/* A config as git reads it, a line at a time (config.c's grammar). */
struct cfgread {
	const char *s;
	size_t n, i;
	char section[128], sub[1024], name[128];
	bool has_sub;
	char value[4096];
	bool bad;
};

static int peek(const struct cfgread *c)
{
	return c->i < c->n ? (unsigned char)c->s[c->i] : -1;
}

/* The value after '=' (or none: a boolean true), escapes and quotes as git takes them. */
static void read_value(struct cfgread *c)
{
	size_t k = 0, trail = 0;
	bool quoted = false, started = false;
	for (int ch; (ch = peek(c)) >= 0; c->i++) {
		if (ch == '\n' && !quoted)
			break;
		if (ch == '\n') {
			c->bad = true; /* a quote left open at the end of the line */
			return;
		}
		if (!quoted && (ch == '#' || ch == ';')) {
			while (peek(c) >= 0 && peek(c) != '\n')
				c->i++;
			break;
		}
		if (!quoted && !started && (ch == ' ' || ch == '\t'))
			continue;
		started = true;
		if (ch == '"') {
			quoted = !quoted;
			continue;
		}
		if (ch == '\\') {
			c->i++;
			int e = peek(c);
			if (e == '\n')
				continue; /* a continued line */
			ch = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'b' ? '\b' : e;
			if (e != 'n' && e != 't' && e != 'b' && e != '\\' && e != '"') {
				c->bad = true;
				return;
			}
		}
		if (k + 1 < sizeof(c->value))
			c->value[k++] = (char)ch;
		trail = (!quoted && (ch == ' ' || ch == '\t')) ? trail + 1 : 0;
	}
	k -= trail < k ? trail : k;
	c->value[k] = '\0';
}

/* "[section]", "[section \"sub\"]" or "[section.sub]"; what follows ']' is read on. */
static void read_section(struct cfgread *c)
{
	size_t k = 0;
	c->i++;
	c->has_sub = false;
	for (int ch; (ch = peek(c)) >= 0 && (isalnum(ch) || ch == '-' || ch == '.'); c->i++)
		if (k + 1 < sizeof(c->section))
			c->section[k++] = (char)tolower(ch);
	c->section[k] = '\0';
	char *dot = strchr(c->section, '.');
	if (dot) { /* the old form: its subsection lowercased, as git does */
		*dot = '\0';
		snprintf(c->sub, sizeof(c->sub), "%s", dot + 1);
		c->has_sub = true;
	} else if (peek(c) == ' ' || peek(c) == '\t') {
		while (peek(c) == ' ' || peek(c) == '\t')
			c->i++;
		if (peek(c) != '"') {
			c->bad = true;
			return;
		}
		c->i++;
		k = 0;
		for (int ch; (ch = peek(c)) >= 0 && ch != '"' && ch != '\n'; c->i++) {
			if (ch == '\\') {
				c->i++;
				ch = peek(c);
			}
			if (ch >= 0 && k + 1 < sizeof(c->sub))
				c->sub[k++] = (char)ch;
		}
		c->sub[k] = '\0';
		c->has_sub = true;
		if (peek(c) != '"') {
			c->bad = true;
			return;
		}
		c->i++;
	}
	if (peek(c) != ']' || !c->section[0])
		c->bad = true;
	else
		c->i++;
}

/*
 * The next variable: true with section, sub, name and value set, false at
 * the end (c->bad says whether git would have refused the text).
 */
static bool next_var(struct cfgread *c)
{
	while (!c->bad) {
		int ch = peek(c);
		if (ch < 0)
			return false;
		if (ch == '\n' || ch == ' ' || ch == '\t' || ch == '\r') {
			c->i++;
		} else if (ch == '#' || ch == ';') {
			while (peek(c) >= 0 && peek(c) != '\n')
				c->i++;
		} else if (ch == '[') {
			read_section(c);
		} else if (isalpha(ch) && c->section[0]) {
			size_t k = 0;
			for (; (ch = peek(c)) >= 0 && (isalnum(ch) || ch == '-'); c->i++)
				if (k + 1 < sizeof(c->name))
					c->name[k++] = (char)tolower(ch);
			c->name[k] = '\0';
			while (peek(c) == ' ' || peek(c) == '\t')
				c->i++;
			c->value[0] = '\0';
			if (peek(c) == '=') {
				c->i++;
				read_value(c);
			} else if (peek(c) >= 0 && peek(c) != '\n' && peek(c) != '#' &&
				   peek(c) != ';' && peek(c) != '\r') {
				c->bad = true;
			}
			return !c->bad;
		} else {
			c->bad = true;
		}
	}
	return false;
}

/* "section[.sub].name\nvalue" of each run key of text, into out. */
static int runkeys_of(const char *text, size_t len, struct strv *out, bool *bad)
{
	struct cfgread c = {.s = text, .n = len};
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		c.i = 3; /* a UTF-8 byte order mark, which git skips */
	while (next_var(&c)) {
		if (!is_runkey(c.section, c.has_sub ? c.sub : NULL, c.name, c.value))
			continue;
		char *s = c.has_sub ? strv_fmt("%s.%s.%s\n%s", c.section, c.sub, c.name, c.value)
				    : strv_fmt("%s.%s\n%s", c.section, c.name, c.value);
		if (!s || strv_push_owned(out, s) < 0)
			return -ENOMEM;
	}
	*bad = c.bad;
	return 0;
}

int protect_git_values(const char *text, size_t len, const char *section, bool sub,
		       const char *name, struct strv *out)
{
	struct cfgread c = {.s = text, .n = len};
	while (next_var(&c))
		if (c.has_sub == sub && strcmp(c.section, section) == 0 &&
		    strcmp(c.name, name) == 0 && strv_push(out, c.value) < 0)
			return -ENOMEM;
	return 0;
}

char *protect_git_runs(const char *before, const char *after, size_t after_len)
{
	struct strv was = STRV_INIT, now = STRV_INIT;
	bool bad_before = false, bad = false;
	char *why = NULL;
	if ((before && runkeys_of(before, strlen(before), &was, &bad_before) < 0) ||
	    runkeys_of(after, after_len, &now, &bad) < 0) {
		why = strdup("the config could not be read (out of memory)");
		goto out;
	}
	if (bad) {
		/* git would refuse it too, but a reader that differs from git is a gap */
		why = strdup("a config git's grammar does not read (judged as running code)");
		goto out;
	}
	for (size_t i = 0; i < now.n; i++) {
		if (strv_find(&was, now.v[i]) >= 0)
			continue;
		char *nl = strchr(now.v[i], '\n');
		*nl = '\0';
		why = strv_fmt("%s = '%.200s' %s", now.v[i], nl + 1,
			       before ? "added or changed" : "in a new config");
		break;
	}
out:
	strv_release(&was);
	strv_release(&now);
	return why;
}

bool protect_git_path(const char *content, size_t len, size_t skip, char *out, size_t cap)
{
	while (len > skip && (content[len - 1] == '\n' || content[len - 1] == '\r'))
		len--;
	size_t n = len > skip ? strnlen(content + skip, len - skip) : 0;
	if (n == 0 || n >= cap)
		return false;
	memcpy(out, content + skip, n);
	out[n] = '\0';
	return true;
}

char *protect_git_link(const char *content, size_t len, const char *dir)
{
	char target[PATH_MAX], full[PATH_MAX];
	if (len < 8 || memcmp(content, "gitdir: ", 8) != 0 ||
	    !protect_git_path(content, len, 8, target, sizeof(target)))
		return NULL;
	return protect_resolve(dir, target, full, sizeof(full));
}

char *protect_resolve(const char *dir, const char *target, char *buf, size_t cap)
{
	int n = target[0] == '/' ? snprintf(buf, cap, "%s", target)
				 : snprintf(buf, cap, "%s/%s", dir, target);
	/* as git resolves it, links and all: the place is then reached without any */
	return n > 0 && (size_t)n < cap ? realpath(buf, NULL) : NULL;
}
