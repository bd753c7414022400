/* The probe: INA228 + sampler + command handler + batching over platform
 * hooks. The Zephyr app and the simulator each own one ts_probe (static
 * storage, ~90 KB with the default 2048-sample ring) and drive it with:
 *
 *   ts_probe_rx()       bytes from the host (any chunking), with their rx time
 *   ts_probe_alert()    for each ALERT edge (conversion ready, latched), with
 *                       the probe time stamped at the edge by the GPIO ISR;
 *                       boards without the pin call ts_probe_poll_ready()
 *                       at least every ts_probe_period_us() / 2 instead
 *   ts_probe_watchdog() when no edge came for ts_probe_alert_timeout_us():
 *                       a reset chip stops raising ALERT; this re-inits it
 *   ts_probe_temp()     an enclosure temperature reading, >= 10 Hz
 *   ts_probe_service()  often (e.g. every 1-5 ms): batches queued samples and
 *                       hands frames to platform.tx_frame; never blocks
 *   ts_probe_port_cc()  with cc_sensing: a window of CC1/CC2 readings (mV),
 *                       every few ms (docs/hardware.md, "CC front end")
 *   ts_probe_pd_contract()
 *                       from the PD decoder's caller: its contract changed
 *
 * ts_probe_alert(), ts_probe_poll_ready(), ts_probe_watchdog() and
 * ts_probe_temp() run in one context (the sampling thread, highest
 * priority) and ts_probe_rx()/ts_probe_service() in another (the link
 * thread, which also owns ts_probe_port_cc() and the contract calls): they share only the SPSC
 * rings and counters. */
#ifndef THROTTLESCOPE_PROBE_H
#define THROTTLESCOPE_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope.pb.h"
#include "throttlescope/frame.h"
#include "throttlescope/ina228.h"
#include "throttlescope/pd_decode.h"
#include "throttlescope/platform.h"
#include "throttlescope/port.h"
#include "throttlescope/protocol.h"
#include "throttlescope/sampler.h"

#ifndef TS_DEFAULT_BATCH_SAMPLES
/** Default samples per batch when Start.batch_samples is 0 (1..64). */
#define TS_DEFAULT_BATCH_SAMPLES 32u
#endif
#ifndef TS_DEFAULT_ACCUMULATORS_EVERY
/**
 * Default slow-register period in samples when Start.accumulators_every is 0:
 * one of ENERGY, CHARGE, DIETEMP (SHUNT_CAL, ADC_CONFIG once a second) every
 * N samples, so at most 4 per default batch of 32.
 */
#define TS_DEFAULT_ACCUMULATORS_EVERY 8u
#endif
#ifndef TS_DEFAULT_I2C_BUS_HZ
/** I2C clock when ts_probe_config.i2c_bus_hz is 0: Fast mode, the INA228's rating. */
#define TS_DEFAULT_I2C_BUS_HZ 400000u
#endif
#ifndef TS_DEFAULT_I2C_TXN_OVERHEAD_US
/** Software time per I2C transaction when the config gives none (an estimate). */
#define TS_DEFAULT_I2C_TXN_OVERHEAD_US 25u
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
    bool alert_pin;                     /**< ALERT wired (else ts_probe_poll_ready) */
    uint32_t default_rate_hz;           /**< Start.rate_hz 0 means this; 0: TS_MAX_RATE_HZ */
    uint32_t i2c_bus_hz;                /**< SCL in Hz; 0: TS_DEFAULT_I2C_BUS_HZ */
    uint32_t i2c_txn_overhead_us;       /**< per transaction; 0: TS_DEFAULT_I2C_TXN_OVERHEAD_US */
    bool cc_sensing;                    /**< CC1/CC2 on the ADC: PortStatus is sent */
    bool pd_decoding;                   /**< a PD decoder on CC calls ts_probe_pd_contract */
    uint32_t cc_guard_mv;               /**< CC front-end uncertainty; 0: TS_PORT_GUARD_MV */
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
    uint32_t epoch;       /**< accumulator epoch of the frame */
} ts_probe_pending;

typedef struct ts_probe {
    ts_probe_config config;
    ts_platform platform;
    ts_ina228 ina;
    ts_sampler sampler;
    int sensor_status;                  /**< TS_OK once the INA228 answered */
    /* Run parameters from the last Start. */
    bool running;
    uint32_t rate_hz;                   /**< nominal conversion rate (rounded) */
    uint32_t requested_rate_hz;
    uint32_t period_us;                 /**< conversion period */
    uint32_t channels;                  /**< fast channels of the run */
    uint16_t adc_config;                /**< ADC_CONFIG of the run */
    uint32_t tx_epoch;                  /**< epoch of the batches being built (link context) */
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
    /* The host port (link context). */
    ts_port port;
    bool port_resend;                   /**< a changed PortStatus the link refused */
    ts_port_state port_changed;
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
/**
 * One ALERT edge (latched conversion ready) at probe time edge_us, stamped at
 * the edge: reads DIAG_ALRT (releases ALERT), the channels and at most one
 * slow register, and queues the sample. No-op when stopped.
 */
void ts_probe_alert(ts_probe *p, uint64_t edge_us);
/**
 * For boards without the ALERT pin: read DIAG_ALRT and take a sample stamped
 * now when CNVRF is set. Returns true when a sample was taken.
 */
bool ts_probe_poll_ready(ts_probe *p);
/**
 * No ALERT for ts_probe_alert_timeout_us(): check DIAG_ALRT, ADC_CONFIG and
 * SHUNT_CAL, re-initialise a reset chip (new epoch), and take a waiting
 * conversion. No-op when stopped.
 */
void ts_probe_watchdog(ts_probe *p);
/** Conversion period of the current run in microseconds (0 when stopped). */
uint32_t ts_probe_period_us(const ts_probe *p);
/** How long without an ALERT edge before ts_probe_watchdog() (2 periods + 10 ms). */
uint32_t ts_probe_alert_timeout_us(const ts_probe *p);
/** Highest rate Start accepts for these TS_CH_* channels (I2C and config cap). */
uint32_t ts_probe_max_rate_hz(const ts_probe *p, uint32_t channels);
/** An enclosure temperature reading (m degC) from sensor index `sensor`. */
void ts_probe_temp(ts_probe *p, uint32_t sensor, int32_t milli_c);
/** Count a failed enclosure temperature read. */
void ts_probe_temp_error(ts_probe *p);
/**
 * A window of n CC1/CC2 readings in mV (link context): classified, debounced,
 * and a changed port status is sent by the next ts_probe_service().
 */
void ts_probe_port_cc(ts_probe *p, const uint16_t *cc1_mv, const uint16_t *cc2_mv, uint32_t n);
/**
 * The PD decoder's contract after a change (ts_pd_contract_changed), from the
 * decoder's caller (link context); agreed_us is its time (c->t) on the probe
 * clock. In force: the port's budget is its terms, Rp moves under it are not
 * changes, and PortStatus carries them in `contract`. Ended by a Soft_Reset: PD
 * stays in force with its terms unknown until the next PS_RDY. Ended otherwise
 * (Hard Reset, power role swap): none (ts_port_*_pd_contract).
 */
void ts_probe_pd_contract(ts_probe *p, const ts_pd_contract *c, uint64_t agreed_us);
/** Send what is due: full or aged batches, a changed port status. Never blocks. */
void ts_probe_service(ts_probe *p);
/** Sampling active (between Start and Stop). */
bool ts_probe_running(const ts_probe *p);
/** Nominal conversion (= sample) rate of the current run in Hz (0 when stopped). */
uint32_t ts_probe_rate_hz(const ts_probe *p);
/** Snapshot of the counters. */
void ts_probe_counters_get(const ts_probe *p, ts_probe_counters *out);

#endif
