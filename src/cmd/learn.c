/* learn: see learn.h. */
#include "learn.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonmem.h"
#include "policyfile.h"
#include "reportfile.h"
#include "show.h"

extern char **environ;

/*
 * The next round's config: the learned policy, read as a policy file is (so
 * it is checked as one), with the settings that are not policy carried over.
 */
static int next_round(struct stepbox_config *cfg, json_t *policy, struct stepbox_err *err)
{
	struct stepbox_config next;
	policy_init(&next);
	char *text = json_dumps(policy, JSON_COMPACT);
	int r = text ? policyfile_load_buffer(&next, "the learned policy", text, strlen(text), err)
		     : err_set(err, ERR_USAGE, ENOMEM, "learn");
	jsonmem_free(text);
	if (r < 0) {
		policy_release(&next);
		return r;
	}
	next.explain = true;
	next.enable_audit = cfg->enable_audit;
	next.verbosity = cfg->verbosity;
	next.grace_s = cfg->grace_s;
	next.persist_wait_s = cfg->persist_wait_s;
	next.report_file = cfg->report_file;
	cfg->report_file = NULL;
	policy_release(cfg);
	*cfg = next;
	return 0;
}

/*
 * The learned policy, on stdout or in -o FILE: its folder, resolved before
 * the first round (dir), may lie in the step's write grants, so the file is
 * written as a report is: through no symlink, atomically.
 */
static int write_learned(const char *output, const char *dir, json_t *policy)
{
	struct stepbox_err err = {0};
	if (!output)
		return show_dump(stdout, json_incref(policy));
	if (reportfile_write(output, "-o", dir, json_incref(policy), &err) < 0) {
		err_print(&err);
		return -1;
	}
	return 0;
}

int learn_run(struct stepbox_config *cfg, struct run_ctx *ctx, char **argv, const char *to,
	      long rounds)
{
	struct learn l = {NULL, STRV_INIT, 0};
	struct stepbox_err err = {0};
	int saved = -1, code = 125;
	char *dir = NULL, *output = NULL;
	if (to && (policy_abspath(to, "-o", &output, &err) < 0 ||
		   reportfile_dir(output, "-o", &ctx->grants, &dir, &err) < 0)) {
		free(output);
		err_print(&err);
		return 125;
	}
	fflush(stdout);
	if (!to && ((saved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) < 0 ||
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)) {
		perror("stepbox: learn: keep the command's output apart");
		return 125;
	}
	for (long round = 1;; round++) {
		code = run_exec(cfg, ctx, argv, &l);
		if (code == 125 || !l.policy || l.added == 0 || round >= rounds)
			break;
		fprintf(stderr, "stepbox: learn: round %ld granted %d more; running again\n", round,
			l.added);
		run_release(ctx);
		if (next_round(cfg, l.policy, &err) < 0 ||
		    run_prepare(cfg, environ, true, ctx, &err) < 0) {
			err_print(&err);
			code = 125;
			break;
		}
	}
	if (saved >= 0) {
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	for (size_t i = 0; i < l.refused.n; i++)
		fprintf(stderr, "stepbox: learn: not proposed: %s\n", l.refused.v[i]);
	if (l.policy && code != 125 && write_learned(output, dir, l.policy) < 0)
		code = 125;
	free(dir);
	free(output);
	json_decref(l.policy);
	strv_release(&l.refused);
	return code;
}
