/*
 * lockcost DIR [N]: the uncontended cost of the workflow cache's lock, as a
 * step pays it at start-up (persist_lock, then persist_unlock), N times.
 * Prints microseconds per lock. bench/bench.py reports it (goal: under 0.1 ms).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "persist.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	if (n <= 0)
		return 2;
	struct timespec a, b;
	struct stepbox_err err = {0};
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		struct persist_lock l;
		if (persist_lock(&l, argv[1], false, 0, true, &err) < 0) {
			err_print(&err);
			return 1;
		}
		persist_unlock(&l);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3;
	printf("%.1f\n", us / (double)n);
	return 0;
}
