#include "sbpl.h"
#include "sbpl_int.h"
#include "strbuf.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"
#include "protect.h"
#include "strv.h"

/*
 * The baseline on macOS's folders (the Linux baseline, mapped: grants.c): the
 * system's programs and libraries, the dyld shared cache (in the Preboot
 * cryptex on macOS 13 and later), Homebrew's prefixes, the command line
 * tools; the /etc entries tools read, one by one (never all of /etc:
 * master.passwd and the keys beside it); the devices every process uses.
 */
static const char *const sys_exec[] = {
	"/usr",
	"/bin",
	"/sbin",
	"/System",
	"/Library/Apple",
	"/Library/Frameworks",
	"/Library/Developer/CommandLineTools",
	"/opt/homebrew",
	"/opt/local",
	"/private/var/db/dyld",
	"/System/Volumes/Preboot/Cryptexes",
	NULL,
};
static const char *const sys_read[] = {
	"/private/etc/hosts",     "/private/etc/resolv.conf", "/private/var/run/resolv.conf",
	"/private/etc/services",  "/private/etc/protocols",   "/private/etc/passwd",
	"/private/etc/group",     "/private/etc/shells",      "/private/etc/ssl",
	"/private/etc/localtime", "/private/var/db/timezone", "/private/etc/profile",
	"/private/etc/bashrc",    "/private/etc/zshrc",       "/private/etc/zprofile",
	"/private/etc/paths",     "/private/etc/paths.d",     NULL,
};
static const char *const sys_dev[] = {
	"/dev/null",  "/dev/zero",   "/dev/random", "/dev/urandom", "/dev/tty",
	"/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/ptmx",    NULL,
};

/* The sysctls a runtime reads for its machine (no process table but the step's own). */
static const char *const sysctls[] = {
	"hw.activecpu",
	"hw.byteorder",
	"hw.cachelinesize",
	"hw.cpufamily",
	"hw.cpufrequency",
	"hw.cputype",
	"hw.l1dcachesize",
	"hw.l2cachesize",
	"hw.logicalcpu",
	"hw.logicalcpu_max",
	"hw.machine",
	"hw.memsize",
	"hw.model",
	"hw.ncpu",
	"hw.nperflevels",
	"hw.pagesize",
	"hw.physicalcpu",
	"hw.physicalcpu_max",
	"hw.tbfrequency",
	"hw.vectorunit",
	"kern.argmax",
	"kern.boottime",
	"kern.hostname",
	"kern.maxfilesperproc",
	"kern.maxproc",
	"kern.ngroups",
	"kern.osproductversion",
	"kern.osrelease",
	"kern.ostype",
	"kern.osversion",
	"kern.secure_kernel",
	"kern.usrstack64",
	"kern.version",
	"machdep.cpu.brand_string",
	"sysctl.proc_cputype",
	"vm.loadavg",
	NULL,
};
static const char *const sysctl_prefixes[] = {"hw.optional.", "hw.perflevel", NULL};

/* The system services every tool asks (user and group names, notifications, logging). */
static const char *const services[] = {
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.system.notification_center",
	"com.apple.system.logger",
	"com.apple.logd",
	NULL,
};
/* ... and with a network: certificate trust and proxy settings. */
static const char *const net_services[] = {
	"com.apple.trustd.agent",
	"com.apple.SystemConfiguration.configd",
	NULL,
};
/* Name lookups, which mDNSResponder makes outside the sandbox: as on Linux,
 * with --net allow or when a port list holds 53. */
static const char *const dns_services[] = {"com.apple.dnssd.service", NULL};

bool sbpl_path_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p, n;
		/* the second byte's range, which rules out overlong forms, surrogates
		 * and code points above U+10FFFF */
		unsigned char lo = 0x80, hi = 0xbf;
		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			p++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			lo = c == 0xe0 ? 0xa0 : 0x80;
			hi = c == 0xed ? 0x9f : 0xbf;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			lo = c == 0xf0 ? 0x90 : 0x80;
			hi = c == 0xf4 ? 0x8f : 0xbf;
		} else {
			return false;
		}
		if (p[1] < lo || p[1] > hi)
			return false;
		for (unsigned i = 2; i <= n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		p += n + 1;
	}
	return true;
}

void sbpl_fail(struct sbpl_out *o, int err, const char *path)
{
	if (o->err)
		return;
	o->err = err;
	snprintf(o->bad, sizeof(o->bad), "%s", path ? path : "");
}

void sbpl_str(struct sbpl_out *o, const char *s)
{
	if (!sbpl_path_ok(s)) {
		sbpl_fail(o, -EINVAL, s);
		return;
	}
	fputc('"', o->f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', o->f);
		fputc(*s, o->f);
	}
	fputc('"', o->f);
}

char *sbpl_mac_path(const char *p)
{
	static const char *const moved[] = {"/tmp", "/var", "/etc"};
	for (size_t i = 0; i < 3; i++)
		if (path_beneath(p, moved[i]))
			return strv_fmt("/private%s", p);
	return strdup(p);
}

bool sbpl_may_exec(const void *grants, const char *canon)
{
	const struct grants *g = grants;
	char *m = sbpl_mac_path(canon);
	bool ok = false;
	for (size_t i = 0; m && !ok && sys_exec[i]; i++)
		ok = path_beneath(m, sys_exec[i]);
	/* as collect() sorts them: execute and write grants run code, the rest not */
	for (size_t i = 0; m && !ok && i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		if (gr->origin == ORIGIN_BASELINE || gr->origin == ORIGIN_BASELINE_TARGET ||
		    (gr->access & (GRANT_PRIVATE | GRANT_CONNECT)) ||
		    !(gr->access & (GRANT_EXEC | GRANT_WRITE)))
			continue;
		char *gm = sbpl_mac_path(gr->path);
		ok = gm && path_beneath(m, gm);
		free(gm);
	}
	free(m);
	return ok;
}

/*
 * One allow form over paths, each a string between open and close:
 * (allow OPS OPEN"path"CLOSE ...); nothing when there is none.
 */
static void allow(struct sbpl_out *o, const char *ops, const char *open, const char *close,
		  const struct strv *paths)
{
	if (paths->n == 0)
		return;
	fprintf(o->f, "(allow %s", ops);
	for (size_t i = 0; i < paths->n; i++) {
		fprintf(o->f, "\n  %s", open);
		sbpl_str(o, paths->v[i]);
		fputs(close, o->f);
	}
	fputs(")\n", o->f);
}

static void allow_names(struct sbpl_out *o, const char *op, const char *open,
			const char *const *names)
{
	struct strv v = STRV_INIT;
	for (size_t i = 0; names[i]; i++)
		strv_push(&v, names[i]);
	allow(o, op, open, ")", &v);
	strv_release(&v);
}

/* Add p (mapped) to v unless there. 0 or -ENOMEM. */
static int add(struct strv *v, const char *p)
{
	char *m = sbpl_mac_path(p);
	if (!m)
		return -ENOMEM;
	int r = strv_find(v, m) < 0 ? strv_push(v, m) : 0;
	free(m);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every folder above each path of v, into up ("/" included), sorted. */
static int ancestors(const struct strv *v, struct strv *up)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < v->n; i++) {
		char *p = strdup(v->v[i]);
		if (!p)
			return -ENOMEM;
		for (char *s = strrchr(p, '/'); r == 0 && s; s = strrchr(p, '/')) {
			if (s == p) {
				r = strv_find(up, "/") < 0 ? strv_push(up, "/") : 0;
				break;
			}
			*s = '\0';
			if (strv_find(up, p) < 0)
				r = strv_push(up, p);
		}
		free(p);
	}
	if (r == 0 && up->n)
		qsort(up->v, up->n, sizeof(*up->v), cmp_str);
	return r;
}

/* The grants of g by what they give on a Mac; the Linux baseline is left out. */
static int collect(const struct grants *g, struct strv *read, struct strv *exec, struct strv *write,
		   struct strv *unix_)
{
	int r = 0;
	for (size_t i = 0; r == 0 && i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		if (gr->origin == ORIGIN_BASELINE || gr->origin == ORIGIN_BASELINE_TARGET ||
		    (gr->access & GRANT_PRIVATE))
			continue;
		if (gr->access & GRANT_CONNECT)
			r = add(unix_, gr->path);
		else if (gr->access & GRANT_WRITE)
			r = add(write, gr->path);
		else if (gr->access & GRANT_EXEC)
			r = add(exec, gr->path);
		else if (gr->access & GRANT_READ) /* home_files: read only */
			r = add(read, gr->path);
	}
	return r;
}

/*
 * The network mode. Hosts by name: the proxy's port on the host's loopback
 * (proxy_port; 0 where the profile is only printed, the port being chosen
 * when a step starts) is the one way out, each request carrying the run's
 * secret; no name lookups (the proxy makes them).
 */
static void network(struct sbpl_out *o, const struct stepbox_config *cfg, unsigned short proxy_port)
{
	if (cfg->net == NET_NONE) {
		fputs("; network: none (UNIX sockets only as below)\n", o->f);
		return;
	}
	if (cfg->net == NET_HOSTS) {
		fputs("; network: the hosts the policy names, through stepbox's proxy on this "
		      "host's\n; loopback (its port, chosen when the step starts, is the only "
		      "way out)\n",
		      o->f);
		allow_names(o, "mach-lookup", "(global-name ", net_services);
		if (proxy_port)
			fprintf(o->f, "(allow network-outbound (remote tcp \"localhost:%u\"))\n",
				proxy_port);
		else
			fputs("; (allow network-outbound (remote tcp \"localhost:PORT\"))\n", o->f);
		return;
	}
	bool dns = cfg->net == NET_ALLOW;
	for (unsigned i = 0; i < cfg->connect_tcp.n; i++)
		dns |= cfg->connect_tcp.v[i] == 53;
	fputs(cfg->net == NET_ALLOW ? "; network: IP, every host and port (never UNIX sockets: "
				      "those are above)\n"
				    : "; network: these TCP ports only (name lookups with 53)\n",
	      o->f);
	allow_names(o, "mach-lookup", "(global-name ", net_services);
	if (dns)
		allow_names(o, "mach-lookup", "(global-name ", dns_services);
	if (cfg->net == NET_ALLOW) {
		fputs("(allow network-outbound (remote ip))\n"
		      "(allow network-inbound (local ip))\n"
		      "(allow network-bind (local ip))\n",
		      o->f);
		return;
	}
	if (cfg->connect_tcp.n) {
		fputs("(allow network-outbound", o->f);
		for (unsigned i = 0; i < cfg->connect_tcp.n; i++)
			fprintf(o->f, "\n  (remote tcp \"*:%u\")", cfg->connect_tcp.v[i]);
		fputs(")\n", o->f);
	}
	if (cfg->bind_tcp.n) {
		fputs("(allow network-bind network-inbound", o->f);
		for (unsigned i = 0; i < cfg->bind_tcp.n; i++)
			fprintf(o->f, "\n  (local tcp \"*:%u\")", cfg->bind_tcp.v[i]);
		fputs(")\n", o->f);
	}
}

/* The profile into f (a memory stream): 0, or -errno with err. */
/* the path lists a profile is written from */
struct lists {
	struct strv sys, sysr, dev, read, exec, write, unix_, all, up, socks;
};

static void lists_release(struct lists *l)
{
	strv_release(&l->sys);
	strv_release(&l->sysr);
	strv_release(&l->dev);
	strv_release(&l->read);
	strv_release(&l->exec);
	strv_release(&l->write);
	strv_release(&l->unix_);
	strv_release(&l->all);
	strv_release(&l->up);
	strv_release(&l->socks);
}

static int gather(const struct grants *g, struct lists *l)
{
	int r = 0;
	for (size_t i = 0; r == 0 && sys_exec[i]; i++)
		r = add(&l->sys, sys_exec[i]);
	for (size_t i = 0; r == 0 && sys_read[i]; i++)
		r = add(&l->sysr, sys_read[i]);
	for (size_t i = 0; r == 0 && sys_dev[i]; i++)
		r = add(&l->dev, sys_dev[i]);
	if (r == 0)
		r = collect(g, &l->read, &l->exec, &l->write, &l->unix_);
	/* sockets: beneath write grants and unix_sockets entries */
	for (size_t i = 0; r == 0 && i < l->write.n; i++)
		r = strv_push(&l->socks, l->write.v[i]);
	for (size_t i = 0; r == 0 && i < l->unix_.n; i++)
		r = add(&l->socks, l->unix_.v[i]);
	const struct strv *lists[] = {&l->sys,  &l->sysr,  &l->dev,  &l->read,
				      &l->exec, &l->write, &l->unix_};
	for (size_t k = 0; r == 0 && k < sizeof(lists) / sizeof(lists[0]); k++)
		for (size_t i = 0; r == 0 && i < lists[k]->n; i++)
			r = add(&l->all, lists[k]->v[i]);
	if (r == 0)
		r = ancestors(&l->all, &l->up);
	return r;
}

static void write_system(struct sbpl_out *o)
{
	FILE *f = o->f;
	fprintf(f,
		"(version 1)\n"
		"; stepbox %s: the Seatbelt profile of this policy (docs/seatbelt.md).\n"
		"; Everything is denied but what follows.\n"
		"(deny default)\n\n",
		STEPBOX_VERSION);
	fputs("; processes: the step's own tree\n"
	      "(allow process-fork)\n"
	      "(allow signal (target same-sandbox))\n"
	      "(allow process-info* (target same-sandbox))\n\n",
	      f);
	fputs("; what every tool asks of the system\n", f);
	fputs("(allow sysctl-read", f);
	for (size_t i = 0; sysctls[i]; i++)
		fprintf(f, "\n  (sysctl-name \"%s\")", sysctls[i]);
	for (size_t i = 0; sysctl_prefixes[i]; i++)
		fprintf(f, "\n  (sysctl-name-prefix \"%s\")", sysctl_prefixes[i]);
	fputs(")\n", f);
	allow_names(o, "mach-lookup", "(global-name ", services);
	fputs("(allow pseudo-tty)\n"
	      "(allow file-read* file-write* file-ioctl\n"
	      "  (require-all (subpath \"/dev\") (extension \"com.apple.sandbox.pty\")))\n\n",
	      f);
}

static void write_files(struct sbpl_out *o, const struct lists *l)
{
	FILE *f = o->f;
	fputs("; the system: read, run and map its code\n", f);
	allow(o, "file-read* process-exec file-map-executable", "(subpath ", ")", &l->sys);
	allow(o, "file-read*", "(subpath ", ")", &l->sysr);
	fputs("; devices every process uses\n", f);
	allow(o, "file-read* file-write-data file-ioctl", "(literal ", ")", &l->dev);
	fputs("(allow file-read* file-write-data (subpath \"/dev/fd\"))\n", f);
	fputs("; the folders above each grant: their metadata only (a path lookup stats them)\n",
	      f);
	allow(o, "file-read-metadata", "(literal ", ")", &l->up);
	fputs("\n; read grants: read, run and map code; home_files: read\n", f);
	allow(o, "file-read* process-exec file-map-executable", "(subpath ", ")", &l->exec);
	allow(o, "file-read*", "(literal ", ")", &l->read);
	fputs("; write grants (the workdir, the persistent folder, write_paths): all of it\n", f);
	allow(o, "file-read* file-write* process-exec file-map-executable", "(subpath ", ")",
	      &l->write);
	fputs("; UNIX sockets: connect beneath write grants and unix_sockets, bind beneath write "
	      "grants\n",
	      f);
	if (l->socks.n)
		fputs("(allow system-socket (socket-domain AF_UNIX))\n", f);
	allow(o, "network-outbound", "(remote unix-socket (subpath ", "))", &l->socks);
	allow(o, "network-bind network-inbound", "(local unix-socket (subpath ", "))", &l->write);
	fputc('\n', f);
}

static int unwritable(const char *bad, struct stepbox_err *err)
{
	/* shown with its bytes above ASCII and below space as \xNN */
	char shown[PATH_MAX * 4 + 1];
	struct strbuf sb;
	strbuf_init(&sb, shown, sizeof(shown));
	for (const unsigned char *c = (const unsigned char *)bad; *c; c++)
		strbuf_add(&sb, *c < 0x20 || *c >= 0x7f ? "\\x%02x" : "%c", *c);
	err_set(err, ERR_UNAVAILABLE, EINVAL,
		"seatbelt: the path '%.300s' cannot be written in a Seatbelt profile (it is "
		"not UTF-8, or holds a control character)",
		shown);
	err_hint(err, "rename it, or leave it out of the policy");
	return -EINVAL;
}

static int profile(FILE *f, const struct stepbox_config *cfg, const struct grants *g,
		   unsigned short proxy_port, struct stepbox_err *err)
{
	struct sbpl_out o = {.f = f};
	struct lists l = {STRV_INIT, STRV_INIT, STRV_INIT, STRV_INIT, STRV_INIT,
			  STRV_INIT, STRV_INIT, STRV_INIT, STRV_INIT, STRV_INIT};
	int r = gather(g, &l);
	if (r < 0) {
		err_set(err, ERR_UNAVAILABLE, -r, "seatbelt: build the profile");
		goto out;
	}
	write_system(&o);
	write_files(&o, &l);
	sbpl_deny_protected(&o, cfg, &l.write);
	network(&o, cfg, proxy_port);
	if (o.err == -EINVAL) {
		r = unwritable(o.bad, err);
	} else if (o.err == -E2BIG) {
		err_set(err, ERR_UNAVAILABLE, 0,
			"seatbelt: the protected path '%s' has too many spellings to write in the "
			"profile",
			o.bad);
		err_hint(err, "name it with fewer ligature letters (ff, fi, fl, st, ss) in a row");
		r = -E2BIG;
	} else if (o.err) {
		r = err_set(err, ERR_UNAVAILABLE, -o.err, "seatbelt: the protected paths' folders");
	}
out:
	lists_release(&l);
	return r;
}

int sbpl_write(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
	       unsigned short proxy_port, struct stepbox_err *err)
{
	/* all of it or nothing: a half profile is never printed */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return err_set(err, ERR_UNAVAILABLE, errno, "seatbelt: build the profile");
	int r = profile(m, cfg, g, proxy_port, err);
	if (fclose(m) == EOF && r == 0)
		r = err_set(err, ERR_UNAVAILABLE, ENOMEM, "seatbelt: build the profile");
	if (r == 0 && (fwrite(buf, 1, len, out) != len || fflush(out) == EOF))
		r = err_set(err, ERR_UNAVAILABLE, errno, "seatbelt: write the profile");
	free(buf);
	return r;
}
