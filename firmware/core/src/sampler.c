/* Sampler: one INA228 read per tick into the sample ring; drops counted. */
#include "throttlescope/sampler.h"

#include <string.h>

/* Publish next_config before the run number that announces it. */
#if defined(__GNUC__)
#define TS_SAMPLER_BARRIER() __asm__ __volatile__("" ::: "memory")
#else
#define TS_SAMPLER_BARRIER() ((void)0)
#endif

void ts_sampler_init(ts_sampler *s, ts_ina228 *ina)
{
    memset(s, 0, sizeof *s);
    s->ina = ina;
    (void)ts_ring_init(&s->samples, s->sample_storage, sizeof s->sample_storage[0],
                       TS_SAMPLE_RING_CAPACITY);
    (void)ts_ring_init(&s->temps, s->temp_storage, sizeof s->temp_storage[0],
                       TS_TEMP_RING_CAPACITY);
    s->config.channels = TS_CH_DEFAULT;
    s->config.accumulators_every = 1u;
}

void ts_sampler_start(ts_sampler *s, const ts_sampler_config *cfg)
{
    s->next_config = *cfg;
    if (s->next_config.accumulators_every == 0u) {
        s->next_config.accumulators_every = 1u;
    }
    TS_SAMPLER_BARRIER();
    s->requested_run = s->requested_run + 1u;
    s->running = true;
}

void ts_sampler_stop(ts_sampler *s)
{
    s->running = false;
}

static void count_drop(ts_sampler *s)
{
    s->counters.samples_dropped++;
}

int ts_sampler_tick(ts_sampler *s, uint64_t now_us)
{
    if (!s->running) {
        return TS_OK;
    }
    uint32_t requested = s->requested_run;
    if (requested != s->run) {
        TS_SAMPLER_BARRIER();
        s->config = s->next_config;
        s->run = requested;
        s->next_seq = 0;
        s->ring_was_full = false;
    }
    ts_sample smp;
    smp.run = s->run;
    smp.seq = s->next_seq++;
    smp.time_us = now_us;
    smp.channels = s->config.channels;
    smp.flags = 0;
    smp.energy = 0;
    smp.charge = 0;
    s->counters.samples_taken++;

    /* Full ring: drop before touching the bus, so a stalled host costs no I2C time. */
    if (ts_ring_count(&s->samples) >= s->samples.capacity) {
        if (!s->ring_was_full) {
            s->ring_was_full = true;
            s->counters.ring_overflows++;
        }
        count_drop(s);
        return TS_ERR_NO_SPACE;
    }
    s->ring_was_full = false;

    int rc = ts_ina228_read_fast(s->ina, s->config.channels, &smp.raw);
    if (rc == TS_OK && (s->config.channels & TS_CH_DIE_TEMP)) {
        smp.flags |= TS_SAMPLE_HAS_DIE_TEMP;
    }
    if (rc == TS_OK && smp.seq % s->config.accumulators_every == 0u) {
        rc = ts_ina228_read_accumulators(s->ina, &smp.energy, &smp.charge);
        smp.flags |= TS_SAMPLE_HAS_ACCUMULATORS;
    }
    if (rc != TS_OK) {
        s->counters.i2c_errors++;
        count_drop(s);
        return TS_ERR_BUS;
    }
    (void)ts_ring_push(&s->samples, &smp); /* room checked above; single producer */
    return TS_OK;
}

void ts_sampler_temp(ts_sampler *s, uint32_t sensor, int32_t milli_c)
{
    ts_temp_sample t;
    if (s->requested_run != s->run) {
        return; /* the new run has no sample yet to align the reading to */
    }
    t.run = s->run;
    t.seq = s->next_seq > 0u ? s->next_seq - 1u : 0u;
    t.sensor = sensor;
    t.milli_c = milli_c;
    if (!s->running || !ts_ring_push(&s->temps, &t)) {
        if (s->running) {
            s->counters.temps_dropped++;
        }
    }
}

void ts_sampler_temp_error(ts_sampler *s)
{
    s->counters.temp_errors++;
}
