/* slot.c: Redis Cluster key slots. Pure functions: any thread. */
#ifndef RDL_CORE_SLOT_H
#define RDL_CORE_SLOT_H

#include <stddef.h>

#define RDL__SLOTS 16384

/* CRC16 (XMODEM) of buf[0..len), as Redis Cluster uses it. */
unsigned rdl__crc16(const void *buf, size_t len);
/* The cluster slot of key[0..len): CRC16 of its hash tag if it has one
 * (rdl__hash_tag), else of the whole key, mod 16384. Every key and channel
 * of one lock has the slot of the lock name's tag. */
unsigned rdl__slot(const char *key, size_t len);

#endif
