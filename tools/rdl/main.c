/* rdl(1): flock(1) for a fleet of machines.
 *
 *   rdl [--url URL] [--prefix P] [--timeout MS] [-v]
 *       [--cacert F] [--cert F] [--key F] [--sni NAME] [--insecure] COMMAND ...
 *   rdl run [--kind K] [--wait MS|forever] [--lease MS|auto]
 *           [--on-lost term|kill|ignore] NAME -- CMD [ARGS...]
 *   rdl info NAME [--kind K] [--json]
 *   rdl release NAME --force [--kind K]
 *   rdl ls [--json] [--held] [--sort name|waiters] [PATTERN]
 *   rdl top [--once] [--json] [--held] [--interval MS] [PATTERN]
 *
 * Exit codes follow sysexits.h: 64 usage, 69 Redis unreachable, 70 other
 * failures, 75 not acquired within --wait; `run` otherwise exits with
 * CMD's status (128 + the signal that killed it). See docs/rdl.1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fputs("usage: rdl [--url URL] [--prefix P] [--timeout MS] [-v] COMMAND\n"
          "       rdl --help | --version\n"
          "\n"
          "commands:\n"
          "  run      hold a lock while a command runs\n"
          "  info     show who holds a lock\n"
          "  release  free a lock whoever holds it (--force)\n"
          "  ls       list the locks, their holders and waiters\n"
          "  top      the same, refreshed: the busiest locks first\n"
          "\n"
          "global options:\n"
          "  --url URL     redis://[user[:password]@]host[:port][/db],\n"
          "                redis+cluster://host:port[,host:port...] or\n"
          "                redis+sentinel://host:port[,host:port...]/MASTER;\n"
          "                rediss... for TLS\n"
          "                (default: $RDL_URL, else redis://127.0.0.1:6379)\n"
          "  --prefix P    key prefix (default: rdl)\n"
          "  --timeout MS  connect and command timeout\n"
          "  -v            say what happens, on stderr\n"
          "  -h, --help    this help\n"
          "  --version     the version of rdl (of the library the tool runs\n"
          "                with; and of the headers it was built with, if\n"
          "                they differ)\n"
          "\n"
          "TLS options (rediss URLs; the server is verified by default):\n"
          "  --cacert F    trust the CAs in PEM file F (default: the "
          "system's)\n"
          "  --cert F      client certificate (PEM) for mutual TLS\n"
          "  --key F       its private key (default: in --cert's file)\n"
          "  --sni NAME    the server name to send and verify (default: the\n"
          "                URL's host)\n"
          "  --insecure    skip verification (testing only)\n"
          "\n"
          "'rdl COMMAND --help' describes a command.\n",
          f);
}

int main(int argc, char **argv)
{
    cli g;
    int i, rc = cli_parse_global(argc, argv, &g, &i, usage);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (strcmp(argv[i], "run") == 0)
        return cli_run(&g, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "info") == 0)
        return cli_info(&g, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "release") == 0)
        return cli_release(&g, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "ls") == 0)
        return cli_ls(&g, argc - i - 1, argv + i + 1);
    if (strcmp(argv[i], "top") == 0)
        return cli_top(&g, argc - i - 1, argv + i + 1);
    cli_error("usage", "unknown command \"%s\"", argv[i]);
    usage(stderr);
    return EXIT_USAGE;
}
