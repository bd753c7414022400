/* SPSC ring over caller storage; indices run free and wrap at 2^32. */
#include "throttlescope/ring.h"

#include <string.h>

/* Keep the element copy before the index store that publishes it (and the
 * index load before the copy out); one core, so a compiler barrier suffices. */
#if defined(__GNUC__)
#define TS_BARRIER() __asm__ __volatile__("" ::: "memory")
#else
#define TS_BARRIER() ((void)0)
#endif

bool ts_ring_init(ts_ring *r, void *storage, size_t elem_size, uint32_t capacity)
{
    if (capacity == 0u || (capacity & (capacity - 1u)) != 0u || elem_size == 0u) {
        return false;
    }
    r->storage = (uint8_t *)storage;
    r->elem_size = elem_size;
    r->capacity = capacity;
    r->head = 0;
    r->tail = 0;
    return true;
}

uint32_t ts_ring_count(const ts_ring *r)
{
    return r->head - r->tail;
}

bool ts_ring_push(ts_ring *r, const void *elem)
{
    uint32_t head = r->head;
    if (head - r->tail >= r->capacity) {
        return false;
    }
    memcpy(r->storage + (size_t)(head & (r->capacity - 1u)) * r->elem_size, elem, r->elem_size);
    TS_BARRIER();
    r->head = head + 1u;
    return true;
}

const void *ts_ring_peek(const ts_ring *r, uint32_t i)
{
    uint32_t tail = r->tail;
    if (i >= r->head - tail) {
        return NULL;
    }
    return r->storage + (size_t)((tail + i) & (r->capacity - 1u)) * r->elem_size;
}

void ts_ring_pop(ts_ring *r, uint32_t n)
{
    uint32_t count = ts_ring_count(r);
    TS_BARRIER();
    r->tail = r->tail + (n < count ? n : count);
}

void ts_ring_clear(ts_ring *r)
{
    r->tail = r->head;
}
