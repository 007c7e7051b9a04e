/* policyfile: see policyfile.h. */
#include "policyfile.h"

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
#include "protect.h"

/*
 * jansson validates and parses but keeps no source positions, so errors about
 * a value (not about syntax) locate it with this walk over the text jansson
 * already accepted. Positions count lines and UTF-8 characters from 1, as
 * jansson's own syntax errors do. The target is a path like "env/set/FOO" or
 * "write_paths/2"; for an object member the key's position is reported.
 */
struct jwalk {
	const char *s;
	size_t n, i;
	unsigned line, col;
	const char *target;
	unsigned fline, fcol;
	bool found;
};

static void jw_adv(struct jwalk *w)
{
	if (w->i >= w->n)
		return;
	unsigned char c = (unsigned char)w->s[w->i++];
	if (c == '\n') {
		w->line++;
		w->col = 1;
	} else if ((c & 0xc0) != 0x80) {
		w->col++;
	}
}

static void jw_ws(struct jwalk *w)
{
	while (w->i < w->n && strchr(" \t\r\n", w->s[w->i]))
		jw_adv(w);
}

static void jw_mark(struct jwalk *w, const char *path, unsigned line, unsigned col)
{
	if (!w->found && strcmp(path, w->target) == 0) {
		w->found = true;
		w->fline = line;
		w->fcol = col;
	}
}

/* Copies the raw (still escaped) text of a string into buf, truncated. */
static void jw_string(struct jwalk *w, char *buf, size_t cap)
{
	size_t k = 0;
	jw_adv(w); /* opening quote */
	while (w->i < w->n && w->s[w->i] != '"') {
		if (w->s[w->i] == '\\') {
			jw_adv(w);
			if (k + 1 < cap)
				buf[k++] = '\\';
		}
		if (k + 1 < cap)
			buf[k++] = w->s[w->i];
		jw_adv(w);
	}
	jw_adv(w);
	buf[k] = '\0';
}

static void jw_value(struct jwalk *w, const char *path, int depth)
{
	jw_ws(w);
	jw_mark(w, path, w->line, w->col);
	if (w->i >= w->n || depth > 32)
		return;
	char c = w->s[w->i];
	if (c == '"') {
		char dummy[8];
		jw_string(w, dummy, sizeof(dummy));
	} else if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		long index = 0;
		jw_adv(w);
		for (;;) {
			jw_ws(w);
			if (w->i >= w->n || w->s[w->i] == close) {
				jw_adv(w);
				return;
			}
			char child[512];
			if (c == '{') {
				char key[256];
				unsigned kl = w->line, kc = w->col;
				jw_string(w, key, sizeof(key));
				snprintf(child, sizeof(child), "%s%s%s", path, *path ? "/" : "",
					 key);
				jw_mark(w, child, kl, kc);
				jw_ws(w);
				jw_adv(w); /* ':' */
			} else {
				snprintf(child, sizeof(child), "%s%s%ld", path, *path ? "/" : "",
					 index++);
			}
			jw_value(w, child, depth + 1);
			jw_ws(w);
			if (w->i < w->n && w->s[w->i] == ',')
				jw_adv(w);
		}
	} else {
		while (w->i < w->n && !strchr(",]} \t\r\n", w->s[w->i]))
			jw_adv(w);
	}
}

struct loader {
	struct stepbox_config *cfg;
	const char *name; /* file name for messages */
	const char *text;
	size_t len;
	struct stepbox_err *err;
};

/* Error about the value at path; shown as key[index] for readability. */
__attribute__((format(printf, 3, 4))) static int bad(struct loader *ld, const char *path,
						     const char *fmt, ...)
{
	struct jwalk w = {ld->text, ld->len, 0, 1, 1, path, 1, 1, false};
	jw_value(&w, "", 0);
	char shown[512], msg[768];
	size_t k = 0;
	int brackets = 0;
	for (const char *p = path; *p && k + 2 < sizeof(shown); p++) {
		if (*p == '/') {
			bool num = p[1] >= '0' && p[1] <= '9';
			shown[k++] = num ? '[' : '.';
			brackets += num;
		} else {
			shown[k++] = *p;
		}
	}
	/* indices are the last component whenever they occur */
	while (brackets-- > 0 && k + 1 < sizeof(shown))
		shown[k++] = ']';
	shown[k] = '\0';
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(ld->err, ERR_USAGE, 0, "policy '%s', line %u, column %u: %s: %s", ld->name,
		       w.fline, w.fcol, shown, msg);
}

static int get_path(struct loader *ld, const char *key, json_t *v, char **out)
{
	if (!json_is_string(v))
		return bad(ld, key, "must be a string (an absolute path)");
	const char *s = json_string_value(v);
	const char *why = policy_path_problem(s);
	if (why)
		return bad(ld, key, "%s", why);
	if (s[0] != '/')
		return bad(ld, key, "must be an absolute path, got '%s'", s);
	*out = strdup(s);
	return *out ? 0 : err_set(ld->err, ERR_USAGE, ENOMEM, "policy");
}

static int set_path_once(struct loader *ld, const char *key, json_t *v, char **slot)
{
	char *p = NULL;
	int r = get_path(ld, key, v, &p);
	if (r < 0)
		return r;
	if (*slot && strcmp(*slot, p) != 0) {
		r = bad(ld, key, "'%s' contradicts '%s' given on the command line", p, *slot);
		free(p);
		return r;
	}
	free(*slot);
	*slot = p;
	return 0;
}

/* Where the value at path lies: "policy 'NAME', line L, column C: key[i]". */
static char *locate(struct loader *ld, const char *path, const char *shown)
{
	struct jwalk w = {ld->text, ld->len, 0, 1, 1, path, 1, 1, false};
	jw_value(&w, "", 0);
	return strv_fmt("policy '%s', line %u, column %u: %s", ld->name, w.fline, w.fcol, shown);
}

static int get_paths(struct loader *ld, const char *key, json_t *v, struct strv *out)
{
	if (!json_is_array(v))
		return bad(ld, key, "must be an array of absolute paths");
	if (json_array_size(v) > POLICY_MAX_PATHS)
		return bad(ld, key, "has %zu paths; at most %d are allowed", json_array_size(v),
			   POLICY_MAX_PATHS);
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		char sub[64], *p = NULL;
		snprintf(sub, sizeof(sub), "%s/%zu", key, i);
		int r = get_path(ld, sub, e, &p);
		if (r < 0)
			return r;
		r = strv_push_owned(out, p);
		/* a write path must exist: its message says where the policy named it */
		if (r == 0 && out == &ld->cfg->write_policy) {
			char shown[64];
			snprintf(shown, sizeof(shown), "%s[%zu]", key, i);
			r = strv_push_owned(&ld->cfg->write_where, locate(ld, sub, shown));
		}
		if (r < 0)
			return err_set(ld->err, ERR_USAGE, -r, "policy");
	}
	return 0;
}

static int get_home_files(struct loader *ld, const char *key, json_t *v, struct strv *out)
{
	if (!json_is_array(v) || json_array_size(v) > POLICY_MAX_PATHS)
		return bad(ld, key, "must be an array of at most %d paths relative to HOME",
			   POLICY_MAX_PATHS);
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		char sub[64];
		snprintf(sub, sizeof(sub), "%s/%zu", key, i);
		if (!json_is_string(e) || !policy_home_file_ok(json_string_value(e)))
			return bad(ld, sub,
				   "must be a path relative to HOME, without '..' "
				   "(\".gitconfig\", \".ssh/config\")");
		if (strv_push(out, json_string_value(e)) < 0)
			return err_set(ld->err, ERR_USAGE, ENOMEM, "policy");
	}
	return 0;
}

static int get_names(struct loader *ld, const char *key, json_t *v, struct strv *out)
{
	if (!json_is_array(v))
		return bad(ld, key, "must be an array of variable names");
	if (json_array_size(v) > POLICY_MAX_ENV)
		return bad(ld, key, "has more than %d names", POLICY_MAX_ENV);
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		char sub[64];
		snprintf(sub, sizeof(sub), "%s/%zu", key, i);
		if (!json_is_string(e) || !policy_env_name_ok(json_string_value(e)))
			return bad(ld, sub, "must be a variable name ([A-Za-z_][A-Za-z0-9_]*)");
		if (strv_find(out, json_string_value(e)) < 0 &&
		    strv_push(out, json_string_value(e)) < 0)
			return err_set(ld->err, ERR_USAGE, ENOMEM, "policy");
	}
	return 0;
}

static int load_env(struct loader *ld, json_t *env)
{
	if (!json_is_object(env))
		return bad(ld, "env", "must be an object with keys set, unset, clean, keep");
	const char *key;
	json_t *v;
	json_object_foreach(env, key, v)
	{
		char sub[300];
		snprintf(sub, sizeof(sub), "env/%s", key);
		int r = 0;
		if (strcmp(key, "set") == 0) {
			if (!json_is_object(v))
				return bad(ld, sub, "must be an object of NAME: \"value\"");
			if (json_object_size(v) > POLICY_MAX_ENV)
				return bad(ld, sub, "has more than %d variables", POLICY_MAX_ENV);
			const char *name;
			json_t *val;
			json_object_foreach(v, name, val)
			{
				char vsub[600];
				snprintf(vsub, sizeof(vsub), "env/set/%s", name);
				if (!policy_env_name_ok(name))
					return bad(ld, vsub, "is not a valid variable name");
				if (!json_is_string(val))
					return bad(ld, vsub, "must be a string");
				r = policy_env_set(ld->cfg, name, json_string_value(val), ld->err);
				if (r < 0)
					return bad(ld, vsub, "%s", ld->err->msg);
			}
		} else if (strcmp(key, "unset") == 0) {
			r = get_names(ld, sub, v, &ld->cfg->env_unset);
		} else if (strcmp(key, "keep") == 0) {
			r = get_names(ld, sub, v, &ld->cfg->env_keep);
		} else if (strcmp(key, "clean") == 0) {
			if (!json_is_boolean(v))
				return bad(ld, sub, "must be true or false");
			ld->cfg->clean_env |= json_is_true(v);
		} else {
			return bad(ld, sub, "unknown key (expected set, unset, clean or keep)");
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int load_ports(struct loader *ld, const char *key, json_t *v, struct policy_ports *out)
{
	if (!json_is_array(v))
		return bad(ld, key, "must be an array of TCP ports");
	if (json_array_size(v) > POLICY_MAX_PORTS)
		return bad(ld, key, "has more than %d ports", POLICY_MAX_PORTS);
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		char sub[64];
		snprintf(sub, sizeof(sub), "%s/%zu", key, i);
		if (!json_is_integer(e) || policy_add_port(out, (long)json_integer_value(e)) < 0)
			return bad(ld, sub, "must be a port number from 1 to 65535");
	}
	return 0;
}

/* "hosts" or "deny_hosts": each entry a name, *.suffix, address or @preset. */
static int load_hosts(struct loader *ld, const char *key, json_t *v, bool deny)
{
	if (!json_is_array(v) || json_array_size(v) == 0)
		return bad(ld, key, "must be a non-empty array of host names");
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		char sub[320];
		snprintf(sub, sizeof(sub), "%s/%zu", key, i);
		const char *name = json_string_value(e);
		if (!name || strlen(name) != json_string_length(e))
			return bad(ld, sub, "must be a host name (a string with no NUL)");
		if (strchr(name, ',')) /* one entry each: a comma is --net's separator */
			return bad(ld, sub, "'%s': one host an entry, no commas", name);
		if (policy_add_hosts(ld->cfg, name, deny, ld->err) < 0) {
			char why[sizeof(ld->err->msg)];
			snprintf(why, sizeof(why), "%s", ld->err->msg);
			return bad(ld, sub, "%s", why);
		}
	}
	return 0;
}

/* {"hosts": [...], "deny_hosts": [...]}: one network policy, not beside ports. */
static int load_network_hosts(struct loader *ld, json_t *v)
{
	json_t *hosts = json_object_get(v, "hosts"), *deny = json_object_get(v, "deny_hosts");
	if (!hosts)
		return bad(ld, "network/deny_hosts",
			   "takes away from \"hosts\": list the hosts the step may reach too");
	if (json_object_get(v, "connect_tcp") || json_object_get(v, "bind_tcp"))
		return bad(ld, "network",
			   "\"hosts\" and TCP ports are two network policies: give one (a host "
			   "entry takes a port, e.g. \"git.example.com:22\")");
	const char *key;
	json_t *e;
	json_object_foreach(v, key, e)
	{
		if (strcmp(key, "hosts") != 0 && strcmp(key, "deny_hosts") != 0) {
			char sub[300];
			snprintf(sub, sizeof(sub), "network/%s", key);
			return bad(ld, sub, "unknown key (expected hosts or deny_hosts)");
		}
	}
	int r = load_hosts(ld, "network/hosts", hosts, false);
	return r < 0 || !deny ? r : load_hosts(ld, "network/deny_hosts", deny, true);
}

static int load_network(struct loader *ld, json_t *v)
{
	static const struct policy_ports empty;
	int r;
	if (json_is_string(v)) {
		const char *m = json_string_value(v);
		if (strcmp(m, "allow") != 0 && strcmp(m, "none") != 0)
			return bad(ld, "network",
				   "must be \"allow\", \"none\" or {\"connect_tcp\": [...], "
				   "\"bind_tcp\": [...]}");
		r = policy_net_merge(ld->cfg, m[0] == 'a' ? NET_ALLOW : NET_NONE, &empty, &empty,
				     ld->err);
		return r < 0 ? bad(ld, "network", "%s", ld->err->msg) : 0;
	}
	if (!json_is_object(v))
		return bad(ld, "network", "must be \"allow\", \"none\" or an object");
	if (json_object_get(v, "hosts") || json_object_get(v, "deny_hosts"))
		return load_network_hosts(ld, v);
	struct policy_ports *ports = calloc(2, sizeof(*ports));
	if (!ports)
		return err_set(ld->err, ERR_USAGE, ENOMEM, "network");
	const char *key;
	json_t *e;
	r = 0;
	json_object_foreach(v, key, e)
	{
		char sub[300];
		snprintf(sub, sizeof(sub), "network/%s", key);
		if (strcmp(key, "connect_tcp") == 0)
			r = load_ports(ld, sub, e, &ports[0]);
		else if (strcmp(key, "bind_tcp") == 0)
			r = load_ports(ld, sub, e, &ports[1]);
		else
			r = bad(ld, sub,
				"unknown key (expected hosts, deny_hosts, connect_tcp or "
				"bind_tcp)");
		if (r < 0)
			break;
	}
	if (r == 0 && policy_net_merge(ld->cfg, NET_TCP, &ports[0], &ports[1], ld->err) < 0)
		r = bad(ld, "network", "%s", ld->err->msg);
	free(ports);
	return r;
}

/* "limits": "none" or {"memory": "512M" | 536870912, "tasks": 4096, ...} */
static int load_limits(struct loader *ld, json_t *v)
{
	if (json_is_string(v) && strcmp(json_string_value(v), "none") == 0) {
		ld->cfg->limits.none = true;
		return 0;
	}
	if (!json_is_object(v))
		return bad(ld, "limits", "must be \"none\" or an object of limits");
	const char *key;
	json_t *e;
	json_object_foreach(v, key, e)
	{
		char sub[300];
		snprintf(sub, sizeof(sub), "limits/%s", key);
		if (strcmp(key, "defaults") == 0) {
			if (!json_is_boolean(e))
				return bad(ld, sub, "must be true or false");
			ld->cfg->limits.none |= json_is_false(e);
			continue;
		}
		int k = limitcfg_find(key, strlen(key));
		if (k < 0)
			return bad(ld, sub,
				   "unknown limit (expected memory, tasks, cpu_s, file_size, "
				   "open_files, output, tmp or defaults)");
		char num[32];
		const char *text = json_is_string(e) ? json_string_value(e) : NULL;
		if (json_is_integer(e) && json_integer_value(e) > 0) {
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(e));
			text = num;
		}
		uint64_t val;
		if (!text || limitcfg_parse((enum limit_kind)k, text, &val) < 0)
			return bad(ld, sub, "must be a positive whole number%s, within range",
				   limitcfg_in_bytes((enum limit_kind)k)
					   ? " of bytes, or a string such as \"512M\""
					   : "");
		limitcfg_merge(&ld->cfg->limits, (enum limit_kind)k, val);
	}
	return 0;
}

static int load_timeout(struct loader *ld, const char *key, json_t *v)
{
	struct stepbox_config *cfg = ld->cfg;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > POLICY_MAX_TIMEOUT)
		return bad(ld, key, "must be a whole number of seconds from 1 to %ld",
			   POLICY_MAX_TIMEOUT);
	long t = (long)json_integer_value(v);
	if (cfg->timeout_s && cfg->timeout_s != t)
		return bad(ld, key, "%ld contradicts --timeout %ld", t, cfg->timeout_s);
	cfg->timeout_s = t;
	return 0;
}

static int load_backend(struct loader *ld, const char *key, json_t *v)
{
	if (!json_is_string(v))
		return bad(ld, key, "must be a string");
	int r = policy_set_backend(ld->cfg, json_string_value(v), ld->err);
	if (r < 0) {
		enum err_kind kind = ld->err->kind;
		char hint[sizeof(ld->err->hint)];
		memcpy(hint, ld->err->hint, sizeof(hint));
		r = bad(ld, key, "%s", ld->err->msg);
		ld->err->kind = kind;
		memcpy(ld->err->hint, hint, sizeof(hint));
	}
	return r;
}

/* protected_paths (absolute_ok) and unprotect: names relative to a write grant. */
static int get_protect_names(struct loader *ld, const char *key, json_t *v, bool absolute_ok,
			     struct strv *out)
{
	if (!json_is_array(v) || json_array_size(v) > PROTECT_MAX_NAMES)
		return bad(ld, key, "must be an array of at most %d names", PROTECT_MAX_NAMES);
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		char sub[64];
		snprintf(sub, sizeof(sub), "%s/%zu", key, i);
		if (!json_is_string(e))
			return bad(ld, sub, "must be a string (a name or glob such as \".envrc\")");
		const char *why = protect_name_problem(json_string_value(e), absolute_ok);
		if (why)
			return bad(ld, sub, "%s", why);
		if (strv_find(out, json_string_value(e)) < 0 &&
		    strv_push(out, json_string_value(e)) < 0)
			return err_set(ld->err, ERR_USAGE, ENOMEM, "policy");
	}
	return 0;
}

static int load_key(struct loader *ld, const char *key, json_t *v)
{
	struct stepbox_config *cfg = ld->cfg;
	if (strcmp(key, "version") == 0) {
		if (!json_is_integer(v) || json_integer_value(v) != 1)
			return bad(ld, key, "this stepbox reads policy version 1");
		return 0;
	}
	/* what `stepbox policy` prints of the resolution, so its output is valid input */
	static const char *const resolved[] = {"resolved_backend", "run_base", "grants", "skipped",
					       "routed_dirs"};
	for (size_t i = 0; i < sizeof(resolved) / sizeof(resolved[0]); i++)
		if (strcmp(key, resolved[i]) == 0)
			return 0;
	if (strcmp(key, "workdir") == 0)
		return set_path_once(ld, key, v, &cfg->workdir);
	if (strcmp(key, "workdir_readonly") == 0) {
		if (!json_is_boolean(v))
			return bad(ld, key, "must be true or false");
		cfg->workdir_readonly |= json_is_true(v);
		return 0;
	}
	if (strcmp(key, "persistent_dir") == 0)
		return json_is_null(v) ? 0 : set_path_once(ld, key, v, &cfg->persist);
	if (strcmp(key, "read_paths") == 0)
		return get_paths(ld, key, v, &cfg->read_policy);
	if (strcmp(key, "write_paths") == 0)
		return get_paths(ld, key, v, &cfg->write_policy);
	if (strcmp(key, "home_files") == 0)
		return get_home_files(ld, key, v, &cfg->home_policy);
	if (strcmp(key, "unix_sockets") == 0)
		return get_paths(ld, key, v, &cfg->unix_policy);
	if (strcmp(key, "network") == 0)
		return load_network(ld, v);
	if (strcmp(key, "env") == 0)
		return load_env(ld, v);
	if (strcmp(key, "limits") == 0)
		return load_limits(ld, v);
	if (strcmp(key, "timeout_s") == 0)
		return load_timeout(ld, key, v);
	if (strcmp(key, "persistent_shared") == 0) {
		if (!json_is_boolean(v))
			return bad(ld, key, "must be true or false");
		/* only ever narrows: the flag or the file may ask for it */
		cfg->persist_shared |= json_is_true(v);
		return 0;
	}
	if (strcmp(key, "allow_broad_grants") == 0) {
		if (!json_is_boolean(v))
			return bad(ld, key, "must be true or false");
		/* like env.clean: the flag and the file both only ever widen it */
		cfg->allow_broad_grants |= json_is_true(v);
		return 0;
	}
	if (strcmp(key, "backend") == 0)
		return load_backend(ld, key, v);
	if (strcmp(key, "protected_paths") == 0)
		return get_protect_names(ld, key, v, true, &cfg->protect_paths);
	if (strcmp(key, "unprotect") == 0)
		return get_protect_names(ld, key, v, false, &cfg->unprotect);
	return bad(ld, key,
		   "unknown key (version 1 knows version, workdir, read_paths, write_paths, "
		   "workdir_readonly, persistent_dir, persistent_shared, home_files, network, "
		   "env, timeout_s, limits, backend, allow_broad_grants, unix_sockets, "
		   "protected_paths, unprotect; and ignores "
		   "what "
		   "stepbox policy adds: resolved_backend, run_base, grants, skipped, "
		   "routed_dirs)");
}

int policyfile_load_buffer(struct stepbox_config *cfg, const char *name, const char *buf,
			   size_t len, struct stepbox_err *err)
{
	struct loader ld = {cfg, name, buf, len, err};
	json_error_t jerr;
	/* duplicates would let two writers of a policy disagree silently */
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return err_set(err, ERR_USAGE, 0, "policy '%s', line %d, column %d: %s", name,
			       jerr.line, jerr.column, jerr.text);
	int r = 0;
	if (!json_is_object(root)) {
		r = err_set(err, ERR_USAGE, 0, "policy '%s': the top level must be an object",
			    name);
		goto out;
	}
	if (!json_object_get(root, "version")) {
		r = err_set(err, ERR_USAGE, 0, "policy '%s': key 'version' is required (use 1)",
			    name);
		goto out;
	}
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		r = load_key(&ld, key, v);
		if (r < 0)
			goto out;
	}
out:
	json_decref(root);
	return r;
}

/*
 * With --consume the file is opened, and later removed, in a folder reached
 * through no symlink (*dfd): one on the way could be a step's, where a
 * launcher keeps its single-use policies in a folder a step may write, and
 * would have stepbox delete a file of that name elsewhere. -errno on failure.
 */
static int open_consumed(const char *path, int *dfd)
{
	char dir[PATH_MAX];
	if (!strchr(path, '/'))
		snprintf(dir, sizeof(dir), ".");
	else if (!path_parent(path, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	if ((*dfd = path_open_nofollow(dir, O_DIRECTORY)) < 0)
		return *dfd;
	int fd = openat(*dfd, path_base(path), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int policyfile_load_file(struct stepbox_config *cfg, const char *path, bool consume,
			 struct stepbox_err *err)
{
	bool is_stdin = strcmp(path, "-") == 0;
	int dfd = -1, fd;
	if (is_stdin)
		fd = STDIN_FILENO;
	else if (consume)
		fd = open_consumed(path, &dfd);
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
		fd = -errno;
	if (fd < 0) {
		int e = -fd;
		if (dfd >= 0)
			close(dfd);
		if (e == ELOOP && consume) {
			err_set(err, ERR_USAGE, e, "consume policy '%s'", path);
			err_hint(
				err,
				"--consume reads and deletes its file through real folders only (a "
				"symlink on the way may be a step's): give the file's canonical "
				"path");
		} else if (e == ENOENT) {
			err_set(err, ERR_USAGE, 0, "policy file '%s' does not exist", path);
			/* a rerun of a command line that consumed its file once */
			if (consume)
				err_hint(err,
					 "with --consume a policy file is deleted once it is read: "
					 "write it anew for each run");
			else
				err_hint(err,
					 "check the path (-p FILE), or give the policy on standard "
					 "input with -p -");
		} else {
			err_set(err, ERR_USAGE, e, "read policy '%s'", path);
			err_hint(err,
				 "the policy file must be readable by the user running stepbox");
		}
		return -e;
	}
	struct stat st;
	if (!is_stdin && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		close(fd);
		if (dfd >= 0)
			close(dfd);
		return err_set(err, ERR_UNAVAILABLE, 0, "read policy '%s': not a regular file",
			       path);
	}
	char *buf = NULL;
	size_t len = 0;
	int r = path_read_fd(fd, POLICY_MAX_FILE, &buf, &len);
	if (!is_stdin)
		close(fd);
	if (r < 0 && dfd >= 0) {
		close(dfd);
		dfd = -1;
	}
	if (r == -EFBIG)
		return err_set(err, ERR_USAGE, 0, "policy '%s' is larger than %d bytes", path,
			       POLICY_MAX_FILE);
	if (r < 0)
		return err_set(err, ERR_UNAVAILABLE, -r, "read policy '%s'", path);
	if (dfd >= 0) {
		int u = unlinkat(dfd, path_base(path), 0) < 0 ? errno : 0;
		close(dfd);
		if (u) {
			free(buf);
			return err_set(err, ERR_UNAVAILABLE, u, "consume policy '%s'", path);
		}
	}
	r = policyfile_load_buffer(cfg, path, buf, len, err);
	free(buf);
	return r;
}
