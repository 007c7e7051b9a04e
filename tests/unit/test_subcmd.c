#include <errno.h>
#include <string.h>

#include "subcmd.h"
#include "tap.h"

/* One table: every command found by name, each takes what its row says. */
int main(void)
{
	const char *const names[] = {"run", "learn", "check",  "policy",
				     "env", "guide", "doctor", "mcp"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct subcmd *c = subcmd_find(names[i]);
		CHECK(c && strcmp(c->name, names[i]) == 0 && c->run && c->synopsis && c->what);
	}
	CHECK(subcmd_find("nope") == NULL);
	CHECK_STR(subcmd_names(), "run, learn, check, policy, env, guide, doctor, mcp");

	struct subcmd_cli cli = {0};
	struct stepbox_err err = {0};
	const struct subcmd *run = subcmd_find("run"), *check = subcmd_find("check");
	const struct subcmd *policy = subcmd_find("policy"), *learn = subcmd_find("learn");
	CHECK(subcmd_check_operands(run, 1, &cli, &err) == 0);
	CHECK(subcmd_check_operands(run, 0, &cli, &err) == -EINVAL);
	CHECK_HAS(err.msg, "run: no command given");
	CHECK(subcmd_check_operands(learn, 0, &cli, &err) == -EINVAL);
	CHECK_HAS(err.hint, "stepbox learn");
	CHECK(subcmd_check_operands(policy, 0, &cli, &err) == 0);
	CHECK(subcmd_check_operands(policy, 2, &cli, &err) == -EINVAL);
	CHECK_HAS(err.msg, "policy takes no command");
	CHECK(subcmd_check_operands(check, 0, &cli, &err) == 0);
	cli.policy_options = 1; /* check -r /tmp */
	CHECK(subcmd_check_operands(check, 0, &cli, &err) == -EINVAL);
	CHECK_HAS(err.msg, "check takes no arguments but --json");
	CHECK_HAS(err.hint, "stepbox check [--json]");
	return tap_done();
}
