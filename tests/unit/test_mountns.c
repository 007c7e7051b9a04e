/* The mount plan: pure, from grants to the mounts the child makes. */
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "mountns.h"
#include "tap.h"

static struct grants g;

static void grant(const char *path, unsigned access, bool world_readable_only)
{
	g.v = realloc(g.v, (g.n + 1) * sizeof(*g.v));
	g.v[g.n++] = (struct grant){.path = strdup(path),
				    .requested = strdup(path),
				    .access = access,
				    .origin = ORIGIN_POLICY,
				    .exists = true,
				    .world_readable_only = world_readable_only};
}

static const struct mountns_entry *at(const struct mountns_plan *p, const char *path)
{
	for (size_t i = 0; i < p->nmounts; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return &p->v[i];
	return NULL;
}

/*
 * Named pipes in a read grant beneath a place the step writes (a private
 * /tmp, a write grant) are hidden under stacked; not in a write grant held
 * inside it, nor where nothing above is written, nor under mountns alone.
 */
static void fifos(struct stepbox_config *cfg)
{
	char top[] = "/tmp/stepbox-fifos-XXXXXX", p1[128], p2[128], p3[128], p4[128];
	if (!mkdtemp(top)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(p1, sizeof(p1), "%s/ro/sub/pipe", top);
	snprintf(p2, sizeof(p2), "%s/ro/w/pipe", top);
	snprintf(p3, sizeof(p3), "%s/lone", top);
	snprintf(p4, sizeof(p4), "%s/ro/sub/file", top);
	char d[128];
	snprintf(d, sizeof(d), "%s/ro", top), mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/ro/sub", top), mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/ro/w", top), mkdir(d, 0755);
	CHECK(mkfifo(p1, 0600) == 0 && mkfifo(p2, 0600) == 0 && mkfifo(p3, 0600) == 0);
	fclose(fopen(p4, "w"));
	memset(&g, 0, sizeof(g));
	g.workdir = strdup("/w");
	grant("/tmp", GRANT_READ | GRANT_WRITE | GRANT_PRIVATE, false);
	snprintf(d, sizeof(d), "%s/ro", top), grant(d, GRANT_READ, false);
	snprintf(d, sizeof(d), "%s/ro/w", top), grant(d, GRANT_READ | GRANT_WRITE, false);
	grant(p3, GRANT_READ, false);
	struct mountns_plan p;
	CHECK(mountns_plan(&p, cfg, &g) == 0);
	const struct mountns_entry *e = at(&p, p1);
	CHECK(e && e->kind == MNT_PIPE);
	CHECK(!at(&p, p2) && !at(&p, p4)); /* the write grant's; a plain file */
	mountns_release(&p);
	/* a folder too deep to search (said) leaves its siblings searched */
	char deep[1024], sib[8][160];
	int n = snprintf(deep, sizeof(deep), "%s/ro/deep", top);
	mkdir(deep, 0755);
	for (int i = 0; i < 70; i++)
		n += snprintf(deep + n, sizeof(deep) - (size_t)n, "/d"), mkdir(deep, 0755);
	for (int i = 0; i < 8; i++) {
		snprintf(d, sizeof(d), "%s/ro/s%d", top, i), mkdir(d, 0755);
		snprintf(sib[i], sizeof(sib[i]), "%s/pipe", d);
		mkfifo(sib[i], 0600);
	}
	CHECK(mountns_plan(&p, cfg, &g) == 0);
	int found = 0;
	for (int i = 0; i < 8; i++)
		found += at(&p, sib[i]) && at(&p, sib[i])->kind == MNT_PIPE;
	CHECK(found == 8);
	for (int i = 0; i < 8; i++) {
		unlink(sib[i]);
		snprintf(d, sizeof(d), "%s/ro/s%d", top, i), rmdir(d);
	}
	for (int i = 0; i <= 70; i++) {
		rmdir(deep);
		*strrchr(deep, '/') = '\0';
	}
	e = at(&p, p3);
	CHECK(e && e->kind == MNT_PIPE); /* a grant that is a pipe */
	mountns_release(&p);
	/* mountns alone (no Landlock rule reaches down): only /run is searched */
	g.bind_entries = true;
	CHECK(mountns_plan(&p, cfg, &g) == 0);
	CHECK(!at(&p, p1) && at(&p, p3) && at(&p, p3)->kind == MNT_BIND);
	mountns_release(&p);
	char run[] = "/run/stepbox-fifos-XXXXXX", rp[128];
	if (mkdtemp(run)) { /* root: a pipe in /run under -r / */
		snprintf(rp, sizeof(rp), "%s/initctl", run);
		CHECK(mkfifo(rp, 0600) == 0);
		grant("/", GRANT_READ, false);
		CHECK(mountns_plan(&p, cfg, &g) == 0);
		e = at(&p, rp);
		CHECK(e && e->kind == MNT_PIPE);
		CHECK(!at(&p, p1)); /* outside /run: not searched */
		mountns_release(&p);
		free(g.v[g.n - 1].path);
		free(g.v[g.n - 1].requested);
		g.n--;
		unlink(rp);
		rmdir(run);
	}
	/* nothing written above: no search either */
	g.bind_entries = false;
	free(g.v[0].path);
	free(g.v[0].requested);
	g.v[0].path = strdup("/srv");
	g.v[0].requested = strdup("/srv");
	CHECK(mountns_plan(&p, cfg, &g) == 0);
	CHECK(!at(&p, p1));
	mountns_release(&p);
	grants_release(&g);
	unlink(p1), unlink(p2), unlink(p3), unlink(p4);
	snprintf(d, sizeof(d), "%s/ro/sub", top), rmdir(d);
	snprintf(d, sizeof(d), "%s/ro/w", top), rmdir(d);
	snprintf(d, sizeof(d), "%s/ro", top), rmdir(d);
	rmdir(top);
}

int main(void)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	g.workdir = strdup("/w");
	grant("/usr", GRANT_READ | GRANT_EXEC, false);
	grant("/etc", GRANT_READ, true);
	/* inside the idmapped /etc, asking no more: no mount of its own */
	grant("/etc/ssl", GRANT_READ, true);
	/* asking more (exec): a mount of its own, idmapped too */
	grant("/etc/scripts", GRANT_READ | GRANT_EXEC, true);
	/* a hidden entry named exactly: bound as it is, over the idmapped /etc */
	grant("/etc/shadow", GRANT_READ, false);
	/* a write grant beneath: taken as given */
	grant("/etc/app", GRANT_READ | GRANT_WRITE, false);
	/* a file both ways: idmapped only if every grant on it is */
	grant("/usr/lib/os-release", GRANT_READ, true);
	grant("/usr/lib/os-release", GRANT_READ, false);
	grant("/proc", GRANT_READ | GRANT_PRIVATE, false);
	grant("/tmp", GRANT_READ | GRANT_WRITE | GRANT_PRIVATE, false);
	grant("/w", GRANT_READ | GRANT_WRITE, false);

	struct mountns_plan p;
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	CHECK(p.idmap_userns == -1); /* the caller hands its own in */
	CHECK(p.clone_flags & CLONE_NEWNS);
	const struct mountns_entry *e = at(&p, "/etc");
	CHECK(e && e->kind == MNT_BIND && e->idmap && e->access == GRANT_READ);
	CHECK(!at(&p, "/etc/ssl"));
	e = at(&p, "/etc/scripts");
	CHECK(e && e->kind == MNT_BIND && e->idmap);
	e = at(&p, "/etc/shadow");
	CHECK(e && e->kind == MNT_BIND && !e->idmap);
	e = at(&p, "/etc/app");
	CHECK(e && !e->idmap && (e->access & GRANT_WRITE) && !e->optional);
	e = at(&p, "/usr/lib/os-release");
	CHECK(e && !e->idmap);
	e = at(&p, "/usr");
	CHECK(e && !e->idmap);
	e = at(&p, "/proc");
	CHECK(e && e->kind == MNT_PROC);
	e = at(&p, "/tmp");
	CHECK(e && e->kind == MNT_TMPFS && !e->idmap);
	/* mounts in path order: /etc before what is mounted inside it */
	bool ordered = true;
	for (size_t i = 1; i < p.nmounts; i++)
		ordered &= strcmp(p.v[i - 1].path, p.v[i].path) < 0;
	CHECK(ordered);
	/* the masks of the private procfs */
	e = at(&p, "/proc/kcore");
	CHECK(e && e->kind == MNT_MASK);
	mountns_release(&p);

	/* no grant is world-readable-only: nothing idmapped */
	for (size_t i = 0; i < g.n; i++)
		g.v[i].world_readable_only = false;
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	bool none = true;
	for (size_t i = 0; i < p.nmounts; i++)
		none &= !p.v[i].idmap;
	CHECK(none);
	/* inside the plain /etc, asking the same: its recursive bind shows it */
	CHECK(at(&p, "/etc/ssl") == NULL);
	CHECK(at(&p, "/etc/scripts") != NULL); /* asking more: a mount of its own */
	mountns_release(&p);

	/* nested grants: only the same access as the deepest mount above is left out */
	grants_release(&g);
	memset(&g, 0, sizeof(g));
	g.workdir = strdup("/w");
	grant("/usr", GRANT_READ | GRANT_EXEC, false);
	grant("/usr/bin", GRANT_READ | GRANT_EXEC, false); /* the same: left out */
	grant("/usr/lib/os-release", GRANT_READ, false);   /* less: its own (noexec) */
	grant("/x", GRANT_READ | GRANT_EXEC, false);
	grant("/x/y", GRANT_READ, false);                  /* less: its own */
	grant("/x/y/z", GRANT_READ | GRANT_EXEC, false);   /* more than /x/y: its own */
	grant("/x/y/z/q", GRANT_READ | GRANT_EXEC, false); /* the same as /x/y/z */
	grant("/x-y", GRANT_READ | GRANT_EXEC, false);     /* a sibling, not beneath */
	grant("/x-y/z", GRANT_READ | GRANT_EXEC, false);   /* the same as /x-y */
	/* the deepest mount above is not the last one planned (/x/y/z is) */
	grant("/x/y/w", GRANT_READ, false);                /* the same as /x/y */
	grant("/x/y/w/v", GRANT_READ | GRANT_EXEC, false); /* more than /x/y: its own */
	grant("/w", GRANT_READ | GRANT_WRITE, false);
	grant("/w/data", GRANT_READ, false);              /* read-only in a write grant */
	grant("/w/out", GRANT_READ | GRANT_WRITE, false); /* the same: left out */
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	CHECK(at(&p, "/usr") && !at(&p, "/usr/bin"));
	CHECK(at(&p, "/usr/lib/os-release") != NULL);
	CHECK(at(&p, "/x") && at(&p, "/x/y") && at(&p, "/x/y/z") && !at(&p, "/x/y/z/q"));
	CHECK(at(&p, "/x-y") != NULL && !at(&p, "/x-y/z"));
	CHECK(!at(&p, "/x/y/w") && at(&p, "/x/y/w/v"));
	e = at(&p, "/w/data");
	CHECK(e && !(e->access & GRANT_WRITE));
	CHECK(at(&p, "/w") && !at(&p, "/w/out"));
	/* a read grant gone by its bind is dropped only where that narrows */
	CHECK(!e->optional); /* /w/data: inside a write grant */
	e = at(&p, "/x/y");
	CHECK(e && !e->optional); /* inside /x, which allows exec too */
	e = at(&p, "/x/y/w/v");
	CHECK(e && e->optional); /* inside /x/y, which allows less */
	mountns_release(&p);

	/* the persistent folder in a write grant, and each folder above it up to
	 * the grant, are mount points of their own: never renamed from its lock */
	grant("/w/a/b/.sandbox-cache", GRANT_READ | GRANT_WRITE, false);
	g.persist = strdup("/w/a/b/.sandbox-cache");
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	e = at(&p, "/w/a/b/.sandbox-cache");
	CHECK(e && e->kind == MNT_BIND && (e->access & GRANT_WRITE) && !e->optional);
	CHECK(at(&p, "/w/a/b") && at(&p, "/w/a") && at(&p, "/w"));
	CHECK(!at(&p, "/x/y/w/v/a")); /* nothing else pinned */
	ordered = true;
	for (size_t i = 1; i < p.nmounts; i++)
		ordered &= strcmp(p.v[i - 1].path, p.v[i].path) < 0;
	CHECK(ordered);
	mountns_release(&p);
	/* in a read grant: no rename is possible there, nothing to pin */
	free(g.persist);
	g.persist = strdup("/x/y/c");
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	CHECK(!at(&p, "/x/y/c"));
	mountns_release(&p);

	/* root's walked /etc: bound whole with its secrets covered, or, without
	 * Landlock behind the mounts (bind_entries), its entries one by one */
	grants_release(&g);
	memset(&g, 0, sizeof(g));
	g.workdir = strdup("/w");
	grant("/etc/passwd", GRANT_READ, false);
	grant("/etc/ssl/certs", GRANT_READ, false);
	g.splits = calloc(2, sizeof(*g.splits));
	g.splits[0] = (struct grant_split){strdup("/etc"), GRANT_READ};
	g.splits[1] = (struct grant_split){strdup("/etc/ssl"), GRANT_READ};
	g.nsplits = 2;
	g.skipped = calloc(1, sizeof(*g.skipped));
	g.skipped[0] = (struct grant_skip){strdup("/etc/shadow"), ORIGIN_BASELINE,
					   strdup("not world-readable"), false};
	g.nskipped = 1;
	g.links = calloc(1, sizeof(*g.links));
	g.links[0] = (struct grant_link){strdup("/etc/mtab"), strdup("../proc/self/mounts")};
	g.nlinks = 1;
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	e = at(&p, "/etc");
	CHECK(e && e->kind == MNT_BIND);
	e = at(&p, "/etc/shadow");
	CHECK(e && e->kind == MNT_HIDE);
	CHECK(!at(&p, "/etc/passwd") && !at(&p, "/etc/ssl/certs")); /* in /etc's bind */
	bool link = false;
	for (size_t i = p.nmounts; i < p.n; i++)
		link |= strcmp(p.v[i].path, "/etc/mtab") == 0;
	CHECK(!link); /* there in /etc's bind */
	mountns_release(&p);
	g.bind_entries = true;
	CHECK(mountns_plan(&p, &cfg, &g) == 0);
	CHECK(!at(&p, "/etc") && !at(&p, "/etc/ssl") && !at(&p, "/etc/shadow"));
	e = at(&p, "/etc/passwd");
	CHECK(e && e->kind == MNT_BIND);
	e = at(&p, "/etc/ssl/certs");
	CHECK(e && e->kind == MNT_BIND);
	link = false;
	for (size_t i = p.nmounts; i < p.n; i++)
		link |= p.v[i].kind == MNT_SYMLINK && strcmp(p.v[i].path, "/etc/mtab") == 0 &&
			strcmp(p.v[i].target, "../proc/self/mounts") == 0;
	CHECK(link);
	mountns_release(&p);
	grants_release(&g);
	fifos(&cfg);
	policy_release(&cfg);
	return tap_done();
}
