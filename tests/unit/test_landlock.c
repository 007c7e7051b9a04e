#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostrule.h"
#include "landlock.h"
#include "path.h"
#include "strv.h"
#include "tap.h"

#define FS_V1 ((1ULL << 13) - 1)
#define REFER (1ULL << 13)
#define TRUNCATE (1ULL << 14)
#define IOCTL_DEV (1ULL << 15)

static struct landlock_features at(int abi)
{
	struct landlock_features f = {0};
	f.kernel_abi = f.abi = abi;
	landlock_degrade(&f);
	return f;
}

static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/*
 * landlock_build on this kernel: 300 folder and file grants (more than one
 * batch of held descriptors, around a descriptor that is not the build's),
 * every descriptor closed after, and the rules enforced: a granted folder
 * and file read, an ungranted file refused.
 */
static void build_real(void)
{
	struct landlock_features f;
	if (landlock_probe(&f, NULL, NULL) < 0 || f.abi <= 0) {
		printf("ok %d - # SKIP this kernel has no Landlock\n", ++tap_count);
		return;
	}
	char root[] = "/tmp/stepbox-ll.XXXXXX", p[300][64];
	if (!mkdtemp(root))
		return;
	struct grants g = {0};
	g.v = calloc(300, sizeof(*g.v));
	for (int i = 0; i < 300; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/%d", root, i);
		if (i % 3)
			mkdir(p[i], 0755);
		else
			close(open(p[i], O_WRONLY | O_CREAT, 0644)); /* a file grant */
		g.v[g.n++] = (struct grant){.path = p[i],
					    .requested = p[i],
					    .access = GRANT_READ,
					    .origin = ORIGIN_POLICY,
					    .exists = true};
	}
	char out[80];
	snprintf(out, sizeof(out), "%s/outside", root);
	close(open(out, O_WRONLY | O_CREAT, 0644));
	int hole = open("/dev/null", O_RDONLY | O_CLOEXEC), before = open_fds();
	struct stepbox_config cfg;
	policy_init(&cfg);
	struct landlock_tcp tcp = {false, NULL, NULL};
	int fd = landlock_build(&f, &g, &cfg, &tcp, NULL);
	CHECK(fd >= 0);
	CHECK(open_fds() == before + 1); /* the ruleset, nothing else left open */
	close(hole);
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (landlock_enforce(fd, 0) < 0)
			_exit(1);
		char inner[80];
		snprintf(inner, sizeof(inner), "%s/1/.", root);
		int a = open(inner, O_RDONLY | O_DIRECTORY), b = open(p[3], O_RDONLY),
		    c = open(out, O_RDONLY);
		_exit(a < 0 ? 2 : b < 0 ? 3 : c >= 0 ? 4 : 0);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		printf("# child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
	free(g.v);
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
}

/*
 * The device mounts, from mountinfo's text: a chroot's bind of /dev with a
 * space in its name (escaped), a devpts, and a mount whose source (anyone's
 * text) reads like a device file system's fields.
 */
static void dev_mounts(void)
{
	const char *mi =
		"22 1 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw,size=1k\n"
		"23 22 0:20 / /dev/pts rw,nosuid - devpts devpts rw,mode=620\n"
		"30 1 8:1 / / rw,relatime shared:1 master:3 - ext4 /dev/vda1 rw\n"
		"40 1 0:5 / /srv/my\\040chroot/dev rw - devtmpfs udev rw\n"
		"41 1 0:44 / /mnt/x rw - fuse.x a - devtmpfs b rw\n"
		"42 1 0:45 / /mnt/cut\n"
		/* an overlay of an overlay of /dev, and one of an ordinary folder */
		"51 1 0:47 / /srv/ov2 rw - overlay overlay rw,lowerdir+=/srv/ov/pts,lowerdir+=/e\n"
		"50 1 0:46 / /srv/ov rw - overlay overlay ro,lowerdir=/dev:/srv/e,redirect_dir=on\n"
		"52 1 0:48 / /var/lib/docker/m rw - overlay overlay rw,lowerdir=/var/l1:/var/l2,"
		"upperdir=/var/u,workdir=/var/w\n"
		/* /dev bound at "/srv/a,b:c d", an overlay of it with the layer's ',' and
		 * ':' escaped as given, then octal-escaped by mountinfo */
		/* a container's masks: /dev/null bound over /proc files; a disk is not one */
		"70 1 0:5 /null /proc/kcore ro - devtmpfs udev rw\n"
		"71 1 0:5 /zero /proc/keys ro - devtmpfs udev rw\n"
		"60 1 0:5 / /srv/a,b:c\\040d rw - devtmpfs udev rw\n"
		"61 1 0:49 / /srv/esc rw - overlay overlay rw,lowerdir=/srv/a\\134\\054b\\134:c"
		"\\040d:/e,redirect_dir=on\n";
	struct strv v = STRV_INIT;
	CHECK(landlock_dev_mounts(mi, &v) == 0 && v.n == 7);
	CHECK(v.n == 7 && !strcmp(v.v[0], "/dev") && !strcmp(v.v[1], "/dev/pts") &&
	      !strcmp(v.v[2], "/srv/my chroot/dev") && !strcmp(v.v[3], "/srv/a,b:c d") &&
	      !strcmp(v.v[4], "/srv/ov") && !strcmp(v.v[5], "/srv/esc") &&
	      !strcmp(v.v[6], "/srv/ov2"));
	strv_release(&v);
	/* a layer that is a symlink to /dev: judged by the file system it leads to */
	struct stat dev;
	char link[] = "/tmp/stepbox-devlink-XXXXXX", text[512];
	if (stat("/dev", &dev) == 0 && mkdtemp(link)) {
		char at[64];
		snprintf(at, sizeof(at), "%s/d", link);
		CHECK(symlink("/dev", at) == 0);
		snprintf(text, sizeof(text),
			 "22 1 %u:%u / /dev rw - devtmpfs udev rw\n"
			 "70 1 0:50 / /srv/lnk rw - overlay overlay ro,lowerdir=%s:/e\n",
			 major(dev.st_dev), minor(dev.st_dev), at);
		CHECK(landlock_dev_mounts(text, &v) == 0 && v.n == 2 &&
		      !strcmp(v.v[1], "/srv/lnk"));
		strv_release(&v);
		unlink(at);
		rmdir(link);
	}
	char line[] = "36 35 98:0 /mnt1 /mnt\\0402 rw,noatime master:1 - ext3 /dev/root rw\n";
	struct path_mount m;
	CHECK(path_mount_fields(line, &m) && !strcmp(m.id, "36") && !strcmp(m.parent, "35"));
	CHECK(!strcmp(m.root, "/mnt1") && !strcmp(m.mnt, "/mnt 2") &&
	      !strcmp(m.opts, "rw,noatime"));
	CHECK(!strcmp(m.fstype, "ext3") && !strcmp(m.source, "/dev/root") &&
	      !strcmp(m.super, "rw"));
	char short_line[] = "36 35 98:0 /";
	CHECK(!path_mount_fields(short_line, &m));
}

/* A loopback listener's port, or 0. */
static unsigned short listen_lo(int *fd)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || bind(*fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(*fd, 4) < 0 ||
	    getsockname(*fd, (struct sockaddr *)&a, &l) < 0)
		return 0;
	return ntohs(a.sin_port);
}

static int connect_lo(unsigned short port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : -errno;
	if (s >= 0)
		close(s);
	return r;
}

/*
 * The proxy's own confinement: the resolver's files read, nothing else
 * (here: a file of this test's, readable outside); TCP to the hosts' ports
 * and to none other (two loopback listeners: one listed, one not); nothing
 * written. Each refusal beside its positive control.
 */
static void proxy_confined(void)
{
	struct landlock_features f;
	if (landlock_probe(&f, NULL, NULL) < 0 || f.abi < 4) {
		printf("ok %d - # SKIP no Landlock network rules here\n", ++tap_count);
		return;
	}
	char dir[] = "/var/tmp/stepbox-px.XXXXXX", file[80];
	if (!mkdtemp(dir))
		return;
	snprintf(file, sizeof(file), "%s/secret", dir);
	close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	int l1, l2;
	unsigned short listed = listen_lo(&l1), other = listen_lo(&l2);
	char entry[32];
	snprintf(entry, sizeof(entry), "127.0.0.1:%u", listed);
	struct hostrules allow = {0};
	struct stepbox_err err = {0};
	CHECK(listed && other && hostrules_add(&allow, entry, &err) == 0);
	CHECK(connect_lo(other) == 0 && open(file, O_RDONLY | O_CLOEXEC) >= 0); /* before */
	pid_t pid = fork();
	if (pid == 0) {
		struct landlock_proxy lp = {&f, &allow};
		if (landlock_confine_proxy(&lp) < 0)
			_exit(10);
		int hosts = open("/etc/hosts", O_RDONLY | O_CLOEXEC);
		if (hosts < 0)
			_exit(11); /* the resolver's own file */
		if (open(file, O_RDONLY | O_CLOEXEC) >= 0 || errno != EACCES)
			_exit(12);
		if (open("/etc/stepbox-never", O_WRONLY | O_CREAT | O_CLOEXEC, 0644) >= 0)
			_exit(13);
		if (connect_lo(listed) != 0)
			_exit(14);
		if (connect_lo(other) != -EACCES)
			_exit(15);
		_exit(0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("# the confined child exited %d\n", WEXITSTATUS(status));
	hostrules_free(&allow);
	close(l1);
	close(l2);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	dev_mounts();
	struct landlock_features f = at(1);
	CHECK(f.fs == FS_V1 && f.net == 0 && f.scoped == 0);
	f = at(2);
	CHECK(f.fs == (FS_V1 | REFER));
	f = at(3);
	CHECK(f.fs == (FS_V1 | REFER | TRUNCATE) && f.net == 0);
	f = at(4);
	CHECK(f.net == 3 && !(f.fs & IOCTL_DEV));
	f = at(5);
	CHECK((f.fs & IOCTL_DEV) && f.scoped == 0);
	f = at(6);
	CHECK(f.scoped == 3 && f.restrict_flags_ok == 0);
	f = at(7);
	CHECK(f.restrict_flags_ok != 0);
	f = at(9); /* newer than stepbox knows: what 7 gives */
	struct landlock_features seven = at(7);
	CHECK(f.fs == seven.fs && f.scoped == seven.scoped);
	f = at(0);
	CHECK(f.fs == 0 && f.net == 0);

	/* rights: file rules carry file rights only, or the kernel says EINVAL */
	f = at(7);
	uint64_t dir = landlock_rights(&f, GRANT_READ | GRANT_WRITE | GRANT_EXEC, true);
	uint64_t file = landlock_rights(&f, GRANT_READ | GRANT_WRITE | GRANT_EXEC, false);
	CHECK(dir & REFER);
	CHECK(!(file & REFER) && (file & TRUNCATE) && (file & 1));
	CHECK(!(landlock_rights(&f, GRANT_READ, true) & (1ULL << 0))); /* no execute */
	CHECK(!(landlock_rights(&f, GRANT_WRITE, true) & ((1ULL << 6) | (1ULL << 11))));
	CHECK(landlock_rights(&f, GRANT_DEV, false) == IOCTL_DEV);
	f = at(1);
	CHECK(!(landlock_rights(&f, GRANT_WRITE, true) & (REFER | TRUNCATE)));

	/* the cap */
	struct stepbox_err err = {0};
	CHECK(landlock_probe(&f, "3", &err) == 0);
	CHECK(f.abi <= 3 && f.cap == 3);
	CHECK(landlock_probe(&f, "0", &err) == 0 && f.abi == 0);
	CHECK(landlock_probe(&f, "x", &err) < 0);
	CHECK_HAS(err.msg, "STEPBOX_LANDLOCK_ABI");
	CHECK(landlock_probe(&f, "100", &err) < 0);
	char buf[128];
	f = at(5);
	landlock_missing(&f, buf, sizeof(buf));
	CHECK_STR(buf, "scope,audit-log,tsync,unix-path");
	build_real();
	proxy_confined();
	return tap_done();
}
