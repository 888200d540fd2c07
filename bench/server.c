/* The throwaway redis-server: a free loopback port, a temporary directory,
 * no persistence; and, for the durable figure only, ONE replica of it, on
 * a port and in a directory of its own. The benchmark owns exactly these
 * processes and stops them on every way out: normal exit, a failed figure,
 * SIGINT/SIGTERM/SIGHUP, and (PR_SET_PDEATHSIG) the benchmark being
 * killed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* One redis-server the benchmark started. */
typedef struct proc {
    volatile pid_t pid; /* 0: none */
    char dir[256];
    char log_path[300];
} proc;

static proc server, replica;
static pid_t owner_pid; /* forked workers must not stop them */
static char bin[512];   /* the redis-server found by bench_server_start */

static int find_binary(char *path, size_t len)
{
    const char *env = getenv("RDL_BENCH_REDIS_SERVER");
    const char *dirs = getenv("PATH");
    char *copy, *tok, *save = NULL;

    if (env != NULL && env[0] != '\0') {
        snprintf(path, len, "%s", env);
        return access(path, X_OK) == 0 ? 0 : -1;
    }
    copy = strdup(dirs != NULL ? dirs : "/usr/local/bin:/usr/bin:/bin");
    if (copy == NULL)
        return -1;
    for (tok = strtok_r(copy, ":", &save); tok != NULL;
         tok = strtok_r(NULL, ":", &save)) {
        snprintf(path, len, "%s/redis-server", tok[0] ? tok : ".");
        if (access(path, X_OK) == 0) {
            free(copy);
            return 0;
        }
    }
    free(copy);
    return -1;
}

/* The kernel's choice of a free port. Another process could take it before
 * the server binds it; start() then sees the server exit and retries. */
static int free_port(void)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &alen) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* One command to the server on port over a connection of its own, with
 * short timeouts: the reply (free it with freeReplyObject), or NULL. */
static redisReply *ask(int port, const char *cmd)
{
    struct timeval tv = {0, 200000};
    redisContext *rc = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r = NULL;
    if (rc != NULL && !rc->err) {
        redisSetTimeout(rc, tv);
        r = redisCommand(rc, cmd);
    }
    if (rc != NULL)
        redisFree(rc);
    return r;
}

static int answers(int port)
{
    redisReply *r = ask(port, "PING");
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    if (r != NULL)
        freeReplyObject(r);
    return ok;
}

static int make_dir(proc *s)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof(s->dir), "%s/rdl-bench-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(s->dir) == NULL) {
        fprintf(stderr, "rdl-bench: mkdtemp: %s\n", strerror(errno));
        s->dir[0] = '\0';
        return -1;
    }
    snprintf(s->log_path, sizeof(s->log_path), "%s/redis.log", s->dir);
    return 0;
}

/* Empties and removes the directory: the log, and what a replica's sync
 * leaves (dump.rdb, or a temp-*.rdb if it was stopped mid-transfer). */
static void remove_dir(proc *s)
{
    char path[600];
    DIR *d;
    struct dirent *e;
    if (s->dir[0] == '\0')
        return;
    if ((d = opendir(s->dir)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", s->dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
}

static void stop(proc *s)
{
    pid_t pid = s->pid;
    if (getpid() != owner_pid)
        return;
    if (pid > 0) {
        s->pid = 0;
        kill(pid, SIGCONT); /* a paused replica acts on SIGTERM once resumed */
        kill(pid, SIGTERM);
        if (waitpid(pid, NULL, 0) < 0 && errno != ECHILD)
            kill(pid, SIGKILL);
    }
    remove_dir(s);
}

void bench_server_stop(void)
{
    stop(&replica);
    stop(&server);
}

void bench_replica_stop(void)
{
    stop(&replica);
}

int bench_server_pid(void)
{
    return (int)server.pid;
}

static void on_signal(int sig)
{
    /* Only async-signal-safe calls: kill and reap our servers (SIGKILL
     * ends a stopped replica too), then die of the same signal. */
    pid_t r = replica.pid, s = server.pid;
    if (getpid() == owner_pid) {
        if (r > 0)
            kill(r, SIGKILL);
        if (s > 0)
            kill(s, SIGKILL);
        if (r > 0)
            waitpid(r, NULL, 0);
        if (s > 0)
            waitpid(s, NULL, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Starts bin in s->dir on port, a replica of master_port if that is > 0.
 * 0 started, 1 port taken (try another), -1 failed. */
static int start(proc *s, int port, int master_port)
{
    char p[16], mp[16];
    pid_t pid;
    int fd, i, argc = 15;
    int64_t deadline;
    const char *argv[24] = {bin,         "--port",      p,      "--bind",
                            "127.0.0.1", "--save",      "",     "--appendonly",
                            "no",        "--dir",       s->dir, "--logfile",
                            s->log_path, "--daemonize", "no"};

    snprintf(p, sizeof(p), "%d", port);
    if (master_port > 0) {
        snprintf(mp, sizeof(mp), "%d", master_port);
        argv[argc++] = "--replicaof";
        argv[argc++] = "127.0.0.1";
        argv[argc++] = mp;
        argv[argc++] = "--repl-diskless-sync-delay";
        argv[argc++] = "0";
    }
    argv[argc] = NULL;
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "rdl-bench: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != owner_pid)
            _exit(126);
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        for (i = 3; i < 1024; i++)
            close(i);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;
    deadline = bench_now_ns() + 10 * 1000000000LL;
    while (bench_now_ns() < deadline) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            s->pid = 0;
            return 1; /* most likely the port was taken */
        }
        if (answers(port))
            return 0;
        bench_sleep_ns(10 * 1000000);
    }
    fprintf(stderr, "rdl-bench: redis-server did not answer (log: %s)\n",
            s->log_path);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    s->pid = 0;
    return -1;
}

/* start() on a free port, retried if another process took it; the port,
 * or -1. */
static int start_free(proc *s, int master_port)
{
    int attempt, port = -1, rc = 1;
    for (attempt = 0; attempt < 5 && rc == 1; attempt++) {
        port = free_port();
        if (port <= 0)
            break;
        rc = start(s, port, master_port);
    }
    return rc == 0 ? port : -1;
}

int bench_server_start(bench_ctx *ctx)
{
    int port;
    struct sigaction sa;

    if (find_binary(bin, sizeof(bin)) != 0) {
        fprintf(stderr, "rdl-bench: redis-server not found (set "
                        "RDL_BENCH_REDIS_SERVER, or use --url)\n");
        return -1;
    }
    owner_pid = getpid();
    if (make_dir(&server) != 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    atexit(bench_server_stop);

    if ((port = start_free(&server, 0)) < 0) {
        fprintf(stderr, "rdl-bench: could not start %s\n", bin);
        remove_dir(&server);
        return -1;
    }
    snprintf(ctx->host, sizeof(ctx->host), "127.0.0.1");
    ctx->port = port;
    snprintf(ctx->url, sizeof(ctx->url), "redis://127.0.0.1:%d", port);
    return 0;
}

/* 1 if the master's INFO replication lists the replica on port as online,
 * 0 if not yet, -1 if the master cannot be asked. */
static int replica_online(int master_port, int port)
{
    redisReply *r = ask(master_port, "INFO replication");
    char want[64];
    int res = -1;
    if (r != NULL && r->type == REDIS_REPLY_STRING) {
        snprintf(want, sizeof(want), ",port=%d,state=online,", port);
        res = strstr(r->str, want) != NULL;
    }
    if (r != NULL)
        freeReplyObject(r);
    return res;
}

/* CONFIG SET on the master: repl-diskless-sync-delay is the master's
 * setting (the wait for more replicas before a full sync; 5 s by
 * default). Only the durable figure gets here, and with no replica the
 * setting does nothing, so the other figures see the same server. */
static int master_no_sync_delay(int master_port)
{
    redisReply *r = ask(master_port, "CONFIG SET repl-diskless-sync-delay 0");
    int ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    if (r != NULL)
        freeReplyObject(r);
    return ok ? 0 : -1;
}

int bench_replica_start(const bench_ctx *ctx)
{
    int port, online = 0;
    int64_t deadline;

    if (server.pid <= 0 || getpid() != owner_pid) {
        fprintf(stderr, "rdl-bench: a replica needs the throwaway server\n");
        return -1;
    }
    if (replica.pid > 0)
        return 0;
    if (master_no_sync_delay(ctx->port) != 0) {
        fprintf(stderr, "rdl-bench: CONFIG SET on the master failed\n");
        return -1;
    }
    if (make_dir(&replica) != 0)
        return -1;
    if ((port = start_free(&replica, ctx->port)) < 0) {
        fprintf(stderr, "rdl-bench: could not start a replica\n");
        remove_dir(&replica);
        return -1;
    }
    deadline = bench_now_ns() + 10 * 1000000000LL;
    while (bench_now_ns() < deadline && replica.pid > 0) {
        if ((online = replica_online(ctx->port, port)) != 0)
            break;
        if (waitpid(replica.pid, NULL, WNOHANG) == replica.pid)
            replica.pid = 0;
        bench_sleep_ns(10 * 1000000);
    }
    if (online != 1) {
        fprintf(stderr,
                "rdl-bench: the replica on port %d did not come online "
                "(log: %s)\n",
                port, replica.log_path);
        stop(&replica);
        return -1;
    }
    return 0;
}

int bench_replica_pause(int paused)
{
    pid_t pid = replica.pid;
    int st;
    if (pid <= 0 || getpid() != owner_pid)
        return -1;
    if (!paused)
        return kill(pid, SIGCONT);
    if (kill(pid, SIGSTOP) != 0)
        return -1;
    /* Returns once it has stopped: the pause is in force from here. */
    if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
        replica.pid = 0;
        return -1;
    }
    return 0;
}
