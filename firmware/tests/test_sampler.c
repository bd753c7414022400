/* Ring buffer and sampler: overflow accounting, bus errors, accumulator cadence. */
#include "harness.h"

#include "ina228_model.h"
#include "throttlescope/ring.h"
#include "throttlescope/sampler.h"

TS_CASE(ring_rejects_a_capacity_that_is_not_a_power_of_two)
{
    uint32_t store[8];
    ts_ring r;
    CHECK(!ts_ring_init(&r, store, sizeof store[0], 6));
    CHECK(!ts_ring_init(&r, store, sizeof store[0], 0));
    CHECK(ts_ring_init(&r, store, sizeof store[0], 8));
}

TS_CASE(ring_keeps_fifo_order_across_index_wrap)
{
    uint32_t store[4];
    ts_ring r;
    CHECK(ts_ring_init(&r, store, sizeof store[0], 4));
    r.head = r.tail = 0xFFFFFFFEu; /* free-running indices about to wrap */
    for (uint32_t i = 0; i < 4; i++) {
        CHECK(ts_ring_push(&r, &i));
    }
    uint32_t extra = 99;
    CHECK(!ts_ring_push(&r, &extra));
    CHECK_EQ_U(ts_ring_count(&r), 4u);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ_U(*(const uint32_t *)ts_ring_peek(&r, i), i);
    }
    CHECK(ts_ring_peek(&r, 4) == NULL);
    ts_ring_pop(&r, 3);
    CHECK_EQ_U(*(const uint32_t *)ts_ring_peek(&r, 0), 3u);
    ts_ring_pop(&r, 10); /* clamped */
    CHECK_EQ_U(ts_ring_count(&r), 0u);
}

typedef struct rig {
    ts_ina228_model model;
    ts_ina228 ina;
    ts_sampler s;
} rig;

static void rig_init(rig *g)
{
    ts_ina228_model_init(&g->model, 0.005);
    ts_bus bus = ts_ina228_model_bus(&g->model);
    ts_ina228_calibration cal;
    CHECK_EQ_I(ts_ina228_calibrate(&cal, 5000u, 5000u, 0u), TS_OK);
    ts_ina228_init(&g->ina, &bus, &cal);
    CHECK_EQ_I(ts_ina228_reset(&g->ina), TS_OK);
    ts_ina228_model_set(&g->model, 5.0, 1.0, 30.0);
    ts_sampler_init(&g->s, &g->ina);
}

/* Start a run at 84 us x 4 = 672 us per conversion, latch mode. */
static void start(rig *g, uint32_t channels, uint32_t slow_every, bool die_temp)
{
    ts_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.channels = channels;
    cfg.slow_every = slow_every;
    cfg.die_temp = die_temp;
    ts_ina228_adc adc = {TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_CT_84US,
                         TS_INA228_AVG_4, die_temp, true, true};
    cfg.adc = adc;
    cfg.period_us = ts_ina228_conversion_period_us(&adc);
    CHECK_EQ_I(ts_ina228_configure_adc(&g->ina, &adc), TS_OK);
    cfg.configured = true; /* as the probe does when the sampler was idle */
    ts_sampler_start(&g->s, &cfg);
}

static uint64_t edge_us(const rig *g)
{
    return (uint64_t)(g->model.last_edge_s * 1e6 + 0.5);
}

static uint64_t model_us(const rig *g)
{
    return (uint64_t)(g->model.time_s * 1e6 + 0.5);
}

/* The chip completes one conversion; the sampler answers its ALERT at once. */
static int tick(rig *g)
{
    ts_ina228_model_advance(&g->model, ts_ina228_model_until_conversion(&g->model) + 1e-9);
    CHECK(ts_ina228_model_alert(&g->model));
    return ts_sampler_alert(&g->s, edge_us(g), edge_us(g));
}

/* n conversions, each answered (whatever the sampler returns). */
static void ticks(rig *g, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        (void)tick(g);
    }
}

static const ts_sample *at(rig *g, uint32_t i)
{
    const ts_sample *s = (const ts_sample *)ts_ring_peek(&g->s.samples, i);
    CHECK(s != NULL);
    return s;
}

TS_CASE(sampler_does_nothing_until_started)
{
    static rig g;
    rig_init(&g);
    CHECK_EQ_I(ts_sampler_alert(&g.s, 10, 10), TS_OK);
    CHECK(!ts_sampler_check(&g.s, 10, true));
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 0u);
    CHECK_EQ_U(g.s.counters.samples_taken, 0u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_DIAG_ALRT], 0u);
}

TS_CASE(each_alert_reads_diag_first_releasing_the_latch_then_the_channels)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 1000, false);
    for (int i = 0; i < 10; i++) {
        CHECK_EQ_I(tick(&g), TS_OK);
        CHECK(!ts_ina228_model_alert(&g.model)); /* released, ready for the next edge */
    }
    CHECK_EQ_U(g.model.alert_edges, 10u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_DIAG_ALRT], 10u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_VBUS], 10u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_VSHUNT], 10u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_CURRENT], 0u);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 10u);
    for (uint32_t i = 0; i < 10u; i++) {
        CHECK_EQ_U(at(&g, i)->seq, i);
        CHECK_EQ_U(at(&g, i)->time_us, 672u * (i + 1u)); /* the edge, not the read */
        CHECK_NEAR(ts_ina228_vbus_v(at(&g, i)->vbus), 5.0, 2e-4);
    }
    CHECK_NEAR(ts_sampler_achieved_rate_hz(&g.s), 1e6 / 672.0, 0.01);
    CHECK_EQ_U(g.s.counters.missed_slots, 0u);
}

TS_CASE(a_late_sampler_counts_every_missed_slot_and_stamps_the_conversion_it_read)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 1000, false);
    ticks(&g, 3);
    /* Five conversions while the sampling context is busy: ALERT stays latched. */
    ts_ina228_model_advance(&g.model, 5 * 672e-6 + 100e-6);
    CHECK_EQ_U(g.model.alert_edges, 4u);
    CHECK_EQ_I(ts_sampler_alert(&g.s, edge_us(&g), model_us(&g)), TS_OK);
    CHECK_EQ_U(g.s.counters.missed_slots, 4u);
    tick(&g);
    CHECK_EQ_U(g.s.counters.missed_slots, 4u);
    CHECK_EQ_U(g.s.counters.samples_taken, 9u);
    CHECK_EQ_U(g.s.counters.samples_dropped, 4u);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 5u);
    CHECK_EQ_U(at(&g, 3)->seq, 7u);
    CHECK_EQ_U(at(&g, 3)->time_us, 8u * 672u); /* the newest conversion, which it read */
    CHECK_EQ_U(at(&g, 4)->seq, 8u);
    /* The achieved rate counts the samples taken, not the slots. */
    CHECK_NEAR(ts_sampler_achieved_rate_hz(&g.s), 4.0 / (8.0 * 672e-6), 0.01);
}

TS_CASE(full_ring_drops_new_samples_and_counts_each_one)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_DEFAULT, 4, false);
    uint32_t extra = 37;
    ticks(&g, TS_SAMPLE_RING_CAPACITY + extra);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), TS_SAMPLE_RING_CAPACITY);
    CHECK_EQ_U(g.s.counters.samples_taken, TS_SAMPLE_RING_CAPACITY + extra);
    CHECK_EQ_U(g.s.counters.samples_dropped, extra);
    CHECK_EQ_U(g.s.counters.missed_slots, 0u);
    CHECK_EQ_U(g.s.counters.ring_overflows, 1u);
    /* A full ring costs only the DIAG_ALRT read that releases ALERT. */
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_VBUS], TS_SAMPLE_RING_CAPACITY);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_DIAG_ALRT], TS_SAMPLE_RING_CAPACITY + extra);
    /* Space again, then full again: a second overflow episode. */
    ts_ring_pop(&g.s.samples, 10);
    ticks(&g, 15);
    CHECK_EQ_U(g.s.counters.samples_dropped, extra + 5u);
    CHECK_EQ_U(g.s.counters.ring_overflows, 2u);
    CHECK_EQ_U(at(&g, TS_SAMPLE_RING_CAPACITY - 1u)->seq, TS_SAMPLE_RING_CAPACITY + extra + 9u);
}

TS_CASE(bus_error_drops_the_sample_and_counts_it)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_DEFAULT, 1000, false);
    tick(&g);
    g.model.fail_reg = TS_INA228_REG_VSHUNT;
    g.model.fail_reg_reads = 1;
    CHECK_EQ_I(tick(&g), TS_ERR_BUS);
    tick(&g);
    CHECK_EQ_U(g.s.counters.i2c_errors, 1u);
    CHECK_EQ_U(g.s.counters.samples_dropped, 1u);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 2u);
    CHECK_EQ_U(at(&g, 1)->seq, 2u);
}

TS_CASE(failed_diag_read_leaves_the_latch_for_the_watchdog_and_the_slots_are_counted)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 1000, false);
    tick(&g);
    g.model.fail_next_transfers = 1;
    CHECK_EQ_I(tick(&g), TS_ERR_BUS);
    CHECK(ts_ina228_model_alert(&g.model)); /* still latched: no more edges */
    ts_ina228_model_advance(&g.model, 3 * 672e-6);
    CHECK(ts_sampler_check(&g.s, model_us(&g), true));
    CHECK(!ts_ina228_model_alert(&g.model));
    CHECK_EQ_U(g.s.counters.missed_slots, 3u);
    CHECK_EQ_U(at(&g, 1)->seq, 4u);
}

TS_CASE(slow_registers_take_turns_one_per_slot_with_the_health_check_first)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 5, true);
    for (int i = 0; i < 40; i++) {
        CHECK_EQ_I(tick(&g), TS_OK);
    }
    /* Slots at samples 5, 10, ... 40: SHUNT_CAL, ADC_CONFIG, then ENERGY,
     * CHARGE, DIETEMP in turn; never two slow reads on one sample. */
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_SHUNT_CAL], 1u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_ADC_CONFIG], 1u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_ENERGY], 2u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_CHARGE], 2u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_DIETEMP], 2u);
    const uint8_t order[] = {TS_INA228_REG_ENERGY, TS_INA228_REG_CHARGE, TS_INA228_REG_DIETEMP,
                             TS_INA228_REG_ENERGY, TS_INA228_REG_CHARGE, TS_INA228_REG_DIETEMP};
    uint32_t k = 0;
    for (uint32_t i = 0; i < 40u; i++) {
        const ts_sample *s = at(&g, i);
        if (s->flags & TS_SAMPLE_HAS_SLOW) {
            CHECK(k < 6u);
            CHECK_EQ_U(s->slow_reg, order[k++]);
            CHECK_EQ_U(i % 5u, 4u);
        }
    }
    CHECK_EQ_U(k, 6u);
    CHECK_EQ_U(g.s.counters.reinits, 0u);
}

TS_CASE(chip_reset_stops_alert_and_the_watchdog_reinitialises_with_a_new_epoch)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 4, false);
    ticks(&g, 5);
    ts_ina228_model_power_on_reset(&g.model);
    uint64_t edges = g.model.alert_edges;
    ts_ina228_model_advance(&g.model, 0.02);
    CHECK_EQ_U(g.model.alert_edges, edges); /* CNVR is off after a reset: silence */
    CHECK(!ts_sampler_check(&g.s, model_us(&g), true));
    CHECK_EQ_U(g.s.counters.reinits, 1u);
    CHECK_EQ_U(g.s.counters.epoch, 1u);
    CHECK_EQ_U(g.model.shunt_cal, g.ina.cal.shunt_cal);
    CHECK(g.model.diag_alrt & TS_INA228_DIAG_ALATCH);
    CHECK_EQ_U(g.model.adc_config, ts_ina228_adc_config_value(&g.s.config.adc));
    tick(&g);
    tick(&g);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 7u);
    CHECK_EQ_U(at(&g, 4)->flags & TS_SAMPLE_NEW_EPOCH, 0u);
    CHECK(at(&g, 5)->flags & TS_SAMPLE_NEW_EPOCH);
    CHECK_EQ_U(at(&g, 6)->flags & TS_SAMPLE_NEW_EPOCH, 0u);
    /* The silence is counted in slots, not hidden. */
    CHECK(g.s.counters.missed_slots >= 29u);
}

TS_CASE(health_check_finds_a_reset_shunt_cal_and_reinitialises)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 2, false);
    tick(&g); /* sample 0; the health slot comes at sample 1 */
    g.model.shunt_cal = TS_INA228_RESET_SHUNT_CAL; /* as after a reset, DIAG_ALRT untouched */
    CHECK_EQ_I(tick(&g), TS_ERR_IDENTITY);
    CHECK_EQ_U(g.s.counters.reinits, 1u);
    CHECK_EQ_U(g.s.counters.epoch, 1u);
    CHECK_EQ_U(g.model.shunt_cal, g.ina.cal.shunt_cal);
    CHECK_NEAR(g.model.energy_j, 0.0, 0.0); /* the new epoch starts from zero */
    tick(&g);
    CHECK(at(&g, 1)->flags & TS_SAMPLE_NEW_EPOCH);
}

TS_CASE(a_reset_seen_in_diag_alrt_reinitialises_at_once)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 1000, false);
    tick(&g);
    ts_ina228_model_advance(&g.model, 672e-6);
    CHECK(ts_ina228_model_alert(&g.model));
    uint64_t e = edge_us(&g);
    ts_ina228_model_power_on_reset(&g.model); /* between the edge and the read */
    CHECK_EQ_I(ts_sampler_alert(&g.s, e, e), TS_ERR_IDENTITY);
    CHECK_EQ_U(g.s.counters.reinits, 1u);
}

TS_CASE(start_restarts_sequence_numbers_at_the_next_edge_and_tags_the_run)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_DEFAULT, 1, false);
    tick(&g);
    tick(&g);
    ts_sampler_temp(&g.s, 0, 25000);
    start(&g, TS_CH_DEFAULT, 1, false);
    ts_sampler_temp(&g.s, 0, 26000); /* no sample of the new run yet: not queued */
    tick(&g);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 3u);
    const ts_sample *old = at(&g, 1);
    const ts_sample *fresh = at(&g, 2);
    CHECK_EQ_U(old->seq, 1u);
    CHECK(old->run != fresh->run);
    CHECK_EQ_U(fresh->seq, 0u);
    CHECK_EQ_U(fresh->run, (uint8_t)g.s.requested_run);
    CHECK_EQ_U(ts_ring_count(&g.s.temps), 1u);
}

TS_CASE(a_start_while_running_is_written_by_the_sampling_context_at_its_next_edge)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_VBUS | TS_CH_VSHUNT, 1000, false);
    tick(&g);
    tick(&g);
    ts_sampler_config cfg = g.s.config;
    ts_ina228_adc adc = {TS_INA228_CT_150US, TS_INA228_CT_150US, TS_INA228_CT_84US,
                         TS_INA228_AVG_4, false, true, true};
    cfg.adc = adc;
    cfg.period_us = 1200;
    cfg.configured = false;
    ts_sampler_start(&g.s, &cfg);
    uint16_t before = g.model.adc_config;
    CHECK_EQ_I(tick(&g), TS_OK); /* a conversion of the old setup: only released */
    CHECK(g.model.adc_config != before);
    CHECK_EQ_U(g.model.adc_config, ts_ina228_adc_config_value(&adc));
    CHECK(!ts_ina228_model_alert(&g.model));
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 2u);
    CHECK_NEAR(ts_ina228_model_period_s(&g.model), 1200e-6, 1e-12);
    tick(&g);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 3u);
    CHECK_EQ_U(at(&g, 2)->seq, 0u);
    CHECK_EQ_U(g.s.counters.reinits, 0u); /* no health check saw a half-done Start */
}

TS_CASE(temperature_readings_overflow_is_counted)
{
    static rig g;
    rig_init(&g);
    start(&g, TS_CH_DEFAULT, 1, false);
    tick(&g);
    for (int i = 0; i < (int)TS_TEMP_RING_CAPACITY + 3; i++) {
        ts_sampler_temp(&g.s, 0, 20000 + i);
    }
    CHECK_EQ_U(g.s.counters.temps_dropped, 3u);
    ts_sampler_temp_error(&g.s);
    CHECK_EQ_U(g.s.counters.temp_errors, 1u);
}

TS_CASE(ring_holds_one_second_at_the_highest_rate_in_bounded_ram)
{
    CHECK(TS_SAMPLE_RING_CAPACITY >= TS_MAX_RATE_HZ);
    CHECK_EQ_U(sizeof(ts_sample), 40u);
}

static const ts_test_case cases[] = {
    TS_ENTRY(ring_rejects_a_capacity_that_is_not_a_power_of_two),
    TS_ENTRY(ring_keeps_fifo_order_across_index_wrap),
    TS_ENTRY(sampler_does_nothing_until_started),
    TS_ENTRY(each_alert_reads_diag_first_releasing_the_latch_then_the_channels),
    TS_ENTRY(a_late_sampler_counts_every_missed_slot_and_stamps_the_conversion_it_read),
    TS_ENTRY(full_ring_drops_new_samples_and_counts_each_one),
    TS_ENTRY(bus_error_drops_the_sample_and_counts_it),
    TS_ENTRY(failed_diag_read_leaves_the_latch_for_the_watchdog_and_the_slots_are_counted),
    TS_ENTRY(slow_registers_take_turns_one_per_slot_with_the_health_check_first),
    TS_ENTRY(chip_reset_stops_alert_and_the_watchdog_reinitialises_with_a_new_epoch),
    TS_ENTRY(health_check_finds_a_reset_shunt_cal_and_reinitialises),
    TS_ENTRY(a_reset_seen_in_diag_alrt_reinitialises_at_once),
    TS_ENTRY(start_restarts_sequence_numbers_at_the_next_edge_and_tags_the_run),
    TS_ENTRY(a_start_while_running_is_written_by_the_sampling_context_at_its_next_edge),
    TS_ENTRY(temperature_readings_overflow_is_counted),
    TS_ENTRY(ring_holds_one_second_at_the_highest_rate_in_bounded_ram),
};
TS_TEST_MAIN(cases)
