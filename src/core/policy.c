#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

void policy_init(struct stepbox_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->backend = BACKEND_AUTO;
	cfg->persist_wait_s = -1;
	cfg->grace_s = POLICY_DEFAULT_GRACE;
}

void policy_release(struct stepbox_config *cfg)
{
	strv_release(&cfg->read_policy);
	strv_release(&cfg->home_policy);
	strv_release(&cfg->write_where);
	strv_release(&cfg->home_flag);
	strv_release(&cfg->read_flag);
	strv_release(&cfg->unix_policy);
	strv_release(&cfg->unix_flag);
	strv_release(&cfg->write_policy);
	strv_release(&cfg->write_flag);
	strv_release(&cfg->env_set);
	strv_release(&cfg->env_unset);
	strv_release(&cfg->env_keep);
	hostrules_free(&cfg->net_hosts);
	hostrules_free(&cfg->net_deny);
	strv_release(&cfg->protect_paths);
	strv_release(&cfg->unprotect);
	free(cfg->workdir);
	free(cfg->persist);
	free(cfg->report_file);
	free(cfg->policy_file);
	memset(cfg, 0, sizeof(*cfg));
}

int policy_parse_long(const char *text, long min, long max, long *out)
{
	if (!text || !*text)
		return -EINVAL;
	long v = 0;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (LONG_MAX - (*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*p - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

bool policy_env_name_ok(const char *name)
{
	if (!name || !*name || (*name >= '0' && *name <= '9'))
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return (size_t)(strchr(name, '\0') - name) < 256;
}

const char *policy_backend_name(enum policy_backend b)
{
	switch (b) {
	case BACKEND_STACKED:
		return "stacked";
	case BACKEND_LANDLOCK:
		return "landlock";
	case BACKEND_MOUNTNS:
		return "mountns";
	case BACKEND_NONE:
		return "none";
	case BACKEND_SEATBELT:
		return "seatbelt";
	case BACKEND_AUTO:
		break;
	}
	return "auto";
}

const char *policy_net_name(enum policy_net n)
{
	return n == NET_NONE ? "none" : n == NET_TCP ? "tcp" : n == NET_HOSTS ? "hosts" : "allow";
}

static bool ports_equal(const struct policy_ports *a, const struct policy_ports *b)
{
	return a->n == b->n && memcmp(a->v, b->v, a->n * sizeof(a->v[0])) == 0;
}

/*
 * Record a network policy; a second one that differs is a contradiction
 * (flags add to a policy file, they never silently override it).
 */
/* A network policy as --net writes it: allow, none, tcp:443,80 (bind:8080). */
static void net_text(enum policy_net net, const struct policy_ports *connect,
		     const struct policy_ports *bind, char *buf, size_t cap)
{
	if (net != NET_TCP) {
		snprintf(buf, cap, "%s", net == NET_HOSTS ? "host:..." : policy_net_name(net));
		return;
	}
	size_t n = (size_t)snprintf(buf, cap, "tcp:");
	for (unsigned i = 0; i < connect->n && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%u", i ? "," : "",
				      (unsigned)connect->v[i]);
	for (unsigned i = 0; i < bind->n && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%u",
				      i ? "," : " bind:", (unsigned)bind->v[i]);
}

int policy_net_merge(struct stepbox_config *cfg, enum policy_net net,
		     const struct policy_ports *connect, const struct policy_ports *bind,
		     struct stepbox_err *err)
{
	if (cfg->net_set && (cfg->net != net || !ports_equal(&cfg->connect_tcp, connect) ||
			     !ports_equal(&cfg->bind_tcp, bind))) {
		char was[160], now[160];
		net_text(cfg->net, &cfg->connect_tcp, &cfg->bind_tcp, was, sizeof(was));
		net_text(net, connect, bind, now, sizeof(now));
		err_set(err, ERR_USAGE, 0, "two network policies asked for: '%s' and '%s'", was,
			now);
		err_hint(err, "give one: a flag adds to the policy file, it never replaces it");
		return -EINVAL;
	}
	cfg->net = net;
	cfg->net_set = true;
	cfg->connect_tcp = *connect;
	cfg->bind_tcp = *bind;
	return 0;
}

int policy_add_hosts(struct stepbox_config *cfg, const char *entries, bool deny,
		     struct stepbox_err *err)
{
	static const struct policy_ports empty;
	int r = deny ? 0 : policy_net_merge(cfg, NET_HOSTS, &empty, &empty, err);
	char entry[512];
	for (const char *p = entries; r == 0;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(entry)) {
			err_set(err, ERR_USAGE, 0, "host list '%s': %s", entries,
				len ? "an entry is too long" : "an empty entry");
			err_hint(err, "write host:NAME[,NAME...], e.g. host:pypi.org,@npm");
			return -EINVAL;
		}
		memcpy(entry, p, len);
		entry[len] = '\0';
		r = hostrules_add(deny ? &cfg->net_deny : &cfg->net_hosts, entry, err);
		if (r < 0)
			err->kind = ERR_USAGE;
		if (!p[len])
			break;
		p += len + 1;
	}
	return r;
}

int policy_add_port(struct policy_ports *p, long port)
{
	if (port < 1 || port > 65535)
		return -ERANGE;
	for (unsigned i = 0; i < p->n; i++)
		if (p->v[i] == port)
			return 0;
	if (p->n >= POLICY_MAX_PORTS)
		return -E2BIG;
	p->v[p->n++] = (unsigned short)port;
	return 0;
}

int policy_set_net(struct stepbox_config *cfg, const char *text, struct stepbox_err *err)
{
	static const struct policy_ports empty;
	if (strcmp(text, "allow") == 0)
		return policy_net_merge(cfg, NET_ALLOW, &empty, &empty, err);
	if (strcmp(text, "none") == 0)
		return policy_net_merge(cfg, NET_NONE, &empty, &empty, err);
	if (strncmp(text, "host:", 5) == 0) {
		int r = policy_add_hosts(cfg, text + 5, false, err);
		if (r < 0 && err->msg[0]) {
			char was[sizeof(err->msg)];
			memcpy(was, err->msg, sizeof(was));
			snprintf(err->msg, sizeof(err->msg), "--net host: %.1000s", was);
		}
		return r;
	}
	if (strncmp(text, "tcp:", 4) != 0 || !text[4])
		goto bad;
	struct policy_ports *connect = calloc(1, sizeof(*connect));
	if (!connect)
		return err_set(err, ERR_USAGE, ENOMEM, "--net");
	char buf[8];
	int r = 0;
	for (const char *p = text + 4; *p && r == 0;) {
		size_t len = strcspn(p, ",");
		long port;
		if (len == 0 || len >= sizeof(buf)) {
			r = -EINVAL;
			break;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		r = policy_parse_long(buf, 1, 65535, &port);
		if (r == 0)
			r = policy_add_port(connect, port);
		p += len + (p[len] == ',');
	}
	if (r == 0)
		r = policy_net_merge(cfg, NET_TCP, connect, &empty, err);
	else
		err_set(err, ERR_USAGE, 0, "--net '%s': a port must be a number from 1 to 65535",
			text);
	free(connect);
	return r;
bad:
	err_set(err, ERR_USAGE, 0, "--net '%s': unknown network mode", text);
	err_hint(err, "use --net allow, --net none, --net tcp:PORT[,PORT...] or "
		      "--net host:NAME[,NAME...]");
	return -EINVAL;
}

/* A control character in a path is always a mistake or an attack on logs. */
const char *policy_path_problem(const char *path)
{
	if (!*path)
		return "must not be empty";
	if (strlen(path) >= PATH_MAX)
		return "is longer than PATH_MAX";
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return "contains a control character";
	return NULL;
}

int policy_abspath(const char *path, const char *what, char **out, struct stepbox_err *err)
{
	const char *why = policy_path_problem(path);
	if (why)
		return err_set(err, ERR_USAGE, 0, "%s %s", what, why);
	if (path[0] == '/') {
		*out = strdup(path);
	} else {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof(cwd)))
			return err_set(err, ERR_USAGE, errno, "cannot resolve relative %s '%s'",
				       what, path);
		*out = strv_fmt("%s/%s", strcmp(cwd, "/") ? cwd : "", path);
		if (*out && strlen(*out) >= PATH_MAX) {
			free(*out);
			return err_set(err, ERR_USAGE, 0, "%s '%s' is longer than PATH_MAX", what,
				       path);
		}
	}
	return *out ? 0 : err_set(err, ERR_USAGE, ENOMEM, "%s", what);
}

int policy_set_backend(struct stepbox_config *cfg, const char *name, struct stepbox_err *err)
{
	enum policy_backend b;
	if (strcmp(name, "auto") == 0)
		b = BACKEND_AUTO;
	else if (strcmp(name, "stacked") == 0)
		b = BACKEND_STACKED;
	else if (strcmp(name, "landlock") == 0)
		b = BACKEND_LANDLOCK;
	else if (strcmp(name, "none") == 0)
		b = BACKEND_NONE;
	else if (strcmp(name, "mountns") == 0)
		b = BACKEND_MOUNTNS;
	else if (strcmp(name, "seatbelt") == 0)
		b = BACKEND_SEATBELT;
	else {
		err_set(err, ERR_USAGE, 0, "unknown backend '%s'", name);
		err_hint(err, "choose one of: auto, stacked, landlock, mountns, seatbelt, none");
		return -EINVAL;
	}
	/* auto asks for nothing: it gives way to a backend asked for elsewhere */
	if (b == BACKEND_AUTO)
		return 0;
	if (cfg->backend_set && cfg->backend != b)
		return err_set(err, ERR_USAGE, 0, "two backends asked for: '%s' and '%s'",
			       policy_backend_name(cfg->backend), name);
	cfg->backend = b;
	cfg->backend_set = true;
	return 0;
}

int policy_set_seconds(long *out, const char *flag, const char *text, struct stepbox_err *err)
{
	long v;
	if (policy_parse_long(text, 0, POLICY_MAX_TIMEOUT, &v) < 0)
		return err_set(err, ERR_USAGE, 0,
			       "%s '%s' is not a whole number of seconds from 0 to %ld", flag, text,
			       POLICY_MAX_TIMEOUT);
	*out = v;
	return 0;
}

int policy_set_timeout(struct stepbox_config *cfg, const char *text, struct stepbox_err *err)
{
	long v;
	if (policy_parse_long(text, 1, POLICY_MAX_TIMEOUT, &v) < 0)
		return err_set(err, ERR_USAGE, 0,
			       "--timeout '%s' is not a whole number of seconds from 1 to %ld",
			       text, POLICY_MAX_TIMEOUT);
	cfg->timeout_s = v;
	return 0;
}

/* Add NAME=VALUE to env_set; the same name with another value is a conflict. */
int policy_env_set(struct stepbox_config *cfg, const char *name, const char *value,
		   struct stepbox_err *err)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < cfg->env_set.n; i++) {
		const char *e = cfg->env_set.v[i];
		if (strncmp(e, name, nl) == 0 && e[nl] == '=') {
			if (strcmp(e + nl + 1, value) == 0)
				return 0;
			return err_set(err, ERR_USAGE, 0,
				       "variable '%s' is set twice, to '%s' and to '%s'", name,
				       e + nl + 1, value);
		}
	}
	if (cfg->env_set.n >= POLICY_MAX_ENV)
		return err_set(err, ERR_USAGE, 0, "more than %d variables set", POLICY_MAX_ENV);
	int r = strv_push_owned(&cfg->env_set, strv_fmt("%s=%s", name, value));
	return r < 0 ? err_set(err, ERR_USAGE, -r, "cannot set '%s'", name) : 0;
}

int policy_add_env(struct stepbox_config *cfg, const char *assignment, struct stepbox_err *err)
{
	const char *eq = strchr(assignment, '=');
	char name[256];
	size_t nl = eq ? (size_t)(eq - assignment) : strlen(assignment);
	if (nl >= sizeof(name))
		return err_set(err, ERR_USAGE, 0, "--env: variable name too long");
	memcpy(name, assignment, nl);
	name[nl] = '\0';
	if (!policy_env_name_ok(name))
		return err_set(err, ERR_USAGE, 0, "--env '%s': '%s' is not a valid variable name",
			       assignment, name);
	if (!eq) /* --env NAME: keep the inherited value, even if it looks secret */
		return strv_find(&cfg->env_keep, name) >= 0 ? 0 : strv_push(&cfg->env_keep, name);
	return policy_env_set(cfg, name, eq + 1, err);
}

bool policy_home_file_ok(const char *name)
{
	if (!name[0] || name[0] == '/' || strlen(name) >= 4096)
		return false;
	for (const char *p = name; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += len;
		p += *p == '/';
	}
	return true;
}
