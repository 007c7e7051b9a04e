/*
 * explain_advice: what to do about each refusal, one line, and whether it
 * proposes a grant. The judgment --explain, the report, learn and the MCP
 * result share: what is never proposed (keys, HOME, a system folder, a
 * tool installed in HOME for writing, a hidden entry), and what is.
 */
#include "explain.h"
#include "explain_int.h"
#include "path.h"
#include "strv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Why a hidden path (grants_hidden) is: a device node under a grant, or a secret. */
const char *explain_hidden_why(const char *path)
{
	return explain_is_device(path) ? "a device node, which no grant gives but the baseline's"
				       : "hidden on purpose: not world-readable";
}

/* A read of a file beneath HOME: its path relative to HOME in rel. */
/*
 * path is a key or credential file, lies in a folder that holds them, or in
 * one whose purpose is to (~/.ssh, ~/.gnupg, a cloud CLI's credentials).
 */
bool explain_holds_keys(const char *path)
{
	static const char *const key_dirs[] = {
		"/.ssh/",    "/.gnupg/",          "/.aws/",           "/.azure/", "/.kube/",
		"/.docker/", "/.password-store/", "/.config/gcloud/", NULL};
	char dir[PATH_MAX];
	const char *name = strrchr(path, '/');
	struct stat st;
	if (name && grants_key_name(name + 1))
		return true;
	snprintf(dir, sizeof(dir), "%s/", path);
	for (size_t i = 0; key_dirs[i]; i++)
		if (strstr(dir, key_dirs[i]))
			return true;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return grants_holds_keys(path);
	return path_parent(path, dir, sizeof(dir)) && grants_holds_keys(dir);
}

/*
 * d is a read or exec in a tool installed in HOME (pyenv's shims and the like):
 * who installed it, and its root in root (a shim runs more of the installation,
 * so the file alone is a grant that leads to the next denial).
 */
const char *explain_home_tool(const struct explain_denial *d, const char *home, char *root,
			      size_t cap)
{
	if (!d->path || explain_is_write(d))
		return NULL;
	return grants_home_tool(d->path, home, root, cap);
}

static bool home_file(const struct explain_denial *d, const char *home, char *rel, size_t cap)
{
	struct stat st;
	if (!home || !d->path || explain_is_write(d) || !path_beneath(d->path, home) ||
	    strcmp(d->path, home) == 0 || stat(d->path, &st) < 0 || S_ISDIR(st.st_mode))
		return false;
	snprintf(rel, cap, "%s", d->path + strlen(home) + (strcmp(home, "/") ? 1 : 0));
	return true;
}

/* Why the proxy refused a host, and what would allow it: one line. */
/*
 * A socket the network mode refuses: what the mode lets out, and what would
 * allow it (a TCP stream: a host by name or a port; anything else, UDP and
 * raw included: only --net allow).
 */
static void socket_advice(FILE *out, const struct explain *x, const struct explain_denial *d)
{
	bool tcp = d->path && strstr(d->path, " TCP") && !strstr(d->path, "MPTCP");
	const char *mode = x->cfg->net == NET_NONE    ? "the network is off (--net none)"
			   : x->cfg->net == NET_HOSTS ? "under network by name only TCP leaves, "
							"through stepbox's proxy, which resolves "
							"the names itself"
						      : "a port list allows TCP streams alone";
	if (tcp)
		fprintf(out,
			"%s; name the hosts the step needs with --net host:NAME (DNS and all, "
			"through stepbox's proxy), or allow ports with --net tcp:PORT\n",
			mode);
	else
		fprintf(out,
			"%s: no UDP (DNS included), raw or other sockets; for names, --net "
			"host:NAME resolves them through stepbox's proxy; a socket of this "
			"kind of its own needs --net allow\n",
			mode);
}

static void host_advice(FILE *out, const struct explain *x, const struct explain_denial *d)
{
	const char *why = d->why ? d->why : "direct";
	const char *name = d->path ? d->path : "?";
	if (strcmp(why, "not_listed") == 0 && d->port <= 0)
		fprintf(out,
			"a client that resolves names itself asked for a name the policy does "
			"not list (it was told no such name); allow it with --net host:%s or "
			"network.hosts\n",
			name);
	else if (strcmp(why, "not_listed") == 0)
		fprintf(out,
			"not among the hosts the policy names; allow it with --net host:%s:%d "
			"or network.hosts\n",
			name, d->port);
	else if (strcmp(why, "not_resolved") == 0)
		fprintf(out, "an address stepbox's resolver did not give (one written, or from "
			     "/etc/hosts): under network by name a host is reached by its name, "
			     "which the step's resolver or its proxy variables carry\n");
	else if (strcmp(why, "denied") == 0)
		fprintf(out, "named in network.deny_hosts, which wins over hosts\n");
	else if (strcmp(why, "private_address") == 0)
		fprintf(out,
			"it resolved to %s, an address of this host or its networks (loopback, "
			"private, link-local, metadata), which a name never reaches; list that "
			"address itself in network.hosts to allow it\n",
			d->addr ? d->addr : "such an address");
	else if (strcmp(why, "direct") == 0 && x->cfg->net == NET_NONE)
		fprintf(out,
			"the network is off (--net none); name the hosts the step needs "
			"with --net host:NAME, or allow the port with --net tcp:%d\n",
			d->port);
	else if (strcmp(why, "direct") == 0)
		fprintf(out,
			"a connect around the proxy: under network by name every host is "
			"reached through it (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set); use a "
			"client that honours them\n");
	else
		fprintf(out, "%s%s%s\n", why, d->detail ? ": " : "", d->detail ? d->detail : "");
}

/*
 * explain_int.h: why neither --explain nor learn proposes writing at grant (canonical), or NULL:
 * where the host runs what is written, outside the sandbox (a system folder, /opt, a home folder:
 * the caller's by HOME and by the user database, root's, any user's, or a folder that holds one),
 * unless it lies in the workdir.
 */
char *explain_write_refused(const char *grant, const char *const homes[2], const char *workdir)
{
	if (grants_system_folder(grant))
		return strv_fmt("%s: a system folder", grant);
	if (workdir && path_beneath(grant, workdir))
		return NULL;
	if (path_beneath(grant, "/opt"))
		return strv_fmt("%s: in /opt, whose programs the host runs", grant);
	for (int k = 0; k < 2; k++)
		if (homes[k][0] && path_beneath(homes[k], grant))
			return strv_fmt("%s: holds HOME (%s)", grant, homes[k]);
	for (int k = 0; k < 2; k++)
		if (homes[k][0] && path_beneath(grant, homes[k]))
			return strv_fmt("%s: in HOME, whose files run outside the sandbox (shell "
					"start-up files, autostart, PATH)",
					grant);
	if (path_beneath(grant, "/home") || path_beneath(grant, "/root"))
		return strv_fmt("%s: in a user's home folder, whose files run outside the "
				"sandbox",
				grant);
	return NULL;
}

/*
 * A pathname socket's folder is proposed for --unix unless what answers there
 * is the host's own or the user's (a system folder, /opt, a home folder):
 * the Docker socket is root, gpg-agent's holds keys.
 */
static bool socket_proposed(const struct explain *x, const struct explain_denial *d,
			    const char *home)
{
	const char *const homes[2] = {home ? home : "", ""};
	char *why = explain_write_refused(d->grant, homes, x->grants->workdir);
	free(why);
	return !why && !explain_holds_keys(d->grant);
}

/*
 * The advice on a refusal that names no file to read or write (the network,
 * signals...): 0 if d is not one, 1 when said, 2 when said proposing d->grant.
 */
static int other_advice(FILE *out, const struct explain *x, const struct explain_denial *d,
			const char *home)
{
	if (d->op == OP_HOST) {
		host_advice(out, x, d);
	} else if (d->op == OP_SOCKET) {
		socket_advice(out, x, d);
	} else if (d->op == OP_NESTED) {
		fprintf(out, "refused for a Landlock domain a process of the step took itself (a "
			     "sandbox inside the step's, such as landrun): stepbox makes this call "
			     "for the step under the domains in the caller's line of parents, or "
			     "refuses it where it cannot hold them (a folder of stepbox's, an "
			     "orphan, a child a subreaper got after a domain was taken beneath "
			     "it); no grant of the step's allows it: run that tool without a "
			     "sandbox of its own (the step's still holds it), or in a step of its "
			     "own\n");
	} else if (d->unprotect) {
		fprintf(out,
			"a protected path: what a step leaves there runs outside the sandbox "
			"later (git's hooks and config, an editor's or agent's settings, shell "
			"rc files); to let a step write it: --unprotect %s\n",
			d->unprotect);
	} else if ((d->op == OP_CONNECT || d->op == OP_BIND) && d->port >= 0) {
		fprintf(out,
			"not allowed by the network policy; allow with --net tcp:%d or "
			"network.%s_tcp\n",
			d->port, d->op == OP_CONNECT ? "connect" : "bind");
	} else if (d->op == OP_BIND) {
		fprintf(out, "a name among the host's abstract sockets, which a step takes only "
			     "under --net allow; bind a pathname socket in a write grant, or an "
			     "autobound name\n");
	} else if (d->op == OP_CONNECT && d->grant && socket_proposed(x, d, home)) {
		fprintf(out,
			"a socket outside the sandbox; allow connecting to the sockets in its "
			"folder with --unix %s\n",
			d->grant);
		return 2;
	} else if (d->op == OP_CONNECT && d->grant) {
		fprintf(out,
			"a socket of a service the host runs (in %s), which stepbox never "
			"proposes: what answers there acts outside the sandbox; if the step "
			"must talk to it, grant it yourself with --unix\n",
			d->grant);
	} else if (d->op == OP_CONNECT) {
		fprintf(out, "a socket outside the sandbox\n");
	} else if (d->op == OP_SIGNAL) {
		fprintf(out, "a process outside the sandbox\n");
	} else if (d->op == OP_SETID) {
		fprintf(out, "never allowed: outside the sandbox the file would run with "
			     "its owner's rights (root's, for a root step); no grant allows "
			     "it\n");
	} else if (d->op == OP_NOFD) {
		fprintf(out, "not possible here: this host refuses pidfd_getfd (a container's "
			     "seccomp profile), which the supervisor needs for it; allow "
			     "pidfd_getfd there\n");
	} else {
		return 0;
	}
	return 1;
}

/*
 * The advice on a write stepbox never proposes to grant: the shared cache, a
 * tool installed in HOME, a system folder, /opt, a home folder. False if d is
 * none of those.
 */
static bool write_advice(FILE *out, const struct explain *x, const struct explain_denial *d,
			 const char *home)
{
	char root[PATH_MAX];
	const char *tool;
	const char *const homes[2] = {home ? home : "", ""};
	char *why = NULL;
	if (!explain_is_write(d) || !d->path)
		return false;
	if (x->cfg->persist_shared && x->grants->persist &&
	    path_beneath(d->path, x->grants->persist)) {
		fprintf(out, "the workflow cache is shared read-only in this step; "
			     "install in a step that holds it (--persist)\n");
	} else if ((tool = grants_home_tool(d->path, home, root, sizeof(root)))) {
		fprintf(out,
			"the installation of a tool in HOME (%s): what a step writes there "
			"(a shim, a script on PATH) runs outside the sandbox later, so stepbox "
			"never proposes it; install into a venv or the workflow's folder "
			"(--persist) instead\n",
			tool);
	} else if (d->grant && (why = explain_write_refused(d->grant, homes, x->grants->workdir))) {
		const char *reason = strstr(why, ": ");
		fprintf(out,
			"%s: stepbox never proposes writing there; write in the workdir or "
			"another write grant\n",
			reason ? reason + 2 : why);
		free(why);
	} else {
		return false;
	}
	return true;
}

/* explain_int.h */
bool explain_advice(FILE *out, const struct explain *x, const struct explain_denial *d,
		    const char *home, char *proposed, size_t cap)
{
	char rel[PATH_MAX];
	const char *tool;
	int said;
	snprintf(proposed, cap, "%s", d->grant ? d->grant : "");
	if (d->why && strcmp(d->why, "exdev") == 0) {
		fprintf(out, "a move between two grants, each a mount of its own here: the kernel "
			     "moves no name between them (EXDEV); copy and delete (mv does)");
		if (d->grant)
			fprintf(out, ", or grant one folder holding both with --write %s",
				d->grant);
		fputc('\n', out);
		return d->grant != NULL;
	} else if ((said = other_advice(out, x, d, home))) {
		return said == 2;
	} else if (d->path && (grants_hidden(x->grants, d->path) || explain_is_device(d->path))) {
		fprintf(out, "%s\n", explain_hidden_why(d->path));
	} else if (write_advice(out, x, d, home)) {
		return false;
	} else if (d->path && explain_holds_keys(d->path)) {
		fprintf(out, "keys or credentials, which stepbox never proposes to grant: a step "
			     "may send what it reads to any place it reaches; if it truly needs "
			     "one, grant that file yourself\n");
	} else if ((tool = explain_home_tool(d, home, proposed, cap))) {
		fprintf(out,
			"a tool installed in HOME by %s, which runs more of its installation "
			"than this file; grant it whole, read-only, with --read %s, or put the "
			"system's first on PATH\n",
			tool, proposed);
		return true;
	} else if (home_file(d, home, rel, sizeof(rel))) {
		fprintf(out,
			"a file of HOME, which holds nothing of the user's unless "
			"granted; grant it read-only with --home-file %s\n",
			rel);
	} else {
		fprintf(out, "outside every %s grant; grant with %s %s\n",
			d->op == OP_READ || d->op == OP_LOOKUP ? "read"
			: d->op == OP_EXECUTE                  ? "execute"
							       : "write",
			explain_is_write(d) ? "--write" : "--read", d->grant ? d->grant : d->path);
		return proposed[0] != '\0';
	}
	return false;
}
