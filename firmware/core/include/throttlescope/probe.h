/* The probe: INA228 + sampler + command handler + batching over platform
 * hooks. The Zephyr app and the simulator each own one ts_probe (static
 * storage, ~20 KB with the default ring) and drive it with four calls:
 *
 *   ts_probe_rx()      bytes from the host (any chunking), with their rx time
 *   ts_probe_sample()  once per sample period while ts_probe_running(),
 *                      from a timer; or ts_probe_poll_ready() when the ALERT
 *                      pin fires (it reads DIAG_ALRT, which clears CNVRF and
 *                      releases a latched pin, and samples only if CNVRF was set)
 *   ts_probe_temp()    an enclosure temperature reading, >= 10 Hz
 *   ts_probe_service() often (e.g. every 1-5 ms): batches queued samples and
 *                      hands frames to platform.tx_frame; never blocks
 *
 * ts_probe_sample() and ts_probe_temp() may run in one context (the
 * sampling thread) and ts_probe_rx()/ts_probe_service() in another (the
 * link thread): they share only the SPSC rings and counters. */
#ifndef THROTTLESCOPE_PROBE_H
#define THROTTLESCOPE_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope.pb.h"
#include "throttlescope/frame.h"
#include "throttlescope/ina228.h"
#include "throttlescope/platform.h"
#include "throttlescope/protocol.h"
#include "throttlescope/sampler.h"

#ifndef TS_DEFAULT_BATCH_SAMPLES
/** Default samples per batch when Start.batch_samples is 0 (1..64). */
#define TS_DEFAULT_BATCH_SAMPLES 32u
#endif
#ifndef TS_DEFAULT_ACCUMULATORS_EVERY
/** Default ENERGY/CHARGE period in samples when Start.accumulators_every is 0. */
#define TS_DEFAULT_ACCUMULATORS_EVERY 16u
#endif
#ifndef TS_DEFAULT_MAX_BATCH_AGE_US
/** A partial batch is sent when its oldest sample is this old (us). */
#define TS_DEFAULT_MAX_BATCH_AGE_US 50000u
#endif
#if TS_DEFAULT_BATCH_SAMPLES < 1 || TS_DEFAULT_BATCH_SAMPLES > 64
#error "TS_DEFAULT_BATCH_SAMPLES must be 1..64 (SampleBatch max_count)"
#endif
#if TS_DEFAULT_ACCUMULATORS_EVERY < 1
#error "TS_DEFAULT_ACCUMULATORS_EVERY must be at least 1"
#endif
/** Sensors listed in DeviceInfo at most. */
#define TS_MAX_TEMP_SENSORS 4u

/** An enclosure temperature sensor as listed in DeviceInfo. */
typedef struct ts_temp_sensor_info {
    throttlescope_v1_SensorKind kind;
    const char *name;
} ts_temp_sensor_info;

/** Board facts, fixed at build time (Kconfig/devicetree or sim flags). */
typedef struct ts_probe_config {
    const char *firmware_version;
    const char *probe_id;
    uint32_t shunt_micro_ohm;
    uint32_t max_current_ma;
    uint8_t adc_range;                  /**< 0 or 1 */
    const ts_temp_sensor_info *sensors; /**< up to TS_MAX_TEMP_SENSORS */
    uint32_t sensor_count;
    uint32_t max_rate_hz;               /**< highest Start.rate_hz accepted */
    uint32_t max_batch_age_us;          /**< 0: TS_DEFAULT_MAX_BATCH_AGE_US */
    bool alert_pin;                     /**< ALERT wired: enable CNVR on it */
    uint32_t default_rate_hz;           /**< Start.rate_hz 0 means this; 0: fastest */
} ts_probe_config;

/** Everything the probe counts (mirrors the Status message). */
typedef struct ts_probe_counters {
    ts_sampler_counters sampler;
    uint32_t tx_overflows;     /**< frames the link refused (batches are retried) */
    uint32_t rx_bad_frames;    /**< COBS/CRC failures and over-long frames */
    uint32_t rx_bad_messages;  /**< frames that were not a HostToProbe */
    uint64_t batches_sent;
} ts_probe_counters;

/** Batch under construction / waiting for the link. */
typedef struct ts_probe_pending {
    uint8_t frame[TS_PROBE_FRAME_MAX];
    size_t len;
    uint32_t samples;     /**< ring entries the frame covers */
    uint32_t temps;       /**< temp ring entries the frame covers */
    uint64_t next_seq;    /**< seq after the frame's last sample */
} ts_probe_pending;

typedef struct ts_probe {
    ts_probe_config config;
    ts_platform platform;
    ts_ina228 ina;
    ts_sampler sampler;
    int sensor_status;                  /**< TS_OK once the INA228 answered */
    /* Run parameters from the last Start. */
    bool running;
    uint32_t rate_hz;
    uint32_t batch_samples;
    uint32_t max_batch_age_us;
    uint64_t expected_seq;               /**< first seq not yet sent */
    ts_probe_pending pending;           /**< encoded batch the link refused */
    bool has_pending;
    /* Link. */
    ts_deframer deframer;
    uint8_t rx_buf[TS_HOST_FRAME_MAX];
    uint8_t rx_payload[TS_HOST_FRAME_MAX];
    uint8_t tx_buf[TS_PROBE_FRAME_MAX];
    throttlescope_v1_ProbeToHost msg;   /**< scratch for encoding */
    ts_probe_counters counters;
    /* Counted by the link context (the sampler's own counters have one writer). */
    uint64_t stale_dropped;             /**< samples of a previous run discarded */
    uint32_t stale_temps;               /**< readings of a previous run discarded */
    uint32_t link_i2c_errors;           /**< bus errors on commands */
} ts_probe;

/**
 * Bind, calibrate and reset the INA228 (identity check, reset, SHUNT_CAL).
 * Returns TS_OK or the sensor/calibration error; the probe still answers
 * commands (Start then replies ERROR_CODE_SENSOR_FAULT), so the host learns why.
 */
int ts_probe_init(ts_probe *p, const ts_probe_config *config, const ts_platform *platform,
                  const ts_bus *bus);
/** Bytes received from the host; rx_time_us stamps SyncReply.probe_rx_us. */
void ts_probe_rx(ts_probe *p, const uint8_t *data, size_t len, uint64_t rx_time_us);
/** Take one sample now (no-op when stopped). */
void ts_probe_sample(ts_probe *p);
/**
 * For platforms without a timer or ALERT pin: read DIAG_ALRT and take a
 * sample when CNVRF is set. Returns true when a sample was taken.
 */
bool ts_probe_poll_ready(ts_probe *p);
/** An enclosure temperature reading (m degC) from sensor index `sensor`. */
void ts_probe_temp(ts_probe *p, uint32_t sensor, int32_t milli_c);
/** Count a failed enclosure temperature read. */
void ts_probe_temp_error(ts_probe *p);
/** Send what is due: full or aged batches. Never blocks. */
void ts_probe_service(ts_probe *p);
/** Sampling active (between Start and Stop). */
bool ts_probe_running(const ts_probe *p);
/** Sample rate of the current run in Hz (0 when stopped). */
uint32_t ts_probe_rate_hz(const ts_probe *p);
/** Snapshot of the counters. */
void ts_probe_counters_get(const ts_probe *p, ts_probe_counters *out);

#endif
