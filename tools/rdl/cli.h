/* rdl(1): the command-line tool. A consumer of the public API only. */
#ifndef RDL_CLI_H
#define RDL_CLI_H

#include <stdio.h>

#include <rdl.h>

/* Exit codes (sysexits.h). */
#define EXIT_USAGE 64       /* EX_USAGE: bad options or arguments */
#define EXIT_UNAVAILABLE 69 /* EX_UNAVAILABLE: Redis unreachable */
#define EXIT_SOFTWARE 70    /* EX_SOFTWARE: any other failure */
#define EXIT_TEMPFAIL 75    /* EX_TEMPFAIL: not acquired within --wait */

/* Global options. */
typedef struct cli {
    const char *url;       /* --url, $RDL_URL, or the default */
    const char *prefix;    /* --prefix or NULL */
    int64_t timeout_ms;    /* --timeout: connect and command timeout, or 0 */
    int verbose;           /* -v */
    rdl_tls_options_t tls; /* --cacert, --cert, --key, --sni, --insecure */
    int tls_set;           /* one of them was given */
} cli;

/* "rdl: <what>: <why>" on stderr. */
void cli_error(const char *what, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* -v: "rdl: ..." on stderr. */
void cli_note(const cli *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Writes s as a JSON string to stdout: quotes, backslashes and control
 * characters escaped, a byte that is not part of valid UTF-8 written as
 * U+FFFD (so the output is always valid JSON). */
void cli_json_string(const char *s);

/* Parses a duration in ms (>= 0) or, if `word` is given, that word (as
 * `word_value`). 0 or -1. */
int cli_duration(const char *s, const char *word, int64_t word_value,
                 int64_t *out);

/* A connected client for the global options and a watchdog lease (0: the
 * default). Exits the process with EXIT_UNAVAILABLE / EXIT_SOFTWARE and a
 * message on failure. */
rdl_client_t *cli_connect(const cli *g, int64_t watchdog_ms);

/* A lock of a kind: "lock", "fair", "rwlock:read", "rwlock:write" (or their
 * old names "read", "write") or "semaphore" (with
 * `permits`, its total if Redis has none; ignored by the other kinds).
 * Returns 0 and the lock (free it with cli_lock_free), 1 for an unknown
 * kind (nothing printed), or an rdl error code. */
typedef struct cli_lock {
    rdl_lock_t *lock;
    rdl_rwlock_t *rw; /* read and write kinds */
} cli_lock;
int cli_lock_open(rdl_client_t *c, const char *kind, const char *name,
                  uint32_t permits, cli_lock *out);
void cli_lock_free(cli_lock *l);
/* "lock|fair|rwlock:read|rwlock:write|semaphore", for messages. */
extern const char *const cli_kinds;
/* The kind's name: the old names of the read-write lock's views ("read",
 * "write") as "rwlock:read" and "rwlock:write"; any other as given. */
const char *cli_kind_name(const char *kind);

/* Parses --permits N: 1..RDL_SEMAPHORE_MAX_PERMITS. 0 or -1. */
int cli_permits(const char *s, uint32_t *out);

/* Parses "[--kind K] [--permits N] [FLAG] NAME" (info, release): 0, -1
 * after --help (printed), or EXIT_USAGE after a message and the usage.
 * *permits is 1 unless given. */
int cli_parse_named(int argc, char **argv, const char *cmd, const char *flag,
                    int *flag_set, const char **kind, uint32_t *permits,
                    const char **name, void (*usage)(FILE *f));

/* Connects (exits on failure, as cli_connect) and opens NAME of KIND.
 * Returns 0, or an exit code after a message (the client is freed). */
int cli_open(const cli *g, int64_t watchdog_ms, const char *kind,
             const char *name, uint32_t permits, rdl_client_t **c, cli_lock *l);

/* Parses the global options at the start of argv (argv[0] is the
 * program): 0 with *cmd the index of the command word; -1 after --help
 * (usage(stdout)) or --version, printed; EXIT_USAGE after a message (and
 * the usage, on stderr, where it helps). */
int cli_parse_global(int argc, char **argv, cli *g, int *cmd,
                     void (*usage)(FILE *f));

/* rdl run's options (run.c). */
typedef struct cli_run_opts {
    const char *kind;
    uint32_t permits; /* --permits (semaphore), else 0 */
    int64_t wait_ms;
    int64_t lease_ms; /* 0: auto (the default watchdog lease) */
    int on_lost;      /* SIGTERM, SIGKILL or 0 (ignore) */
    const char *name;
    char **cmd; /* NULL-terminated when argv is */
} cli_run_opts;
/* Parses rdl run's arguments (after "run"): 0; -1 after --help
 * (printed); EXIT_USAGE after a message (the caller prints the usage). */
int cli_parse_run(int argc, char **argv, cli_run_opts *o);

/* rdl ls's and rdl top's options (ls.c). */
typedef struct cli_ls_opts {
    int json, held, once, top, by_waiters;
    int64_t interval_ms;
    const char *pattern;
} cli_ls_opts;
/* Parses rdl ls's (top 0) or rdl top's (top 1) arguments: 0; -1 after
 * --help (printed); EXIT_USAGE after a message and the usage. */
int cli_parse_ls(int argc, char **argv, int top, cli_ls_opts *o);

/* Exit code for an rdl error of a connected client. */
int cli_exit_code(int rc);

/* Subcommands: argv starts after the command word. */
int cli_run(const cli *g, int argc, char **argv);
int cli_info(const cli *g, int argc, char **argv);
int cli_release(const cli *g, int argc, char **argv);
int cli_ls(const cli *g, int argc, char **argv);
int cli_top(const cli *g, int argc, char **argv);

void cli_usage_run(FILE *f);
void cli_usage_info(FILE *f);
void cli_usage_release(FILE *f);
void cli_usage_ls(FILE *f);
void cli_usage_top(FILE *f);

#endif
