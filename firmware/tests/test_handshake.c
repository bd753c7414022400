/* The conversion-ready handshake against a datasheet-true INA228 model.
 *
 * With ALATCH = 0 (transparent mode) CNVRF and ALERT clear by themselves at
 * the next conversion (SLYS021A 7.3.7; TI E2E 1391284), so a sampler that
 * looks for CNVRF some time after the conversion misses it and takes fewer
 * samples than the chip converted, silently. These cases use only the API
 * the probe core has had since v1 (ts_probe_init, ts_probe_rx,
 * ts_probe_poll_ready, ts_probe_counters_get), so they also build against
 * the v1 core: there they fail; the v2 core (latch mode) passes them. */
#include "harness.h"

#include "ina228_model.h"
#include "throttlescope/probe.h"

static ts_ina228_model model;
static ts_probe probe;
static uint64_t clock_us;

static uint64_t now(void *ctx)
{
    (void)ctx;
    return clock_us;
}

static bool tx(void *ctx, const uint8_t *frame, size_t len)
{
    (void)ctx;
    (void)frame;
    (void)len;
    return true; /* a host that reads everything */
}

static void setup(uint32_t rate_hz)
{
    memset(&probe, 0, sizeof probe);
    ts_ina228_model_init(&model, 0.005);
    ts_ina228_model_set(&model, 5.0, 1.2, 35.0);
    ts_bus bus = ts_ina228_model_bus(&model);
    ts_platform plat = {now, tx, NULL, NULL};
    ts_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.firmware_version = "t";
    cfg.probe_id = "t";
    cfg.shunt_micro_ohm = 5000;
    cfg.max_current_ma = 10000;
    cfg.max_rate_hz = 2000;
    cfg.alert_pin = true;
    clock_us = 1000000u;
    CHECK_EQ_I(ts_probe_init(&probe, &cfg, &plat, &bus), TS_OK);
    throttlescope_v1_HostToProbe m = throttlescope_v1_HostToProbe_init_zero;
    m.which_cmd = throttlescope_v1_HostToProbe_start_tag;
    m.cmd.start.rate_hz = rate_hz;
    uint8_t frame[TS_HOST_FRAME_MAX];
    size_t n = 0;
    CHECK_EQ_I(ts_proto_frame_host_msg(&m, frame, sizeof frame, &n), TS_OK);
    ts_probe_rx(&probe, frame, n, clock_us);
    CHECK(ts_probe_running(&probe));
}

static void advance(double dt_s)
{
    ts_ina228_model_advance(&model, dt_s);
    clock_us = 1000000u + (uint64_t)(model.time_s * 1e6 + 0.5);
}

static uint64_t samples_read(void)
{
    ts_probe_counters c;
    ts_probe_counters_get(&probe, &c);
    return c.sampler.samples_taken - c.sampler.samples_dropped;
}

/* Since conversion c0 the chip converted at least 900 times and the probe
 * read at least 99 % of those conversions. */
static void check_every_conversion_read(uint64_t c0)
{
    uint64_t conversions = model.conversions - c0;
    fprintf(stderr, "conversions %llu, samples %llu\n", (unsigned long long)conversions,
            (unsigned long long)samples_read());
    CHECK(conversions >= 900u);
    CHECK(samples_read() * 100u >= conversions * 99u);
}

TS_CASE(polling_between_conversions_takes_every_conversion)
{
    setup(1000);
    uint64_t c0 = model.conversions;
    for (int i = 0; i < 4000; i++) { /* 1 s, polled every 250 us */
        advance(250e-6);
        (void)ts_probe_poll_ready(&probe);
    }
    check_every_conversion_read(c0);
}

TS_CASE(alert_answered_40_us_late_still_takes_every_conversion)
{
    setup(1000);
    uint64_t c0 = model.conversions;
    for (int i = 0; i < 1000; i++) {
        uint64_t edges = model.alert_edges;
        while (model.alert_edges == edges) { /* wait for the next ALERT edge */
            advance(ts_ina228_model_until_conversion(&model) + 1e-9);
            if (ts_ina228_model_alert(&model) && model.alert_edges == edges) {
                break; /* still latched from before: answer it */
            }
        }
        advance(40e-6); /* interrupt, wake-up and scheduling before the read */
        (void)ts_probe_poll_ready(&probe);
    }
    check_every_conversion_read(c0);
}

static const ts_test_case cases[] = {
    TS_ENTRY(polling_between_conversions_takes_every_conversion),
    TS_ENTRY(alert_answered_40_us_late_still_takes_every_conversion),
};
TS_TEST_MAIN(cases)
