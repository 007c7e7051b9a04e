/* explain_learn: what learn merges from explain's denials into a policy (explain.h). */
#include "explain.h"
#include "canon.h"
#include "explain_int.h"
#include "path.h"

#include <jansson.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static json_t *ports(const struct policy_ports *have, const struct explain *x, enum denial_op op)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < have->n; i++)
		json_array_append_new(a, json_integer(have->v[i]));
	for (size_t i = 0; a && i < x->n; i++) {
		const struct explain_denial *d = &x->v[i];
		bool dup = false;
		for (size_t k = 0; k < json_array_size(a); k++)
			dup |= json_integer_value(json_array_get(a, k)) == d->port;
		if (d->sandbox && d->op == op && d->port >= 0 && !dup)
			json_array_append_new(a, json_integer(d->port));
	}
	return a;
}

/* Whether path lies beneath one of the strings of the array a. */
static bool beneath_any(json_t *a, const char *path)
{
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) if (json_is_string(e) &&
					path_beneath(path, json_string_value(e))) return true;
	return false;
}

/* Append s to the array under key in o (made if missing) unless there; 1 if added. */
static int add_unique(json_t *o, const char *key, const char *s)
{
	json_t *a = json_object_get(o, key);
	if (!a) {
		a = json_array();
		if (!a || json_object_set_new(o, key, a) < 0)
			return 0;
	}
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) if (json_is_string(e) &&
					strcmp(json_string_value(e), s) == 0) return 0;
	return json_array_append_new(a, json_string(s)) == 0;
}

/*
 * uid's home folder in /etc/passwd (read as a file: a static stepbox has no
 * NSS; users from elsewhere have HOME and the /home and /root rules), canonical;
 * "" when none.
 */
static void passwd_home(uid_t uid, char *out, size_t cap)
{
	out[0] = '\0';
	FILE *f = fopen("/etc/passwd", "re");
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		char *field[7] = {line}, *p = line;
		int n = 1;
		while (n < 7 && (p = strchr(p, ':'))) {
			*p++ = '\0';
			field[n++] = p;
		}
		char *end;
		if (n < 7 || strtoul(field[2], &end, 10) != uid || *end || field[5][0] != '/' ||
		    strcmp(field[5], "/") == 0)
			continue;
		explain_canonical(field[5], out, cap);
		break;
	}
	if (f)
		fclose(f);
}

/* Why learn does not propose d's grant, or NULL. */
static char *learn_refused(const struct explain *x, const struct explain_denial *d,
			   const char *const homes[2])
{
	/* a grant is proposed as the next round will resolve it, or not at all */
	char *canon = NULL;
	bool exists, same = canon_path("/", d->grant, &canon, &exists) == 0 &&
			    strcmp(canon, d->grant) == 0;
	free(canon);
	if (!same)
		return strv_fmt("%s: not a canonical path (it goes through a symlink or cannot be "
				"resolved)",
				d->grant);
	if (grants_hidden(x->grants, d->grant) || explain_is_device(d->grant))
		return strv_fmt("%s: %s", d->grant, explain_hidden_why(d->grant));
	if (x->cfg->persist_shared && x->grants->persist &&
	    path_beneath(d->grant, x->grants->persist))
		return strv_fmt("%s: the workflow cache is shared in this step", d->grant);
	if (homes[0][0] && strcmp(d->grant, homes[0]) == 0)
		return strv_fmt("%s: HOME itself; grant the file it needs", d->grant);
	char *why = explain_is_write(d) ? explain_write_refused(d->grant, homes, x->grants->workdir)
					: NULL;
	if (why)
		return why;
	if (explain_holds_keys(d->grant))
		return strv_fmt("%s: holds keys or credentials", d->grant);
	return NULL;
}

/*
 * Network by name: each host the proxy refused as not listed, into
 * network.hosts (its port written unless 80 or 443). Never an address of
 * this host or its networks, nor a name denied on purpose: refused says
 * why instead.
 */
static int learn_hosts(const struct explain *x, json_t *policy, struct strv *refused)
{
	json_t *net = json_object_get(policy, "network");
	if (!json_is_object(net))
		return 0;
	int added = 0;
	for (size_t i = 0; i < x->n; i++) {
		const struct explain_denial *d = &x->v[i];
		if (d->op != OP_HOST || !d->path)
			continue;
		char *why = NULL;
		if (d->why && strcmp(d->why, "not_listed") == 0) {
			char entry[320];
			if (d->port <= 0 || d->port == 80 || d->port == 443) /* <= 0: a lookup */
				snprintf(entry, sizeof(entry), "%s", d->path);
			else
				snprintf(entry, sizeof(entry), "%s:%d", d->path, d->port);
			added += add_unique(net, "hosts", entry);
		} else if (d->why && strcmp(d->why, "private_address") == 0) {
			why = strv_fmt("%s: resolves to %s, an address of this host or its "
				       "networks; list that address yourself if the step must "
				       "reach it",
				       d->path, d->addr ? d->addr : "a private address");
		} else if (d->why && strcmp(d->why, "denied") == 0) {
			why = strv_fmt("%s: named in network.deny_hosts", d->path);
		}
		if (why && strv_find(refused, why) < 0)
			strv_push(refused, why);
		free(why);
	}
	return added;
}

int explain_learn(const struct explain *x, json_t *policy, struct strv *refused)
{
	char home[PATH_MAX] = "", pw_home[PATH_MAX] = "";
	const char *h = getenv("HOME");
	if (h && h[0] == '/' && strcmp(h, "/") != 0)
		explain_canonical(h, home, sizeof(home));
	/* /etc/passwd's too: HOME may be unset, /, or another user's (sudo) */
	passwd_home(getuid(), pw_home, sizeof(pw_home));
	const char *const homes[2] = {home, pw_home};
	int added = 0;
	/* writes first: a read beneath a write grant is not added (writing covers it, and
	 * Landlock alone refuses a read-only grant there) */
	for (size_t k = 0; k < 2 * x->n; k++) {
		/* a tool installed in HOME: its whole installation, as --explain says */
		struct explain_denial tool_d = x->v[k % x->n];
		char root[PATH_MAX];
		if (explain_home_tool(&tool_d, home[0] ? home : NULL, root, sizeof(root)))
			tool_d.grant = root;
		const struct explain_denial *d = &tool_d;
		if (!d->sandbox || d->moot || !d->grant || explain_is_write(d) != (k < x->n) ||
		    (!explain_is_write(d) &&
		     beneath_any(json_object_get(policy, "write_paths"), d->grant)))
			continue;
		struct stat st;
		bool dir = stat(d->grant, &st) == 0 && S_ISDIR(st.st_mode);
		char *why = learn_refused(x, d, homes);
		if (why) {
			if (strv_find(refused, why) < 0)
				strv_push(refused, why);
			free(why);
			continue;
		}
		if (!explain_is_write(d) && !dir && home[0] && path_beneath(d->grant, home))
			added += add_unique(policy, "home_files", d->grant + strlen(home) + 1);
		else
			added += add_unique(policy, explain_grant_key(d), d->grant);
	}
	if (x->cfg->net == NET_HOSTS)
		added += learn_hosts(x, policy, refused);
	if (x->cfg->net == NET_TCP) {
		json_t *net = json_pack("{s:o, s:o}", "connect_tcp",
					ports(&x->cfg->connect_tcp, x, OP_CONNECT), "bind_tcp",
					ports(&x->cfg->bind_tcp, x, OP_BIND));
		json_t *old = json_object_get(policy, "network");
		added += !json_equal(old, net);
		json_object_set_new(policy, "network", net);
	}
	return added;
}
