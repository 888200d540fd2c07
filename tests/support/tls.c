/* A throwaway public-key infrastructure for the TLS tests, made with the
 * openssl tool, and redis-server started with it (rdlt.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdlt.h"

static void remove_pki(void *p)
{
    rdlt_pki *k = p;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", k->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "rdlt: could not remove %s\n", k->dir);
    free(k);
}

/* Runs an openssl command line in the PKI's directory, quietly. */
static void run(const rdlt_pki *k, const char *fmt, ...)
{
    char line[1400], cmd[1700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "cd '%s' && %s >>openssl.log 2>&1", k->dir,
             line);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof(cmd), "cat '%s/openssl.log' >&2", k->dir);
        (void)system(cmd);
        fail_msg("rdlt: openssl failed: %s", line);
    }
}

/* The certificate extensions of `name` (name.ext in the PKI directory). */
static void write_ext(const rdlt_pki *k, const char *name, const char *san)
{
    char path[400];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s.ext", k->dir, name);
    f = fopen(path, "w");
    if (f == NULL)
        fail_msg("rdlt: cannot write %s", path);
    fprintf(f, "subjectAltName=%s\n", san);
    fclose(f);
}

#define NEWKEY "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"

static void make_ca(const rdlt_pki *k, const char *name)
{
    run(k,
        "openssl req -x509 " NEWKEY " -keyout %s.key -out %s.crt "
        "-subj /CN=%s -days 3",
        name, name, name);
}

/* A certificate for key `key` (made if absent), signed by CA `ca`. */
static void make_cert(const rdlt_pki *k, const char *name, const char *key,
                      const char *cn, const char *san, const char *ca, int days)
{
    char keyfile[300];
    snprintf(keyfile, sizeof(keyfile), "%s.key", key);
    if (access(keyfile, F_OK) == 0)
        run(k, "openssl req -new -key %s -out %s.csr -subj /CN=%s", keyfile,
            name, cn);
    else
        run(k,
            "openssl req -new " NEWKEY " -keyout %s -out %s.csr -subj /CN=%s",
            keyfile, name, cn);
    write_ext(k, name, san);
    run(k,
        "openssl x509 -req -in %s.csr -CA %s.crt -CAkey %s.key "
        "-CAcreateserial -out %s.crt -days %d -extfile %s.ext",
        name, ca, ca, name, days, name);
}

const rdlt_pki *rdlt_pki_make(void)
{
    const char *tmp = getenv("RDL_TEST_TMPDIR");
    rdlt_pki *k = calloc(1, sizeof(*k));
    char *cwd;

    if (system("openssl version >/dev/null 2>&1") != 0) {
        if (getenv("CI") != NULL && getenv("CI")[0] != '\0')
            fail_msg("rdlt: the openssl tool is missing");
        print_message("rdlt: no openssl tool; skipping\n");
        skip();
    }
    if (tmp == NULL || tmp[0] == '\0')
        tmp = getenv("TMPDIR");
    assert_non_null(k);
    snprintf(k->dir, sizeof(k->dir), "%s/rdlt-pki-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(k->dir) == NULL) {
        free(k);
        fail_msg("rdlt: mkdtemp: %s", strerror(errno));
    }
    rdlt_defer(remove_pki, k);
    /* make_cert tests for an existing key relative to the PKI directory. */
    cwd = getcwd(NULL, 0);
    assert_non_null(cwd);
    assert_int_equal(chdir(k->dir), 0);
    make_ca(k, "ca");
    make_ca(k, "other_ca");
    make_cert(k, "server", "server", "localhost", "IP:127.0.0.1,DNS:localhost",
              "ca", 2);
    make_cert(k, "wrong_name", "server", "elsewhere.example",
              "DNS:elsewhere.example", "ca", 2);
    make_cert(k, "expired", "server", "localhost", "IP:127.0.0.1,DNS:localhost",
              "ca", -1);
    make_cert(k, "untrusted", "server", "localhost",
              "IP:127.0.0.1,DNS:localhost", "other_ca", 2);
    make_cert(k, "client", "client", "rdl-test-client", "DNS:rdl-test-client",
              "ca", 2);
    make_cert(k, "stranger", "stranger", "rdl-test-stranger",
              "DNS:rdl-test-stranger", "other_ca", 2);
    assert_int_equal(chdir(cwd), 0);
    free(cwd);
#define FILE_OF(field, name)                                                   \
    snprintf(k->field, sizeof(k->field), "%s/" name, k->dir)
    FILE_OF(ca, "ca.crt");
    FILE_OF(other_ca, "other_ca.crt");
    FILE_OF(server, "server.crt");
    FILE_OF(server_key, "server.key");
    FILE_OF(wrong_name, "wrong_name.crt");
    FILE_OF(expired, "expired.crt");
    FILE_OF(untrusted, "untrusted.crt");
    FILE_OF(client, "client.crt");
    FILE_OF(client_key, "client.key");
    FILE_OF(stranger, "stranger.crt");
    FILE_OF(stranger_key, "stranger.key");
#undef FILE_OF
    return k;
}

rdlt_server *rdlt_tls_server_start(const rdlt_pki *pki, const char *cert,
                                   int auth_clients, const char *const *extra)
{
    const char *args[32];
    int n = 0, i;
    args[n++] = "--tls-port";
    args[n++] = "auto";
    args[n++] = "--tls-cert-file";
    args[n++] = cert;
    args[n++] = "--tls-key-file";
    args[n++] = pki->server_key;
    args[n++] = "--tls-ca-cert-file";
    args[n++] = pki->ca;
    args[n++] = "--tls-auth-clients";
    args[n++] = auth_clients ? "yes" : "no";
    for (i = 0; extra != NULL && extra[i] != NULL; i++) {
        if (n == 31)
            fail_msg("rdlt: too many server arguments");
        args[n++] = extra[i];
    }
    args[n] = NULL;
    return rdlt_server_start_args(args);
}
