/*
 * supervise_int: the supervisor's parts, shared by its three files and by
 * nothing else (the rest of stepbox sees supervise.h).
 *
 *  - supervise.c: the supervisor itself (its lifetime, what it holds of the
 *    policy), talking to the step (the answer, the denials kept, where an
 *    object may be written), the dispatcher, the probe, start and stop;
 *  - supervise_net.c: the socket calls (connect, bind, the sends, listen);
 *  - supervise_fs.c: what Landlock alone cannot judge: metadata, a file
 *    made with a set-id bit, the step's /dev/shm, and access(2);
 *  - supervise_guard.c: the protected paths, live (Landlock alone): the
 *    calls that make, write, move or remove a name.
 *
 * The dispatcher hands each call to one sup_serve_*, which answers it.
 */
#ifndef STEPBOX_SUPERVISE_INT_H
#define STEPBOX_SUPERVISE_INT_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "supervise.h"
#include "stepview.h"
#include "policy.h"
#include "protect.h"
#include "strv.h"

/* Newer than Debian 12's headers; one number on every architecture. */
#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466
#define NR_FILE_SETATTR 469
#define NR_FACCESSAT2 439
#define NR_LANDLOCK_RESTRICT_SELF 446 /* the same number on every architecture */

/*
 * An abstract name a process of the step bound, and the socket holding it;
 * len 0: any name that socket holds (without pidfd_getfd the kernel binds
 * it, from what the step's memory says by then).
 */
struct sup_name {
	char name[sizeof(((struct sockaddr_un *)0)->sun_path)];
	socklen_t len;
	ino_t ino;
};

/* A refusal, kept until the owner takes it (explain is not thread-safe). */
struct sup_denial {
	enum denial_op op;
	char program[16];
	pid_t pid;
	char *path;  /* NULL for a TCP port */
	char *path2; /* a failed call's second path, or NULL */
	int errnum;  /* a failed call's, to be judged (denial_failed); 0 for a refusal */
	int port;
	double when; /* clock_now_s() */
};

#define SUP_UMASKS 64

struct supervisor {
	pthread_mutex_t lock;
	unsigned refs; /* the owner, the dispatcher and each worker */
	int listener;
	int stop[2]; /* the owner closes stop[1] to end the dispatcher */
	struct strv write, unix_dirs;
	struct strv readable, writable, executable; /* Landlock alone's, for access(2) */
	bool by_mount;
	int *write_mnt, *unix_mnt, *all_mnt;
	size_t nwrite_mnt, nunix_mnt, nall_mnt;
	bool own_netns, host_names;
	/*
	 * A process of the step's took a Landlock domain of its own (a nested
	 * sandbox: landlock_restrict_self, trapped): from then on each caller's
	 * line is looked at, and the calls of those in a domain's are made by
	 * its keepers (supervise_nested.c). Dispatcher only.
	 */
	bool landlock_nested;
	struct sup_nested *nested; /* ... the domains taken (supervise_nested.c) */
	bool nested_broken;        /* ... one not laid: what is made for the step is refused */
	struct sockaddr_storage resolvers[4]; /* own_netns: stepbox's resolver, reached there */
	size_t nresolvers;
	bool no_getfd;      /* pidfd_getfd refused: connects re-made, nothing sent for the step */
	bool no_addfd_send; /* SECCOMP_ADDFD_FLAG_SEND refused (before Linux 5.14) */
	int diag;    /* with it: sock_diag in the step's network namespace (dispatcher only) */
	bool broken; /* its credentials could not be narrowed: refuse everything */
	int net_ruleset;
	struct policy_ports ports[2]; /* a port list's, connect and bind (net_ruleset's) */
	bool port_list;
	struct sockaddr_in peer;             /* only_peer's copy */
	const struct sockaddr_in *only_peer; /* the one IP peer allowed, or NULL */
	int shm_dir;                         /* the step's own /dev/shm (Landlock alone), or -1 */
	struct protect_record *prot;         /* the protected paths' live layer, or NULL */
	struct sup_performer *perf;          /* ... whose calls this thread performs */
	int step_filters;                    /* ... the step's own seccomp filters (supervise.h) */
	bool fs_refer;                       /* ... its ruleset moves names between folders */
	bool judge; /* --explain by the tracer: a call let go on is judged here */
	/*
	 * The step's umasks, by thread and its /proc entry's inode (a pid
	 * reused is another entry), while the live layer traps umask(2):
	 * a /proc status read is most of a new file's cost. s->lock.
	 */
	struct sup_umask {
		pid_t tid;
		ino_t ino;
		mode_t mask;
	} umasks[SUP_UMASKS];
	unsigned umask_gen;        /* bumped by every umask(2): a read begun before is not kept */
	bool umask_off;            /* one not seen to land: read every time from then on */
	struct sup_denial *denied; /* what was refused, for --explain and the report */
	size_t ndenied, capdenied;
	struct sup_name *names;
	size_t nnames, capnames;
	unsigned workers;
	struct seccomp_notif_sizes sizes;
	pthread_t thread;
};

/* One notification being served. */
struct call {
	struct supervisor *s;
	struct seccomp_notif *req;
	struct stepview v; /* the calling thread, as its own process sees itself */
	/* its /proc status, read once (sup_step_umask, sup_step_filters) */
	bool status_read;
	mode_t umask;
	int filters;
	pid_t tgid;
	struct keeper *fsk; /* in a nested domain's line: the keeper its file calls are made by */
	unsigned noted;     /* denials noted for it (sup_note_denial) */
	bool answered;      /* sup_hand_fd answered it: sup_respond says nothing more */
};

/* supervise.c */

/* Drop a hold (the owner's, the dispatcher's or a worker's); the last frees s. */
void sup_unref(struct supervisor *s);
/* Answer the call: val, or the error errnum when it is not 0. */
void sup_respond(const struct call *c, long val, int errnum);
/*
 * Put our fd into the step as the call's result, and answer it in the same
 * ioctl where the kernel can (SECCOMP_ADDFD_FLAG_SEND): the step's new fd
 * number, or -errno.
 */
int sup_hand_fd(struct call *c, int fd, int flags);
/* Keep a refusal for --explain and the report (path NULL: a TCP port). */
void sup_note_denial(struct call *c, enum denial_op op, const char *path, int port);
/*
 * The protected paths' live layer on a file that exists (obj, an O_PATH fd;
 * where, its path as the step sees it): what the change how of it meets,
 * a checkout above it looked for from its folder (supervise_guard.c).
 */
struct protect_hit sup_match_object(struct call *c, int obj, const char *where,
				    enum protect_change how);
/* A call performed for the step that failed with errnum: judged as the tracer would (--explain). */
void sup_note_failed(struct call *c, enum denial_op op, const char *path, const char *path2,
		     int errnum);
/* Whether path lies beneath one of dirs. */
bool sup_beneath_any(const struct strv *dirs, const char *path);
/* Whether the object fd (at path) lies where the step may write (or, unix_too, connect). */
bool sup_allowed_place(const struct call *c, int fd, const char *path, bool unix_too);
/*
 * sup_allowed_place's answer by fd's mount alone, under the namespaces: 1
 * allowed, 0 not; -1 where its mount cannot say (Landlock alone, a host
 * file the step was given), which sup_allowed_place asks by path.
 */
int sup_mount_says(const struct call *c, int fd, bool unix_too);
/*
 * Under the namespaces: whether the folder fd lies on a write grant's mount
 * (read-write, nodev) or the step's private tmpfs.
 */
bool sup_write_mount(const struct supervisor *s, int fd);
/* The calling thread's umask, or 022. */
mode_t sup_step_umask(struct call *c);
void sup_serve_umask(struct call *c); /* umask(2), trapped with the live layer */
/* The calling thread's process (its thread group), or -1. */
pid_t sup_step_tgid(struct call *c);
/* How many seccomp filters the calling thread is under, or -1. */
int sup_step_filters(struct call *c);
/* Drop every capability of the calling thread, for good: 0 or -errno. */
int sup_drop_caps(void);
/* Let the call go on: the kernel performs it (only where the step can change nothing we judged). */
void sup_go_on(const struct call *c);

/* supervise_net.c: connect, bind, sendto, sendmsg, sendmmsg, listen (takes req and the pidfd) */
void sup_serve_net(struct call *c);

/* supervise_fs.c */
/* chmod, chown, the times, xattrs, inode flags: checked and performed on the object */
void sup_serve_meta(struct call *c);
/* Whether an open, creat or mknod makes a file with a set-id bit; refused, and said */
bool sup_setid_make(const struct seccomp_notif *req);
void sup_serve_setid_make(struct call *c);
/* Landlock alone: open, link and unlink in the step's /dev/shm; access(2) */
void sup_serve_shm(struct call *c);
void sup_serve_access(struct call *c);

/*
 * supervise_guard.c: open, creat, mkdir, mknod, unlink, rmdir, rename, link,
 * symlink and truncate, each checked against the protected paths and
 * performed by the performer (supervise_perform.c).
 */
void sup_serve_guard(struct call *c);
/* The same with its path arguments read already (p2 NULL: read here, where the call has two). */
void sup_serve_guard_read(struct call *c, const char *p1, const char *p2);
/* Whether the call nr is one sup_serve_guard serves. */
bool sup_guarded(int nr);

/*
 * supervise_perform.c: the performer, started when the live layer is on
 * (ruleset: the step's Landlock ruleset, or -1), stopped with the dispatcher.
 */
int sup_performer_start(struct supervisor *s, int ruleset);
void sup_performer_stop(struct supervisor *s);

/* One call's arguments for the performer. */
struct job {
	int nr;
	int dir, dir2; /* pinned folders (O_PATH) */
	const char *name, *name2;
	int flags;
	mode_t mode;
	uint64_t arg; /* a length, a device */
	int fd;       /* an open's result */
};
/* fn(arg) in the performer, for stepbox's own setup (a keeper born of it): its result. */
int sup_performer_job(struct supervisor *s, int (*fn)(void *), void *arg);
/*
 * The umask the calling thread's creations meet, for sup_job_open (in the
 * performer: its own); and set in a thread born of it (a keeper), as its.
 */
mode_t sup_performer_umask(void);
void sup_performer_adopt(mode_t umask_);
/*
 * Run fn(arg) in the performer: its result, or -EACCES when it could not be
 * confined (a caller in a nested domain's line: by that domain's keeper).
 */
int sup_perform(struct call *c, int (*fn)(void *), void *arg);
/*
 * The same for a call that only makes, moves or removes names in the pinned
 * folders dir and dir2 (-1: none; where, where2: their paths as the step
 * sees them when known, else NULL): where both are a write grant's, the
 * step's Landlock rights there are every right but making devices, and the
 * dispatcher makes it, without the round trip (supervise_perform.c).
 */
int sup_perform_names(struct call *c, int (*fn)(void *), void *arg, int dir, const char *where,
		      int dir2, const char *where2);
/* Jobs for it: j->fd = openat(dir, name, flags, mode); and the other calls by j->nr. */
int sup_job_open(void *arg);
int sup_job_call(void *arg);
/*
 * A FIFO (obj, pinned) opened to write with no reader yet: the open waits in
 * a thread born of the performer, which answers the call itself.
 * -EINPROGRESS (the call is no longer the caller's), or -errno.
 */
int sup_perform_fifo(struct call *c, int obj, int flags);

/*
 * supervise_nested.c: a Landlock domain a process of the step takes
 * (landlock_restrict_self, trapped): copied and laid on keepers, threads
 * that make the calls made for the processes in its line, or the run
 * marked broken (nested_broken: what would be made for the step is
 * refused). Dispatcher only.
 */
struct keeper;
void sup_nested_taken(struct call *c);
/* prctl(PR_SET_CHILD_SUBREAPER): the orphans of the caller's line come to it */
void sup_nested_subreaper(struct call *c);
/*
 * The keeper the caller's socket calls are made under (*k, NULL for none):
 * 0, or -ESRCH where it cannot be known (refuse: sup_nested_refuse).
 */
int sup_nested_keeper(struct call *c, struct keeper **k);
/* The same for the calls on files: a keeper born of the performer (NULL: none). */
int sup_nested_fs_keeper(struct call *c, struct keeper **k);
/* fn(arg) run by keeper k (sup_perform's): its result. */
int sup_nested_run(struct keeper *k, int (*fn)(void *), void *arg);
/* Refuse the call (EACCES) for a domain of the step's own, and say what it was. */
void sup_nested_refuse(struct call *c, const char *what);
/*
 * A TCP port refused (EACCES) to a thread under the step's port rules: by
 * them, or, where the thread was a keeper's (nested) and the step's rules
 * list the port (a host list lets through only the proxy's, checked
 * before), by a domain the step took.
 */
void sup_note_port(struct call *c, int nr, int port, bool nested);
/* Start fn(arg) on a detached thread under k's domains: 0 or -errno. */
int sup_nested_start(struct keeper *k, void *(*fn)(void *), void *arg);
void sup_nested_stop(struct supervisor *s);

/* supervise_names.c: socket, of a kind the network mode refuses: named and refused (--explain) */
void sup_refuse_socket(struct call *c);
/*
 * Abstract names (supervise_names.c): whether one may be reached (the step
 * bound it and still holds it; every name in a network namespace of its own),
 * and the names a socket of the step holds, remembered.
 */
bool sup_abstract_ok(struct supervisor *s, const char *name, socklen_t len);
void sup_add_name(struct supervisor *s, const char *name, socklen_t len, ino_t ino);
void sup_remember_name(struct supervisor *s, int sock);

#endif
