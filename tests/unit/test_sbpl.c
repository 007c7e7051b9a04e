/* sbpl.c: what SBPL can hold, and the profile's parts that need no file tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbpl.h"
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

/* The proxy's port a hosts policy is written with (0: printed, none running). */
static unsigned short proxy_port;

/* The profile for cfg and g as a string, or NULL with err's message printed. */
static char *profile(const struct stepbox_config *cfg, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct stepbox_err err = {0};
	*rc = sbpl_write(m, cfg, &g, proxy_port, &err);
	fclose(m);
	if (*rc < 0)
		printf("# %s\n", err.msg);
	return buf;
}

int main(void)
{
	/* RFC 3629: what is UTF-8 and what only looks like it */
	CHECK(sbpl_path_ok("/Users/a/ünïcödé ✓/\xf0\x9f\x93\x81"));
	CHECK(sbpl_path_ok("/a \"quoted\" (paren) back\\slash"));
	CHECK(!sbpl_path_ok("/bad/\xff"));
	CHECK(!sbpl_path_ok("/overlong/\xc0\xaf"));
	CHECK(!sbpl_path_ok("/overlong3/\xe0\x80\xaf"));
	CHECK(!sbpl_path_ok("/surrogate/\xed\xa0\x80"));
	CHECK(!sbpl_path_ok("/above-10ffff/\xf4\x90\x80\x80"));
	CHECK(!sbpl_path_ok("/f5/\xf5\x80\x80\x80"));
	CHECK(!sbpl_path_ok("/cut/\xe2\x9c"));
	CHECK(!sbpl_path_ok("/newline/\n"));
	CHECK(!sbpl_path_ok("/del/\x7f"));
	CHECK(sbpl_path_ok("/max/\xf4\x8f\xbf\xbf"));

	struct stepbox_config cfg;
	policy_init(&cfg);
	cfg.net = NET_NONE;
	grant("/usr", GRANT_READ | GRANT_EXEC, ORIGIN_BASELINE);   /* Linux's: left out */
	grant("/lib64", GRANT_READ | GRANT_EXEC, ORIGIN_BASELINE); /* likewise */
	grant("/tmp/w \"q\"", GRANT_READ | GRANT_WRITE | GRANT_EXEC, ORIGIN_WORKDIR);
	grant("/srv/data", GRANT_READ | GRANT_EXEC, ORIGIN_FLAG);
	grant("/home/u/.gitconfig", GRANT_READ, ORIGIN_FLAG);
	grant("/var/run/sock", GRANT_CONNECT, ORIGIN_FLAG);
	int rc;
	char *p = profile(&cfg, &rc);
	CHECK(rc == 0 && p);
	CHECK(p && strncmp(p, "(version 1)\n", 12) == 0);
	CHECK_HAS(p, "(deny default)");
	/* /tmp and /var as macOS resolves them; quotes escaped */
	CHECK_HAS(p, "(subpath \"/private/tmp/w \\\"q\\\"\")");
	CHECK_HAS(p, "(remote unix-socket (subpath \"/private/var/run/sock\"))");
	CHECK_HAS(p, "(literal \"/home/u/.gitconfig\")");
	CHECK(p && !strstr(p, "/lib64"));
	/* protected paths: denied beneath the write grant, after its allow */
	CHECK_HAS(p, "(deny file-write*");
	/* in every spelling a Mac's file systems give them (tests/sbpl evaluates them) */
	CHECK_HAS(
		p,
		"(require-all (subpath \"/private/tmp/w \\\"q\\\"\") (regex "
		"#\"/\\.[gG][iI][tT][. ]*/[hH][oO][oO]([kK]|\xe2\x84\xaa)([sS]|\xc5\xbf)[. ]*/\")");
	CHECK_HAS(p, "(require-all (subpath \"/private/tmp/w \\\"q\\\"\") (regex "
		     "#\"^/[^/]+/[^/]+/[^/]+/\\.[eE][nN][vV][rR][cC][. ]*(/|$)\"))");
	CHECK(p && strstr(p, "(deny file-write*") > strstr(p, "(allow file-read* file-write*"));
	CHECK(p && !strstr(p, "/srv/data/.envrc")); /* a read grant needs none */
	/* no network at all: no IP rule, no name lookups */
	CHECK(p && !strstr(p, "(remote ip)") && !strstr(p, "dnssd"));
	/* the ancestors' metadata, not their contents */
	CHECK_HAS(p, "(literal \"/private/tmp\")");
	CHECK(p && !strstr(p, "(subpath \"/private/tmp\")"));
	free(p);

	/* ports: each one, and name lookups only with 53 */
	cfg.net = NET_TCP;
	cfg.connect_tcp.n = 1;
	cfg.connect_tcp.v[0] = 443;
	p = profile(&cfg, &rc);
	CHECK_HAS(p, "(remote tcp \"*:443\")");
	CHECK(p && !strstr(p, "dnssd") && !strstr(p, "(remote ip)"));
	free(p);
	cfg.connect_tcp.v[cfg.connect_tcp.n++] = 53;
	p = profile(&cfg, &rc);
	CHECK_HAS(p, "com.apple.dnssd.service");
	free(p);

	/* hosts by name: the proxy's port on loopback alone, no name lookups */
	cfg.net = NET_HOSTS;
	proxy_port = 4321;
	p = profile(&cfg, &rc);
	CHECK(rc == 0);
	CHECK_HAS(p, "(allow network-outbound (remote tcp \"localhost:4321\"))");
	CHECK_HAS(p, "com.apple.trustd.agent");
	CHECK(p && !strstr(p, "dnssd") && !strstr(p, "(remote ip)") && !strstr(p, "*:443"));
	free(p);
	proxy_port = 0; /* printed: the rule a comment, nothing allowed */
	p = profile(&cfg, &rc);
	CHECK(rc == 0);
	CHECK_HAS(p, "; (allow network-outbound (remote tcp \"localhost:PORT\"))");
	CHECK(p && !strstr(p, "\n(allow network-outbound (remote tcp"));
	free(p);
	cfg.net = NET_TCP;

	/* a protected path with too many ligature letters to spell each way: refused */
	strv_push(&cfg.protect_paths, "ffffffffffffffffffff");
	p = profile(&cfg, &rc);
	CHECK(rc == -E2BIG && (!p || !*p));
	free(p);
	strv_release(&cfg.protect_paths);
	strv_push(&cfg.protect_paths, "office");
	p = profile(&cfg, &rc);
	/* o, then f f i, f and the fi ligature, the ffi one, or the ff one and i */
	CHECK_HAS(p, "[oO]([fF]([fF][iI][cC][eE][. ]*|\xef\xac\x81[cC][eE][. ]*)|"
		     "\xef\xac\x83[cC][eE][. ]*|\xef\xac\x80[iI][cC][eE][. ]*)(/|$)");
	free(p);
	strv_release(&cfg.protect_paths);

	/*
	 * A folder of clones: each checkout's names denied at its top, one by
	 * one; past SBPL_CHECKOUTS_APART of them, every folder's there (bounded)
	 */
	char ws[] = "/tmp/stepbox-sbpl-ws.XXXXXX", d[128];
	CHECK(mkdtemp(ws) != NULL);
	for (int n = 0; n < 2; n++) {
		for (int i = 0; i < (n ? 40 : 2); i++) {
			snprintf(d, sizeof(d), "%s/c%02d", ws, i);
			mkdir(d, 0755);
			snprintf(d, sizeof(d), "%s/c%02d/.git", ws, i);
			mkdir(d, 0755);
		}
		grant(ws, GRANT_READ | GRANT_WRITE | GRANT_EXEC, ORIGIN_FLAG);
		p = profile(&cfg, &rc);
		CHECK(rc == 0);
		/* c01's .envrc by its name, or every folder's by [^/]* */
		CHECK(p &&
		      (strstr(p, "/[cC]01[. ]*/\\.[eE][nN][vV][rR][cC][. ]*(/|$)") != NULL) == !n);
		CHECK(p &&
		      (strstr(p, "/[^/]*[. ]*/\\.[eE][nN][vV][rR][cC][. ]*(/|$)") != NULL) == n);
		free(p);
		free(g.v[--g.n].path);
		free(g.v[g.n].requested);
	}
	for (int i = 0; i < 40; i++) {
		snprintf(d, sizeof(d), "%s/c%02d/.git", ws, i);
		rmdir(d);
		snprintf(d, sizeof(d), "%s/c%02d", ws, i);
		rmdir(d);
	}
	rmdir(ws);

	/* a path SBPL cannot hold: an error naming it, nothing written */
	grant("/data/\xff", GRANT_READ | GRANT_EXEC, ORIGIN_FLAG);
	p = profile(&cfg, &rc);
	CHECK(rc == -EINVAL && (!p || !*p));
	free(p);
	policy_release(&cfg);
	return tap_done();
}
