/* rdl ls and rdl top: every lock under the key prefix, once or refreshed.
 *
 * The names come from rdl_client_list_locks(), which scans every master
 * of the deployment; each lock's state then comes from rdl_lock_info(),
 * as for rdl info. A read-write lock is listed as "rwlock" and read through
 * its write view, which reports readers and writer together.
 *
 * The age of a hold: every kind mints a hold's fencing token as
 * max(last token + 1, the server's time in microseconds), and grants of a
 * name are more than 1 us apart (docs/design-notes.md "Fencing tokens:
 * the exact guarantee"), so an exclusive hold's token is the server time
 * of its grant. The age is then the server's TIME (read by the listing
 * just after its scan) minus that token, for the plain and fair locks,
 * whose latest token is the current hold's; a hold granted after that
 * TIME has no known age yet. A semaphore's or a read-write lock's latest
 * token may belong to a holder that has left (another reader, a permit
 * given back), and no grant time is stored for them: their age is "-". */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The kinds listed: the kind rdl_client_list_locks() reports (and ls
 * prints), and the kind rdl info opens. */
static const struct {
    const char *listed, *open;
} kinds[] = {
    {"lock", "lock"},
    {"fair", "fair"},
    {"rwlock", "rwlock:write"},
    {"semaphore", "semaphore"},
};

typedef struct row {
    char *name;
    int kind;          /* index in kinds[] */
    int64_t server_us; /* the clock of its server after the scan, or -1 */
    rdl_lock_info_t info;
    int64_t age_ms; /* -1: not known */
} row;

typedef struct snapshot {
    row *rows;
    size_t n, cap;
    size_t nodes; /* the masters scanned */
    int oom;      /* a row could not be added */
} snapshot;

void cli_usage_ls(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] ls [--json] [--held]\n"
          "           [--sort name|waiters] [PATTERN]\n"
          "\n"
          "Lists every lock under the key prefix whose name matches the\n"
          "glob PATTERN (default *), one line each: name, kind (lock, fair,\n"
          "rwlock, semaphore), holders (permits in use/total for a\n"
          "semaphore), remaining lease, waiters, latest fencing token, and\n"
          "the age of the hold: known for the lock and fair kinds (their\n"
          "token is the server time of the grant), '-' for the shared\n"
          "kinds. Free locks are listed while Redis remembers them (a day\n"
          "after use).\n"
          "\n"
          "  --json     one JSON array of objects (the fields of rdl info\n"
          "             --json, and age_ms: null when not known)\n"
          "  --held     only the locks someone holds\n"
          "  --sort S   name (default), or waiters: most waiters first, then\n"
          "             held before free, then the oldest hold\n"
          "\n"
          "On a Redis Cluster every master is scanned. rdl info --kind\n"
          "rwlock:write NAME shows an rwlock.\n",
          f);
}

void cli_usage_top(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] top [--once] [--json] [--held]\n"
          "           [--interval MS] [PATTERN]\n"
          "\n"
          "rdl ls refreshed like top(1): the busiest locks (most waiters)\n"
          "first, then held before free and the oldest hold. On a terminal\n"
          "it draws on the alternate screen and restores the terminal when\n"
          "it ends (q, Ctrl-C, SIGTERM). Without a terminal each refresh is\n"
          "printed after the last.\n"
          "\n"
          "  --once         print one snapshot and exit\n"
          "  --json         a JSON array per snapshot, one per line\n"
          "  --held         only the locks someone holds\n"
          "  --interval MS  between refreshes (default 1000, at least 100)\n",
          f);
}

/* What went wrong in a snapshot, printed by the caller (after top gave
 * the terminal back, so that the message stays on the screen). */
static char fail_what[320], fail_why[512];

static void failed(const char *what, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void failed(const char *what, const char *fmt, ...)
{
    va_list ap;
    snprintf(fail_what, sizeof(fail_what), "%s", what);
    va_start(ap, fmt);
    vsnprintf(fail_why, sizeof(fail_why), fmt, ap);
    va_end(ap);
}

/* ---- Options ----------------------------------------------------------- */

int cli_parse_ls(int argc, char **argv, int top, cli_ls_opts *o)
{
    const char *cmd = top ? "top" : "ls";
    void (*usage)(FILE *) = top ? cli_usage_top : cli_usage_ls;
    int i, opts = 1, have_pattern = 0;

    memset(o, 0, sizeof(*o));
    o->top = top;
    o->by_waiters = top;
    o->interval_ms = 1000;
    o->pattern = "*";
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (opts && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            usage(stdout);
            return -1;
        }
        if (!opts || a[0] != '-' || a[1] == '\0') {
            if (have_pattern++) {
                cli_error(cmd, "one PATTERN only, got \"%s\" too", a);
                usage(stderr);
                return EXIT_USAGE;
            }
            o->pattern = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            opts = 0;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--held") == 0) {
            o->held = 1;
        } else if (!top && strcmp(a, "--sort") == 0 && v != NULL) {
            if (strcmp(v, "name") != 0 && strcmp(v, "waiters") != 0) {
                cli_error("--sort", "expected name or waiters, got \"%s\"", v);
                usage(stderr);
                return EXIT_USAGE;
            }
            o->by_waiters = v[0] == 'w';
            i++;
        } else if (top && strcmp(a, "--once") == 0) {
            o->once = 1;
        } else if (top && strcmp(a, "--interval") == 0 && v != NULL) {
            if (cli_duration(v, NULL, 0, &o->interval_ms) != 0 ||
                o->interval_ms < 100) {
                cli_error("--interval",
                          "expected milliseconds >= 100, got "
                          "\"%s\"",
                          v);
                usage(stderr);
                return EXIT_USAGE;
            }
            i++;
        } else {
            cli_error(cmd, "unknown or incomplete option \"%s\"", a);
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* ---- Finding the locks ------------------------------------------------- */

static int add_row(snapshot *s, const char *name, int kind, int64_t server_us)
{
    char *copy;
    if (s->n == s->cap) {
        size_t cap = s->cap > 0 ? 2 * s->cap : 64;
        row *grown = realloc(s->rows, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        s->rows = grown;
        s->cap = cap;
    }
    if ((copy = strdup(name)) == NULL)
        return -1;
    memset(&s->rows[s->n], 0, sizeof(s->rows[0]));
    s->rows[s->n].name = copy;
    s->rows[s->n].kind = kind;
    s->rows[s->n].server_us = server_us;
    s->rows[s->n].age_ms = -1;
    s->n++;
    return 0;
}

/* rdl_client_list_locks()'s callback: one row per lock. */
static int on_lock(const rdl_lock_entry_t *e, void *data)
{
    snapshot *s = data;
    size_t k;
    for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (strcmp(kinds[k].listed, e->kind) == 0)
            break;
    if (k == sizeof(kinds) / sizeof(kinds[0]))
        return 0; /* a kind this tool does not know yet */
    if (add_row(s, e->name, (int)k, e->server_us) != 0) {
        s->oom = 1;
        return 1;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const row *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d != 0 ? d : strcmp(kinds[x->kind].listed, kinds[y->kind].listed);
}

/* top's order: most waiters, held before free, oldest hold (a known age
 * before an unknown one), most holders, then the name. */
static int by_waiters(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->info.waiters != y->info.waiters)
        return x->info.waiters > y->info.waiters ? -1 : 1;
    if (x->info.locked != y->info.locked)
        return x->info.locked ? -1 : 1;
    if (x->age_ms != y->age_ms)
        return x->age_ms > y->age_ms ? -1 : 1;
    if (x->info.holders != y->info.holders)
        return x->info.holders > y->info.holders ? -1 : 1;
    return by_name(a, b);
}

static void snapshot_free(snapshot *s)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        free(s->rows[i].name);
    free(s->rows);
    memset(s, 0, sizeof(*s));
}

/* Fails the snapshot with the client's message for rc; returns the exit
 * code. */
static int failed_rc(rdl_client_t *c, const char *what, int rc)
{
    failed(what, "%s (%s)", rdl_client_errmsg(c), rdl_err_name(rc));
    return cli_exit_code(rc) == EXIT_USAGE ? EXIT_SOFTWARE : cli_exit_code(rc);
}

/* Lists the locks, reads each one's state, sorts. 0 or an exit code
 * (failed() says why). */
static int snapshot_take(rdl_client_t *c, const cli_ls_opts *o, snapshot *s)
{
    size_t i, j;
    int rc = 0, e;

    memset(s, 0, sizeof(*s));
    if ((e = rdl_client_list_locks(c, o->pattern, on_lock, s)) == 0 && s->oom)
        e = RDL_ENOMEM;
    if (e == 0)
        e = rdl_client_master_count(c, &s->nodes);
    if (e != 0 && s->oom) {
        failed("ls", "out of memory");
        rc = EXIT_SOFTWARE;
    } else if (e != 0) {
        rc = failed_rc(c, "ls", e);
    }
    if (rc != 0) {
        snapshot_free(s);
        return rc;
    }
    for (i = j = 0; rc == 0 && i < s->n; i++) {
        row *r = &s->rows[i];
        const char *k = kinds[r->kind].listed;
        cli_lock l;
        e = cli_lock_open(c, kinds[r->kind].open, r->name, 1, &l);
        if (e == 0) {
            e = rdl_lock_info(l.lock, 0, &r->info);
            cli_lock_free(&l);
        }
        if (e != 0) {
            rc = failed_rc(c, r->name, e);
            free(r->name);
            continue;
        }
        if (o->held && !r->info.locked) {
            free(r->name);
            continue;
        }
        if (r->info.locked && r->info.fencing_token > 0 && r->server_us >= 0 &&
            (strcmp(k, "lock") == 0 || strcmp(k, "fair") == 0) &&
            r->info.fencing_token <= (uint64_t)r->server_us)
            r->age_ms = (r->server_us - (int64_t)r->info.fencing_token) / 1000;
        s->rows[j++] = *r;
    }
    while (i < s->n)
        free(s->rows[i++].name);
    s->n = j;
    if (rc != 0) {
        snapshot_free(s);
        return rc;
    }
    if (s->n > 1)
        qsort(s->rows, s->n, sizeof(s->rows[0]),
              o->by_waiters ? by_waiters : by_name);
    return 0;
}

/* ---- Output ------------------------------------------------------------ */

static void print_json(const snapshot *s)
{
    size_t i;
    putchar('[');
    for (i = 0; i < s->n; i++) {
        const row *r = &s->rows[i];
        const rdl_lock_info_t *in = &r->info;
        printf("%s{\"name\":", i > 0 ? "," : "");
        cli_json_string(r->name);
        printf(",\"kind\":\"%s\",\"locked\":%s,\"holders\":%u,"
               "\"permits\":%u,\"ttl_ms\":%lld,\"hold_count\":%u,"
               "\"fencing_token\":%llu,\"waiters\":%u,\"age_ms\":",
               kinds[r->kind].listed, in->locked ? "true" : "false",
               in->holders, in->permits, (long long)in->ttl_ms,
               in->holder_count, (unsigned long long)in->fencing_token,
               in->waiters);
        if (r->age_ms >= 0)
            printf("%lld}", (long long)r->age_ms);
        else
            fputs("null}", stdout);
    }
    puts("]");
}

/* ms as a short duration: 850ms, 4.9s, 3m07s, 5h02m, 2d03h; "-" if < 0. */
static void duration(char *buf, size_t len, int64_t ms)
{
    long long v = (long long)ms;
    if (ms < 0)
        snprintf(buf, len, "-");
    else if (v < 1000)
        snprintf(buf, len, "%lldms", v);
    else if (v < 60000)
        snprintf(buf, len, "%lld.%llds", v / 1000, v % 1000 / 100);
    else if (v < 3600000)
        snprintf(buf, len, "%lldm%02llds", v / 60000, v % 60000 / 1000);
    else if (v < 86400000)
        snprintf(buf, len, "%lldh%02lldm", v / 3600000, v % 3600000 / 60000);
    else
        snprintf(buf, len, "%lldd%02lldh", v / 86400000,
                 v % 86400000 / 3600000);
}

/* Columns shown on a terminal: bytes that start a UTF-8 character. */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s != '\0'; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

#define NCOLS 7

/* The table as lines (header first), each malloc'ed; NULL when out of
 * memory. Control characters in names are shown as \xNN, so that a line
 * stays a line. */
static char **table(const snapshot *s)
{
    static const char *const head[NCOLS] = {
        "NAME", "KIND", "HOLDERS", "TTL", "WAITERS", "TOKEN", "AGE"};
    size_t nl = s->n + 1, i, c, w[NCOLS], len;
    char **cell = calloc(nl * NCOLS, sizeof(*cell)), **lines = NULL;
    int ok = cell != NULL;

    for (i = 0; ok && i < nl; i++) {
        const row *r = i > 0 ? &s->rows[i - 1] : NULL;
        char b[NCOLS][64];
        const char *src;
        char *n, *p;
        if (r == NULL) {
            for (c = 0; c < NCOLS; c++)
                ok = ok && (cell[c] = strdup(head[c])) != NULL;
            continue;
        }
        n = p = malloc(4 * strlen(r->name) + 1);
        if (n == NULL) {
            ok = 0;
            break;
        }
        for (src = r->name; *src != '\0'; src++)
            if ((unsigned char)*src < 0x20 || *src == 0x7f)
                p += sprintf(p, "\\x%02x", (unsigned char)*src);
            else
                *p++ = *src;
        *p = '\0';
        cell[i * NCOLS] = n;
        snprintf(b[1], sizeof(b[1]), "%s", kinds[r->kind].listed);
        if (strcmp(kinds[r->kind].listed, "semaphore") == 0)
            snprintf(b[2], sizeof(b[2]), "%u/%u", r->info.holders,
                     r->info.permits);
        else
            snprintf(b[2], sizeof(b[2]), "%u", r->info.holders);
        duration(b[3], sizeof(b[3]), r->info.locked ? r->info.ttl_ms : -1);
        snprintf(b[4], sizeof(b[4]), "%u", r->info.waiters);
        if (r->info.fencing_token > 0)
            snprintf(b[5], sizeof(b[5]), "%llu",
                     (unsigned long long)r->info.fencing_token);
        else
            snprintf(b[5], sizeof(b[5]), "-");
        duration(b[6], sizeof(b[6]), r->age_ms);
        for (c = 1; c < NCOLS; c++)
            ok = ok && (cell[i * NCOLS + c] = strdup(b[c])) != NULL;
    }
    for (c = 0; ok && c < NCOLS; c++)
        for (w[c] = 0, i = 0; i < nl; i++)
            if (width(cell[i * NCOLS + c]) > w[c])
                w[c] = width(cell[i * NCOLS + c]);
    if (ok)
        ok = (lines = calloc(nl + 1, sizeof(*lines))) != NULL;
    for (i = 0; ok && i < nl; i++) {
        char *p;
        for (len = 1, c = 0; c < NCOLS; c++)
            len += strlen(cell[i * NCOLS + c]) + w[c] + 2;
        if ((p = lines[i] = malloc(len)) == NULL) {
            ok = 0;
            break;
        }
        for (c = 0; c < NCOLS; c++) {
            const char *v = cell[i * NCOLS + c];
            size_t pad = c + 1 < NCOLS ? w[c] - width(v) + 2 : 0;
            p += sprintf(p, "%s%*s", v, (int)pad, "");
        }
    }
    for (i = 0; cell != NULL && i < nl * NCOLS; i++)
        free(cell[i]);
    free(cell);
    if (!ok && lines != NULL) {
        for (i = 0; i < nl; i++)
            free(lines[i]);
        free(lines);
        lines = NULL;
    }
    return lines;
}

static void lines_free(char **lines)
{
    size_t i;
    for (i = 0; lines != NULL && lines[i] != NULL; i++)
        free(lines[i]);
    free(lines);
}

/* Flushes stdout: 0; 1 when the reader has gone (EPIPE: `rdl ls | head`,
 * not a failure); EXIT_SOFTWARE after a message. */
static int flushed(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    if (errno == EPIPE)
        return 1;
    cli_error("stdout", "%s", strerror(errno));
    return EXIT_SOFTWARE;
}

/* ---- rdl ls ------------------------------------------------------------ */

int cli_ls(const cli *g, int argc, char **argv)
{
    rdl_client_t *c;
    snapshot s;
    cli_ls_opts o;
    char **lines;
    size_t i;
    int rc = cli_parse_ls(argc, argv, 0, &o);

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    signal(SIGPIPE, SIG_IGN);
    c = cli_connect(g, 0);
    rc = snapshot_take(c, &o, &s);
    rdl_client_free(c);
    if (rc != 0) {
        cli_error(fail_what, "%s", fail_why);
        return rc;
    }
    if (o.json) {
        print_json(&s);
    } else if ((lines = table(&s)) != NULL) {
        for (i = 0; lines[i] != NULL; i++)
            puts(lines[i]);
        lines_free(lines);
    } else {
        cli_error("ls", "out of memory");
        rc = EXIT_SOFTWARE;
    }
    snapshot_free(&s);
    if (rc == 0 && (rc = flushed()) == 1)
        rc = 0;
    return rc;
}

/* ---- rdl top ----------------------------------------------------------- */

static volatile sig_atomic_t got_signal, got_winch, got_tstp;
static struct termios saved_tio;
static int tio_saved, screen_on;

static void on_signal(int sig)
{
    if (sig == SIGWINCH)
        got_winch = 1;
    else if (sig == SIGTSTP)
        got_tstp = 1;
    else
        got_signal = sig;
}

static void handle(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* The terminal as it was: input mode, cursor, main screen. Safe to call
 * twice; runs at exit too. */
static void screen_leave(void)
{
    if (screen_on) {
        fputs("\033[?25h\033[?1049l", stdout);
        fflush(stdout);
        screen_on = 0;
    }
    if (tio_saved) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
        tio_saved = 0;
    }
}

/* The alternate screen, the cursor hidden, and keys read one at a time
 * without echo (Ctrl-C still signals). */
static void screen_enter(void)
{
    struct termios t;
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
        t = saved_tio;
        t.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0)
            tio_saved = 1;
    }
    fputs("\033[?1049h\033[?25l", stdout);
    fflush(stdout);
    screen_on = 1;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps ms, or less: 1 when it is time to quit (q, or a signal that
 * ends top), 0 otherwise (time to refresh; at once after a resize or a
 * resume). */
static int pause_ms(int64_t ms, int keys)
{
    int64_t end = mono_ms() + ms, left;
    struct pollfd p;
    char ch;
    p.fd = STDIN_FILENO;
    p.events = POLLIN;
    while ((left = end - mono_ms()) > 0) {
        int rc = poll(&p, keys ? 1 : 0, left > 60000 ? 60000 : (int)left);
        if (got_signal)
            return 1;
        if (got_winch || got_tstp)
            return 0;
        if (rc > 0 && (p.revents & POLLIN) != 0) {
            if (read(STDIN_FILENO, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
                return 1;
        } else if (rc > 0) {
            keys = 0; /* stdin closed: the time alone then */
        }
    }
    return 0;
}

/* One frame: the summary line, then as much of the table as the terminal
 * shows (on a terminal, each line cut at its width). */
static void draw(const cli *g, const cli_ls_opts *o, const snapshot *s, int tty)
{
    struct winsize ws;
    char **lines = table(s), stamp[16];
    size_t rows = 0, cols = 0, i, held = 0, shown, nlines = s->n + 1;
    unsigned long waiting = 0;
    time_t t = time(NULL);
    struct tm tm;

    if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        rows = ws.ws_row;
        cols = ws.ws_col;
    }
    for (i = 0; i < s->n; i++) {
        held += s->rows[i].info.locked != 0;
        waiting += s->rows[i].info.waiters;
    }
    localtime_r(&t, &tm);
    strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
    if (tty)
        fputs("\033[H", stdout);
    printf("rdl top - %s - prefix %s, %zu node%s - %zu lock%s, %zu held, "
           "%lu waiting%s\n",
           stamp, g->prefix != NULL ? g->prefix : "rdl", s->nodes,
           s->nodes == 1 ? "" : "s", s->n, s->n == 1 ? "" : "s", held, waiting,
           tty ? "\033[K" : "");
    if (!o->once)
        printf("every %lld ms%s%s\n", (long long)o->interval_ms,
               tty && tio_saved ? "; q quits" : "", tty ? "\033[K" : "");
    printf("%s\n", tty ? "\033[K" : "");
    if (lines == NULL) {
        printf("(out of memory)%s\n", tty ? "\033[K" : "");
        nlines = 0;
    }
    shown = nlines;
    if (rows > 0) {
        size_t room = rows > (o->once ? 3u : 4u) ? rows - (o->once ? 3 : 4) : 1;
        if (shown > room)
            shown = room > 1 ? room - 1 : 1;
    }
    for (i = 0; i < shown; i++) {
        size_t n = strlen(lines[i]);
        if (cols > 0 && n > cols) {
            n = cols; /* not inside a UTF-8 character */
            while (n > 0 && ((unsigned char)lines[i][n] & 0xc0) == 0x80)
                n--;
        }
        fwrite(lines[i], 1, n, stdout);
        printf("%s\n", tty ? "\033[K" : "");
    }
    if (shown < nlines)
        printf("... %zu more%s\n", nlines - shown, tty ? "\033[K" : "");
    if (tty)
        fputs("\033[J", stdout);
    lines_free(lines);
    fflush(stdout);
}

int cli_top(const cli *g, int argc, char **argv)
{
    rdl_client_t *c;
    snapshot s;
    cli_ls_opts o;
    int rc = cli_parse_ls(argc, argv, 1, &o), tty;

    if (rc != 0)
        return rc < 0 ? 0 : rc;
    signal(SIGPIPE, SIG_IGN);
    c = cli_connect(g, 0);
    tty = !o.once && !o.json && isatty(STDOUT_FILENO);
    if (!o.once) {
        handle(SIGINT, on_signal);
        handle(SIGTERM, on_signal);
        handle(SIGHUP, on_signal);
    }
    if (tty) {
        handle(SIGWINCH, on_signal);
        handle(SIGTSTP, on_signal);
        atexit(screen_leave);
        screen_enter();
    }
    while (!got_signal) {
        if (got_tstp) {
            /* Ctrl-Z: the terminal back, stop, and take it again on
             * resume. */
            got_tstp = 0;
            screen_leave();
            handle(SIGTSTP, SIG_DFL);
            raise(SIGTSTP);
            handle(SIGTSTP, on_signal);
            screen_enter();
        }
        got_winch = 0;
        if ((rc = snapshot_take(c, &o, &s)) != 0)
            break;
        if (o.json)
            print_json(&s);
        else
            draw(g, &o, &s, tty);
        snapshot_free(&s);
        if ((rc = flushed()) != 0) {
            rc = rc == 1 ? 0 : rc;
            break;
        }
        if (o.once || pause_ms(o.interval_ms, tty && tio_saved))
            break;
        if (!tty && !o.json)
            putchar('\n');
    }
    screen_leave();
    if (rc != 0 && fail_what[0] != '\0')
        cli_error(fail_what, "%s", fail_why);
    rdl_client_free(c);
    if (rc == 0 && (got_signal == SIGTERM || got_signal == SIGHUP))
        rc = 128 + got_signal;
    return rc;
}
