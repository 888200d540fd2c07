/* The blocking facade (DESIGN §5): a blocking call posts its work to the
 * loop thread and waits until the work completes.
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
 *     calls), and not at all when calls take longer than SPIN_MAX_NS
 *     (contended waits, slow servers), where a spin would only burn CPU.
 *
 * Hand-over: `state` starts WAITING. The loop thread stores the result,
 * then swaps `state` to DONE; if it was SLEEPING it posts the semaphore.
 * The caller stops spinning by swapping WAITING -> SLEEPING; if that fails
 * the result is already there. Either way exactly one side decides whether
 * the semaphore is posted, and the loop thread never touches `s` after
 * handing over to a spinning caller (the caller's stack frame may be gone
 * by then). */
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "errmsg.h"
#include "sync.h"

enum { WAITING, SLEEPING, DONE };

#define SPIN_MAX_NS 200000u /* no spinning when calls take longer */

static int spinner;         /* 1 while a caller spins (atomic) */
static uint64_t typical_ns; /* running average of call times (atomic) */

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

/* Spins until the result arrives or the budget is spent; 1 if it arrived. */
static int spin(rdl__sync *s, uint64_t start)
{
    uint64_t typical = __atomic_load_n(&typical_ns, __ATOMIC_RELAXED);
    uint64_t budget = 2 * typical;
    int expect = 0, got = 0;
    unsigned i;

    if (typical == 0 || typical > SPIN_MAX_NS)
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
        if ((i & 63) == 0 && uv_hrtime() - start > budget)
            break;
    }
    __atomic_store_n(&spinner, 0, __ATOMIC_RELEASE);
    return got;
}

static void learn(uint64_t took)
{
    uint64_t t = __atomic_load_n(&typical_ns, __ATOMIC_RELAXED);
    /* An average over ~8 calls; a lost update between threads is fine. */
    t = t == 0 ? took : t - t / 8 + took / 8;
    __atomic_store_n(&typical_ns, t, __ATOMIC_RELAXED);
}

int rdl__sync_call(rdl_client_t *c, rdl__sync *s)
{
    int rc, expect = WAITING;
    uint64_t start;
    if (c->state != RDL__CLIENT_RUNNING) {
        rdl__errmsg_set(c, "the client is %s",
                        c->state == RDL__CLIENT_NEW ? "not connected"
                                                    : "closed");
        return RDL_ECLOSED;
    }
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
    if (!spin(s, start) &&
        __atomic_compare_exchange_n(&s->state, &expect, SLEEPING, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        uv_sem_wait(&s->sem);
    uv_sem_destroy(&s->sem);
    learn(uv_hrtime() - start);
    if (s->status != 0)
        rdl__errmsg_set(c, "%s", s->msg[0] ? s->msg : rdl_strerror(s->status));
    return s->status;
}

void rdl__sync_done(rdl__sync *s, int status)
{
    s->status = status;
    if (status != 0)
        snprintf(s->msg, sizeof(s->msg), "%s", rdl__errmsg_get(s->client));
    /* After this swap `s` belongs to the caller again, unless the caller
     * sleeps and needs the post. */
    if (__atomic_exchange_n(&s->state, DONE, __ATOMIC_ACQ_REL) == SLEEPING)
        uv_sem_post(&s->sem);
}
