/* The probe core end to end on the host: commands, replies, batching, flow
 * control and drop accounting, with the real core over the simulated INA228. */
#include "probe_rig.h"

#define TAG(x) throttlescope_v1_ProbeToHost_##x##_tag
#define CMD(x) throttlescope_v1_HostToProbe_##x##_tag

static probe_rig g;
static throttlescope_v1_ProbeToHost msg;

static void expect_error(throttlescope_v1_ErrorCode code, uint32_t request_id)
{
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(error));
    CHECK_EQ_I(msg.msg.error.code, code);
    CHECK_EQ_U(msg.msg.error.request_id, request_id);
    CHECK(msg.msg.error.detail[0] != '\0');
}

static void start_ok(uint32_t rate, uint32_t batch, uint32_t acc_every)
{
    throttlescope_v1_HostToProbe m = rig_start(rate, batch, acc_every);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(info));
}

TS_CASE(get_info_reports_calibration_and_sensors)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_info), 1);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(info));
    const throttlescope_v1_DeviceInfo *i = &msg.msg.info;
    CHECK_EQ_U(i->protocol_version, 3u);
    CHECK_EQ_U(i->max_rate_hz, 1443u); /* 400 kHz: 693 us of I2C per sample */
    CHECK_EQ_U(i->i2c_bus_hz, 400000u);
    CHECK_EQ_U(i->sample_bus_us, 693u);
    CHECK(strcmp(i->firmware_version, "0.1.0-test") == 0);
    CHECK(strcmp(i->probe_id, "rig-1") == 0);
    CHECK_EQ_U(i->shunt_micro_ohm, 5000u);
    CHECK_EQ_U(i->shunt_cal, 625u); /* 25000 x 5 A x 5 mohm */
    CHECK_NEAR(i->current_lsb_a, 5.0 / 524288.0, 1e-12);
    CHECK_EQ_U(i->sensors_count, 1u);
    CHECK_EQ_I(i->sensors[0].kind, throttlescope_v1_SensorKind_SENSOR_KIND_NTC);
    CHECK(strcmp(i->sensors[0].name, "enclosure") == 0);
    CHECK_EQ_U(i->max_batch_samples, 64u);
    CHECK(!rig_next(&g, &msg));
}

TS_CASE(start_acks_sends_device_info_and_arms_the_sample_timer)
{
    rig_init(&g);
    start_ok(1000, 0, 0);
    const throttlescope_v1_DeviceInfo *i = &msg.msg.info;
    CHECK_EQ_U(i->max_rate_hz, 1443u);
    CHECK(ts_probe_running(&g.probe));
    /* One conversion per sample: (84 + 150 us) x 4 = 936 us is the closest to 1 ms. */
    CHECK_EQ_U(ts_probe_period_us(&g.probe), 936u);
    CHECK_EQ_U(ts_probe_rate_hz(&g.probe), 1068u);
    CHECK_NEAR(i->conversion_rate_hz, 1e6 / 936.0, 0.01);
    CHECK_EQ_U(i->channels, TS_CH_VBUS | TS_CH_VSHUNT);
    CHECK_EQ_U(i->adc_config, g.model.adc_config);
    CHECK_NEAR(ts_ina228_model_period_s(&g.model), 936e-6, 1e-12);
    CHECK(g.sampling_running);
    CHECK_EQ_U(g.sampling_rate, 1068u);
    /* Latch mode: conversion ready held on ALERT until DIAG_ALRT is read. */
    CHECK(g.model.diag_alrt & TS_INA228_DIAG_CNVR);
    CHECK(g.model.diag_alrt & TS_INA228_DIAG_ALATCH);
}

TS_CASE(full_batches_carry_consecutive_samples_with_model_values)
{
    rig_init(&g);
    start_ok(1000, 32, 4);
    rig_run(&g, 64);
    ts_probe_service(&g.probe);
    static ts_unpacked_batch u;
    uint64_t last_energy = 0;
    for (uint32_t b = 0; b < 2; b++) {
        CHECK(rig_next(&g, &msg));
        CHECK_EQ_I(msg.which_msg, TAG(batch));
        const throttlescope_v1_SampleBatch *sb = &msg.msg.batch;
        CHECK_EQ_U(sb->first_seq, 32u * b);
        CHECK_EQ_U(sb->dropped_before, 0u);
        CHECK_EQ_U(sb->first_time_us, 1000000u + 936u * (32u * b + 1u));
        CHECK_EQ_U(sb->count, 32u);
        CHECK_EQ_U(sb->period_us, 936u);
        CHECK_EQ_U(sb->channels, TS_CH_VBUS | TS_CH_VSHUNT);
        CHECK_EQ_U(sb->epoch, 0u);
        CHECK_EQ_U(sb->dt_us_count + sb->vbus_count + sb->accumulators_count, 0u); /* no v1 */
        rig_unpack(sb, &u);
        CHECK_EQ_U(u.count, 32u);
        for (uint32_t i = 0; i < 32u; i++) {
            CHECK_EQ_U(u.time_us[i], sb->first_time_us + 936u * i);
            CHECK_NEAR(ts_ina228_vbus_v((int32_t)u.value[0][i]), 5.0, 2e-4);
            CHECK_NEAR(ts_ina228_vshunt_v((int32_t)u.value[1][i], 0) / 0.005, 1.2, 1e-4);
            CHECK_EQ_I(u.value[2][i], 0);
        }
        /* One slow register every 4th sample: SHUNT_CAL and ADC_CONFIG (checked,
         * not sent) first, then ENERGY and CHARGE in turn. */
        CHECK_EQ_U(sb->slow_count, b == 0u ? 6u : 8u);
        for (uint32_t k = 0; k < sb->slow_count; k++) {
            CHECK_EQ_U(sb->slow[k].index % 4u, 3u);
            uint32_t turn = b == 0u ? k : k + 6u;
            CHECK_EQ_U(sb->slow[k].reg, turn % 2u == 0u ? 0x09u : 0x0Au);
            if (sb->slow[k].reg == 0x09u) {
                CHECK(sb->slow[k].value > last_energy);
                last_energy = sb->slow[k].value;
            }
        }
    }
    CHECK(!rig_next(&g, &msg));
    /* 6 W since the start: ~6 W x 58 ms at the last ENERGY reading (sample 59). */
    CHECK_NEAR(ts_ina228_energy_j(last_energy, 5.0 / 524288.0), 6.0 * 0.936e-3 * 60, 0.01);
}

TS_CASE(partial_batch_goes_out_when_its_oldest_sample_ages)
{
    rig_init(&g);
    start_ok(100, 32, 0);
    rig_run(&g, 3);
    ts_probe_service(&g.probe);
    CHECK(!rig_next(&g, &msg));
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(batch));
    CHECK_EQ_U(msg.msg.batch.count, 3u);
    static ts_unpacked_batch u;
    rig_unpack(&msg.msg.batch, &u);
    CHECK_EQ_U(u.time_us[1] - u.time_us[0], ts_probe_period_us(&g.probe));
    CHECK(ts_probe_period_us(&g.probe) >= 9500u && ts_probe_period_us(&g.probe) <= 10500u);
}

TS_CASE(host_not_reading_drops_new_samples_counts_them_and_reports_the_gap)
{
    rig_init(&g);
    start_ok(1000, 32, 0);
    g.link_full = true;
    uint32_t extra = 100;
    rig_run(&g, TS_SAMPLE_RING_CAPACITY + extra);
    ts_probe_service(&g.probe); /* refused: kept for a retry, not lost */
    CHECK(g.refused >= 1u);
    g.link_full = false;
    ts_probe_service(&g.probe); /* the host reads again: the ring drains */
    rig_run(&g, 10);      /* and new samples flow */
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);

    uint64_t delivered = 0, gaps = 0, expected = 0;
    while (rig_next(&g, &msg)) {
        CHECK_EQ_I(msg.which_msg, TAG(batch));
        CHECK_EQ_U(msg.msg.batch.first_seq, expected + msg.msg.batch.dropped_before);
        gaps += msg.msg.batch.dropped_before;
        delivered += msg.msg.batch.count;
        expected = msg.msg.batch.first_seq + msg.msg.batch.count;
    }
    ts_probe_counters c;
    ts_probe_counters_get(&g.probe, &c);
    CHECK_EQ_U(c.sampler.samples_dropped, extra);
    CHECK_EQ_U(gaps, extra);
    CHECK_EQ_U(delivered, TS_SAMPLE_RING_CAPACITY + 10u);
    CHECK_EQ_U(delivered + gaps, c.sampler.samples_taken);
    CHECK_EQ_U(c.sampler.ring_overflows, 1u);
    CHECK(c.tx_overflows >= 1u);

    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_status), 3);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(status));
    CHECK_EQ_U(msg.msg.status.samples_dropped, extra);
    CHECK_EQ_U(msg.msg.status.ring_overflows, 1u);
    CHECK(msg.msg.status.running);
    /* The achieved rate (the samples the sampler took), not the one asked. */
    CHECK_EQ_U(msg.msg.status.rate_hz, 1068u);
    CHECK_EQ_U(msg.msg.status.requested_rate_hz, 1000u);
    CHECK_NEAR(msg.msg.status.conversion_rate_hz, 1e6 / 936.0, 0.01);
    CHECK_EQ_U(msg.msg.status.missed_slots, 0u);
    CHECK_EQ_U(msg.msg.status.batches_sent, c.batches_sent);
}

TS_CASE(sync_reply_echoes_the_request_and_stamps_probe_rx_and_tx)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(sync), 0);
    m.cmd.sync.sync_id = 42;
    m.cmd.sync.host_time_ns = 1763740000123456789ull;
    uint8_t frame[TS_HOST_FRAME_MAX];
    size_t n = 0;
    CHECK_EQ_I(ts_proto_frame_host_msg(&m, frame, sizeof frame, &n), TS_OK);
    g.clock_us = 5000250u;
    ts_probe_rx(&g.probe, frame, n, 5000000u); /* received 250 us before handling */
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(sync));
    CHECK_EQ_U(msg.msg.sync.sync_id, 42u);
    CHECK_EQ_U(msg.msg.sync.host_time_ns, 1763740000123456789ull);
    CHECK_EQ_U(msg.msg.sync.probe_rx_us, 5000000u);
    CHECK_EQ_U(msg.msg.sync.probe_tx_us, 5000250u);
}

TS_CASE(sync_reply_is_not_held_back_by_a_refused_batch)
{
    rig_init(&g);
    start_ok(1000, 32, 0);
    g.link_full = true;
    rig_run(&g, 40);
    ts_probe_service(&g.probe);
    g.link_full = false;
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(sync), 0);
    m.cmd.sync.sync_id = 9;
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(sync));
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(batch));
    CHECK_EQ_U(msg.msg.batch.first_seq, 0u);
}

TS_CASE(garbage_and_bad_crc_frames_are_counted_and_answered)
{
    rig_init(&g);
    const uint8_t garbage[] = {0x05, 0x01, 0x02, 0x00};     /* COBS says 4 more bytes */
    ts_probe_rx(&g.probe, garbage, sizeof garbage, 1);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_FRAME, 0);

    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_info), 5);
    uint8_t frame[TS_HOST_FRAME_MAX];
    size_t n = 0;
    CHECK_EQ_I(ts_proto_frame_host_msg(&m, frame, sizeof frame, &n), TS_OK);
    frame[1] ^= 0x01u; /* still nonzero, now the CRC fails */
    ts_probe_rx(&g.probe, frame, n, 1);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_FRAME, 0);
    ts_probe_counters c;
    ts_probe_counters_get(&g.probe, &c);
    CHECK_EQ_U(c.rx_bad_frames, 2u);
}

TS_CASE(valid_frame_with_undecodable_payload_is_a_bad_message)
{
    rig_init(&g);
    /* Field 2 (start) with wire type 2 and a length running past the end. */
    const uint8_t payload[] = {0x12, 0x7F, 0x08};
    uint8_t frame[32];
    size_t n = 0;
    CHECK_EQ_I(ts_frame_encode(payload, sizeof payload, frame, sizeof frame, &n), TS_OK);
    ts_probe_rx(&g.probe, frame, n, 1);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_MESSAGE, 0);
    ts_probe_counters c;
    ts_probe_counters_get(&g.probe, &c);
    CHECK_EQ_U(c.rx_bad_messages, 1u);
    CHECK(!ts_probe_running(&g.probe));
}

TS_CASE(truncated_frame_is_rejected_and_the_next_command_still_works)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_start(500, 0, 0);
    uint8_t frame[TS_HOST_FRAME_MAX];
    size_t n = 0;
    CHECK_EQ_I(ts_proto_frame_host_msg(&m, frame, sizeof frame, &n), TS_OK);
    ts_probe_rx(&g.probe, frame, n / 2, 1); /* cut short ... */
    const uint8_t delim = 0;
    ts_probe_rx(&g.probe, &delim, 1, 1);    /* ... and ended by a delimiter */
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_FRAME, 0);
    CHECK(!ts_probe_running(&g.probe));
    for (size_t i = 0; i < n; i++) {        /* one byte at a time */
        ts_probe_rx(&g.probe, frame + i, 1, 2);
    }
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK(ts_probe_running(&g.probe));
}

TS_CASE(overlong_frame_is_dropped_and_counted)
{
    rig_init(&g);
    uint8_t junk[TS_HOST_FRAME_MAX + 50];
    memset(junk, 0x41, sizeof junk);
    ts_probe_rx(&g.probe, junk, sizeof junk, 1);
    const uint8_t delim = 0;
    ts_probe_rx(&g.probe, &delim, 1, 1);
    CHECK(!rig_next(&g, &msg)); /* nothing decodable: no reply */
    ts_probe_counters c;
    ts_probe_counters_get(&g.probe, &c);
    CHECK_EQ_U(c.rx_bad_frames, 1u);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_status), 2);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.status.rx_bad_frames, 1u);
}

TS_CASE(random_bytes_are_all_counted_as_bad_frames_and_the_probe_still_answers)
{
    rig_init(&g);
    static uint8_t noise[200000];
    uint32_t x = 2463534242u;
    uint64_t segments = 0;
    size_t run = 0;
    for (size_t i = 0; i < sizeof noise; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        noise[i] = (x % 97u == 0u) ? 0u : (uint8_t)(x >> 24);
        if (noise[i] == 0u) {
            segments += run > 0u;
            run = 0;
        } else {
            run++;
        }
    }
    const uint8_t delim = 0;
    for (size_t i = 0; i < sizeof noise; i += 777) { /* odd chunking */
        size_t n = sizeof noise - i < 777 ? sizeof noise - i : 777;
        ts_probe_rx(&g.probe, noise + i, n, 1);
    }
    ts_probe_rx(&g.probe, &delim, 1, 1);
    segments += run > 0u;
    ts_probe_counters c;
    ts_probe_counters_get(&g.probe, &c);
    CHECK(segments > 1000u);
    CHECK_EQ_U(c.rx_bad_frames + c.rx_bad_messages, segments);
    CHECK(!ts_probe_running(&g.probe));
    g.tx_len = g.rx_pos = 0; /* the host drops the error replies */
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_info), 12);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(info));
}

TS_CASE(unknown_fields_from_a_newer_host_are_ignored)
{
    rig_init(&g);
    /* GetInfo (request 5) plus field 100 (varint 1) and field 101 (bytes "xy"). */
    const uint8_t payload[] = {0x08, 0x05, 0x2A, 0x00, 0xA0, 0x06, 0x01, 0xAA, 0x06, 0x02, 'x', 'y'};
    uint8_t frame[64];
    size_t n = 0;
    CHECK_EQ_I(ts_frame_encode(payload, sizeof payload, frame, sizeof frame, &n), TS_OK);
    ts_probe_rx(&g.probe, frame, n, 1);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(info));
}

TS_CASE(message_without_a_command_is_answered_with_an_error)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_cmd(0, 77);
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_MESSAGE, 77);
}

TS_CASE(start_rejects_out_of_range_arguments)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_start(20000, 0, 0); /* above max_rate_hz */
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, 7);
    m = rig_start(1000, 0, 0);
    m.cmd.start.manual_adc = true;
    m.cmd.start.averaging = throttlescope_v1_Averaging_AVG_1024; /* 102 ms per result */
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, 7);
    m = rig_start(1000, 65, 0);
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, 7);
    m = rig_start(1000, 0, 0);
    m.cmd.start.channels = 0x100u;
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, 7);
    m = rig_start(1000, 0, 0);
    m.cmd.start.vbus_ct = (throttlescope_v1_ConversionTime)9;
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, 7);
    CHECK(!ts_probe_running(&g.probe));
    CHECK_EQ_I(g.sampling_calls, 0);
}

TS_CASE(start_refuses_a_rate_whose_i2c_reads_outlast_a_conversion)
{
    rig_init(&g);
    /* Four channels: DIAG + 4 x 3 bytes + one 5-byte slow read = 1028 us at 400 kHz. */
    throttlescope_v1_HostToProbe m = rig_start(1200, 0, 0);
    m.cmd.start.channels = TS_CH_DEFAULT;
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, 7);
    CHECK(strstr(msg.msg.error.detail, "ceiling") != NULL);
    CHECK(strstr(msg.msg.error.detail, "1028 us") != NULL);
    /* Two channels fit at the same rate. */
    m.cmd.start.channels = TS_CH_VBUS | TS_CH_VSHUNT;
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK(ts_probe_period_us(&g.probe) >= 693u);
}

TS_CASE(rate_zero_runs_at_the_fastest_the_bus_allows_without_a_default)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_start(0, 0, 0);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK(ts_probe_rate_hz(&g.probe) <= 1443u);
    CHECK(ts_probe_rate_hz(&g.probe) >= 1200u); /* discrete codes: (50 + 150 us) x 4 */
}

TS_CASE(rate_zero_uses_the_configured_default_and_manual_adc_its_own_rate)
{
    rig_init(&g);
    g.probe.config.default_rate_hz = 1000;
    throttlescope_v1_HostToProbe m = rig_start(0, 0, 0);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(ts_probe_rate_hz(&g.probe), 1068u);
    CHECK(rig_next(&g, &msg)); /* DeviceInfo */
    m.cmd.start.manual_adc = true;
    m.cmd.start.averaging = throttlescope_v1_Averaging_AVG_16; /* (50 + 50) x 16 = 1600 us */
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK_EQ_U(ts_probe_rate_hz(&g.probe), 625u);
}

TS_CASE(missing_ina228_makes_start_report_a_sensor_fault)
{
    ts_ina228_model_init(&g.model, 0.005);
    memset(&g, 0, sizeof g);
    /* Build by hand with a wrong device id in the register file. */
    ts_ina228_model_init(&g.model, 0.005);
    g.model.device_id = 0x2380u;
    ts_bus bus = ts_ina228_model_bus(&g.model);
    ts_platform plat = {rig_now, rig_tx, rig_sampling, &g};
    ts_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.shunt_micro_ohm = 5000;
    cfg.max_current_ma = 5000;
    cfg.max_rate_hz = 1000;
    CHECK_EQ_I(ts_probe_init(&g.probe, &cfg, &plat, &bus), TS_ERR_IDENTITY);
    throttlescope_v1_HostToProbe m = rig_start(100, 0, 0);
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_SENSOR_FAULT, 7);
    CHECK(!ts_probe_running(&g.probe));
}

TS_CASE(shunt_too_large_for_the_range_is_a_sensor_fault_on_start)
{
    CHECK_EQ_I(rig_init_with(&g, 100000u, 5000u), TS_ERR_RANGE); /* 0.5 V at 5 A */
    throttlescope_v1_HostToProbe m = rig_start(100, 0, 0);
    rig_send(&g, &m);
    expect_error(throttlescope_v1_ErrorCode_ERROR_CODE_SENSOR_FAULT, 7);
}

TS_CASE(stop_acks_and_flushes_the_queued_samples)
{
    rig_init(&g);
    start_ok(1000, 32, 0);
    rig_run(&g, 10);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(stop), 8);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK_EQ_U(msg.msg.ack.request_id, 8u);
    CHECK(!ts_probe_running(&g.probe));
    CHECK(!g.sampling_running);
    CHECK_EQ_U(g.model.adc_config >> 12, 0u); /* ADC shut down */
    rig_run(&g, 5);                     /* ignored while stopped */
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(batch));
    CHECK_EQ_U(msg.msg.batch.count, 10u);
    CHECK(!rig_next(&g, &msg));
}

TS_CASE(channel_mask_limits_the_fields_and_the_bus_reads)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_start(1000, 8, 0);
    m.cmd.start.channels = throttlescope_v1_Channel_CHANNEL_VBUS |
                           throttlescope_v1_Channel_CHANNEL_CURRENT;
    rig_send(&g, &m);
    rig_next(&g, &msg);
    rig_next(&g, &msg);
    uint32_t before = g.model.reads[TS_INA228_REG_POWER];
    uint32_t vshunt_before = g.model.reads[TS_INA228_REG_VSHUNT];
    rig_run(&g, 8);
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.count, 8u);
    CHECK_EQ_U(msg.msg.batch.channels, TS_CH_VBUS | TS_CH_CURRENT);
    static ts_unpacked_batch u;
    rig_unpack(&msg.msg.batch, &u);
    CHECK_NEAR(ts_ina228_current_a((int32_t)u.value[2][7], 5.0 / 524288.0), 1.2, 1e-4);
    CHECK_EQ_I(u.value[1][7], 0);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_POWER], before);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_VSHUNT], vshunt_before);
}

TS_CASE(die_temperature_is_converted_and_read_with_the_slow_registers)
{
    rig_init(&g);
    throttlescope_v1_HostToProbe m = rig_start(1000, 32, 1);
    m.cmd.start.die_temp = true;
    rig_send(&g, &m);
    rig_next(&g, &msg);
    rig_next(&g, &msg);
    CHECK_EQ_U(g.model.adc_config >> 12, 0xFu);
    /* (50 + 50 + 150 us) x 4: temperature is part of the conversion period. */
    CHECK_EQ_U(ts_probe_period_us(&g.probe), 1000u);
    rig_run(&g, 5); /* slow slots: SHUNT_CAL, ADC_CONFIG, ENERGY, CHARGE, DIETEMP */
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.slow_count, 3u);
    CHECK_EQ_U(msg.msg.batch.slow[2].reg, TS_INA228_REG_DIETEMP);
    CHECK_EQ_U(msg.msg.batch.slow[2].index, 4u);
    CHECK_NEAR(ts_ina228_die_temp_c((int16_t)(uint16_t)msg.msg.batch.slow[2].value), 35.0, 0.01);
    CHECK_EQ_U(g.model.reads[TS_INA228_REG_DIETEMP], 1u);
}

TS_CASE(enclosure_temperatures_ride_with_the_batch_of_their_sample)
{
    rig_init(&g);
    start_ok(1000, 10, 0);
    rig_run(&g, 3);
    ts_probe_temp(&g.probe, 0, 41250);  /* aligned to seq 2 */
    rig_run(&g, 10);
    ts_probe_temp(&g.probe, 0, 41500);  /* aligned to seq 12: next batch */
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.temps_count, 1u);
    CHECK_EQ_U(msg.msg.batch.temps[0].seq, 2u);
    CHECK_EQ_I(msg.msg.batch.temps[0].milli_c, 41250);
    CHECK(!rig_next(&g, &msg));
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.temps_count, 1u);
    CHECK_EQ_U(msg.msg.batch.temps[0].seq, 12u);
}

TS_CASE(batch_never_holds_more_slow_readings_than_its_list)
{
    rig_init(&g);
    start_ok(1000, 64, 1); /* a slow register on every sample */
    rig_run(&g, 64);
    ts_probe_service(&g.probe);
    uint32_t batches = 0, samples = 0;
    while (rig_next(&g, &msg)) {
        CHECK(msg.msg.batch.count <= 16u);
        CHECK(msg.msg.batch.slow_count <= 16u);
        samples += msg.msg.batch.count;
        batches++;
    }
    CHECK_EQ_U(samples, 64u);
    CHECK_EQ_U(batches, 4u);
}

TS_CASE(restart_discards_and_counts_what_is_left_of_the_previous_run)
{
    rig_init(&g);
    start_ok(1000, 32, 0);
    rig_run(&g, 20); /* queued, not yet sent (batch of 32 not full) */
    ts_probe_temp(&g.probe, 0, 30000);
    start_ok(1000, 32, 0);
    /* Running: the sampling context writes the new setup at the next edge
     * (that conversion of the old setup is not a sample), then 5 samples. */
    rig_run(&g, 6);
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(batch));
    CHECK_EQ_U(msg.msg.batch.first_seq, 0u);
    CHECK_EQ_U(msg.msg.batch.dropped_before, 0u);
    CHECK_EQ_U(msg.msg.batch.count, 5u);
    CHECK_EQ_U(msg.msg.batch.temps_count, 0u);
    ts_probe_counters c;
    ts_probe_counters_get(&g.probe, &c);
    CHECK_EQ_U(c.sampler.samples_dropped, 20u);
    CHECK_EQ_U(c.sampler.temps_dropped, 1u);
}

TS_CASE(reset_accumulators_acks_zeroes_energy_and_starts_a_new_epoch)
{
    rig_init(&g);
    start_ok(1000, 32, 0);
    rig_run(&g, 3);
    ts_ina228_model_advance(&g.model, 100.0);
    CHECK(g.model.energy_j > 0.0);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(reset_accumulators), 11);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK_EQ_U(msg.msg.ack.request_id, 11u);
    /* The sampling context owns the bus while running: done at the next edge. */
    ts_ina228_model_alert(&g.model) ? ts_probe_alert(&g.probe, g.clock_us) : (void)0;
    CHECK(g.model.energy_j < 1e-9);
    rig_run(&g, 2);
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.epoch, 0u); /* the samples before the reset */
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.epoch, 1u);
    CHECK_EQ_U(msg.msg.batch.count, 2u);
}

TS_CASE(poll_ready_samples_only_after_a_conversion)
{
    rig_init(&g);
    start_ok(1000, 32, 0);
    CHECK(!ts_probe_poll_ready(&g.probe));
    ts_ina228_model_advance(&g.model, 1e-3);
    CHECK(ts_probe_poll_ready(&g.probe));
    CHECK(!ts_probe_poll_ready(&g.probe));
    CHECK_EQ_U(g.probe.sampler.counters.samples_taken, 1u);
}

TS_CASE(chip_reset_mid_run_is_reinitialised_with_a_new_epoch_on_the_wire)
{
    rig_init(&g);
    start_ok(1000, 32, 8);
    rig_run_for(&g, 0.1);
    ts_ina228_model_power_on_reset(&g.model);
    rig_run_for(&g, 0.1);
    g.clock_us += TS_DEFAULT_MAX_BATCH_AGE_US;
    ts_probe_service(&g.probe);
    uint32_t epoch = 0, batches_after = 0;
    uint64_t expected = 0, missing = 0;
    while (rig_next(&g, &msg)) {
        CHECK_EQ_I(msg.which_msg, TAG(batch));
        const throttlescope_v1_SampleBatch *b = &msg.msg.batch;
        CHECK(b->epoch == epoch || b->epoch == epoch + 1u);
        epoch = b->epoch;
        batches_after += epoch == 1u;
        missing += b->first_seq - expected;
        expected = b->first_seq + b->count;
    }
    CHECK_EQ_U(epoch, 1u);
    CHECK(batches_after >= 2u);
    /* The silence until the watchdog is counted, in slots. */
    CHECK(missing >= 10u);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_status), 4);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.status.epoch, 1u);
    CHECK_EQ_U(msg.msg.status.reinits, 1u);
    CHECK_EQ_U(msg.msg.status.missed_slots, missing);
    CHECK_EQ_U(g.model.shunt_cal, g.probe.ina.cal.shunt_cal);
}

TS_CASE(diag_flags_ride_with_each_batch_and_in_the_status)
{
    rig_init(&g);
    start_ok(1000, 8, 0);
    rig_run(&g, 8);
    g.model.diag_alrt |= TS_INA228_DIAG_MATHOF;
    g.model.diag_alrt &= (uint16_t)~TS_INA228_DIAG_MEMSTAT; /* trim memory checksum error */
    rig_run(&g, 8);
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.diag, 0u);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.batch.diag, TS_INA228_DIAG_MATHOF | 1u);
    throttlescope_v1_HostToProbe m = rig_cmd(CMD(get_status), 4);
    rig_send(&g, &m);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_U(msg.msg.status.diag, TS_INA228_DIAG_MATHOF | 1u);
}

static const ts_test_case cases[] = {
    TS_ENTRY(get_info_reports_calibration_and_sensors),
    TS_ENTRY(start_acks_sends_device_info_and_arms_the_sample_timer),
    TS_ENTRY(full_batches_carry_consecutive_samples_with_model_values),
    TS_ENTRY(partial_batch_goes_out_when_its_oldest_sample_ages),
    TS_ENTRY(host_not_reading_drops_new_samples_counts_them_and_reports_the_gap),
    TS_ENTRY(sync_reply_echoes_the_request_and_stamps_probe_rx_and_tx),
    TS_ENTRY(sync_reply_is_not_held_back_by_a_refused_batch),
    TS_ENTRY(garbage_and_bad_crc_frames_are_counted_and_answered),
    TS_ENTRY(valid_frame_with_undecodable_payload_is_a_bad_message),
    TS_ENTRY(truncated_frame_is_rejected_and_the_next_command_still_works),
    TS_ENTRY(overlong_frame_is_dropped_and_counted),
    TS_ENTRY(random_bytes_are_all_counted_as_bad_frames_and_the_probe_still_answers),
    TS_ENTRY(unknown_fields_from_a_newer_host_are_ignored),
    TS_ENTRY(message_without_a_command_is_answered_with_an_error),
    TS_ENTRY(start_rejects_out_of_range_arguments),
    TS_ENTRY(start_refuses_a_rate_whose_i2c_reads_outlast_a_conversion),
    TS_ENTRY(rate_zero_runs_at_the_fastest_the_bus_allows_without_a_default),
    TS_ENTRY(rate_zero_uses_the_configured_default_and_manual_adc_its_own_rate),
    TS_ENTRY(missing_ina228_makes_start_report_a_sensor_fault),
    TS_ENTRY(shunt_too_large_for_the_range_is_a_sensor_fault_on_start),
    TS_ENTRY(stop_acks_and_flushes_the_queued_samples),
    TS_ENTRY(channel_mask_limits_the_fields_and_the_bus_reads),
    TS_ENTRY(die_temperature_is_converted_and_read_with_the_slow_registers),
    TS_ENTRY(enclosure_temperatures_ride_with_the_batch_of_their_sample),
    TS_ENTRY(batch_never_holds_more_slow_readings_than_its_list),
    TS_ENTRY(restart_discards_and_counts_what_is_left_of_the_previous_run),
    TS_ENTRY(reset_accumulators_acks_zeroes_energy_and_starts_a_new_epoch),
    TS_ENTRY(poll_ready_samples_only_after_a_conversion),
    TS_ENTRY(chip_reset_mid_run_is_reinitialised_with_a_new_epoch_on_the_wire),
    TS_ENTRY(diag_flags_ride_with_each_batch_and_in_the_status),
};
TS_TEST_MAIN(cases)
