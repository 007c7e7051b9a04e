#include "explain.h"
#include "explain_int.h"
#include "canon.h"
#include "clock.h"
#include "command.h"
#include "path.h"
#include "protect.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *explain_op_name(enum denial_op op)
{
	static const char *const names[] = {
		[OP_READ] = "read",
		[OP_WRITE] = "write",
		[OP_CREATE] = "create",
		[OP_DELETE] = "delete",
		[OP_RENAME] = "rename",
		[OP_LINK] = "link",
		[OP_TRUNCATE] = "truncate",
		[OP_EXECUTE] = "execute",
		[OP_CONNECT] = "connect",
		[OP_BIND] = "bind",
		[OP_SIGNAL] = "signal",
		[OP_METADATA] = "change the metadata of",
		[OP_NOFD] = "use",
		[OP_SETID] = "set a set-user-ID or set-group-ID bit on",
		[OP_HOST] = "reach",
		[OP_LOOKUP] = "look up",
		[OP_SOCKET] = "open a socket",
		[OP_PROTECTED] = "write the protected path",
		[OP_NESTED] = "have stepbox make",
	};
	return names[op];
}

void explain_init(struct explain *x, const struct grants *g, const struct stepbox_config *cfg)
{
	memset(x, 0, sizeof(*x));
	x->source = "tracer";
	x->grants = g;
	x->cfg = cfg;
}

void explain_release(struct explain *x)
{
	explain_forget_dirs(x);
	for (size_t i = 0; i < x->n; i++) {
		free(x->v[i].path);
		free(x->v[i].grant);
		free(x->v[i].why);
		free(x->v[i].unprotect);
		free(x->v[i].addr);
		free(x->v[i].detail);
	}
	free(x->v);
	free(x->t);
	memset(x, 0, sizeof(*x));
}

/* The folder to grant for path: itself when it is one, else its parent. */
static char *grant_folder(const char *path, bool parent)
{
	char *dup = strdup(path);
	struct stat st;
	if (!dup)
		return NULL;
	/* a file read or run: the file itself, never the folder around it (HOME, keys) */
	if (!parent && stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		return dup;
	if (parent || stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		char *slash = strrchr(dup, '/');
		if (slash && slash != dup)
			*slash = '\0';
		else if (slash)
			slash[1] = '\0';
	}
	return dup;
}

/* The canonical form of path, its missing tail kept as written (canon_path). */
void explain_canonical(const char *path, char *out, size_t cap)
{
	char *c = NULL;
	bool exists;
	snprintf(out, cap, "%s", canon_path("/", path, &c, &exists) == 0 ? c : path);
	free(c);
}

const char *explain_grant_key(const struct explain_denial *d)
{
	return d->op == OP_CONNECT   ? "unix_sockets"
	       : explain_is_write(d) ? "write_paths"
				     : "read_paths";
}

bool explain_is_write(const struct explain_denial *d)
{
	return d->op != OP_READ && d->op != OP_EXECUTE && d->op != OP_LOOKUP;
}

static bool same(const struct explain_denial *d, enum denial_op op, const char *path, int port)
{
	return d->op == op && d->port == port &&
	       ((!d->path && !path) || (d->path && path && strcmp(d->path, path) == 0));
}

/* The denial recorded (or counted again), or NULL when past the cap. */
static struct explain_denial *record(struct explain *x, const struct explain_call *t,
				     const char *path, int errnum, bool sandbox, char *grant,
				     const char *program, double when)
{
	if (!program)
		program = t->program;
	if (when <= 0)
		when = t->when;
	if (when <= 0)
		when = clock_now_s(); /* the tracer's, at the call's exit */
	for (size_t i = 0; i < x->n; i++) {
		if (same(&x->v[i], t->op, path, t->port)) {
			x->v[i].count++;
			x->v[i].last = when > x->v[i].last ? when : x->v[i].last;
			free(grant);
			return &x->v[i];
		}
	}
	if (x->n >= EXPLAIN_MAX) {
		x->omitted++;
		free(grant);
		return NULL;
	}
	if (strv_grow(&x->v, &x->cap, x->n, sizeof(*x->v), 16) < 0) {
		free(grant);
		x->omitted++;
		return NULL;
	}
	struct explain_denial *d = &x->v[x->n++];
	memset(d, 0, sizeof(*d));
	d->op = t->op;
	d->pid = t->tid;
	d->path = path ? strdup(path) : NULL;
	d->grant = grant;
	d->port = t->port;
	d->errnum = errnum;
	d->count = 1;
	d->sandbox = sandbox;
	d->last = when;
	if (program) {
		snprintf(d->program, sizeof(d->program), "%s", program);
		return d;
	}
	char comm[64];
	snprintf(comm, sizeof(comm), "/proc/%d/comm", (int)t->tid);
	int fd = open(comm, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, d->program, sizeof(d->program) - 1) : -1;
	if (fd >= 0)
		close(fd);
	d->program[n > 0 ? n : 0] = '\0';
	char *nl = strchr(d->program, '\n');
	if (nl)
		*nl = '\0';
	return d;
}

static bool listed_port(const struct policy_ports *p, int port)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i] == port)
			return true;
	return false;
}

/* A character or block device (a grant gives none but the baseline's). */
bool explain_is_device(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
}

/*
 * A script the step may run failed to: the kernel runs its "#!" interpreter
 * too, and answers for it on the script's name (EACCES; ENOENT under the
 * namespaces, where an ungranted interpreter is absent). Recorded as the
 * interpreter's own denial when no grant lets it run.
 */
static bool interpreter_denied(struct explain *x, const struct explain_call *t, const char *script,
			       int errnum)
{
	char *interp = command_interpreter(script);
	char canon[PATH_MAX];
	struct stat st;
	bool denied = interp && interp[0] == '/' && stat(interp, &st) == 0;
	if (denied) {
		explain_canonical(interp, canon, sizeof(canon));
		denied = !grants_covers(x->grants, canon, GRANT_EXEC);
	}
	if (denied)
		record(x, t, canon, errnum, true, grant_folder(canon, false), NULL, 0);
	free(interp);
	return denied;
}

/* The caller's HOME, canonical, for the advice on its files; "" when none or "/". */
static void caller_home(char *home, size_t cap)
{
	const char *h = getenv("HOME");
	home[0] = '\0';
	if (h && h[0] == '/')
		explain_canonical(h, home, cap);
	if (strcmp(home, "/") == 0)
		home[0] = '\0';
}

/* The longest write grant path lies beneath (strictly: not path itself), or NULL. */
static const char *write_grant_of(const struct grants *g, const char *path, bool strictly)
{
	const char *best = NULL;
	for (size_t i = 0; i < g->n; i++)
		if ((g->v[i].access & GRANT_WRITE) && path_beneath(path, g->v[i].path) &&
		    (!strictly || strcmp(path, g->v[i].path) != 0) &&
		    (!best || strlen(g->v[i].path) > strlen(best)))
			best = g->v[i].path;
	return best;
}

/*
 * A write refused read-only (EROFS) beneath a protected path that the
 * namespaces bound so, or a rename or removal of such a place or of a folder
 * pinned above it (EBUSY, a mount point): the sandbox's, named with the
 * unprotect entry that would allow it (the place, relative to its write grant).
 */
static bool protected_denied(struct explain *x, const struct explain_call *t, const char *target,
			     int errnum)
{
	const struct grants *g = x->grants;
	const char *place = NULL;
	bool moved = errnum == EBUSY && (t->op == OP_RENAME || t->op == OP_DELETE);
	for (size_t i = 0; (errnum == EROFS || moved) && !place && i < g->protected_ro.n; i++)
		if (errnum == EROFS ? path_beneath(target, g->protected_ro.v[i])
				    : path_beneath(g->protected_ro.v[i], target))
			place = g->protected_ro.v[i];
	const char *grant = place ? write_grant_of(g, place, true) : NULL;
	if (!grant)
		return false;
	struct explain_denial *d = record(x, t, target, errnum, true, NULL, NULL, 0);
	if (d && !d->unprotect)
		d->unprotect = strdup(place + strlen(grant) + (strcmp(grant, "/") ? 1 : 0));
	return true;
}

/*
 * A protected path the live layer refused (the supervisor, Landlock alone):
 * named with the unprotect entry that would allow it, its rule's name.
 */
static void protected_refused(struct explain *x, const struct explain_call *t, const char *path,
			      const char *program, double when)
{
	struct explain_denial *d = record(x, t, path, EACCES, true, NULL, program, when);
	if (!d || d->unprotect || !path)
		return;
	struct protect_hit h = protect_match(x->prot, path, PROTECT_REMOVE);
	const char *grant = write_grant_of(x->grants, path, true);
	d->unprotect = h.rule  ? strdup(h.rule->name)
		       : grant ? strdup(path + strlen(grant) + (strcmp(grant, "/") ? 1 : 0))
			       : NULL;
}

/*
 * A rename or link between two write grants on one file system outside,
 * refused with EXDEV: under the namespaces each grant is a mount of its own,
 * and the kernel moves no name between mounts. The sandbox's; the grant of
 * one folder holding both is proposed when it is not too broad.
 */
static bool cross_grants_denied(struct explain *x, const struct explain_call *t, const char *from,
				const char *to, int errnum)
{
	const char *g1 = write_grant_of(x->grants, from, false);
	const char *g2 = write_grant_of(x->grants, to, false);
	char d1[PATH_MAX], d2[PATH_MAX];
	struct stat s1, s2;
	if (errnum != EXDEV || (t->op != OP_RENAME && t->op != OP_LINK) || !g1 || !g2 ||
	    strcmp(g1, g2) == 0 || !path_parent(from, d1, sizeof(d1)) ||
	    !path_parent(to, d2, sizeof(d2)) || stat(d1, &s1) < 0 || stat(d2, &s2) < 0 ||
	    s1.st_dev != s2.st_dev)
		return false;
	/* the folder holding both grants, unless a write there is never proposed
	 * (explain_write_refused: learn's judgment too) or it holds keys */
	char both[PATH_MAX], up[PATH_MAX], home[PATH_MAX];
	snprintf(both, sizeof(both), "%s", g1);
	while (!path_beneath(g2, both) && path_parent(both, up, sizeof(up)))
		memcpy(both, up, sizeof(both));
	caller_home(home, sizeof(home));
	const char *const homes[2] = {home, ""};
	char *never = explain_write_refused(both, homes, x->grants->workdir);
	bool broad = never || explain_holds_keys(both);
	free(never);
	struct explain_denial *d =
		record(x, t, to, errnum, true, broad ? NULL : strdup(both), NULL, 0);
	if (d && !d->why)
		d->why = strdup("exdev");
	return true;
}

/*
 * A lookup (lstat, readlink, a PATH search's stat) names the path itself:
 * its folder canonical, its last name kept, a symlink not followed (under
 * the namespaces the link must be there to be looked at), unless the link's
 * folder is granted: then what is missing is its target. Every other call
 * names where it lands.
 */
static void lookup_canonical(const struct explain *x, enum denial_op op, const char *path,
			     char *out, size_t cap)
{
	char dir[PATH_MAX], canon_dir[PATH_MAX];
	const char *name = strrchr(path, '/');
	struct stat st;
	if (op != OP_LOOKUP || !name || !name[1] || !path_parent(path, dir, sizeof(dir))) {
		explain_canonical(path, out, cap);
		return;
	}
	explain_canonical(dir, canon_dir, sizeof(canon_dir));
	snprintf(out, cap, "%s%s", strcmp(canon_dir, "/") ? canon_dir : "", name);
	if (lstat(out, &st) == 0 && S_ISLNK(st.st_mode) &&
	    grants_covers(x->grants, canon_dir, GRANT_READ))
		explain_canonical(path, out, cap);
}

/*
 * The call failed with errnum: was it the sandbox? For the filesystem, yes
 * when no grant allows what the call needed on that path (Landlock answers
 * EACCES or EXDEV; under mountns an ungranted path is absent, ENOENT, and a
 * read-only grant EROFS). A failure on a granted path is the file's own mode.
 */
void explain_judge(struct explain *x, const struct explain_call *t, int errnum)
{
	const struct grants *g = x->grants;
	if (t->op == OP_CONNECT || t->op == OP_BIND) {
		if (t->port < 0) /* UNIX sockets: abstract ones are scoped */
			record(x, t, t->path, errnum, errnum == EPERM, NULL, NULL, 0);
		else if (x->cfg->net != NET_ALLOW &&
			 !listed_port(t->op == OP_CONNECT ? &x->cfg->connect_tcp
							  : &x->cfg->bind_tcp,
				      t->port))
			record(x, t, NULL, errnum, true, NULL, NULL, 0);
		return;
	}
	if (t->op == OP_SIGNAL) {
		if (errnum == EPERM)
			record(x, t, NULL, errnum, true, NULL, NULL, 0);
		return;
	}
	/* a lookup needs no grant but the path's existence: only an absence is
	 * the sandbox's (the namespaces), and /proc is the step's own */
	if (t->op == OP_LOOKUP && (errnum != ENOENT || path_beneath(t->path, "/proc")))
		return;
	unsigned need = t->op == OP_READ || t->op == OP_LOOKUP ? GRANT_READ
			: t->op == OP_EXECUTE                  ? GRANT_EXEC
							       : GRANT_WRITE;
	/* creating, deleting, renaming and linking change the folder */
	bool parent =
		t->op == OP_CREATE || t->op == OP_DELETE || t->op == OP_RENAME || t->op == OP_LINK;
	/* rename and link: the call is the sandbox's when either side is not granted */
	const char *paths[2] = {t->path, t->path2};
	char canon[2][PATH_MAX];
	bool covered[2] = {true, true}, real[2] = {false, false};
	for (int i = 0; i < 2; i++) {
		if (!paths[i][0])
			continue;
		char target[PATH_MAX];
		lookup_canonical(x, t->op, paths[i], canon[i], sizeof(canon[i]));
		memcpy(target, canon[i], sizeof(target)); /* the same size, NUL-terminated */
		if (parent) {
			char *slash = strrchr(target, '/');
			if (slash && slash != target)
				*slash = '\0';
		}
		/* a device node opened needs a device grant: the others are nodev, or no rule */
		bool dev = !parent && t->op != OP_EXECUTE && explain_is_device(target);
		covered[i] = grants_covers(g, target, need | (dev ? GRANT_DEV : 0));
		struct stat st;
		/* ENOENT is the sandbox only for a path that exists outside it (mountns);
		 * for a create, the folder it was to be made in */
		real[i] = !(errnum == ENOENT && (covered[i] || lstat(target, &st) < 0));
	}
	bool any_denied = false;
	if (t->op == OP_EXECUTE && covered[0] && (errnum == EACCES || errnum == ENOENT))
		any_denied = interpreter_denied(x, t, canon[0], errnum);
	for (int i = 0; i < 2; i++)
		if (paths[i][0] && covered[i] && !any_denied)
			any_denied = protected_denied(x, t, canon[i], errnum);
	if (!any_denied && paths[0][0] && paths[1][0] && covered[0] && covered[1])
		any_denied = cross_grants_denied(x, t, canon[0], canon[1], errnum);
	for (int i = 0; i < 2; i++)
		if (paths[i][0] && real[i] && !covered[i]) {
			/* a link is granted by its folder: a grant resolves to the target */
			struct stat ls;
			bool link = t->op == OP_LOOKUP && lstat(canon[i], &ls) == 0 &&
				    S_ISLNK(ls.st_mode);
			record(x, t, canon[i], errnum, true, grant_folder(canon[i], parent || link),
			       NULL, 0);
			any_denied = true;
		}
	/* all granted: the file's own permissions (EXDEV there: a move across mounts) */
	if (!any_denied && real[0] && paths[0][0] && errnum != EXDEV && errnum != ENOENT &&
	    errnum != EBUSY)
		record(x, t, canon[0], errnum, false, NULL, NULL, 0);
}

/* Whether every user may search dir and each folder above it (cached per run). */
static bool searchable(struct explain *x, const char *dir)
{
	if (strv_find(&x->open_dirs, dir) >= 0)
		return true;
	char up[PATH_MAX];
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IXOTH) ||
	    (strcmp(dir, "/") != 0 && (!path_parent(dir, up, sizeof(up)) || !searchable(x, up))))
		return false;
	if (x->open_dirs.n < 4096 && !x->moves_unseen)
		strv_push(&x->open_dirs, dir);
	return true;
}

/* Whether dir is one of the folders no symlink led to, seen lately. */
static bool real_dir(const struct explain *x, const char *dir)
{
	for (size_t i = 0; i < EXPLAIN_REAL_DIRS; i++)
		if (x->real_dirs[i] && strcmp(x->real_dirs[i], dir) == 0)
			return true;
	return false;
}

static void remember_real_dir(struct explain *x, const char *dir)
{
	char *dup;
	if (x->moves_unseen || real_dir(x, dir) || !(dup = strdup(dir)))
		return;
	free(x->real_dirs[x->real_next]);
	x->real_dirs[x->real_next] = dup;
	x->real_next = (x->real_next + 1) % EXPLAIN_REAL_DIRS;
}

void explain_ran(struct explain *x, const char *path)
{
	const char *name = strrchr(path, '/');
	name = name ? name + 1 : path;
	for (size_t i = 0; name[0] && i < x->n; i++) {
		struct explain_denial *d = &x->v[i];
		const char *miss = d->path ? strrchr(d->path, '/') : NULL;
		if ((d->op == OP_LOOKUP || d->op == OP_EXECUTE) && miss &&
		    strcmp(miss + 1, name) == 0 && strcmp(d->path, path) != 0)
			d->moot = true;
	}
}

void explain_forget_dirs(struct explain *x)
{
	strv_release(&x->open_dirs);
	for (size_t i = 0; i < EXPLAIN_REAL_DIRS; i++) {
		free(x->real_dirs[i]);
		x->real_dirs[i] = NULL;
	}
}

/* A file every user may read, or a folder every user may list and enter. */
static bool open_to_all(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return (st->st_mode & S_IROTH) != 0;
	return S_ISDIR(st->st_mode) && (st->st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH);
}

bool explain_may_fail(struct explain *x, const struct explain_call *c)
{
	static const char *const special[] = {"/proc", "/sys", "/dev"};
	if ((c->op != OP_READ && c->op != OP_LOOKUP) || c->path[0] != '/')
		return true;
	for (size_t i = 0; i < sizeof(special) / sizeof(*special); i++)
		if (path_beneath(c->path, special[i]))
			return true;
	char dir[PATH_MAX];
	struct stat st;
	/* a lookup of a link (lstat, readlink) names the link, not where it leads */
	if (c->op == OP_LOOKUP && lstat(c->path, &st) == 0 && S_ISLNK(st.st_mode))
		return true;
	/*
	 * In a folder a read was let through lately, reached through no
	 * symlink (and so searchable by all): the name is its own canonical
	 * name unless it is a link itself, which one lstat tells (instead of
	 * the open below).
	 */
	if (path_plain(c->path) && path_parent(c->path, dir, sizeof(dir)) && real_dir(x, dir) &&
	    lstat(c->path, &st) == 0 && open_to_all(&st)) {
		if (!grants_covers(x->grants, c->path, GRANT_READ))
			return true;
		if (S_ISDIR(st.st_mode))
			remember_real_dir(x, c->path);
		return false;
	}
	/* where the call's own open lands, through every symlink (as the tracee's does) */
	int fd = open(c->path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return true;
	char link[64], canon[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = fstat(fd, &st) == 0 ? readlink(link, canon, sizeof(canon) - 1) : -1;
	close(fd);
	if (n <= 0 || canon[0] != '/' || !open_to_all(&st))
		return true;
	canon[n] = '\0';
	for (size_t i = 0; i < sizeof(special) / sizeof(*special); i++)
		if (path_beneath(canon, special[i]))
			return true;
	if (!grants_covers(x->grants, canon, GRANT_READ) || !path_parent(canon, dir, sizeof(dir)) ||
	    !searchable(x, dir))
		return true;
	/* reached through no symlink: the next read in its folder (or in it) is cheaper */
	if (strcmp(canon, c->path) == 0) {
		remember_real_dir(x, dir);
		if (S_ISDIR(st.st_mode))
			remember_real_dir(x, canon);
	}
	return false;
}

static void describe(FILE *out, const struct explain_denial *d)
{
	/* a host with no port: a lookup the resolver stepbox runs refused (transparent mode) */
	bool lookup = d->op == OP_HOST && d->port <= 0;
	fprintf(out, "  %s[%d] %s ", d->program[0] ? d->program : "?", (int)d->pid,
		lookup ? "look up the name" : explain_op_name(d->op));
	if (d->op == OP_SIGNAL)
		fprintf(out, "process %d", d->port);
	else if (lookup)
		fprintf(out, "'%s'", d->path ? d->path : "?");
	else if (d->op == OP_HOST)
		fprintf(out, "'%s' port %d%s%s", d->path ? d->path : "?", d->port,
			d->addr ? " at " : "", d->addr ? d->addr : "");
	else if (d->op == OP_SOCKET || d->op == OP_NESTED)
		fprintf(out, "(%s)", d->path ? d->path : "?");
	else if (d->path && d->port < 0)
		fprintf(out, "'%s'", d->path);
	else
		fprintf(out, "tcp port %d", d->port);
	if (d->count > 1)
		fprintf(out, " (%u times)", d->count);
	fputs(": ", out);
}

static void sink_add(void *ctx, enum denial_op op, const char *program, pid_t pid, const char *path,
		     int port, double when)
{
	explain_add(ctx, op, program, pid, path, port, when);
}

/* A host the proxy refused: one line for each name, port and reason. */
static void sink_host(void *ctx, const struct denial_host *h)
{
	struct explain *x = ctx;
	size_t before = x->n;
	struct explain_call t = {.op = OP_HOST, .port = h->port};
	for (size_t i = 0; i < x->n; i++) {
		struct explain_denial *d = &x->v[i];
		if (same(d, OP_HOST, h->name, h->port) && d->why && strcmp(d->why, h->why) == 0) {
			d->count++;
			d->last = h->when > d->last ? h->when : d->last;
			return;
		}
	}
	record(x, &t, h->name, EACCES, true, NULL, "proxy", h->when);
	if (x->n == before)
		return;
	struct explain_denial *d = &x->v[x->n - 1];
	d->why = strdup(h->why);
	d->addr = h->addr ? strdup(h->addr) : NULL;
	d->detail = h->detail ? strdup(h->detail) : NULL;
}

static void sink_failed(void *ctx, const struct denial_failed *f)
{
	struct explain_call t;
	memset(&t, 0, sizeof(t));
	t.tid = f->pid;
	t.op = f->op;
	t.port = -1;
	t.program = f->program;
	t.when = f->when;
	snprintf(t.path, sizeof(t.path), "%s", f->path);
	snprintf(t.path2, sizeof(t.path2), "%s", f->path2);
	explain_judge(ctx, &t, f->errnum);
}

struct denial_sink explain_sink(struct explain *x)
{
	return (struct denial_sink){sink_add, sink_host, sink_failed, x};
}

void explain_add(struct explain *x, enum denial_op op, const char *program, pid_t pid,
		 const char *path, int port, double when)
{
	struct explain_call t;
	memset(&t, 0, sizeof(t));
	t.tid = pid;
	t.op = op;
	t.port = port;
	if (op == OP_PROTECTED) {
		protected_refused(x, &t, path, program, when);
		return;
	}
	bool fs = op != OP_CONNECT && op != OP_BIND && op != OP_SIGNAL && op != OP_NOFD &&
		  op != OP_SETID && op != OP_HOST && op != OP_SOCKET && op != OP_NESTED;
	/* a pathname socket: what --unix would grant is its folder */
	bool unix_path = op == OP_CONNECT && path && path[0] == '/';
	record(x, &t, path, op == OP_SIGNAL || op == OP_CONNECT ? EPERM : EACCES, true,
	       (fs || unix_path) && path ? grant_folder(path, unix_path) : NULL, program, when);
}

/* What tools merely probe (/proc, /sys): listed after the denials that matter, never the cause. */
static bool probe(const struct explain_denial *d)
{
	return d->path && (path_beneath(d->path, "/proc") || path_beneath(d->path, "/sys"));
}

/*
 * The audit records hold no exec that succeeded, so a PATH miss cannot be
 * told from the fix by explain_ran: in a step that succeeded, a refused exec
 * whose name a granted folder on PATH (the caller's, and the system's) also
 * holds, runnable, is taken for one that then ran from there.
 */
static void audit_moot(struct explain *x)
{
	const char *env = getenv("PATH");
	char path[4096];
	snprintf(path, sizeof(path), "%s:/usr/local/bin:/usr/bin:/bin", env ? env : "");
	for (size_t i = 0; i < x->n; i++) {
		struct explain_denial *d = &x->v[i];
		const char *name = d->path ? strrchr(d->path, '/') : NULL;
		if (d->op != OP_EXECUTE || d->moot || !name)
			continue;
		char dirs[4096];
		memcpy(dirs, path, sizeof(dirs));
		char *save = NULL;
		for (char *dir = strtok_r(dirs, ":", &save); dir && !d->moot;
		     dir = strtok_r(NULL, ":", &save)) {
			char cand[PATH_MAX], canon[PATH_MAX];
			struct stat st;
			if (dir[0] != '/' ||
			    snprintf(cand, sizeof(cand), "%s%s", dir, name) >= (int)sizeof(cand) ||
			    stat(cand, &st) < 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXOTH))
				continue;
			explain_canonical(cand, canon, sizeof(canon));
			d->moot = strcmp(canon, d->path) != 0 &&
				  grants_covers(x->grants, canon, GRANT_EXEC);
		}
	}
}

void explain_rank(struct explain *x, int exit_code)
{
	if (exit_code == 0 && strcmp(x->source, "audit") == 0)
		audit_moot(x);
	struct explain_denial *cause = NULL;
	bool not_run = exit_code == 126 || exit_code == 127;
	for (size_t i = 0; i < x->n; i++) {
		struct explain_denial *d = &x->v[i];
		d->cause = false;
		/* 124: the timeout; over 128: a signal; neither a denial's doing */
		if (exit_code == 0 || exit_code == 124 || exit_code > 128 || !d->sandbox ||
		    d->moot || probe(d) || (not_run && d->op != OP_EXECUTE && d->op != OP_LOOKUP))
			continue;
		if (!cause || d->last >= cause->last)
			cause = d;
	}
	if (cause)
		cause->cause = true;
}

void explain_print(FILE *out, const struct explain *x)
{
	char home[PATH_MAX];
	caller_home(home, sizeof(home));
	size_t sandbox = 0, other = 0, moot = 0;
	for (size_t i = 0; i < x->n; i++)
		x->v[i].moot ? moot++ : x->v[i].sandbox ? sandbox++ : other++;
	bool ranked = false;
	for (size_t i = 0; i < x->n; i++)
		ranked |= x->v[i].cause;
	if (!sandbox)
		fprintf(out, "stepbox: explain: the sandbox denied nothing\n");
	else
		fprintf(out, "stepbox: explain: the sandbox denied %zu access%s (from the %s)%s:\n",
			sandbox, sandbox == 1 ? "" : "es",
			strcmp(x->source, "audit") ? "tracer" : "kernel's audit records",
			!ranked ? ""
			: sandbox == 1
				? "; the command failed after it"
				: "; first the last before the command failed, the likely cause");
	/* the cause, then the rest, then what tools merely probe (/proc, /sys) */
	for (size_t k = 0; k < 3 * x->n; k++) {
		const struct explain_denial *d = &x->v[k % x->n];
		size_t pass = d->cause ? 0 : probe(d) ? 2 : 1;
		if (!d->sandbox || d->moot || pass != k / x->n)
			continue;
		describe(out, d);
		char proposed[PATH_MAX];
		explain_advice(out, x, d, home[0] ? home : NULL, proposed, sizeof(proposed));
	}
	if (x->omitted)
		fprintf(out, "  ... and %zu more not listed\n", x->omitted);
	if (moot) {
		fprintf(out,
			"stepbox: explain: %zu miss%s of a command that then ran from another "
			"folder (not the cause):\n",
			moot, moot == 1 ? "" : "es");
		for (size_t i = 0; i < x->n; i++)
			if (x->v[i].moot) {
				describe(out, &x->v[i]);
				fprintf(out, "not needed\n");
			}
	}
	if (other) {
		fprintf(out,
			"stepbox: explain: %zu failure%s came from file permissions, not the "
			"sandbox:\n",
			other, other == 1 ? "" : "s");
		for (size_t i = 0; i < x->n; i++) {
			if (x->v[i].sandbox || x->v[i].moot)
				continue;
			describe(out, &x->v[i]);
			fprintf(out, "%s\n", strerror(x->v[i].errnum));
		}
	}
}

json_t *explain_json(const struct explain *x)
{
	char home[PATH_MAX];
	caller_home(home, sizeof(home));
	json_t *a = json_array();
	for (size_t i = 0; a && i < x->n; i++) {
		const struct explain_denial *d = &x->v[i];
		/* the advice as --explain words it, and its grant only if it proposes one */
		char *advice = NULL, proposed[PATH_MAX] = "";
		size_t len = 0;
		bool proposes = false;
		FILE *mem = d->sandbox && !d->moot ? open_memstream(&advice, &len) : NULL;
		if (mem) {
			proposes = explain_advice(mem, x, d, home[0] ? home : NULL, proposed,
						  sizeof(proposed));
			fclose(mem);
			if (len && advice[len - 1] == '\n')
				advice[len - 1] = '\0';
		}
		json_t *o =
			json_pack("{s:s, s:i, s:s, s:b, s:i, s:s}", "program", d->program, "pid",
				  (int)d->pid, "operation", explain_op_name(d->op), "sandbox",
				  d->sandbox, "count", (int)d->count, "error", strerror(d->errnum));
		if (d->moot)
			json_object_set_new(o, "moot", json_true());
		if (d->cause)
			json_object_set_new(o, "cause", json_true());
		if (d->unprotect)
			json_object_set_new(o, "unprotect", json_string(d->unprotect));
		if (d->path)
			json_object_set_new(o,
					    d->op == OP_HOST     ? "host"
					    : d->op == OP_SOCKET ? "socket"
					    : d->op == OP_NESTED ? "call"
								 : "path",
					    json_string(d->path));
		if (d->op == OP_HOST)
			json_object_set_new(o, "why", json_string(d->why ? d->why : "direct"));
		if (d->addr)
			json_object_set_new(o, "address", json_string(d->addr));
		if (d->detail)
			json_object_set_new(o, "detail", json_string(d->detail));
		if (d->port >= 0)
			json_object_set_new(o, d->op == OP_SIGNAL ? "target_pid" : "port",
					    json_integer(d->port));
		if (proposes && proposed[0])
			json_object_set_new(o, "grant",
					    json_pack("{s:s}", explain_grant_key(d), proposed));
		if (advice && advice[0])
			json_object_set_new(o, "advice", json_string(advice));
		free(advice);
		json_array_append_new(a, o);
	}
	return a;
}
