/* guide: see guide.h. */
#include "guide.h"

#include "protect.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void list_grants(FILE *out, const struct grants *g, bool writable)
{
	bool any = false;
	for (size_t i = 0; i < g->n; i++) {
		const struct grant *gr = &g->v[i];
		bool mine = gr->origin != ORIGIN_BASELINE && gr->origin != ORIGIN_BASELINE_TARGET;
		if (!mine || (writable != !!(gr->access & GRANT_WRITE)))
			continue;
		fprintf(out, "- `%s`%s\n", gr->path,
			gr->origin == ORIGIN_PERSISTENT ||
					(g->persist && !strcmp(gr->path, g->persist))
				? " (persistent tool folder)"
			: gr->origin == ORIGIN_WORKDIR ? " (working folder)"
						       : "");
		any = true;
	}
	if (!any)
		fprintf(out, "- nothing%s\n", writable ? ": this step cannot write files" : "");
}

static void guide_hostlist(FILE *out, const struct hostrules *r)
{
	char buf[320];
	for (size_t i = 0; i < r->n; i++)
		if (hostrule_format(&r->v[i], buf, sizeof(buf)) >= 0)
			fprintf(out, "%s`%s`", i ? ", " : "", buf);
}

/* Network by name: which hosts, how they are reached, what fails and how. */
static void guide_hosts(FILE *out, const struct stepbox_config *cfg)
{
	fprintf(out, "\nNetwork: only these hosts (ports 80 and 443 unless one is given), "
		     "through a proxy that HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name: ");
	guide_hostlist(out, &cfg->net_hosts);
	if (cfg->net_deny.n) {
		fprintf(out, "; never ");
		guide_hostlist(out, &cfg->net_deny);
	}
	fprintf(out, ".\nA client that ignores those variables, a direct connect to an "
		     "address, UDP and DNS lookups of your own do not get out. Any other host "
		     "is refused with HTTP 403 (a CONNECT or request to the proxy) naming the "
		     "host; a name that resolves to a private or loopback address is refused "
		     "too. Do not retry a refused host: it needs the policy changed.\n");
}

static void guide_network(FILE *out, const struct stepbox_config *cfg)
{
	if (cfg->net == NET_ALLOW) {
		fprintf(out, "\nNetwork: allowed.\n");
		return;
	}
	if (cfg->net == NET_NONE) {
		fprintf(out, "\nNetwork: none. Only local UNIX sockets work; name lookups fail at "
			     "once. Package installs must come from local files or caches.\n");
		return;
	}
	if (cfg->net == NET_HOSTS) {
		guide_hosts(out, cfg);
		return;
	}
	fprintf(out, "\nNetwork: TCP only, connecting to port");
	for (unsigned i = 0; i < cfg->connect_tcp.n; i++)
		fprintf(out, "%s %u", i ? "," : "", cfg->connect_tcp.v[i]);
	if (!cfg->connect_tcp.n)
		fprintf(out, "s: none");
	if (cfg->bind_tcp.n) {
		fprintf(out, "; listening on port");
		for (unsigned i = 0; i < cfg->bind_tcp.n; i++)
			fprintf(out, "%s %u", i ? "," : "", cfg->bind_tcp.v[i]);
	}
	fprintf(out, ". No UDP: DNS works only over TCP to port 53, when it is listed.\n");
}

/* What bounds the step, as the agent will meet it. */
static void guide_limits(FILE *out, const struct limit_plan *lp)
{
	static const char *const meets[LIMIT_N] = {
		[LIMIT_MEMORY] = "memory",
		[LIMIT_TASKS] = "processes and threads at once: past it `fork` fails "
				"(\"Resource temporarily unavailable\")",
		[LIMIT_CPU] = "of CPU time per process: past it the process is killed",
		[LIMIT_FILE_SIZE] = "per file written: past it the write fails (SIGXFSZ)",
		[LIMIT_OPEN_FILES] = "open files per process",
		[LIMIT_OUTPUT] = "of output: the rest is dropped, so write large results "
				 "to files instead",
		[LIMIT_TMP] = "in `/tmp` (and in HOME): past it, \"No space left on device\"",
	};
	bool any = false;
	for (int k = 0; k < LIMIT_N; k++) {
		if (lp->how[k] == LIMIT_OFF || lp->how[k] == LIMIT_UNENFORCED)
			continue;
		char v[64];
		limit_value(lp, (enum limit_kind)k, v, sizeof(v));
		if (!any)
			fprintf(out, "\n## Limits\n\n");
		any = true;
		if (k == LIMIT_MEMORY)
			fprintf(out, "- %s of memory %s\n", v,
				lp->how[k] == LIMIT_CGROUP
					? "for all your processes together: past it the kernel "
					  "kills "
					  "them"
					: "per process: past it an allocation fails");
		else
			fprintf(out, "- %s %s\n", v, meets[k]);
	}
}

/* Where installs go, and whether they last. */
/* The protected names: what the step may not write in its write grants, and why. */
static void guide_protected(FILE *out, const struct stepbox_config *cfg)
{
	fprintf(out, "\n## Protected, even in the folders you may write\n\n"
		     "These run later outside the sandbox, so a change is refused, or moved "
		     "aside after the step and the run fails (exit 123); everything else in "
		     "`.git` is yours (add, commit, branch, stash, fetch, init, clone work):\n\n");
	for (size_t i = 0; i < protect_nrules; i++)
		if (!protect_rules[i].home && !protect_unprotected(cfg, &protect_rules[i]))
			fprintf(out, "- `%s`: %s\n", protect_rules[i].name, protect_rules[i].runs);
	fprintf(out, "- in HOME, where a folder you may write holds it: shell startup files "
		     "(`.bashrc`, `.profile`, `.zshrc`...), `.gitconfig`, `.ssh/config`\n");
	for (size_t i = 0; i < cfg->protect_paths.n; i++)
		fprintf(out, "- `%s`: named by the operator\n", cfg->protect_paths.v[i]);
	for (size_t i = 0; i < cfg->unprotect.n; i++)
		fprintf(out, "%s`%s`",
			i ? ", " : "\nThe operator lets you write: ", cfg->unprotect.v[i]);
	fprintf(out, "%s", cfg->unprotect.n ? ".\n" : "");
}

static void guide_installs(FILE *out, const struct stepbox_config *cfg,
			   const struct env_result *env)
{
	fprintf(out, "\n## Installing tools\n\n");
	if (env->persist && cfg->persist_shared) {
		fprintf(out,
			"The workflow's tools in `$SANDBOX_PERSISTENT_DIR` (`%s`) are on `PATH` "
			"and may be run, but the workflow cache is shared read-only in this "
			"step: nothing can be installed or changed there (other steps use it at "
			"the same time). Install in a step that holds it (`--persist`). Caches "
			"go to `%s`.\n",
			env->persist, env->run_base ? env->run_base : "nowhere writable");
	} else if (env->persist) {
		fprintf(out,
			"Installs work and persist for this workflow: `pip install --user`, "
			"`npm install -g`, `go install`, `cargo install`, `pipx`, `uv tool` "
			"and their caches go to `$SANDBOX_PERSISTENT_DIR` (`%s`), and its bin "
			"folders lead `PATH`. The next run finds them there, so do not "
			"reinstall what is present. Keep a venv or a downloaded binary there "
			"on purpose (`python3 -m venv $SANDBOX_PERSISTENT_DIR/venv`). That "
			"folder is for tooling; the workflow's data and results belong in "
			"your working folder or the other folders above.\n",
			env->persist);
	} else if (env->run_base) {
		fprintf(out,
			"Installs work: `pip install --user`, `python3 -m venv`, `npm install` "
			"and `npm install -g` go into `%s` (`.local`, `.cache`). They last only "
			"as long as that folder: this step has no persistent tool folder.\n",
			env->run_base);
	} else {
		fprintf(out, "This step has no writable folder, so nothing can be installed.\n");
	}
}

void guide_write(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
		 const struct env_result *env, const struct limit_plan *lp)
{
	const char *tmp = env_get(env->env.v, "TMPDIR");
	bool ns = false; /* the namespace layers make private places */
	const char *home = env_get(env->env.v, "HOME");
	bool private_home = false;
	for (size_t i = 0; i < g->n; i++) {
		ns |= (g->v[i].access & GRANT_PRIVATE) != 0;
		private_home |=
			home && (g->v[i].access & GRANT_PRIVATE) && !strcmp(g->v[i].path, home);
	}
	fprintf(out,
		"# Your sandbox\n\n"
		"Your commands run in a sandbox (stepbox). What it grants is all there is:\n%s\n\n"
		"Working folder: `%s`\n\n",
		ns ? "a path that is not granted does not exist (\"No such file or directory\"), "
		     "and a folder granted for reading only is a read-only file system."
		   : "a denial shows up as \"Permission denied\" or \"Operation not permitted\".",
		g->workdir);
	if (home && private_home)
		fprintf(out,
			"HOME: `%s`, a private folder of this step: it holds nothing of the "
			"user's but the files granted below, and what you write there is gone "
			"after the run.\n\n",
			home);
	else if (home)
		fprintf(out,
			"HOME: `%s`, the user's: nothing in it is readable unless granted "
			"below.\n\n",
			home);
	const char *xdg = env_get(env->env.v, "XDG_CONFIG_HOME");
	if (xdg && (env->persist || env->run_base))
		fprintf(out,
			"User configuration: `git config --global`, `npm config set` and "
			"`pip config set` write beneath `%s`, and the next run%s sees it.\n\n",
			xdg, env->persist ? " of this workflow" : " in this folder");
	fprintf(out, "## You may write to\n\n");
	list_grants(out, g, true);
	guide_protected(out, cfg);
	fprintf(out, "\n## You may read (besides the system: /usr, /etc, /proc)\n\n");
	list_grants(out, g, false);
	guide_installs(out, cfg, env);
	if (tmp)
		fprintf(out, "\nTemporary files: `$TMPDIR` (`%s`)%s.\n", tmp,
			ns ? "; `/tmp` is a private folder of this step"
			   : "; `/tmp` itself is not writable here, so a tool that ignores "
			     "`$TMPDIR` and `$XDG_RUNTIME_DIR` fails");
	guide_network(out, cfg);
	guide_limits(out, lp);
	fprintf(out, "\n## Not available\n\n"
		     "- root, `sudo` and `apt`: you have no capabilities and cannot gain any "
		     "(setuid programs do not elevate).\n"
		     "- other users' processes, the host's services' secrets, mounts, new user "
		     "namespaces.\n"
		     "\n## When something is denied\n\n"
		     "It is the sandbox, not a broken tool, a missing login or a missing "
		     "package. Do not conclude it is impossible: report the exact path that "
		     "was denied and ask the operator to grant it (`--read PATH` or "
		     "`--write PATH`, a `read_paths` / `write_paths` entry, or "
		     "`SANDBOX_EXTRA_SYSTEM_PATHS` for a tool folder).\n");
}
