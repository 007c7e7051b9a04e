/*
 * limit_pump.c: the output limit (limit.h), the one limit stepbox enforces
 * itself: the command's stdout and stderr pass through a thread of ours,
 * which stops passing them on at the cap and counts what it dropped.
 */
#include "limit.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the output cap ---- */

struct limit_pump {
	pthread_t thread;
	int fd[2]; /* the command's stdout and stderr, read ends */
	uint64_t cap, passed, dropped;
};

static void *pump_main(void *arg)
{
	struct limit_pump *pm = arg;
	sigset_t pipe_sig;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL); /* a closed stdout: EPIPE, not death */
	char buf[65536];
	struct pollfd pf[2] = {{pm->fd[0], POLLIN, 0}, {pm->fd[1], POLLIN, 0}};
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			ssize_t n = read(pf[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pf[i].fd = -1;
				continue;
			}
			uint64_t room = pm->cap - pm->passed,
				 give = (uint64_t)n < room ? (uint64_t)n : room;
			for (size_t off = 0; off < give;) {
				ssize_t w = write(i + 1, buf + off, give - off);
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0)
					break;
				off += (size_t)w;
			}
			pm->passed += give;
			if (give < (uint64_t)n) {
				if (!pm->dropped) {
					char msg[160];
					int m = snprintf(
						msg, sizeof(msg),
						"\nstepbox: the step's output reached its limit "
						"(%" PRIu64 " bytes): the rest is dropped\n",
						pm->cap);
					if (write(2, msg, (size_t)m) < 0) {
						/* nothing to tell it to */
					}
				}
				pm->dropped += (uint64_t)n - give;
			}
		}
	}
	return NULL;
}

int limit_pump_start(struct limit_pump **out, int rd_out, int rd_err, uint64_t cap,
		     struct stepbox_err *err)
{
	struct limit_pump *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return err_set(err, ERR_UNAVAILABLE, ENOMEM, "the output limit");
	pm->fd[0] = rd_out;
	pm->fd[1] = rd_err;
	pm->cap = cap;
	int r = pthread_create(&pm->thread, NULL, pump_main, pm);
	if (r) {
		free(pm);
		return err_set(err, ERR_UNAVAILABLE, r, "start the output limit's thread");
	}
	*out = pm;
	return 0;
}

uint64_t limit_pump_stop(struct limit_pump *pm)
{
	if (!pm)
		return 0;
	pthread_join(pm->thread, NULL);
	close(pm->fd[0]);
	close(pm->fd[1]);
	uint64_t d = pm->dropped;
	free(pm);
	return d;
}
