/* Property-based stress testing of rdl: a seeded random workload records a
 * history of every grant and release, and a checker proves properties of
 * that history afterwards (tests/stress/README.md).
 *
 * The history lives in one shared anonymous mapping, so forked worker
 * processes append to it with the same atomic index as threads, and what a
 * process wrote survives its SIGKILL. An entry's `done` says how much of it
 * is valid: 1 once the call started (t0 and the arguments), 2 once it
 * returned (t1, rc, token); a process killed mid-call leaves a 1.
 * The checker (check.c) needs nothing but the history: it is a pure
 * function, proven on synthetic histories by test_check.c. */
#ifndef RDL_STRESS_H
#define RDL_STRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Event types. */
enum {
    SE_ACQ = 1, /* an acquire call (one per part for a multilock) */
    SE_REL,     /* a release call (one per part for a multilock) */
    SE_LOST,    /* a lost callback ran (t0: when) */
    SE_FAULT    /* a fault injected by the schedule (t0..t1) */
};

/* Lock kinds (SE_ACQ, SE_REL). Kinds of one family share a resource. */
enum {
    SK_PLAIN = 1, /* rdl_lock_new, family 'L' */
    SK_FAIR,      /* rdl_fairlock_new, family 'F' */
    SK_READ,      /* rdl_rwlock_read, family 'R' */
    SK_WRITE,     /* rdl_rwlock_write, family 'R' */
    SK_RED,       /* rdl_redlock_new over 3 servers, family 'D' */
    SK_SEM        /* rdl_semaphore_new, family 'S': each acquisition, a
                     re-entry too, takes one of `permits` permits with a
                     token of its own; each release returns one */
};
#define SK_LAST SK_SEM

/* Fault kinds (SE_FAULT, in `kind`). */
enum {
    SF_KILLCONN = 1, /* CLIENT KILL of rdl connections: must be invisible */
    SF_STOP,         /* SIGSTOP of process `proc` (t0) until SIGCONT (t1) */
    SF_SIGKILL,      /* SIGKILL of process `proc` */
    SF_RESTART,      /* server killed and restarted: its data is gone */
    SF_FAILOVER,     /* CLUSTER or SENTINEL FAILOVER: data loss unless
                        stress_params.durable */
    SF_EXTERNAL,     /* a stage plugged in through stress_hooks: treated as
                        data loss */
    /* The fault proxy (tests/support/proxy.c) in front of some clients: */
    SF_DROP_REPLY,   /* the replies of the next EVALSHAs are lost after the
                        server applied them, their connections closed: the
                        retries must make it invisible */
    SF_DROP_REQUEST, /* the next EVALSHAs never reach the server, their
                        connections closed: must be invisible */
    SF_DELAY_SUB,    /* pub/sub messages arrive `wait_ms` late from t0 until
                        t1 + wait_ms: waits may take longer */
    SF_DELAY_CMD,    /* command replies likewise (below the command
                        timeout): waits and budgets may take longer */
    SF_PROXY_RESET,  /* every proxied connection cut: like SF_KILLCONN */
    /* Sentinel deployments (durable_sentinel): */
    SF_REPLICA_PAUSE, /* SIGSTOP of one or both replicas for 300-1500 ms,
                         then SIGCONT: durable grants fail with
                         RDL_ENOREPLICAS meanwhile; never data loss */
    SF_MASTER_KILL,   /* SIGKILL of the master, down until the sentinels
                         switch, then restarted (it rejoins as a replica):
                         data loss unless stress_params.durable */
    /* Recorded by a worker, not by the schedule (batch_close): */
    SF_CLOSE /* a client on its worker's own loop was closed from inside a
                callback (t0) of its own batched calls; `proc` is that
                client's session (a process number of its own): its holds
                end there as a killed process's do (their leases run out
                on the server), and its calls still running may end with
                RDL_ECLOSED or RDL_ECONNLOST */
};
#define SF_LAST SF_CLOSE

typedef struct stress_ev {
    int32_t done;     /* 0 unused, 1 started, 2 complete (stored last) */
    int16_t type;     /* SE_* */
    int16_t kind;     /* SK_* or SF_* */
    int32_t proc;     /* 0: the test process; 1..: forked workers */
    int32_t owner;    /* proc * 100 + thread */
    int64_t hold;     /* links the acquires and releases of one hold */
    int64_t t0_us;    /* CLOCK_MONOTONIC when the call started */
    int64_t t1_us;    /* when it returned */
    int64_t wait_ms;  /* budget: 0, > 0, or -1 (forever) */
    int64_t lease_ms; /* > 0, or -1 (RDL_LEASE_AUTO) */
    uint64_t token;   /* fencing token after a grant */
    int32_t rc;       /* the call's result */
    int32_t lost;     /* lost callbacks this owner saw during the hold */
    int16_t level;    /* ACQ: hold count after it; REL: count before it */
    int16_t multi;    /* parts of the multilock this is part of, else 0 */
    int16_t permits;  /* SK_SEM: the name's total (the same for every
                         call on it); else 0 */
    int16_t calls;    /* how often the call returned (its callback ran):
                         1, or a violation */
    char name[12];    /* lock name ("n2"); fault: a short note */
} stress_ev;

typedef struct stress_hist {
    stress_ev *ev;
    size_t cap;
    size_t *next; /* shared atomic index */
} stress_hist;

/* Maps a shared history of `cap` entries (MAP_SHARED: survives fork). */
int stress_hist_init(stress_hist *h, size_t cap);
void stress_hist_free(stress_hist *h);
/* Reserves an entry (NULL when the history is full). */
stress_ev *stress_hist_add(stress_hist *h);
/* Publishes an entry's state (1 started, 2 complete). */
void stress_hist_done(stress_ev *e, int state);
size_t stress_hist_len(const stress_hist *h);
int64_t stress_now_us(void);
/* A lock kind's name (SK_*), or a fault's (type SE_FAULT, SF_*). */
const char *stress_kind_name(int type, int kind);
/* One history line, for reports and dumps. */
void stress_ev_format(const stress_ev *e, int64_t base_us, char *buf,
                      size_t len);

/* What the checker tolerates. */
typedef struct stress_params {
    int64_t cmd_timeout_ms; /* the clients' command timeout */
    int64_t slack_ms;       /* scheduling slack of this machine (250) */
    int64_t stall_ms;       /* lost wake-up threshold (250) */
    int64_t grant_slack_ms; /* how long before an acquire returned its
                               grant may have happened on the server */
    int64_t watchdog_ms;    /* the clients' watchdog lease */
    int64_t fault_ms;       /* how long a fault's effects may last after it
                               ended (longest lease + fair queue entry) */
    int durable;            /* every grant was confirmed by the replicas
                               (rdl_client_set_durability) that a failover
                               promotes: SF_FAILOVER and SF_MASTER_KILL are
                               no data loss (they excuse no overlap), only
                               wake-ups, errors and codes near them */
} stress_params;

void stress_params_default(stress_params *p);

/* Checker properties, the names the report uses. */
enum {
    SP_OVERLAP,    /* two owners of an exclusive lock at once */
    SP_RW,         /* a reader alongside a writer */
    SP_PERMITS,    /* more semaphore permits held at once than its total */
    SP_TOKENS,     /* fencing tokens not increasing in grant order */
    SP_BUDGET,     /* a call returned past its wait budget */
    SP_WAKEUP,     /* a waiter slept while the lock was free */
    SP_SPURIOUS,   /* an error for a call that should have succeeded */
    SP_UNEXPECTED, /* a result code no call should return here */
    SP_LEFTOVER,   /* keys left in Redis (reported by the driver) */
    SP_HANG,       /* a worker did not finish (reported by the driver) */
    SP_ONCE,       /* a call returned (its callback ran) more than once */
    SP_COUNT
};
const char *stress_prop_name(int prop);

typedef struct stress_report {
    unsigned count[SP_COUNT]; /* violations per property */
    char *text;               /* the first few of each, with history lines */
    size_t len, cap;
    int64_t base_us; /* time origin of the lines */
} stress_report;

/* Checks the history; returns the number of violations. The report must
 * be zeroed before and freed with stress_report_free(). */
unsigned stress_check(const stress_ev *ev, size_t n, const stress_params *p,
                      stress_report *r);
/* Adds a violation found outside the checker (e.g. leftover keys). */
void stress_report_add(stress_report *r, int prop, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
unsigned stress_report_total(const stress_report *r);
void stress_report_free(stress_report *r);

#endif
