/*
 * policyfile: the policy file's reader. jansson parses the JSON (version 1)
 * and says where its syntax breaks; every other problem is named by key,
 * line and column here, and merged into the config the flags began.
 */
#ifndef STEPBOX_POLICYFILE_H
#define STEPBOX_POLICYFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "policy.h"

/*
 * Read the JSON policy at path ("-" for standard input) and merge it into
 * cfg, whose command-line values are already set. With consume the file is
 * deleted once read. A missing or unreadable file is ERR_UNAVAILABLE; every
 * other problem is ERR_USAGE naming the key, its line and column. On error
 * cfg is left partly merged and must not be used to run anything.
 */
int policyfile_load_file(struct stepbox_config *cfg, const char *path, bool consume,
			 struct stepbox_err *err);

/* Same, from a buffer; name is used in messages. */
int policyfile_load_buffer(struct stepbox_config *cfg, const char *name, const char *buf,
			   size_t len, struct stepbox_err *err);

#endif
