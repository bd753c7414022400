/* The sampler: reads one INA228 conversion per tick into a fixed ring and
 * counts every sample that does not make it. It never waits for the link:
 * when the ring is full the new sample is dropped and counted. */
#ifndef THROTTLESCOPE_SAMPLER_H
#define THROTTLESCOPE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/ina228.h"
#include "throttlescope/ring.h"

#ifndef TS_SAMPLE_RING_CAPACITY
/** Samples buffered between sampler and link (power of two). */
#define TS_SAMPLE_RING_CAPACITY 256u
#endif
#ifndef TS_TEMP_RING_CAPACITY
/** Enclosure temperature readings buffered (power of two). */
#define TS_TEMP_RING_CAPACITY 16u
#endif

#define TS_SAMPLE_HAS_DIE_TEMP 0x01u
#define TS_SAMPLE_HAS_ACCUMULATORS 0x02u

/** One sample as it waits in the ring. */
typedef struct ts_sample {
    uint64_t seq;       /**< 0 for the first sample after Start */
    uint64_t time_us;   /**< probe clock when the registers were read */
    ts_ina228_raw raw;
    uint32_t channels;  /**< TS_CH_* read for this sample */
    uint64_t energy;    /**< valid with TS_SAMPLE_HAS_ACCUMULATORS */
    int64_t charge;
    uint8_t flags;
    uint32_t run;       /**< run (Start) the sample belongs to */
} ts_sample;

/** One enclosure temperature reading as it waits in the ring. */
typedef struct ts_temp_sample {
    uint64_t seq;       /**< sequence number of the latest sample at reading time */
    uint32_t sensor;
    int32_t milli_c;
    uint32_t run;       /**< run (Start) the reading belongs to */
} ts_temp_sample;

/** What to read on each tick. */
typedef struct ts_sampler_config {
    uint32_t channels;           /**< TS_CH_* mask (TS_CH_DIE_TEMP adds DIETEMP) */
    uint32_t accumulators_every; /**< read ENERGY/CHARGE every N samples (>= 1) */
} ts_sampler_config;

/** Counters since boot; every sequence number not delivered is in one. */
typedef struct ts_sampler_counters {
    uint64_t samples_taken;    /**< ticks (sequence numbers assigned) */
    uint64_t samples_dropped;  /**< ring full or bus error: seq never queued */
    uint32_t i2c_errors;
    uint32_t ring_overflows;   /**< times the ring went from not full to full */
    uint32_t temps_dropped;
    uint32_t temp_errors;
} ts_sampler_counters;

typedef struct ts_sampler {
    ts_ina228 *ina;
    ts_ring samples;
    ts_ring temps;
    ts_sample sample_storage[TS_SAMPLE_RING_CAPACITY];
    ts_temp_sample temp_storage[TS_TEMP_RING_CAPACITY];
    ts_sampler_config config;      /**< in force (sampling context) */
    ts_sampler_config next_config; /**< from the last start, applied at the next tick */
    volatile uint32_t requested_run; /**< bumped by start (link context) */
    uint32_t run;                  /**< run in force (sampling context) */
    volatile bool running;
    bool ring_was_full;
    uint64_t next_seq;
    ts_sampler_counters counters;
} ts_sampler;

/** Set up empty rings over the sampler's own storage. */
void ts_sampler_init(ts_sampler *s, ts_ina228 *ina);
/**
 * Start a new run. It takes effect at the next tick, in the sampling context
 * (so a tick running concurrently never mixes runs): sequence numbers restart
 * at 0 and every queued item carries its run number, so the consumer can
 * discard (and count) what is left of the previous run.
 */
void ts_sampler_start(ts_sampler *s, const ts_sampler_config *cfg);
/** Stop taking samples (queued ones stay for the link). */
void ts_sampler_stop(ts_sampler *s);
/**
 * Take one sample now: read the configured registers, stamp now_us, queue.
 * Does nothing when stopped. Returns TS_OK, or TS_ERR_BUS / TS_ERR_NO_SPACE
 * when the sample was dropped (and counted).
 */
int ts_sampler_tick(ts_sampler *s, uint64_t now_us);
/** Queue an enclosure temperature reading aligned to the latest sample. */
void ts_sampler_temp(ts_sampler *s, uint32_t sensor, int32_t milli_c);
/** Count a failed enclosure temperature read. */
void ts_sampler_temp_error(ts_sampler *s);

#endif
