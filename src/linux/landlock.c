#include "landlock.h"
#include "strbuf.h"

#include "hostrule.h"
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Our own copies of the uapi definitions: Debian 12's linux-libc-dev stops at
 * ABI 2, and the values are a stable kernel ABI.
 */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)
#define LL_FS_TRUNCATE (1ULL << 14)
#define LL_FS_IOCTL_DEV (1ULL << 15)

#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

#define LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF (1U << 0)
#define LL_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#define LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)

#define LL_FS_V1 ((LL_FS_MAKE_SYM << 1) - 1)
/* rights that make sense on a file; a rule on a file with others is EINVAL */
#define LL_FS_FILE                                                                                 \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

const struct landlock_feature_info landlock_feature_table[] = {
	{1, "filesystem", "read, write, execute, create and delete only beneath grants"},
	{2, "refer", "rename and link across folders (ABI 1 refuses every such move)"},
	{3, "truncate", "truncate only files beneath write grants"},
	{4, "tcp", "TCP bind and connect port rules (network policies)"},
	{5, "ioctl-dev", "ioctl on device files only beneath device grants"},
	{6, "scope", "no signals or abstract UNIX sockets to processes outside the sandbox"},
	{7, "audit-log", "denials logged to the audit subsystem (explain from kernel records)"},
	{8, "tsync",
	 "restrict all threads at once (stepbox enforces before exec, single-threaded)"},
	{9, "unix-path", "connect to pathname UNIX sockets only beneath grants"},
};
const unsigned landlock_feature_count =
	sizeof(landlock_feature_table) / sizeof(landlock_feature_table[0]);

void landlock_degrade(struct landlock_features *f)
{
	f->fs = LL_FS_V1 | LL_FS_REFER | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
	f->net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	f->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	f->restrict_flags_ok = LL_RESTRICT_SELF_LOG_SAME_EXEC_OFF |
			       LL_RESTRICT_SELF_LOG_NEW_EXEC_ON |
			       LL_RESTRICT_SELF_LOG_SUBDOMAINS_OFF;
	if (f->abi <= 0) {
		f->fs = f->net = f->scoped = 0;
		f->restrict_flags_ok = 0;
		return;
	}
	/*
	 * Oldest to newest: each ABI removes what the next one added, and falls
	 * through to the next; 7 and up (8: TSYNC, 9: pathname UNIX sockets,
	 * neither a handled right here) keep everything above.
	 */
	switch (f->abi) {
	case 1:
		f->fs &= ~LL_FS_REFER;
		__attribute__((fallthrough));
	case 2:
		f->fs &= ~LL_FS_TRUNCATE;
		__attribute__((fallthrough));
	case 3:
		f->net = 0;
		__attribute__((fallthrough));
	case 4:
		f->fs &= ~LL_FS_IOCTL_DEV;
		__attribute__((fallthrough));
	case 5:
		f->scoped = 0;
		__attribute__((fallthrough));
	case 6:
		f->restrict_flags_ok = 0;
		break;
	default:
		break;
	}
}

int landlock_probe(struct landlock_features *f, const char *cap_text, struct stepbox_err *err)
{
	memset(f, 0, sizeof(*f));
	f->cap = -1;
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	f->kernel_abi = abi < 0 ? 0 : (int)abi;
	f->kernel_errno = abi < 0 ? errno : 0;
	f->abi = f->kernel_abi > LANDLOCK_ABI_KNOWN ? LANDLOCK_ABI_KNOWN : f->kernel_abi;
	if (cap_text) {
		long cap;
		if (policy_parse_long(cap_text, 0, 99, &cap) < 0)
			return err_set(err, ERR_USAGE, 0,
				       "STEPBOX_LANDLOCK_ABI='%s' is not a number from 0 to 99",
				       cap_text);
		f->cap = (int)cap;
		if (f->abi > cap)
			f->abi = (int)cap;
	}
	landlock_degrade(f);
	return 0;
}

uint64_t landlock_rights(const struct landlock_features *f, unsigned access, bool is_dir)
{
	uint64_t r = 0;
	if (access & GRANT_READ)
		r |= LL_FS_READ_FILE | LL_FS_READ_DIR;
	if (access & GRANT_EXEC)
		r |= LL_FS_EXECUTE;
	/* refer inside write grants: renames within a step's folders work */
	if (access & GRANT_WRITE)
		r |= LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR |
		     LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM |
		     LL_FS_REFER | LL_FS_TRUNCATE;
	if (access & GRANT_DEV)
		r |= LL_FS_IOCTL_DEV;
	r &= f->fs;
	return is_dir ? r : r & LL_FS_FILE;
}

int landlock_check_net(const struct landlock_features *f, const struct stepbox_config *cfg,
		       struct stepbox_err *err)
{
	if (cfg->net != NET_TCP || f->net)
		return 0;
	if (f->cap >= 0 && f->cap < f->kernel_abi) {
		/* the kernel has it: only the cap hides it, and that is what to change */
		err_set(err, ERR_UNAVAILABLE, 0,
			"a TCP port policy needs Landlock ABI 4; STEPBOX_LANDLOCK_ABI caps it to "
			"%d "
			"(this kernel gives %d)",
			f->abi, f->kernel_abi);
		err_hint(err, "unset STEPBOX_LANDLOCK_ABI or raise it to 4, or use --net none or "
			      "--net allow");
		return -EOPNOTSUPP;
	}
	err_set(err, ERR_UNAVAILABLE, 0,
		"a TCP port policy needs Landlock ABI 4; this kernel gives ABI %d", f->abi);
	err_hint(err, "use --net none or --net allow here, or run on Linux 6.7 or newer");
	return -EOPNOTSUPP;
}

static int add_ports(int fd, uint64_t access, const struct policy_ports *p, struct stepbox_err *err)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct ll_net_port_attr np = {access, p->v[i]};
		if (syscall(__NR_landlock_add_rule, fd, LL_RULE_NET_PORT, &np, 0) < 0)
			return err_set(err, ERR_UNAVAILABLE, errno,
				       "add Landlock rule for TCP port %u", p->v[i]);
	}
	return 0;
}

/*
 * The grants' O_PATH descriptors, closed together: the kernel hands out the
 * lowest free numbers, so they come one after the other (around the few
 * stepbox holds), and one close_range ends each run of them (a syscall is a
 * few microseconds here, a grant a few syscalls).
 */
struct fd_batch {
	int fd[256];
	size_t n;
};

static void batch_flush(struct fd_batch *b)
{
	path_close_fds(b->fd, b->n);
	b->n = 0;
}

static void batch_close(struct fd_batch *b, int fd)
{
	if (b->n == sizeof(b->fd) / sizeof(b->fd[0]))
		batch_flush(b);
	b->fd[b->n++] = fd;
}

void landlock_tcp_of(const struct stepbox_config *cfg, bool own_netns, unsigned short proxy_port,
		     struct policy_ports *proxy, struct landlock_tcp *out)
{
	*out = (struct landlock_tcp){cfg->net != NET_ALLOW, NULL, NULL};
	if (cfg->net == NET_TCP) {
		out->connect = &cfg->connect_tcp;
		out->bind = &cfg->bind_tcp;
	} else if (cfg->net == NET_HOSTS && own_netns) {
		out->handled = false;
	} else if (cfg->net == NET_HOSTS) {
		proxy->n = 0;
		if (proxy_port)
			policy_add_port(proxy, proxy_port);
		out->connect = proxy;
	}
}

static int add_tcp(int fd, const struct landlock_tcp *tcp, struct stepbox_err *err)
{
	static const struct policy_ports none;
	return add_ports(fd, LL_NET_CONNECT_TCP, tcp->connect ? tcp->connect : &none, err) < 0 ||
			       add_ports(fd, LL_NET_BIND_TCP, tcp->bind ? tcp->bind : &none, err) <
				       0
		       ? -EPERM
		       : 0;
}

int landlock_build(const struct landlock_features *f, const struct grants *g,
		   const struct stepbox_config *cfg, const struct landlock_tcp *tcp,
		   struct stepbox_err *err)
{
	int verbosity = cfg->verbosity;
	/* with no port rule, a handled right refuses every TCP bind and connect */
	uint64_t net = tcp->handled ? f->net : 0;
	struct ll_ruleset_attr attr = {f->fs, net, f->scoped};
	int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0) {
		err_set(err, ERR_UNAVAILABLE, errno, "create Landlock ruleset (ABI %d)", f->abi);
		err_hint(err, "cap the ABI with STEPBOX_LANDLOCK_ABI to what the kernel supports");
		return -EPERM;
	}
	struct fd_batch held;
	held.n = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		if (gr->access & GRANT_PRIVATE)
			continue; /* made anew in the child, which adds its own rule */
		/*
		 * A grant is canonical: no symlink on its way. One there now was
		 * planted since it was resolved (a step running beside this one),
		 * and following it would grant its target. A folder opens as one
		 * (most grants are: no stat needed); anything else is not a
		 * folder, or became one since, and gets a file's rights: fewer.
		 * A read grant mostly comes with the fd its resolution opened
		 * (no symlink on the whole way then): the place it resolved.
		 */
		bool is_dir = gr->fd_dir;
		int pfd = gr->has_fd ? gr->fd : path_open_nofollow_typed(gr->path, &is_dir);
		if (pfd < 0) {
			int e = -pfd;
			if (!(gr->access & GRANT_WRITE) && e == ENOENT) {
				/* vanished since it was resolved: dropping an allow narrows */
				if (verbosity > 0)
					err_warn("skipping '%s': %s", gr->path, strerror(e));
				continue;
			}
			batch_flush(&held);
			close(fd);
			err_set(err, ERR_UNAVAILABLE, e, "open grant '%s'", gr->path);
			if (e == ELOOP)
				err_hint(err, PATH_LINK_APPEARED_HINT);
			return -e;
		}
		struct ll_path_beneath_attr pb = {landlock_rights(f, gr->access, is_dir), pfd};
		if (pb.allowed_access &&
		    syscall(__NR_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			int e = errno;
			if (!gr->has_fd)
				close(pfd);
			batch_flush(&held);
			close(fd);
			return err_set(err, ERR_UNAVAILABLE, e, "add Landlock rule for '%s'",
				       gr->path);
		}
		if (!gr->has_fd) /* the grants' own fds are theirs to close */
			batch_close(&held, pfd);
	}
	batch_flush(&held);
	if (net && add_tcp(fd, tcp, err) < 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int landlock_build_net(const struct landlock_features *f, const struct landlock_tcp *tcp,
		       struct stepbox_err *err)
{
	struct ll_ruleset_attr attr = {0, f->net, 0};
	int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return err_set(err, ERR_UNAVAILABLE, errno, "create Landlock network ruleset");
	if (add_tcp(fd, tcp, err) < 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int landlock_confine_proxy(void *ctx)
{
	const struct landlock_proxy *lp = ctx;
	const struct landlock_features *f = lp->f;
	if (f->abi <= 0)
		return 0; /* no Landlock here: the proxy runs as the caller, as it always did */
	/* TCP: the ports the hosts name (80 and 443 when none), and 53 for DNS over TCP */
	struct policy_ports ports = {0};
	for (size_t i = 0; i <= lp->allow->n && ports.n + 2 < POLICY_MAX_PORTS; i++) {
		unsigned want[2] = {53, 0};
		if (i < lp->allow->n && lp->allow->v[i].port) {
			want[0] = lp->allow->v[i].port;
		} else if (i < lp->allow->n) {
			want[0] = 80;
			want[1] = 443;
		}
		for (int k = 0; k < 2 && want[k]; k++) {
			bool have = false;
			for (unsigned j = 0; j < ports.n; j++)
				have |= ports.v[j] == want[k];
			if (!have)
				ports.v[ports.n++] = (unsigned short)want[k];
		}
	}
	struct ll_ruleset_attr attr = {f->fs, f->net, f->scoped};
	int fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return -errno;
	struct stepbox_err err = {0};
	int r = f->net ? add_ports(fd, LL_NET_CONNECT_TCP, &ports, &err) : 0;
	/*
	 * Files: what the resolver reads (/etc's configuration, the NSS modules
	 * and ld.so.cache, and the folder of the file resolv.conf links to, such
	 * as systemd-resolved's in /run), read-only. A folder missing here is no
	 * error: it holds nothing to read.
	 */
	char resolv[PATH_MAX] = "/etc";
	if (realpath("/etc/resolv.conf", resolv))
		*strrchr(resolv, '/') = '\0';
	const char *const dirs[] = {"/etc", "/usr", "/lib", "/lib64", resolv[0] ? resolv : "/etc"};
	for (size_t i = 0; r == 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int pfd = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			continue;
		struct ll_path_beneath_attr pb = {(LL_FS_READ_FILE | LL_FS_READ_DIR) & f->fs, pfd};
		r = syscall(__NR_landlock_add_rule, fd, LL_RULE_PATH_BENEATH, &pb, 0) < 0 ? -errno
											  : 0;
		close(pfd);
	}
	if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -errno;
	if (r == 0)
		r = landlock_enforce(fd, 0);
	close(fd);
	return r;
}

int landlock_add_path(int ruleset, const struct landlock_features *f, const char *path,
		      unsigned access)
{
	int pfd = path_open_nofollow(path, O_DIRECTORY);
	if (pfd < 0)
		return pfd;
	struct ll_path_beneath_attr pb = {
		access ? landlock_rights(f, access, true) : LL_FS_READ_DIR & f->fs, pfd};
	int r = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0 ? -errno
											   : 0;
	close(pfd);
	return r;
}

uint32_t landlock_log_flags(const struct landlock_features *f)
{
	return f->restrict_flags_ok & LL_RESTRICT_SELF_LOG_NEW_EXEC_ON;
}

int landlock_enforce(int ruleset_fd, uint32_t flags)
{
	if (syscall(__NR_landlock_restrict_self, ruleset_fd, flags) < 0)
		return -errno;
	return 0;
}

void landlock_missing(const struct landlock_features *f, char *buf, size_t cap)
{
	struct strbuf sb;
	strbuf_init(&sb, buf, cap);
	for (unsigned i = 0; i < landlock_feature_count; i++)
		if (landlock_feature_table[i].abi > f->abi)
			strbuf_add(&sb, "%s%s", sb.len ? "," : "", landlock_feature_table[i].name);
}

void landlock_describe(FILE *out, const struct landlock_features *f)
{
	if (f->kernel_abi <= 0)
		fprintf(out, "landlock: not available (%s%s)\n",
			f->kernel_errno == EPERM ? "refused by a seccomp filter: " : "",
			strerror(f->kernel_errno));
	else
		fprintf(out, "landlock: kernel ABI %d, stepbox uses ABI %d%s\n", f->kernel_abi,
			f->abi,
			f->cap >= 0 && f->cap < f->kernel_abi ? " (STEPBOX_LANDLOCK_ABI)" : "");
	for (unsigned i = 0; i < landlock_feature_count; i++) {
		const struct landlock_feature_info *fi = &landlock_feature_table[i];
		const char *state = fi->abi <= f->abi ? "yes"
				    : fi->abi > LANDLOCK_ABI_KNOWN && fi->abi <= f->kernel_abi
					    ? "not used by this stepbox"
					    : "MISSING";
		fprintf(out, "  ABI %d %-10s %-24s %s\n", fi->abi, fi->name, state, fi->what);
	}
}

/* The device mounts found so far: their places, and their file systems. */
struct dev_mounts {
	struct strv *places;
	dev_t devs[64];
	size_t n;
};

/*
 * Whether an overlay's layer is, or lies in, a device mount: by its name,
 * or wherever it leads (a symlink, another bind of /dev), by the file system
 * it is on.
 */
static bool layer_in_dev_mount(const char *layer, const struct dev_mounts *d)
{
	for (size_t i = 0; i < d->places->n; i++)
		if (path_beneath(layer, d->places->v[i]))
			return true;
	struct stat st;
	if (layer[0] != '/' || stat(layer, &st) < 0)
		return false;
	for (size_t i = 0; i < d->n; i++)
		if (st.st_dev == d->devs[i])
			return true;
	return false;
}

/*
 * Whether an overlay's layers (its super options: lowerdir=A:B, lowerdir+=A,
 * upperdir=C) take one from a device mount: lowerdir=/dev shows /dev's nodes
 * through the overlay (red-team pass 3 read /dev/vcs through one). mountinfo
 * gives each value octal-escaped (a comma as \054), and in it a layer's own
 * ':' and ',' are escaped with a backslash, as they were given. A layer is
 * judged by its name and by the file system it leads to (a symlink to /dev);
 * one given relative to the mounter's folder cannot be placed
 * (docs/security.md).
 */
static bool overlay_of_devices(char *super, const struct dev_mounts *devs)
{
	char *save = NULL;
	for (char *opt = strtok_r(super, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(opt, '=');
		if (!eq)
			continue;
		*eq = '\0';
		bool list = strcmp(opt, "lowerdir") == 0;
		if (!list && strcmp(opt, "lowerdir+") != 0 && strcmp(opt, "upperdir") != 0 &&
		    strcmp(opt, "datadir+") != 0)
			continue;
		char *v = eq + 1;
		path_unescape_mountinfo(v);
		/* layers end at an unescaped ':' (lowerdir only); "\x" is x */
		char layer[PATH_MAX];
		size_t n = 0;
		for (const char *c = v;; c++) {
			if (*c == '\\' && c[1]) {
				c++;
			} else if (!*c || (list && *c == ':')) {
				layer[n] = '\0';
				if (n && layer_in_dev_mount(layer, devs))
					return true;
				if (!*c)
					break;
				n = 0;
				continue;
			}
			if (n + 1 < sizeof(layer))
				layer[n++] = *c;
		}
	}
	return false;
}

/*
 * A device file system's own device a container masks files with (runc
 * binds /dev/null over /proc/kcore and the like): every step may read and
 * write it anyway (the baseline's), so it needs no walk of the folder it is
 * bound in. Walking /proc for it froze the grant to the pids it held then
 * (a nested step could not read its own /proc/self).
 */
static bool baseline_device_bind(const struct path_mount *m)
{
	static const char *const harmless[] = {"/null", "/zero", "/full", "/random", "/urandom"};
	if (strcmp(m->fstype, "devtmpfs") != 0 || !m->root)
		return false;
	for (size_t i = 0; i < sizeof(harmless) / sizeof(harmless[0]); i++)
		if (strcmp(m->root, harmless[i]) == 0)
			return true;
	return false;
}

int landlock_dev_mounts(const char *mountinfo, struct strv *out)
{
	/* device file systems first, then overlays of them (of overlays of them) */
	struct dev_mounts found = {.places = out};
	int r = 0;
	for (int pass = 0, added = 1; r == 0 && added && pass < 4; pass++) {
		char *mi = strdup(mountinfo), *save = NULL;
		if (!mi)
			return -ENOMEM;
		added = 0;
		for (char *line = strtok_r(mi, "\n", &save); r == 0 && line;
		     line = strtok_r(NULL, "\n", &save)) {
			struct path_mount m;
			if (!path_mount_fields(line, &m) || !m.fstype || strv_find(out, m.mnt) >= 0)
				continue;
			bool of_devs = pass == 0 ? strcmp(m.fstype, "devtmpfs") == 0 ||
							   strcmp(m.fstype, "devpts") == 0
						 : strcmp(m.fstype, "overlay") == 0 && m.super &&
							   overlay_of_devices(m.super, &found);
			if (!of_devs || baseline_device_bind(&m))
				continue;
			r = strv_push(out, m.mnt);
			added = 1;
			unsigned major, minor;
			if (!m.dev || sscanf(m.dev, "%u:%u", &major, &minor) != 2)
				continue;
			dev_t dev = makedev(major, minor);
			bool known = false;
			for (size_t i = 0; i < found.n; i++)
				known |= found.devs[i] == dev;
			if (!known && found.n < sizeof(found.devs) / sizeof(found.devs[0]))
				found.devs[found.n++] = dev;
		}
		free(mi);
	}
	return r;
}
