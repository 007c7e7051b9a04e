/* grants on a fake root: the real baseline must never move in a real run,
 * so grants_build takes its root folder as a parameter. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grants.h"
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
	const char *dirs[] = {"/usr", "/usr/bin", "/lib", "/etc", "/etc/ssl", "/etc/ssl/certs",
			      "/etc/ld.so.conf.d", "/run", "/run/systemd", "/run/systemd/resolve",
			      "/proc", "/dev", "/dev/pts", "/dev/shm", "/srv", "/srv/wf",
			      "/srv/wf/run", "/opt", "/opt/tools", "/opt/chrome", "/home",
			      "/home/u", "/home/u/.config", NULL};
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
	mk("/opt/chrome/chrome", 0755);
	ln("usr/bin", "/bin");
	/* the systemd-resolved case of field notes incident 2 */
	ln("../run/systemd/resolve/stub-resolv.conf", "/etc/resolv.conf");
	ln("/etc/loop2", "/etc/loop1");
	ln("/etc/loop1", "/etc/loop2");
}

static struct grants_host host(bool hide)
{
	return (struct grants_host){.root = root, .cwd = "/srv/wf/run",
				    .hide_etc_secrets = hide, .keep_links = true};
}

int main(void)
{
	tree();
	struct stepbox_config cfg;
	struct stepbox_err err = {0};
	struct grants g;
	policy_init(&cfg);

	/* canonicalisation, from root */
	char *out = NULL;
	bool exists;
	CHECK(grants_canon(root, "/bin/x", &out, &exists) == 0 && !exists);
	CHECK_STR(out, "/usr/bin/x");
	free(out);
	CHECK(grants_canon(root, "/etc/resolv.conf", &out, &exists) == 0 && exists);
	CHECK_STR(out, "/run/systemd/resolve/stub-resolv.conf");
	free(out);
	CHECK(grants_canon(root, "/srv/./wf/../wf//run/", &out, &exists) == 0 && exists);
	CHECK_STR(out, "/srv/wf/run");
	free(out);
	CHECK(grants_canon(root, "/../..", &out, &exists) == 0);
	CHECK_STR(out, "/");
	free(out);
	CHECK(grants_canon(root, "/etc/loop1", &out, &exists) == -ELOOP);
	CHECK(grants_canon(root, "/etc/passwd/x", &out, &exists) == -ENOTDIR);

	/* the baseline, as an unprivileged user sees it */
	struct grants_host h = host(false);
	CHECK(grants_build(&cfg, &h, &g, &err) == 0);
	const struct grant *gr = find(&g, "/etc");
	CHECK(gr && gr->access == GRANT_READ && gr->origin == ORIGIN_BASELINE);
	gr = find(&g, "/run/systemd/resolve/stub-resolv.conf");
	CHECK(gr && gr->origin == ORIGIN_BASELINE_TARGET && gr->access == GRANT_READ);
	CHECK(gr && strcmp(gr->requested, "/etc/resolv.conf") == 0);
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
	CHECK(find(&g, "/run/systemd/resolve/stub-resolv.conf"));
	CHECK(!grants_covers(&g, "/etc/shadow", GRANT_READ));
	CHECK(!grants_covers(&g, "/etc/ssl/private/host.key", GRANT_READ));
	/* the symlinks of the split /etc, for a mount namespace to recreate */
	bool resolv_link = false;
	for (size_t i = 0; i < g.nlinks; i++)
		resolv_link |= !strcmp(g.links[i].path, "/etc/resolv.conf") &&
			       !strcmp(g.links[i].target, "../run/systemd/resolve/stub-resolv.conf");
	CHECK(resolv_link);
	CHECK(grants_covers(&g, "/etc/ssl/certs/ca.pem", GRANT_READ));
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

	CHECK_STR(grants_access_name(GRANT_READ | GRANT_EXEC), "rx");
	CHECK_STR(grants_access_name(GRANT_READ | GRANT_WRITE | GRANT_DEV), "rw+dev");

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
	return tap_done();
}
