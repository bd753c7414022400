/* Sampler: one conversion per ALERT edge into the sample ring (latch mode);
 * every slot that does not become a queued sample is counted; chip resets
 * are detected and re-initialised with a new accumulator epoch. */
#include "throttlescope/sampler.h"

#include <string.h>

/* Publish next_config before the run number that announces it. */
#if defined(__GNUC__)
#define TS_SAMPLER_BARRIER() __asm__ __volatile__("" ::: "memory")
#else
#define TS_SAMPLER_BARRIER() ((void)0)
#endif

/* DIAG_ALRT flag bits reported with samples: 11:2 as read, bit 0 inverted
 * (MEMSTAT = 0 is the fault), CNVRF (bit 1) left out. */
static uint16_t diag_flags(uint16_t diag)
{
    return (uint16_t)((diag & 0x0FFCu) | ((diag & TS_INA228_DIAG_MEMSTAT) ? 0u : 1u));
}

void ts_sampler_init(ts_sampler *s, ts_ina228 *ina)
{
    memset(s, 0, sizeof *s);
    s->ina = ina;
    (void)ts_ring_init(&s->samples, s->sample_storage, sizeof s->sample_storage[0],
                       TS_SAMPLE_RING_CAPACITY);
    (void)ts_ring_init(&s->temps, s->temp_storage, sizeof s->temp_storage[0],
                       TS_TEMP_RING_CAPACITY);
    s->config.channels = TS_CH_VBUS | TS_CH_VSHUNT;
    s->config.slow_every = 1u;
}

void ts_sampler_start(ts_sampler *s, const ts_sampler_config *cfg)
{
    s->next_config = *cfg;
    if (s->next_config.slow_every == 0u) {
        s->next_config.slow_every = 1u;
    }
    TS_SAMPLER_BARRIER();
    s->requested_run = s->requested_run + 1u;
    s->running = true;
}

void ts_sampler_stop(ts_sampler *s)
{
    s->running = false;
}

void ts_sampler_reset_accumulators(ts_sampler *s)
{
    s->reset_accumulators = true;
}

/* Take up a new run's config; returns true when this wrote the ADC setup
 * (a Start while running: only the sampling context touches the bus then). */
static bool apply_run(ts_sampler *s)
{
    uint32_t requested = s->requested_run;
    if (requested == s->run) {
        return false;
    }
    TS_SAMPLER_BARRIER();
    s->config = s->next_config;
    s->run = requested;
    s->next_seq = 0;
    s->ring_was_full = false;
    s->have_edge = false;
    s->run_read = 0;
    s->since_slow = 0;
    s->slow_turn = 0;
    s->health_step = 0;
    s->next_health_us = 0;
    if (s->config.configured) {
        return false;
    }
    if (ts_ina228_configure_adc(s->ina, &s->config.adc) != TS_OK) {
        s->counters.i2c_errors++;
    }
    return true;
}

/* The chip lost its setup (reset): write it again and start a new epoch. */
static void reinit(ts_sampler *s)
{
    if (!s->running || s->requested_run != s->run) {
        return; /* stopped, or a new Start is writing its own setup */
    }
    int rc = ts_ina228_reset(s->ina);
    if (rc == TS_OK) {
        rc = ts_ina228_configure_adc(s->ina, &s->config.adc);
    }
    if (rc != TS_OK) {
        s->counters.i2c_errors++;
        return; /* the watchdog tries again */
    }
    s->counters.reinits++;
    s->counters.epoch++;
    s->new_epoch_pending = true;
}

static bool setup_intact(const ts_sampler *s, uint16_t diag)
{
    uint16_t want = ts_ina228_diag_control_value(&s->config.adc);
    return (diag & (TS_INA228_DIAG_ALATCH | TS_INA228_DIAG_CNVR)) == want;
}

/* Account the slots between the last edge and this one; returns this sample's seq. */
static uint32_t assign_seq(ts_sampler *s, uint64_t edge_us)
{
    if (s->have_edge && s->config.period_us > 0u && edge_us > s->last_edge_us) {
        uint64_t gap = edge_us - s->last_edge_us;
        uint64_t slots = (gap + s->config.period_us / 2u) / s->config.period_us;
        if (slots > 1u) {
            uint64_t missed = slots - 1u;
            if (missed > 0x7FFFFFFFu) {
                missed = 0x7FFFFFFFu;
            }
            s->next_seq += (uint32_t)missed;
            s->counters.missed_slots += missed;
            s->counters.samples_taken += missed;
            s->counters.samples_dropped += missed;
        }
    }
    if (!s->have_edge) {
        s->first_edge_us = edge_us;
        s->have_edge = true;
    }
    s->last_edge_us = edge_us;
    s->counters.samples_taken++;
    return s->next_seq++;
}

/* The slow register for this sample, 0 for none. */
static uint8_t next_slow(ts_sampler *s, uint64_t now_us)
{
    if (++s->since_slow < s->config.slow_every) {
        return 0u;
    }
    s->since_slow = 0;
    if (s->health_step == 0u && now_us >= s->next_health_us) {
        s->health_step = 1u;
        s->next_health_us = now_us + TS_HEALTH_PERIOD_US;
    }
    if (s->health_step == 1u) {
        s->health_step = 2u;
        return TS_INA228_REG_SHUNT_CAL;
    }
    if (s->health_step == 2u) {
        s->health_step = 0u;
        return TS_INA228_REG_ADC_CONFIG;
    }
    uint32_t kinds = s->config.die_temp ? 3u : 2u;
    uint32_t turn = s->slow_turn++ % kinds;
    return turn == 0u ? TS_INA228_REG_ENERGY
                      : (turn == 1u ? TS_INA228_REG_CHARGE : TS_INA228_REG_DIETEMP);
}

static uint32_t width_of(uint8_t reg)
{
    return (reg == TS_INA228_REG_ENERGY || reg == TS_INA228_REG_CHARGE) ? 5u : 2u;
}

/* Read and queue one sample after a DIAG_ALRT read that showed CNVRF. */
static int take(ts_sampler *s, uint64_t edge_us, uint16_t diag)
{
    ts_sample smp;
    memset(&smp, 0, sizeof smp);
    smp.diag = diag_flags(diag);
    s->counters.diag |= smp.diag;
    smp.seq = assign_seq(s, edge_us);
    s->run_read++; /* serviced, whatever the ring says */
    smp.time_us = edge_us;
    smp.run = (uint8_t)s->run;
    smp.channels = (uint8_t)s->config.channels;

    /* Full ring: drop before reading the channels (DIAG_ALRT was read, so the
     * latch is released and the next conversion still raises ALERT). */
    if (ts_ring_count(&s->samples) >= s->samples.capacity) {
        if (!s->ring_was_full) {
            s->ring_was_full = true;
            s->counters.ring_overflows++;
        }
        s->counters.samples_dropped++;
        return TS_ERR_NO_SPACE;
    }
    s->ring_was_full = false;

    ts_ina228_raw raw;
    int rc = ts_ina228_read_fast(s->ina, s->config.channels, &raw);
    if (rc != TS_OK) {
        s->counters.i2c_errors++;
        s->counters.samples_dropped++;
        return TS_ERR_BUS;
    }
    smp.vbus = raw.vbus;
    smp.vshunt = raw.vshunt;
    smp.current = raw.current;
    smp.power = raw.power;

    bool mismatch = false;
    uint8_t reg = next_slow(s, edge_us);
    if (reg != 0u) {
        uint64_t v = 0;
        if (ts_ina228_read_raw(s->ina, reg, width_of(reg), &v) != TS_OK) {
            s->counters.i2c_errors++;
        } else if (reg == TS_INA228_REG_SHUNT_CAL) {
            mismatch = v != s->ina->cal.shunt_cal;
        } else if (reg == TS_INA228_REG_ADC_CONFIG) {
            mismatch = v != ts_ina228_adc_config_value(&s->config.adc);
        } else {
            smp.flags |= TS_SAMPLE_HAS_SLOW;
            smp.slow_reg = reg;
            smp.slow_lo = (uint32_t)v;
            smp.slow_hi = (uint8_t)(v >> 32);
        }
    }
    if (mismatch) {
        /* Values of a reset chip are not this epoch's: drop and re-init. */
        s->counters.samples_dropped++;
        reinit(s);
        return TS_ERR_IDENTITY;
    }
    if (s->new_epoch_pending) {
        smp.flags |= TS_SAMPLE_NEW_EPOCH;
        s->new_epoch_pending = false;
    }
    (void)ts_ring_push(&s->samples, &smp); /* room checked above; single producer */
    return TS_OK;
}

static void do_reset_accumulators(ts_sampler *s)
{
    if (!s->reset_accumulators) {
        return;
    }
    s->reset_accumulators = false;
    if (ts_ina228_reset_accumulators(s->ina) != TS_OK) {
        s->counters.i2c_errors++;
        return;
    }
    s->counters.epoch++;
    s->new_epoch_pending = true;
}

int ts_sampler_alert(ts_sampler *s, uint64_t edge_us, uint64_t now_us)
{
    if (!s->running) {
        return TS_OK;
    }
    if (apply_run(s)) {
        /* This edge is a conversion of the previous setup: release the latch
         * and wait for the first conversion of the new one. */
        uint16_t diag = 0;
        (void)ts_ina228_read_reg16(s->ina, TS_INA228_REG_DIAG_ALRT, &diag);
        return TS_OK;
    }
    uint32_t period = s->config.period_us;
    if (period > 0u && now_us >= edge_us + period) {
        edge_us += (now_us - edge_us) / period * period;
    }
    uint16_t diag = 0;
    if (ts_ina228_read_reg16(s->ina, TS_INA228_REG_DIAG_ALRT, &diag) != TS_OK) {
        /* The latch stays set; the watchdog reads again. Slots are counted
         * from the spacing of the next good edge. */
        s->counters.i2c_errors++;
        return TS_ERR_BUS;
    }
    if (!setup_intact(s, diag)) {
        reinit(s);
        return TS_ERR_IDENTITY;
    }
    if (!(diag & TS_INA228_DIAG_CNVRF)) {
        return TS_OK; /* no conversion waiting: a spurious edge */
    }
    int rc = take(s, edge_us, diag);
    do_reset_accumulators(s);
    return rc;
}

bool ts_sampler_check(ts_sampler *s, uint64_t now_us, bool full_check)
{
    if (!s->running) {
        return false;
    }
    if (apply_run(s)) {
        return false; /* setup written: the next conversion is the run's first */
    }
    uint16_t diag = 0;
    if (ts_ina228_read_reg16(s->ina, TS_INA228_REG_DIAG_ALRT, &diag) != TS_OK) {
        s->counters.i2c_errors++;
        return false;
    }
    bool intact = setup_intact(s, diag);
    if (intact && full_check) {
        uint16_t adc = 0;
        uint16_t cal = 0;
        if (ts_ina228_read_reg16(s->ina, TS_INA228_REG_ADC_CONFIG, &adc) != TS_OK ||
            ts_ina228_read_reg16(s->ina, TS_INA228_REG_SHUNT_CAL, &cal) != TS_OK) {
            s->counters.i2c_errors++;
            return false;
        }
        intact = adc == ts_ina228_adc_config_value(&s->config.adc) &&
                 cal == s->ina->cal.shunt_cal;
    }
    if (!intact) {
        reinit(s);
        return false;
    }
    if (!(diag & TS_INA228_DIAG_CNVRF)) {
        return false;
    }
    (void)take(s, now_us, diag);
    do_reset_accumulators(s);
    return true;
}

double ts_sampler_achieved_rate_hz(const ts_sampler *s)
{
    uint64_t n = s->run_read;
    if (!s->have_edge || n < 2u || s->last_edge_us <= s->first_edge_us) {
        return 0.0;
    }
    return (double)(n - 1u) * 1e6 / (double)(s->last_edge_us - s->first_edge_us);
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
