/* rdl release --force: frees a lock whoever holds it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_usage_release(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] release [--kind lock|fair|read|write]\n"
          "           --force NAME\n"
          "\n"
          "Frees NAME whoever holds it, and says what it freed. Its holders\n"
          "are not told until they renew or release (an 'rdl run' holding it\n"
          "signals its command, as --on-lost says). The read and write kinds\n"
          "free the whole read-write lock. Exit 0 also when it was free.\n",
          f);
}

int cli_release(const cli *g, int argc, char **argv)
{
    const char *kind = "lock", *name = NULL;
    rdl_lock_info_t info;
    rdl_client_t *c;
    cli_lock l;
    int i, force = 0, rc;

    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_usage_release(stdout);
            return 0;
        } else if (strcmp(argv[i], "--force") == 0) {
            force = 1;
        } else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc) {
            kind = argv[++i];
        } else if (argv[i][0] == '-' || name != NULL) {
            cli_error("release", "unexpected argument \"%s\"", argv[i]);
            cli_usage_release(stderr);
            return EXIT_USAGE;
        } else {
            name = argv[i];
        }
    }
    if (name == NULL || !force) {
        cli_error("release", name == NULL ? "no lock NAME given"
                                          : "only --force releases exist: a "
                                            "hold is released by its owner");
        cli_usage_release(stderr);
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
    if (l.lock != NULL)
        cli_lock_free(&l);
    rdl_client_free(c);
    return rc == 0 ? 0 : cli_exit_code(rc);
}
