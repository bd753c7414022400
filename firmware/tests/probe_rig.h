/* Test rig for the probe: the real core over the simulated INA228, a
 * settable clock, and a link that captures frames (and can refuse them, as a
 * full USB/pty buffer does). Host-side helpers decode what the probe sent. */
#ifndef THROTTLESCOPE_TEST_PROBE_RIG_H
#define THROTTLESCOPE_TEST_PROBE_RIG_H

#include "harness.h"

#include "ina228_model.h"
#include "throttlescope/probe.h"

#define RIG_TX_CAP 65536u

typedef struct probe_rig {
    ts_ina228_model model;
    ts_probe probe;
    uint64_t clock_us;
    bool link_full;          /* refuse every frame while set */
    uint32_t refused;
    uint8_t tx[RIG_TX_CAP];
    size_t tx_len;
    size_t rx_pos;           /* host-side read position in tx */
    int sampling_calls;
    bool sampling_running;
    uint32_t sampling_rate;
} probe_rig;

static inline uint64_t rig_now(void *ctx)
{
    return ((probe_rig *)ctx)->clock_us;
}

static inline bool rig_tx(void *ctx, const uint8_t *frame, size_t len)
{
    probe_rig *r = (probe_rig *)ctx;
    if (r->link_full || r->tx_len + len > RIG_TX_CAP) {
        r->refused++;
        return false;
    }
    memcpy(r->tx + r->tx_len, frame, len);
    r->tx_len += len;
    return true;
}

static inline void rig_sampling(void *ctx, bool running, uint32_t rate)
{
    probe_rig *r = (probe_rig *)ctx;
    r->sampling_calls++;
    r->sampling_running = running;
    r->sampling_rate = rate;
}

static const ts_temp_sensor_info rig_sensors[] = {
    {throttlescope_v1_SensorKind_SENSOR_KIND_NTC, "enclosure"},
};

static inline int rig_init_with(probe_rig *r, uint32_t shunt_uohm, uint32_t max_ma)
{
    memset(r, 0, sizeof *r);
    ts_ina228_model_init(&r->model, (double)shunt_uohm * 1e-6);
    ts_ina228_model_set(&r->model, 5.0, 1.2, 35.0);
    ts_bus bus = ts_ina228_model_bus(&r->model);
    ts_platform plat = {rig_now, rig_tx, rig_sampling, r};
    ts_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.firmware_version = "0.1.0-test";
    cfg.probe_id = "rig-1";
    cfg.shunt_micro_ohm = shunt_uohm;
    cfg.max_current_ma = max_ma;
    cfg.adc_range = 0;
    cfg.sensors = rig_sensors;
    cfg.sensor_count = 1;
    cfg.max_rate_hz = 10000;
    r->clock_us = 1000000u;
    return ts_probe_init(&r->probe, &cfg, &plat, &bus);
}

static inline void rig_init(probe_rig *r)
{
    CHECK_EQ_I(rig_init_with(r, 5000u, 5000u), TS_OK);
}

/* Host side: frame and send a command. */
static inline void rig_send(probe_rig *r, const throttlescope_v1_HostToProbe *m)
{
    uint8_t frame[TS_HOST_FRAME_MAX];
    size_t n = 0;
    CHECK_EQ_I(ts_proto_frame_host_msg(m, frame, sizeof frame, &n), TS_OK);
    ts_probe_rx(&r->probe, frame, n, r->clock_us);
}

/* Host side: next message the probe sent; false when none is left. */
static inline bool rig_next(probe_rig *r, throttlescope_v1_ProbeToHost *out)
{
    size_t start = r->rx_pos;
    while (r->rx_pos < r->tx_len) {
        if (r->tx[r->rx_pos++] == 0u) {
            static uint8_t payload[TS_PROBE_FRAME_MAX];
            size_t n = 0;
            CHECK_EQ_I(ts_frame_decode(r->tx + start, r->rx_pos - 1 - start, payload,
                                       sizeof payload, &n),
                       TS_OK);
            CHECK_EQ_I(ts_proto_decode_probe_msg(payload, n, out), TS_OK);
            return true;
        }
    }
    CHECK(r->rx_pos == start); /* no partial frame left behind */
    return false;
}

static inline throttlescope_v1_HostToProbe rig_cmd(pb_size_t which, uint32_t request_id)
{
    throttlescope_v1_HostToProbe m = throttlescope_v1_HostToProbe_init_zero;
    m.request_id = request_id;
    m.which_cmd = which;
    return m;
}

static inline throttlescope_v1_HostToProbe rig_start(uint32_t rate, uint32_t batch, uint32_t acc_every)
{
    throttlescope_v1_HostToProbe m = rig_cmd(throttlescope_v1_HostToProbe_start_tag, 7);
    m.cmd.start.rate_hz = rate;
    m.cmd.start.batch_samples = batch;
    m.cmd.start.accumulators_every = acc_every;
    return m;
}

/* Probe clock at model time t (the model starts at probe time 1 s). */
static inline uint64_t rig_us(double t_s)
{
    return 1000000u + (uint64_t)(t_s * 1e6 + 0.5);
}

/* The chip converts n times; each latched ALERT edge is answered at once
 * with its edge time, as the sampling thread does. */
static inline void rig_run(probe_rig *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (ts_ina228_model_period_s(&r->model) <= 0.0) {
            return; /* shutdown: nothing converts */
        }
        bool pending = ts_ina228_model_alert(&r->model);
        ts_ina228_model_advance(&r->model, ts_ina228_model_until_conversion(&r->model) + 1e-9);
        r->clock_us = rig_us(r->model.time_s);
        if (!pending && ts_ina228_model_alert(&r->model)) {
            ts_probe_alert(&r->probe, rig_us(r->model.last_edge_s));
        }
    }
}

/* Run the chip for t seconds in 100 us steps, answering edges and calling
 * the watchdog after the alert timeout without one (the sampling thread). */
static inline void rig_run_for(probe_rig *r, double t_s)
{
    double end = r->model.time_s + t_s;
    uint64_t last = r->clock_us;
    while (r->model.time_s < end) {
        uint64_t edges = r->model.alert_edges;
        ts_ina228_model_advance(&r->model, 100e-6);
        r->clock_us = rig_us(r->model.time_s);
        if (r->model.alert_edges != edges && ts_ina228_model_alert(&r->model)) {
            ts_probe_alert(&r->probe, rig_us(r->model.last_edge_s));
            last = r->clock_us;
        } else if (r->clock_us - last >= ts_probe_alert_timeout_us(&r->probe)) {
            ts_probe_watchdog(&r->probe);
            last = r->clock_us;
        }
    }
}

/* Host side: unpack a v2 batch. */
static inline void rig_unpack(const throttlescope_v1_SampleBatch *b, ts_unpacked_batch *u)
{
    CHECK_EQ_I(ts_proto_unpack_batch(b, u), TS_OK);
}

#endif
