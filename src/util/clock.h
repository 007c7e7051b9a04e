/*
 * clock: seconds on the monotonic clock, for durations and deadlines (a
 * timeout, a lock's wait, a call's duration), which a change of the wall
 * clock must not stretch or cut.
 */
#ifndef STEPBOX_CLOCK_H
#define STEPBOX_CLOCK_H

#include <time.h>

static inline double clock_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
