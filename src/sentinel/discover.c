/* Finding and following the master through the sentinels
 * (docs/design.md#sentinel).
 *
 * A round asks the sentinels one at a time, the one that answered last
 * first, with SENTINEL get-master-addr-by-name (which on the failover's
 * leader names the promoted replica at once), until one names the master.
 * The address is then confirmed with ROLE on the master's own command
 * connection: a sentinel that has not yet noticed a failover names a replica,
 * which ROLE shows, and the client asks again shortly. Until a master is
 * confirmed, commands wait (router.c). ROLE cannot tell an old master that
 * was restarted and not yet demoted, so answers are also ordered by the
 * master's config epoch, which each failover raises (epoch_min). Once
 * confirmed, and again from time to time, a sentinel is asked which
 * replicas of that master it sees up: the durable line's RDL_REPLICAS_ALL
 * waits for them (rdl__durable_note_replicas), also while they are
 * reconnecting (see "the master's replicas").
 *
 * Following: the client subscribes to +promoted-slave and +switch-master
 * on every sentinel and moves as soon as one names a new master (see
 * watch_all); the old master keeps accepting writes for seconds after a
 * SENTINEL FAILOVER (until Sentinel reconfigures it), so waiting for its
 * READONLY is not enough. As a backstop against a
 * lost message or a sentinel that went away, a round runs every CHECK_MS,
 * and at once when the master's connection drops or a command meets
 * READONLY. A switch points the master's connections at the new address
 * (rdl__conn_retarget): written commands fail as with any drop (outcome
 * unknown, retried by request id), unsent ones follow; scripts are loaded
 * again on NOSCRIPT, and the hub subscribes again and wakes its waiters.
 *
 * The first round settles the connect: RDL_ENOMASTER if a sentinel
 * answered that it does not know the master's name, RDL_EAUTH if the
 * sentinels refused the credentials (see round_failed), RDL_ECONNREFUSED
 * naming each sentinel and what went wrong if none answered. */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "sentinel_int.h"

#define CHECK_MS 2000     /* a round with a confirmed master */
#define RETRY_MS 100      /* a round after one that found no master, doubled */
#define RETRY_MAX_MS 2000 /* for each such round in a row, up to this */
/* After an event named a new master, answers at the old epoch are taken
 * for stale this long; if every sentinel still gives them after that, the
 * failover did not happen after all. */
#define STALE_MS 5000
/* The sentinels' count of the master's replicas is asked again when the
 * last answer is this old, and at every round for this long after a
 * switch (while the sentinels reconnect to the nodes whose role changed,
 * they list them as disconnected). */
#define REPLICAS_MS 10000

static void ask_next(rdl__sentinel *s);

/* ---- timers ------------------------------------------------------------- */

void rdl__sentinel_check_timer(uv_timer_t *t)
{
    rdl__sentinel_discover(t->data);
}

void rdl__sentinel_check_in(rdl__sentinel *s, uint64_t ms)
{
    if (s->closing)
        return;
    if (uv_is_active((uv_handle_t *)&s->check_timer) &&
        uv_timer_get_due_in(&s->check_timer) <= ms)
        return;
    uv_timer_start(&s->check_timer, rdl__sentinel_check_timer, ms, 0);
}

/* ---- the first connect ---------------------------------------------------- */

static void settle(rdl__sentinel *s, int status)
{
    if (status == 0)
        s->started = 1;
    s->base.ev->settled(s->base.ev_data, status);
}

static void note(rdl__sentinel *s, size_t i, const char *what)
{
    size_t n = strlen(s->why);
    snprintf(s->why + n, sizeof(s->why) - n, "%s%s:%d (%s)", n ? ", " : "",
             s->net->url.seeds[i].host, s->net->url.seeds[i].port, what);
}

/* When to look again after a round that ended without a confirmed master
 * (no sentinel named one, or the one named says it is not a master): 100
 * ms after the first, doubling for each such round in a row up to 2 s,
 * with jitter. Every sentinel down, or naming a replica, must not become
 * every client asking every sentinel ten times a second. */
static uint64_t retry_ms(rdl__sentinel *s)
{
    uint64_t ms = RETRY_MS;
    unsigned i;
    for (i = 0; i < s->failed_rounds && ms < RETRY_MAX_MS; i++)
        ms *= 2;
    if (ms > RETRY_MAX_MS)
        ms = RETRY_MAX_MS;
    if (s->failed_rounds < 32)
        s->failed_rounds++;
    return ms / 2 + randombytes_uniform((uint32_t)(ms / 2 + 1));
}

/* Every sentinel was asked and none named the master. A refusal of the
 * credentials (WRONGPASS, NOAUTH, NOPERM) is RDL_EAUTH, as it is on a data
 * node, when no sentinel gave an answer of another kind: those that could
 * not be reached do not change what the others said, and asking again
 * with the same credentials will not help, while RDL_ECONNREFUSED says
 * the deployment is unreachable. A sentinel that does not know the name
 * is a more specific answer still (RDL_ENOMASTER). */
static void round_failed(rdl__sentinel *s)
{
    int refused = s->unknown == 0 && s->behind == 0 && s->refused > 0;
    int status = s->unknown > 0 ? RDL_ENOMASTER
                 : refused      ? RDL_EAUTH
                                : RDL_ECONNREFUSED;
    s->asking = 0;
    /* Every answer was older than what the client saw: long after an
     * event that may be a failover that did not finish, or a Sentinel
     * deployment set up afresh (epochs from 0). Take the answers again. */
    if (s->behind > 0 && rdl__now_ms() - s->event_at > STALE_MS)
        s->epoch = s->epoch_min = 0;
    if (s->unknown > 0)
        rdl__errmsg_set(s->net->owner, "no sentinel knows master \"%s\": %s",
                        s->master, s->why);
    else if (refused)
        rdl__errmsg_set(s->net->owner,
                        "the sentinels refused the credentials for master "
                        "\"%s\" (%s): %s",
                        s->master,
                        s->net->url.sentinel_pass != NULL
                            ? "the URL's sentinel_password"
                            : "they want one: sentinel_password in the URL",
                        s->why);
    else
        rdl__errmsg_set(s->net->owner,
                        "no sentinel could be asked for master \"%s\": %s",
                        s->master, s->why);
    if (!s->started)
        settle(s, status);
    rdl__sentinel_check_in(s, retry_ms(s));
}

/* ---- the master's replicas ------------------------------------------------ */

/* RDL_REPLICAS_ALL waits for the replicas the durable connection noted
 * within RDL__REPLICA_FORGET_MS (conn.c: ROLE's count, which leaves out a
 * replica while it reconnects or resyncs, and the counts noted here).
 * What the sentinels add is their count of the *current* master's
 * replicas that are up (not s_down, o_down or disconnected), and only
 * that:
 *
 *  - an answer is taken only if the same sentinel, on the same
 *    connection just before, named the client's master, if it does not
 *    list that master among the replicas, and if the client has not moved
 *    since it asked. Both checks are needed: a sentinel behind the
 *    failover names the old master, and the failover's leader names the
 *    promoted replica at once while it still lists the old master's
 *    replicas, the promoted one among them, until the failover ends. A
 *    count from before a switch has the promoted replica, now the master,
 *    waited for until it is forgotten: every grant refused;
 *  - it is noted when it comes (and when the durable connection opens),
 *    not at every use: noting an old count again would keep it from
 *    ever being forgotten;
 *  - it is asked after each confirmation of the master (a switch, a
 *    reconnect), at the periodic rounds during REPLICAS_MS after a
 *    switch (not at every round: while the master is down a round
 *    follows each failed reconnect) and then every REPLICAS_MS, so that a
 *    replica the sentinels still see up is kept counted while ROLE leaves
 *    it out.
 *
 * A switch counts one replica fewer (rdl__durable_moved: the promoted one).
 * The old master is counted again only once the sentinels list it as a
 * live replica of the new master, or ROLE lists it: killed and left down,
 * it is listed as disconnected and s_down, and not waited for; restarted,
 * or demoted after SENTINEL FAILOVER, it is, since it then receives the
 * new master's writes and could be promoted again. Counts only ever raise
 * what the connection waits for at once; a lower one takes over when the
 * higher has not been seen for RDL__REPLICA_FORGET_MS. */

static void on_replicas_addr(void *data, int status, const redisReply *r,
                             uint64_t written_ms)
{
    rdl__sentinel *s = data;
    char host[256];
    int port;
    (void)written_ms;
    s->rep_named = status == 0 && s->host != NULL &&
                   rdl__reply_master_addr(r, host, sizeof(host), &port) == 1 &&
                   strcmp(host, s->host) == 0 && port == s->port;
}

static void on_replicas(void *data, int status, const redisReply *r,
                        uint64_t written_ms)
{
    rdl__sentinel *s = data;
    (void)written_ms;
    long long n;
    s->rep_asking = 0;
    if (s->closing || status != 0 || !s->rep_named ||
        s->rep_switches != s->switches)
        return;
    n = rdl__reply_sentinel_replicas_up(r);
    if (n < 0 || rdl__reply_sentinel_lists(r, s->host, s->port))
        return;
    s->replicas_up = n;
    s->replicas_at = rdl__now_ms();
    if (s->dur != NULL)
        rdl__durable_note_replicas(s->dur, n);
}

/* Asks the sentinel that answered last for the master's address and its
 * replicas, one question at a time; a failure leaves the count as it was
 * (ROLE still counts). Only RDL_REPLICAS_ALL uses it. */
static void ask_replicas(rdl__sentinel *s)
{
    const char *addr[3] = {"SENTINEL", "get-master-addr-by-name", s->master};
    const char *argv[3] = {"SENTINEL", "REPLICAS", s->master};
    rdl__conn *cn = s->sconn[s->good];
    if (s->net->durable_replicas != RDL_REPLICAS_ALL || cn == NULL ||
        s->rep_asking)
        return;
    s->rep_named = 0;
    s->rep_switches = s->switches;
    s->rep_asked_at = rdl__now_ms();
    if (rdl__conn_sendv(cn, 3, addr, NULL, on_replicas_addr, s) != 0)
        return;
    s->rep_asking = 1;
    if (rdl__conn_sendv(cn, 3, argv, NULL, on_replicas, s) != 0)
        s->rep_asking = 0;
}

/* A round found the confirmed master again: its replicas are asked for if
 * the last count is old, or the switch recent. */
static void ask_replicas_if_due(rdl__sentinel *s)
{
    uint64_t now = rdl__now_ms();
    if (now - s->rep_asked_at >= CHECK_MS / 2 &&
        (now - s->replicas_at >= REPLICAS_MS ||
         now - s->switched_at < REPLICAS_MS))
        ask_replicas(s);
}

/* ---- the master ------------------------------------------------------------ */

static void on_role(void *data, int status, const redisReply *r,
                    uint64_t written_ms);

static void confirm(rdl__sentinel *s)
{
    static const char *argv[1] = {"ROLE"};
    s->confirmed = 0;
    if (rdl__conn_sendv(s->cmd, 1, argv, NULL, on_role, s) != 0)
        rdl__sentinel_check_in(s, RETRY_MS);
}

static void on_role(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    rdl__sentinel *s = data;
    int master;
    (void)written_ms;
    if (s->closing)
        return;
    /* A ROLE written before a switch fails with the drop; one that was not
     * written yet goes to the new address and confirms that. */
    if (status != 0) {
        rdl__sentinel_check_in(s, RETRY_MS);
        return;
    }
    master = rdl__reply_role_master(r);
    if (master != 1) {
        /* The sentinel's view is behind: ask again shortly. */
        rdl__errmsg_set(s->net->owner, "%s is not a master (yet)",
                        rdl__conn_addr(s->cmd));
        rdl__sentinel_check_in(s, retry_ms(s));
        return;
    }
    s->confirmed = 1;
    s->failed_rounds = 0;
    ask_replicas(s);
    if (!s->started)
        settle(s, 0);
    rdl__sentinel_flush(s);
    rdl__sentinel_check_in(s, CHECK_MS);
}

/* A sentinel named host:port as the master. */
static void switch_to(rdl__sentinel *s, const char *host, int port)
{
    char *h;
    int same = s->host != NULL && strcmp(s->host, host) == 0 && s->port == port;
    if (same && s->confirmed) {
        ask_replicas_if_due(s);
        rdl__sentinel_check_in(s, CHECK_MS);
        return;
    }
    if (!same) {
        h = rdl__strdup(host);
        if (h == NULL) {
            rdl__sentinel_check_in(s, RETRY_MS);
            return;
        }
        rdl__free(s->host);
        s->host = h;
        s->port = port;
        s->confirmed = 0;
        /* The sentinels' count was of the old master's replicas. */
        s->switches++;
        s->switched_at = rdl__now_ms();
        s->replicas_up = -1;
        s->replicas_at = 0;
        /* The drop that moving causes is not a failure to react to. */
        s->switching = 1;
        if (rdl__conn_retarget(s->cmd, host, port) != 0 ||
            (s->dur != NULL && rdl__conn_retarget(s->dur, host, port) != 0) ||
            (s->sub != NULL && rdl__conn_retarget(s->sub, host, port) != 0)) {
            s->switching = 0;
            rdl__sentinel_check_in(s, RETRY_MS);
            return;
        }
        if (s->dur != NULL)
            rdl__durable_moved(s->dur); /* one replica was promoted */
        s->switching = 0;
    }
    confirm(s);
}

static void on_master_ready(rdl__conn *cn, void *data)
{
    (void)cn;
    (void)data;
}

/* The master's connection dropped or could not be made: maybe a failover.
 * Before the first connect it settles it, as with one server. */
static void on_master_down(rdl__conn *cn, int status, void *data)
{
    rdl__sentinel *s = data;
    (void)cn;
    if (s->closing || s->switching)
        return;
    if (!s->started && !s->asking)
        settle(s, status);
    rdl__sentinel_discover(s);
}

const rdl__conn_events rdl__sentinel_master_events = {
    on_master_ready, on_master_down, NULL, NULL};

/* ---- watching the sentinels' events ------------------------------------- */

static void on_event(rdl__conn *cn, const redisReply *r, void *data)
{
    rdl__sentinel *s = data;
    const char *ch, *msg;
    size_t chl, msgl;
    char host[256];
    int port;
    (void)cn;
    if (s->closing || !rdl__reply_message(r, &ch, &chl, &msg, &msgl))
        return;
    if (rdl__reply_sentinel_event(ch, chl, msg, msgl, s->master, host,
                                  sizeof(host), &port)) {
        if (s->host == NULL || strcmp(s->host, host) != 0 || s->port != port) {
            s->epoch_min = s->epoch + 1; /* a failover raised it */
            s->event_at = rdl__now_ms();
        }
        switch_to(s, host, port);
    }
}

static void on_watch_ready(rdl__conn *cn, void *data)
{
    static const char *sw[2] = {"SUBSCRIBE", "+switch-master"};
    static const char *pr[2] = {"SUBSCRIBE", "+promoted-slave"};
    (void)data;
    /* After each (re)connect; a failure shows as a drop. One channel per
     * SUBSCRIBE: each channel is confirmed by a reply of its own, and the
     * connection pairs one reply with one command. */
    (void)rdl__conn_sendv(cn, 2, sw, NULL, NULL, NULL);
    (void)rdl__conn_sendv(cn, 2, pr, NULL, NULL, NULL);
}

static const rdl__conn_events watch_events = {on_watch_ready, NULL, on_event,
                                              NULL};

static rdl__conn *sentinel_conn(rdl__sentinel *s, size_t i, rdl__conn_role role,
                                const rdl__conn_events *ev)
{
    const rdl__url *u = &s->net->url;
    rdl__conn *cn =
        rdl__conn_new(s->net, role, u->seeds[i].host, u->seeds[i].port, ev, s);
    if (cn != NULL) {
        rdl__conn_set_login(cn, u->sentinel_user, u->sentinel_pass, 0);
        rdl__conn_set_aux(cn);
    }
    return cn;
}

/* Listens to every sentinel, not only the one that answered: the
 * failover's leader, whichever it is, tells at once that its replica was
 * promoted (+promoted-slave); the others say so only when the failover
 * ends (+switch-master), seconds later, while the old master still takes
 * writes that its demotion will throw away. A sentinel that is down is
 * redialled by its connection, with backoff. */
static void watch_all(rdl__sentinel *s)
{
    size_t i;
    for (i = 0; i < s->nsentinels; i++) {
        if (s->watch[i] != NULL)
            continue;
        s->watch[i] = sentinel_conn(s, i, RDL__CONN_SUB, &watch_events);
        if (s->watch[i] != NULL)
            rdl__conn_start(s->watch[i]);
    }
}

void rdl__sentinel_close_watchers(rdl__sentinel *s)
{
    size_t i;
    for (i = 0; i < s->nsentinels; i++) {
        if (s->watch != NULL)
            rdl__conn_close(s->watch[i]);
        if (s->sconn != NULL)
            rdl__conn_close(s->sconn[i]);
    }
}

/* ---- rounds ----------------------------------------------------------------- */

static void on_addr(void *data, int status, const redisReply *r,
                    uint64_t written_ms)
{
    rdl__sentinel *s = data;
    size_t i = (s->next + s->nsentinels - 1) % s->nsentinels;
    char host[256], why[80];
    int port, got;
    (void)written_ms;
    long long epoch;

    if (s->closing)
        return;
    if (status == RDL_ECLOSED) {
        ask_next(s); /* closed by on_sentinel_down, which noted why */
        return;
    }
    if (status != 0) {
        note(s, i,
             r != NULL && r->type == REDIS_REPLY_ERROR ? r->str
                                                       : rdl_strerror(status));
        s->refused += status == RDL_EAUTH; /* NOPERM: the user may not ask */
        ask_next(s);
        return;
    }
    got = rdl__reply_master_addr(r, host, sizeof(host), &port);
    if (got != 1) {
        note(s, i, got == 0 ? "does not know the master" : "odd reply");
        s->unknown += got == 0;
        ask_next(s);
        return;
    }
    /* A sentinel that would not say its epoch is taken at the last one. */
    epoch = s->answer_epoch >= 0 ? s->answer_epoch : s->epoch;
    if (epoch < s->epoch_min) {
        snprintf(why, sizeof(why), "behind: config epoch %lld, not %lld", epoch,
                 s->epoch_min);
        note(s, i, why);
        s->behind++;
        ask_next(s);
        return;
    }
    if (epoch > s->epoch)
        s->epoch = epoch;
    s->epoch_min = s->epoch;
    s->asking = 0;
    s->good = i;
    watch_all(s);
    switch_to(s, host, port);
    if (s->again) {
        s->again = 0;
        rdl__sentinel_check_in(s, RETRY_MS);
    }
}

/* A sentinel's connection failed: if it is being asked, the round moves on
 * to the next one now rather than after the command timeout. The
 * connection is closed (its question fails with RDL_ECLOSED) and made
 * again when the sentinel is next asked, so a dead sentinel is not
 * redialled in the background. */
static void on_sentinel_down(rdl__conn *cn, int status, void *data)
{
    rdl__sentinel *s = data;
    size_t i;
    for (i = 0; i < s->nsentinels && s->sconn[i] != cn; i++)
        ;
    if (i == s->nsentinels || s->closing)
        return;
    if (s->asking && (s->next + s->nsentinels - 1) % s->nsentinels == i) {
        note(s, i, rdl__errmsg_get(s->net->owner));
        /* The handshake's AUTH (or, without a password, its first command)
         * was refused. */
        s->refused += status == RDL_EAUTH;
    }
    s->sconn[i] = NULL;
    rdl__conn_close(cn);
}

static const rdl__conn_events ask_events = {NULL, on_sentinel_down, NULL, NULL};

/* The config epoch comes first, on the same connection: the address that
 * follows is at least as new (see epoch_min). */
static void on_epoch(void *data, int status, const redisReply *r,
                     uint64_t written_ms)
{
    rdl__sentinel *s = data;
    (void)written_ms;
    s->answer_epoch = status == 0 ? rdl__reply_sentinel_epoch(r) : -1;
}

static void ask_next(rdl__sentinel *s)
{
    const char *epoch[3] = {"SENTINEL", "MASTER", s->master};
    const char *argv[3] = {"SENTINEL", "get-master-addr-by-name", s->master};
    size_t i;
    if (s->tried == s->nsentinels) {
        round_failed(s);
        return;
    }
    i = s->next;
    s->next = (s->next + 1) % s->nsentinels;
    s->tried++;
    if (s->sconn[i] == NULL)
        s->sconn[i] = sentinel_conn(s, i, RDL__CONN_CMD, &ask_events);
    s->answer_epoch = -1;
    if (s->sconn[i] == NULL ||
        rdl__conn_sendv(s->sconn[i], 3, epoch, NULL, on_epoch, s) != 0 ||
        rdl__conn_sendv(s->sconn[i], 3, argv, NULL, on_addr, s) != 0) {
        note(s, i, "out of memory");
        ask_next(s);
    }
}

void rdl__sentinel_discover(rdl__sentinel *s)
{
    if (s->closing)
        return;
    if (s->asking) {
        s->again = 1;
        return;
    }
    uv_timer_stop(&s->check_timer);
    s->asking = 1;
    s->again = 0;
    s->tried = 0;
    s->unknown = 0;
    s->refused = 0;
    s->behind = 0;
    s->why[0] = '\0';
    s->next = s->good;
    ask_next(s);
}
