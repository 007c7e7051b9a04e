/*
 * fdpass: one file descriptor over a UNIX socket (SCM_RIGHTS), tagged with
 * the one byte that carries it, so a receiver keeps only what it expects.
 */
#ifndef STEPBOX_FDPASS_H
#define STEPBOX_FDPASS_H

/* Send fd over sock with tag. Allocates nothing. 0 or a negative errno. */
int fdpass_send(int sock, int fd, char tag);

/*
 * Receive one fd sent with tag (close-on-exec): the fd, or a negative errno
 * (-EPIPE: the peer closed; -EPROTO: something else came, every fd of which
 * was closed, never kept).
 */
int fdpass_recv(int sock, char tag);
/* The same for any tag of tags (a string), the one that came in *got. */
int fdpass_recv_any(int sock, const char *tags, char *got);

#endif
