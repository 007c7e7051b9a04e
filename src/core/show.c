/* show: see show.h. */
#include "show.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

json_t *show_list_json(const char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; a && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

json_t *show_strv_json(const struct strv *sv)
{
	/* NULL-ended once anything was added; NULL while empty */
	return sv->v ? show_list_json((const char *const *)sv->v) : json_array();
}

static json_t *ports_json(const struct policy_ports *p)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < p->n; i++)
		json_array_append_new(a, json_integer(p->v[i]));
	return a;
}

static json_t *hosts_json(const struct hostrules *r)
{
	json_t *a = json_array();
	char buf[320];
	for (size_t i = 0; a && i < r->n; i++)
		if (hostrule_format(&r->v[i], buf, sizeof(buf)) >= 0)
			json_array_append_new(a, json_string(buf));
	return a;
}

/* As the policy file spells it: "allow", "none", the port lists or the hosts. */
json_t *show_network_json(const struct stepbox_config *cfg)
{
	if (cfg->net == NET_HOSTS)
		return json_pack("{s:o, s:o}", "hosts", hosts_json(&cfg->net_hosts), "deny_hosts",
				 hosts_json(&cfg->net_deny));
	if (cfg->net != NET_TCP)
		return json_string(policy_net_name(cfg->net));
	return json_pack("{s:o, s:o}", "connect_tcp", ports_json(&cfg->connect_tcp), "bind_tcp",
			 ports_json(&cfg->bind_tcp));
}

int show_dump(FILE *out, json_t *root)
{
	int r = root ? json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
	if (r == 0)
		fputc('\n', out);
	json_decref(root);
	return r == 0 ? 0 : -EIO;
}

/* "NAME=VALUE" entries as an object of NAME: value. */
json_t *show_env_object(const struct strv *entries)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < entries->n; i++) {
		const char *e = entries->v[i];
		size_t nl = strcspn(e, "=");
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)nl, e);
		json_object_set_new(o, name, json_string(e + nl + (e[nl] ? 1 : 0)));
	}
	return o;
}

json_t *show_policy_json(const struct stepbox_config *cfg, const struct grants *g)
{
	/* env.set as the policy file has it: an object of NAME: value */
	json_t *set = show_env_object(&cfg->env_set);
	/*
	 * First the policy itself, so the output is valid input (`stepbox policy
	 * > p.json && stepbox run -p p.json` means the same): the paths as
	 * asked (policy and flags merged), then what it resolved to here, in
	 * keys the loader ignores.
	 */
	struct strv reads = STRV_INIT, writes = STRV_INIT, unixes = STRV_INIT, homes = STRV_INIT;
	int r = strv_extend(&reads, &cfg->read_policy);
	r = r ? r : strv_extend(&reads, &cfg->read_flag);
	r = r ? r : strv_extend(&writes, &cfg->write_policy);
	r = r ? r : strv_extend(&writes, &cfg->write_flag);
	r = r ? r : strv_extend(&unixes, &cfg->unix_policy);
	r = r ? r : strv_extend(&unixes, &cfg->unix_flag);
	r = r ? r : strv_extend(&homes, &cfg->home_policy);
	r = r ? r : strv_extend(&homes, &cfg->home_flag);
	json_t *root =
		r < 0 ? NULL
		      : json_pack("{s:i, s:s, s:s, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:o, "
				  "s:o, s:o, s:b}}",
				  "version", 1, "backend", policy_backend_name(cfg->backend),
				  "workdir", g->workdir, "workdir_readonly", cfg->workdir_readonly,
				  "allow_broad_grants", cfg->allow_broad_grants, "read_paths",
				  show_strv_json(&reads), "write_paths", show_strv_json(&writes),
				  "unix_sockets", show_strv_json(&unixes), "home_files",
				  show_strv_json(&homes), "persistent_dir",
				  g->persist ? json_string(g->persist) : json_null(), "network",
				  show_network_json(cfg), "env", "set", set, "unset",
				  show_strv_json(&cfg->env_unset), "keep",
				  show_strv_json(&cfg->env_keep), "clean", cfg->clean_env);
	strv_release(&reads);
	strv_release(&writes);
	strv_release(&unixes);
	strv_release(&homes);
	if (root && cfg->timeout_s)
		json_object_set_new(root, "timeout_s", json_integer(cfg->timeout_s));
	/* the protected paths' additions and removals, so the output read back keeps them */
	if (root && cfg->protect_paths.n)
		json_object_set_new(root, "protected_paths", show_strv_json(&cfg->protect_paths));
	if (root && cfg->unprotect.n)
		json_object_set_new(root, "unprotect", show_strv_json(&cfg->unprotect));
	/* what was asked (defaults stay defaults when read back) */
	json_t *lim = json_object();
	for (int k = 0; k < LIMIT_N; k++)
		if (cfg->limits.v[k])
			json_object_set_new(lim, limitcfg_names[k],
					    json_integer((json_int_t)cfg->limits.v[k]));
	if (cfg->limits.none && !json_object_size(lim)) {
		json_decref(lim);
		lim = json_string("none");
	} else if (cfg->limits.none) {
		json_object_set_new(lim, "defaults", json_false());
	}
	if (root && (json_is_string(lim) || json_object_size(lim)))
		json_object_set_new(root, "limits", lim);
	else
		json_decref(lim);
	if (root && g->persist)
		json_object_set_new(root, "persistent_shared", json_boolean(cfg->persist_shared));
	return root;
}

int show_policy(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
		const struct env_result *env, const char *backend)
{
	json_t *grants = json_array(), *skipped = json_array();
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		json_t *o = json_pack("{s:s, s:s, s:s}", "path", gr->path, "access",
				      grants_access_name(gr->access), "origin",
				      grants_origin_name(gr->origin));
		if (o && strcmp(gr->requested, gr->path) != 0)
			json_object_set_new(o, "requested", json_string(gr->requested));
		if (o && !gr->exists)
			json_object_set_new(o, "created", json_true());
		if (o && (gr->access & GRANT_PRIVATE))
			json_object_set_new(o, "private", json_true());
		if (o && (gr->access & GRANT_CONNECT))
			json_object_set_new(o, "unix_sockets", json_true());
		if (o && gr->world_readable_only)
			json_object_set_new(o, "world_readable_only", json_true());
		json_array_append_new(grants, o);
	}
	for (size_t i = 0; i < g->nskipped; i++)
		json_array_append_new(skipped,
				      json_pack("{s:s, s:s, s:s}", "path", g->skipped[i].path,
						"origin", grants_origin_name(g->skipped[i].origin),
						"reason", g->skipped[i].reason));
	json_t *root = show_policy_json(cfg, g);
	if (!root) {
		json_decref(grants);
		json_decref(skipped);
		return -ENOMEM;
	}
	if (json_object_set_new(root, "resolved_backend", json_string(backend)) == 0 &&
	    json_object_set_new(root, "run_base",
				env->run_base ? json_string(env->run_base) : json_null()) == 0 &&
	    json_object_set_new(root, "grants", grants) == 0 &&
	    json_object_set_new(root, "skipped", skipped) == 0)
		json_object_set_new(root, "routed_dirs", show_strv_json(&env->dirs));
	return show_dump(out, root);
}

/* "NAME: reason" entries as {"name", "reason"}; no reason holds ": ". */
json_t *show_dropped_json(const struct strv *dropped)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < dropped->n; i++) {
		const char *e = dropped->v[i], *sep = NULL;
		for (const char *p = strstr(e, ": "); p; p = strstr(p + 1, ": "))
			sep = p;
		if (!sep)
			continue;
		json_array_append_new(a, json_pack("{s:s%, s:s}", "name", e, (size_t)(sep - e),
						   "reason", sep + 2));
	}
	return a;
}

int show_env(FILE *out, const struct env_result *r, bool json, bool nul)
{
	if (json) {
		json_t *env = show_env_object(&r->env);
		return show_dump(
			out,
			json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "version", 1, "env", env,
				  "dropped", show_dropped_json(&r->dropped), "routed_dirs",
				  show_strv_json(&r->dirs), "persistent_dir",
				  r->persist ? json_string(r->persist) : json_null(), "run_base",
				  r->run_base ? json_string(r->run_base) : json_null()));
	}
	/* -0: NAME=VALUE entries, each ended by NUL, as `env -0` prints them */
	for (size_t i = 0; i < r->env.n; i++)
		fprintf(out, "%s%c", r->env.v[i], nul ? '\0' : '\n');
	for (size_t i = 0; !nul && i < r->dropped.n; i++)
		fprintf(out, "# dropped %s\n", r->dropped.v[i]);
	return 0;
}
