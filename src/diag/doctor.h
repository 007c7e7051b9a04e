/*
 * doctor: check a deployment before it breaks (field notes, incident 1):
 * backends, PATH folders no execute grant covers, HOME/.config, /etc files
 * readable by the sandboxed user but not world-readable, where
 * /etc/resolv.conf really points, missing policy paths, and inherited
 * variables naming paths no grant covers.
 */
#ifndef STEPBOX_DOCTOR_H
#define STEPBOX_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

#include "run.h"

/* Print the checks (text or JSON). Returns the number of failed checks. */
int doctor_run(FILE *out, const struct stepbox_config *cfg, const struct run_ctx *ctx,
	       const char *etc_root, bool json);

#endif
