/* rdl info: the state of a lock, as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_usage_info(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] info [--kind lock|fair|read|write]\n"
          "           [--json] NAME\n"
          "\n"
          "Shows whether NAME is held, by how many owners, for how long the\n"
          "lease runs, the latest fencing token and the number of waiters\n"
          "(fair lock queue, waiting writers of a read-write lock).\n",
          f);
}

/* Writes s as a JSON string. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

int cli_info(const cli *g, int argc, char **argv)
{
    const char *kind = "lock", *name = NULL;
    rdl_lock_info_t info;
    rdl_client_t *c;
    cli_lock l;
    int i, json = 0, rc;

    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_usage_info(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
            kind = argv[++i];
        } else if (argv[i][0] == '-' || name != NULL) {
            cli_error("info", "unexpected argument \"%s\"", argv[i]);
            cli_usage_info(stderr);
            return EXIT_USAGE;
        } else {
            name = argv[i];
        }
    }
    if (name == NULL) {
        cli_error("info", "no lock NAME given");
        cli_usage_info(stderr);
        return EXIT_USAGE;
    }
    c = cli_connect(g, 0);
    rc = cli_lock_open(c, kind, name, &l);
    if (rc == 1) {
        cli_error("--kind", "unknown kind \"%s\" (use %s)", kind, cli_kinds);
        rdl_client_free(c);
        return EXIT_USAGE;
    }
    if (rc == 0)
        rc = rdl_lock_info(l.lock, 0, &info);
    if (rc != 0) {
        cli_error(name, "%s (%s)", rdl_client_errmsg(c), rdl_err_name(rc));
        if (l.lock != NULL)
            cli_lock_free(&l);
        rdl_client_free(c);
        return cli_exit_code(rc);
    }
    if (json) {
        printf("{\"name\":");
        json_string(name);
        printf(",\"kind\":");
        json_string(kind);
        printf(",\"locked\":%s,\"holders\":%u,\"ttl_ms\":%lld,"
               "\"fencing_token\":%llu,\"waiters\":%u}\n",
               info.locked ? "true" : "false", info.holders,
               (long long)info.ttl_ms, (unsigned long long)info.fencing_token,
               info.waiters);
    } else {
        printf("name:          %s\n", name);
        printf("kind:          %s\n", kind);
        printf("locked:        %s\n", info.locked ? "yes" : "no");
        printf("holders:       %u\n", info.holders);
        if (info.locked)
            printf("ttl:           %lld ms\n", (long long)info.ttl_ms);
        printf("fencing token: %llu (latest issued)\n",
               (unsigned long long)info.fencing_token);
        printf("waiters:       %u\n", info.waiters);
    }
    cli_lock_free(&l);
    rdl_client_free(c);
    return 0;
}
