/* How the examples pick their server: the URL from RDL_URL (any form rdl
 * takes: redis://, rediss://, redis+cluster://, redis+sentinel://, ...),
 * and for TLS the files named by RDL_TLS_CA (trusted CAs), RDL_TLS_CERT
 * and RDL_TLS_KEY (a client certificate and its key), all PEM. In your
 * program these would come from its configuration. */
#ifndef RDL_EXAMPLE_SERVER_H
#define RDL_EXAMPLE_SERVER_H

#include <stdlib.h>
#include <string.h>

#include <rdl.h>

static inline int example_set_server(rdl_client_t *c, const char *url)
{
    rdl_tls_options_t tls;
    int rc = rdl_client_set_url(c, url);
    /* memset, not "= {0}": examples/cpp_guard.cpp includes this file, and
     * C++ warns about the fields "= {0}" leaves out. */
    memset(&tls, 0, sizeof(tls));
    if (rc != 0)
        return rc;
    tls.ca_file = getenv("RDL_TLS_CA");
    tls.cert_file = getenv("RDL_TLS_CERT");
    tls.key_file = getenv("RDL_TLS_KEY");
    if (tls.ca_file == NULL && tls.cert_file == NULL)
        return 0; /* rediss: the system's CAs */
    return rdl_client_set_tls(c, &tls);
}

#endif
