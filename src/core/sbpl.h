/*
 * sbpl: the macOS Seatbelt profile (SBPL) of a policy. What the seatbelt
 * backend hands the kernel on a Mac, and what `stepbox policy --format sbpl`
 * prints on any OS, so a Linux user can review what a Mac would enforce.
 * Plain C with no OS dependency: a pure function of the policy and its
 * grants (docs/seatbelt.md).
 *
 * The profile denies by default and means what the Linux backends mean:
 *  - reads (and execution, and mapping code) beneath read grants; reads,
 *    writes, creation and deletion beneath write grants (the workdir, the
 *    persistent folder, write_paths); exec only beneath those;
 *  - the baseline mapped to macOS's own folders (sbpl_baseline), in place of
 *    the Linux baseline the grants carry; the metadata (not the contents) of
 *    every folder above a grant, which a path lookup stats;
 *  - network none, TCP ports (connect and bind, by port), IP allowed, or
 *    hosts by name: the port of stepbox's proxy on localhost alone;
 *    pathname UNIX sockets only beneath write grants and unix_sockets, never
 *    through "network allow";
 *  - signals and process information within the sandbox only; the few
 *    system services (mach-lookup) and sysctls that real tools need.
 * Paths are written as macOS resolves them (/tmp, /var and /etc are
 * /private/...), quoted and escaped; a path SBPL cannot hold (not UTF-8) is
 * an error, never dropped.
 */
#ifndef STEPBOX_SBPL_H
#define STEPBOX_SBPL_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"
#include "grants.h"
#include "policy.h"

/* Whether SBPL can hold s: valid UTF-8 (RFC 3629) with no control character. */
bool sbpl_path_ok(const char *s);

/*
 * Whether the profile lets the canonical path canon be executed (grants: a
 * struct grants; a command_may_exec): beneath the macOS system folders, an
 * execute grant or a write grant.
 */
bool sbpl_may_exec(const void *grants, const char *canon);

/*
 * The profile for cfg and its grants g, to out. proxy_port: with a hosts
 * policy, the port of the proxy the step reaches on the host's loopback (0:
 * none running, the profile only printed, the rule as a comment). 0, or
 * -errno with err (exit 125).
 */
int sbpl_write(FILE *out, const struct stepbox_config *cfg, const struct grants *g,
	       unsigned short proxy_port, struct stepbox_err *err);

#endif
