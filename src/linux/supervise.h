/*
 * supervise: what the kernel's layers cannot decide, decided in the stepbox
 * parent through seccomp user notification.
 *
 * Below Landlock ABI 9 nothing in the kernel limits which pathname UNIX
 * socket a step may connect to, and a namespace cannot hide a socket that
 * lies inside a read-only grant; Landlock alone does not mediate metadata
 * (chmod, chown, utimes, xattrs, inode flags) at all. The step's seccomp
 * filter sends those calls here. The supervisor reads the call's arguments
 * once (its own copy: the step's memory can change under it), resolves any
 * path as the step would, pins the object it names with an O_PATH fd, checks
 * it against the policy, and performs the call itself on the pinned object,
 * on a copy of the step's socket (pidfd_getfd; or see SUPERVISE_NO_GETFD), with the step's own
 * credentials (its capabilities dropped in the thread doing it). Nothing is
 * ever sent back with "continue": the kernel would re-read what the step can
 * change.
 *
 * What is allowed:
 *  - connect and addressed sends to a pathname socket only beneath a write
 *    location (a write grant, or the private /tmp and /dev/shm of the
 *    namespace layers) or beneath a unix_sockets entry; otherwise EACCES;
 *  - connect and addressed sends to an abstract socket only when a process of
 *    the step bound that name (recorded when the supervisor binds it for the
 *    step) and a socket of the step still holds it; otherwise EPERM, as
 *    Landlock's scoping answers;
 *  - TCP connects as the step's own Landlock ruleset allows (the thread doing
 *    them is restricted by the same network rules);
 *  - metadata changes (Landlock alone) only beneath write grants other than
 *    device nodes; otherwise EACCES;
 *  - under Landlock alone, each call that creates, writes, moves or removes
 *    a name, unless it lands on a protected path (protect_match): EACCES
 *    there; performed by a thread under the step's own Landlock ruleset;
 *  - access(2) (Landlock alone, which does not mediate it): the kernel's
 *    answer, and EACCES for a right no grant beneath which the object lies
 *    gives, so that what asks before it opens (libgit2 and git skip an
 *    unreadable config file that way) is told the truth.
 */
#ifndef STEPBOX_SUPERVISE_H
#define STEPBOX_SUPERVISE_H

#include <stdbool.h>
#include <netinet/in.h>
#include <stddef.h>

#include "denial.h"
#include "err.h"

struct policy_ports;
struct protect_record;

struct supervise_config {
	char *const *write_dirs; /* canonical, as the step sees them */
	size_t nwrite;
	char *const *unix_dirs; /* unix_sockets entries, canonical */
	size_t nunix;
	/*
	 * Under the namespaces the write places and unix_sockets are judged by
	 * mount id (mountns_read_mounts), the strings above only name them.
	 */
	bool by_mount;
	const int *write_mnt, *unix_mnt, *all_mnt; /* all: every mount of the namespace */
	size_t nwrite_mnt, nunix_mnt, nall_mnt;
	bool own_netns; /* the step has a network namespace of its own */
	/* ... where stepbox's resolver listens on these addresses, port 53 (egress.h), or NULL */
	const struct sockaddr_storage *resolvers;
	size_t nresolvers;
	bool host_names; /* it may bind names of its choosing among the host's abstract names */
	bool no_getfd;   /* pidfd_getfd is refused here: the step's fds cannot be copied */
	/* with no_getfd: a NETLINK_SOCK_DIAG socket in the step's network
	 * namespace, taken over by supervise_start (closed there), or -1 */
	int diag_fd;
	int net_ruleset; /* Landlock ruleset handling TCP for on-behalf connects, or -1 */
	/* ... a port list's ports (NULL else): what the step's own rules allow there */
	const struct policy_ports *connect_ports, *bind_ports;
	/*
	 * Network by name on the host's loopback (egress.h): the one address
	 * an IP socket may connect or send to (the proxy's), or NULL.
	 */
	const struct sockaddr_in *only_peer;
	int shm_dir; /* the step's own /dev/shm folder (shm.h) whose calls are served, or -1 */
	bool judge;  /* --explain by the tracer: say what a call let go on will meet */
	/*
	 * Landlock alone: access(2) is answered here (harden's notify filters
	 * "_alone"), by the kernel's answer and these grants, canonical: what
	 * the step may read, write (device nodes included) and execute.
	 */
	char *const *read_dirs, *const *writable_dirs, *const *exec_dirs;
	size_t nread, nwritable, nexec;
	/*
	 * The protected paths' live layer (supervise_guard.c): the record made
	 * before the step (kept by the caller until supervise_stop; NULL: no
	 * layer), and the step's Landlock ruleset, which restricts the thread
	 * that performs the calls (-1: none, mountns, where the step's mounts,
	 * which every call is performed through, are what bounds it).
	 */
	struct protect_record *protect;
	int fs_ruleset;
	/* ... and whether it lets a name move between folders (ABI 2's refer) */
	bool fs_refer;
	/*
	 * How many seccomp filters the step's processes are under: one with more
	 * made a sandbox of its own inside, whose rules the performer lacks.
	 */
	int step_filters;
};

struct supervisor;

/*
 * Whether this kernel can supervise: user notification, pidfd_open and
 * pidfd_getfd (Linux 5.6). 0, or a negative errno with err saying what is
 * missing; SUPERVISE_NO_GETFD where a seccomp profile refuses pidfd_getfd
 * (err says what that costs): the supervisor then runs with no_getfd, whose
 * filter (harden) sends it no addressed send, refuses UNIX datagram sockets,
 * and whose connects are made on a socket of the supervisor's put in the
 * step's place (SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.9).
 */
#define SUPERVISE_NO_GETFD 1
/*
 * SUPERVISE_NESTED: a listener already holds this process's filter chain
 * (stepbox run inside a sandbox that supervises, stepbox's own included),
 * and the kernel allows one: the outer supervisor decides this step's
 * sockets and metadata, by its own grants (err says so). Probed with a
 * filter in a short-lived child, only where a filter is in force.
 */
#define SUPERVISE_NESTED 2
int supervise_probe(struct stepbox_err *err);

/*
 * Serve the notifications of listener and c->diag_fd (both taken over:
 * closed by the supervisor, also when it fails to start)
 * in a thread of its own until supervise_stop. The config is copied. 0 or
 * -errno with err.
 */
int supervise_start(struct supervisor **out, const struct supervise_config *c, int listener,
		    struct stepbox_err *err);

/*
 * Stop serving once the step's processes are gone, and add what was refused
 * to x (when not NULL). A call still being performed for the step (a TCP
 * connect that waits for its peer) finishes on its own thread; what it
 * shares is freed by whichever of them ends last. NULL is a no-op.
 */
void supervise_stop(struct supervisor *s, const struct denial_sink *sink);

#endif
