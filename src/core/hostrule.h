/*
 * hostrule: the hosts a step may reach by name (issue 34), as rules, and
 * the checks of names and addresses that the policy, the supervisor and the
 * proxy share. Pure and portable: no I/O, no lookups.
 *
 * An entry as the user writes it: an exact name (files.example.org), a
 * wildcard (*.example.net: any name below example.net, never example.net
 * itself, never an IP literal), an IP literal or a CIDR range (v4 or v6),
 * each with an optional port (NAME:22, [v6]:22, 10.0.0.0/8:5432; none
 * means 80 and 443), or a preset (@pypi) that stands for its hosts.
 */
#ifndef STEPBOX_HOSTRULE_H
#define STEPBOX_HOSTRULE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "err.h"

/* The longest name DNS carries (253) and its NUL. */
#define HOSTRULE_NAME_MAX 254
/* Rules one list may hold (presets expanded): every list comes from input. */
#define HOSTRULE_MAX 4096

enum hostrule_kind {
	HOSTRULE_EXACT,  /* name equals */
	HOSTRULE_SUFFIX, /* name ends in "." suffix (the entry was *.suffix) */
	HOSTRULE_ADDR,   /* the address is in addr/prefix */
};

struct hostrule {
	enum hostrule_kind kind;
	char name[HOSTRULE_NAME_MAX]; /* EXACT: the name; SUFFIX: without "*."; ADDR: "" */
	int family;                   /* ADDR: AF_INET or AF_INET6 */
	unsigned char addr[16];       /* ADDR: network byte order, host bits zero */
	unsigned prefix;              /* ADDR: bits that must match (32 or 128 for one address) */
	unsigned port;                /* 1-65535, or 0: 80 and 443 */
	const char *preset;           /* "@pypi" when the entry came from one (static), or NULL */
};

struct hostrules {
	struct hostrule *v; /* owned */
	size_t n, cap;
};

/*
 * Parse one entry as a user wrote it and append its rule (a preset appends
 * one rule for each of its hosts; an entry already there is not added
 * twice). 0; -EINVAL with err (ERR_USAGE) saying what is wrong with that
 * entry and, as a hint, what to write instead; -ENOMEM; -E2BIG past
 * HOSTRULE_MAX. r is unchanged on error.
 */
int hostrules_add(struct hostrules *r, const char *entry, struct stepbox_err *err);

/* Free the rules; r is empty and reusable after. NULL is a no-op. */
void hostrules_free(struct hostrules *r);

/*
 * The entry as the user would write it again, normalised ("*.example.net",
 * "git.example.com:22", "[fd00::1]:22", "10.0.0.0/8"), for -v, guide and
 * the report. Returns what snprintf returns (the length it needed).
 */
int hostrule_format(const struct hostrule *h, char *buf, size_t size);

/* The presets: name ("@pypi"), what it is for, its hosts (NULL-terminated). */
struct hostrule_preset {
	const char *name;
	const char *what;
	const char *const *hosts;
};
extern const struct hostrule_preset hostrule_presets[];
extern const size_t hostrule_npresets;

/*
 * Normalise a name as met on the wire (len bytes, which may hold a NUL):
 * 0 and out (at most 254 bytes with its NUL, lowercase, one trailing dot
 * removed), or -EINVAL with *why a static reason ("holds a NUL",
 * "percent-encoded", "an IP address written as a name"...). An IP literal
 * in its usual form (1.2.3.4, ::1) is refused too: callers test
 * hostrule_parse_addr first and match addresses by hostrules_match_addr.
 */
int hostrule_name_normalise(const char *in, size_t len, char *out, size_t outsize,
			    const char **why);

/*
 * Parse an IP literal in its usual form only ("1.2.3.4", "::1", v6 without
 * brackets) into sa with port. 0, or -EINVAL (not an IP literal).
 */
int hostrule_parse_addr(const char *text, unsigned port, struct sockaddr_storage *sa);

/*
 * The rule of r that allows name (normalised) on port, or NULL. Name rules
 * only: a name that is an IP literal matches the address rules alone, a
 * name that is one in disguise ("2130706433") matches nothing. A rule's
 * port 0 matches 80 and 443.
 *
 * Deny wins: the caller asks the deny list first (hostrules_deny_name),
 * and a name it matches is refused whatever the allow list says.
 */
const struct hostrule *hostrules_match_name(const struct hostrules *r, const char *name,
					    unsigned port);
/* The address rule of r holding sa's address (v4-mapped v6 as its v4), port as above. */
const struct hostrule *hostrules_match_addr(const struct hostrules *r, const struct sockaddr *sa,
					    unsigned port);
/* The same for a deny list, where a rule's port 0 matches every port. */
const struct hostrule *hostrules_deny_name(const struct hostrules *r, const char *name,
					   unsigned port);
const struct hostrule *hostrules_deny_addr(const struct hostrules *r, const struct sockaddr *sa,
					   unsigned port);

enum hostrule_addr_class {
	HOSTRULE_ADDR_PUBLIC,
	HOSTRULE_ADDR_LOOPBACK,
	HOSTRULE_ADDR_PRIVATE,     /* RFC 1918, ULA fc00::/7, site-local fec0::/10 */
	HOSTRULE_ADDR_LINK_LOCAL,  /* 169.254/16, fe80::/10 */
	HOSTRULE_ADDR_CGNAT,       /* 100.64/10 */
	HOSTRULE_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
	HOSTRULE_ADDR_UNSPECIFIED, /* 0/8, :: */
	HOSTRULE_ADDR_METADATA, /* 169.254.169.254, 169.254.170.2, fd00:ec2::254, 100.100.100.200 */
	HOSTRULE_ADDR_DOCUMENTATION, /* 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32,
					3fff::/20 */
	HOSTRULE_ADDR_RESERVED,      /* 240/4, broadcast, benchmarking, IETF, v6 outside 2000::/3 */
	HOSTRULE_ADDR_INVALID,       /* not AF_INET or AF_INET6 */
};

/*
 * What kind of address sa holds. v4-mapped (::ffff:0:0/96), v4-compatible
 * (::/96) and NAT64 (64:ff9b::/96) v6 addresses are classified as the v4
 * address they carry.
 */
enum hostrule_addr_class hostrule_addr_classify(const struct sockaddr *sa);
/* "public", "loopback", "private", "link-local", "cgnat", ... */
const char *hostrule_addr_class_name(enum hostrule_addr_class c);

#endif
