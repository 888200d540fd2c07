#include <string.h>

#include <sodium.h>

#include "alloc.h"
#include "map.h"
#include "rdl.h"

void rdl__map_init(rdl__map *m)
{
    memset(m, 0, sizeof(*m));
    randombytes_buf(m->seed, sizeof(m->seed));
}

void rdl__map_clear(rdl__map *m)
{
    rdl__free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->count = 0;
}

static uint64_t hash(const rdl__map *m, const char *key, size_t len)
{
    unsigned char out[crypto_shorthash_BYTES];
    uint64_t h;
    crypto_shorthash(out, (const unsigned char *)key, len, m->seed);
    memcpy(&h, out, sizeof(h));
    return h;
}

rdl__map_node *rdl__map_find(const rdl__map *m, const char *key, size_t len)
{
    rdl__map_node *n;
    uint64_t h;
    if (m->nbuckets == 0)
        return NULL;
    h = hash(m, key, len);
    for (n = m->buckets[h & (m->nbuckets - 1)]; n != NULL; n = n->next)
        if (n->hash == h && n->len == len && memcmp(n->key, key, len) == 0)
            return n;
    return NULL;
}

static int resize(rdl__map *m, size_t nbuckets)
{
    rdl__map_node **b = rdl__calloc(nbuckets, sizeof(*b)), *n, *next;
    size_t i;
    if (b == NULL)
        return RDL_ENOMEM;
    for (i = 0; i < m->nbuckets; i++) {
        for (n = m->buckets[i]; n != NULL; n = next) {
            next = n->next;
            n->next = b[n->hash & (nbuckets - 1)];
            b[n->hash & (nbuckets - 1)] = n;
        }
    }
    rdl__free(m->buckets);
    m->buckets = b;
    m->nbuckets = nbuckets;
    return 0;
}

int rdl__map_insert(rdl__map *m, rdl__map_node *node, const char *key,
                    size_t len)
{
    rdl__map_node **slot;
    if (m->nbuckets == 0 && resize(m, 16) != 0)
        return RDL_ENOMEM;
    if (m->count >= m->nbuckets)
        (void)resize(m, m->nbuckets * 2); /* chains just get longer */
    node->key = key;
    node->len = len;
    node->hash = hash(m, key, len);
    slot = &m->buckets[node->hash & (m->nbuckets - 1)];
    node->next = *slot;
    *slot = node;
    m->count++;
    return 0;
}

void rdl__map_remove(rdl__map *m, rdl__map_node *node)
{
    rdl__map_node **p = &m->buckets[node->hash & (m->nbuckets - 1)];
    while (*p != node)
        p = &(*p)->next;
    *p = node->next;
    node->next = NULL;
    m->count--;
}
