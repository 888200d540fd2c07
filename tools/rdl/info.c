/* rdl info: the state of a lock, as text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_usage_info(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] info\n"
          "           [--kind lock|fair|rwlock:read|rwlock:write|semaphore]\n"
          "           [--permits N] [--json] NAME\n"
          "\n"
          "Shows whether NAME is held, by how many owners, the holder's hold\n"
          "count, for how long the lease runs, the latest fencing token and\n"
          "the number of waiters\n"
          "(fair lock queue, waiting writers of a read-write lock).\n"
          "For a semaphore: the permits in use and the total in force.\n"
          "\n"
          "  --kind K      the lock's kind (default lock), as for rdl run\n"
          "  --permits N   semaphore: the total to assume if Redis has none\n"
          "  --json        one JSON object\n",
          f);
}

int cli_info(const cli *g, int argc, char **argv)
{
    const char *kind, *name;
    rdl_lock_info_t info;
    rdl_client_t *c;
    cli_lock l;
    uint32_t permits;
    int json = 0, rc;

    rc = cli_parse_named(argc, argv, "info", "--json", &json, &kind, &permits,
                         &name, cli_usage_info);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if ((rc = cli_open(g, 0, kind, name, permits, &c, &l)) != 0)
        return rc;
    if ((rc = rdl_lock_info(l.lock, 0, &info)) != 0) {
        cli_error(name, "%s (%s)", rdl_client_errmsg(c), rdl_err_name(rc));
        cli_lock_free(&l);
        rdl_client_free(c);
        return cli_exit_code(rc);
    }
    if (json) {
        printf("{\"name\":");
        cli_json_string(name);
        printf(",\"kind\":");
        cli_json_string(cli_kind_name(kind));
        printf(",\"locked\":%s,\"holders\":%u,\"ttl_ms\":%lld,"
               "\"hold_count\":%u,\"fencing_token\":%llu,\"waiters\":%u,"
               "\"permits\":%u}\n",
               info.locked ? "true" : "false", info.holders,
               (long long)info.ttl_ms, info.holder_count,
               (unsigned long long)info.fencing_token, info.waiters,
               info.permits);
    } else {
        printf("name:          %s\n", name);
        printf("kind:          %s\n", cli_kind_name(kind));
        printf("locked:        %s\n", info.locked ? "yes" : "no");
        if (strcmp(kind, "semaphore") == 0)
            printf("permits:       %u in use of %u\n", info.holders,
                   info.permits);
        else
            printf("holders:       %u\n", info.holders);
        if (info.holder_count > 0)
            printf("hold count:    %u (the %s's)\n", info.holder_count,
                   strncmp(cli_kind_name(kind), "rwlock:", 7) == 0 ? "writer"
                                                                   : "holder");
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
