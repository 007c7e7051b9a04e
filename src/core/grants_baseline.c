/*
 * grants_baseline.c: what stepbox grants of its own, before and after what
 * was asked: the baseline every command may touch (docs/security.md), the targets
 * of /etc's symlinks, SANDBOX_EXTRA_SYSTEM_PATHS, the browser's folder, and
 * HOME (the user's files named one by one, a private HOME under the
 * namespaces).
 */
#include "grants.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "canon.h"
#include "grants_int.h"
#include "path.h"

/* Which layers a baseline entry is for. */
enum { BOTH, NS_ONLY };

/*
 * What every command may touch (docs/security.md). Under the namespaces /proc,
 * /dev/pts, /dev/shm and /tmp are made anew for the step (GRANT_PRIVATE):
 * nothing of the host's. Landlock alone has no private ones: the host's
 * /proc stays, only the step's own terminal is granted (grants_host.ttys)
 * besides /dev/ptmx, and /dev/shm and /tmp are not granted at all.
 */
static const struct {
	const char *path;
	unsigned access;
	int when;
} baseline[] = {
	{"/usr", RX, BOTH},
	{"/bin", RX, BOTH},
	{"/sbin", RX, BOTH},
	{"/lib", RX, BOTH},
	{"/lib32", RX, BOTH},
	{"/lib64", RX, BOTH},
	{"/libx32", RX, BOTH},
	{"/etc", GRANT_READ, BOTH},
	{"/proc", GRANT_READ, BOTH},
	{"/sys/devices/system/cpu", GRANT_READ, BOTH},
	{"/dev/null", DEVRW, BOTH},
	{"/dev/zero", DEVRW, BOTH},
	{"/dev/full", DEVRW, BOTH},
	{"/dev/random", DEVRW, BOTH},
	{"/dev/urandom", DEVRW, BOTH},
	{"/dev/tty", DEVRW, BOTH},
	{"/dev/ptmx", DEVRW, BOTH},
	{"/dev/pts", DEVRW | GRANT_PRIVATE, NS_ONLY},
	{"/dev/shm", GRANT_READ | GRANT_WRITE | GRANT_PRIVATE, NS_ONLY},
	{"/tmp", GRANT_READ | GRANT_WRITE | GRANT_EXEC | GRANT_PRIVATE, NS_ONLY},
};

/* The access of baseline entry i under host's layers; 0: not for them. */
static unsigned baseline_access(size_t i, const struct grants_host *host)
{
	if (baseline[i].when == NS_ONLY && !host->namespaces)
		return 0;
	if (strcmp(baseline[i].path, "/proc") == 0 && host->namespaces)
		return baseline[i].access | GRANT_PRIVATE;
	return baseline[i].access;
}

/*
 * A rule on /etc does not follow the symlinks inside it: on systemd-resolved
 * hosts /etc/resolv.conf points into /run, and granting /etc alone broke DNS
 * (field notes, incident 2). Each entry is resolved to its own target.
 */
static const char *const etc_explicit[] = {
	"/etc/resolv.conf",     "/etc/hosts",       "/etc/nsswitch.conf", "/etc/ssl",
	"/etc/ca-certificates", "/etc/pki",         "/etc/localtime",     "/etc/passwd",
	"/etc/group",           "/etc/ld.so.cache", "/etc/ld.so.conf",    "/etc/ld.so.conf.d",
	"/etc/alternatives",    "/etc/fonts",       "/etc/os-release",    "/etc/mime.types",
	"/etc/debian_version",  "/etc/gai.conf",
};

/*
 * A daemon that keeps the resolver's configuration (systemd-resolved,
 * resolvconf, NetworkManager) replaces its file beneath /run by a rename
 * when the network changes. A rule or a bind on that file holds the old one
 * (Landlock refuses the new file, a bind shows the old text), and a step
 * that outlives a DHCP renewal loses DNS. So an /etc entry that resolves to
 * a file in a folder beneath /run (not /run itself, nor a user's /run/user,
 * nor a folder others may write) is granted by that folder, as its daemon
 * writes it. Not where /etc's secrets are hidden (root): the daemon may
 * write a secret there later (NetworkManager's system-connections), which
 * the folder's rule or bind would cover and a root step reads as its owner
 * (a second red-team pass); root keeps the file, and its old text after a
 * renewal. True with canon replaced by that folder.
 */
static bool by_daemon_folder(const struct build *b, char **canon)
{
	char dir[PATH_MAX], hp[PATH_MAX * 2];
	struct stat st;
	if (b->host->hide_etc_secrets || !path_beneath(*canon, "/run") ||
	    path_beneath(*canon, "/run/user") || !path_parent(*canon, dir, sizeof(dir)) ||
	    strcmp(dir, "/run") == 0 ||
	    canon_host_path(b->host->root, *canon, hp, sizeof(hp)) < 0 || lstat(hp, &st) < 0 ||
	    !S_ISREG(st.st_mode) || canon_host_path(b->host->root, dir, hp, sizeof(hp)) < 0 ||
	    lstat(hp, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	char *d = strdup(dir);
	if (!d)
		return false;
	free(*canon);
	*canon = d;
	return true;
}

int gb_add_baseline(struct build *b)
{
	for (size_t i = 0; i < sizeof(baseline) / sizeof(baseline[0]); i++) {
		unsigned access = baseline_access(i, b->host);
		int r = 0;
		/* a private place is made anew at its path: the host's is irrelevant */
		if (access & GRANT_PRIVATE)
			r = gb_add(b->g, strdup(baseline[i].path), strdup(baseline[i].path), access,
				   ORIGIN_BASELINE, true);
		else if (access)
			r = gb_add_requested(b, baseline[i].path, access, ORIGIN_BASELINE, false);
		if (r < 0 && b->refused)
			return r;
		if (r < 0)
			return err_set(b->err, ERR_UNAVAILABLE, -r, "baseline grant '%s'",
				       baseline[i].path);
	}
	for (size_t i = 0; b->host->cgroups && b->host->cgroups[i]; i++) {
		int r = gb_add_requested(b, b->host->cgroups[i], GRANT_READ, ORIGIN_BASELINE,
					 false);
		if (r < 0 && b->refused)
			return r;
	}
	/* Landlock alone: the step's own terminal, never the host's other ones */
	for (size_t i = 0; !b->host->namespaces && b->host->ttys && b->host->ttys[i]; i++) {
		int r = gb_add_requested(b, b->host->ttys[i], DEVRW, ORIGIN_BASELINE, false);
		if (r < 0 && b->refused)
			return r;
	}
	for (size_t i = 0; i < sizeof(etc_explicit) / sizeof(etc_explicit[0]); i++) {
		char *canon = NULL, hp[PATH_MAX * 2];
		bool exists;
		int r = gb_resolve(b, etc_explicit[i], ORIGIN_BASELINE_TARGET, &canon, &exists,
				   NULL);
		if (b->refused) {
			free(canon);
			return r;
		}
		if (r < 0 || !exists || strcmp(canon, etc_explicit[i]) == 0) {
			/* missing, or not a symlink: already covered by /etc */
			free(canon);
			continue;
		}
		by_daemon_folder(b, &canon);
		if (!b->host->hide_etc_secrets) {
			r = gb_add(b->g, canon, strdup(etc_explicit[i]), GRANT_READ,
				   ORIGIN_BASELINE_TARGET, true);
		} else {
			r = canon_host_path(b->host->root, canon, hp, sizeof(hp));
			if (r == 0)
				r = gb_add_world_readable(b, AT_FDCWD, hp, canon, canon, GRANT_READ,
							  ORIGIN_BASELINE_TARGET, DT_UNKNOWN);
			free(canon);
		}
		if (r < 0)
			return err_set(b->err, ERR_UNAVAILABLE, -r, "baseline grant '%s'",
				       etc_explicit[i]);
	}
	return 0;
}

/*
 * The browser's own folder holds its libraries and resources. A browser the
 * step installed into the persistent folder (or any write grant) is already
 * covered there: granting more would let that step choose what the next run
 * gets, so nothing is added, and it is never an error.
 */
static int add_browser(struct build *b, const char *exe)
{
	char norm[PATH_MAX], *canon = NULL;
	bool exists;
	const struct wloc *w = NULL;
	if (path_normalize(exe, norm, sizeof(norm)) == 0)
		w = gb_holder(&b->all, norm);
	int r = w ? 0 : gb_resolve(b, exe, ORIGIN_BROWSER, &canon, &exists, NULL);
	if (b->refused)
		return r;
	if (!w && r == 0 && exists)
		w = gb_holder(&b->all, canon);
	if (w) {
		free(canon);
		char *why = strv_fmt("already covered by the %s '%s'", w->what, w->path);
		r = why ? gb_skip(b->g, exe, ORIGIN_BROWSER, why) : -ENOMEM;
		free(why);
		return r < 0 ? err_set(b->err, ERR_USAGE, -r, "AGENT_BROWSER_EXECUTABLE_PATH") : 0;
	}
	if (r < 0 || !exists) {
		free(canon);
		r = gb_skip(b->g, exe, ORIGIN_BROWSER, "does not exist");
		return r < 0 ? err_set(b->err, ERR_USAGE, -r, "AGENT_BROWSER_EXECUTABLE_PATH") : 0;
	}
	char *slash = strrchr(canon, '/');
	if (slash && slash != canon)
		*slash = '\0';
	r = gb_add_requested(b, canon, RX, ORIGIN_BROWSER, false);
	free(canon);
	return r;
}

int gb_add_extras(struct build *b)
{
	const struct grants_host *host = b->host;
	if (host->extra_paths) {
		char *copy = strdup(host->extra_paths);
		if (!copy)
			return err_set(b->err, ERR_USAGE, ENOMEM, "SANDBOX_EXTRA_SYSTEM_PATHS");
		int r = 0;
		for (char *save = NULL, *p = strtok_r(copy, ":", &save); p && r == 0;
		     p = strtok_r(NULL, ":", &save)) {
			if (p[0] != '/')
				r = gb_skip(b->g, p, ORIGIN_EXTRA, "not an absolute path");
			else
				r = gb_add_requested(b, p, RX, ORIGIN_EXTRA, false);
		}
		free(copy);
		if (r < 0)
			return r;
	}
	if (host->browser_exe && host->browser_exe[0] == '/')
		return add_browser(b, host->browser_exe);
	return 0;
}

/* grants.h: by the names keys and credentials go by, in dir itself (not beneath). */
bool grants_key_name(const char *name)
{
	static const char *const names[] = {"id_rsa",  "id_ed25519",     "id_ecdsa",
					    "id_dsa",  "credentials",    ".netrc",
					    ".pgpass", "authorized_keys"};
	static const char *const ends[] = {".pem", ".key", ".p12", ".pfx", ".kdbx", ".gpg"};
	size_t len = strlen(name);
	bool yes = false;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		yes |= strcmp(name, names[k]) == 0;
	for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
		yes |= len > strlen(ends[k]) && strcmp(name + len - strlen(ends[k]), ends[k]) == 0;
	return yes;
}

const char *grants_home_tool(const char *path, const char *home, char *root, size_t cap)
{
	static const char *const tools[][2] = {
		{".pyenv", "pyenv"},
		{".rbenv", "rbenv"},
		{".goenv", "goenv"},
		{".jenv", "jenv"},
		{".nvm", "nvm"},
		{".volta", "Volta"},
		{".local/share/fnm", "fnm"},
		{".local/share/mise", "mise"},
		{".asdf", "asdf"},
		{".rustup", "rustup"},
		{".cargo", "rustup (cargo's bin folder)"},
		{".sdkman", "SDKMAN!"},
		{".bun", "Bun"},
		{".deno", "Deno"},
	};
	if (!home || !path || !path_beneath(path, home))
		return NULL;
	for (size_t k = 0; k < sizeof(tools) / sizeof(tools[0]); k++) {
		char r[PATH_MAX];
		snprintf(r, sizeof(r), "%s/%s", home, tools[k][0]);
		if (path_beneath(path, r)) {
			snprintf(root, cap, "%s", r);
			return tools[k][1];
		}
	}
	return NULL;
}

bool grants_holds_keys(const char *dir)
{
	struct path_dir d;
	struct path_entry e;
	bool yes = false;
	if (path_dir_open(&d, AT_FDCWD, dir) < 0)
		return false;
	while (!yes && path_dir_next(&d, &e))
		yes = grants_key_name(e.name);
	path_dir_close(&d);
	return yes;
}

/* home_files / --home-file: the user's own files, handed over read-only one by one. */
int gb_add_home_files(struct build *b)
{
	const struct {
		const struct strv *list;
		enum grant_origin origin;
	} lists[] = {{&b->cfg->home_policy, ORIGIN_POLICY}, {&b->cfg->home_flag, ORIGIN_FLAG}};
	for (size_t l = 0; l < 2; l++) {
		for (size_t i = 0; i < lists[l].list->n; i++) {
			if (!b->home_norm)
				return err_set(b->err, ERR_USAGE, 0,
					       "home file '%s': HOME is not set to "
					       "an absolute path",
					       lists[l].list->v[i]);
			const char *name = lists[l].list->v[i];
			char *path = strv_fmt("%s/%s", b->home_norm, name);
			int r = path ? 0 : -ENOMEM;
			/* files one by one: HOME itself, or a folder holding keys, hands
			 * them all over */
			char norm[PATH_MAX];
			if (r == 0 && path_normalize(path, norm, sizeof(norm)) == 0 &&
			    strcmp(norm, b->home_norm) == 0) {
				err_set(b->err, ERR_USAGE, 0, "home file '%s' is HOME itself",
					name);
				err_hint(b->err, "name the files the step needs one by one "
						 "(--home-file .gitconfig)");
				r = -EPERM;
			}
			if (r == 0 && grants_holds_keys(path)) {
				err_set(b->err, ERR_USAGE, 0,
					"home file '%s': '%s' is a folder "
					"holding keys or credentials",
					name, path);
				err_hint(b->err,
					 "name the files the step needs one by one (--home-file "
					 "%s/config, --home-file %s/known_hosts), never the keys",
					 name, name);
				r = -EPERM;
			}
			if (r == 0)
				r = gb_add_requested(b, path, GRANT_READ, lists[l].origin, false);
			free(path);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * Under the namespaces HOME is a private folder of the step's own: present
 * (tools expect it), holding nothing of the user's but the files a grant
 * names (bound into it), and gone after the run. Not where a grant covers
 * HOME already, or HOME is / or a system folder (a service user's).
 */
int gb_add_home(struct build *b)
{
	const char *home = b->home;
	if (!b->host->namespaces || !home || strcmp(home, "/") == 0 || gb_system_top(home))
		return 0;
	for (size_t i = 0; i < b->g->n; i++)
		if (!(b->g->v[i].access & GRANT_PRIVATE) && path_beneath(home, b->g->v[i].path))
			return 0;
	return gb_add(b->g, strdup(home), strdup(home),
		      GRANT_PRIVATE | GRANT_READ | GRANT_WRITE | GRANT_EXEC, ORIGIN_BASELINE, true);
}
