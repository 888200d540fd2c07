/* rdl release --force: frees a lock whoever holds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_usage_release(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] release\n"
          "           [--kind lock|fair|rwlock:read|rwlock:write|semaphore]\n"
          "           [--permits N] --force NAME\n"
          "\n"
          "Frees NAME whoever holds it, and says what it freed. Its holders\n"
          "are not told until they renew or release (an 'rdl run' holding it\n"
          "signals its command, as --on-lost says). The rwlock:read and\n"
          "rwlock:write kinds free the whole read-write lock; a semaphore's\n"
          "every permit. Exit 0 also when it was free.\n"
          "\n"
          "  --kind K      the lock's kind (default lock), as for rdl run\n"
          "  --permits N   semaphore: the total to assume if Redis has none\n"
          "  --force       required: a hold is released by its owner\n",
          f);
}

int cli_release(const cli *g, int argc, char **argv)
{
    const char *kind, *name;
    rdl_lock_info_t info;
    rdl_client_t *c;
    cli_lock l;
    uint32_t permits;
    int force = 0, rc;

    rc = cli_parse_named(argc, argv, "release", "--force", &force, &kind,
                         &permits, &name, cli_usage_release);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (!force) {
        cli_error("release", "only --force releases exist: a hold is "
                             "released by its owner");
        cli_usage_release(stderr);
        return EXIT_USAGE;
    }
    if ((rc = cli_open(g, 0, kind, name, permits, &c, &l)) != 0)
        return rc;
    rc = rdl_lock_info(l.lock, 0, &info);
    if (rc == 0) {
        rc = rdl_lock_force_release(l.lock);
        if (rc == 0)
            printf("freed %s (%s): %u holder%s, lease %lld ms left, latest "
                   "fencing token %llu\n",
                   name, kind, info.holders, info.holders == 1 ? "" : "s",
                   (long long)info.ttl_ms,
                   (unsigned long long)info.fencing_token);
        else if (rc == RDL_ENOTHELD) {
            printf("%s (%s) was not held\n", name, kind);
            rc = 0;
        }
    }
    if (rc != 0)
        cli_error(name, "%s (%s)", rdl_client_errmsg(c), rdl_err_name(rc));
    cli_lock_free(&l);
    rdl_client_free(c);
    return rc == 0 ? 0 : cli_exit_code(rc);
}
