/* The throwaway redis-server: a free loopback port, a temporary directory,
 * no persistence. The benchmark owns exactly this one process and stops it
 * on every way out: normal exit, a failed figure, SIGINT/SIGTERM/SIGHUP,
 * and (PR_SET_PDEATHSIG) the benchmark being killed. */
#define _GNU_SOURCE
#include <arpa/inet.h>
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

static volatile pid_t server_pid; /* 0: none */
static pid_t owner_pid;           /* forked workers must not stop it */
static char dir[256];
static char log_path[300];

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

static int answers(int port)
{
    struct timeval tv = {0, 200000};
    redisContext *rc = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r = NULL;
    int ok = 0;
    if (rc != NULL && !rc->err) {
        redisSetTimeout(rc, tv);
        r = redisCommand(rc, "PING");
        ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    }
    if (r != NULL)
        freeReplyObject(r);
    if (rc != NULL)
        redisFree(rc);
    return ok;
}

static void remove_dir(void)
{
    char path[400];
    if (dir[0] == '\0')
        return;
    unlink(log_path);
    snprintf(path, sizeof(path), "%s/dump.rdb", dir);
    unlink(path);
    rmdir(dir);
    dir[0] = '\0';
}

void bench_server_stop(void)
{
    pid_t pid = server_pid;
    if (pid <= 0 || getpid() != owner_pid)
        return;
    server_pid = 0;
    kill(pid, SIGTERM);
    if (waitpid(pid, NULL, 0) < 0 && errno != ECHILD)
        kill(pid, SIGKILL);
    remove_dir();
}

int bench_server_pid(void)
{
    return (int)server_pid;
}

static void on_signal(int sig)
{
    /* Only async-signal-safe calls: kill and reap our server, then die of
     * the same signal. */
    pid_t pid = server_pid;
    if (pid > 0 && getpid() == owner_pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* 0 started, 1 port taken (try another), -1 failed. */
static int start(const char *bin, int port)
{
    char p[16];
    pid_t pid;
    int fd, i;
    int64_t deadline;
    const char *argv[] = {bin,         "--port",      p,    "--bind",
                          "127.0.0.1", "--save",      "",   "--appendonly",
                          "no",        "--dir",       dir,  "--logfile",
                          log_path,    "--daemonize", "no", NULL};

    snprintf(p, sizeof(p), "%d", port);
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
    server_pid = pid;
    deadline = bench_now_ns() + 10 * 1000000000LL;
    while (bench_now_ns() < deadline) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            server_pid = 0;
            return 1; /* most likely the port was taken */
        }
        if (answers(port))
            return 0;
        bench_sleep_ns(10 * 1000000);
    }
    fprintf(stderr, "rdl-bench: redis-server did not answer (log: %s)\n",
            log_path);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    server_pid = 0;
    return -1;
}

int bench_server_start(bench_ctx *ctx)
{
    char bin[512];
    const char *tmp = getenv("TMPDIR");
    int attempt, port = -1, rc = 1;
    struct sigaction sa;

    if (find_binary(bin, sizeof(bin)) != 0) {
        fprintf(stderr, "rdl-bench: redis-server not found (set "
                        "RDL_BENCH_REDIS_SERVER, or use --url)\n");
        return -1;
    }
    owner_pid = getpid();
    snprintf(dir, sizeof(dir), "%s/rdl-bench-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "rdl-bench: mkdtemp: %s\n", strerror(errno));
        dir[0] = '\0';
        return -1;
    }
    snprintf(log_path, sizeof(log_path), "%s/redis.log", dir);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    atexit(bench_server_stop);

    for (attempt = 0; attempt < 5 && rc == 1; attempt++) {
        port = free_port();
        if (port <= 0)
            break;
        rc = start(bin, port);
    }
    if (rc != 0) {
        fprintf(stderr, "rdl-bench: could not start %s\n", bin);
        remove_dir();
        return -1;
    }
    snprintf(ctx->host, sizeof(ctx->host), "127.0.0.1");
    ctx->port = port;
    snprintf(ctx->url, sizeof(ctx->url), "redis://127.0.0.1:%d", port);
    return 0;
}
