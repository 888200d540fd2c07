/* A throwaway redis-server per test: started on a free loopback port, in a
 * temporary directory, without persistence, and always stopped again. Tests
 * never use a fixed port or a server the user runs (docs/design.md#tests). */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdlt.h"

#define MAX_EXTRA 32

struct rdlt_server {
    pid_t pid; /* 0 when not running */
    int port;
    char dir[256];
    char log[300];
    char url[64];
    char *extra[MAX_EXTRA + 1];
    const char *password; /* the value of --requirepass in extra, if any */
    int cluster;          /* extra has --cluster-enabled: a bus port too */
    int major;            /* the server's major version (6 for Redis 6.2) */
    int bus_port;
    int tls_at; /* index in extra of "auto" after --tls-port, or -1 */
    int tls_port;
    char tls_url[64];
    char conf[300];    /* a configuration file, first argument; "" if none */
    redisContext *ctx; /* for rdlt_cmd(), reopened after a restart */
};

/* The redis-server binary: $RDL_TEST_REDIS_SERVER (the caller's choice),
 * else $RDL_TEST_REDIS_SERVER_DEFAULT (the one CMake found), else the
 * first redis-server on PATH. Returns 0 and fills path, or -1. */
static int find_binary(char *path, size_t len)
{
    const char *env = getenv("RDL_TEST_REDIS_SERVER");
    const char *dirs = getenv("PATH");
    char *copy, *tok, *save = NULL;

    if (env == NULL || env[0] == '\0')
        env = getenv("RDL_TEST_REDIS_SERVER_DEFAULT");
    if (env != NULL && env[0] != '\0') {
        snprintf(path, len, "%s", env);
        return access(path, X_OK) == 0 ? 0 : -1;
    }
    if (dirs == NULL)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    copy = strdup(dirs);
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

/* A port nobody listens on right now: bind port 0 and ask the kernel. The
 * port could be taken again before the server binds it; spawn() notices
 * and the caller retries with another. */
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

/* Whether port is free on the loopback address right now. */
static int port_free(int port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
    if (fd < 0)
        return 0;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    close(fd);
    return ok;
}

/* A cluster node's port for a server before 7.0, whose bus port cannot
 * be set: port and port + 10000 both free, so at most 55535. Below the
 * kernel's ephemeral range, where free_port()'s ports come from; the
 * start is spread by the process id so parallel tests rarely meet. */
static int bus_pair_port(void)
{
    int i, port;
    for (i = 0; i < 2000; i++) {
        port = 20000 + (int)((getpid() * 7919 + i * 13) % 12000);
        if (port_free(port) && port_free(port + 10000))
            return port;
    }
    return -1;
}

static void print_log(const rdlt_server *s)
{
    char line[512];
    FILE *f = fopen(s->log, "r");
    if (f == NULL)
        return;
    fprintf(stderr, "---- %s ----\n", s->log);
    while (fgets(line, sizeof(line), f) != NULL)
        fputs(line, stderr);
    fprintf(stderr, "----\n");
    fclose(f);
}

static int log_says(const rdlt_server *s, const char *what)
{
    char line[512];
    int found = 0;
    FILE *f = fopen(s->log, "r");
    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = strstr(line, what) != NULL;
    fclose(f);
    return found;
}

static void drop_ctx(rdlt_server *s)
{
    if (s->ctx != NULL) {
        redisFree(s->ctx);
        s->ctx = NULL;
    }
}

/* Reaps the server within timeout_ms; 1 if it exited. */
static int reap(rdlt_server *s, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    int status;
    for (;;) {
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == s->pid || (r < 0 && errno == ECHILD)) {
            s->pid = 0;
            return 1;
        }
        if (rdlt_now_ms() >= deadline)
            return 0;
        rdlt_sleep_ms(5);
    }
}

/* Answers PING on a fresh connection? */
static int pings(const rdlt_server *s)
{
    struct timeval tv = {0, 200000};
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", s->port, tv);
    redisReply *r = NULL;
    int ok = 0;
    if (ctx != NULL && !ctx->err) {
        redisSetTimeout(ctx, tv);
        r = redisCommand(ctx, "PING");
        /* With --requirepass, NOAUTH also means "up and answering". */
        ok = r != NULL &&
             ((r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0) ||
              (r->type == REDIS_REPLY_ERROR &&
               strncmp(r->str, "NOAUTH", 6) == 0));
    }
    if (r != NULL)
        freeReplyObject(r);
    if (ctx != NULL)
        redisFree(ctx);
    return ok;
}

/* The major version of the server binary bin (`redis-server --version`:
 * "Redis server v=6.2.16 ..."; Valkey's says v=8.0.1): the options a test
 * server gets depend on it. Asked once per binary; 0 if unknown. */
static int server_major(const char *bin)
{
    static char known[512];
    static int major;
    char cmd[600], line[256];
    const char *v;
    FILE *p;

    if (strcmp(known, bin) == 0)
        return major;
    snprintf(known, sizeof(known), "%s", bin);
    major = 0;
    snprintf(cmd, sizeof(cmd), "'%s' --version 2>/dev/null", bin);
    p = popen(cmd, "r");
    if (p == NULL)
        return 0;
    if (fgets(line, sizeof(line), p) != NULL &&
        (v = strstr(line, " v=")) != NULL)
        major = atoi(v + 3);
    pclose(p);
    return major;
}

/* Whether extra[i] is an option, with its value, that a server of this
 * major version does not know and that it needs no stand-in for: DEBUG
 * is on by default before 7.0, where --enable-debug-command came in. */
static int unknown_option(const rdlt_server *s, int i)
{
    const char *o = s->extra[i];
    return s->major > 0 && s->major < 7 && o != NULL &&
           strcmp(o, "--enable-debug-command") == 0;
}

/* Starts the process on s->port and waits for PING. Returns 0; 1 if the
 * port was taken (try another); -1 on any other failure (logged). */
static int spawn(rdlt_server *s, const char *bin)
{
    char port[16], bus[16], tls[16];
    const char *argv[32 + MAX_EXTRA];
    int argc = 0, i, fd;
    pid_t parent = getpid(), pid;
    int64_t deadline;

    snprintf(port, sizeof(port), "%d", s->port);
    argv[argc++] = bin;
    if (s->conf[0] != '\0')
        argv[argc++] = s->conf;
    argv[argc++] = "--port";
    argv[argc++] = port;
    argv[argc++] = "--bind";
    argv[argc++] = "127.0.0.1";
    argv[argc++] = "--save";
    argv[argc++] = "";
    argv[argc++] = "--appendonly";
    argv[argc++] = "no";
    argv[argc++] = "--dir";
    argv[argc++] = s->dir;
    argv[argc++] = "--daemonize";
    argv[argc++] = "no";
    argv[argc++] = "--logfile";
    argv[argc++] = s->log;
    snprintf(tls, sizeof(tls), "%d", s->tls_port);
    for (i = 0; s->extra[i] != NULL; i++) {
        if (unknown_option(s, i)) {
            i += s->extra[i + 1] != NULL; /* and its value */
            continue;
        }
        argv[argc++] = i == s->tls_at ? tls : s->extra[i];
    }
    /* Before 7.0 the bus port is always port + 10000 (start()). */
    if (s->cluster && s->major >= 7) {
        /* The default bus port (port + 10000) may be taken or past 65535
         * for a port the kernel picked. */
        snprintf(bus, sizeof(bus), "%d", s->bus_port);
        argv[argc++] = "--cluster-port";
        argv[argc++] = bus;
    }
    argv[argc] = NULL;

    unlink(s->log);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "rdlt: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* Dies with the test process, even when CTest kills a hung test
         * with SIGKILL. (The signal follows the forking thread, which is
         * why servers are started from the main thread only.) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(126);
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        for (fd = 3; fd < 1024; fd++)
            close(fd);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    s->pid = pid;

    deadline = rdlt_now_ms() + 10000;
    while (rdlt_now_ms() < deadline) {
        if (reap(s, 0)) {
            if (log_says(s, "Address already in use"))
                return 1;
            fprintf(stderr, "rdlt: redis-server on port %d exited\n", s->port);
            print_log(s);
            return -1;
        }
        if (pings(s))
            return 0;
        rdlt_sleep_ms(10);
    }
    fprintf(stderr, "rdlt: redis-server on port %d did not answer PING\n",
            s->port);
    print_log(s);
    kill(s->pid, SIGKILL);
    reap(s, 5000);
    return -1;
}

/* The directory and what is in it: files, and the folder of an
 * append-only server (appendonlydir). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat st;
    char path[600];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_dir(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* 1 if the file holds needle. */
static int file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    size_t n = strlen(needle), len = 0, got;
    char *buf = NULL;
    int found = 0;
    if (f == NULL)
        return 0;
    for (;;) {
        char *more = realloc(buf, len + 65536 + 1);
        if (more == NULL)
            break;
        buf = more;
        got = fread(buf + len, 1, 65536, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (buf != NULL && len >= n) {
        size_t i;
        for (i = 0; i + n <= len && !found; i++)
            found = memcmp(buf + i, needle, n) == 0;
    }
    free(buf);
    return found;
}

int rdlt_server_aof_has(const rdlt_server *s, const char *needle)
{
    char sub[300], path[600];
    DIR *d;
    struct dirent *e;
    int found = 0;
    snprintf(sub, sizeof(sub), "%s/appendonlydir", s->dir);
    d = opendir(sub);
    if (d == NULL)
        return 0;
    while (!found && (e = readdir(d)) != NULL) {
        if (strstr(e->d_name, ".aof") == NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%s", sub, e->d_name);
        found = file_has(path, needle);
    }
    closedir(d);
    return found;
}

int rdlt_server_has_command(rdlt_server *s, const char *name)
{
    redisReply *r = rdlt_cmd(s, "COMMAND INFO %s", name);
    int has = r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
              r->element[0]->type == REDIS_REPLY_ARRAY;
    freeReplyObject(r);
    return has;
}

/* Cleanup-stack entry: never calls cmocka (it may run from atexit). */
static void destroy(void *p)
{
    rdlt_server *s = p;
    int i;
    drop_ctx(s);
    if (s->pid > 0) {
        kill(s->pid, SIGKILL);
        kill(s->pid, SIGCONT);
        if (!reap(s, 5000))
            fprintf(stderr, "rdlt: redis-server %d did not exit\n",
                    (int)s->pid);
    }
    remove_dir(s->dir);
    for (i = 0; s->extra[i] != NULL; i++)
        free(s->extra[i]);
    free(s);
}

static const char *binary_or_skip(void)
{
    static char bin[512];
    if (find_binary(bin, sizeof(bin)) == 0)
        return bin;
    if (getenv("CI") != NULL && getenv("CI")[0] != '\0')
        fail_msg("rdlt: redis-server not found (set RDL_TEST_REDIS_SERVER "
                 "or PATH); CI is set, so this is a failure");
    print_message("rdlt: redis-server not found; skipping\n");
    skip();
    return NULL;
}

static rdlt_server *start(const char *conf_text, const char *const *extra);

rdlt_server *rdlt_server_start_args(const char *const *extra)
{
    return start(NULL, extra);
}

rdlt_server *rdlt_server_start_replica(const rdlt_server *master)
{
    char port[16];
    const char *args[] = {"--replicaof", "127.0.0.1", port, NULL};
    snprintf(port, sizeof(port), "%d", rdlt_server_port(master));
    return start(NULL, args);
}

void rdlt_server_wait_replicas(rdlt_server *master, int n, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    long long acked = 0;
    /* A write, then WAIT: the replicas that acknowledge it are the ones a
     * client's WAIT counts (a replica listed online may not ack yet). */
    freeReplyObject(rdlt_cmd(master, "SET rdlt:replicas %d", n));
    for (;;) {
        redisReply *r = rdlt_cmd(master, "WAIT %d 100", n);
        acked = r->type == REDIS_REPLY_INTEGER ? r->integer : 0;
        freeReplyObject(r);
        if (acked >= n)
            break;
        if (rdlt_now_ms() > deadline)
            fail_msg("rdlt: %lld of %d replicas acknowledged in %lld ms", acked,
                     n, (long long)timeout_ms);
        rdlt_sleep_ms(20);
    }
    freeReplyObject(rdlt_cmd(master, "DEL rdlt:replicas"));
}

rdlt_server *rdlt_server_start_conf(const char *conf_text,
                                    const char *const *extra)
{
    return start(conf_text, extra);
}

static rdlt_server *start(const char *conf_text, const char *const *extra)
{
    const char *bin = binary_or_skip();
    /* RDL_TEST_TMPDIR (set by CTest to a directory of the build tree, so
     * what a crashed test leaves behind does not litter /tmp), else
     * TMPDIR, else /tmp. */
    const char *tmp = getenv("RDL_TEST_TMPDIR");
    rdlt_server *s = calloc(1, sizeof(*s));
    int i, attempt, rc = -1;

    if (tmp == NULL || tmp[0] == '\0')
        tmp = getenv("TMPDIR");
    assert_non_null(s);
    s->tls_at = -1;
    for (i = 0; extra != NULL && extra[i] != NULL; i++) {
        if (i == MAX_EXTRA)
            fail_msg("rdlt: too many server arguments");
        s->extra[i] = strdup(extra[i]);
        assert_non_null(s->extra[i]);
        if (i > 0 && strcmp(s->extra[i - 1], "--requirepass") == 0)
            s->password = s->extra[i];
        if (i > 0 && strcmp(s->extra[i - 1], "--cluster-enabled") == 0)
            s->cluster = strcmp(s->extra[i], "yes") == 0;
        if (i > 0 && strcmp(s->extra[i - 1], "--tls-port") == 0 &&
            strcmp(s->extra[i], "auto") == 0)
            s->tls_at = i;
    }
    snprintf(s->dir, sizeof(s->dir), "%s/rdlt-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(s->dir) == NULL) {
        free(s);
        fail_msg("rdlt: mkdtemp: %s", strerror(errno));
    }
    snprintf(s->log, sizeof(s->log), "%s/redis.log", s->dir);
    rdlt_defer(destroy, s);
    if (conf_text != NULL) {
        FILE *f;
        snprintf(s->conf, sizeof(s->conf), "%s/node.conf", s->dir);
        f = fopen(s->conf, "w");
        if (f == NULL)
            fail_msg("rdlt: cannot write %s", s->conf);
        fputs(conf_text, f);
        fclose(f);
    }

    s->major = server_major(bin);
    for (attempt = 0; attempt < 5; attempt++) {
        s->port = s->cluster && s->major < 7 ? bus_pair_port() : free_port();
        if (s->port <= 0)
            fail_msg("rdlt: no free port: %s", strerror(errno));
        if (s->cluster && s->major < 7)
            s->bus_port = s->port + 10000;
        else
            do
                s->bus_port = s->cluster ? free_port() : 0;
            while (s->cluster && s->bus_port == s->port);
        do
            s->tls_port = s->tls_at >= 0 ? free_port() : 0;
        while (s->tls_at >= 0 &&
               (s->tls_port == s->port || s->tls_port == s->bus_port));
        rc = spawn(s, bin);
        if (rc != 1)
            break;
    }
    if (rc != 0)
        fail_msg("rdlt: could not start %s", bin);
    snprintf(s->url, sizeof(s->url), "redis://127.0.0.1:%d", s->port);
    snprintf(s->tls_url, sizeof(s->tls_url), "rediss://127.0.0.1:%d",
             s->tls_port);
    return s;
}

rdlt_server *rdlt_server_start(void)
{
    return rdlt_server_start_args(NULL);
}

int rdlt_server_major(const rdlt_server *s)
{
    return s->major;
}

int rdlt_server_bus_port(const rdlt_server *s)
{
    return s->bus_port;
}

void rdlt_server_reconnect(rdlt_server *s)
{
    drop_ctx(s);
}

const char *rdlt_server_password(const rdlt_server *s)
{
    return s->password;
}

int rdlt_server_tls_port(const rdlt_server *s)
{
    return s->tls_port;
}

const char *rdlt_tls_url(const rdlt_server *s)
{
    return s->tls_url;
}

int rdlt_server_running(const rdlt_server *s)
{
    return s->pid > 0;
}

int rdlt_server_port(const rdlt_server *s)
{
    return s->port;
}

const char *rdlt_server_url(const rdlt_server *s)
{
    return s->url;
}

long long rdlt_cmd_calls(rdlt_server *s, const char *cmd)
{
    redisReply *r = rdlt_cmd(s, "INFO commandstats");
    char field[64];
    const char *at;
    long long n = 0;
    if (r->type != REDIS_REPLY_STRING)
        fail_msg("rdlt: INFO commandstats: not a string");
    snprintf(field, sizeof(field), "cmdstat_%s:calls=", cmd);
    at = strstr(r->str, field);
    if (at != NULL)
        n = atoll(at + strlen(field));
    freeReplyObject(r);
    return n;
}

long long rdlt_script_calls(rdlt_server *s)
{
    return rdlt_cmd_calls(s, "evalsha") + rdlt_cmd_calls(s, "fcall");
}

const char *rdlt_server_log(const rdlt_server *s)
{
    return s->log;
}

void rdlt_server_stop(rdlt_server *s)
{
    drop_ctx(s);
    if (s->pid <= 0)
        return;
    kill(s->pid, SIGTERM);
    kill(s->pid, SIGCONT); /* in case it was stopped */
    if (!reap(s, 10000)) {
        kill(s->pid, SIGKILL);
        reap(s, 5000);
        fail_msg("rdlt: redis-server ignored SIGTERM for 10 s");
    }
}

void rdlt_server_signal(rdlt_server *s, int sig)
{
    if (s->pid <= 0)
        fail_msg("rdlt: server not running");
    if (sig == SIGKILL)
        drop_ctx(s);
    assert_int_equal(kill(s->pid, sig), 0);
    if (sig == SIGKILL && !reap(s, 10000))
        fail_msg("rdlt: redis-server survived SIGKILL");
}

void rdlt_server_restart(rdlt_server *s)
{
    const char *bin = binary_or_skip();
    int rc;
    if (s->pid > 0)
        fail_msg("rdlt: restart of a running server");
    drop_ctx(s);
    rc = spawn(s, bin);
    if (rc == 1)
        fail_msg("rdlt: port %d was taken while the server was down", s->port);
    if (rc != 0)
        fail_msg("rdlt: could not restart redis-server on port %d", s->port);
}

redisReply *rdlt_cmd(rdlt_server *s, const char *fmt, ...)
{
    struct timeval tv = {5, 0};
    redisReply *r;
    va_list ap;

    if (s->ctx != NULL && s->ctx->err)
        drop_ctx(s);
    if (s->ctx == NULL) {
        s->ctx = redisConnectWithTimeout("127.0.0.1", s->port, tv);
        if (s->ctx == NULL || s->ctx->err) {
            char msg[128];
            snprintf(msg, sizeof(msg), "%s",
                     s->ctx != NULL ? s->ctx->errstr : "out of memory");
            drop_ctx(s);
            fail_msg("rdlt: connect to port %d: %s", s->port, msg);
        }
        redisSetTimeout(s->ctx, tv);
        if (s->password != NULL) {
            r = redisCommand(s->ctx, "AUTH %s", s->password);
            if (r == NULL || r->type == REDIS_REPLY_ERROR) {
                if (r != NULL)
                    freeReplyObject(r);
                drop_ctx(s);
                fail_msg("rdlt: AUTH on port %d failed", s->port);
            }
            freeReplyObject(r);
        }
    }
    va_start(ap, fmt);
    r = redisvCommand(s->ctx, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        char msg[128];
        snprintf(msg, sizeof(msg), "%s", s->ctx->errstr);
        drop_ctx(s);
        fail_msg("rdlt: command \"%s\" on port %d: %s", fmt, s->port, msg);
    }
    return r;
}

static long long integer_cmd(rdlt_server *s, const char *cmd)
{
    redisReply *r = rdlt_cmd(s, cmd);
    long long v;
    if (r->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(r);
        fail_msg("rdlt: %s did not return an integer", cmd);
    }
    v = r->integer;
    freeReplyObject(r);
    return v;
}

long long rdlt_dbsize(rdlt_server *s)
{
    return integer_cmd(s, "DBSIZE");
}

/* Counts the keys matching pattern (SCAN MATCH) that pass_over() does not pass
 * over (every key if it is NULL). */
static long long count_matching(rdlt_server *s, const char *pattern,
                                int (*pass_over)(rdlt_server *, const char *))
{
    char cursor[32] = "0";
    long long n = 0;
    size_t i;
    do {
        redisReply *r =
            rdlt_cmd(s, "SCAN %s MATCH %s COUNT 1000", cursor, pattern);
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            freeReplyObject(r);
            fail_msg("rdlt: unexpected SCAN reply");
        }
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (i = 0; i < r->element[1]->elements; i++)
            n += pass_over == NULL ||
                 !pass_over(s, r->element[1]->element[i]->str);
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return n;
}

long long rdlt_count_keys(rdlt_server *s, const char *pattern)
{
    return count_matching(s, pattern, NULL);
}

/* Server time in ms. */
static long long server_ms(rdlt_server *s)
{
    redisReply *r = rdlt_cmd(s, "TIME");
    long long ms = strtoll(r->element[0]->str, NULL, 10) * 1000 +
                   strtoll(r->element[1]->str, NULL, 10) / 1000;
    freeReplyObject(r);
    return ms;
}

/* A fair lock's hash (scripts/lib/fairq.lua) holds something live: a hold
 * whose end e has not passed, or a queue entry s:<seq> whose lapse has
 * not. */
static int fair_live(rdlt_server *s, const char *key)
{
    long long now = server_ms(s);
    redisReply *r = rdlt_cmd(s, "HGETALL %s", key);
    const char *owner = NULL, *end = "0";
    int live = 0;
    size_t i;
    for (i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2) {
        const char *f = r->element[i]->str, *v = r->element[i + 1]->str;
        if (strcmp(f, "o") == 0)
            owner = v;
        else if (strcmp(f, "e") == 0)
            end = v;
        else if (strncmp(f, "s:", 2) == 0 && strtoll(v, NULL, 10) > now)
            live = 1;
    }
    if (owner != NULL && *owner != '\0' && strtoll(end, NULL, 10) > now)
        live = 1;
    freeReplyObject(r);
    return live;
}

int rdlt_key_retained(rdlt_server *s, const char *key)
{
    redisReply *r;
    int free_lock;
    if (strstr(key, ".fence:") != NULL)
        return 1;
    if (strstr(key, ":lock:") == NULL && strstr(key, ":fair:") == NULL)
        return 0;
    r = rdlt_cmd(s, "TYPE %s", key);
    if (r->type == REDIS_REPLY_ERROR) { /* a cluster replica: MOVED */
        freeReplyObject(r);
        freeReplyObject(rdlt_cmd(s, "READONLY"));
        r = rdlt_cmd(s, "TYPE %s", key);
    }
    free_lock = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "hash") == 0;
    freeReplyObject(r);
    if (!free_lock)
        return 0;
    if (strstr(key, ":fair:") != NULL)
        return !fair_live(s, key);
    /* Free, or never held (a force release of a free name leaves its
     * record for the applied-set window). */
    r = rdlt_cmd(s, "HGET %s o", key);
    free_lock = r->type == REDIS_REPLY_NIL ||
                (r->type == REDIS_REPLY_STRING && r->len == 0);
    freeReplyObject(r);
    return free_lock;
}

long long rdlt_count_held(rdlt_server *s, const char *pattern)
{
    return count_matching(s, pattern, rdlt_key_retained);
}

/* Counts the CLIENT LIST lines whose name starts with prefix and stores
 * the ids of the first max of them. */
static int each_client(rdlt_server *s, const char *prefix, long long *ids,
                       int max)
{
    redisReply *r = rdlt_cmd(s, "CLIENT LIST");
    size_t plen = strlen(prefix);
    const char *line;
    int n = 0;

    if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS) {
        freeReplyObject(r);
        fail_msg("rdlt: unexpected CLIENT LIST reply");
    }
    for (line = r->str; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        const char *name = strstr(line, " name=");
        if (name != NULL && (end == NULL || name < end) &&
            strncmp(name + 6, prefix, plen) == 0) {
            if (ids != NULL && n < max)
                ids[n] = strtoll(line + 3, NULL, 10); /* "id=" */
            n++;
        }
        line = end != NULL ? end + 1 : NULL;
    }
    freeReplyObject(r);
    return n;
}

int rdlt_count_clients(rdlt_server *s, const char *name_prefix)
{
    return each_client(s, name_prefix, NULL, 0);
}

int rdlt_kill_clients(rdlt_server *s, const char *name_prefix)
{
    long long ids[64];
    int n = each_client(s, name_prefix, ids, 64), i, killed = 0;
    for (i = 0; i < n && i < 64; i++) {
        redisReply *r = rdlt_cmd(s, "CLIENT KILL ID %lld", ids[i]);
        if (r->type == REDIS_REPLY_INTEGER)
            killed += (int)r->integer;
        freeReplyObject(r);
    }
    return killed;
}
