/* TLS sessions over memory BIOs (docs/design.md#tls; see tls.h).
 *
 * Facts that shaped this file (measured with redis-server 7.0 and OpenSSL
 * 3.0):
 * - SSL_set1_host("127.0.0.1") does not match a certificate whose entry is
 *   IP:127.0.0.1, so an address is verified with
 *   X509_VERIFY_PARAM_set1_ip_asc, and no SNI is sent for it (RFC 6066
 *   allows host names only).
 * - A TLS hello to a plaintext port gets no answer: the connection's
 *   connect timer bounds the handshake (conn.c).
 * - With TLS 1.3 a server that refuses the client's certificate says so
 *   after the client's handshake completed, on the first read: conn.c
 *   reports a connection ready only after a command's reply, and the read
 *   error is explained here. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "tls.h"

#ifdef RDL_WITH_TLS

#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct rdl__tls_ctx {
    SSL_CTX *ctx;
    char *server_name; /* NULL: each connection's host */
    int insecure;
    int has_cert; /* a client certificate is configured */
};

struct rdl__tls {
    rdl__tls_ctx *x;
    SSL *ssl;
    BIO *in;    /* ciphertext from the socket, read by the session */
    BIO *out;   /* ciphertext from the session, for the socket */
    char *name; /* the name or address verified, for messages */
};

/* The reason of OpenSSL's oldest queued error, and the queue cleared. */
static unsigned long take_error(char *text, size_t len)
{
    unsigned long e = ERR_get_error(), last = e;
    if (text != NULL && len > 0)
        text[0] = '\0';
    if (e != 0 && text != NULL)
        ERR_error_string_n(e, text, len);
    while ((last = ERR_get_error()) != 0)
        ;
    return e;
}

static int ctx_fail(SSL_CTX *ctx, char *err, size_t errlen, const char *what,
                    const char *path)
{
    char why[160];
    take_error(why, sizeof(why));
    snprintf(err, errlen, "TLS: cannot use %s \"%.100s\": %s", what,
             path != NULL ? path : "", why[0] ? why : "unknown error");
    SSL_CTX_free(ctx);
    return RDL_ETLS;
}

static int load_files(SSL_CTX *ctx, const rdl_tls_options_t *o, char *err,
                      size_t errlen)
{
    if (o->ca_file != NULL || o->ca_dir != NULL) {
        if (SSL_CTX_load_verify_locations(ctx, o->ca_file, o->ca_dir) != 1)
            return ctx_fail(ctx, err, errlen,
                            o->ca_file != NULL ? "CA file" : "CA directory",
                            o->ca_file != NULL ? o->ca_file : o->ca_dir);
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        return ctx_fail(ctx, err, errlen, "the system's CAs", NULL);
    }
    if (o->key_file != NULL && o->cert_file == NULL) {
        snprintf(err, errlen, "TLS: key_file is set without cert_file");
        SSL_CTX_free(ctx);
        return RDL_ETLS;
    }
    if (o->cert_file != NULL) {
        const char *key = o->key_file != NULL ? o->key_file : o->cert_file;
        if (SSL_CTX_use_certificate_chain_file(ctx, o->cert_file) != 1)
            return ctx_fail(ctx, err, errlen, "certificate", o->cert_file);
        if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
            return ctx_fail(ctx, err, errlen, "private key", key);
        if (SSL_CTX_check_private_key(ctx) != 1)
            return ctx_fail(ctx, err, errlen,
                            "a key that does not match its certificate", key);
    }
    return 0;
}

int rdl__tls_ctx_new(const rdl_tls_options_t *opts, rdl__tls_ctx **out,
                     char *err, size_t errlen)
{
    static const rdl_tls_options_t none = {0};
    const rdl_tls_options_t *o = opts != NULL ? opts : &none;
    rdl__tls_ctx *x;
    SSL_CTX *ctx;
    int rc;

    ERR_clear_error();
    ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "TLS: cannot create a context");
        return RDL_ENOMEM;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    /* Writes of partial records never happen with memory BIOs, but the
     * buffer handed to SSL_write may move between retries. */
    SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, o->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                       NULL);
    if ((rc = load_files(ctx, o, err, errlen)) != 0)
        return rc;
    x = rdl__calloc(1, sizeof(*x));
    if (x == NULL || (o->server_name != NULL &&
                      (x->server_name = rdl__strdup(o->server_name)) == NULL)) {
        rdl__free(x);
        SSL_CTX_free(ctx);
        snprintf(err, errlen, "out of memory");
        return RDL_ENOMEM;
    }
    x->ctx = ctx;
    x->insecure = o->insecure != 0;
    x->has_cert = o->cert_file != NULL;
    *out = x;
    return 0;
}

void rdl__tls_ctx_free(rdl__tls_ctx *x)
{
    if (x == NULL)
        return;
    SSL_CTX_free(x->ctx);
    rdl__free(x->server_name);
    rdl__free(x);
}

static int is_address(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 ||
           inet_pton(AF_INET6, host, buf) == 1;
}

int rdl__tls_new(rdl__tls_ctx *x, const char *host, rdl__tls **out, char *err,
                 size_t errlen)
{
    const char *name = x->server_name != NULL ? x->server_name : host;
    rdl__tls *t = rdl__calloc(1, sizeof(*t));
    int ok;

    ERR_clear_error();
    if (t == NULL)
        goto nomem;
    t->x = x;
    t->name = rdl__strdup(name);
    t->ssl = SSL_new(x->ctx);
    t->in = BIO_new(BIO_s_mem());
    t->out = BIO_new(BIO_s_mem());
    if (t->name == NULL || t->ssl == NULL || t->in == NULL || t->out == NULL)
        goto nomem;
    /* An empty in-BIO means "more to come", not end of file. */
    BIO_set_mem_eof_return(t->in, -1);
    SSL_set_bio(t->ssl, t->in, t->out);
    SSL_set_connect_state(t->ssl);
    if (is_address(name)) {
        ok = x->insecure ||
             X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(t->ssl), name) == 1;
    } else {
        ok = SSL_set_tlsext_host_name(t->ssl, name) == 1 &&
             (x->insecure || SSL_set1_host(t->ssl, name) == 1);
    }
    if (!ok) {
        snprintf(err, errlen, "TLS: cannot verify the name \"%.100s\"", name);
        rdl__tls_free(t);
        return RDL_ETLS;
    }
    *out = t;
    return 0;

nomem:
    if (t != NULL) {
        if (t->ssl == NULL || SSL_get_rbio(t->ssl) != t->in) {
            BIO_free(t->in);
            BIO_free(t->out);
        }
        SSL_free(t->ssl);
        rdl__free(t->name);
        rdl__free(t);
    }
    snprintf(err, errlen, "out of memory");
    return RDL_ENOMEM;
}

void rdl__tls_free(rdl__tls *t)
{
    if (t == NULL)
        return;
    SSL_free(t->ssl); /* frees both BIOs */
    rdl__free(t->name);
    rdl__free(t);
}

int rdl__tls_feed(rdl__tls *t, const char *buf, size_t len)
{
    while (len > 0) {
        int n = BIO_write(t->in, buf, len > 1 << 30 ? 1 << 30 : (int)len);
        if (n <= 0)
            return RDL_ENOMEM;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Explains why the server's certificate was refused. */
static void explain_verify(rdl__tls *t, long v, char *err, size_t errlen)
{
    switch (v) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
        snprintf(err, errlen,
                 "TLS: the server's certificate does not match \"%s\" "
                 "(set server_name if the certificate names another host)",
                 t->name);
        break;
    case X509_V_ERR_CERT_HAS_EXPIRED:
        snprintf(err, errlen, "TLS: the server's certificate has expired");
        break;
    case X509_V_ERR_CERT_NOT_YET_VALID:
        snprintf(err, errlen,
                 "TLS: the server's certificate is not valid yet (check the "
                 "clocks)");
        break;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
        snprintf(err, errlen,
                 "TLS: the server's certificate is not signed by a trusted "
                 "CA (%s; set ca_file)",
                 X509_verify_cert_error_string(v));
        break;
    default:
        snprintf(err, errlen, "TLS: the server's certificate was refused: %s",
                 X509_verify_cert_error_string(v));
    }
}

/* Explains a failed handshake or read from OpenSSL's error queue. */
static void explain(rdl__tls *t, int ret, char *err, size_t errlen)
{
    char why[160];
    unsigned long e;
    int reason;
    long v = SSL_get_verify_result(t->ssl);

    if (v != X509_V_OK && !t->x->insecure) {
        take_error(NULL, 0);
        explain_verify(t, v, err, errlen);
        return;
    }
    e = take_error(why, sizeof(why));
    reason = ERR_GET_REASON(e);
    switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE:
        if (!t->x->has_cert) {
            snprintf(err, errlen,
                     "TLS: the server requires a client certificate (set "
                     "cert_file and key_file)");
            return;
        }
        break;
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
        if (t->x->has_cert) {
            snprintf(err, errlen,
                     "TLS: the server refused the client certificate (%s)",
                     why);
            return;
        }
        break;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
        snprintf(err, errlen,
                 "TLS: the server did not answer in TLS (is this a "
                 "plaintext port?)");
        return;
    default:
        break;
    }
    if (why[0] != '\0')
        snprintf(err, errlen, "TLS: %s", why);
    else
        snprintf(err, errlen, "TLS: handshake failed (SSL error %d)",
                 SSL_get_error(t->ssl, ret));
}

int rdl__tls_handshake(rdl__tls *t, char *err, size_t errlen)
{
    int ret;
    ERR_clear_error();
    ret = SSL_do_handshake(t->ssl);
    if (ret == 1)
        return 1;
    if (SSL_get_error(t->ssl, ret) == SSL_ERROR_WANT_READ)
        return 0;
    explain(t, ret, err, errlen);
    return RDL_ETLS;
}

int rdl__tls_read(rdl__tls *t, char *buf, size_t cap, char *err, size_t errlen)
{
    int ret, e;
    ERR_clear_error();
    ret = SSL_read(t->ssl, buf, cap > 1 << 30 ? 1 << 30 : (int)cap);
    if (ret > 0)
        return ret;
    e = SSL_get_error(t->ssl, ret);
    if (e == SSL_ERROR_WANT_READ)
        return 0;
    if (e == SSL_ERROR_ZERO_RETURN) {
        snprintf(err, errlen, "closed by the server");
        return RDL_ECONNLOST;
    }
    explain(t, ret, err, errlen);
    return RDL_ETLS;
}

void rdl__tls_closed_early(const rdl__tls *t, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s",
             t->x->has_cert
                 ? "TLS: the server closed the connection after the "
                   "handshake: it may have refused the client certificate"
                 : "TLS: the server closed the connection after the "
                   "handshake: it may require a client certificate (set "
                   "cert_file and key_file)");
}

int rdl__tls_write(rdl__tls *t, const char *buf, size_t len, char *err,
                   size_t errlen)
{
    while (len > 0) {
        int n;
        ERR_clear_error();
        n = SSL_write(t->ssl, buf, len > 1 << 30 ? 1 << 30 : (int)len);
        if (n <= 0) {
            /* The out-BIO grows as needed, so only a failed session (or a
             * renegotiation, which Redis never asks for) gets here. */
            explain(t, n, err, errlen);
            return RDL_ETLS;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int rdl__tls_take(rdl__tls *t, char **buf, size_t *len)
{
    size_t n = BIO_ctrl_pending(t->out);
    char *b;
    *buf = NULL;
    *len = 0;
    if (n == 0)
        return 0;
    b = rdl__malloc(n);
    if (b == NULL)
        return RDL_ENOMEM;
    if (BIO_read(t->out, b, (int)n) != (int)n) {
        rdl__free(b);
        return RDL_ENOMEM;
    }
    *buf = b;
    *len = n;
    return 0;
}

#else /* !RDL_WITH_TLS */

static int no_tls(char *err, size_t errlen)
{
    snprintf(err, errlen,
             "TLS is not available: rdl was built with "
             "RDL_WITH_TLS=OFF");
    return RDL_ENOTSUP;
}

int rdl__tls_ctx_new(const rdl_tls_options_t *opts, rdl__tls_ctx **out,
                     char *err, size_t errlen)
{
    (void)opts;
    (void)out;
    return no_tls(err, errlen);
}

void rdl__tls_ctx_free(rdl__tls_ctx *x)
{
    (void)x;
}

int rdl__tls_new(rdl__tls_ctx *x, const char *host, rdl__tls **out, char *err,
                 size_t errlen)
{
    (void)x;
    (void)host;
    (void)out;
    return no_tls(err, errlen);
}

void rdl__tls_free(rdl__tls *t)
{
    (void)t;
}

int rdl__tls_feed(rdl__tls *t, const char *buf, size_t len)
{
    (void)t;
    (void)buf;
    (void)len;
    return RDL_ENOTSUP;
}

int rdl__tls_handshake(rdl__tls *t, char *err, size_t errlen)
{
    (void)t;
    return no_tls(err, errlen);
}

int rdl__tls_read(rdl__tls *t, char *buf, size_t cap, char *err, size_t errlen)
{
    (void)t;
    (void)buf;
    (void)cap;
    return no_tls(err, errlen);
}

void rdl__tls_closed_early(const rdl__tls *t, char *err, size_t errlen)
{
    (void)t;
    no_tls(err, errlen);
}

int rdl__tls_write(rdl__tls *t, const char *buf, size_t len, char *err,
                   size_t errlen)
{
    (void)t;
    (void)buf;
    (void)len;
    return no_tls(err, errlen);
}

int rdl__tls_take(rdl__tls *t, char **buf, size_t *len)
{
    (void)t;
    *buf = NULL;
    *len = 0;
    return RDL_ENOTSUP;
}

#endif
