/* Fuzz target `tls`: TLS options and what a TLS server sends
 * (src/core/tls.c). The input is a flags byte (bit 0: insecure, bit 1: a
 * server_name is set), the server_name and the host (each up to a NUL:
 * strings from rdl_tls_options_t and from the URL), then bytes fed to
 * the session as the server's answer to its ClientHello, in pieces of
 * 1..256 bytes (each piece's length from its first byte), each followed
 * by a step of the handshake, or a read once it is done.
 *
 * Invariants: a context and session are made for any names (or refused
 * with RDL_ETLS and a message); the ClientHello is produced at once;
 * every failure of the handshake or a read says why; ciphertext is
 * always taken whole. */
#include "fuzz.h"

#include "alloc.h"
#include "tls.h"

static void take_all(rdl__tls *t)
{
    char *buf;
    size_t len;
    FUZZ_CHECK(rdl__tls_take(t, &buf, &len) == 0);
    FUZZ_CHECK((buf == NULL) == (len == 0));
    rdl__free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rdl_tls_options_t o;
    rdl__tls_ctx *x = NULL;
    rdl__tls *t = NULL;
    char *sni, *host, err[300], *buf, plain[512];
    size_t len;
    int flags, rc, done = 0;

    if (size < 1)
        return 0;
    flags = data[0];
    data++;
    size--;
    sni = fuzz_take(&data, &size);
    host = fuzz_take(&data, &size);
    if (sni == NULL || host == NULL)
        goto out;
    memset(&o, 0, sizeof(o));
    o.insecure = flags & 1;
    o.server_name = flags & 2 ? sni : NULL;
    /* Not the system's CAs: loading that bundle takes 45 ms per context
     * (20 inputs a second). A CA directory is only looked into when a
     * certificate is verified, and none of the server's will be. */
    o.ca_dir = "/nonexistent/rdl-fuzz";
    err[0] = '\0';
    rc = rdl__tls_ctx_new(&o, &x, err, sizeof(err));
    FUZZ_CHECK(rc == 0);
    err[0] = '\0';
    rc = rdl__tls_new(x, host, &t, err, sizeof(err));
    if (rc != 0) {
        FUZZ_CHECK(rc == RDL_ETLS && err[0] != '\0' && t == NULL);
        goto out;
    }
    /* The ClientHello. */
    FUZZ_CHECK(rdl__tls_handshake(t, err, sizeof(err)) == 0);
    FUZZ_CHECK(rdl__tls_take(t, &buf, &len) == 0 && len > 0);
    rdl__free(buf);
    while (size > 0) {
        size_t n = 1 + data[0];
        if (n > size)
            n = size;
        FUZZ_CHECK(rdl__tls_feed(t, (const char *)data, n) == 0);
        data += n;
        size -= n;
        err[0] = '\0';
        if (!done) {
            rc = rdl__tls_handshake(t, err, sizeof(err));
            FUZZ_CHECK(rc == 0 || rc == 1 || rc == RDL_ETLS);
            if (rc == RDL_ETLS) {
                FUZZ_CHECK(err[0] != '\0');
                take_all(t); /* an alert for the server */
                break;
            }
            done = rc == 1;
        } else {
            rc = rdl__tls_read(t, plain, sizeof(plain), err, sizeof(err));
            FUZZ_CHECK(rc >= 0 || rc == RDL_ETLS || rc == RDL_ECONNLOST);
            FUZZ_CHECK(rc <= (int)sizeof(plain));
            if (rc < 0) {
                FUZZ_CHECK(err[0] != '\0');
                break;
            }
        }
        take_all(t);
    }
    err[0] = '\0';
    rdl__tls_closed_early(t, err, sizeof(err));
    FUZZ_CHECK(err[0] != '\0');
out:
    rdl__tls_free(t);
    rdl__tls_ctx_free(x);
    free(sni);
    free(host);
    return 0;
}
