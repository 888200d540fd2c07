/* Intrusive circular doubly linked list. A list head and its members are the
 * same struct; an empty list points at itself. Members are recovered with
 * RDL_CONTAINER_OF. */
#ifndef RDL_CORE_QUEUE_H
#define RDL_CORE_QUEUE_H

#include <stddef.h>

typedef struct rdl__queue {
    struct rdl__queue *next;
    struct rdl__queue *prev;
} rdl__queue;

#define RDL_CONTAINER_OF(ptr, type, field)                                     \
    ((type *)((char *)(ptr)-offsetof(type, field)))

static inline void rdl__queue_init(rdl__queue *q)
{
    q->next = q;
    q->prev = q;
}

static inline int rdl__queue_empty(const rdl__queue *q)
{
    return q->next == q;
}

/* A node that was initialised or removed is not linked anywhere. */
static inline int rdl__queue_linked(const rdl__queue *n)
{
    return n->next != n;
}

static inline rdl__queue *rdl__queue_head(const rdl__queue *q)
{
    return q->next;
}

static inline void rdl__queue_insert_tail(rdl__queue *q, rdl__queue *n)
{
    n->next = q;
    n->prev = q->prev;
    q->prev->next = n;
    q->prev = n;
}

static inline void rdl__queue_remove(rdl__queue *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    rdl__queue_init(n);
}

/* Moves every member of `from` to the tail of `to`; `from` ends empty. */
static inline void rdl__queue_move(rdl__queue *from, rdl__queue *to)
{
    if (rdl__queue_empty(from))
        return;
    from->next->prev = to->prev;
    to->prev->next = from->next;
    from->prev->next = to;
    to->prev = from->prev;
    rdl__queue_init(from);
}

#endif
