#include "prepare.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "reportfile.h"

int prepare_step(const struct stepbox_config *cfg, struct grants_host *host, int hide_etc,
		 char *const *inherited, const struct prepare_out *out, struct stepbox_err *err)
{
	assert(out->grants && out->env && (!cfg->report_file || out->report_dir));
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return err_set(err, ERR_USAGE, errno, "cannot read the current folder");
	host->root = "/";
	host->cwd = cwd;
	host->extra_paths = getenv("SANDBOX_EXTRA_SYSTEM_PATHS");
	host->browser_exe = getenv("AGENT_BROWSER_EXECUTABLE_PATH");
	host->home = getenv("HOME");
	host->hide_etc_secrets = hide_etc < 0 ? grants_should_hide_etc() : hide_etc;
	int r = grants_build(cfg, host, out->grants, err);
	host->cwd = NULL; /* ours, and gone */
	if (r == 0)
		r = env_build(cfg, out->grants, inherited, out->env, err);
	/* the report's folder, before the step can plant anything on the way */
	if (r == 0 && cfg->report_file)
		r = reportfile_dir(cfg->report_file, "--report", out->grants, out->report_dir, err);
	return r;
}
