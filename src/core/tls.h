/* tls.c: TLS for rdl's own connections (docs/design.md#tls), on OpenSSL with
 * memory BIOs: the connection (conn.c) feeds what the socket read and
 * writes what the session produced; the session never touches the socket.
 *
 * A context (rdl__tls_ctx) holds the client's options: trusted CAs, the
 * client certificate, the name to verify. A session (rdl__tls) is one
 * connection's TLS state and lives as long as its socket.
 *
 * Loop thread only, except rdl__tls_ctx_new/free (configuration). Every
 * call that fails writes a sentence saying what failed to err. Without
 * RDL_WITH_TLS every call returns RDL_ENOTSUP. */
#ifndef RDL_CORE_TLS_H
#define RDL_CORE_TLS_H

#include <stddef.h>

#include "rdl.h"

typedef struct rdl__tls_ctx rdl__tls_ctx;
typedef struct rdl__tls rdl__tls;

/* A context from opts (NULL: verify against the system's CAs). Reads the
 * CA and certificate files now, so that a bad path or a key that does not
 * match its certificate is reported at once (RDL_ETLS). */
int rdl__tls_ctx_new(const rdl_tls_options_t *opts, rdl__tls_ctx **out,
                     char *err, size_t errlen);
void rdl__tls_ctx_free(rdl__tls_ctx *x);

/* A client session to `host` (a name or an IP address): the name verified
 * and sent as SNI is the context's server_name if set, else host (an IP
 * address is matched against the certificate's address entries, and no
 * SNI is sent for it). */
int rdl__tls_new(rdl__tls_ctx *x, const char *host, rdl__tls **out, char *err,
                 size_t errlen);
void rdl__tls_free(rdl__tls *t);

/* Ciphertext read from the socket. Returns 0 or RDL_ENOMEM. */
int rdl__tls_feed(rdl__tls *t, const char *buf, size_t len);
/* Advances the handshake: 1 when it is complete, 0 while it needs more
 * input from the server, RDL_ETLS when it failed. */
int rdl__tls_handshake(rdl__tls *t, char *err, size_t errlen);
/* Decrypted bytes, up to cap: > 0 bytes, 0 when no more for now,
 * RDL_ECONNLOST when the server closed the session, RDL_ETLS on an alert
 * or a corrupt record (e.g. the server refused the client certificate:
 * with TLS 1.3 that comes after the client's handshake completed). */
int rdl__tls_read(rdl__tls *t, char *buf, size_t cap, char *err, size_t errlen);
/* Explains a connection that the server closed right after the handshake,
 * before answering a command: with TLS 1.3 that is how a server refuses a
 * missing or unknown client certificate when its alert is lost (a close
 * with unread data resets the connection, and the reset discards the
 * alert). */
void rdl__tls_closed_early(const rdl__tls *t, char *err, size_t errlen);
/* Encrypts len bytes. Returns 0, RDL_ETLS or RDL_ENOMEM. */
int rdl__tls_write(rdl__tls *t, const char *buf, size_t len, char *err,
                   size_t errlen);
/* Ciphertext waiting to be written to the socket: moves it into *buf (a
 * buffer from rdl__malloc that the caller frees) and its length into *len;
 * *len 0 and *buf NULL when there is none. Returns 0 or RDL_ENOMEM. */
int rdl__tls_take(rdl__tls *t, char **buf, size_t *len);

#endif
