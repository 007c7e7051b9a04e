/*
 * proxy_int: what the proxy's files share, and nothing outside the proxy
 * includes (but its unit test and fuzz harness). The parsers are pure
 * functions, bytes in and a parsed struct out, so they can be fuzzed and
 * tested without sockets: proxy_http.c (request heads, authorities,
 * chunked framing), proxy_socks.c (SOCKS5), proxy_tls.c (ClientHello).
 */
#ifndef STEPBOX_PROXY_INT_H
#define STEPBOX_PROXY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A request's head, request line and CRLF CRLF included. */
#define PROXY_HEAD_MAX 16384
#define PROXY_HEADERS_MAX 100
/* A chunk-size line or one trailer line; all the trailers together. */
#define PROXY_CHUNK_LINE_MAX 4096
#define PROXY_TRAILERS_MAX 16384
/* A ClientHello's handshake message, reassembled across records. */
#define PROXY_HELLO_MAX 16384

struct proxy_span {
	size_t off, len; /* into the parsed buffer */
};

struct proxy_header {
	struct proxy_span name, value; /* value without the spaces around it */
	struct proxy_span line;        /* the whole line, CRLF included */
};

struct proxy_req {
	size_t head_len; /* the request line to the empty line, both CRLF included */
	struct proxy_span method, target;
	int minor; /* HTTP/1.minor: 0 or 1 */
	size_t nheaders;
	struct proxy_header h[PROXY_HEADERS_MAX];
	int host, proxy_auth;      /* index into h, or -1 */
	bool has_length, chunked;  /* Content-Length given; Transfer-Encoding: chunked */
	unsigned long long length; /* Content-Length */
};

/*
 * Parse the request head at buf (len bytes read so far). Returns the head's
 * length (> 0) with req filled; 0 when the head is not complete yet (and
 * could still be, within PROXY_HEAD_MAX); -E2BIG when it is too large or has
 * too many headers; -EINVAL when it is malformed or its body cannot be framed
 * without doubt (Content-Length with Transfer-Encoding, two lengths, a coding
 * other than chunked, a bare LF, a folded line): *why says which (static).
 */
int proxy_http_parse(const char *buf, size_t len, struct proxy_req *req, const char **why);

/*
 * Split an authority ("host:port", "[v6]:port", "host") of len bytes into
 * host (raw bytes, brackets removed, NUL-terminated: a NUL inside is kept
 * and *hostlen says where the host really ends) and *port (defport when
 * none and defport != 0). -EINVAL: no port where one is needed, user info,
 * an empty host, a bad port.
 */
int proxy_authority(const char *s, size_t len, unsigned defport, char *host, size_t hostsize,
		    size_t *hostlen, unsigned *port, bool *bracketed);

/*
 * An absolute URI "http://authority/path?query": the authority's span and
 * the origin-form target's (path and query; empty means "/"). -EINVAL for
 * another scheme or a fragment.
 */
int proxy_absolute_uri(const char *s, size_t len, struct proxy_span *authority,
		       struct proxy_span *path);

/* Chunked framing, fed as bytes pass through; never buffers. */
struct proxy_chunk {
	int state;
	unsigned long long left; /* data bytes left in this chunk */
	size_t line;             /* bytes of the current size or trailer line */
	size_t trailers;         /* bytes of trailers so far */
	int digits;
};

/*
 * Feed len bytes of a chunked body. Returns how many belong to the body
 * (all of them, or fewer when it ended: *done then), or -EINVAL when the
 * framing is malformed (*why).
 */
long proxy_chunk_feed(struct proxy_chunk *c, const char *buf, size_t len, bool *done,
		      const char **why);

/* SOCKS5 (RFC 1928, RFC 1929). Each returns bytes used, 0 for more, -EINVAL. */
struct proxy_socks_greeting {
	bool no_auth, userpass; /* methods 0x00 and 0x02 offered */
};
int proxy_socks_greeting(const uint8_t *b, size_t len, struct proxy_socks_greeting *g);

struct proxy_socks_auth {
	const uint8_t *user, *pass; /* into b */
	size_t ulen, plen;
};
int proxy_socks_auth(const uint8_t *b, size_t len, struct proxy_socks_auth *a);

struct proxy_socks_req {
	uint8_t cmd, atyp;   /* CONNECT is 1; an address 1 (v4), 3 (name), 4 (v6) */
	uint8_t addr[16];    /* atyp 1 or 4 */
	const uint8_t *name; /* atyp 3: into b, nlen bytes (may hold a NUL) */
	size_t nlen;
	unsigned port;
};
/* -EPROTO: a well-formed request of an address type it does not know. */
int proxy_socks_request(const uint8_t *b, size_t len, struct proxy_socks_req *r);

/* TLS: the first flight of a client, as met after CONNECT. */
struct proxy_hello {
	bool sni;          /* it names a server */
	uint8_t name[256]; /* raw (may hold anything: the caller normalises) */
	size_t nlen;
};
/*
 * Parse the ClientHello at the start of b (TLS records, reassembled when
 * the hello spans several). > 0 when parsed (the bytes of the records that
 * held it), 0 when more bytes are needed, -EINVAL when it is not a TLS
 * handshake or is malformed (*why), -E2BIG past PROXY_HELLO_MAX.
 */
int proxy_tls_hello(const uint8_t *b, size_t len, struct proxy_hello *h, const char **why);

/* The event loop's state, shared by proxy.c (the loop, the I/O, the
 * lifetime) and proxy_conn.c (each connection's protocol and checks). */
#include <sys/socket.h>

#include "proxy.h"

#define PROXY_MAX_ADDRS 8
/* a busy tunnel's buffers, and all of them together past their first size */
#define PROXY_GROWN_BUFFER (256 * 1024)
#define PROXY_GROWN_TOTAL (3u << 20)
#define PROXY_MAX_LOOKUPS 16 /* lookups in flight at once, each a thread */
/* the bulk directions moved by splice(2) through a pipe at once (Linux) */
#define PROXY_PIPES_MAX 16
#define PROXY_PIPE_SIZE (1 << 20) /* asked of each: the kernel's pipe-max-size by default */

enum proxy_state {
	PS_SNIFF,       /* waiting for the first byte */
	PS_HTTP_HEAD,   /* the first request's head */
	PS_SOCKS_GREET, /* SOCKS5: the methods */
	PS_SOCKS_AUTH,  /* SOCKS5: user and password */
	PS_SOCKS_REQ,   /* SOCKS5: the request */
	PS_DNS,         /* the step's resolver over TCP: queries, each after its length */
	PS_RESOLVING,   /* a lookup in flight (or waiting for a slot) */
	PS_CONNECTING,  /* a nonblocking connect in flight */
	PS_TLS_PEEK,    /* CONNECT answered: the client's first bytes are read, not sent */
	PS_TUNNEL,      /* bytes both ways */
	PS_HTTP,        /* plain HTTP: each request's head checked and rewritten */
	PS_CLOSING,     /* our answer flushed to the client, then closed */
};

/* TRANSPARENT: a connection to an address the resolver gave (proxy_dns.c); DNS: a lookup */
enum proxy_proto { PP_NONE, PP_CONNECT, PP_HTTP, PP_SOCKS, PP_TRANSPARENT, PP_DNS };

struct proxy_buf {
	char *b;
	size_t off, len, cap; /* the data is b[off, off + len) */
};

/*
 * A bulk direction of a tunnel (or plain HTTP's way back), moved by
 * splice(2) through a pipe of ours once a read filled its buffer and the
 * buffer emptied (Linux): the bytes never pass through the proxy's memory.
 * It is filled only when empty, so a splice in that finds nothing means
 * the socket has nothing.
 */
struct proxy_pipe {
	int r, w;
	size_t held, cap;
	bool open, bulk; /* bulk: a read filled the buffer, the pipe comes when it empties */
	bool off;        /* splice refused this socket once: its buffer for good */
};

struct proxy_lookup;

struct proxy_conn {
	int cfd, ufd;
	enum proxy_state st;
	enum proxy_proto proto;
	struct proxy_buf in;          /* client to upstream */
	struct proxy_buf out;         /* upstream (or our answers) to client */
	struct proxy_pipe upp, dnp;   /* in's direction by splice (after in), out's (before out) */
	size_t fwd;                   /* PS_HTTP: bytes of in checked and ready to send */
	bool c_eof, u_eof;            /* a read saw the end */
	bool u_shut, c_shut;          /* our write side of that socket shut */
	unsigned long long deadline;  /* ms: the handshake's, a head's, or 0 */
	unsigned long long last;      /* ms of the last byte either way */
	char name[HOSTRULE_NAME_MAX]; /* the target, normalised (or an address) */
	unsigned port;
	bool is_addr;
	struct sockaddr_storage addrs[PROXY_MAX_ADDRS];
	size_t naddr, ai;
	char addr[64]; /* the address connected to (or refused), as text */
	bool connected, authed, queued, dead;
	unsigned long long up, down;
	/* PS_HTTP: where the request being forwarded is */
	bool in_body;
	unsigned long long body_left;
	bool chunked;
	struct proxy_chunk ch;
	struct proxy_lookup *lk;
};

struct proxy_lookup {
	struct proxy *px;
	struct proxy_conn *p; /* NULL when the connection went first */
	char name[HOSTRULE_NAME_MAX];
	struct sockaddr_storage out[PROXY_MAX_ADDRS];
	int n;
};

/* proxy_dns.c: the step's resolver (transparent mode). */
#define PROXY_DNS_MAX_NAMES 4096 /* names given an address, for the run */
/* the rcodes it answers with (RFC 1035), and the one type it answers */
enum {
	PROXY_DNS_FORMERR = 1,
	PROXY_DNS_SERVFAIL = 2,
	PROXY_DNS_NXDOMAIN = 3,
	PROXY_DNS_NOTIMP = 4
};
#define PROXY_DNS_TYPE_A 1
struct proxy_dns_query {
	uint16_t id, qtype, qclass;
	bool rd;                      /* recursion desired: echoed */
	bool parsed;                  /* the question was read (the answer repeats it) */
	char name[HOSTRULE_NAME_MAX]; /* its labels joined by dots, as sent */
	size_t qend;                  /* where the question ends */
};
/*
 * Read a query: 0, an rcode to answer with (FORMERR, NOTIMP; q->parsed
 * says whether the question can be repeated), or -1: no answer at all (too
 * short, or a response).
 */
int proxy_dns_parse(const uint8_t *b, size_t len, struct proxy_dns_query *q);
/* The answer to query (as parsed in q): rcode, and one A record when addr. Its length, or 0. */
size_t proxy_dns_answer(const uint8_t *query, const struct proxy_dns_query *q, int rcode,
			const uint8_t *addr, uint8_t *out, size_t cap);
/* The names given addresses, in order: entry i has 127.77.0.0 + i + 1. */
struct proxy_dns_map {
	char (*names)[HOSTRULE_NAME_MAX];
	size_t n, cap;
};
/* name's address (given it now if it has none): 0, -ENOSPC past the bound, -ENOMEM. */
int proxy_dns_map_addr(struct proxy_dns_map *m, const char *name, uint8_t out[4]);
/* The name an address was given, or NULL. */
const char *proxy_dns_map_name(const struct proxy_dns_map *m, const uint8_t addr[4]);
void proxy_dns_map_free(struct proxy_dns_map *m);

struct proxy {
	const struct proxy_cfg *cfg;
	size_t max_conns, bufsize;
	size_t grown; /* bytes the grown buffers hold past bufsize (grow) */
	size_t pipes; /* struct proxy_pipe open */
	unsigned idle_ms, handshake_ms;
	struct proxy_conn **conns;
	size_t nconns;
	struct sockaddr_storage self[PROXY_MAX_LISTEN]; /* the listeners' own addresses */
	size_t nself;
	char auth[512]; /* "stepbox:SECRET" in base64 */
	int lk_pipe[2]; /* lookups done: each writes its pointer */
	size_t lookups;
	unsigned long events, dropped, auth_refused, reached_events;
	struct proxy_reached_list reached; /* past reached_events' budget */
	unsigned long long now;
	struct proxy_dns_map dns;
	unsigned ports[PROXY_MAX_LISTEN]; /* the transparent listeners' ports */
	size_t nports;
};

unsigned long long proxy_now_ms(void);
/* proxy_proto.c: a connection's protocol, run on what its buffers hold. */
void proxy_conn_advance(struct proxy *px, struct proxy_conn *p);
void proxy_conn_timeout(struct proxy *px, struct proxy_conn *p);

/* proxy_target.c: the checks, the lookups, the connect, the answers, the events. */
void proxy_check_target(struct proxy *px, struct proxy_conn *p, const char *raw, size_t len,
			unsigned port, bool addr_only);
/*
 * Refuse: an event (when why is not NULL) and each protocol's answer, then
 * close. code: 403, 407, 400, 431, 502, 504 (SOCKS5: 2, 1, 1, 1, 5, 4).
 */
void proxy_refuse(struct proxy *px, struct proxy_conn *p, const void *name, size_t nlen,
		  const char *why, int code, const char *detail);
void proxy_event_refused(struct proxy *px, struct proxy_conn *p, const void *name, size_t nlen,
			 const char *why, const char *detail);
void proxy_out_add(struct proxy_conn *p, const void *b, size_t n);
void proxy_closing(struct proxy *px, struct proxy_conn *p);
void proxy_socks_reply(struct proxy_conn *p, unsigned char code);
bool proxy_ct_equal(const void *a, size_t al, const void *b, size_t bl);
bool proxy_http_auth_ok(struct proxy *px, const char *buf, const struct proxy_req *req);
void proxy_shown(const void *in, size_t len, char *out, size_t size);
void proxy_conn_connected(struct proxy *px, struct proxy_conn *p);
void proxy_conn_resolved(struct proxy *px, struct proxy_conn *p, struct proxy_lookup *lk);
void proxy_conn_connect_next(struct proxy *px, struct proxy_conn *p, int err);
void proxy_conn_start_lookups(struct proxy *px);
/* A connection that reached its host, ending: an event, or past the budget summed. */
void proxy_conn_reached(struct proxy *px, struct proxy_conn *p);
/*
 * The record's end, written whatever the events' budget: each host reached
 * with its bytes and connections, the others summed, the events dropped.
 */
void proxy_events_end(struct proxy *px);
/* Answer the queries waiting on the resolver's socket fd. */
void proxy_dns_serve(struct proxy *px, int fd);
/*
 * PS_DNS: the queries p's client sent over TCP, each after its length (two
 * bytes), answered the same way into p->out, as many as it holds room for;
 * a length of 0 or past 512, or a query that gets no answer, ends p.
 */
void proxy_dns_stream(struct proxy *px, struct proxy_conn *p);
/* A connection a transparent listener took: its target from the address it reached. */
void proxy_conn_transparent(struct proxy *px, struct proxy_conn *p);

#endif
