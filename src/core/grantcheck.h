/*
 * grantcheck: what a set of grants, once built, may not hold. A read grant
 * inside a write grant is read-only only where a mount makes it so: under
 * Landlock alone rights add up (refused), and one that is not there cannot
 * be made read-only anywhere (refused on every backend). grants_build calls
 * these last; each is 0, or -errno with err set (exit 125).
 */
#ifndef STEPBOX_GRANTCHECK_H
#define STEPBOX_GRANTCHECK_H

#include "err.h"
#include "grants.h"

int grantcheck_read_in_write_alone(const struct grants *g, struct stepbox_err *err);
int grantcheck_missing_read_in_write(const struct grants *g, const struct grants_host *host,
				     struct stepbox_err *err);

#endif
