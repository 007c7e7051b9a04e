#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "policyfile.h"
#include "tap.h"

static struct stepbox_err err;

static int load(struct stepbox_config *cfg, const char *text)
{
	memset(&err, 0, sizeof(err));
	return policyfile_load_buffer(cfg, "p.json", text, strlen(text), &err);
}

/* A fresh config loading text must fail with kind, mentioning want. */
static void fails(const char *text, enum err_kind kind, const char *want, int line)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	int r = load(&cfg, text);
	int ok = r < 0 && err.kind == kind && strstr(err.msg, want);
	if (!ok)
		printf("# line %d: r=%d msg='%s' want '%s'\n", line, r, err.msg, want);
	tap_ok(ok, __FILE__, line, want);
	policy_release(&cfg);
}
#define FAILS(text, want) fails(text, ERR_USAGE, want, __LINE__)

int main(void)
{
	struct stepbox_config cfg;
	policy_init(&cfg);
	const char *full = "{\n"
			   "  \"version\": 1,\n"
			   "  \"workdir\": \"/srv/wf/run\",\n"
			   "  \"read_paths\": [\"/srv/data\"],\n"
			   "  \"write_paths\": [\"/srv/wf/run\", \"/srv/wf/.sandbox-cache\"],\n"
			   "  \"persistent_dir\": \"/srv/wf/.sandbox-cache\",\n"
			   "  \"network\": \"allow\",\n"
			   "  \"env\": {\"set\": {\"LANG\": \"C.UTF-8\"}, \"unset\": [\"X\"],\n"
			   "          \"clean\": true, \"keep\": [\"API_KEY\"]},\n"
			   "  \"timeout_s\": 600,\n"
			   "  \"backend\": \"auto\"\n"
			   "}\n";
	CHECK(load(&cfg, full) == 0);
	CHECK_STR(cfg.workdir, "/srv/wf/run");
	CHECK(cfg.read_policy.n == 1 && cfg.write_policy.n == 2);
	CHECK_STR(cfg.persist, "/srv/wf/.sandbox-cache");
	CHECK_STR(cfg.env_set.v[0], "LANG=C.UTF-8");
	CHECK(cfg.clean_env && cfg.timeout_s == 600 && cfg.env_keep.n == 1 && cfg.env_unset.n == 1);
	policy_release(&cfg);

	/* every error names the key and its line and column */
	FAILS("{\"version\": 1,\n \"bogus\": 2}", "line 2, column 2: bogus: unknown key");
	FAILS("{\"version\": 1, \"read_paths\": [\"/a\",\n   \"rel/b\"]}",
	      "line 2, column 4: read_paths[1]: must be an absolute path");
	FAILS("{\"version\": 1, \"read_paths\": [\"\"]}", "read_paths[0]: must not be empty");
	FAILS("{\"version\": 1, \"write_paths\": [\"/a\\u0007b\"]}",
	      "write_paths[0]: contains a control character");
	FAILS("{\"version\": 1, \"read_paths\": \"/a\"}", "read_paths: must be an array");
	FAILS("{\"version\": 1, \"read_paths\": [1]}", "read_paths[0]: must be a string");
	FAILS("{\"version\": 1, \"workdir\": 3}", "workdir: must be a string");
	FAILS("{\"version\": 2}", "version: this stepbox reads policy version 1");
	FAILS("{\"version\": \"1\"}", "version: this stepbox reads policy version 1");
	FAILS("{\"workdir\": \"/a\"}", "key 'version' is required");
	FAILS("[1]", "the top level must be an object");
	FAILS("{\"version\": 1, \"version\": 1}", "duplicate object key");
	FAILS("{\"version\": 1,\n  \"workdir\": }", "line 2, column");
	FAILS("{\"version\": 1, \"workdir\": \"/a\xff\"}", "unable to decode byte");
	FAILS("{\"version\": 1, \"workdir\": \"/a\\u0000b\"}", "\\u0000 is not allowed");
	FAILS("{\"version\": 1, \"timeout_s\": 0}", "timeout_s: must be a whole number");
	FAILS("{\"version\": 1, \"timeout_s\": 1.5}", "timeout_s: must be a whole number");
	FAILS("{\"version\": 1, \"timeout_s\": 99999999999}", "timeout_s");
	FAILS("{\"version\": 1, \"env\": {\"set\": {\"1BAD\": \"x\"}}}",
	      "is not a valid variable name");
	FAILS("{\"version\": 1, \"env\": {\"set\": {\"A\": 1}}}", "env.set.A: must be a string");
	FAILS("{\"version\": 1, \"env\": {\"color\": 1}}", "env.color: unknown key");
	FAILS("{\"version\": 1, \"env\": {\"unset\": [\"A B\"]}}", "env.unset[0]");
	FAILS("{\"version\": 1, \"env\": {\"clean\": \"yes\"}}",
	      "env.clean: must be true or false");
	FAILS("{\"version\": 1,\n  \"allow_broad_grants\": \"yes\"}",
	      "line 2, column 3: allow_broad_grants: must be true or false");
	FAILS("{\"version\": 1, \"allow_broad_grants\": 1}", "allow_broad_grants: must be true");
	policy_init(&cfg);
	CHECK(!cfg.allow_broad_grants);
	CHECK(load(&cfg, "{\"version\": 1, \"allow_broad_grants\": true}") == 0 &&
	      cfg.allow_broad_grants);
	policy_release(&cfg);
	/* false in the file does not take back --allow-broad-grants: both only widen */
	policy_init(&cfg);
	cfg.allow_broad_grants = true;
	CHECK(load(&cfg, "{\"version\": 1, \"allow_broad_grants\": false}") == 0 &&
	      cfg.allow_broad_grants);
	policy_release(&cfg);
	FAILS("{\"version\": 1, \"backend\": \"docker\"}", "unknown backend 'docker'");
	FAILS("{\"version\": 1, \"network\": \"maybe\"}", "network: must be");
	FAILS("{\"version\": 1, \"network\": {\"connect_tcp\": [0]}}",
	      "network.connect_tcp[0]: must be a port number");
	FAILS("{\"version\": 1, \"network\": {\"connect_tcp\": \"443\"}}",
	      "network.connect_tcp: must be an array");
	FAILS("{\"version\": 1, \"network\": {\"udp\": [53]}}", "network.udp: unknown key");
	FAILS("{\"version\": 1, \"network\": 1}", "network: must be");

	/* bounds: number of paths */
	{
		size_t cap = 20 * (POLICY_MAX_PATHS + 2) + 64;
		char *big = malloc(cap);
		size_t k = (size_t)snprintf(big, cap, "{\"version\": 1, \"read_paths\": [");
		for (int i = 0; i <= POLICY_MAX_PATHS; i++)
			k += (size_t)snprintf(big + k, cap - k, "%s\"/p%d\"", i ? "," : "", i);
		snprintf(big + k, cap - k, "]}");
		FAILS(big, "at most 16384 are allowed");
		free(big);
	}

	/* network modes */
	policy_init(&cfg);
	CHECK(load(&cfg, "{\"version\": 1, \"network\": {\"connect_tcp\": [443, 53, 443], "
			 "\"bind_tcp\": [8080]}}") == 0);
	CHECK(cfg.net == NET_TCP && cfg.connect_tcp.n == 2 && cfg.connect_tcp.v[1] == 53 &&
	      cfg.bind_tcp.n == 1 && cfg.bind_tcp.v[0] == 8080);
	CHECK(policy_set_net(&cfg, "none", &err) < 0); /* contradicts the file */
	CHECK_HAS(err.msg, "two network policies asked for: 'tcp:443,53 bind:8080' and 'none'");
	policy_release(&cfg);
	policy_init(&cfg);
	CHECK(policy_set_net(&cfg, "tcp:443,53", &err) == 0 && cfg.net == NET_TCP &&
	      cfg.connect_tcp.n == 2);
	CHECK(load(&cfg, "{\"version\": 1, \"network\": {\"connect_tcp\": [443, 53]}}") == 0);
	CHECK(load(&cfg, "{\"version\": 1, \"network\": \"allow\"}") < 0);
	policy_release(&cfg);
	policy_init(&cfg);
	CHECK(policy_set_net(&cfg, "none", &err) == 0 && cfg.net == NET_NONE);
	CHECK(load(&cfg, "{\"version\": 1, \"network\": \"none\"}") == 0);
	CHECK(policy_set_net(&cfg, "tcp:", &err) < 0 && policy_set_net(&cfg, "tcp:1,,2", &err) < 0);
	CHECK(policy_set_net(&cfg, "udp:53", &err) < 0);
	policy_release(&cfg);

	/* network by name: flags add up, the file's keys, each entry checked */
	policy_init(&cfg);
	CHECK(policy_set_net(&cfg, "host:pypi.org,*.example.net", &err) == 0 &&
	      cfg.net == NET_HOSTS && cfg.net_hosts.n == 2);
	CHECK(policy_set_net(&cfg, "host:git.example.com:22", &err) == 0 && cfg.net_hosts.n == 3);
	CHECK(load(&cfg, "{\"version\": 1, \"network\": {\"hosts\": [\"@npm\"], "
			 "\"deny_hosts\": [\"evil.example.net\"]}}") == 0);
	CHECK(cfg.net_hosts.n > 3 && cfg.net_deny.n == 1);
	CHECK(policy_set_net(&cfg, "none", &err) < 0); /* contradicts */
	CHECK(policy_set_net(&cfg, "host:", &err) < 0 &&
	      policy_set_net(&cfg, "host:a.org,,b.org", &err) < 0);
	CHECK(policy_set_net(&cfg, "host:*.com", &err) < 0 && err.kind == ERR_USAGE);
	CHECK_HAS(err.msg, "--net host:");
	policy_release(&cfg);
	FAILS("{\"version\": 1, \"network\": {\"deny_hosts\": [\"a.example.org\"]}}",
	      "list the hosts the step may reach too");
	FAILS("{\"version\": 1, \"network\": {\"hosts\": [\"a.example.org\"], \"connect_tcp\": "
	      "[443]}}",
	      "two network policies");
	FAILS("{\"version\": 1, \"network\": {\"hosts\": []}}", "non-empty array");
	FAILS("{\"version\": 1, \"network\": {\"hosts\": [\"a.org\", 7]}}", "network.hosts[1]");
	FAILS("{\"version\": 1,\n \"network\": {\"hosts\": [\"ok.example.org\",\n "
	      "\"bad%2e.example.org\"]}}",
	      "line 3, column 2");
	FAILS("{\"version\": 1, \"network\": {\"hosts\": [\"a.org,b.org\"]}}", "no commas");
	FAILS("{\"version\": 1, \"network\": {\"hosts\": [\"a\\u0000b.org\"]}}", "not allowed");
	FAILS("{\"version\": 1, \"network\": {\"hosts\": [\"a.org\"], \"ports\": [1]}}",
	      "unknown key");

	/* flags and the file: a contradiction is an error, agreement is fine */
	policy_init(&cfg);
	cfg.workdir = strdup("/x");
	CHECK(load(&cfg, "{\"version\": 1, \"workdir\": \"/y\"}") < 0);
	CHECK_HAS(err.msg, "contradicts");
	CHECK(load(&cfg, "{\"version\": 1, \"workdir\": \"/x\"}") == 0);
	CHECK(policy_set_backend(&cfg, "landlock", &err) == 0);
	CHECK(load(&cfg, "{\"version\": 1, \"backend\": \"none\"}") < 0);
	CHECK_HAS(err.msg, "two backends");
	CHECK(policy_set_timeout(&cfg, "5", &err) == 0);
	CHECK(load(&cfg, "{\"version\": 1, \"timeout_s\": 6}") < 0);
	CHECK(policy_add_env(&cfg, "A=1", &err) == 0);
	CHECK(load(&cfg, "{\"version\": 1, \"env\": {\"set\": {\"A\": \"2\"}}}") < 0);
	CHECK_HAS(err.msg, "set twice");
	CHECK(policy_add_env(&cfg, "B", &err) == 0 && strv_find(&cfg.env_keep, "B") == 0);
	CHECK(policy_add_env(&cfg, "=x", &err) < 0);
	CHECK(policy_set_timeout(&cfg, "0", &err) < 0);
	CHECK(policy_set_timeout(&cfg, "12x", &err) < 0);
	policy_release(&cfg);

	/* files: missing is said as such (exit 125 all the same); consume deletes after reading */
	policy_init(&cfg);
	CHECK(policyfile_load_file(&cfg, "/nonexistent/p.json", false, &err) < 0 &&
	      err.kind == ERR_USAGE);
	CHECK_HAS(err.msg, "policy file '/nonexistent/p.json' does not exist");
	char path[] = "/tmp/stepbox-test-policy-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, "{\"version\": 1}", 14) == 14);
	close(fd);
	CHECK(policyfile_load_file(&cfg, path, false, &err) == 0 && access(path, F_OK) == 0);
	CHECK(policyfile_load_file(&cfg, path, true, &err) == 0 && access(path, F_OK) < 0);
	CHECK(policyfile_load_file(&cfg, path, true, &err) < 0 && err.kind == ERR_USAGE);
	CHECK_HAS(err.hint, "deleted once it is read");
	/* consume: never through a symlink (the file behind it stays); a relative path through
	 * real folders is read and deleted */
	char top[] = "/tmp/stepbox-test-consume-XXXXXX", p2[PATH_MAX], link[PATH_MAX];
	CHECK(mkdtemp(top) != NULL);
	snprintf(p2, sizeof(p2), "%s/real", top);
	CHECK(mkdir(p2, 0755) == 0);
	snprintf(p2, sizeof(p2), "%s/real/p.json", top);
	fd = open(p2, O_WRONLY | O_CREAT | O_EXCL, 0644);
	CHECK(fd >= 0 && write(fd, "{\"version\": 1}", 14) == 14);
	close(fd);
	snprintf(link, sizeof(link), "%s/via", top);
	CHECK(symlink("real", link) == 0);
	snprintf(link, sizeof(link), "%s/via/p.json", top);
	CHECK(policyfile_load_file(&cfg, link, true, &err) < 0 && err.kind == ERR_USAGE);
	CHECK_HAS(err.hint, "through real folders only");
	CHECK(access(p2, F_OK) == 0);
	char cwd[PATH_MAX];
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL && chdir(top) == 0);
	CHECK(policyfile_load_file(&cfg, "real/p.json", true, &err) == 0 && access(p2, F_OK) < 0);
	CHECK(chdir(cwd) == 0);
	snprintf(link, sizeof(link), "%s/via", top);
	unlink(link);
	snprintf(p2, sizeof(p2), "%s/real", top);
	rmdir(p2);
	rmdir(top);
	/* size cap */
	strcpy(path, "/tmp/stepbox-test-policy-XXXXXX");
	fd = mkstemp(path);
	for (int i = 0; i < POLICY_MAX_FILE / 4096 + 2; i++) {
		char block[4096];
		memset(block, ' ', sizeof(block));
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			break;
	}
	close(fd);
	CHECK(policyfile_load_file(&cfg, path, false, &err) < 0);
	CHECK_HAS(err.msg, "larger than");
	unlink(path);
	policy_release(&cfg);

	long v;
	CHECK(policy_parse_long("42", 0, 100, &v) == 0 && v == 42);
	CHECK(policy_parse_long("101", 0, 100, &v) == -ERANGE);
	CHECK(policy_parse_long("-1", 0, 100, &v) == -EINVAL);
	CHECK(policy_parse_long("99999999999999999999999", 0, 100, &v) == -ERANGE);
	CHECK(policy_parse_long("", 0, 100, &v) == -EINVAL);
	CHECK(policy_env_name_ok("_A1") && !policy_env_name_ok("1A") && !policy_env_name_ok("A-B"));
	return tap_done();
}
