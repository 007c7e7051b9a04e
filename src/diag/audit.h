/*
 * audit: the kernel's own Landlock denial records (ABI 7) as the source of
 * --explain, read from the audit subsystem's read-only multicast group
 * (CAP_AUDIT_READ: root). Records are kept only for Landlock domains created
 * by this run's child, and joined with their SYSCALL records for the program
 * and pid. The machine's audit setting is changed only when the user asks
 * (--enable-audit), and then restored.
 */
#ifndef STEPBOX_AUDIT_H
#define STEPBOX_AUDIT_H

#include <stdbool.h>
#include <sys/types.h>

#include "explain.h"

struct audit {
	int fd;          /* the multicast socket, or -1 */
	int was_enabled; /* to restore, when we changed it; -1 otherwise */
	char why[256];   /* why audit cannot be the source, when it cannot */
};

/*
 * Get ready to read records for a run. Returns true when audit will be the
 * source; false with a->why saying why not (disabled, not root, ...).
 */
bool audit_prepare(struct audit *a, bool enable);

/* After the run: read the records of domains created by creator into x. */
void audit_collect(struct audit *a, pid_t creator, struct explain *x);

/*
 * The value of key in an audit record's text, into out (cap bytes, cut
 * there): a quoted value as it is, an unquoted path, comm or exe decoded from
 * hex when it is hex (the kernel's encoding of unusual bytes), anything else
 * as it is (a pid of 5994 is not hex). false when the record has no such key
 * (a key is a whole word: "pid" is not found in "ppid=1").
 */
bool audit_field(const char *text, const char *key, char *out, size_t cap);

/* Close, and put the machine's audit setting back if it was changed. */
void audit_release(struct audit *a);

#endif
