/*
 * policy: the one configuration a run is built from. main fills it from the
 * command line, policyfile_load_file merges the JSON policy (version 1) into it,
 * and every later step (grants, env, backends, launch) only reads it.
 */
#ifndef STEPBOX_POLICY_H
#define STEPBOX_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "hostrule.h"
#include "limitcfg.h"
#include "strv.h"

/* Input bounds: a policy is machine-written and may be hostile. */
#define POLICY_MAX_FILE (1024 * 1024) /* bytes */
#define POLICY_MAX_PATHS 16384        /* per list */
#define POLICY_MAX_ENV 4096           /* env.set entries */
#define POLICY_MAX_TIMEOUT 2592000L   /* 30 days */
#define POLICY_DEFAULT_GRACE 10L      /* --grace */

enum policy_backend {
	BACKEND_AUTO,
	BACKEND_STACKED,
	BACKEND_LANDLOCK,
	BACKEND_MOUNTNS,
	BACKEND_NONE,
	BACKEND_SEATBELT, /* macOS (src/macos/seatbelt.c) */
};

/*
 * allow: no restriction; none: AF_UNIX only; tcp: TCP to/from listed ports
 * only; hosts: the hosts named (net_hosts less net_deny), through the proxy
 * stepbox runs outside the sandbox, and nothing else (docs/network.md)
 */
enum policy_net { NET_ALLOW, NET_NONE, NET_TCP, NET_HOSTS };

#define POLICY_MAX_PORTS 1024

struct policy_ports {
	unsigned n;
	unsigned short v[POLICY_MAX_PORTS];
};

struct stepbox_config {
	/* Requested grants, by where they came from (policy file first). */
	struct strv read_policy, read_flag;
	struct strv write_policy, write_flag;
	struct strv write_where; /* where the policy file names each write_policy entry */
	struct strv unix_policy, unix_flag; /* unix_sockets / --unix */
	/* home_files / --home-file: files of HOME granted read-only, relative to it */
	struct strv home_policy, home_flag;
	char *workdir; /* absolute; NULL means the current folder */
	bool workdir_readonly;
	char *persist; /* --persist or persistent_dir, absolute */
	/*
	 * --persist-shared / persistent_shared: the persistent folder is held
	 * shared and granted read-only (many readers, or one writer, at a time).
	 */
	bool persist_shared;
	long persist_wait_s; /* --persist-wait: give up waiting for P after; -1: never */
	long grace_s;        /* --grace: after a forwarded SIGTERM/INT/HUP, kill the tree */
	/*
	 * allow_broad_grants / --allow-broad-grants: accept a workdir or write
	 * grant that is /, a top-level system folder or HOME itself, taken as
	 * given (no /etc secret hiding, no planted-symlink check beneath it).
	 */
	bool allow_broad_grants;
	enum policy_net net;
	bool net_set;
	struct policy_ports connect_tcp, bind_tcp; /* with NET_TCP */
	struct hostrules net_hosts, net_deny;      /* with NET_HOSTS: hosts, deny_hosts */
	struct strv env_set;                       /* "NAME=VALUE", explicit, win over routing */
	struct strv env_unset;                     /* names */
	struct strv env_keep;                      /* names kept despite looking secret */
	bool clean_env;
	long timeout_s;             /* 0: none */
	struct limit_config limits; /* limits / --limit, --no-limits */
	enum policy_backend backend;
	/* doctor, policy --sbpl: BACKEND_NONE stands for "no backend planned",
	 * not for a run without a sandbox (which hides nothing: env.c) */
	bool plan_only;
	bool backend_set;
	int verbosity; /* -1 quiet, 0 normal, 1 verbose */
	char *report_file;
	bool explain;        /* --explain (and learn): record what the sandbox denies */
	bool explain_silent; /* mcp: the denials go to the report (the result), not stderr */
	bool enable_audit;   /* --enable-audit: turn audit on for the run if it is off */
	char *policy_file;
	bool consume;
	/*
	 * The protected paths (protect.h): protected_paths adds names or globs
	 * relative to each write grant (or absolute paths); unprotect and
	 * --unprotect remove defaults; --protect-report-only keeps a finding's
	 * exit status the command's own (the finding is still moved aside).
	 */
	struct strv protect_paths, unprotect;
	bool protect_report_only;
};

void policy_init(struct stepbox_config *cfg);
void policy_release(struct stepbox_config *cfg);

/* Command-line setters; each checks its input and reports conflicts. */
int policy_set_backend(struct stepbox_config *cfg, const char *name, struct stepbox_err *err);
/* A home_files entry: relative to HOME, no ".." component. */
bool policy_home_file_ok(const char *name);

/* --persist-wait and --grace: whole seconds, 0 to POLICY_MAX_TIMEOUT. */
int policy_set_seconds(long *out, const char *flag, const char *text, struct stepbox_err *err);
int policy_set_timeout(struct stepbox_config *cfg, const char *text, struct stepbox_err *err);
/* --net allow | none | tcp:PORT[,PORT...] (connect) | host:NAME[,NAME...] (repeatable) */
int policy_set_net(struct stepbox_config *cfg, const char *text, struct stepbox_err *err);
int policy_add_env(struct stepbox_config *cfg, const char *assignment, struct stepbox_err *err);
/* Make path absolute against the current folder and check it: 0 or -errno. */
int policy_abspath(const char *path, const char *what, char **out, struct stepbox_err *err);

/* Range-checked decimal parser used for every number stepbox reads. */
int policy_parse_long(const char *text, long min, long max, long *out);

/* True when name is a valid environment variable name. */
bool policy_env_name_ok(const char *name);

const char *policy_backend_name(enum policy_backend b);
const char *policy_net_name(enum policy_net n);

/* What the policy file's reader (src/core/policyfile.c) shares with the flags. */
/* Record a network policy; a second one that differs is a contradiction. */
int policy_net_merge(struct stepbox_config *cfg, enum policy_net net,
		     const struct policy_ports *connect, const struct policy_ports *bind,
		     struct stepbox_err *err);
/*
 * Add hosts (NET_HOSTS) to what may be reached, or with deny to what may
 * not: entries, comma-separated as --net host: writes them. -EINVAL with
 * err saying which entry and why.
 */
int policy_add_hosts(struct stepbox_config *cfg, const char *entries, bool deny,
		     struct stepbox_err *err);
/* Add a port once: 0, -ERANGE, or -E2BIG past POLICY_MAX_PORTS. */
int policy_add_port(struct policy_ports *p, long port);
/* Why path cannot be a path of the policy (empty, too long, a control character), or NULL. */
const char *policy_path_problem(const char *path);
/* Add NAME=VALUE to env.set; the same name with another value is a conflict. */
int policy_env_set(struct stepbox_config *cfg, const char *name, const char *value,
		   struct stepbox_err *err);

#endif
