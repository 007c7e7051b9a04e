/*
 * mountns's private header: what its probe and its apply share, and
 * nothing outside src/linux/mountns*.c includes. mountns.c plans (pure; and the
 * mounts of a built namespace, by the plan), mountns_probe.c asks the
 * kernel in the parent (the probes, the refusals' words, the id maps),
 * mountns_apply.c builds the child's new root.
 */
#ifndef STEPBOX_MOUNTNS_INT_H
#define STEPBOX_MOUNTNS_INT_H

#include <stdbool.h>

/* The scratch mount the new root is built in, and where the host root goes. */
#define BASE "/tmp"
#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"
#define HIDDEN "/hidden" /* an empty file of mode 0 on the scratch root */

/* Write text to the file at path, whole: 0 or -errno (-EIO for a short write). */
int mountns_write_file(const char *path, const char *text);

/*
 * The first steps of every new root, the probe's and a run's alike
 * (mountns_probe.c says more). 0, or -errno with *what.
 */
int mountns_scratch_root(const char **what);

/* A new procfs that the host refuses (a masked /proc): the probe's second question. */
bool mountns_proc_refused(int e);

#endif
