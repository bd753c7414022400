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

TS_CASE(sampler_does_nothing_until_started)
{
    static rig g;
    rig_init(&g);
    CHECK_EQ_I(ts_sampler_tick(&g.s, 10), TS_OK);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 0u);
    CHECK_EQ_U(g.s.counters.samples_taken, 0u);
}

TS_CASE(full_ring_drops_new_samples_and_counts_each_one)
{
    static rig g;
    rig_init(&g);
    ts_sampler_config cfg = {TS_CH_DEFAULT, 4};
    ts_sampler_start(&g.s, &cfg);
    uint32_t extra = 37;
    for (uint32_t i = 0; i < TS_SAMPLE_RING_CAPACITY + extra; i++) {
        ts_sampler_tick(&g.s, 1000u * i);
    }
    CHECK_EQ_U(ts_ring_count(&g.s.samples), TS_SAMPLE_RING_CAPACITY);
    CHECK_EQ_U(g.s.counters.samples_taken, TS_SAMPLE_RING_CAPACITY + extra);
    CHECK_EQ_U(g.s.counters.samples_dropped, extra);
    CHECK_EQ_U(g.s.counters.ring_overflows, 1u);
    /* A full ring costs no bus time: only the queued samples were read. */
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_VBUS], TS_SAMPLE_RING_CAPACITY);
    /* Space again, then full again: a second overflow episode. */
    ts_ring_pop(&g.s.samples, 10);
    for (uint32_t i = 0; i < 15; i++) {
        ts_sampler_tick(&g.s, 1u);
    }
    CHECK_EQ_U(g.s.counters.samples_dropped, extra + 5u);
    CHECK_EQ_U(g.s.counters.ring_overflows, 2u);
    /* The queued samples kept their sequence numbers: the last ones are the
     * refill after the gap, so the host sees exactly the dropped count. */
    const ts_sample *last = (const ts_sample *)ts_ring_peek(&g.s.samples,
                                                            TS_SAMPLE_RING_CAPACITY - 1u);
    CHECK_EQ_U(last->seq, TS_SAMPLE_RING_CAPACITY + extra + 9u);
}

TS_CASE(bus_error_drops_the_sample_and_counts_it)
{
    static rig g;
    rig_init(&g);
    ts_sampler_config cfg = {TS_CH_DEFAULT, 1};
    ts_sampler_start(&g.s, &cfg);
    ts_sampler_tick(&g.s, 1);
    g.model.fail_next_transfers = 1;
    CHECK_EQ_I(ts_sampler_tick(&g.s, 2), TS_ERR_BUS);
    ts_sampler_tick(&g.s, 3);
    CHECK_EQ_U(g.s.counters.i2c_errors, 1u);
    CHECK_EQ_U(g.s.counters.samples_dropped, 1u);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 2u);
    CHECK_EQ_U(((const ts_sample *)ts_ring_peek(&g.s.samples, 1))->seq, 2u);
}

TS_CASE(accumulators_are_read_every_n_samples)
{
    static rig g;
    rig_init(&g);
    ts_sampler_config cfg = {TS_CH_VBUS | TS_CH_CURRENT, 5};
    ts_sampler_start(&g.s, &cfg);
    for (int i = 0; i < 20; i++) {
        ts_sampler_tick(&g.s, (uint64_t)i);
    }
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_ENERGY], 4u);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_CHARGE], 4u);
    for (uint32_t i = 0; i < 20; i++) {
        const ts_sample *s = (const ts_sample *)ts_ring_peek(&g.s.samples, i);
        CHECK_EQ_U((s->flags & TS_SAMPLE_HAS_ACCUMULATORS) != 0u, i % 5u == 0u);
    }
}

TS_CASE(start_restarts_sequence_numbers_at_the_next_tick_and_tags_the_run)
{
    static rig g;
    rig_init(&g);
    ts_sampler_config cfg = {TS_CH_DEFAULT, 1};
    ts_sampler_start(&g.s, &cfg);
    ts_sampler_tick(&g.s, 1);
    ts_sampler_tick(&g.s, 2);
    ts_sampler_temp(&g.s, 0, 25000);
    ts_sampler_start(&g.s, &cfg);
    ts_sampler_temp(&g.s, 0, 26000); /* no sample of the new run yet: not queued */
    ts_sampler_tick(&g.s, 3);
    CHECK_EQ_U(ts_ring_count(&g.s.samples), 3u);
    const ts_sample *old = (const ts_sample *)ts_ring_peek(&g.s.samples, 1);
    const ts_sample *fresh = (const ts_sample *)ts_ring_peek(&g.s.samples, 2);
    CHECK_EQ_U(old->seq, 1u);
    CHECK(old->run != fresh->run);
    CHECK_EQ_U(fresh->seq, 0u);
    CHECK_EQ_U(fresh->run, g.s.requested_run);
    CHECK_EQ_U(ts_ring_count(&g.s.temps), 1u);
}

TS_CASE(temperature_readings_overflow_is_counted)
{
    static rig g;
    rig_init(&g);
    ts_sampler_config cfg = {TS_CH_DEFAULT, 1};
    ts_sampler_start(&g.s, &cfg);
    ts_sampler_tick(&g.s, 1);
    for (int i = 0; i < (int)TS_TEMP_RING_CAPACITY + 3; i++) {
        ts_sampler_temp(&g.s, 0, 20000 + i);
    }
    CHECK_EQ_U(g.s.counters.temps_dropped, 3u);
    ts_sampler_temp_error(&g.s);
    CHECK_EQ_U(g.s.counters.temp_errors, 1u);
}

static const ts_test_case cases[] = {
    TS_ENTRY(ring_rejects_a_capacity_that_is_not_a_power_of_two),
    TS_ENTRY(ring_keeps_fifo_order_across_index_wrap),
    TS_ENTRY(sampler_does_nothing_until_started),
    TS_ENTRY(full_ring_drops_new_samples_and_counts_each_one),
    TS_ENTRY(bus_error_drops_the_sample_and_counts_it),
    TS_ENTRY(accumulators_are_read_every_n_samples),
    TS_ENTRY(start_restarts_sequence_numbers_at_the_next_tick_and_tags_the_run),
    TS_ENTRY(temperature_readings_overflow_is_counted),
};
TS_TEST_MAIN(cases)
