#include "grantcheck.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "path.h"

/*
 * Under Landlock alone rights only add up: a read grant inside a write grant
 * (a shared persistent folder, a -r in the workdir) would be writable after
 * all, while the policy says read-only. Refused, never silently weaker; the
 * namespaces bind it read-only inside.
 */
int grantcheck_read_in_write_alone(const struct grants *g, struct stepbox_err *err)
{
	/* the write grants first: a few, against thousands of read grants */
	size_t writes[16], nw = 0;
	for (size_t i = 0; i < g->n; i++) {
		unsigned a = g->v[i].access;
		if (!(a & GRANT_WRITE) || (a & (GRANT_PRIVATE | GRANT_DEV)))
			continue;
		if (nw == sizeof(writes) / sizeof(writes[0]))
			break; /* more: the rest are looked at one by one below */
		writes[nw++] = i;
	}
	for (size_t k = 0; k < g->n; k++) {
		const struct grant *in = &g->v[k];
		/* asked read-only (the baseline inside a broad write grant was not) */
		bool asked = in->origin == ORIGIN_POLICY || in->origin == ORIGIN_FLAG ||
			     in->origin == ORIGIN_WORKDIR || in->origin == ORIGIN_PERSISTENT;
		if (!asked || !(in->access & GRANT_READ) ||
		    (in->access & (GRANT_WRITE | GRANT_PRIVATE)))
			continue;
		bool all = nw < sizeof(writes) / sizeof(writes[0]);
		for (size_t j = 0; j < (all ? nw : g->n); j++) {
			const struct grant *gr = &g->v[all ? writes[j] : j];
			if (!(gr->access & GRANT_WRITE) ||
			    (gr->access & (GRANT_PRIVATE | GRANT_DEV)) ||
			    !path_beneath(in->path, gr->path))
				continue;
			if (g->persist && strcmp(in->path, g->persist) == 0) {
				err_set(err, ERR_USAGE, 0,
					"--persist-shared '%s' lies in the write grant '%s': under "
					"Landlock alone it cannot be made read-only there",
					in->path, gr->path);
				err_hint(err,
					 "keep the persistent folder out of the workdir and the "
					 "write grants, or use a backend with namespaces (stacked, "
					 "mountns)");
				return -EINVAL;
			}
			err_set(err, ERR_UNAVAILABLE, 0,
				"the read-only grant '%s' lies in the write grant '%s': Landlock "
				"alone "
				"cannot take writing away beneath a write grant",
				in->path, gr->path);
			err_hint(err,
				 "grant it read-write, move it out of the write grant, or use a "
				 "backend with namespaces (stacked, mountns), which bind it "
				 "read-only");
			return -EPERM;
		}
	}
	return 0;
}

/*
 * A read grant that is not there is dropped (there is nothing to read), but
 * not one asked for inside a write grant: there a folder that appears later
 * would be writable while the policy says read-only, and another step of
 * the workflow that may write there can move it away while this one starts
 * and back after. Refused instead, on every backend.
 */
int grantcheck_missing_read_in_write(const struct grants *g, const struct grants_host *host,
				     struct stepbox_err *err)
{
	for (size_t i = 0; i < g->nskipped; i++) {
		const struct grant_skip *sk = &g->skipped[i];
		if (!sk->missing || (sk->origin != ORIGIN_POLICY && sk->origin != ORIGIN_FLAG))
			continue;
		/* where it resolves now, else (a folder on the way made a file, or
		 * unsearchable, for the moment) where its name says */
		char *canon = NULL, text[PATH_MAX];
		bool exists;
		if (path_lexical(host->cwd, sk->path, text, sizeof(text)) < 0)
			continue;
		if (canon_path(host->root, sk->path, &canon, &exists) < 0)
			canon = NULL;
		for (size_t j = 0; j < g->n; j++) {
			const struct grant *w = &g->v[j];
			if (!(w->access & GRANT_WRITE) ||
			    (w->access & (GRANT_PRIVATE | GRANT_DEV)) ||
			    !((canon && path_beneath(canon, w->path)) ||
			      path_beneath(text, w->path) ||
			      (w->requested[0] == '/' && path_beneath(text, w->requested))))
				continue;
			err_set(err, ERR_USAGE, ENOENT,
				"read grant '%s' is not there (%s), and lies in the write grant "
				"'%s': what appears there would be writable",
				sk->path, sk->reason, w->path);
			err_hint(err, "create it before the step, or drop it from the read grants");
			free(canon);
			return -ENOENT;
		}
		free(canon);
	}
	return 0;
}
