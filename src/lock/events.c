/* Events of the script kinds (include/rdl/events.h): the lock layer
 * builds them where acquisitions, releases and losses settle (acquire.c,
 * release.c, hold.c) and the client hands them on. */
#include "lock_int.h"

void rdl__lock_event(rdl_lock_t *lock, rdl_event_kind_t kind, rdl_owner_t owner,
                     int64_t wait_ms, int64_t held_ms, uint64_t token)
{
    rdl_event_t ev;
    if (!rdl__lock_events_on(lock))
        return;
    ev.kind = kind;
    ev.name = lock->name;
    ev.lock_kind = lock->kind->label;
    ev.owner = owner;
    ev.wait_ms = wait_ms;
    ev.held_ms = held_ms;
    ev.fencing_token = token;
    rdl__client_event(lock->c, &ev);
}
