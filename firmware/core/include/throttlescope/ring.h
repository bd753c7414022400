/* Fixed-size single-producer single-consumer ring of equal-sized elements.
 * The producer only moves head, the consumer only tail, so one sampling
 * context and one sending context may use it without a lock (32-bit index
 * loads and stores are atomic on Cortex-M). */
#ifndef THROTTLESCOPE_RING_H
#define THROTTLESCOPE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ts_ring {
    uint8_t *storage;         /**< capacity x elem_size bytes, caller-owned */
    size_t elem_size;
    uint32_t capacity;        /**< a power of two */
    volatile uint32_t head;   /**< free-running count of pushes */
    volatile uint32_t tail;   /**< free-running count of pops */
} ts_ring;

/** Returns false when capacity is not a power of two or is zero. */
bool ts_ring_init(ts_ring *r, void *storage, size_t elem_size, uint32_t capacity);
/** Copy one element in; false (nothing written) when full. */
bool ts_ring_push(ts_ring *r, const void *elem);
/** Elements waiting. */
uint32_t ts_ring_count(const ts_ring *r);
/** The i-th oldest element, NULL when i >= count. */
const void *ts_ring_peek(const ts_ring *r, uint32_t i);
/** Drop the n oldest elements (n is clamped to count). */
void ts_ring_pop(ts_ring *r, uint32_t n);
/** Empty the ring (consumer side). */
void ts_ring_clear(ts_ring *r);

#endif
