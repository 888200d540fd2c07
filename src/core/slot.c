/* Redis Cluster key slots (docs/design.md#redis-cluster): CRC16 of the key, or
 * of its hash tag, modulo 16384, exactly as the cluster specification defines
 * HASH_SLOT. The tag rule itself lives in keys.c (rdl__hash_tag), beside
 * the key layout that depends on it, so there is one definition of it.
 *
 * The CRC is computed bit by bit: keys are short, a slot is computed once
 * per routed command, and eight shifts per byte cost less than a cache miss
 * on a table. */
#include "keys.h"
#include "slot.h"

/* CRC16-CCITT as XMODEM: polynomial 0x1021, initial value 0, no
 * reflection, no final xor ("123456789" -> 0x31c3). */
static unsigned crc16(const unsigned char *p, size_t len)
{
    unsigned crc = 0;
    int bit;
    while (len-- > 0) {
        crc ^= (unsigned)*p++ << 8;
        for (bit = 0; bit < 8; bit++)
            crc = (crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1;
    }
    return crc & 0xffff;
}

unsigned rdl__crc16(const void *buf, size_t len)
{
    return crc16(buf, len);
}

unsigned rdl__slot(const char *key, size_t len)
{
    size_t off, taglen;
    if (rdl__hash_tag(key, len, &off, &taglen))
        return crc16((const unsigned char *)key + off, taglen) &
               (RDL__SLOTS - 1);
    return crc16((const unsigned char *)key, len) & (RDL__SLOTS - 1);
}
