/* A hash map from byte strings to intrusive nodes. Keyed with SipHash and a
 * random key per map, since keys (lock names) may come from untrusted
 * input. Loop thread only. */
#ifndef RDL_CORE_MAP_H
#define RDL_CORE_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct rdl__map_node {
    struct rdl__map_node *next;
    const char *key; /* owned by the container of the node */
    size_t len;
    uint64_t hash;
} rdl__map_node;

typedef struct rdl__map {
    rdl__map_node **buckets;
    size_t nbuckets; /* a power of two, or 0 before the first insert */
    size_t count;
    unsigned char seed[16];
} rdl__map;

void rdl__map_init(rdl__map *m);
void rdl__map_clear(rdl__map *m); /* frees the table, not the nodes */
rdl__map_node *rdl__map_find(const rdl__map *m, const char *key, size_t len);
/* Inserts node (its key must not be present). RDL_ENOMEM if the table could
 * not be created; a failed grow is not an error. */
int rdl__map_insert(rdl__map *m, rdl__map_node *node, const char *key,
                    size_t len);
void rdl__map_remove(rdl__map *m, rdl__map_node *node);

#endif
