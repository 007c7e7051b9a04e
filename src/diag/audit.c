#include "audit.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/netlink.h>

#ifndef AUDIT_LANDLOCK_ACCESS
#define AUDIT_LANDLOCK_ACCESS 1423
#define AUDIT_LANDLOCK_DOMAIN 1424
#endif

#define MAX_RECORDS 20000

struct record {
	int type;
	unsigned long serial;
	double when; /* the event's time, moved to CLOCK_MONOTONIC (denial.h) */
	char *text;
};

/* One request on a unicast socket; for AUDIT_GET the status comes back. */
static int request(int type, const void *payload, size_t len, struct audit_status *status)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct {
		struct nlmsghdr h;
		char body[sizeof(struct audit_status)];
	} msg;
	memset(&msg, 0, sizeof(msg));
	msg.h.nlmsg_len = NLMSG_LENGTH(len);
	msg.h.nlmsg_type = (uint16_t)type;
	msg.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	msg.h.nlmsg_seq = 1;
	memcpy(msg.body, payload, len);
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	int r = 0;
	if (sendto(fd, &msg, msg.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		r = -errno;
	for (int i = 0; r == 0 && i < 2; i++) { /* an ACK, and for AUDIT_GET the reply */
		char buf[8192];
		struct pollfd p = {fd, POLLIN, 0};
		if (poll(&p, 1, 1000) <= 0) {
			r = status ? -ETIMEDOUT : 0;
			break;
		}
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < (ssize_t)sizeof(struct nlmsghdr)) {
			r = -EIO;
			break;
		}
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		if (h->nlmsg_type == NLMSG_ERROR) {
			int e = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (e)
				r = e;
			else if (!status)
				break;
			continue;
		}
		if (status && h->nlmsg_type == AUDIT_GET) {
			memcpy(status, NLMSG_DATA(h), sizeof(*status));
			break;
		}
	}
	close(fd);
	return r;
}

static int set_enabled(int enabled)
{
	struct audit_status s;
	memset(&s, 0, sizeof(s));
	s.mask = AUDIT_STATUS_ENABLED;
	s.enabled = (uint32_t)enabled;
	return request(AUDIT_SET, &s, sizeof(s), NULL);
}

bool audit_prepare(struct audit *a, bool enable)
{
	a->fd = -1;
	a->was_enabled = -1;
	a->why[0] = '\0';
	struct audit_status st;
	memset(&st, 0, sizeof(st));
	int r = request(AUDIT_GET, NULL, 0, &st);
	if (r < 0) {
		snprintf(a->why, sizeof(a->why), "the audit subsystem cannot be queried (%s)",
			 strerror(-r));
		return false;
	}
	if (!st.enabled) {
		if (!enable) {
			snprintf(a->why, sizeof(a->why),
				 "audit is disabled here (add --enable-audit to turn it on for "
				 "this run)");
			return false;
		}
		if ((r = set_enabled(1)) < 0) {
			snprintf(a->why, sizeof(a->why), "audit could not be enabled (%s)",
				 strerror(-r));
			return false;
		}
		a->was_enabled = 0;
	}
	a->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	struct sockaddr_nl group = {.nl_family = AF_NETLINK, .nl_groups = 1 /* READLOG */};
	if (a->fd < 0 || bind(a->fd, (struct sockaddr *)&group, sizeof(group)) < 0) {
		snprintf(a->why, sizeof(a->why),
			 "audit records cannot be read (%s: needs "
			 "CAP_AUDIT_READ)",
			 strerror(errno));
		audit_release(a);
		return false;
	}
	/* records queue here for the whole run: make room (root may force it) */
	int size = 16 << 20;
	if (setsockopt(a->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(a->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return true;
}

void audit_release(struct audit *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->was_enabled >= 0)
		set_enabled(a->was_enabled);
	a->was_enabled = -1;
}

/*
 * The value of key= in an audit record. Untrusted strings (path, comm, exe)
 * come quoted, or hex-encoded when they hold unusual bytes; numbers and
 * kernel words come as they are (a pid of 5994 is not hex).
 */
bool audit_field(const char *text, const char *key, char *out, size_t cap)
{
	bool untrusted = !strcmp(key, "path") || !strcmp(key, "comm") || !strcmp(key, "exe");
	size_t kl = strlen(key);
	for (const char *p = text; (p = strstr(p, key)); p++) {
		if ((p != text && p[-1] != ' ') || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t k = 0;
		if (*v == '"') {
			for (v++; *v && *v != '"' && k + 1 < cap; v++)
				out[k++] = *v;
		} else {
			size_t len = strcspn(v, " ");
			bool hex =
				untrusted && len % 2 == 0 && strspn(v, "0123456789ABCDEF") >= len;
			for (size_t i = 0; i < len && k + 1 < cap; i += hex ? 2 : 1) {
				unsigned c = (unsigned char)v[i];
				if (hex)
					sscanf(v + i, "%2x", &c);
				out[k++] = (char)c;
			}
		}
		out[k] = '\0';
		return true;
	}
	return false;
}

static const struct {
	const char *blocker;
	enum denial_op op;
} blockers[] = {
	{"fs.execute", OP_EXECUTE},      {"fs.write_file", OP_WRITE},
	{"fs.read_file", OP_READ},       {"fs.read_dir", OP_READ},
	{"fs.remove_dir", OP_DELETE},    {"fs.remove_file", OP_DELETE},
	{"fs.make_", OP_CREATE},         {"fs.refer", OP_RENAME},
	{"fs.truncate", OP_TRUNCATE},    {"fs.ioctl_dev", OP_WRITE},
	{"net.connect_tcp", OP_CONNECT}, {"net.bind_tcp", OP_BIND},
	{"scope.signal", OP_SIGNAL},     {"scope.abstract_unix_socket", OP_CONNECT},
};

static void add_denial(struct explain *x, const struct record *r, const struct record *sys)
{
	const char *text = r->text;
	char b[128], path[4096] = "", v[64] = "", comm[16] = "";
	if (!audit_field(text, "blockers", b, sizeof(b)))
		return;
	enum denial_op op = OP_READ;
	for (size_t i = 0; i < sizeof(blockers) / sizeof(blockers[0]); i++)
		if (!strncmp(b, blockers[i].blocker, strlen(blockers[i].blocker))) {
			op = blockers[i].op;
			break;
		}
	int port = -1;
	pid_t pid = 0;
	audit_field(text, "path", path, sizeof(path));
	if (op == OP_CONNECT || op == OP_BIND) {
		/* "daddr=127.0.0.1 dest=8080" for a connect, "src=8080" for a bind */
		if (audit_field(text, op == OP_CONNECT ? "dest" : "src", v, sizeof(v)) ||
		    audit_field(text, "dest", v, sizeof(v)) ||
		    audit_field(text, "src", v, sizeof(v)))
			port = (int)strtol(v, NULL, 10);
	} else if (op == OP_SIGNAL && audit_field(text, "opid", v, sizeof(v))) {
		port = (int)strtol(v, NULL, 10);
	}
	if (sys) {
		if (audit_field(sys->text, "pid", v, sizeof(v)))
			pid = (pid_t)strtol(v, NULL, 10);
		audit_field(sys->text, "comm", comm, sizeof(comm));
	}
	explain_add(x, op, comm, pid, path[0] ? path : NULL, port, r->when);
}

static void parse(struct record *r, const char *msg)
{
	/* "audit(SECONDS.MS:SERIAL): text", the time on the wall clock */
	const char *open = strchr(msg, '(');
	struct timespec wall, mono;
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	double at = open ? strtod(open + 1, NULL) : 0;
	r->when = at > 0 ? at - ((double)wall.tv_sec + (double)wall.tv_nsec / 1e9) +
				   ((double)mono.tv_sec + (double)mono.tv_nsec / 1e9)
			 : 0;
	const char *colon = strchr(msg, ':');
	const char *close = colon ? strstr(colon, "): ") : NULL;
	r->serial = colon ? strtoul(colon + 1, NULL, 10) : 0;
	r->text = strdup(close ? close + 3 : msg);
}

/* Whether record i (a domain's "deallocated") ends the run: its domain was allocated for creator.
 */
static bool ends_run(const struct record *rec, size_t i, pid_t creator)
{
	char v[64];
	if (rec[i].type != AUDIT_LANDLOCK_DOMAIN || !strstr(rec[i].text, "status=deallocated") ||
	    !audit_field(rec[i].text, "domain", v, sizeof(v)))
		return false;
	/* ours when an earlier record allocated it for our child */
	for (size_t k = 0; k < i; k++) {
		char d[64], pid[32];
		if (rec[k].type == AUDIT_LANDLOCK_DOMAIN &&
		    strstr(rec[k].text, "status=allocated") &&
		    audit_field(rec[k].text, "domain", d, sizeof(d)) && !strcmp(d, v) &&
		    audit_field(rec[k].text, "pid", pid, sizeof(pid)) &&
		    strtol(pid, NULL, 10) == creator)
			return true;
	}
	return false;
}

/*
 * Read records until the run is complete: kauditd delivers asynchronously. A
 * domain's "deallocated" record comes after all of its denials: once ours has
 * come, the run is complete; a run with no denial has no record at all, so a
 * short quiet spell ends it too. The number of records read.
 */
static size_t read_records(struct audit *a, pid_t creator, struct record *rec, struct explain *x)
{
	size_t n = 0;
	bool complete = false;
	for (int idle = 0; !complete && idle < 2 && n < MAX_RECORDS;) {
		struct pollfd p = {a->fd, POLLIN, 0};
		if (poll(&p, 1, 50) <= 0) {
			idle++;
			continue;
		}
		char buf[65536];
		ssize_t len = recv(a->fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (len < (ssize_t)sizeof(struct nlmsghdr)) {
			if (len < 0 && errno == ENOBUFS)
				x->omitted++; /* the queue overflowed: some records were lost */
			continue;
		}
		buf[len] = '\0';
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		int type = h->nlmsg_type;
		if (type != AUDIT_LANDLOCK_ACCESS && type != AUDIT_LANDLOCK_DOMAIN &&
		    type != AUDIT_SYSCALL)
			continue;
		size_t body = h->nlmsg_len >= NLMSG_HDRLEN && h->nlmsg_len <= (size_t)len
				      ? h->nlmsg_len - NLMSG_HDRLEN
				      : (size_t)len - NLMSG_HDRLEN;
		char *msg = (char *)NLMSG_DATA(h);
		msg[body] = '\0';
		rec[n].type = type;
		parse(&rec[n], msg);
		if (!rec[n].text)
			continue;
		complete = ends_run(rec, n, creator);
		n++;
	}
	return n;
}

void audit_collect(struct audit *a, pid_t creator, struct explain *x)
{
	if (a->fd < 0)
		return;
	struct record *rec = calloc(MAX_RECORDS, sizeof(*rec));
	size_t n = rec ? read_records(a, creator, rec, x) : 0;
	/* this run's domains: allocated by our child */
	char ours[64][32], v[64];
	size_t nours = 0;
	for (size_t i = 0; i < n && nours < 64; i++)
		if (rec[i].type == AUDIT_LANDLOCK_DOMAIN &&
		    strstr(rec[i].text, "status=allocated") &&
		    audit_field(rec[i].text, "pid", v, sizeof(v)) &&
		    strtol(v, NULL, 10) == creator &&
		    audit_field(rec[i].text, "domain", ours[nours], sizeof(ours[0])))
			nours++;
	for (size_t i = 0; i < n; i++) {
		if (rec[i].type != AUDIT_LANDLOCK_ACCESS ||
		    !audit_field(rec[i].text, "domain", v, sizeof(v)))
			continue;
		bool mine = false;
		for (size_t k = 0; k < nours; k++)
			mine |= !strcmp(ours[k], v);
		if (!mine)
			continue;
		const struct record *sys = NULL;
		for (size_t k = 0; k < n && !sys; k++)
			if (rec[k].type == AUDIT_SYSCALL && rec[k].serial == rec[i].serial)
				sys = &rec[k];
		add_denial(x, &rec[i], sys);
	}
	for (size_t i = 0; i < n; i++)
		free(rec[i].text);
	free(rec);
}
