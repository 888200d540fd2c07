/* The blocking facade (docs/design.md#threads): a blocking call posts its work
 * to the loop thread and waits until the work completes.
 *
 * The wait is a short spin, then a semaphore. Waking a thread that sleeps
 * on a semaphore costs a futex call on the loop thread and a scheduler
 * wake-up on the caller's side, on the critical path of every blocking
 * call; a caller that is still spinning when the result arrives pays
 * neither. The spin is bounded so it cannot eat a core:
 *   - at most one caller per process spins at a time (others sleep at
 *     once), so N blocking threads never spin N cores away from the loop
 *     thread and the server;
 *   - it spins for about twice the recent typical call (an average of past
 *     calls), at most SPIN_MAX_NS, and not at all when calls take longer
 *     than SLOW_NS (contended waits, slow servers), where a spin would
 *     only burn CPU; nor after MISS_LIMIT spins in a row that the result
 *     did not end, but for one call in PROBE_EVERY.
 * Why SLOW_NS is 3 x SPIN_MAX_NS, and the probe: the time of a call
 * depends on whether its caller spins. A caller that sleeps lets its vCPU
 * idle, and on a VM whose idle vCPUs wake slowly every hop of the call
 * (the loop thread, the server, the caller) pays for a wake-up: calls
 * measured 250 us here with callers asleep and 60-100 us with one
 * spinning. With "no spin above SPIN_MAX_NS" one slow stretch (a slow
 * first call, a contended wait) put the average above it, calls then
 * slept, stayed slow, and the spin never came back (the peers' U test
 * fell from 2 x the best peer to below it: docs/benchmarks.md). Now such
 * an average still spins for SPIN_MAX_NS, the result comes within it, and
 * the average falls back; where the result really takes longer (a remote
 * server), the misses stop the spin, and the probe finds out when it
 * would pay again. A call is timed from its post to its result
 * (rdl__sync_done), not to when a sleeping caller ran again, and a long
 * wait counts for at most LEARN_MAX_NS.
 * The spinner yields its CPU every 64 turns (sched_yield): on a machine
 * with few CPUs the loop thread (or the server) may be queued on the
 * spinner's very CPU, and a spin that does not yield then holds back the
 * result it waits for (probes that missed took 400-450 us where a sleeping
 * caller's call took 250; with the yield, the peers' U test went from
 * about 2,000 to 4,200-5,900 cycles/s on the same machine).
 *
 * Hand-over: `state` starts WAITING. The loop thread stores the result,
 * then swaps `state` to DONE; if it was SLEEPING it posts the semaphore.
 * The caller stops spinning by swapping WAITING -> SLEEPING; if that fails
 * the result is already there. Either way exactly one side decides whether
 * the semaphore is posted, and the loop thread never touches `s` after
 * handing over to a spinning caller (the caller's stack frame may be gone
 * by then). */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "errmsg.h"
#include "sync.h"

enum { WAITING, SLEEPING, DONE };

#define SPIN_MAX_NS 200000u            /* the longest a caller spins */
#define SLOW_NS (3 * SPIN_MAX_NS)      /* no spinning when calls take longer */
#define LEARN_MAX_NS (4 * SPIN_MAX_NS) /* the most one call counts for */
#define MISS_LIMIT 4   /* spins missed in a row before spinning stops */
#define PROBE_EVERY 16 /* then every 16th call spins all the same */

/* 1 while a caller spins (atomic). One flag for the whole process, not
 * one per client: the bound it keeps is on the process's CPUs (N
 * blocking threads, whatever their clients, never spin N cores away from
 * the loop threads and the server). What a spin learns is the client's
 * (rdl_client_s.spin): clients of different servers see different call
 * times. */
static int spinner;

static void run(rdl__task *t, int status)
{
    rdl__sync *s = RDL_CONTAINER_OF(t, rdl__sync, task);
    if (status != 0) {
        rdl__sync_done(s, status);
        return;
    }
    s->start(s);
}

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

uint64_t rdl__spin_budget(uint64_t typical, unsigned missed, unsigned call)
{
    if (typical == 0 || typical > SLOW_NS)
        return 0;
    if (missed >= MISS_LIMIT && call % PROBE_EVERY != 0)
        return 0;
    return 2 * typical < SPIN_MAX_NS ? 2 * typical : SPIN_MAX_NS;
}

/* Spins until the result arrives or the budget is spent; 1 if it arrived. */
static int spin(rdl__sync *s, rdl__spin_stats *st, uint64_t start)
{
    unsigned missed = __atomic_load_n(&st->misses, __ATOMIC_RELAXED);
    /* The shared count is touched only while probing, not on every call. */
    unsigned call = missed >= MISS_LIMIT
                        ? __atomic_add_fetch(&st->calls, 1, __ATOMIC_RELAXED)
                        : 1;
    uint64_t budget = rdl__spin_budget(
        __atomic_load_n(&st->typical_ns, __ATOMIC_RELAXED), missed, call);
    int expect = 0, got = 0;
    unsigned i;

    if (budget == 0)
        return 0;
    if (!__atomic_compare_exchange_n(&spinner, &expect, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 0;
    for (i = 1;; i++) {
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == DONE) {
            got = 1;
            break;
        }
        CPU_RELAX();
        if ((i & 63) == 0) {
            if (uv_hrtime() - start > budget)
                break;
            sched_yield();
        }
    }
    __atomic_store_n(&spinner, 0, __ATOMIC_RELEASE);
    if (got)
        __atomic_store_n(&st->misses, 0, __ATOMIC_RELAXED);
    else if (__atomic_load_n(&st->misses, __ATOMIC_RELAXED) < MISS_LIMIT)
        __atomic_add_fetch(&st->misses, 1, __ATOMIC_RELAXED);
    return got;
}

uint64_t rdl__spin_learn(uint64_t t, uint64_t took)
{
    /* An average over ~8 calls, each counted for at most LEARN_MAX_NS: a
     * wait of seconds says no more than "slow" and is forgotten after a
     * dozen quick calls, not after sixty. */
    if (took > LEARN_MAX_NS)
        took = LEARN_MAX_NS;
    return t == 0 ? took : t - t / 8 + took / 8;
}

static void learn(rdl__spin_stats *st, uint64_t took)
{
    uint64_t t = __atomic_load_n(&st->typical_ns, __ATOMIC_RELAXED);
    /* A lost update between threads is fine. */
    __atomic_store_n(&st->typical_ns, rdl__spin_learn(t, took),
                     __ATOMIC_RELAXED);
}

int rdl__sync_call(rdl_client_t *c, rdl__sync *s)
{
    int rc, expect = WAITING;
    uint64_t start;
    if ((rc = rdl__client_check_running(c)) != 0)
        return rc;
    if (rdl__client_on_loop(c)) {
        rdl__errmsg_set(c, "blocking call on the client's loop thread");
        return RDL_EDEADLK;
    }
    if (uv_sem_init(&s->sem, 0) != 0)
        return RDL_ENOMEM;
    s->client = c;
    s->status = 0;
    s->msg[0] = '\0';
    s->state = WAITING;
    s->task.run = run;
    start = uv_hrtime();
    rc = rdl__client_post(c, &s->task);
    if (rc != 0) {
        uv_sem_destroy(&s->sem);
        rdl__errmsg_set(c, "the client is closed");
        return rc;
    }
    if (!spin(s, &c->spin, start) &&
        __atomic_compare_exchange_n(&s->state, &expect, SLEEPING, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        uv_sem_wait(&s->sem);
    uv_sem_destroy(&s->sem);
    learn(&c->spin, s->done_ns - start);
    if (s->status != 0)
        rdl__errmsg_set(c, "%s", s->msg[0] ? s->msg : rdl_strerror(s->status));
    return s->status;
}

void rdl__sync_done(rdl__sync *s, int status)
{
    s->status = status;
    s->done_ns = uv_hrtime();
    if (status != 0)
        snprintf(s->msg, sizeof(s->msg), "%s", rdl__errmsg_get(s->client));
    /* After this swap `s` belongs to the caller again, unless the caller
     * sleeps and needs the post. */
    if (__atomic_exchange_n(&s->state, DONE, __ATOMIC_ACQ_REL) == SLEEPING)
        uv_sem_post(&s->sem);
}
