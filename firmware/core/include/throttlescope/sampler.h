/* The sampler: one INA228 conversion = one ALERT edge = one sample, read in
 * latch mode (ALATCH = 1, so CNVRF and ALERT are held until DIAG_ALRT is
 * read) into a fixed ring. It never waits for the link and counts every
 * conversion slot that does not become a queued sample: slots missed by a
 * late sampling context (from the spacing of the ALERT edges), samples
 * dropped because the ring is full, bus errors. It also watches the chip:
 * DIAG_ALRT read back on every sample, SHUNT_CAL and ADC_CONFIG about once a
 * second; a mismatch (a chip reset) re-initialises the chip and starts a new
 * accumulator epoch. */
#ifndef THROTTLESCOPE_SAMPLER_H
#define THROTTLESCOPE_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/ina228.h"
#include "throttlescope/ring.h"

#ifndef TS_MAX_RATE_HZ
/** Highest sample rate the build supports (Kconfig THROTTLESCOPE_MAX_RATE_HZ). */
#define TS_MAX_RATE_HZ 2000u
#endif
#ifndef TS_SAMPLE_RING_CAPACITY
/**
 * Samples buffered between sampler and link (power of two): at least one
 * second at TS_MAX_RATE_HZ. 2048 x 40 B = 80 KB of static RAM.
 */
#define TS_SAMPLE_RING_CAPACITY 2048u
#endif
#if TS_SAMPLE_RING_CAPACITY < TS_MAX_RATE_HZ
#error "TS_SAMPLE_RING_CAPACITY must hold one second at TS_MAX_RATE_HZ"
#endif
#ifndef TS_TEMP_RING_CAPACITY
/** Enclosure temperature readings buffered (power of two). */
#define TS_TEMP_RING_CAPACITY 16u
#endif
/** SHUNT_CAL/ADC_CONFIG are read back this often (us). */
#define TS_HEALTH_PERIOD_US 1000000u

/* ts_sample.flags */
#define TS_SAMPLE_HAS_SLOW 0x01u  /**< slow_reg/slow_value hold a reading */
#define TS_SAMPLE_NEW_EPOCH 0x02u /**< first queued sample after a re-initialisation */

/** One sample as it waits in the ring (40 bytes). */
typedef struct ts_sample {
    uint64_t time_us;   /**< probe time of the ALERT edge (end of the conversion) */
    uint32_t seq;       /**< conversion slot since Start (0 first) */
    int32_t vbus;       /**< raw, as ts_ina228_raw */
    int32_t vshunt;
    int32_t current;
    uint32_t power;
    uint32_t slow_lo;   /**< slow register raw bits 31:0 */
    uint16_t diag;      /**< DIAG_ALRT flag bits 11:1, bit 0 = MEMSTAT error */
    uint8_t slow_hi;    /**< slow register raw bits 39:32 */
    uint8_t slow_reg;   /**< register address of the slow reading */
    uint8_t channels;   /**< TS_CH_* read for this sample */
    uint8_t flags;      /**< TS_SAMPLE_* */
    uint8_t run;        /**< run (Start) the sample belongs to, modulo 256 */
    uint8_t reserved;
} ts_sample;

/** One enclosure temperature reading as it waits in the ring. */
typedef struct ts_temp_sample {
    uint32_t seq;       /**< sequence number of the latest sample at reading time */
    uint32_t sensor;
    int32_t milli_c;
    uint32_t run;       /**< run (Start) the reading belongs to */
} ts_temp_sample;

/** What one run samples. */
typedef struct ts_sampler_config {
    uint32_t channels;   /**< TS_CH_VBUS..TS_CH_POWER read on every sample */
    uint32_t slow_every; /**< one slow register every N samples (>= 1) */
    bool die_temp;       /**< DIETEMP is one of the slow registers */
    uint32_t period_us;  /**< conversion period (CT sum x AVG) */
    ts_ina228_adc adc;   /**< ADC setup in force: re-applied after a chip reset */
    bool configured;     /**< adc already written (the sampler was idle); else the
                              sampling context writes it at the next edge */
} ts_sampler_config;

/** Counters since boot; every sequence number not delivered is in one. */
typedef struct ts_sampler_counters {
    uint64_t samples_taken;    /**< sequence numbers assigned (conversion slots) */
    uint64_t samples_dropped;  /**< slots missed, ring full, bus error: seq never queued */
    uint64_t missed_slots;     /**< of samples_dropped: conversions no sample was taken for */
    uint32_t i2c_errors;
    uint32_t ring_overflows;   /**< times the ring went from not full to full */
    uint32_t temps_dropped;
    uint32_t temp_errors;
    uint32_t reinits;          /**< chip re-initialisations after a detected reset */
    uint32_t epoch;            /**< accumulator epoch (starts at 0) */
    uint16_t diag;             /**< OR of every DIAG flag seen (ts_sample.diag bits) */
} ts_sampler_counters;

typedef struct ts_sampler {
    ts_ina228 *ina;
    ts_ring samples;
    ts_ring temps;
    ts_sample sample_storage[TS_SAMPLE_RING_CAPACITY];
    ts_temp_sample temp_storage[TS_TEMP_RING_CAPACITY];
    ts_sampler_config config;      /**< in force (sampling context) */
    ts_sampler_config next_config; /**< from the last start, applied at the next edge */
    volatile uint32_t requested_run; /**< bumped by start (link context) */
    uint32_t run;                  /**< run in force (sampling context) */
    volatile bool running;
    bool ring_was_full;
    bool have_edge;                /**< last_edge_us is valid */
    bool new_epoch_pending;        /**< flag the next queued sample TS_SAMPLE_NEW_EPOCH */
    volatile bool reset_accumulators; /**< RSTACC requested (link context) */
    uint64_t last_edge_us;
    uint64_t first_edge_us;
    uint64_t run_read;             /**< samples read in this run (not missed) */
    uint64_t next_health_us;
    uint32_t next_seq;
    uint32_t since_slow;
    uint32_t slow_turn;            /**< round robin: ENERGY, CHARGE, DIETEMP */
    uint32_t health_step;          /**< 0 idle, 1 SHUNT_CAL due, 2 ADC_CONFIG due */
    ts_sampler_counters counters;
} ts_sampler;

/** Set up empty rings over the sampler's own storage. */
void ts_sampler_init(ts_sampler *s, ts_ina228 *ina);
/**
 * Start a new run. It takes effect at the next edge, in the sampling context
 * (so a sample being read concurrently never mixes runs): sequence numbers
 * restart at 0 and every queued item carries its run number, so the
 * consumer can discard (and count) what is left of the previous run.
 */
void ts_sampler_start(ts_sampler *s, const ts_sampler_config *cfg);
/** Stop taking samples (queued ones stay for the link). */
void ts_sampler_stop(ts_sampler *s);
/**
 * One ALERT edge at edge_us (stamped by the platform at the edge), serviced
 * at now_us. A latched ALERT serviced more than a period late is read with
 * the newest conversion (the registers kept converting), so the sample is
 * stamped edge_us + k periods and the k slots in between count as missed. Read
 * DIAG_ALRT (releasing the latched ALERT), then the channels and at most one
 * slow register, and queue the sample. Slots between this edge and the last
 * one are counted as missed. Does nothing when stopped. Returns TS_OK, or
 * TS_ERR_BUS / TS_ERR_NO_SPACE when the sample was dropped (and counted), or
 * TS_ERR_IDENTITY when the chip had been reset (re-initialised, epoch + 1).
 */
int ts_sampler_alert(ts_sampler *s, uint64_t edge_us, uint64_t now_us);
/**
 * No ALERT for a while (or a board without the pin polling): read DIAG_ALRT,
 * ADC_CONFIG and SHUNT_CAL; re-initialise on a mismatch; take a sample
 * stamped now_us when a conversion is waiting. Returns true when it sampled.
 */
bool ts_sampler_check(ts_sampler *s, uint64_t now_us, bool full_check);
/** Ask the sampling context to zero ENERGY/CHARGE (new epoch) at the next edge. */
void ts_sampler_reset_accumulators(ts_sampler *s);
/** Achieved sample rate of the current run in Hz (0 before two samples). */
double ts_sampler_achieved_rate_hz(const ts_sampler *s);
/** Queue an enclosure temperature reading aligned to the latest sample. */
void ts_sampler_temp(ts_sampler *s, uint32_t sensor, int32_t milli_c);
/** Count a failed enclosure temperature read. */
void ts_sampler_temp_error(ts_sampler *s);

#endif
