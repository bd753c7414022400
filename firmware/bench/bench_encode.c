/* bench-firmware: the bytes each sample costs on the link at the probe's
 * default batch, and the host-side cost of the whole probe path per sample:
 * the simulated INA228 converts (with noise on its inputs), each latched
 * ALERT is answered by the real core (DIAG_ALRT, VBUS, VSHUNT, one slow
 * register every TS_DEFAULT_ACCUMULATORS_EVERY samples), the ring, batching,
 * wire v3 packing (v2's plus the batch's VBUS minimum), nanopb, CRC-32C and
 * COBS, up to the frame handed to the link. Bytes/sample depend on the signal's sample-to-sample changes; the
 * noise levels are stated with each figure. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ina228_model.h"
#include "throttlescope/probe.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t fake_clock_us;
static uint64_t sink_bytes;
static uint64_t sink_frames;

static uint64_t bench_now(void *ctx)
{
    (void)ctx;
    return fake_clock_us;
}

static bool bench_tx(void *ctx, const uint8_t *frame, size_t len)
{
    (void)ctx;
    (void)frame;
    sink_bytes += len;
    sink_frames++;
    return true;
}

/* Gaussian noise (Box-Muller over a 64-bit LCG). */
static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}
static double gauss(void)
{
    return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

typedef struct result {
    double ns_per_sample;
    double bytes_per_sample;
    uint64_t samples;
    uint64_t dropped;
} result;

/* Run the probe at its default Start for n samples with Gaussian noise of
 * vbus_lsb / vshunt_lsb (in register LSB, rms) on the inputs. */
static result run(uint32_t n, double vbus_lsb, double vshunt_lsb)
{
    static ts_ina228_model model;
    static ts_probe probe;
    ts_ina228_model_init(&model, 0.005);
    ts_ina228_model_set(&model, 5.0, 1.2, 35.0);
    ts_bus bus = ts_ina228_model_bus(&model);
    ts_platform plat = {bench_now, bench_tx, NULL, NULL};
    ts_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.firmware_version = "bench";
    cfg.probe_id = "bench";
    cfg.shunt_micro_ohm = 5000;
    cfg.max_current_ma = 10000;
    cfg.default_rate_hz = 1000;
    cfg.alert_pin = true;
    result r = {0, 0, 0, 0};
    if (ts_probe_init(&probe, &cfg, &plat, &bus) != TS_OK) {
        fprintf(stderr, "bench: probe init failed\n");
        return r;
    }
    throttlescope_v1_HostToProbe start = throttlescope_v1_HostToProbe_init_zero;
    start.which_cmd = throttlescope_v1_HostToProbe_start_tag; /* every field default */
    uint8_t sf[TS_HOST_FRAME_MAX];
    size_t sn = 0;
    ts_proto_frame_host_msg(&start, sf, sizeof sf, &sn);
    ts_probe_rx(&probe, sf, sn, 0);
    ts_probe_service(&probe);
    sink_bytes = sink_frames = 0;
    double model_s = 0.0;
    double t_model = 0.0;
    double t0 = now_s();
    for (uint32_t i = 0; i < n; i++) {
        double m0 = now_s();
        ts_ina228_model_set(&model, 5.0 + gauss() * vbus_lsb * 195.3125e-6,
                            1.2 + gauss() * vshunt_lsb * 312.5e-9 / 0.005, 35.0);
        ts_ina228_model_advance(&model, ts_ina228_model_until_conversion(&model) + 1e-9);
        t_model += now_s() - m0;
        fake_clock_us = (uint64_t)(model.time_s * 1e6 + 0.5);
        ts_probe_alert(&probe, fake_clock_us);
        ts_probe_service(&probe);
    }
    fake_clock_us += 1000000u;
    ts_probe_service(&probe);
    model_s = t_model;
    double dt = now_s() - t0 - model_s;
    ts_probe_counters c;
    ts_probe_counters_get(&probe, &c);
    r.samples = c.sampler.samples_taken - c.sampler.samples_dropped;
    r.dropped = c.sampler.samples_dropped;
    r.ns_per_sample = dt / (double)n * 1e9;
    r.bytes_per_sample = (double)sink_bytes / (double)r.samples;
    return r;
}

int main(void)
{
    const uint32_t n = 200000;
    printf("bench-firmware (host; default Start: 1000 Hz asked -> one conversion per sample,\n"
           "VBUS + VSHUNT, batch %u, one slow register every %u samples; wire v3)\n",
           TS_DEFAULT_BATCH_SAMPLES, TS_DEFAULT_ACCUMULATORS_EVERY);
    const double noise[][2] = {{0.0, 0.0}, {4.0, 16.0}, {20.0, 100.0}};
    const char *what[] = {"steady input (no noise)",
                          "noise 4 LSB VBUS, 16 LSB VSHUNT rms",
                          "noise 20 LSB VBUS, 100 LSB VSHUNT rms"};
    for (unsigned k = 0; k < 3u; k++) {
        result r = run(n, noise[k][0], noise[k][1]);
        printf("  %-38s: %.2f bytes/sample on the link (frames incl. CRC, COBS, 0x00),\n"
               "  %-38s  %.0f ns/sample core pipeline on this host, %llu samples, %llu dropped\n",
               what[k], r.bytes_per_sample, "", r.ns_per_sample, (unsigned long long)r.samples,
               (unsigned long long)r.dropped);
        if (r.samples == 0u) {
            return 1;
        }
    }
    printf("  target: <= 8 bytes/sample at the default batch\n");
    return 0;
}
