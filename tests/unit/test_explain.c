/* explain.c: the judge of a failed call (whose it was), on a real tree. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explain.h"
#include "tap.h"

static struct grants g;
static char root[128];

static void grant(const char *rel, unsigned access)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	g.v = realloc(g.v, (g.n + 1) * sizeof(*g.v));
	g.v[g.n++] = (struct grant){.path = strdup(p),
				    .requested = strdup(p),
				    .access = access,
				    .origin = ORIGIN_POLICY,
				    .exists = true};
}

static void file(const char *rel)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

/* Judge one call on root/rel (rel2: a rename's destination) failed with errnum. */
static void judge(struct explain *x, enum denial_op op, const char *rel, const char *rel2, int port,
		  int errnum)
{
	struct explain_call c;
	memset(&c, 0, sizeof(c));
	c.tid = getpid();
	c.op = op;
	c.port = port;
	if (rel)
		snprintf(c.path, sizeof(c.path), "%s/%s", root, rel);
	if (rel2)
		snprintf(c.path2, sizeof(c.path2), "%s/%s", root, rel2);
	explain_judge(x, &c, errnum);
}

static const struct explain_denial *last(const struct explain *x)
{
	return x->n ? &x->v[x->n - 1] : NULL;
}

static char *at(const char *rel)
{
	static char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return p;
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/stepbox-judge.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	char *real = realpath(root, NULL); /* /tmp may be a link */
	if (!real || strlen(real) >= sizeof(root))
		return 1;
	memcpy(root, real, strlen(real) + 1);
	free(real);
	chmod(root, 0755); /* mkdtemp's 0700 would keep every other user out */
	mkdir(at("rw"), 0755);
	mkdir(at("ro"), 0755);
	mkdir(at("out"), 0755);
	file("rw/f");
	file("ro/f");
	file("out/secret");
	grant("rw", GRANT_READ | GRANT_WRITE | GRANT_EXEC);
	grant("ro", GRANT_READ | GRANT_EXEC);
	struct stepbox_config cfg;
	policy_init(&cfg);
	cfg.net = NET_NONE;
	struct explain x;
	explain_init(&x, &g, &cfg);

	/* a read outside every grant: the sandbox's, and the file itself to grant */
	judge(&x, OP_READ, "out/secret", NULL, -1, EACCES);
	CHECK(x.n == 1 && last(&x)->sandbox && last(&x)->op == OP_READ);
	CHECK_STR(last(&x)->path, at("out/secret"));
	CHECK_STR(last(&x)->grant, at("out/secret"));
	/* the same again: counted, not listed twice */
	judge(&x, OP_READ, "out/secret", NULL, -1, EACCES);
	CHECK(x.n == 1 && x.v[0].count == 2);
	/* a read on a granted path that failed: the file's own permissions */
	judge(&x, OP_READ, "ro/f", NULL, -1, EACCES);
	CHECK(x.n == 2 && !last(&x)->sandbox);
	/* a create beneath a read grant: the sandbox's; its folder to grant */
	judge(&x, OP_CREATE, "ro/new", NULL, -1, EACCES);
	CHECK(x.n == 3 && last(&x)->sandbox && last(&x)->op == OP_CREATE);
	CHECK_STR(last(&x)->grant, at("ro"));
	/* ... a read-only bind says EROFS (mountns): the same */
	judge(&x, OP_WRITE, "ro/f", NULL, -1, EROFS);
	CHECK(x.n == 4 && last(&x)->sandbox && last(&x)->op == OP_WRITE);
	/* a create beneath a write grant that failed: not the sandbox */
	judge(&x, OP_CREATE, "rw/new", NULL, -1, EACCES);
	CHECK(x.n == 5 && !last(&x)->sandbox);
	/* ENOENT for what exists nowhere: nobody's denial, nothing said */
	judge(&x, OP_READ, "out/missing", NULL, -1, ENOENT);
	CHECK(x.n == 5);
	/* ENOENT for what exists on the host outside the grants (mountns hides it) */
	judge(&x, OP_READ, "out/secret", NULL, -1, ENOENT);
	CHECK(x.n == 5 && x.v[0].count == 3);
	/* ENOENT beneath a grant: the file is missing, not denied */
	judge(&x, OP_READ, "rw/missing", NULL, -1, ENOENT);
	CHECK(x.n == 5);
	/* a rename out of a write grant: the sandbox's, named by the destination */
	judge(&x, OP_RENAME, "rw/f", "out/f", -1, EXDEV);
	CHECK(x.n == 6 && last(&x)->sandbox && last(&x)->op == OP_RENAME);
	CHECK_STR(last(&x)->path, at("out/f"));
	/* ... within the grants EXDEV is a move across mounts: nothing */
	judge(&x, OP_RENAME, "rw/f", "rw/g", -1, EXDEV);
	CHECK(x.n == 6);
	/* a relative path with ".." is judged where it lands */
	judge(&x, OP_READ, "rw/../out/secret", NULL, -1, EACCES);
	CHECK(x.n == 6 && x.v[0].count == 4);
	/* network none: a TCP connect is the sandbox's; with allow it is not */
	judge(&x, OP_CONNECT, NULL, NULL, 443, EACCES);
	CHECK(x.n == 7 && last(&x)->sandbox && last(&x)->port == 443);
	cfg.net = NET_ALLOW;
	judge(&x, OP_CONNECT, NULL, NULL, 80, ECONNREFUSED);
	CHECK(x.n == 7);
	/* a port list: a listed port is not the sandbox's, another is */
	cfg.net = NET_TCP;
	cfg.connect_tcp.v[cfg.connect_tcp.n++] = 443;
	judge(&x, OP_CONNECT, NULL, NULL, 443, ETIMEDOUT);
	judge(&x, OP_CONNECT, NULL, NULL, 22, EACCES);
	CHECK(x.n == 8 && last(&x)->port == 22);
	/* a signal: EPERM across the sandbox; ESRCH is no denial */
	judge(&x, OP_SIGNAL, NULL, NULL, 1, EPERM);
	CHECK(x.n == 9 && last(&x)->op == OP_SIGNAL);
	judge(&x, OP_SIGNAL, NULL, NULL, 99999, ESRCH);
	CHECK(x.n == 9);
	/* the program is the caller's (read from /proc/PID/comm) */
	CHECK(x.v[0].program[0] != '\0');

	/* which calls the tracer may let run without stopping at their exit */
	struct explain_call c;
	memset(&c, 0, sizeof(c));
	c.op = OP_READ;
#define MAY_FAIL(rel)                                                                              \
	(snprintf(c.path, sizeof(c.path), "%s", rel[0] == '/' ? rel : at(rel)),                    \
	 explain_may_fail(&x, &c))
	chmod(at("ro/f"), 0644);
	CHECK(!MAY_FAIL("ro/f"));       /* granted, every user may read it: nothing to judge */
	CHECK(!MAY_FAIL("ro"));         /* ... a folder too */
	CHECK(!MAY_FAIL("rw/../ro/f")); /* ... however it is spelled */
	CHECK(MAY_FAIL("out/secret"));  /* outside every grant: the sandbox may refuse it */
	CHECK(MAY_FAIL("ro/missing"));  /* not there: judged at its exit */
	char target[PATH_MAX];
	snprintf(target, sizeof(target), "%s", at("out/secret"));
	CHECK(symlink(target, at("ro/link")) == 0);
	CHECK(MAY_FAIL("ro/link")); /* a link in a grant to a file outside */
	chmod(at("ro/f"), 0600);
	CHECK(MAY_FAIL("ro/f")); /* its own mode may refuse another user */
	chmod(at("ro/f"), 0644);
	/* the folder of the last read let through: the same answers by the shorter way */
	file("ro/f2");
	chmod(at("ro/f2"), 0644);
	CHECK(!MAY_FAIL("ro/f"));
	CHECK(!MAY_FAIL("ro/f2"));
	CHECK(MAY_FAIL("ro/link"));
	chmod(at("ro/f2"), 0600);
	CHECK(MAY_FAIL("ro/f2"));
	unlink(at("ro/f2"));
	CHECK(MAY_FAIL("ro/f2"));
	mkdir(at("ro/closed"), 0700);
	file("ro/closed/g");
	chmod(at("ro/closed/g"), 0644);
	CHECK(MAY_FAIL("ro/closed/g"));       /* a folder above it may refuse another user */
	CHECK(MAY_FAIL("/proc/self/status")); /* /proc, /sys, /dev: their own rules */
	snprintf(c.path, sizeof(c.path), "relative/f");
	CHECK(explain_may_fail(&x, &c));
	c.op = OP_WRITE;
	CHECK(MAY_FAIL("rw/f")); /* only reads are let through */
	unlink(at("ro/link"));
	unlink(at("ro/closed/g"));
	rmdir(at("ro/closed"));

	explain_release(&x);
	policy_release(&cfg);
	for (size_t i = 0; i < g.n; i++) {
		free(g.v[i].path);
		free(g.v[i].requested);
	}
	free(g.v);
	unlink(at("rw/f"));
	unlink(at("ro/f"));
	unlink(at("out/secret"));
	rmdir(at("rw"));
	rmdir(at("ro"));
	rmdir(at("out"));
	rmdir(root);
	return tap_done();
}
