/** @file
 * rdl: the client. One client holds the connections to one Redis deployment
 * (a server or a cluster), one libuv loop, one watchdog and the pub/sub
 * subscriptions that wake waiters. Lock objects are made from a client. */
#ifndef RDL_CLIENT_H
#define RDL_CLIENT_H

#include "common.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A client (opaque): made by rdl_client_new(), freed by rdl_client_free().
 */
typedef struct rdl_client_s rdl_client_t;
struct uv_loop_s;

/**
 * Creates a client, not yet connected. Configure it with the
 * rdl_client_set_*() calls, then call rdl_client_connect().
 *
 * @param out  receives the client; set to NULL on failure.
 * @return 0; RDL_EINVAL if out is NULL; RDL_ENOMEM.
 *
 * Thread safety: safe from any thread.
 */
RDL_API RDL_NODISCARD int rdl_client_new(rdl_client_t **out);

/**
 * Sets the server to use. Forms:
 * @code{.unparsed}
 *   redis://[user[:password]@]host[:port][/db]   one server
 *   redis+cluster://[user[:password]@]host[:port][,host[:port]...]
 *                                                a Redis Cluster: seed nodes
 *   redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/MASTER[/db]
 *       [?sentinel_user=U&sentinel_password=P]
 *                                                a master watched by Redis
 *                                                Sentinel: the sentinels
 *   rediss://..., rediss+cluster://..., rediss+sentinel://...
 *                                                the same over TLS
 * @endcode
 * host is a name, an IPv4 address or a bracketed IPv6 address; port defaults
 * to 6379 (26379 for a sentinel) and db to 0 (a cluster has database 0
 * only). User and password may be percent-encoded and apply to every data
 * node; a sentinel URL's query gives the sentinels' own credentials. The
 * default is redis://127.0.0.1:6379. With a cluster URL rdl_client_connect()
 * succeeds once one seed has answered with the slot table; locks are then
 * routed to the master of their name's slot (docs/deployments.md, "Redis
 * Cluster"). With a sentinel URL it succeeds once a sentinel named the master
 * and the master confirmed its role; the client then follows failovers
 * (docs/deployments.md, "Redis Sentinel").
 *
 * Over TLS (rediss) the server's certificate chain and name are verified
 * against the system's CAs unless rdl_client_set_tls() says otherwise
 * (docs/deployments.md, "TLS").
 *
 * @param c    the client, not yet connected.
 * @param url  NUL-terminated; copied.
 * @return 0; RDL_EINVAL for a NULL or malformed URL (rdl_client_errmsg()
 *         says what is wrong), or when called after rdl_client_connect();
 *         RDL_ENOTSUP for rediss URLs in a build without TLS
 *         (RDL_WITH_TLS=OFF); RDL_ENOMEM.
 *
 * Thread safety: configuration calls must not race with each other or with
 * rdl_client_connect() on the same client.
 */
RDL_API int rdl_client_set_url(rdl_client_t *c, const char *url);

/** TLS options (rdl_client_set_tls()); zero-initialised means "verify the
 * server against the system's CAs, no client certificate". */
typedef struct rdl_tls_options_s {
    const char *ca_file;     /**< PEM bundle of trusted CAs; NULL: the
                                  system's (unless ca_dir is set) */
    const char *ca_dir;      /**< or a directory of them (c_rehash layout);
                                  NULL: none */
    const char *cert_file;   /**< client certificate (PEM, may hold its
                                  chain) for mutual TLS; NULL: none */
    const char *key_file;    /**< its private key (PEM); NULL: cert_file */
    const char *server_name; /**< SNI and the name verified; NULL: each
                                  node's host (an IP address is matched
                                  against the certificate's IP entries) */
    int insecure;            /**< 0: verify chain and name; 1: skip all
                                  verification (testing only: anyone on the
                                  path can read and forge every command) */
} rdl_tls_options_t;

/**
 * Sets the TLS options used with rediss URLs (for plain redis URLs they are
 * kept but unused). Reads the CA and certificate files at once, so a bad
 * path or a key that does not belong to its certificate is reported here.
 * Connections use TLS 1.2 or later; every connection (commands and
 * pub/sub, every node of a cluster, every reconnect) makes a full
 * handshake, bounded by the connect timeout.
 *
 * @param c     the client, not yet connected.
 * @param opts  copied (strings included); NULL restores the defaults.
 * @return 0; RDL_EINVAL for NULL c or after connect; RDL_ETLS if a file
 *         cannot be read or the key does not match the certificate
 *         (rdl_client_errmsg() says which); RDL_ENOTSUP in a build without
 *         TLS; RDL_ENOMEM.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_tls(rdl_client_t *c, const rdl_tls_options_t *opts);

/**
 * Sets the prefix of every key and channel the client uses (default "rdl"):
 * 1..64 bytes without '{', '}', spaces or control characters. Keys are
 * "<prefix>:<kind>[.<suffix>]:{<name>}", where a name that holds a Redis
 * Cluster hash tag of its own is kept as it is, so all keys of one lock share
 * a cluster slot. Every key and channel of each kind, with its type and
 * contents: `docs/design.md#key-layout`.
 *
 * @return 0; RDL_EINVAL for a NULL or bad prefix or after connect;
 *         RDL_ENOMEM.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_prefix(rdl_client_t *c, const char *prefix);

/**
 * Sets the connect timeout (default 5000 ms) and the per-command timeout
 * (default 3000 ms). A command without a reply after command_ms fails with
 * RDL_ECMDTIMEOUT (outcome unknown) and its connection is re-established,
 * since later replies on it can no longer be matched. Lock operations retry
 * such failures with the same request id while their budget lasts, so a
 * retry never counts twice.
 *
 * @param c           the client, not yet connected.
 * @param connect_ms  1..3600000.
 * @param command_ms  1..3600000.
 * @return 0; RDL_EINVAL for values out of range or after connect.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_timeouts_ms(rdl_client_t *c, int64_t connect_ms,
                                       int64_t command_ms);

/**
 * Sets the watchdog lease used by holds taken with RDL_LEASE_AUTO (default
 * 30000 ms). Such a hold's key lives for this long and the client's
 * watchdog renews it every lease/3 (one timer per client; up to 200 holds
 * of one server per script call) for as long as it is held. A renewal that
 * fails is retried until the hold's local deadline (the send time of the
 * last successful renewal plus the lease, minus 1% + 2 ms for clock drift)
 * passes; then, or when Redis says the hold is gone or someone else's, the
 * hold is lost: the lock's lost callback runs (rdl_lock_set_lost_cb()) and
 * its release returns RDL_ELOST. A short lease notices a dead client
 * sooner; a long one survives longer server stalls.
 *
 * @param c         the client, not yet connected.
 * @param lease_ms  100..86400000.
 * @return 0; RDL_EINVAL for a value out of range or after connect.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_watchdog_ms(rdl_client_t *c, int64_t lease_ms);

/** rdl_client_set_durability(): every replica connected to the master. */
#define RDL_REPLICAS_ALL (-1)

/**
 * Durable acquisitions (docs/deployments.md, "Durable acquisitions"): with
 * replicas > 0 (or RDL_REPLICAS_ALL: every replica the master lists when the
 * grant is confirmed), an acquisition is reported only once WAIT confirms that
 * that many replicas received the grant and its fencing token (or WAITAOF that
 * it is in their append-only files: rdl_client_set_durable_level()),
 * within timeout_ms; otherwise the grant is given back (by its request
 * id) and the call fails with RDL_ENOREPLICAS, nothing held,
 * rdl_client_errmsg() saying how many replicas confirmed. So a failover to a
 * confirmed replica never hands a held lock to a second owner. Every lock kind,
 * each part of a MultiLock. The WAITs go on a connection of their own per
 * master, so other commands are not held up; concurrent grants share one WAIT.
 * Renewals of auto-leased holds count toward their deadlines only once
 * confirmed the same way; releases are not waited for (docs/deployments.md).
 *
 * @param c           the client, not yet connected.
 * @param replicas    0 (the default): off; 1..1000 or RDL_REPLICAS_ALL.
 * @param timeout_ms  1.. below the command timeout (checked again at
 *                    connect).
 * @return 0; RDL_EINVAL for values out of range or after connect.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_durability(rdl_client_t *c, int replicas,
                                      int64_t timeout_ms);

/** rdl_client_set_durable_level(): WAIT, the replicas received the write
 *  in memory (the default). */
#define RDL_DURABLE_RECEIVED 0
/** WAITAOF 0 N: the write is fsynced to the replicas' append-only files. */
#define RDL_DURABLE_FSYNCED 1
/** WAITAOF 1 N: and to the master's own append-only file. */
#define RDL_DURABLE_FSYNCED_MASTER 2

/**
 * What a durable confirmation (rdl_client_set_durability()) waits for
 * (docs/deployments.md, "Durable acquisitions"). RDL_DURABLE_RECEIVED, the
 * default: `WAIT`, the replicas received the grant in memory; a replica that
 * crashes and restarts without it can then be promoted without it.
 * RDL_DURABLE_FSYNCED: `WAITAOF 0 N`, the grant is fsynced to the
 * append-only files of that many replicas, so it survives their crash and
 * restart from their files; replicas without `appendonly yes` never
 * count. RDL_DURABLE_FSYNCED_MASTER: `WAITAOF 1 N`, also fsynced to the
 * master's own file (a master restarted from its file keeps the grant).
 * With RDL_REPLICAS_ALL and a master that has no replica, FSYNCED waits
 * for nothing and FSYNCED_MASTER for the master's file. A refusal
 * (RDL_ENOREPLICAS) says in rdl_client_errmsg() how many replicas' files
 * (and whether the master's) had the grant. Renewals of auto-leased holds
 * are confirmed at the same level. Unused while durability is off.
 *
 * The FSYNCED levels need `WAITAOF`: Redis 7.2 or later, Valkey 8 or
 * later. rdl_client_connect() checks every connection to a data node
 * (each master of a cluster or a Sentinel deployment, as it is reached)
 * and fails with RDL_ENOTSUP, rdl_client_errmsg() naming the server, when
 * the server has no `WAITAOF`, or, at RDL_DURABLE_FSYNCED_MASTER, when
 * the master has `appendonly no`. A server that refuses `COMMAND` or
 * `CONFIG GET` cannot be checked then: the confirmation itself fails
 * with RDL_ENOTSUP (the grant given back), rdl_client_errmsg() quoting
 * the server's refusal. A node reached after the connect (a failover, a
 * cluster's other masters) that fails the check is not connected to:
 * its commands fail as with an unreachable node, RDL_ECONNREFUSED.
 *
 * @param c      the client, not yet connected.
 * @param level  RDL_DURABLE_RECEIVED, RDL_DURABLE_FSYNCED or
 *               RDL_DURABLE_FSYNCED_MASTER.
 * @return 0; RDL_EINVAL for NULL c, another level, or after connect.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_durable_level(rdl_client_t *c, int level);

/**
 * Runs the client on the caller's libuv loop instead of a thread of its own.
 * Then rdl_client_connect() must be called on the thread that runs that
 * loop, it returns at once (commands wait until the connection is ready, or
 * fail with RDL_ECONNREFUSED after the command timeout), async calls and
 * their callbacks run on that thread, and blocking calls may be made only
 * from other threads while the loop runs. rdl_client_close() may be called
 * from the loop thread (also from a callback): it completes what is pending
 * and starts closing the handles, which the loop finishes on its next turns;
 * rdl_client_free() may follow at once, and the memory is released when the
 * last handle has closed. Run the loop until it returns before closing it
 * with uv_loop_close().
 *
 * Signals: a client's own loop thread blocks SIGPIPE and the asynchronous
 * signals, so they reach the application's threads. On your loop, ignore
 * or block SIGPIPE on the loop's thread yourself, as every libuv program
 * must on Linux: a write to a connection the server closed raises it.
 *
 * @return 0; RDL_EINVAL for NULL or after connect.
 *
 * Thread safety: as rdl_client_set_url().
 */
RDL_API int rdl_client_set_loop(rdl_client_t *c, struct uv_loop_s *loop);

/**
 * Connects. With the client's own loop (the default) it starts the loop
 * thread and blocks until the command connection is ready (authenticated,
 * database selected) or fails.
 *
 * @return 0; RDL_EINVAL if already connected; RDL_ECONNREFUSED (no server,
 *         or none within the connect timeout); RDL_EAUTH (rejected
 *         credentials; sentinel URL: also the sentinels' own);
 *         RDL_ESERVER (e.g. SELECT of a database the server does not
 *         have); RDL_ENOMASTER (sentinel URL: a sentinel does not know the
 *         master's name; when no sentinel can be asked at all,
 *         RDL_ECONNREFUSED names each); RDL_ENOTSUP (a durable level
 *         the server cannot confirm, rdl_client_set_durable_level());
 *         RDL_ETLS (the TLS handshake failed or timed out,
 *         or the server's certificate was not trusted, did not match its
 *         name or had expired, or the server required a client certificate
 *         it did not get or accept); RDL_ENOMEM. rdl_client_errmsg() names the
 * address and the reason. After a failure the client may be configured and
 *         connected again.
 *
 * Thread safety: not concurrently with other calls on the same client.
 */
RDL_API RDL_NODISCARD int rdl_client_connect(rdl_client_t *c);

/**
 * Closes the client: waiting requests complete with RDL_ECLOSED, and
 * requests whose command was sent but not answered with RDL_ECONNLOST
 * (the server may have applied it: an acquisition may hold the lock until
 * its lease ends); their callbacks run during this call. Connections
 * close, the loop thread is joined (the order is in
 * `docs/design.md#teardown`). Holds are not released: they expire by their
 * leases (use rdl_lock_release() first for a prompt hand-off). Later calls
 * on the client or its locks return RDL_ECLOSED. Closing twice, or closing
 * a client that never connected, is harmless.
 *
 * @return 0; RDL_EINVAL for NULL; RDL_EDEADLK when called on the client's
 *         own loop thread (from a callback: a thread cannot join itself).
 *
 * Thread safety: any thread (with the client's own loop: any but the loop
 * thread); not concurrently with rdl_client_free().
 */
RDL_API int rdl_client_close(rdl_client_t *c);

/**
 * Closes the client if needed and frees it. Locks made from it must be freed
 * first. NULL is fine. Called on the client's own loop thread it does
 * nothing (see rdl_client_close()).
 * Thread safety: as rdl_client_close().
 */
RDL_API void rdl_client_free(rdl_client_t *c);

/**
 * Detail about the last error that a call on this client returned to the
 * calling thread (for async calls: the last error passed to a callback on
 * the loop thread), such as "connect 127.0.0.1:6390: connection refused".
 * Empty string if there is none. Valid until the next call on this client
 * from the same thread.
 *
 * Thread safety: safe from any thread; each thread sees its own errors.
 */
RDL_API const char *rdl_client_errmsg(const rdl_client_t *c);

/**
 * The client's random 128-bit id as 32 lowercase hex characters; owners are
 * recorded in Redis as "<id>:<owner>".
 * Thread safety: safe from any thread.
 */
RDL_API const char *rdl_client_id(const rdl_client_t *c);

/** Counters of what a client did since it was created. */
typedef struct rdl_client_stats_s {
    uint64_t commands;         /**< commands written to servers */
    uint64_t scripts;          /**< script calls made; calls of the plain
                                    lock made in one loop iteration leave
                                    as one command (a batch), each counted
                                    here, so this may exceed commands */
    uint64_t script_loads;     /**< scripts (re)loaded after NOSCRIPT */
    uint64_t messages;         /**< pub/sub messages received */
    uint64_t subscribes;       /**< SUBSCRIBE commands sent */
    uint64_t connects;         /**< connections established (first + re-) */
    uint64_t cmd_timeouts;     /**< commands that timed out */
    uint64_t acquires;         /**< successful acquisitions */
    uint64_t attempts;         /**< acquire script calls (tries) */
    uint64_t wakeups;          /**< waiters woken by a message */
    uint64_t renewals;         /**< watchdog: holds renewed */
    uint64_t renewal_calls;    /**< watchdog: renewal script calls (each one
                                    round trip, renewing up to 200 holds) */
    uint64_t renewal_failures; /**< watchdog: renewal calls that failed */
    uint64_t holds_lost;       /**< watchdog: holds reported lost */
    uint64_t redirects;        /**< cluster MOVED/ASK replies followed */
    uint64_t refreshes;        /**< cluster slot table requests */
} rdl_client_stats_t;

/**
 * Copies the client's counters.
 * @return 0; RDL_EINVAL if c or out is NULL.
 *
 * Thread safety: safe from any thread (counters are read one by one, not
 * as one snapshot).
 */
RDL_API int rdl_client_stats(const rdl_client_t *c, rdl_client_stats_t *out);

/** One lock found by rdl_client_list_locks(). */
typedef struct rdl_lock_entry_s {
    const char *name;  /**< the name to open it with (rdl_lock_new() and the
                            constructor of its kind); valid during the
                            callback only */
    const char *kind;  /**< "lock" (rdl_lock_new), "fair" (rdl_fairlock_new),
                            "rwlock" (rdl_rwlock_new: either view) or
                            "semaphore" (rdl_semaphore_new); static storage */
    int64_t server_us; /**< the clock (TIME, microseconds since the epoch)
                            of the server the lock was found on, read just
                            after that server's scan; -1 if not known */
} rdl_lock_entry_t;

/** Called once per lock found: 0 to go on, nonzero to stop the listing
 *  (rdl_client_list_locks() then returns 0). */
typedef int (*rdl_lock_list_cb)(const rdl_lock_entry_t *e, void *data);

/**
 * Lists the locks under the client's prefix: every plain, fair and
 * read-write lock and semaphore that Redis still has keys of, whether held
 * or not. A free lock is listed while its keys last: a plain or
 * read-write lock for a day after its last use, a fair lock for at least
 * 12 hours, a semaphore for one to two days. Latches are not locks and
 * are not listed, nor are keys of other prefixes or that no lock of the
 * library makes. Names come back as the constructors take them (a name
 * with a hash tag of its own keeps it; "x" and "{x}" are one lock and are
 * listed as "x"), so opening the listed name and kind reaches the lock
 * (rdl_lock_info() then reads its state).
 *
 * How: a SCAN of every master (one server, the master a sentinel names,
 * or each master of a cluster's slot table) for the prefix's keys, then
 * TIME on that master; then, on the calling thread, cb once per lock,
 * sorted by name (bytes, as strcmp) then kind, each lock once. It costs
 * one round trip per 1000 keys under the prefix per master (auxiliary
 * keys included), and memory for every key found until cb has run. The
 * list is a snapshot taken server by server, not an atomic view: a lock
 * made or removed meanwhile may be missing or listed, and a resharding or
 * failover during the scan may miss locks, or return some keys twice
 * (SCAN's guarantee holds only on a server that keeps its keys), which
 * are then listed once.
 *
 * @param c        a connected client.
 * @param pattern  fnmatch(3) glob (flags 0) on the name; NULL: "*".
 * @param cb       called on the calling thread, after every server was
 *                 scanned and before this call returns; it may call rdl
 *                 (blocking calls included) on this client.
 * @param data     passed to cb.
 * @return 0 (also when cb stopped the listing); RDL_EINVAL for NULL c or
 *         cb; RDL_EDEADLK on the client's loop thread (it blocks);
 *         RDL_ENOTCONN if the client is not connected; RDL_ECLOSED if it
 *         was closed;
 *         RDL_ECLUSTERDOWN when a cluster slot has no master known (its
 *         locks would be missed); RDL_ECONNREFUSED, RDL_ECONNLOST,
 *         RDL_ECMDTIMEOUT when a master cannot be reached or answered
 *         late (after the usual retries); RDL_EAUTH, RDL_ESERVER (e.g.
 *         SCAN refused by an ACL), RDL_EPROTO for an unexpected reply;
 *         RDL_ENOMEM. On failure cb was not called, and
 *         rdl_client_errmsg() says what failed.
 *
 * Thread safety: any thread but the client's loop thread; concurrent
 * listings and other calls on the client are fine.
 */
RDL_API int rdl_client_list_locks(rdl_client_t *c, const char *pattern,
                                  rdl_lock_list_cb cb, void *data);

/**
 * The number of master servers that rdl_client_list_locks() would scan
 * now: 1 for one server or a sentinel URL, the masters of a cluster's slot
 * table. No round trip.
 *
 * @param c    a connected client.
 * @param out  receives the count; 0 on failure.
 * @return 0; RDL_EINVAL for NULL c or out; RDL_EDEADLK on the client's
 *         loop thread; RDL_ENOTCONN if the client is not connected;
 *         RDL_ECLOSED if it was closed; RDL_ECLUSTERDOWN when a cluster slot
 *         has no master known; RDL_ECONNREFUSED when no sentinel has named
 *         the master yet.
 *
 * Thread safety: as rdl_client_list_locks().
 */
RDL_API int rdl_client_master_count(rdl_client_t *c, size_t *out);

#ifdef __cplusplus
}
#endif

#endif
