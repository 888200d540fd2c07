/* Fuzz target `args`: the rdl tool's argument parsing (tools/rdl): the
 * global options (cli_parse_global), then the command's own: run
 * (cli_parse_run), info and release (cli_parse_named), ls and top
 * (cli_parse_ls), and the values they read (durations, --permits). The
 * input is the argument vector after the program's name, its arguments
 * separated by NUL bytes. Nothing connects, spawns or exits: only the
 * parsing runs. The names parsed are also written out as JSON strings
 * (cli_json_string, what --json prints), to a stdout that goes nowhere.
 *
 * Invariants: the command word is an argument and no option; every
 * value taken is in its range (timeout >= 1, wait >= 0 or forever, lease
 * 0 or >= 100, permits 1..RDL_SEMAPHORE_MAX_PERMITS and only with a
 * semaphore, interval >= 100), and is the number written, whole; a lock NAME is
 * an argument that is not an option; run's command is the rest of the vector,
 * not empty. */
#include "fuzz.h"

#include <signal.h>

#include "cli.h"

static void no_usage(FILE *f)
{
    fputs("usage\n", f);
}

/* Whether p is one of argv[0..argc). */
static int is_arg(char **argv, int argc, const char *p)
{
    int i;
    for (i = 0; i < argc; i++)
        if (argv[i] == p)
            return 1;
    return 0;
}

/* The value of the decimal digits s, if they are all digits and the
 * number fits an int64_t. */
static int decimal(const char *s, int64_t *out)
{
    int64_t v = 0;
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - (*s - '0')) / 10)
            return 0;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 1;
}

/* A duration or a --permits taken is the number written, whole. */
static void check_values(const char *a)
{
    int64_t v = -7, want;
    uint32_t p = 0;
    if (cli_duration(a, "forever", -1, &v) == 0 && strcmp(a, "forever") != 0)
        FUZZ_CHECK(decimal(a, &want) && v == want);
    if (cli_permits(a, &p) == 0)
        FUZZ_CHECK(decimal(a, &want) && (int64_t)p == want && p >= 1 &&
                   p <= RDL_SEMAPHORE_MAX_PERMITS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The tool's own messages: many per input, none of interest. */
    stdout = fopen("/dev/null", "w");
    stderr = fopen("/dev/null", "w");
    unsetenv("RDL_URL");
    return 0;
}

static void check_run(int argc, char **argv)
{
    cli_run_opts o;
    int rc;
    memset(&o, 0, sizeof(o));
    rc = cli_parse_run(argc, argv, &o);
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == EXIT_USAGE);
    if (rc != 0)
        return;
    FUZZ_CHECK(o.name != NULL && is_arg(argv, argc, o.name));
    FUZZ_CHECK(strcmp(o.name, "--") != 0);
    FUZZ_CHECK(o.cmd != NULL && o.cmd > argv && o.cmd < argv + argc &&
               o.cmd[0] != NULL);
    FUZZ_CHECK(o.wait_ms >= 0 || o.wait_ms == RDL_WAIT_FOREVER);
    FUZZ_CHECK(o.lease_ms == 0 || o.lease_ms >= 100);
    FUZZ_CHECK(o.on_lost == SIGTERM || o.on_lost == SIGKILL || o.on_lost == 0);
    FUZZ_CHECK((o.permits != 0) == (strcmp(o.kind, "semaphore") == 0));
    FUZZ_CHECK(o.permits <= RDL_SEMAPHORE_MAX_PERMITS);
    cli_json_string(o.name);
}

static void check_named(int argc, char **argv, const char *cmd,
                        const char *flag, void (*usage)(FILE *f))
{
    const char *kind = NULL, *name = NULL;
    uint32_t permits = 0;
    int set = 0, rc;
    rc = cli_parse_named(argc, argv, cmd, flag, &set, &kind, &permits, &name,
                         usage);
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == EXIT_USAGE);
    if (rc != 0)
        return;
    FUZZ_CHECK(name != NULL && is_arg(argv, argc, name) && name[0] != '-');
    FUZZ_CHECK(kind != NULL);
    FUZZ_CHECK(permits >= 1 && permits <= RDL_SEMAPHORE_MAX_PERMITS);
    cli_json_string(name);
    cli_json_string(cli_kind_name(kind));
}

static void check_ls(int argc, char **argv, int top)
{
    cli_ls_opts o;
    int rc = cli_parse_ls(argc, argv, top, &o);
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == EXIT_USAGE);
    if (rc != 0)
        return;
    FUZZ_CHECK(o.pattern != NULL);
    FUZZ_CHECK(o.interval_ms >= 100);
    FUZZ_CHECK(o.top == top && (top || !o.once));
    cli_json_string(o.pattern);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[65];
    int argc = 1, cmd = -1, rc, i, n;
    cli g;

    argv[0] = strdup("rdl");
    FUZZ_CHECK(argv[0] != NULL);
    while (argc < 64 && size > 0) {
        argv[argc] = fuzz_take(&data, &size);
        FUZZ_CHECK(argv[argc] != NULL);
        argc++;
    }
    argv[argc] = NULL;
    for (i = 1; i < argc; i++)
        check_values(argv[i]);
    rc = cli_parse_global(argc, argv, &g, &cmd, no_usage);
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == EXIT_USAGE);
    if (rc == 0) {
        FUZZ_CHECK(cmd >= 1 && cmd < argc && argv[cmd][0] != '-');
        FUZZ_CHECK(g.url != NULL && g.timeout_ms >= 0);
        FUZZ_CHECK(g.timeout_ms == 0 || g.timeout_ms >= 1);
        n = argc - cmd - 1;
        if (strcmp(argv[cmd], "run") == 0)
            check_run(n, argv + cmd + 1);
        else if (strcmp(argv[cmd], "info") == 0)
            check_named(n, argv + cmd + 1, "info", "--json", cli_usage_info);
        else if (strcmp(argv[cmd], "release") == 0)
            check_named(n, argv + cmd + 1, "release", "--force",
                        cli_usage_release);
        else if (strcmp(argv[cmd], "ls") == 0)
            check_ls(n, argv + cmd + 1, 0);
        else if (strcmp(argv[cmd], "top") == 0)
            check_ls(n, argv + cmd + 1, 1);
    }
    for (i = 0; i < argc; i++)
        free(argv[i]);
    return 0;
}
