/* A function run in a forked process, for tests that kill or stop a lock holder
 * (the fault tests, docs/design.md#tests): the child reports progress through a
 * pipe, the parent reads it with a deadline. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rdlt.h"

struct rdlt_child {
    pid_t pid; /* 0 once reaped */
    int fd;    /* read end of the pipe */
    char buf[512];
    size_t used;
};

static void destroy(void *p)
{
    rdlt_child *ch = p;
    if (ch->pid > 0) {
        kill(ch->pid, SIGKILL);
        waitpid(ch->pid, NULL, 0);
    }
    if (ch->fd >= 0)
        close(ch->fd);
    free(ch);
}

rdlt_child *rdlt_child_start(int (*fn)(void *arg, int fd), void *arg)
{
    rdlt_child *ch = calloc(1, sizeof(*ch));
    pid_t parent = getpid();
    int fds[2];

    assert_non_null(ch);
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(ch);
        fail_msg("rdlt: pipe: %s", strerror(errno));
        abort(); /* not reached: fail_msg does not return */
    }
    fflush(NULL); /* or the child would print the parent's buffered output */
    ch->pid = fork();
    if (ch->pid < 0) {
        close(fds[0]);
        close(fds[1]);
        free(ch);
        fail_msg("rdlt: fork: %s", strerror(errno));
        abort(); /* not reached: fail_msg does not return */
    }
    if (ch->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(126);
        close(fds[0]);
        /* _exit: no atexit handlers (they belong to the parent's test), no
         * cmocka, no leak check of objects the parent owns. */
        _exit(fn(arg, fds[1]));
    }
    close(fds[1]);
    ch->fd = fds[0];
    rdlt_defer(destroy, ch);
    return ch;
}

void rdlt_child_say(int fd, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;
    size_t off = 0;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    while (off < (size_t)n) {
        ssize_t w = write(fd, line + off, (size_t)n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

int rdlt_child_hear(rdlt_child *ch, char *buf, size_t len, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    for (;;) {
        char *nl = memchr(ch->buf, '\n', ch->used);
        struct pollfd pfd = {ch->fd, POLLIN, 0};
        int64_t left;
        ssize_t r;

        if (nl != NULL) {
            size_t n = (size_t)(nl - ch->buf);
            snprintf(buf, len, "%.*s", (int)n, ch->buf);
            memmove(ch->buf, nl + 1, ch->used - n - 1);
            ch->used -= n + 1;
            return 0;
        }
        left = deadline - rdlt_now_ms();
        if (left <= 0 || ch->used == sizeof(ch->buf))
            return -1;
        if (poll(&pfd, 1, (int)left) <= 0)
            continue; /* timeout or EINTR: the deadline check decides */
        r = read(ch->fd, ch->buf + ch->used, sizeof(ch->buf) - ch->used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ch->used += (size_t)r;
    }
}

void rdlt_child_signal(rdlt_child *ch, int sig)
{
    if (ch->pid <= 0)
        fail_msg("rdlt: child already reaped");
    assert_int_equal(kill(ch->pid, sig), 0);
    if (sig == SIGKILL) {
        waitpid(ch->pid, NULL, 0);
        ch->pid = 0;
    }
}

int rdlt_child_wait(rdlt_child *ch, int64_t timeout_ms)
{
    int64_t deadline = rdlt_now_ms() + timeout_ms;
    int status;
    if (ch->pid <= 0)
        fail_msg("rdlt: child already reaped");
    for (;;) {
        pid_t r = waitpid(ch->pid, &status, WNOHANG);
        if (r == ch->pid) {
            ch->pid = 0;
            return status;
        }
        if (rdlt_now_ms() >= deadline) {
            kill(ch->pid, SIGKILL);
            waitpid(ch->pid, NULL, 0);
            ch->pid = 0;
            return -1;
        }
        rdlt_sleep_ms(5);
    }
}

pid_t rdlt_child_pid(const rdlt_child *ch)
{
    return ch->pid;
}
