/* grants on a fake root: the real baseline must never move in a real run,
 * so grants_build takes its root folder as a parameter. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "canon.h"
#include "grants.h"
#include "path.h"
#include "tap.h"

static char root[64];

static void mk(const char *rel, mode_t mode)
{
	char p[512];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	if (mode & S_IFDIR) {
		mkdir(p, 0755);
		chmod(p, mode & 07777);
	} else {
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
		chmod(p, mode & 07777);
	}
}

static void ln(const char *target, const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s%s", root, rel);
	if (symlink(target, p) < 0)
		perror(p);
}

static const struct grant *find(const struct grants *g, const char *path)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->v[i].path, path) == 0)
			return &g->v[i];
	return NULL;
}

static bool skipped(const struct grants *g, const char *path)
{
	for (size_t i = 0; i < g->nskipped; i++)
		if (strcmp(g->skipped[i].path, path) == 0)
			return true;
	return false;
}

static void tree(void)
{
	snprintf(root, sizeof(root), "/tmp/stepbox-grants-XXXXXX");
	if (!mkdtemp(root))
		exit(1);
	const char *dirs[] = {"/usr",
			      "/usr/bin",
			      "/lib",
			      "/etc",
			      "/etc/ssl",
			      "/etc/ssl/certs",
			      "/etc/ld.so.conf.d",
			      "/run",
			      "/run/systemd",
			      "/run/systemd/resolve",
			      "/proc",
			      "/dev",
			      "/dev/pts",
			      "/dev/shm",
			      "/srv",
			      "/srv/wf",
			      "/srv/wf/run",
			      "/srv/wf/run/sub",
			      "/opt",
			      "/opt/tools",
			      "/opt/chrome",
			      "/home",
			      "/home/u",
			      "/home/u/.config",
			      "/usr/lib64",
			      "/w",
			      "/srv/wf2",
			      "/srv/wf2/.sandbox-cache",
			      "/usr/local",
			      "/usr/local/share",
			      NULL};
	for (int i = 0; dirs[i]; i++)
		mk(dirs[i], S_IFDIR | 0755);
	mk("/etc/ssl/private", S_IFDIR | 0700);
	mk("/etc/ssl/private/host.key", 0600);
	mk("/etc/ssl/certs/ca.pem", 0644);
	mk("/etc/passwd", 0644);
	mk("/etc/shadow", 0640);
	mk("/etc/hosts", 0644);
	mk("/etc/ld.so.conf.d/x.conf", 0644);
	mk("/dev/null", 0666);
	mk("/run/systemd/resolve/stub-resolv.conf", 0644);
	/* /etc entries that resolve into /run, not into a daemon's own folder there */
	mk("/run/user", S_IFDIR | 0755);
	mk("/run/user/1000", S_IFDIR | 0700);
	mk("/run/shared", S_IFDIR | 0775);
	mk("/run/gai.conf", 0644);
	mk("/run/user/1000/mime.types", 0644);
	mk("/run/shared/os-release", 0644);
	ln("../run/gai.conf", "/etc/gai.conf");
	ln("../run/user/1000/mime.types", "/etc/mime.types");
	ln("../run/shared/os-release", "/etc/os-release");
	mk("/opt/chrome/chrome", 0755);
	ln("usr/bin", "/bin");
	/* the systemd-resolved case of field notes incident 2 */
	ln("../run/systemd/resolve/stub-resolv.conf", "/etc/resolv.conf");
	ln("/etc/loop2", "/etc/loop1");
	ln("/etc/loop1", "/etc/loop2");
	ln("usr/lib64", "/lib64"); /* merged /usr: outside every write grant, fine */
	ln("usr", "/sysusr");
	ln("home/u", "/hu");
	/* what a previous step plants in the places it may write */
	ln("/home/u/.config", "/srv/wf/run/ssh");
	ln("/home/u/.config", "/w/link");
	ln("/etc", "/w/etc");
	ln("/opt/tools", "/srv/wf2/.sandbox-cache/bin");
	ln("/home/u/.config", "/dev/shm/x");
}

static struct grants_host host(bool hide)
{
	return (struct grants_host){.root = root,
				    .cwd = "/srv/wf/run",
				    .home = "/home/u",
				    .hide_etc_secrets = hide,
				    .keep_links = true};
}

/* A config with the given read and write flags (NULL-terminated lists). */
static void flags(struct stepbox_config *cfg, const char *const *reads, const char *const *writes)
{
	policy_release(cfg);
	policy_init(cfg);
	for (; reads && *reads; reads++)
		strv_push(&cfg->read_flag, *reads);
	for (; writes && *writes; writes++)
		strv_push(&cfg->write_flag, *writes);
}

struct seen {
	char links[8][256];
	char targets[8][256];
	int n;
};

static int record(void *arg, const char *link, const char *target)
{
	struct seen *s = arg;
	if (s->n < 8) {
		snprintf(s->links[s->n], sizeof(s->links[0]), "%s", link);
		snprintf(s->targets[s->n], sizeof(s->targets[0]), "%s", target);
		s->n++;
	}
	return 0;
}

/* Refused with a message naming the grant, the symlink and its target. */
static void refused(const struct stepbox_config *cfg, const struct grants_host *h,
		    const char *grant, const char *link, const char *where, int line)
{
	struct grants g;
	struct stepbox_err err = {0};
	int r = grants_build(cfg, h, &g, &err);
	int ok = r < 0 && err.kind == ERR_USAGE && strstr(err.msg, grant) &&
		 strstr(err.msg, link) && strstr(err.msg, "/home/u/.config") &&
		 strstr(err.msg, where) && strstr(err.hint, "remove");
	if (!ok)
		printf("# line %d: r=%d msg='%s' hint='%s'\n", line, r, err.msg, err.hint);
	if (r == 0)
		grants_release(&g);
	tap_ok(ok, __FILE__, line, grant);
}
#define REFUSED(cfg, h, grant, link, where) refused(cfg, h, grant, link, where, __LINE__)

/* Issue 10, item 8: a symlink planted where a step may write redirects nothing. */
static void test_planted_links(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	struct grants_host h = host(false);
	policy_init(&cfg);

	/* the resolver says which symlinks it went through */
	struct seen s = {0};
	char *out = NULL;
	bool exists;
	CHECK(canon_links(root, "/lib64/x/../y", &out, &exists, record, &s) == 0);
	CHECK_STR(out, "/usr/lib64/y");
	CHECK(s.n == 1 && strcmp(s.links[0], "/lib64") == 0 &&
	      strcmp(s.targets[0], "usr/lib64") == 0);
	free(out);
	memset(&s, 0, sizeof(s));
	CHECK(canon_links(root, "/w/etc/resolv.conf", &out, &exists, record, &s) == 0);
	CHECK_STR(out, "/run/systemd/resolve/stub-resolv.conf");
	CHECK(s.n == 2 && strcmp(s.links[0], "/w/etc") == 0 &&
	      strcmp(s.links[1], "/etc/resolv.conf") == 0);
	free(out);

	/* positive control: outside every write grant a symlink is fine */
	flags(&cfg, (const char *[]){"/lib64", "/w/link", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/usr/lib64") && find(&g, "/home/u/.config"));
	grants_release(&g);

	/* in the workdir */
	flags(&cfg, (const char *[]){"/srv/wf/run/ssh", NULL}, NULL);
	REFUSED(&cfg, &h, "flag path '/srv/wf/run/ssh'", "'/srv/wf/run/ssh'",
		"workdir '/srv/wf/run'");
	/* a read-only workdir is no place a step could have planted it */
	cfg.workdir_readonly = true;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/home/u/.config"));
	grants_release(&g);

	/* in a write grant, whoever asks: a read, a write, the workdir, an extra */
	flags(&cfg, (const char *[]){"/w/link", NULL}, (const char *[]){"/w", NULL});
	REFUSED(&cfg, &h, "'/w/link'", "'/w/link'", "write grant '/w'");
	flags(&cfg, NULL, (const char *[]){"/w", "/w/link", NULL});
	REFUSED(&cfg, &h, "'/w/link'", "'/w/link'", "write grant '/w'");
	flags(&cfg, NULL, (const char *[]){"/w", NULL});
	cfg.workdir = strdup("/w/link/sub");
	REFUSED(&cfg, &h, "workdir path '/w/link/sub'", "'/w/link'", "write grant '/w'");
	/* -w /w -w /w/etc (-> /etc): refused as broad, and as planted when broad is allowed */
	flags(&cfg, NULL, (const char *[]){"/w", "/w/etc", NULL});
	CHECK(grants_build(&cfg, &h, &g, &err) < 0);
	CHECK_HAS(err.msg, "resolves to '/etc'");
	cfg.allow_broad_grants = true;
	CHECK(grants_build(&cfg, &h, &g, &err) < 0);
	CHECK_HAS(err.msg, "symlink '/w/etc' -> '/etc'");
	flags(&cfg, NULL, (const char *[]){"/w", NULL});
	h.extra_paths = "/opt/tools:/w/link";
	REFUSED(&cfg, &h, "SANDBOX_EXTRA_SYSTEM_PATHS path '/w/link'", "'/w/link'", "write grant");
	h.extra_paths = NULL;
	/* the baseline writes no host folder: /dev/shm is private or not granted */
	flags(&cfg, (const char *[]){"/dev/shm/x", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(grants_covers(&g, "/home/u/.config", GRANT_READ));
	grants_release(&g);

	/* in the persistent folder */
	flags(&cfg, (const char *[]){"/srv/wf2/.sandbox-cache/bin", NULL}, NULL);
	cfg.persist = strdup("/srv/wf2/.sandbox-cache");
	/* REFUSED wants /home/u/.config in the message; this link goes to /opt/tools */
	CHECK(grants_build(&cfg, &h, &g, &err) == -ELOOP && err.kind == ERR_USAGE);
	CHECK_HAS(err.msg, "persistent folder '/srv/wf2/.sandbox-cache'");
	CHECK_HAS(err.msg, "'/srv/wf2/.sandbox-cache/bin' -> '/opt/tools'");

	/* a browser inside the persistent folder grants nothing more, and is no error */
	flags(&cfg, NULL, NULL);
	cfg.persist = strdup("/srv/wf2/.sandbox-cache");
	h.browser_exe = "/srv/wf2/.sandbox-cache/bin/chrome";
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!find(&g, "/opt/tools") && skipped(&g, "/srv/wf2/.sandbox-cache/bin/chrome"));
	for (size_t i = 0; i < g.nskipped; i++)
		if (g.skipped[i].origin == ORIGIN_BROWSER)
			CHECK_HAS(g.skipped[i].reason, "already covered by the persistent folder");
	grants_release(&g);
	h.browser_exe = "/opt/chrome/chrome"; /* positive control */
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/opt/chrome") && find(&g, "/opt/chrome")->origin == ORIGIN_BROWSER);
	grants_release(&g);
	policy_release(&cfg);
}

static bool covers(const struct grants *g, const char *path, unsigned access)
{
	return grants_covers(g, path, access);
}

/* Issue 10, item 9: root's read grants that cover /etc hide its secrets. */
static void test_etc_split(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	struct grants_host h = host(true);
	policy_init(&cfg);
	const unsigned rx = GRANT_READ | GRANT_EXEC;

	/* -r /: every entry of / but etc is a rule of its own, /etc is walked */
	flags(&cfg, (const char *[]){"/", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!find(&g, "/") && !find(&g, "/etc"));
	CHECK(find(&g, "/srv") && find(&g, "/srv")->access == rx &&
	      find(&g, "/srv")->origin == ORIGIN_FLAG);
	CHECK(find(&g, "/opt") && find(&g, "/home") && find(&g, "/run"));
	CHECK(covers(&g, "/etc/passwd", rx) && covers(&g, "/etc/ssl/certs/ca.pem", rx));
	CHECK(!covers(&g, "/etc/shadow", GRANT_READ));
	CHECK(!covers(&g, "/etc/ssl/private/host.key", GRANT_READ));
	CHECK(skipped(&g, "/etc/shadow") && skipped(&g, "/etc/ssl/private"));
	bool bin_link = false;
	for (size_t i = 0; i < g.nlinks; i++)
		bin_link |= !strcmp(g.links[i].path, "/bin");
	CHECK(bin_link); /* no rule for a symlink; a mount namespace recreates it */
	/* each hidden entry is said once, though the baseline walked /etc too */
	int shadows = 0;
	for (size_t i = 0; i < g.nskipped; i++)
		shadows += !strcmp(g.skipped[i].path, "/etc/shadow");
	CHECK(shadows == 1);
	grants_release(&g);

	/* a user with no secret to hide: /etc whole (positive control); under
	 * Landlock alone / is split around /dev only (test_devices), under the
	 * namespaces / is one bind */
	struct grants_host plain = host(false);
	CHECK(grants_build(&cfg, &plain, &g, &err) == 0);
	CHECK(!find(&g, "/") && find(&g, "/etc") && covers(&g, "/etc/shadow", GRANT_READ));
	CHECK(find(&g, "/srv") && find(&g, "/dev"));
	grants_release(&g);
	plain.namespaces = true;
	CHECK(grants_build(&cfg, &plain, &g, &err) == 0);
	CHECK(find(&g, "/") && covers(&g, "/etc/shadow", GRANT_READ));
	grants_release(&g);

	/* -r /etc, SANDBOX_EXTRA_SYSTEM_PATHS=/etc and -r /etc/ssl */
	flags(&cfg, (const char *[]){"/etc", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(covers(&g, "/etc/passwd", rx) && !covers(&g, "/etc/shadow", GRANT_READ));
	CHECK(!find(&g, "/etc") && !covers(&g, "/etc/ssl/private/host.key", GRANT_READ));
	grants_release(&g);
	flags(&cfg, NULL, NULL);
	h.extra_paths = "/etc";
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(covers(&g, "/etc/passwd", rx) && !covers(&g, "/etc/shadow", GRANT_READ));
	grants_release(&g);
	h.extra_paths = NULL;
	flags(&cfg, (const char *[]){"/etc/ssl", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(covers(&g, "/etc/ssl/certs/ca.pem", rx) && find(&g, "/etc/ssl/certs"));
	CHECK(!covers(&g, "/etc/ssl/private/host.key", GRANT_READ) && !find(&g, "/etc/ssl"));
	grants_release(&g);

	/* a grant that names a hidden entry exactly gets it */
	flags(&cfg, (const char *[]){"/etc/shadow", "/etc/ssl/private", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(covers(&g, "/etc/shadow", rx) && covers(&g, "/etc/ssl/private/host.key", rx));
	CHECK(!covers(&g, "/etc/gshadow", GRANT_READ));
	grants_release(&g);

	/* a read-only workdir of / (allowed) is split too */
	flags(&cfg, NULL, NULL);
	cfg.workdir = strdup("/");
	cfg.workdir_readonly = cfg.allow_broad_grants = true;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!find(&g, "/") && !covers(&g, "/etc/shadow", GRANT_READ));
	CHECK(covers(&g, "/srv/wf/run", rx) && covers(&g, "/etc/passwd", rx));
	grants_release(&g);

	/* write grants are taken as given: -w /etc/ssl covers what it holds */
	flags(&cfg, NULL, (const char *[]){"/etc/ssl", NULL});
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/etc/ssl") && covers(&g, "/etc/ssl/private/host.key", GRANT_WRITE));
	grants_release(&g);
	policy_release(&cfg);
}

/* A broad workdir or write grant is refused with the hint, unless allowed. */
static void broad(const struct stepbox_config *cfg, const struct grants_host *h, const char *want,
		  int line)
{
	struct grants g;
	struct stepbox_err err = {0};
	int r = grants_build(cfg, h, &g, &err);
	int ok = r == -EPERM && err.kind == ERR_USAGE && strstr(err.msg, want) &&
		 strstr(err.hint, "-C DIR") && strstr(err.hint, "allow_broad_grants");
	if (!ok)
		printf("# line %d: r=%d msg='%s' hint='%s'\n", line, r, err.msg, err.hint);
	if (r == 0)
		grants_release(&g);
	tap_ok(ok, __FILE__, line, want);
	/* the same with allow_broad_grants goes through */
	struct stepbox_config allowed = *cfg;
	allowed.allow_broad_grants = true;
	r = grants_build(&allowed, h, &g, &err);
	if (r < 0)
		printf("# line %d: allowed: r=%d msg='%s'\n", line, r, err.msg);
	else
		grants_release(&g);
	tap_ok(r == 0, __FILE__, line, "allow_broad_grants lets it through");
}
#define BROAD(cfg, h, want) broad(cfg, h, want, __LINE__)

/* Issue 10, item 10. */
static void test_broad(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	struct grants_host h = host(false);
	policy_init(&cfg);

	h.cwd = "/"; /* run from /, as systemd starts services */
	BROAD(&cfg, &h, "refusing the workdir '/': it is the whole file system");
	cfg.workdir_readonly = true;
	BROAD(&cfg, &h, "refusing the read-only workdir '/'");
	h = host(false);
	flags(&cfg, NULL, NULL);
	cfg.workdir = strdup("/usr/../");
	BROAD(&cfg, &h, "refusing the workdir '/usr/../'");
	const char *const each[] = {"/usr",    "/etc",  "/bin", "/sbin", "/lib", "/lib32", "/lib64",
				    "/libx32", "/boot", "/dev", "/proc", "/sys", "/var",   "/run"};
	char made[64][80];
	int nmade = 0;
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		snprintf(made[nmade], sizeof(made[0]), "%s%s", root, each[i]);
		if (mkdir(made[nmade], 0755) == 0) /* so that the allowed build finds it */
			nmade++;
		flags(&cfg, NULL, (const char *[]){each[i], NULL});
		BROAD(&cfg, &h, "it is a top-level system folder");
	}
	while (nmade > 0)
		rmdir(made[--nmade]);
	/* as resolved: a symlink to /usr, and HOME through a symlink */
	flags(&cfg, NULL, (const char *[]){"/sysusr", NULL});
	BROAD(&cfg, &h, "'/sysusr': it resolves to '/usr', a top-level system folder");
	flags(&cfg, NULL, (const char *[]){"/home/u/", NULL});
	BROAD(&cfg, &h, "it is the caller's HOME");
	flags(&cfg, NULL, (const char *[]){"/hu", NULL});
	BROAD(&cfg, &h, "resolves to '/home/u', the caller's HOME");
	flags(&cfg, NULL, NULL);
	cfg.persist = strdup("/var");
	BROAD(&cfg, &h, "refusing the persistent folder '/var'");
	flags(&cfg, NULL, NULL);
	cfg.workdir = strdup("/home/u");
	cfg.workdir_readonly = true;
	BROAD(&cfg, &h, "read-only workdir '/home/u'");

	/* folders beneath them are fine; a read grant of / is no write */
	flags(&cfg, (const char *[]){"/", "/usr", NULL},
	      (const char *[]){"/usr/local/share", "/home/u/.config", "/usr/lib64", NULL});
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(covers(&g, "/usr/local/share/x", GRANT_WRITE) && !covers(&g, "/usr/x", GRANT_WRITE));
	grants_release(&g);
	/* with no HOME to protect, HOME is any folder */
	h.home = "";
	flags(&cfg, NULL, (const char *[]){"/home/u", NULL});
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	grants_release(&g);
	policy_release(&cfg);
}

/* The workdir and persistent folder are made without following a symlink. */
static void test_prepare_dirs(void)
{
	char base[600], p[700], q[700];
	struct stepbox_err err = {0};
	snprintf(base, sizeof(base), "%s/pd", root);
	mkdir(base, 0755);
	struct grants g = {0};
	snprintf(p, sizeof(p), "%s/wf/.sandbox-cache", base);
	g.persist = strdup(p);
	snprintf(p, sizeof(p), "%s/wf/run/1", base);
	g.workdir = strdup(p);
	CHECK(grants_prepare_dirs(&g, &err) == 0);
	struct stat st;
	snprintf(p, sizeof(p), "%s/wf/.sandbox-cache/CACHEDIR.TAG", base);
	CHECK(stat(p, &st) == 0 && S_ISREG(st.st_mode));
	snprintf(q, sizeof(q), "%s/wf/.sandbox-cache", base);
	CHECK(stat(q, &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(g.workdir, &st) == 0 && S_ISDIR(st.st_mode));
	/* a user's own CACHEDIR.TAG stays as it is */
	int fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "mine\n", 5) == 5);
	close(fd);
	CHECK(grants_prepare_dirs(&g, &err) == 0);
	char buf[16] = "";
	fd = open(p, O_RDONLY);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 5 && strcmp(buf, "mine\n") == 0);
	close(fd);
	grants_release(&g);

	/* a planted symlink on the way is an error that names it; nothing is made beyond */
	snprintf(p, sizeof(p), "%s/target", base);
	mkdir(p, 0755);
	snprintf(q, sizeof(q), "%s/wf/run/2", base);
	CHECK(symlink(p, q) == 0);
	snprintf(p, sizeof(p), "%s/wf/run/2/sub", base);
	g.workdir = strdup(p);
	CHECK(grants_prepare_dirs(&g, &err) == -ELOOP && err.kind == ERR_USAGE);
	CHECK_HAS(err.msg, "/wf/run/2' is a symlink");
	snprintf(p, sizeof(p), "%s/target/sub", base);
	CHECK(access(p, F_OK) < 0);
	grants_release(&g);
	snprintf(p, sizeof(p), "%s/wf/run/2/.sandbox-cache", base);
	g.persist = strdup(p);
	snprintf(p, sizeof(p), "%s/wf/run/3", base);
	g.workdir = strdup(p);
	CHECK(grants_prepare_dirs(&g, &err) == -ELOOP);
	CHECK_HAS(err.msg, "persistent folder");
	snprintf(p, sizeof(p), "%s/target/.sandbox-cache", base);
	CHECK(access(p, F_OK) < 0);
	grants_release(&g);

	/* a CACHEDIR.TAG planted as a symlink is neither followed nor an error */
	snprintf(p, sizeof(p), "%s/c2", base);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/outside", base);
	snprintf(q, sizeof(q), "%s/c2/CACHEDIR.TAG", base);
	CHECK(symlink(p, q) == 0);
	snprintf(q, sizeof(q), "%s/c2", base);
	g.persist = strdup(q);
	g.workdir = strdup(q);
	CHECK(grants_prepare_dirs(&g, &err) == 0);
	CHECK(access(p, F_OK) < 0);
	grants_release(&g);
}

/* The baseline follows the layers: private places under the namespaces,
 * the step's own terminal (and no /dev/pts, /dev/shm, /tmp) under Landlock alone. */
static void test_baseline_layers(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	policy_init(&cfg);
	struct grants_host h = host(false);
	h.namespaces = true;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	unsigned pts = 0, shm = 0, tmp = 0, proc = 0;
	for (size_t i = 0; i < g.n; i++) {
		unsigned *slot = strcmp(g.v[i].path, "/dev/pts") == 0   ? &pts
				 : strcmp(g.v[i].path, "/dev/shm") == 0 ? &shm
				 : strcmp(g.v[i].path, "/tmp") == 0     ? &tmp
				 : strcmp(g.v[i].path, "/proc") == 0    ? &proc
									: NULL;
		if (slot)
			*slot = g.v[i].access;
	}
	CHECK(pts & GRANT_PRIVATE && pts & GRANT_DEV);
	CHECK(shm & GRANT_PRIVATE && shm & GRANT_WRITE);
	CHECK(tmp & GRANT_PRIVATE && tmp & GRANT_WRITE);
	CHECK(proc & GRANT_PRIVATE && !(proc & GRANT_WRITE));
	grants_release(&g);
	const char *ttys[] = {"/dev/pts/3", NULL};
	h.namespaces = false;
	h.ttys = ttys;
	mk("/dev/pts/3", 0644);
	mk("/dev/ptmx", 0644);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!grants_covers(&g, "/dev/pts/0", GRANT_READ));
	CHECK(!grants_covers(&g, "/dev/shm/x", GRANT_READ));
	CHECK(!grants_covers(&g, "/tmp/x", GRANT_READ));
	CHECK(grants_covers(&g, "/dev/pts/3", GRANT_READ | GRANT_WRITE | GRANT_DEV));
	CHECK(grants_covers(&g, "/dev/ptmx", GRANT_READ | GRANT_WRITE | GRANT_DEV));
	for (size_t i = 0; i < g.n; i++)
		CHECK(!(g.v[i].access & GRANT_PRIVATE));
	grants_release(&g);
	policy_release(&cfg);
}

/*
 * A grant covering the host's real /dev: under Landlock alone no rule falls
 * on a device node but the baseline's (no right says nodev); the namespaces
 * bind it whole, nodev, and a terminal in their own /dev/pts is skipped.
 */
static void test_devices(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	policy_init(&cfg);
	const char *const reads[] = {"/dev", NULL};
	flags(&cfg, reads, NULL);
	/* a workdir that is no broad grant (/tmp itself is one) */
	struct grants_host h = {.root = "/", .cwd = "/var/cache", .keep_links = true};
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!find(&g, "/dev"));
	size_t devices = 0;
	for (size_t i = 0; i < g.n; i++) {
		struct stat st;
		bool dev = lstat(g.v[i].path, &st) == 0 &&
			   (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
		CHECK(!dev || (g.v[i].access & GRANT_DEV));
	}
	for (size_t i = 0; i < g.nskipped; i++)
		devices += strstr(g.skipped[i].reason, "device node") != NULL;
	CHECK(devices > 0);
	CHECK(find(&g, "/dev/null") && (find(&g, "/dev/null")->access & GRANT_DEV));
	CHECK(!grants_covers(&g, "/dev/pts/0", GRANT_READ));
	grants_release(&g);
	/* named: still no rule */
	const char *const null_read[] = {"/dev/zero", "/dev/pts/0", NULL};
	flags(&cfg, null_read, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/dev/zero") && (find(&g, "/dev/zero")->access & GRANT_DEV)); /* baseline */
	CHECK(!grants_covers(&g, "/dev/pts/0", GRANT_READ));
	grants_release(&g);
	/* the namespaces: bound whole (nodev); their devpts is the step's own */
	h.namespaces = true;
	flags(&cfg, reads, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/dev") && !(find(&g, "/dev")->access & GRANT_DEV));
	grants_release(&g);
	/* nor is a host process's /proc entry bound into their new /proc */
	const char *const procs[] = {"/proc/1", "/proc/self", NULL};
	flags(&cfg, procs, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(skipped(&g, "/proc/1") && skipped(&g, "/proc/self"));
	for (size_t i = 0; i < g.n; i++)
		CHECK(!path_beneath(g.v[i].path, "/proc") || strcmp(g.v[i].path, "/proc") == 0);
	grants_release(&g);
	/* under Landlock alone a write grant at an entry of the walk is the
	 * write grant's (it was refused: a read rule inside a write grant);
	 * the same read grant asked for inside it is still refused */
	h.namespaces = false;
	flags(&cfg, reads, (const char *[]){"/dev/shm", NULL});
	cfg.allow_broad_grants = true; /* -w /dev/shm: every user's, asked for on purpose */
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(find(&g, "/dev/shm") && (find(&g, "/dev/shm")->access & GRANT_WRITE));
	for (size_t i = 0; i < g.n; i++)
		CHECK(!path_beneath(g.v[i].path, "/dev/shm") || (g.v[i].access & GRANT_WRITE));
	CHECK(!grants_covers(&g, "/dev/pts/0", GRANT_READ) && find(&g, "/dev/null"));
	grants_release(&g);
	flags(&cfg, (const char *[]){"/dev/shm", NULL}, (const char *[]){"/dev/shm", NULL});
	cfg.allow_broad_grants = true;
	CHECK(grants_build(&cfg, &h, &g, &err) < 0 && err.kind == ERR_UNAVAILABLE);
	CHECK_HAS(err.msg, "the read-only grant '/dev/shm' lies in the write grant '/dev/shm'");
	/* the entry left to a write location does not make its folder whole: a
	 * read rule on the folder would cover the write location's device nodes,
	 * which its own walk left out (a fake /dev; mknod needs root) */
	char fdev[96], node[128];
	snprintf(fdev, sizeof(fdev), "%s/fdev", root);
	snprintf(node, sizeof(node), "%s/bus/usb/001/002", fdev);
	const char *fdevs[] = {"/fdev", NULL};
	struct grants_host fh = {
		.root = root, .cwd = "/srv/wf/run", .keep_links = true, .dev_mounts = fdevs};
	mk("/fdev", S_IFDIR | 0755);
	mk("/fdev/bus", S_IFDIR | 0755);
	mk("/fdev/bus/usb", S_IFDIR | 0755);
	mk("/fdev/bus/usb/001", S_IFDIR | 0755);
	mk("/fdev/bus/usb/001/notes", 0644);
	if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		flags(&cfg, (const char *[]){"/fdev/bus", NULL},
		      (const char *[]){"/fdev/bus/usb/001", NULL});
		CHECK(grants_build(&cfg, &fh, &g, &err) == 0);
		CHECK(!find(&g, "/fdev/bus") && !find(&g, "/fdev/bus/usb"));
		CHECK(!covers(&g, "/fdev/bus/usb/001/002", GRANT_READ));
		CHECK(covers(&g, "/fdev/bus/usb/001/notes", GRANT_WRITE));
		grants_release(&g);
	} else {
		printf("# skipped the merge case: mknod: %s\n", strerror(errno));
	}
	h.namespaces = true;
	if (access("/dev/pts/0", F_OK) == 0) {
		flags(&cfg, null_read, NULL);
		CHECK(grants_build(&cfg, &h, &g, &err) == 0);
		CHECK(!find(&g, "/dev/pts/0") && skipped(&g, "/dev/pts/0"));
		grants_release(&g);
	}
	policy_release(&cfg);
}

/*
 * Under Landlock alone a read-only grant asked for inside a write grant
 * would be writable (rights add up): refused there, and taken under the
 * namespaces, which bind it read-only; one beside the write grant is taken.
 */
static void test_read_in_write(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	policy_init(&cfg);
	flags(&cfg, (const char *[]){"/srv/wf/run/sub", NULL}, NULL);
	struct grants_host h = host(false);
	CHECK(grants_build(&cfg, &h, &g, &err) < 0 && err.kind == ERR_UNAVAILABLE);
	CHECK_HAS(err.msg, "the read-only grant '/srv/wf/run/sub' lies in the write grant "
			   "'/srv/wf/run'");
	CHECK_HAS(err.hint, "backend with namespaces");
	h.namespaces = true;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	grants_release(&g);
	h.namespaces = false;
	flags(&cfg, (const char *[]){"/opt/tools", NULL}, NULL);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	grants_release(&g);
	/* root's /etc is split around its secrets: a write grant at one of the
	 * split's entries is the write grant's, a read grant asked for there
	 * is refused */
	h = host(true);
	flags(&cfg, (const char *[]){"/etc", NULL}, (const char *[]){"/etc/ssl", NULL});
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(covers(&g, "/etc/ssl/private/host.key", GRANT_WRITE) &&
	      covers(&g, "/etc/passwd", GRANT_READ) && !covers(&g, "/etc/shadow", GRANT_READ));
	for (size_t i = 0; i < g.n; i++)
		CHECK(!path_beneath(g.v[i].path, "/etc/ssl") || (g.v[i].access & GRANT_WRITE));
	grants_release(&g);
	flags(&cfg, (const char *[]){"/etc/ssl/certs", NULL}, (const char *[]){"/etc/ssl", NULL});
	CHECK(grants_build(&cfg, &h, &g, &err) < 0 && err.kind == ERR_UNAVAILABLE);
	CHECK_HAS(err.msg, "lies in the write grant '/etc/ssl'");
	policy_release(&cfg);
}

/* A read grant keeps the O_PATH fd its resolution opened, for its Landlock rule. */
static bool same_file(int fd, const char *path)
{
	char p[512];
	struct stat a, b;
	snprintf(p, sizeof(p), "%s%s", root, path);
	return fstat(fd, &a) == 0 && stat(p, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static void test_held_fds(void)
{
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	policy_init(&cfg);
	const char *reads[] = {"/opt/chrome/chrome", "/hu/.config", "/etc/ssl", NULL};
	const char *writes[] = {"/w", NULL};
	flags(&cfg, reads, writes);
	struct grants_host h = host(true);
	h.open_fds = true;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	const struct grant *file = find(&g, "/opt/chrome/chrome");
	CHECK(file && file->has_fd && !file->fd_dir && same_file(file->fd, "/opt/chrome/chrome"));
	/* through a symlink: the fd is the target's, opened with no link on its way */
	const struct grant *dir = find(&g, "/home/u/.config");
	CHECK(dir && dir->has_fd && dir->fd_dir && same_file(dir->fd, "/home/u/.config"));
	int kept = dir && dir->has_fd ? dir->fd : -1;
	const struct grant *w = find(&g, "/w");
	CHECK(w && !w->has_fd); /* a write grant's folder may be made anew */
	bool etc_fd = false;
	for (size_t i = 0; i < g.n; i++)
		etc_fd |= g.v[i].has_fd && strncmp(g.v[i].path, "/etc", 4) == 0;
	CHECK(!etc_fd); /* split around /etc's secrets: not one rule */
	grants_close_fds(&g);
	bool any = false;
	for (size_t i = 0; i < g.n; i++)
		any |= g.v[i].has_fd;
	CHECK(!any && kept >= 0 && fcntl(kept, F_GETFD) < 0 && errno == EBADF);
	grants_release(&g);
	h.open_fds = false;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	any = false;
	for (size_t i = 0; i < g.n; i++)
		any |= g.v[i].has_fd;
	CHECK(!any);
	grants_release(&g);
	policy_release(&cfg);
}

int main(void)
{
	tree();
	test_devices();
	test_read_in_write();
	test_held_fds();
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	policy_init(&cfg);

	/* canonicalisation, from root */
	char *out = NULL;
	bool exists;
	CHECK(canon_path(root, "/bin/x", &out, &exists) == 0 && !exists);
	CHECK_STR(out, "/usr/bin/x");
	free(out);
	CHECK(canon_path(root, "/etc/resolv.conf", &out, &exists) == 0 && exists);
	CHECK_STR(out, "/run/systemd/resolve/stub-resolv.conf");
	free(out);
	CHECK(canon_path(root, "/srv/./wf/../wf//run/", &out, &exists) == 0 && exists);
	CHECK_STR(out, "/srv/wf/run");
	free(out);
	CHECK(canon_path(root, "/../..", &out, &exists) == 0);
	CHECK_STR(out, "/");
	free(out);
	CHECK(canon_path(root, "/etc/loop1", &out, &exists) == -ELOOP);
	CHECK(canon_path(root, "/etc/passwd/x", &out, &exists) == -ENOTDIR);

	/* the baseline, as an unprivileged user sees it */
	struct grants_host h = host(false);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	const struct grant *gr = find(&g, "/etc");
	CHECK(gr && gr->access == GRANT_READ && gr->origin == ORIGIN_BASELINE);
	/* a daemon replaces its file by a rename: its folder is granted (by_daemon_folder) */
	gr = find(&g, "/run/systemd/resolve");
	CHECK(gr && gr->origin == ORIGIN_BASELINE_TARGET && gr->access == GRANT_READ);
	CHECK(gr && strcmp(gr->requested, "/etc/resolv.conf") == 0);
	CHECK(!find(&g, "/run/systemd/resolve/stub-resolv.conf"));
	CHECK(grants_covers(&g, "/run/systemd/resolve/stub-resolv.conf", GRANT_READ));
	/* not /run itself, a user's /run/user, or a folder others write: the file alone */
	CHECK(find(&g, "/run/gai.conf") && !find(&g, "/run"));
	CHECK(find(&g, "/run/user/1000/mime.types") && !find(&g, "/run/user/1000"));
	CHECK(find(&g, "/run/shared/os-release") && !find(&g, "/run/shared"));
	gr = find(&g, "/usr/bin");
	CHECK(gr && strcmp(gr->requested, "/bin") == 0 && gr->access == (GRANT_READ | GRANT_EXEC));
	gr = find(&g, "/dev/null");
	CHECK(gr && (gr->access & GRANT_DEV) && (gr->access & GRANT_WRITE));
	CHECK(skipped(&g, "/lib32") && skipped(&g, "/sbin"));
	CHECK(!find(&g, "/etc/passwd")); /* covered by /etc, not repeated */
	gr = find(&g, "/srv/wf/run");
	CHECK(gr && gr->origin == ORIGIN_WORKDIR && (gr->access & GRANT_WRITE));
	CHECK_STR(g.workdir, "/srv/wf/run");
	CHECK(g.persist == NULL);
	CHECK(grants_covers(&g, "/usr/bin/python3", GRANT_EXEC));
	CHECK(!grants_covers(&g, "/etc/passwd", GRANT_EXEC));
	CHECK(grants_covers(&g, "/etc/passwd", GRANT_READ));
	CHECK(!grants_covers(&g, "/etcx/passwd", GRANT_READ));
	CHECK(!grants_covers(&g, "/opt/tools/broker", GRANT_EXEC));
	grants_release(&g);

	/* as root: /etc entry by entry, secrets left out */
	h = host(true);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!find(&g, "/etc"));
	CHECK(find(&g, "/etc/passwd") && find(&g, "/etc/hosts"));
	CHECK(find(&g, "/etc/ssl/certs") && find(&g, "/etc/ld.so.conf.d"));
	CHECK(!find(&g, "/etc/ssl") && !find(&g, "/etc/ssl/private"));
	CHECK(!find(&g, "/etc/shadow") && !find(&g, "/etc/ssl/private/host.key"));
	CHECK(skipped(&g, "/etc/shadow") && skipped(&g, "/etc/ssl/private"));
	/* root: the file, never its daemon's folder (a secret written there later) */
	CHECK(!find(&g, "/run/systemd/resolve") &&
	      find(&g, "/run/systemd/resolve/stub-resolv.conf"));
	CHECK(!grants_covers(&g, "/etc/shadow", GRANT_READ));
	CHECK(!grants_covers(&g, "/etc/ssl/private/host.key", GRANT_READ));
	/* /etc is recorded as split: the namespaces bind it whole and hide the secrets */
	bool etc_split = false;
	for (size_t i = 0; i < g.nsplits; i++)
		etc_split |= !strcmp(g.splits[i].path, "/etc") && g.splits[i].access == GRANT_READ;
	CHECK(etc_split);
	CHECK(g.nlinks == 0); /* a split folder is bound whole: its links are there */
	CHECK(!grants_covers(&g, "/run/systemd/resolve/secret", GRANT_READ));
	CHECK(grants_covers(&g, "/etc/ssl/certs/ca.pem", GRANT_READ));
	grants_release(&g);

	/* as root under the namespaces: /etc whole, idmapped, nothing walked */
	h = host(true);
	char etc[128];
	struct stat est;
	snprintf(etc, sizeof(etc), "%s/etc", root);
	CHECK(stat(etc, &est) == 0);
	h.idmap = true;
	h.idmap_dev = est.st_dev;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	gr = find(&g, "/etc");
	CHECK(gr && gr->world_readable_only && gr->access == GRANT_READ);
	CHECK(!find(&g, "/etc/passwd") && !skipped(&g, "/etc/shadow") && g.nsplits == 0);
	gr = find(&g, "/run/systemd/resolve/stub-resolv.conf"); /* a baseline target, same device */
	CHECK(gr && gr->world_readable_only && !find(&g, "/run/systemd/resolve"));
	gr = find(&g, "/usr/bin");
	CHECK(gr && !gr->world_readable_only);
	grants_release(&g);
	/* on another device than the one tried: walked as before */
	h.idmap_dev = est.st_dev + 1;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	CHECK(!find(&g, "/etc") && find(&g, "/etc/passwd") && skipped(&g, "/etc/shadow"));
	grants_release(&g);

	/* extras: several, one missing, one relative; the browser's folder */
	h = host(false);
	h.extra_paths = "/opt/tools::/opt/missing:rel/x";
	h.browser_exe = "/opt/chrome/chrome";
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	gr = find(&g, "/opt/tools");
	CHECK(gr && gr->origin == ORIGIN_EXTRA && gr->access == (GRANT_READ | GRANT_EXEC));
	CHECK(skipped(&g, "/opt/missing") && skipped(&g, "rel/x"));
	gr = find(&g, "/opt/chrome");
	CHECK(gr && gr->origin == ORIGIN_BROWSER);
	grants_release(&g);

	/* policy paths: a missing read is skipped, a missing write is an error */
	strv_push(&cfg.read_policy, "/home/u/.config");
	strv_push(&cfg.read_flag, "/nope");
	strv_push(&cfg.write_policy, "/srv/wf/.sandbox-cache");
	h = host(false);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	gr = find(&g, "/home/u/.config");
	CHECK(gr && gr->origin == ORIGIN_POLICY && gr->access == (GRANT_READ | GRANT_EXEC));
	CHECK(skipped(&g, "/nope"));
	CHECK_STR(g.persist, "/srv/wf/.sandbox-cache"); /* named .sandbox-cache */
	gr = find(&g, "/srv/wf/.sandbox-cache");
	CHECK(gr && !gr->exists);
	grants_release(&g);

	strv_push(&cfg.write_flag, "/srv/missing");
	CHECK(grants_build(&cfg, &h, &g, &err) == -ENOENT);
	CHECK_HAS(err.msg, "/srv/missing");
	strv_release(&cfg.write_flag);

	/* two persistent folders */
	cfg.persist = strdup("/srv/other/.sandbox-cache");
	CHECK(grants_build(&cfg, &h, &g, &err) < 0);
	CHECK_HAS(err.msg, "two persistent folders");
	free(cfg.persist);
	cfg.persist = strdup("/srv/wf/.sandbox-cache"); /* the same one twice is fine */
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	grants_release(&g);

	/* readonly workdir */
	cfg.workdir_readonly = true;
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	gr = find(&g, "/srv/wf/run");
	CHECK(gr && !(gr->access & GRANT_WRITE));
	grants_release(&g);
	policy_release(&cfg);

	test_planted_links();
	test_etc_split();
	test_broad();
	test_prepare_dirs();
	test_baseline_layers();

	CHECK_STR(grants_access_name(GRANT_READ | GRANT_EXEC), "rx");
	CHECK_STR(grants_access_name(GRANT_READ | GRANT_WRITE | GRANT_DEV), "rw+dev");

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
	return tap_done();
}
