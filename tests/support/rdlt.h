/* rdlt: support for rdl's tests. One header for every test program: it
 * includes cmocka with the headers cmocka needs before it, and declares the
 * helpers of tests/support (prefix rdlt_, so nothing collides with the
 * library's rdl_ and rdl__ symbols).
 *
 * Resources the helpers create (servers, child processes, clients, locks,
 * loops) are recorded on one cleanup stack and released by rdlt_teardown()
 * in reverse order, also when a test fails half-way: cmocka leaves a failing
 * test with a longjmp, so a test cannot be trusted to reach its own cleanup
 * code. Register rdlt_teardown() as every test's teardown (RDLT_TEST()). An
 * atexit() handler and PR_SET_PDEATHSIG cover what the teardown cannot: a
 * crash, or CTest killing a hung test, never leaves a redis-server behind. */
#ifndef RDLT_H
#define RDLT_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* The helpers are C, and so is cmocka, whose header has no extern "C" of
 * its own; C++ tests (tests/integration/test_cpp.cpp) call both. */
#ifdef __cplusplus
extern "C" {
#endif

#include <cmocka.h>

#include <sys/types.h>

#include <hiredis/hiredis.h>

#include "rdl.h"

/* A test registered with the shared teardown. */
#define RDLT_TEST(fn) cmocka_unit_test_teardown(fn, rdlt_teardown)

/* ---- main, cleanup -------------------------------------------------------- */

/* Runs `tests` (with argv[1], if given, as cmocka's test filter, so CTest
 * can run each test in a process of its own). Returns cmocka's result. */
#define RDLT_MAIN(tests)                                                       \
    int main(int argc, char **argv)                                            \
    {                                                                          \
        rdlt_init(argc, argv);                                                 \
        return cmocka_run_group_tests(tests, NULL, NULL);                      \
    }
void rdlt_init(int argc, char **argv);

/* Pushes fn(p) on the cleanup stack. */
void rdlt_defer(void (*fn)(void *), void *p);
/* Runs the deferred call registered for p now and removes it (for a test
 * that frees an object itself, e.g. to check what happens after). Returns 1
 * if p was registered. */
int rdlt_release(void *p);
/* Removes p from the stack without running its call. */
void rdlt_forget(void *p);
/* Runs every deferred call, newest first. Safe to call more than once. */
void rdlt_cleanup(void);
/* cmocka teardown: rdlt_cleanup(). */
int rdlt_teardown(void **state);

/* ---- time ------------------------------------------------------------------- */

/* Monotonic milliseconds. */
int64_t rdlt_now_ms(void);
void rdlt_sleep_ms(int64_t ms);

/* Asserts lo <= v <= hi with a readable message. */
#define rdlt_assert_between(v, lo, hi)                                         \
    do {                                                                       \
        long long v_ = (long long)(v), lo_ = (long long)(lo),                  \
                  hi_ = (long long)(hi);                                       \
        if (v_ < lo_ || v_ > hi_)                                              \
            fail_msg("%s = %lld, expected %lld..%lld", #v, v_, lo_, hi_);      \
    } while (0)

/* Asserts that an rdl call returned `want`, naming both codes. */
#define rdlt_assert_rc(expr, want)                                             \
    do {                                                                       \
        int got_ = (expr), want_ = (want);                                     \
        if (got_ != want_)                                                     \
            fail_msg("%s returned %d (%s), expected %d (%s)", #expr, got_,     \
                     rdl_err_name(got_), want_, rdl_err_name(want_));          \
    } while (0)
#define rdlt_assert_ok(expr) rdlt_assert_rc(expr, 0)

/* ---- server.c: a throwaway redis-server ------------------------------------ */

typedef struct rdlt_server rdlt_server;

/* Starts redis-server (RDL_TEST_REDIS_SERVER, else redis-server from PATH)
 * on a free loopback port, with no persistence, in a fresh temporary
 * directory (under $RDL_TEST_TMPDIR, else $TMPDIR, else /tmp), and waits
 * until it answers PING (NOAUTH counts: --requirepass is supported, and
 * rdlt_cmd() then authenticates). `extra` is a NULL-terminated
 * list of further arguments (e.g. "--requirepass", "pw") or NULL. If there
 * is no redis-server the test is skipped, or fails when the environment
 * variable CI is set. Any other failure fails the test. The server is
 * stopped by rdlt_teardown(). Call from the main thread only. */
rdlt_server *rdlt_server_start(void);
rdlt_server *rdlt_server_start_args(const char *const *extra);
/* A server started as a replica of master (--replicaof), as
 * rdlt_server_start() otherwise. */
rdlt_server *rdlt_server_start_replica(const rdlt_server *master);
/* Waits until n replicas acknowledge a write on master (fails the test
 * after timeout_ms): a client's WAIT counts them from then on. */
void rdlt_server_wait_replicas(rdlt_server *master, int n, int64_t timeout_ms);
/* The same with a configuration file holding conf_text (in the server's
 * directory, given as the first argument; Sentinel needs one it can
 * rewrite). */
rdlt_server *rdlt_server_start_conf(const char *conf_text,
                                    const char *const *extra);
int rdlt_server_port(const rdlt_server *s);
/* With "--cluster-enabled" "yes" among the arguments the server also gets
 * a free cluster bus port (--cluster-port); else 0. */
int rdlt_server_bus_port(const rdlt_server *s);
/* The server's major version (6 for Redis 6.2.16, 8 for Valkey 8.0.1); 0
 * if its --version could not be read. */
int rdlt_server_major(const rdlt_server *s);
/* The next rdlt_cmd() opens a new connection (after an event that closed
 * the server's clients, such as a failover). */
void rdlt_server_reconnect(rdlt_server *s);
/* The value of --requirepass among the arguments, or NULL. */
const char *rdlt_server_password(const rdlt_server *s);
/* With "--tls-port" "auto" among the arguments the server also listens
 * for TLS on a free port (the plain port stays, for rdlt_cmd()); else 0.
 * See rdlt_tls_server_start(). */
int rdlt_server_tls_port(const rdlt_server *s);
/* 1 unless the server was stopped or killed (and not restarted). */
int rdlt_server_running(const rdlt_server *s);
/* "redis://127.0.0.1:<port>" (static storage of s). */
const char *rdlt_server_url(const rdlt_server *s);
/* The server's log file (removed with the server), for diagnostics. */
const char *rdlt_server_log(const rdlt_server *s);
/* SIGTERM, then waits for the process. The server can be restarted. */
void rdlt_server_stop(rdlt_server *s);
/* Sends sig (SIGKILL: and waits for the process; SIGSTOP/SIGCONT: only
 * sends it). */
void rdlt_server_signal(rdlt_server *s, int sig);
/* Starts a stopped or killed server again on the same port, with the same
 * arguments and directory, and waits for PING. Its data is gone (no
 * persistence), unless it was started with "--appendonly" "yes": then it
 * loads its append-only file. */
void rdlt_server_restart(rdlt_server *s);
/* 1 if a file of the server's append-only folder (appendonlydir, Redis
 * 7.0+ and Valkey) holds the bytes of needle (a key's name, say). */
int rdlt_server_aof_has(const rdlt_server *s, const char *needle);
/* 1 if COMMAND INFO knows the command (e.g. "WAITAOF": Redis 7.2+). */
int rdlt_server_has_command(rdlt_server *s, const char *name);
/* Runs a command on the server (a fresh connection after a restart) and
 * returns the reply, to be freed with freeReplyObject(). Fails the test if
 * the server does not answer. */
redisReply *rdlt_cmd(rdlt_server *s, const char *fmt, ...);
/* How many times the server ran command `cmd` (lower case, as INFO
 * commandstats names it), scripts' calls included; 0 if never. */
long long rdlt_cmd_calls(rdlt_server *s, const char *cmd);
/* How many script calls by name the server ran: EVALSHA, and FCALL (the
 * client calls the scripts' functions where the server has its function
 * library, Redis 7.0 and later). EVAL is not counted. */
long long rdlt_script_calls(rdlt_server *s);
/* DBSIZE. */
long long rdlt_dbsize(rdlt_server *s);
/* Number of keys matching a glob pattern (SCAN MATCH). */
long long rdlt_count_keys(rdlt_server *s, const char *pattern);
/* Number of keys matching a glob pattern that hold or queue something:
 * not counted are the fence hashes and the hashes of free plain locks
 * (field o empty or absent), which outlive their holds on purpose. */
long long rdlt_count_held(rdlt_server *s, const char *pattern);
/* 1 if `key` is such retained state (a fence, a free plain lock, a fair
 * lock's hash with no live hold and no live queue entry). */
int rdlt_key_retained(rdlt_server *s, const char *key);
/* Number of connections whose CLIENT SETNAME name starts with prefix. */
int rdlt_count_clients(rdlt_server *s, const char *name_prefix);
/* CLIENT KILL ID for every connection whose name starts with prefix;
 * returns how many were killed. */
int rdlt_kill_clients(rdlt_server *s, const char *name_prefix);

/* ---- cluster.c: a throwaway 6-node Redis Cluster ------------------------- */

typedef struct rdlt_cluster rdlt_cluster;

#define RDLT_CLUSTER_NODES 6

/* Starts six cluster-enabled servers (rdlt_server_start_args, so the usual
 * skip/fail rules and cleanup apply) with a short node timeout, makes
 * nodes 0..2 masters of three equal slot ranges and nodes 3..5 their
 * replicas (3 replicates 0, ...), and waits until every node agrees
 * (rdlt_cluster_wait_ok). Main thread only. */
/* With RDL_TEST_CLUSTER_TLS=1 in the environment the cluster runs over TLS
 * (rdlt_pki_make(); bus and replication too), its URL is rediss+cluster://
 * with the TLS ports, and rdlt_cluster_client*() trust its CA: the cluster
 * suite runs once each way (tests/CMakeLists.txt). */
rdlt_cluster *rdlt_cluster_start(void);
/* "redis+cluster://127.0.0.1:<p0>,127.0.0.1:<p1>" (static storage of cl). */
const char *rdlt_cluster_url(const rdlt_cluster *cl);
rdlt_server *rdlt_cluster_node(rdlt_cluster *cl, int i);
/* The node that is master of `slot` now, as the running nodes agree. */
rdlt_server *rdlt_cluster_master_of(rdlt_cluster *cl, unsigned slot);
/* A running replica of that master; NULL if it has none. */
rdlt_server *rdlt_cluster_replica_of(rdlt_cluster *cl, rdlt_server *master);
/* CLUSTER MYID of a node (static storage of cl). */
const char *rdlt_cluster_node_id(rdlt_cluster *cl, rdlt_server *s);
/* Waits until every running node reports cluster_state:ok, all of them
 * name the same master for each slot range, every range has a master that
 * runs, and every running replica's link to its master is up and its
 * master lists it in ROLE (so WAIT counts it). Fails the
 * test after timeout_ms. */
void rdlt_cluster_wait_ok(rdlt_cluster *cl, int64_t timeout_ms);
/* A connected client for the cluster (connect 2000 ms, command 2000 ms). */
rdl_client_t *rdlt_cluster_client(rdlt_cluster *cl);
/* The same, not connected (to configure it further). */
rdl_client_t *rdlt_cluster_client_new(rdlt_cluster *cl);

/* ---- tls.c: a throwaway CA, certificates and TLS servers ------------------ */

/* Files made by the openssl tool in a fresh temporary directory (removed
 * by the teardown). Every certificate is signed by `ca` unless said
 * otherwise; keys are P-256. */
typedef struct rdlt_pki {
    char dir[256];
    char ca[300];       /* the trusted CA */
    char other_ca[300]; /* a CA that signed nothing here */
    char server[300];   /* CN localhost; IP:127.0.0.1, DNS:localhost */
    char server_key[300];
    char wrong_name[300]; /* DNS:elsewhere.example only (server_key) */
    char expired[300];    /* as server, but expired yesterday */
    char untrusted[300];  /* as server, signed by a CA not in `ca` */
    char client[300];     /* a client certificate (CN rdl-test-client) */
    char client_key[300];
    char stranger[300]; /* a client certificate of an unknown CA */
    char stranger_key[300];
} rdlt_pki;

/* Makes the files (a few tens of ms); fails the test if openssl fails, or
 * skips it when there is no openssl tool and CI is unset. */
const rdlt_pki *rdlt_pki_make(void);
/* A redis-server that also listens for TLS (rdlt_server_tls_port()) with
 * `cert` (one of the server certificates: they share server_key),
 * trusting pki->ca for client certificates; clients must present one iff
 * auth_clients. `extra`: more arguments, as rdlt_server_start_args(). */
rdlt_server *rdlt_tls_server_start(const rdlt_pki *pki, const char *cert,
                                   int auth_clients, const char *const *extra);
/* "rediss://127.0.0.1:<tls port>" (static storage of s). */
const char *rdlt_tls_url(const rdlt_server *s);

/* ---- sentinel.c: a throwaway Sentinel deployment -------------------------- */

#define RDLT_SENTINEL_DATA 3 /* a master and two replicas */
#define RDLT_SENTINELS 3
#define RDLT_SENTINEL_NAME "rdltmaster"

typedef struct rdlt_sentinel rdlt_sentinel;

/* Starts data node 0 as the master, 1 and 2 as its replicas, and three
 * sentinels watching it as RDLT_SENTINEL_NAME (quorum 2, down after
 * 1000 ms), and waits until every sentinel knows both replicas and the
 * other sentinels. With a password the data nodes require it (and the
 * sentinels and the URL use it). */
rdlt_sentinel *rdlt_sentinel_start(const char *password);
/* The same with more arguments for every data node (NULL-terminated, e.g.
 * "--appendonly" "yes"; at most 8). */
rdlt_sentinel *rdlt_sentinel_start_args(const char *password,
                                        const char *const *data_args);
/* The same over TLS (pki not NULL): the data nodes and sentinels also
 * listen on TLS ports, replicate and watch over TLS, and the URL is
 * rediss+sentinel:// with the sentinels' TLS ports; trust pki->ca. */
rdlt_sentinel *rdlt_sentinel_start_tls(const char *password,
                                       const rdlt_pki *pki);
/* "redis+sentinel://[:pw@]127.0.0.1:p1,...:p3/RDLT_SENTINEL_NAME". */
const char *rdlt_sentinel_url(const rdlt_sentinel *sn);
rdlt_server *rdlt_sentinel_data(rdlt_sentinel *sn, int i);
rdlt_server *rdlt_sentinel_node(rdlt_sentinel *sn, int i);
/* The data node the (running) sentinels name as the master. */
rdlt_server *rdlt_sentinel_master(rdlt_sentinel *sn);
/* The config epoch the first running sentinel reports for the master: it
 * changes only when a failover switched the master. */
long long rdlt_sentinel_config_epoch(rdlt_sentinel *sn);
/* Waits until the running sentinels agree on a master other than old and
 * it says so itself (ROLE); returns it. Fails the test after timeout_ms. */
rdlt_server *rdlt_sentinel_wait_switch(rdlt_sentinel *sn, rdlt_server *old,
                                       int64_t timeout_ms);
/* Waits until the master the sentinels name lists both other data nodes
 * as online replicas (after a restarted node rejoined, for instance), and
 * each of them says its link is up, its sync done and its data loaded. */
void rdlt_sentinel_wait_synced(rdlt_sentinel *sn, int64_t timeout_ms);
/* SENTINEL FAILOVER, then rdlt_sentinel_wait_switch(); returns the new
 * master. */
rdlt_server *rdlt_sentinel_failover(rdlt_sentinel *sn);

/* ---- cmdlog.c: the commands a test server received ---------------------- */

#define RDLT_CMDLOG_NAMES 32

/* Names in order ("CLIENT EVALSHA EVAL") and a count per name (the first
 * RDLT_CMDLOG_NAMES distinct names). Thread-safe. */
typedef struct rdlt_cmdlog {
    pthread_mutex_t mu;
    char *log;
    size_t len, cap;
    char names[RDLT_CMDLOG_NAMES][24];
    unsigned counts[RDLT_CMDLOG_NAMES];
} rdlt_cmdlog;

void rdlt_cmdlog_init(rdlt_cmdlog *l);
void rdlt_cmdlog_free(rdlt_cmdlog *l);
/* Adds name[0..len) (upper-cased); returns how many of it now. */
unsigned rdlt_cmdlog_add(rdlt_cmdlog *l, const char *name, size_t len);
/* How many commands of that name (case-insensitive). */
unsigned rdlt_cmdlog_count(rdlt_cmdlog *l, const char *name);
/* The names, space-separated; free() it. */
char *rdlt_cmdlog_text(rdlt_cmdlog *l);

/* ---- fake.c: a scripted fake cluster node ---------------------------------- */

typedef struct rdlt_fake rdlt_fake;

/* What a rule makes the fake node do with one command. */
enum {
    RDLT_FAKE_FORWARD,     /* the built-in answer, or the backend's */
    RDLT_FAKE_REPLY,       /* send `out`, a raw RESP reply ("-MOVED ...\r\n") */
    RDLT_FAKE_DROP,        /* close the connection without running it */
    RDLT_FAKE_FORWARD_DROP /* run it on the backend, close without a reply */
};

/* Called on the fake's thread for every command: argv[0..argc) with
 * lengths; n is how many commands named argv[0] (case-insensitive) this
 * node has received, this one included. `out` has room for outlen bytes
 * (2 MiB: a bulk string of a megabyte fits), NUL-terminated. Must not
 * call cmocka. */
typedef int (*rdlt_fake_rule)(rdlt_fake *f, void *data, int argc, char **argv,
                              size_t *lens, unsigned n, char *out,
                              size_t outlen);

/* Starts a fake node on a free loopback port. Built in: CLUSTER SLOTS
 * gives every slot to the owner port (the fake itself until
 * rdlt_fake_set_owner()), ASKING, CLIENT and AUTH answer +OK, SSUBSCRIBE
 * and SUNSUBSCRIBE are confirmed (nothing is ever published); everything
 * else goes to `backend`, a standalone server, over a connection per
 * client connection. `rule` (may be NULL) decides first. Stopped by the
 * teardown. */
rdlt_fake *rdlt_fake_start(rdlt_server *backend, rdlt_fake_rule rule,
                           void *data);
int rdlt_fake_port(const rdlt_fake *f);
/* Any thread, also from a rule. */
void rdlt_fake_set_owner(rdlt_fake *f, int port);
/* The names of the commands received, upper-case, space-separated
 * ("CLIENT COMMAND CLUSTER EVALSHA"); free() it. */
char *rdlt_fake_log(rdlt_fake *f);
/* How many commands of that name were received. */
unsigned rdlt_fake_count(rdlt_fake *f, const char *name);

/* ---- proxy.c: a fault proxy in front of a real server ---------------------- */

typedef struct rdlt_proxy rdlt_proxy;

/* Connection kinds for rdlt_proxy_delay(). A connection is a subscriber
 * connection once its client sent SUBSCRIBE, SSUBSCRIBE or PSUBSCRIBE. */
#define RDLT_PROXY_SUB 1
#define RDLT_PROXY_CMD 2
#define RDLT_PROXY_ALL (RDLT_PROXY_SUB | RDLT_PROXY_CMD)

/* Starts a TCP proxy on a free loopback port, on a thread of its own. Each
 * client connection gets its own connection to `upstream` (a client is
 * closed if the server does not accept); bytes are relayed unchanged both
 * ways. The proxy parses both directions, so the Nth reply on a connection
 * is known to answer its Nth command, except on subscriber connections,
 * whose replies after the subscription are never matched to commands.
 * Stopped by the teardown. Main thread only; every other rdlt_proxy_ call
 * may come from any thread, at any time, and affects the commands and
 * replies that arrive after it. */
rdlt_proxy *rdlt_proxy_start(rdlt_server *upstream);
/* rdlt_proxy_start() in two steps, for a test that forks workers: _new()
 * binds the port (clients may connect; nothing is relayed yet) without
 * starting a thread, _run() starts the thread. Fork in between: a process
 * that forks while it has threads risks a child stuck on a lock one of
 * them held (seen under ASan). */
rdlt_proxy *rdlt_proxy_new(rdlt_server *upstream);
void rdlt_proxy_run(rdlt_proxy *p);
int rdlt_proxy_port(const rdlt_proxy *p);
/* "redis://127.0.0.1:<port>" (static storage of p). */
const char *rdlt_proxy_url(const rdlt_proxy *p);
/* A connected client through the proxy, with rdlt_client()'s timeouts
 * (connect 2000 ms, command 1000 ms). */
rdl_client_t *rdlt_proxy_client(rdlt_proxy *p);

/* Rules for commands. Each applies to the next `times` commands (times < 0:
 * every one) named `cmd` (case-insensitive, e.g. "EVALSHA") that have an
 * argument after the name containing `arg_substr` (a script's SHA, a key
 * fragment such as a lock's name; NULL: any command of that name). The
 * first rule that matches a command decides, in the order they were set.
 * "EVALSHA" names every script call: the client sends FCALL instead where
 * the server has its function library (Redis 7.0 and later), and the
 * arguments after the name (the function's name instead of the SHA) are
 * the same; rdlt_proxy_count() counts both under that name.
 *
 * drop_reply: the command goes to the server, its reply is swallowed, then
 * the client connection is closed after the replies before it: the client
 * sees a lost connection after the command was applied. On a subscriber
 * connection the connection closes right after the command is relayed.
 * drop_request: the connection is closed once the replies of the commands
 * before it were relayed; the command never reaches the server.
 * Either way nothing after that command is relayed to the server.
 * delay_reply: the command's reply (and, to keep the order, everything
 * after it) reaches the client `ms` later; no effect on subscriber
 * connections. */
void rdlt_proxy_drop_reply(rdlt_proxy *p, const char *cmd,
                           const char *arg_substr, int times);
void rdlt_proxy_drop_request(rdlt_proxy *p, const char *cmd,
                             const char *arg_substr, int times);
void rdlt_proxy_delay_reply(rdlt_proxy *p, const char *cmd,
                            const char *arg_substr, int64_t ms, int times);
/* Removes every rule that is not used up. */
void rdlt_proxy_clear_rules(rdlt_proxy *p);

/* Holds what the server sends on connections of the kinds in `which`
 * (RDLT_PROXY_SUB, _CMD, _ALL) for `ms` before relaying it; 0 stops
 * delaying. Order within a connection is kept: bytes wait behind earlier
 * ones. Applies to bytes the proxy receives after the call. */
void rdlt_proxy_delay(rdlt_proxy *p, int which, int64_t ms);

/* on: from now on nothing is relayed either way; bytes that arrive are
 * swallowed, new connections are accepted but not connected to the server.
 * off: every connection that lost bytes is closed (both sides), the others
 * go on. Returns once the proxy acts on it. */
void rdlt_proxy_blackhole(rdlt_proxy *p, int on);
/* on: connections accepted from now on are neither read nor connected to
 * the server (the client's connect succeeds, its handshake waits); off:
 * they are connected and go on. Returns once the proxy acts on it. */
void rdlt_proxy_hold_new(rdlt_proxy *p, int on);
/* Closes every connection, both sides, and returns when they are closed;
 * rst: the client gets a TCP reset instead of a FIN. */
void rdlt_proxy_reset(rdlt_proxy *p, int rst);

/* How many commands of that name (case-insensitive) clients sent through
 * the proxy, the dropped ones included. */
unsigned rdlt_proxy_count(rdlt_proxy *p, const char *cmd);
/* Waits until rdlt_proxy_count(p, cmd) >= n; 0, or -1 after timeout_ms. */
int rdlt_proxy_wait_count(rdlt_proxy *p, const char *cmd, unsigned n,
                          int64_t timeout_ms);
/* Client connections open now. */
int rdlt_proxy_connections(rdlt_proxy *p);
/* The names of the commands sent, upper-case, space-separated ("CLIENT
 * EVALSHA EVAL"); free() it. */
char *rdlt_proxy_log(rdlt_proxy *p);

/* ---- child.c: a function run in a forked process ------------------------- */

typedef struct rdlt_child rdlt_child;

/* Forks; the child runs fn(arg, fd) and exits with its return value
 * (without running atexit handlers or cmocka). The child writes lines to
 * the parent through fd with rdlt_child_say(). The child dies with the test
 * process. Call from the main thread, best before the test starts threads
 * (a forked child has only the forking thread). */
rdlt_child *rdlt_child_start(int (*fn)(void *arg, int fd), void *arg);
/* In the child: writes one line ("acquired 123") to the parent. */
void rdlt_child_say(int fd, const char *fmt, ...);
/* In the parent: reads one line into buf, waiting at most timeout_ms.
 * Returns 0, or -1 on timeout or when the child closed its end. */
int rdlt_child_hear(rdlt_child *ch, char *buf, size_t len, int64_t timeout_ms);
/* Sends sig to the child; SIGKILL also reaps it. */
void rdlt_child_signal(rdlt_child *ch, int sig);
/* Waits at most timeout_ms for the child to exit and returns its wait
 * status, or -1 (the child is then killed). */
int rdlt_child_wait(rdlt_child *ch, int64_t timeout_ms);
pid_t rdlt_child_pid(const rdlt_child *ch);

/* ---- client.c: rdl objects released by the teardown ---------------------- */

/* A connected client for the server with short timeouts (connect 2000 ms,
 * command 1000 ms); fails the test if it cannot connect. */
rdl_client_t *rdlt_client(rdlt_server *s);
/* A client not yet connected, with that URL (NULL: leave the default). */
rdl_client_t *rdlt_client_new(const char *url);
/* A lock from rdl_lock_new(); fails the test on error. */
rdl_lock_t *rdlt_lock(rdl_client_t *c, const char *name);
/* Frees a lock or client made above before the teardown would. */
void rdlt_lock_free(rdl_lock_t *l);
void rdlt_client_free(rdl_client_t *c);
/* The client's counters; fails the test on error. */
rdl_client_stats_t rdlt_stats(rdl_client_t *c);
/* Info for an owner; fails the test on error. */
rdl_lock_info_t rdlt_info(rdl_lock_t *l, rdl_owner_t owner);

/* ---- thread.c: joinable threads ------------------------------------------ */

typedef struct rdlt_thread rdlt_thread;
/* Starts fn(arg) on a new thread; joined by rdlt_thread_join() or, if the
 * test failed first, by the teardown (before the objects it may use are
 * freed, as long as it was started after them). Threads must not call
 * cmocka's assertions: they record results for the main thread to check. */
rdlt_thread *rdlt_thread_start(void *(*fn)(void *), void *arg);
void *rdlt_thread_join(rdlt_thread *t);

/* ---- loop.c: a libuv loop on a thread of its own, for async tests ------- */

typedef struct rdlt_loop rdlt_loop;
struct uv_loop_s;

/* Starts a thread running a new loop (kept alive until rdlt_loop_stop()). */
rdlt_loop *rdlt_loop_start(void);
struct uv_loop_s *rdlt_loop_uv(rdlt_loop *lp);
/* Runs fn(arg) on the loop thread and waits for it to return. */
void rdlt_loop_call(rdlt_loop *lp, void (*fn)(void *arg), void *arg);
/* 1 when called on the loop thread. */
int rdlt_loop_on_thread(rdlt_loop *lp);
/* Stops the loop, joins the thread and closes the loop; returns the result
 * of uv_loop_close() (UV_EBUSY if a handle was left open). Also done by the
 * teardown, which then ignores the result. */
int rdlt_loop_stop(rdlt_loop *lp);
/* Connects c (whose loop is lp's: rdl_client_set_loop) on lp's thread;
 * fails the test on error. */
void rdlt_loop_connect(rdlt_loop *lp, rdl_client_t *c);

/* An async acquisition made on a loop's thread. */
typedef struct rdlt_async_acquire {
    rdl_req_t req;
    rdl_lock_t *lock;
    rdl_owner_t owner;
    int64_t wait_ms, lease_ms;
    int status; /* atomic: 0 pending, 1 acquired, else its error code */
} rdlt_async_acquire;
/* Starts a->lock's acquisition for a->owner on lp's thread (fails the test
 * if it cannot start); a must live until status is set. */
void rdlt_async_acquire_start(rdlt_loop *lp, rdlt_async_acquire *a);
/* rdl_req_cancel() of it on lp's thread; fails the test on error. */
void rdlt_async_acquire_cancel(rdlt_loop *lp, rdlt_async_acquire *a);

/* ---- misc ------------------------------------------------------------------- */

/* The text of dir/name.lua (the expanded scripts a test target gets as
 * RDL_TEST_SCRIPTS_DIR); fails the test if it cannot be read. free() it. */
char *rdlt_read_script(const char *dir, const char *name);

/* Waits until *flag (read atomically) is non-zero or timeout_ms passes;
 * returns the flag's value. */
int rdlt_wait_flag(const int *flag, int64_t timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
