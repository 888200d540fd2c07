/* What the subcommands share: messages, durations, connecting, lock kinds
 * and the mapping of rdl errors to exit codes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_error(const char *what, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rdl: %s: ", what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_note(const cli *g, const char *fmt, ...)
{
    va_list ap;
    if (!g->verbose)
        return;
    fputs("rdl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_duration(const char *s, const char *word, int64_t word_value,
                 int64_t *out)
{
    char *end;
    long long v;
    if (word != NULL && strcmp(s, word) == 0) {
        *out = word_value;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    /* Too large is refused, not taken as the largest value there is. */
    if (*end != '\0' || v < 0 || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

int cli_exit_code(int rc)
{
    switch (rc) {
    case RDL_ECONNREFUSED:
    case RDL_ECONNLOST:
    case RDL_ECMDTIMEOUT:
    case RDL_EAUTH:
    case RDL_ECLUSTERDOWN:
    case RDL_ETLS:
    case RDL_ENOMASTER:
        return EXIT_UNAVAILABLE;
    case RDL_EBUSY:
    case RDL_ETIMEDOUT:
        return EXIT_TEMPFAIL;
    case RDL_EINVAL:
        return EXIT_USAGE;
    default:
        return EXIT_SOFTWARE;
    }
}

rdl_client_t *cli_connect(const cli *g, int64_t watchdog_ms)
{
    rdl_client_t *c = NULL;
    int rc = rdl_client_new(&c);
    if (rc != 0) {
        cli_error("client", "%s", rdl_strerror(rc));
        exit(EXIT_SOFTWARE);
    }
    if ((rc = rdl_client_set_url(c, g->url)) != 0) {
        cli_error("--url", "%s", rdl_client_errmsg(c));
        exit(EXIT_USAGE);
    }
    if (g->tls_set && (rc = rdl_client_set_tls(c, &g->tls)) != 0) {
        cli_error("TLS options", "%s", rdl_client_errmsg(c));
        exit(rc == RDL_ENOTSUP ? EXIT_SOFTWARE : EXIT_USAGE);
    }
    if (g->prefix != NULL && (rc = rdl_client_set_prefix(c, g->prefix)) != 0) {
        cli_error("--prefix", "%s", rdl_client_errmsg(c));
        exit(EXIT_USAGE);
    }
    if (g->timeout_ms > 0 && (rc = rdl_client_set_timeouts_ms(
                                  c, g->timeout_ms, g->timeout_ms)) != 0) {
        cli_error("--timeout", "%s", rdl_client_errmsg(c));
        exit(EXIT_USAGE);
    }
    if (watchdog_ms > 0 &&
        (rc = rdl_client_set_watchdog_ms(c, watchdog_ms)) != 0) {
        cli_error("--lease", "%s", rdl_client_errmsg(c));
        exit(EXIT_USAGE);
    }
    cli_note(g, "connecting to %s", g->url);
    if ((rc = rdl_client_connect(c)) != 0) {
        /* One line that names the address (the message does). */
        cli_error("cannot connect", "%s (%s)", rdl_client_errmsg(c),
                  rdl_err_name(rc));
        rdl_client_free(c);
        exit(cli_exit_code(rc) == EXIT_USAGE ? EXIT_USAGE : EXIT_UNAVAILABLE);
    }
    return c;
}

/* The length of the UTF-8 sequence at s (1..4), 0 if none starts there:
 * no overlong forms, surrogates or code points past U+10FFFF. */
static int utf8_len(const unsigned char *s)
{
    int n, i;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4;
    else
        return 0;
    for (i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
        return 0;
    return n;
}

void cli_json_string(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    putchar('"');
    while (*p != '\0') {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            printf("\\u%04x", *p);
        else if (n == 0)
            fputs("\\ufffd", stdout);
        else
            fwrite(p, 1, (size_t)n, stdout);
        p += n > 0 ? n : 1;
    }
    putchar('"');
}

const char *const cli_kinds = "lock|fair|rwlock:read|rwlock:write|semaphore";

const char *cli_kind_name(const char *kind)
{
    /* The names of the read-write lock's views before they were named
     * for their kind; still taken. */
    if (strcmp(kind, "read") == 0)
        return "rwlock:read";
    if (strcmp(kind, "write") == 0)
        return "rwlock:write";
    return kind;
}

int cli_permits(const char *s, uint32_t *out)
{
    char *end;
    unsigned long v;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    v = strtoul(s, &end, 10);
    if (*end != '\0' || v < 1 || v > RDL_SEMAPHORE_MAX_PERMITS)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int cli_lock_open(rdl_client_t *c, const char *kind, const char *name,
                  uint32_t permits, cli_lock *out)
{
    int rc;
    memset(out, 0, sizeof(*out));
    kind = cli_kind_name(kind);
    if (strcmp(kind, "lock") == 0)
        return rdl_lock_new(c, name, &out->lock);
    if (strcmp(kind, "fair") == 0)
        return rdl_fairlock_new(c, name, &out->lock);
    if (strcmp(kind, "semaphore") == 0)
        return rdl_semaphore_new(c, name, permits, &out->lock);
    if (strcmp(kind, "rwlock:read") != 0 && strcmp(kind, "rwlock:write") != 0)
        return 1;
    if ((rc = rdl_rwlock_new(c, name, &out->rw)) != 0)
        return rc;
    out->lock = strcmp(kind, "rwlock:read") == 0 ? rdl_rwlock_read(out->rw)
                                                 : rdl_rwlock_write(out->rw);
    return 0;
}

void cli_lock_free(cli_lock *l)
{
    if (l->rw != NULL)
        rdl_rwlock_free(l->rw);
    else
        rdl_lock_free(l->lock);
    memset(l, 0, sizeof(*l));
}

int cli_open(const cli *g, int64_t watchdog_ms, const char *kind,
             const char *name, uint32_t permits, rdl_client_t **c, cli_lock *l)
{
    int rc;
    *c = cli_connect(g, watchdog_ms);
    rc = cli_lock_open(*c, kind, name, permits, l);
    if (rc == 0)
        return 0;
    if (rc == 1)
        cli_error("--kind", "unknown kind \"%s\" (use %s)", kind, cli_kinds);
    else
        cli_error(name, "%s", rdl_client_errmsg(*c));
    rdl_client_free(*c);
    *c = NULL;
    return rc == 1 ? EXIT_USAGE : cli_exit_code(rc);
}

int cli_parse_named(int argc, char **argv, const char *cmd, const char *flag,
                    int *flag_set, const char **kind, uint32_t *permits,
                    const char **name, void (*usage)(FILE *f))
{
    int i;
    *kind = "lock";
    *permits = 1;
    *name = NULL;
    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(argv[i], flag) == 0) {
            *flag_set = 1;
        } else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
            *kind = argv[++i];
        } else if (strcmp(argv[i], "--permits") == 0 && i + 1 < argc) {
            if (cli_permits(argv[++i], permits) != 0) {
                cli_error("--permits", "expected 1..%u, got \"%s\"",
                          RDL_SEMAPHORE_MAX_PERMITS, argv[i]);
                return EXIT_USAGE;
            }
        } else if (argv[i][0] == '-' || *name != NULL) {
            cli_error(cmd, "unexpected argument \"%s\"", argv[i]);
            usage(stderr);
            return EXIT_USAGE;
        } else {
            *name = argv[i];
        }
    }
    if (*name == NULL) {
        cli_error(cmd, "no lock NAME given");
        usage(stderr);
        return EXIT_USAGE;
    }
    return 0;
}

/* --cacert, --cert, --key, --sni: 1 if `a` is one (and takes v). */
static int tls_option(cli *g, const char *a, const char *v)
{
    if (strcmp(a, "--cacert") == 0)
        g->tls.ca_file = v;
    else if (strcmp(a, "--cert") == 0)
        g->tls.cert_file = v;
    else if (strcmp(a, "--key") == 0)
        g->tls.key_file = v;
    else if (strcmp(a, "--sni") == 0)
        g->tls.server_name = v;
    else
        return 0;
    g->tls_set = 1;
    return 1;
}

/* rdl --version: the library's version, the one that runs; and the
 * headers' too when the tool was built against others. */
static void print_version(void)
{
    const char *library = rdl_version_string();
    printf("rdl %s\n", library);
    if (strcmp(library, RDL_VERSION_STRING) != 0)
        printf("rdl: built with the headers of rdl %s, running with "
               "librdl %s\n",
               RDL_VERSION_STRING, library);
}

int cli_parse_global(int argc, char **argv, cli *g, int *cmd,
                     void (*usage)(FILE *f))
{
    int i;

    memset(g, 0, sizeof(*g));
    g->url = getenv("RDL_URL");
    if (g->url == NULL || g->url[0] == '\0')
        g->url = "redis://127.0.0.1:6379";
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return -1;
        }
        if (strcmp(a, "--version") == 0) {
            print_version();
            return -1;
        }
        if (strcmp(a, "-v") == 0) {
            g->verbose = 1;
            continue;
        }
        if (strcmp(a, "--insecure") == 0) {
            g->tls.insecure = 1;
            g->tls_set = 1;
            continue;
        }
        if (i + 1 < argc && tls_option(g, a, argv[i + 1])) {
            i++;
            continue;
        }
        if ((strcmp(a, "--url") == 0 || strcmp(a, "--prefix") == 0 ||
             strcmp(a, "--timeout") == 0) &&
            i + 1 < argc) {
            const char *v = argv[++i];
            if (a[2] == 'u') {
                g->url = v;
            } else if (a[2] == 'p') {
                g->prefix = v;
            } else if (cli_duration(v, NULL, 0, &g->timeout_ms) != 0 ||
                       g->timeout_ms < 1) {
                cli_error("--timeout", "expected milliseconds >= 1, got \"%s\"",
                          v);
                return EXIT_USAGE;
            }
            continue;
        }
        cli_error("usage", "unknown or incomplete option \"%s\"", a);
        usage(stderr);
        return EXIT_USAGE;
    }
    if (i == argc) {
        cli_error("usage", "no command given");
        usage(stderr);
        return EXIT_USAGE;
    }
    *cmd = i;
    return 0;
}
