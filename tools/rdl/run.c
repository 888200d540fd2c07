/* rdl run: acquire, run CMD with the fencing token in its environment,
 * keep the lease alive while it runs, signal it if the hold is lost,
 * release when it exits, and exit with its status.
 *
 * Signals: the main thread blocks the signals it cares about before any
 * other thread exists and takes them with sigwaitinfo(), so no handler
 * runs and no signal is lost. The lock is acquired on a thread of its own
 * so that SIGINT/SIGTERM still end a long wait; the lost-lock callback,
 * on the client's loop thread, raises SIGUSR1 at the process. CMD starts
 * with the default dispositions and an empty mask. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

/* The one owner of this process's hold (the calls come from two threads). */
#define OWNER ((rdl_owner_t)1)

typedef struct acquiring {
    rdl_lock_t *lock;
    int64_t wait_ms;
    int rc;
} acquiring;

static volatile int lost_reason;

void cli_usage_run(FILE *f)
{
    fputs("usage: rdl [GLOBAL OPTIONS] run\n"
          "           [--kind lock|fair|rwlock:read|rwlock:write|semaphore] "
          "[--permits N]\n"
          "           [--wait MS|forever] [--lease MS|auto]\n"
          "           [--on-lost term|kill|ignore] NAME -- CMD [ARGS...]\n"
          "\n"
          "Acquires the lock NAME, runs CMD with RDL_FENCING_TOKEN and\n"
          "RDL_LOCK_NAME in its environment, keeps the lock alive while CMD\n"
          "runs, releases it when CMD exits, and exits with CMD's status\n"
          "(128 + the signal if CMD was killed).\n"
          "\n"
          "  --kind K      lock (default), fair (FIFO), rwlock:read or\n"
          "                rwlock:write (the two sides of a read-write lock;\n"
          "                read and write are still taken), or semaphore\n"
          "                (with --permits)\n"
          "  --permits N   semaphore: at most N holders at once across the\n"
          "                fleet (the total stored in Redis wins if there is\n"
          "                one; 'rdl info --kind semaphore' shows it)\n"
          "  --wait W      how long to wait for the lock: milliseconds, or\n"
          "                forever (default); not acquired in time: exit 75\n"
          "                without running CMD\n"
          "  --lease L     how long the lock outlives this process if it dies\n"
          "                (SIGKILL, power loss): milliseconds >= 100, or\n"
          "                auto (30000); renewed every L/3 while CMD runs\n"
          "  --on-lost A   if the lock is lost while CMD runs (Redis\n"
          "                unreachable for a whole lease, force-released):\n"
          "                term (default: SIGTERM to CMD), kill (SIGKILL) or\n"
          "                ignore; a message goes to stderr in every case\n"
          "\n"
          "SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to CMD.\n",
          f);
}

int cli_parse_run(int argc, char **argv, cli_run_opts *o)
{
    int i;
    o->kind = "lock";
    o->permits = 0;
    o->wait_ms = RDL_WAIT_FOREVER;
    o->lease_ms = 0;
    o->on_lost = SIGTERM;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cli_usage_run(stdout);
            return -1;
        }
        if (a[0] != '-' || strcmp(a, "--") == 0)
            break;
        if (v == NULL) {
            cli_error("run", "%s needs a value", a);
            return EXIT_USAGE;
        }
        i++;
        if (strcmp(a, "--kind") == 0) {
            o->kind = v;
        } else if (strcmp(a, "--permits") == 0) {
            if (cli_permits(v, &o->permits) != 0) {
                cli_error("--permits", "expected 1..%u, got \"%s\"",
                          RDL_SEMAPHORE_MAX_PERMITS, v);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--wait") == 0) {
            if (cli_duration(v, "forever", RDL_WAIT_FOREVER, &o->wait_ms)) {
                cli_error("--wait",
                          "expected milliseconds or forever, got "
                          "\"%s\"",
                          v);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--lease") == 0) {
            if (cli_duration(v, "auto", 0, &o->lease_ms) != 0 ||
                (o->lease_ms != 0 && o->lease_ms < 100)) {
                cli_error("--lease",
                          "expected milliseconds >= 100 or auto, "
                          "got \"%s\"",
                          v);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--on-lost") == 0) {
            if (strcmp(v, "term") == 0)
                o->on_lost = SIGTERM;
            else if (strcmp(v, "kill") == 0)
                o->on_lost = SIGKILL;
            else if (strcmp(v, "ignore") == 0)
                o->on_lost = 0;
            else {
                cli_error("--on-lost",
                          "expected term, kill or ignore, got "
                          "\"%s\"",
                          v);
                return EXIT_USAGE;
            }
        } else {
            cli_error("run", "unknown option \"%s\"", a);
            return EXIT_USAGE;
        }
    }
    if ((strcmp(o->kind, "semaphore") == 0) != (o->permits != 0)) {
        cli_error("--permits", o->permits != 0
                                   ? "only a semaphore has permits"
                                   : "a semaphore needs --permits N");
        return EXIT_USAGE;
    }
    if (i == argc || strcmp(argv[i], "--") == 0) {
        cli_error("run", "no lock NAME given");
        return EXIT_USAGE;
    }
    o->name = argv[i++];
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i == argc) {
        cli_error("run", "no command given after NAME");
        return EXIT_USAGE;
    }
    o->cmd = argv + i;
    return 0;
}

static void on_lost(rdl_lock_t *lock, rdl_owner_t owner, int reason, void *data)
{
    (void)lock;
    (void)owner;
    (void)data;
    lost_reason = reason;
    kill(getpid(), SIGUSR1); /* taken by the main thread's sigwaitinfo */
}

static void *acquire_main(void *arg)
{
    acquiring *a = arg;
    a->rc = rdl_lock_acquire_as(a->lock, OWNER, a->wait_ms, RDL_LEASE_AUTO);
    kill(getpid(), SIGUSR2);
    return NULL;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void blocked_set(sigset_t *set)
{
    size_t i;
    sigemptyset(set);
    for (i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
        sigaddset(set, forwarded[i]);
    sigaddset(set, SIGCHLD);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
}

/* Waits for the acquisition; a terminating signal first ends the process
 * (the lock, if granted meanwhile, expires with its lease). */
static int wait_acquired(const sigset_t *set, acquiring *a)
{
    pthread_t t;
    if (pthread_create(&t, NULL, acquire_main, a) != 0)
        return RDL_ENOMEM;
    for (;;) {
        int sig = sigwaitinfo(set, NULL);
        if (sig == SIGUSR2)
            break;
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT)
            _exit(128 + sig);
    }
    pthread_join(t, NULL);
    return a->rc;
}

static pid_t spawn(char **cmd, const sigset_t *set)
{
    posix_spawnattr_t attr;
    sigset_t empty;
    pid_t pid;
    int err;

    sigemptyset(&empty);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, set);
    err = posix_spawnp(&pid, cmd[0], NULL, &attr, cmd, environ);
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
        cli_error(cmd[0], "%s", strerror(err));
        return -1;
    }
    return pid;
}

/* Runs until CMD exits; returns its wait status. */
static int supervise(const cli *g, const cli_run_opts *o, pid_t pid,
                     const sigset_t *set)
{
    int status = 0, told = 0;
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig == SIGCHLD) {
            pid_t r = waitpid(pid, &status, WNOHANG);
            if (r == pid)
                return status;
        } else if (sig == SIGUSR1 && !told) {
            told = 1;
            cli_error(o->name, "the lock was lost while the command ran (%s)%s",
                      rdl_err_name(lost_reason),
                      o->on_lost == SIGTERM   ? "; sending SIGTERM"
                      : o->on_lost == SIGKILL ? "; sending SIGKILL"
                                              : "; --on-lost ignore");
            if (o->on_lost != 0)
                kill(pid, o->on_lost);
        } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP ||
                   sig == SIGQUIT) {
            cli_note(g, "passing signal %d on to the command", sig);
            kill(pid, sig);
        }
    }
}

int cli_run(const cli *g, int argc, char **argv)
{
    cli_run_opts o;
    sigset_t set;
    rdl_client_t *c;
    cli_lock l;
    acquiring a;
    char token[32];
    pid_t pid;
    int rc, status, code;

    memset(&o, 0, sizeof(o));
    if ((rc = cli_parse_run(argc, argv, &o)) != 0) {
        if (rc < 0)
            return 0; /* --help */
        cli_usage_run(stderr);
        return EXIT_USAGE;
    }
    /* Before any thread exists, so every thread inherits the mask. */
    blocked_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    if ((code = cli_open(g, o.lease_ms, o.kind, o.name, o.permits, &c, &l)) !=
        0)
        return code;
    (void)rdl_lock_set_lost_cb(l.lock, on_lost, NULL);

    a.lock = l.lock;
    a.wait_ms = o.wait_ms;
    a.rc = 0;
    rc = wait_acquired(&set, &a);
    if (rc != 0) {
        code = cli_exit_code(rc);
        if (code == EXIT_TEMPFAIL)
            cli_error(o.name, "not acquired within %lld ms: held elsewhere",
                      (long long)o.wait_ms);
        else
            cli_error(o.name, "%s (%s)", rdl_client_errmsg(c),
                      rdl_err_name(rc));
        cli_lock_free(&l);
        rdl_client_free(c);
        return code;
    }
    snprintf(token, sizeof(token), "%llu",
             (unsigned long long)rdl_lock_fencing_token(l.lock, OWNER));
    cli_note(g, "acquired %s (%s), fencing token %s", o.name, o.kind, token);
    setenv("RDL_FENCING_TOKEN", token, 1);
    setenv("RDL_LOCK_NAME", o.name, 1);

    pid = spawn(o.cmd, &set);
    if (pid < 0) {
        code = 127;
    } else {
        status = supervise(g, &o, pid, &set);
        code = WIFEXITED(status)     ? WEXITSTATUS(status)
               : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                     : EXIT_SOFTWARE;
    }
    rc = rdl_lock_release_as(l.lock, OWNER);
    if (rc == RDL_ELOST && lost_reason == 0)
        cli_error(o.name, "the lock was lost before the command ended");
    else if (rc != 0 && rc != RDL_ELOST)
        cli_error(o.name, "release: %s (%s); the lock ends with its lease",
                  rdl_client_errmsg(c), rdl_err_name(rc));
    else
        cli_note(g, "released %s", o.name);
    cli_lock_free(&l);
    rdl_client_free(c);
    return code;
}
