/*
 * protect_net: the net after the step. The step's whole process tree is
 * gone; what it created or changed among the protected names is judged,
 * moved aside (never deleted) and the recorded original put back. Every
 * move is made with *at() calls from the write grant's folder, one name at
 * a time with O_NOFOLLOW: a folder the step replaced by a symlink is itself
 * the finding, moved aside, and never followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "path.h"
#include "protect_int.h"

static bool same_state(const struct stat *a, const struct stat *b)
{
	return a->st_mode == b->st_mode && a->st_size == b->st_size && a->st_ino == b->st_ino &&
	       a->st_dev == b->st_dev && a->st_mtime == b->st_mtime && a->st_ctime == b->st_ctime &&
#ifdef __APPLE__
	       a->st_mtimespec.tv_nsec == b->st_mtimespec.tv_nsec &&
	       a->st_ctimespec.tv_nsec == b->st_ctimespec.tv_nsec;
#else
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
#endif
}

static const struct item *before_of(const struct protect_record *r, const struct item *a)
{
	for (size_t i = 0; i < r->before.n; i++)
		if (r->before.v[i].grant == a->grant && strcmp(r->before.v[i].rel, a->rel) == 0)
			return &r->before.v[i];
	return NULL;
}

static const char *what_type(mode_t m)
{
	return S_ISLNK(m)   ? "a symlink"
	       : S_ISDIR(m) ? "a folder"
	       : S_ISREG(m) ? "a file"
			    : "a special file";
}

/* Why a created or changed item is a finding, or NULL when it is not one. */
static char *judge(const struct item *a, const struct item *b)
{
	const char *did = b ? "changed" : "created";
	size_t n = strlen(a->rel);
	/*
	 * What a .git of the step's holds, or the gitdir its .git file names:
	 * only a hook, a config's keys and a folder that is no longer one run
	 * anything (a pointer such as commondir names a gitdir judged itself).
	 */
	if (a->made && !b && (a->kind == ITEM_FILE || a->kind == ITEM_DOTGIT) &&
	    (S_ISREG(a->st.st_mode) || S_ISDIR(a->st.st_mode)))
		return NULL;
	switch (a->kind) {
	case ITEM_HOOK:
		if (n > 7 && strcmp(a->rel + n - 7, ".sample") == 0)
			return NULL; /* git never runs a sample */
		return strv_fmt("a hook %s (%s)", did, what_type(a->st.st_mode));
	case ITEM_CONFIG:
		if (!S_ISREG(a->st.st_mode))
			return strv_fmt("a git config %s as %s", did, what_type(a->st.st_mode));
		if (!a->content)
			return strv_fmt("a git config %s, too large to judge", did);
		return protect_git_runs(b && S_ISREG(b->st.st_mode) ? b->content : NULL, a->content,
					a->len);
	case ITEM_FOLDER:
		/* a folder made beneath a protected one is moved aside whole */
		if (S_ISDIR(a->st.st_mode) && (b ? S_ISDIR(b->st.st_mode) : !a->entry))
			return NULL;
		return strv_fmt("%s as %s", b ? "replaced" : "created", what_type(a->st.st_mode));
	case ITEM_DOTGIT:
		if (S_ISDIR(a->st.st_mode))
			return NULL; /* its own names are judged one by one */
		return strv_fmt(".git %s as %s%s", did, what_type(a->st.st_mode),
				S_ISREG(a->st.st_mode) ? " naming another gitdir" : "");
	case ITEM_FILE:
		break;
	}
	return strv_fmt("%s as %s", did, what_type(a->st.st_mode));
}

/* mkdir -p of rel beneath dirfd, 0700, through no symlink: the last folder's fd or -errno. */
static int mkdirs_at(int dirfd, const char *rel)
{
	int fd = dup(dirfd);
	if (fd < 0)
		return -errno;
	for (const char *p = rel; *p;) {
		size_t len = strcspn(p, "/");
		char name[NAME_MAX + 1];
		if (len == 0 || len > NAME_MAX) {
			p += len + (p[len] == '/');
			continue;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		if (mkdirat(fd, name, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			close(fd);
			return -e;
		}
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0)
			return -e;
		fd = next;
		p += len + (p[len] == '/');
	}
	return fd;
}

/* This run's folder in the quarantine (made once): its canonical path, or NULL. */
static const char *quarantine_dir(struct protect_record *r, const char *base, const char *runid)
{
	if (r->quarantine)
		return r->quarantine;
	char *want = NULL;
	if (base)
		want = strv_fmt("%s/%s", base, runid);
	else if (getenv("XDG_STATE_HOME") && getenv("XDG_STATE_HOME")[0] == '/') {
		char *st = realpath(getenv("XDG_STATE_HOME"), NULL);
		want = st ? strv_fmt("%s/stepbox/quarantine/%s", st, runid) : NULL;
		free(st);
	} else if (r->home) {
		want = strv_fmt("%s/.local/state/stepbox/quarantine/%s", r->home, runid);
	}
	if (!want)
		return NULL;
	int fd = path_mkdir_nofollow(want, 0700, NULL, 0);
	if (fd < 0) {
		free(want);
		return NULL;
	}
	close(fd);
	r->quarantine = want;
	return want;
}

/* Move rel (in grant g, parent dfd, name base) into folder qroot, at sub. */
static int move_into(int dfd, const char *base, const char *qroot, const char *sub, char **moved_to)
{
	int qfd = path_open_nofollow(qroot, O_DIRECTORY);
	if (qfd < 0)
		return qfd;
	char parent[PATH_MAX];
	int r = path_parent(sub, parent, sizeof(parent)) ? 0 : -ENAMETOOLONG;
	int pfd = r == 0 ? mkdirs_at(qfd, strcmp(parent, "/") ? parent + 1 : "") : r;
	close(qfd);
	if (pfd < 0)
		return pfd;
	r = renameat(dfd, base, pfd, base) < 0 ? -errno : 0;
	close(pfd);
	if (r == 0)
		*moved_to = strv_fmt("%s%s", qroot, sub);
	return r;
}

/* The recorded original put back where the finding was: a new file, its mode. */
static int put_back(int dfd, const char *base, const struct item *b)
{
	int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			b->st.st_mode & 07777);
	if (fd < 0)
		return -errno;
	int r = 0;
	for (size_t off = 0; r == 0 && off < b->len;) {
		ssize_t w = write(fd, b->content + off, b->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = w < 0 ? -errno : -EIO;
		else
			off += (size_t)w;
	}
	if (r == 0 && fchmod(fd, b->st.st_mode & 07777) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* Move the finding aside and put the original back; f->note says how it went. */
static void act(struct protect_record *r, const struct item *a, const struct item *b,
		struct finding *f, const char *base, const char *runid)
{
	int root = protect_open_root(r, a->grant);
	const char *name;
	int dfd = root >= 0 ? protect_walk(root, a->rel, &name) : root;
	struct stat now;
	int e = dfd < 0 ? -dfd : fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ? errno : 0;
	if (e == 0 && (now.st_ino != a->st.st_ino || now.st_dev != a->st.st_dev))
		e = ESTALE; /* changed again since it was judged: another writer */
	const char *q = e ? NULL : quarantine_dir(r, base, runid);
	int m = e ? -e : q ? move_into(dfd, name, q, a->path, &f->moved_to) : -EXDEV;
	if (m == -EXDEV) { /* another file system: beside the grant's own root */
		char *local = strv_fmt(".stepbox-quarantine/%s", runid);
		int lfd = local ? mkdirs_at(root, local) : -ENOMEM;
		char *lpath =
			lfd >= 0 ? strv_fmt("%s/%s",
					    strcmp(r->roots.v[a->grant], "/") ? r->roots.v[a->grant]
									      : "",
					    local)
				 : NULL;
		char sub[PATH_MAX];
		snprintf(sub, sizeof(sub), "/%s", a->rel);
		m = lpath     ? move_into(dfd, name, lpath, sub, &f->moved_to)
		    : lfd < 0 ? lfd
			      : -ENOMEM;
		if (lfd >= 0)
			close(lfd);
		free(local);
		free(lpath);
	}
	if (m < 0) {
		f->note = strv_fmt("could not be moved aside: %s", strerror(-m));
	} else if (b && b->content && S_ISREG(b->st.st_mode)) {
		int p = put_back(dfd, name, b);
		f->restored = p == 0;
		f->note = p == 0 ? strdup("the original put back")
				 : strv_fmt("the original could not be put back: %s", strerror(-p));
	} else {
		f->note = strdup(b ? "the original was not kept (not a file, or over 256 KiB): "
				     "nothing put back"
				   : "it did not exist before: nothing put back");
	}
	if (dfd >= 0)
		close(dfd);
	if (root >= 0)
		close(root);
}

static void say(const struct finding *f)
{
	fprintf(stderr,
		"stepbox: protected: '%s': %s\n"
		"  it would have run outside the sandbox: %s\n"
		"  %s%s%s; %s\n"
		"hint: to let a step write it: --unprotect %s (or \"unprotect\": [\"%s\"] in the "
		"policy)\n",
		f->path, f->why, f->runs, f->moved_to ? "moved aside to '" : "",
		f->moved_to ? f->moved_to : "NOT moved aside", f->moved_to ? "'" : "",
		f->note ? f->note : "", f->rule, f->rule);
}

size_t protect_check(struct protect_record *r, const char *quarantine, bool quiet)
{
	if (!r)
		return 0;
	int rc = protect_scan(r, &r->after, true);
	if (rc < 0) {
		fprintf(stderr,
			"stepbox: protected: cannot look at the protected paths after the "
			"step: %s\n",
			strerror(-rc));
		return 0;
	}
	char runid[64];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	size_t k = strftime(runid, sizeof(runid), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(runid + k, sizeof(runid) - k, "-%ld", (long)getpid());
	for (size_t i = 0; i < r->after.n; i++) {
		const struct item *a = &r->after.v[i];
		const struct item *b = before_of(r, a);
		if (b && same_state(&a->st, &b->st))
			continue;
		/*
		 * In a gitdir a .git file of the step's names, what was there
		 * before the step, unchanged (its ctime, which no call sets back,
		 * older than the record): the person's, never moved
		 */
		if (a->made && !b &&
		    (a->st.st_ctim.tv_sec < r->start.tv_sec ||
		     (a->st.st_ctim.tv_sec == r->start.tv_sec &&
		      a->st.st_ctim.tv_nsec < r->start.tv_nsec)))
			continue;
		char *why = judge(a, b);
		if (!why)
			continue;
		if (strv_grow(&r->f, &r->capf, r->nf, sizeof(*r->f), 8) < 0) {
			free(why);
			break;
		}
		struct finding *f = &r->f[r->nf++];
		*f = (struct finding){strdup(a->path), a->rule, a->runs, why, NULL, NULL, false};
		act(r, a, b, f, quarantine, runid);
		(void)quiet; /* a finding is said whatever -q: it changes the exit status */
		say(f);
	}
	return r->nf;
}

json_t *protect_json(const struct protect_record *r)
{
	json_t *a = json_array();
	for (size_t i = 0; r && a && i < r->nf; i++) {
		const struct finding *f = &r->f[i];
		json_array_append_new(a, json_pack("{s:s?, s:s, s:s, s:s, s:s?, s:b, s:s?, s:s}",
						   "path", f->path, "why", f->why, "rule", f->rule,
						   "runs", f->runs, "moved_to", f->moved_to,
						   "restored", f->restored, "note", f->note,
						   "unprotect", f->rule));
	}
	return a;
}

json_t *protect_json_unprotected(const struct protect_record *r)
{
	json_t *o = json_pack("{s:o, s:o, s:s?}", "unprotect", json_array(), "broad", json_array(),
			      "quarantine", r ? r->quarantine : NULL);
	for (size_t i = 0; r && o && i < r->unprot.n; i++)
		json_array_append_new(json_object_get(o, "unprotect"), json_string(r->unprot.v[i]));
	for (size_t i = 0; r && o && i < r->broad.n; i++)
		json_array_append_new(json_object_get(o, "broad"), json_string(r->broad.v[i]));
	return o;
}
