/* INA228 driver: register decoding against datasheet values, calibration,
 * identity and configuration over the simulated register file. */
#include "harness.h"

#include "ina228_model.h"
#include "throttlescope/ina228.h"

static void bytes3(uint32_t v, uint8_t b[3])
{
    b[0] = (uint8_t)(v >> 16);
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)v;
}

static void bytes5(uint64_t v, uint8_t b[5])
{
    for (int i = 0; i < 5; i++) {
        b[i] = (uint8_t)(v >> (8 * (4 - i)));
    }
}

TS_CASE(vbus_5v_reads_as_25600_lsb_of_195_3125_uv)
{
    uint8_t b[3];
    bytes3(0x064000u, b); /* 25600 << 4 */
    CHECK_EQ_I(ts_ina228_decode_20(b), 25600);
    CHECK_NEAR(ts_ina228_vbus_v(25600), 5.0, 1e-12);
    CHECK_NEAR(ts_ina228_vbus_v(1), 195.3125e-6, 1e-15);
}

TS_CASE(twenty_bit_values_ignore_the_reserved_low_nibble)
{
    uint8_t b[3];
    bytes3(0x06400Fu, b);
    CHECK_EQ_I(ts_ina228_decode_20(b), 25600);
}

TS_CASE(negative_current_decodes_as_twos_complement)
{
    uint8_t b[3];
    bytes3(0xFFFFF0u, b);
    CHECK_EQ_I(ts_ina228_decode_20(b), -1);
    bytes3(0xFFF060u, b); /* -250 */
    CHECK_EQ_I(ts_ina228_decode_20(b), -250);
    double lsb = 5.0 / 524288.0;
    CHECK_NEAR(ts_ina228_current_a(-250, lsb), -250.0 * lsb, 1e-15);
}

TS_CASE(twenty_bit_full_scale_both_signs)
{
    uint8_t b[3];
    bytes3(0x7FFFF0u, b);
    CHECK_EQ_I(ts_ina228_decode_20(b), 524287);
    bytes3(0x800000u, b);
    CHECK_EQ_I(ts_ina228_decode_20(b), -524288);
    /* Full-scale shunt voltage in both ranges (datasheet: +-163.84 / +-40.96 mV). */
    CHECK_NEAR(ts_ina228_vshunt_v(-524288, 0), -0.16384, 1e-12);
    CHECK_NEAR(ts_ina228_vshunt_v(-524288, 1), -0.04096, 1e-12);
    /* Max current for a 5 A calibration is one LSB short of 5 A. */
    CHECK_NEAR(ts_ina228_current_a(524287, 5.0 / 524288.0), 5.0 - 5.0 / 524288.0, 1e-12);
}

TS_CASE(twenty_bit_encode_is_the_inverse_of_decode)
{
    const int32_t values[] = {0, 1, -1, 524287, -524288, 25600, -123456};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        uint8_t b[3];
        ts_ina228_encode_20(values[i], b);
        CHECK_EQ_I(ts_ina228_decode_20(b), values[i]);
        CHECK_EQ_U(b[2] & 0x0Fu, 0);
    }
}

TS_CASE(power_is_24_bit_unsigned_with_lsb_3_2_current_lsb)
{
    uint8_t b[3];
    bytes3(0xFFFFFFu, b);
    CHECK_EQ_U(ts_ina228_decode_power(b), 16777215u);
    double lsb = 5.0 / 524288.0;
    CHECK_NEAR(ts_ina228_power_w(16777215u, lsb), 16777215.0 * 3.2 * lsb, 1e-9);
    /* 5 V x 1 A with a 5 A calibration: 5 / (3.2 x lsb) = 163840 LSB. */
    CHECK_NEAR(ts_ina228_power_w(163840u, lsb), 5.0, 1e-12);
}

TS_CASE(energy_is_40_bit_unsigned_with_lsb_16_x_3_2_current_lsb)
{
    uint8_t b[5];
    bytes5(0xFFFFFFFFFFull, b);
    CHECK_EQ_U(ts_ina228_decode_energy(b), 0xFFFFFFFFFFull);
    bytes5(0x8000000000ull, b); /* top bit set is still positive energy */
    CHECK_EQ_U(ts_ina228_decode_energy(b), 0x8000000000ull);
    double lsb = 5.0 / 524288.0;
    CHECK_NEAR(ts_ina228_energy_j(1u, lsb), 16.0 * 3.2 * lsb, 1e-15);
    uint8_t e[5];
    ts_ina228_encode_energy(0x123456789Aull, e);
    CHECK_EQ_U(ts_ina228_decode_energy(e), 0x123456789Aull);
}

TS_CASE(charge_is_40_bit_signed)
{
    uint8_t b[5];
    bytes5(0xFFFFFFFFFFull, b);
    CHECK_EQ_I(ts_ina228_decode_charge(b), -1);
    bytes5(0x8000000000ull, b);
    CHECK_EQ_I(ts_ina228_decode_charge(b), -549755813888ll);
    bytes5(0x7FFFFFFFFFull, b);
    CHECK_EQ_I(ts_ina228_decode_charge(b), 549755813887ll);
    ts_ina228_encode_charge(-42, b);
    CHECK_EQ_I(ts_ina228_decode_charge(b), -42);
    CHECK_EQ_U(b[0], 0xFFu);
}

TS_CASE(accumulators_wrap_at_40_bits_in_the_register_file)
{
    ts_ina228_model m;
    ts_ina228_model_init(&m, 0.005);
    ts_bus bus = ts_ina228_model_bus(&m);
    ts_ina228_calibration cal;
    CHECK_EQ_I(ts_ina228_calibrate(&cal, 5000u, 5000u, 0u), TS_OK);
    ts_ina228 dev;
    ts_ina228_init(&dev, &bus, &cal);
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    double lsb_j = 16.0 * 3.2 * ts_ina228_model_current_lsb(&m);
    /* Two LSB past 2^40: the register reads 1 or 2 (floating rounding), not 2^40+2. */
    m.energy_j = (1099511627776.0 + 2.0) * lsb_j;
    uint64_t e = 0;
    int64_t c = 0;
    CHECK_EQ_I(ts_ina228_read_accumulators(&dev, &e, &c), TS_OK);
    CHECK(e <= 2u);
}

TS_CASE(die_temperature_is_16_bit_signed_7_8125_mdegc)
{
    uint8_t b[2] = {0x0Cu, 0x80u}; /* 3200 */
    CHECK_EQ_I(ts_ina228_decode_dietemp(b), 3200);
    CHECK_NEAR(ts_ina228_die_temp_c(3200), 25.0, 1e-12);
    uint8_t n[2] = {0xFFu, 0x00u}; /* -256 */
    CHECK_EQ_I(ts_ina228_decode_dietemp(n), -256);
    CHECK_NEAR(ts_ina228_die_temp_c(-256), -2.0, 1e-12);
    uint8_t lo[2] = {0x80u, 0x00u};
    CHECK_NEAR(ts_ina228_die_temp_c(ts_ina228_decode_dietemp(lo)), -256.0, 1e-12);
}

TS_CASE(shunt_cal_for_several_shunts)
{
    ts_ina228_calibration c;
    /* 25000 x Imax[A] x R[ohm]; x4 with ADCRANGE = 1. */
    CHECK_EQ_I(ts_ina228_calibrate(&c, 10000u, 5000u, 0u), TS_OK); /* 10 mohm, 5 A */
    CHECK_EQ_U(c.shunt_cal, 1250u);
    CHECK_NEAR(c.current_lsb_a, 5.0 / 524288.0, 1e-15);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 5000u, 3000u, 0u), TS_OK); /* 5 mohm, 3 A */
    CHECK_EQ_U(c.shunt_cal, 375u);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 5000u, 3000u, 1u), TS_OK); /* same, 40.96 mV range */
    CHECK_EQ_U(c.shunt_cal, 1500u);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 2000u, 5000u, 1u), TS_OK); /* 2 mohm, 5 A */
    CHECK_EQ_U(c.shunt_cal, 1000u);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 16000u, 10000u, 0u), TS_OK); /* 16 mohm, 10 A */
    CHECK_EQ_U(c.shunt_cal, 4000u);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 3000u, 1100u, 0u), TS_OK); /* 82.5 rounds to 83 */
    CHECK_EQ_U(c.shunt_cal, 83u);
}

TS_CASE(shunt_cal_rejects_a_shunt_voltage_beyond_the_adc_range)
{
    ts_ina228_calibration c;
    /* 100 mohm x 2 A = 200 mV > 163.84 mV. */
    CHECK_EQ_I(ts_ina228_calibrate(&c, 100000u, 2000u, 0u), TS_ERR_RANGE);
    /* 10 mohm x 5 A = 50 mV fits range 0 but not 40.96 mV. */
    CHECK_EQ_I(ts_ina228_calibrate(&c, 10000u, 5000u, 1u), TS_ERR_RANGE);
    /* Exactly full scale is accepted: 163.84 mV. */
    CHECK_EQ_I(ts_ina228_calibrate(&c, 16384u, 10000u, 0u), TS_OK);
    CHECK_EQ_U(c.shunt_cal, 4096u);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 0u, 5000u, 0u), TS_ERR_RANGE);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 5000u, 0u, 0u), TS_ERR_RANGE);
    CHECK_EQ_I(ts_ina228_calibrate(&c, 5000u, 5000u, 2u), TS_ERR_RANGE);
}

static ts_ina228 make_dev(ts_ina228_model *m, uint32_t shunt_uohm, uint32_t max_ma, uint8_t range)
{
    ts_ina228_model_init(m, (double)shunt_uohm * 1e-6);
    ts_bus bus = ts_ina228_model_bus(m);
    ts_ina228_calibration cal;
    CHECK_EQ_I(ts_ina228_calibrate(&cal, shunt_uohm, max_ma, range), TS_OK);
    ts_ina228 dev;
    ts_ina228_init(&dev, &bus, &cal);
    return dev;
}

TS_CASE(identity_accepts_ina228_and_rejects_other_chips)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    uint16_t id = 0;
    CHECK_EQ_I(ts_ina228_check_identity(&dev, &id), TS_OK);
    CHECK_EQ_U(id, 0x2281u);
    m.device_id = 0x2380u; /* an INA238 */
    CHECK_EQ_I(ts_ina228_check_identity(&dev, &id), TS_ERR_IDENTITY);
    m.device_id = 0x2281u;
    m.manufacturer_id = 0x1234u;
    CHECK_EQ_I(ts_ina228_check_identity(&dev, &id), TS_ERR_IDENTITY);
    m.manufacturer_id = TS_INA228_MANUFACTURER_TI;
    m.fail_next_transfers = 1;
    CHECK_EQ_I(ts_ina228_check_identity(&dev, &id), TS_ERR_BUS);
}

TS_CASE(reset_writes_adcrange_and_shunt_cal)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 3000u, 1u);
    m.shunt_cal = 7;
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    CHECK_EQ_U(m.resets, 1u);
    CHECK_EQ_U(m.shunt_cal, 1500u);
    CHECK(m.config & TS_INA228_CONFIG_ADCRANGE);
    CHECK_EQ_U(m.bad_width, 0u);
}

TS_CASE(adc_config_packs_mode_conversion_times_and_averaging)
{
    ts_ina228_adc a = {TS_INA228_CT_50US, TS_INA228_CT_50US, TS_INA228_CT_50US, TS_INA228_AVG_1,
                       true, false, false};
    CHECK_EQ_U(ts_ina228_adc_config_value(&a), 0xF000u);
    CHECK_EQ_U(ts_ina228_conversion_period_us(&a), 150u);
    a.die_temp = false;
    CHECK_EQ_U(ts_ina228_conversion_period_us(&a), 100u);
    ts_ina228_adc b = {TS_INA228_CT_540US, TS_INA228_CT_540US, TS_INA228_CT_540US,
                       TS_INA228_AVG_16, false, false, false};
    CHECK_EQ_U(ts_ina228_adc_config_value(&b), 0xB922u);
    CHECK_EQ_U(ts_ina228_conversion_period_us(&b), 1080u * 16u);
    ts_ina228_adc dflt = {TS_INA228_CT_1052US, TS_INA228_CT_1052US, TS_INA228_CT_1052US,
                          TS_INA228_AVG_1, true, false, false};
    CHECK_EQ_U(ts_ina228_adc_config_value(&dflt), 0xFB68u); /* datasheet reset value */
}

TS_CASE(configure_adc_enables_conversion_ready_on_alert_when_asked)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    ts_ina228_adc a = {TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_AVG_4,
                       false, true, false};
    CHECK_EQ_I(ts_ina228_configure_adc(&dev, &a), TS_OK);
    CHECK_EQ_U(m.adc_config, ts_ina228_adc_config_value(&a));
    CHECK(m.diag_alrt & TS_INA228_DIAG_CNVR);
    CHECK(!(m.diag_alrt & TS_INA228_DIAG_ALATCH));
    a.latch = true;
    CHECK_EQ_I(ts_ina228_configure_adc(&dev, &a), TS_OK);
    CHECK(m.diag_alrt & TS_INA228_DIAG_CNVR);
    CHECK(m.diag_alrt & TS_INA228_DIAG_ALATCH);
}

/* Model: put the chip in continuous bus+shunt mode at 84 us x 4 = 672 us. */
static ts_ina228 model_converting(ts_ina228_model *m, bool latch)
{
    ts_ina228 dev = make_dev(m, 5000u, 5000u, 0u);
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    ts_ina228_adc a = {TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_AVG_4,
                       false, true, latch};
    CHECK_EQ_I(ts_ina228_configure_adc(&dev, &a), TS_OK);
    CHECK_NEAR(ts_ina228_model_period_s(m), 672e-6, 1e-12);
    return dev;
}

TS_CASE(model_transparent_mode_flag_and_alert_clear_by_themselves_at_the_next_conversion)
{
    ts_ina228_model m;
    ts_ina228 dev = model_converting(&m, false);
    uint16_t diag = 0;
    ts_ina228_model_advance(&m, 672e-6 + 5e-6); /* 5 us after the first completion */
    CHECK(ts_ina228_model_alert(&m));
    CHECK_EQ_U(m.alert_edges, 1u);
    /* A read does not clear it in transparent mode... */
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_DIAG_ALRT, &diag), TS_OK);
    CHECK(diag & TS_INA228_DIAG_CNVRF);
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_DIAG_ALRT, &diag), TS_OK);
    CHECK(diag & TS_INA228_DIAG_CNVRF);
    /* ...the next conversion does, with nobody reading. */
    ts_ina228_model_advance(&m, 100e-6);
    CHECK(!ts_ina228_model_alert(&m));
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_DIAG_ALRT, &diag), TS_OK);
    CHECK(!(diag & TS_INA228_DIAG_CNVRF));
    /* Ten conversions, nobody reading: ten edges, and the flag is down between them. */
    ts_ina228_model_advance(&m, 10 * 672e-6);
    CHECK_EQ_U(m.alert_edges, 11u);
    CHECK_EQ_U(m.conversions, 11u);
    CHECK(!ts_ina228_model_alert(&m));
}

TS_CASE(model_latch_mode_holds_flag_and_alert_until_diag_alrt_is_read)
{
    ts_ina228_model m;
    ts_ina228 dev = model_converting(&m, true);
    ts_ina228_model_set(&m, 5.0, 1.0, 30.0);
    ts_ina228_model_advance(&m, 3.5 * 672e-6); /* three conversions, nobody reading */
    CHECK_EQ_U(m.conversions, 3u);
    CHECK(ts_ina228_model_alert(&m));
    CHECK_EQ_U(m.alert_edges, 1u); /* held since the first: no new edge */
    CHECK_NEAR(m.last_edge_s, 672e-6, 1e-9);
    uint16_t diag = 0;
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_DIAG_ALRT, &diag), TS_OK);
    CHECK(diag & TS_INA228_DIAG_CNVRF);
    CHECK(!ts_ina228_model_alert(&m)); /* the read released it */
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_DIAG_ALRT, &diag), TS_OK);
    CHECK(!(diag & TS_INA228_DIAG_CNVRF));
    ts_ina228_model_advance(&m, 672e-6);
    CHECK_EQ_U(m.alert_edges, 2u);
    CHECK_NEAR(m.last_edge_s, 4 * 672e-6, 1e-9);
}

TS_CASE(model_results_change_only_at_a_conversion_and_average_its_interval)
{
    ts_ina228_model m;
    ts_ina228 dev = model_converting(&m, true);
    ts_ina228_model_set(&m, 5.0, 1.0, 30.0);
    ts_ina228_model_advance(&m, 336e-6);
    ts_ina228_model_set(&m, 6.0, 1.0, 30.0);
    ts_ina228_raw raw;
    CHECK_EQ_I(ts_ina228_read_fast(&dev, TS_CH_VBUS, &raw), TS_OK);
    CHECK_EQ_I(raw.vbus, 0); /* no conversion completed yet */
    ts_ina228_model_advance(&m, 336e-6);
    CHECK_EQ_I(ts_ina228_read_fast(&dev, TS_CH_VBUS, &raw), TS_OK);
    CHECK_NEAR(ts_ina228_vbus_v(raw.vbus), 5.5, 195.3125e-6);
}

static void check_defaults(const ts_ina228_model *m)
{
    CHECK_EQ_U(m->config, TS_INA228_RESET_CONFIG);
    CHECK_EQ_U(m->adc_config, 0xFB68u);
    CHECK_EQ_U(m->shunt_cal, 0x1000u);
    CHECK_EQ_U(m->diag_alrt, 0x0001u);
    CHECK_NEAR(m->energy_j, 0.0, 0.0);
    CHECK_NEAR(m->charge_c, 0.0, 0.0);
}

TS_CASE(model_chip_reset_restores_register_defaults_and_restarts_the_accumulators)
{
    ts_ina228_model m;
    ts_ina228 dev = model_converting(&m, true);
    ts_ina228_model_set(&m, 5.0, 1.0, 30.0);
    ts_ina228_model_advance(&m, 0.5);
    uint64_t e = 0;
    int64_t c = 0;
    CHECK_EQ_I(ts_ina228_read_accumulators(&dev, &e, &c), TS_OK);
    CHECK(e > 0u && c > 0);
    CHECK(m.shunt_cal != 0x1000u);
    /* CONFIG.RST */
    uint8_t rst[2] = {0x80, 0x00};
    uint32_t resets = m.resets;
    CHECK_EQ_I(dev.bus.write(dev.bus.ctx, TS_INA228_REG_CONFIG, rst, 2), 0);
    check_defaults(&m);
    CHECK_EQ_U(m.resets, resets + 1u);
    /* The reset chip converts at its default 3 x 1052 us, CNVR off: no ALERT. */
    uint64_t edges = m.alert_edges;
    ts_ina228_model_advance(&m, 0.01);
    CHECK(m.conversions > 0u);
    CHECK_EQ_U(m.alert_edges, edges);
    /* A power-on reset (supply dip, ESD) does the same. */
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    ts_ina228_model_advance(&m, 0.1);
    ts_ina228_model_power_on_reset(&m);
    check_defaults(&m);
    CHECK_EQ_U(m.resets, resets + 3u);
    CHECK_EQ_I(ts_ina228_read_accumulators(&dev, &e, &c), TS_OK);
    CHECK_EQ_U(e, 0u);
    CHECK_EQ_I(c, 0);
}

TS_CASE(model_injected_i2c_errors_fail_transfers_then_recover)
{
    ts_ina228_model m;
    ts_ina228 dev = model_converting(&m, true);
    m.fail_next_transfers = 2;
    uint16_t v = 0;
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_SHUNT_CAL, &v), TS_ERR_BUS);
    uint8_t b[2] = {0, 1};
    CHECK(dev.bus.write(dev.bus.ctx, TS_INA228_REG_SHUNT_CAL, b, 2) != 0);
    CHECK_EQ_U(m.shunt_cal, dev.cal.shunt_cal); /* the failed write changed nothing */
    CHECK_EQ_I(ts_ina228_read_reg16(&dev, TS_INA228_REG_SHUNT_CAL, &v), TS_OK);
    CHECK_EQ_U(v, dev.cal.shunt_cal);
}

TS_CASE(match_rate_makes_one_conversion_last_one_sample_period)
{
    ts_ina228_adc a;
    memset(&a, 0, sizeof a);
    CHECK_EQ_I(ts_ina228_match_rate(1000u, &a), TS_OK);
    uint32_t period = ts_ina228_conversion_period_us(&a);
    CHECK(period >= 900u && period <= 1100u);
    a.die_temp = true;
    CHECK_EQ_I(ts_ina228_match_rate(100u, &a), TS_OK);
    period = ts_ina228_conversion_period_us(&a);
    CHECK(period >= 9000u && period <= 11000u);
    CHECK(a.avg >= TS_INA228_AVG_4); /* long intervals are averaged, not sampled once */
    CHECK_EQ_I(ts_ina228_match_rate(0u, &a), TS_ERR_RANGE);
    CHECK_EQ_I(ts_ina228_match_rate(20000u, &a), TS_ERR_RANGE); /* faster than 100 us */
}

TS_CASE(sample_bus_time_follows_the_i2c_transactions)
{
    /* 400 kHz: DIAG 48 bits, VBUS/VSHUNT 57 each, one 5-byte slow read 75 bits
     * = 237 bits = 592.5 us, + 4 transactions x 25 us. */
    CHECK_EQ_U(ts_ina228_read_bits(2u), 48u);
    CHECK_EQ_U(ts_ina228_read_bits(3u), 57u);
    CHECK_EQ_U(ts_ina228_read_bits(5u), 75u);
    CHECK_EQ_U(ts_ina228_sample_bus_us(TS_CH_VBUS | TS_CH_VSHUNT, 400000u, 25u), 693u);
    CHECK_EQ_U(ts_ina228_sample_bus_us(TS_CH_DEFAULT, 400000u, 25u), 1028u);
}

TS_CASE(read_fast_reads_only_the_selected_registers)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    ts_ina228_model_set(&m, 5.0, -1.5, 40.0);
    ts_ina228_model_advance(&m, ts_ina228_model_period_s(&m));
    ts_ina228_raw raw;
    CHECK_EQ_I(ts_ina228_read_fast(&dev, TS_CH_VBUS | TS_CH_CURRENT, &raw), TS_OK);
    CHECK_EQ_U(m.reads[TS_INA228_REG_VBUS], 1u);
    CHECK_EQ_U(m.reads[TS_INA228_REG_CURRENT], 1u);
    CHECK_EQ_U(m.reads[TS_INA228_REG_VSHUNT], 0u);
    CHECK_EQ_U(m.reads[TS_INA228_REG_POWER], 0u);
    CHECK_NEAR(ts_ina228_vbus_v(raw.vbus), 5.0, 195.3125e-6);
    CHECK_NEAR(ts_ina228_current_a(raw.current, dev.cal.current_lsb_a), -1.5,
               dev.cal.current_lsb_a);
    CHECK_EQ_I(ts_ina228_read_fast(&dev, TS_CH_DEFAULT | TS_CH_DIE_TEMP, &raw), TS_OK);
    CHECK_NEAR(ts_ina228_power_w(raw.power, dev.cal.current_lsb_a), 7.5,
               3.2 * dev.cal.current_lsb_a);
    CHECK_NEAR(ts_ina228_vshunt_v(raw.vshunt, 0), -1.5 * 0.005, 312.5e-9);
    CHECK_NEAR(ts_ina228_die_temp_c(raw.die_temp), 40.0, 7.8125e-3);
    CHECK_EQ_U(m.bad_width, 0u);
}

TS_CASE(reset_accumulators_zeroes_energy_and_charge)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    ts_ina228_model_set(&m, 5.0, 1.0, 30.0);
    ts_ina228_model_advance(&m, 10.0); /* 50 J, 10 C */
    uint64_t e = 0;
    int64_t c = 0;
    CHECK_EQ_I(ts_ina228_read_accumulators(&dev, &e, &c), TS_OK);
    CHECK_NEAR(ts_ina228_energy_j(e, dev.cal.current_lsb_a), 50.0, 16 * 3.2 * dev.cal.current_lsb_a);
    CHECK_NEAR(ts_ina228_charge_c(c, dev.cal.current_lsb_a), 10.0, dev.cal.current_lsb_a);
    CHECK_EQ_I(ts_ina228_reset_accumulators(&dev), TS_OK);
    CHECK_EQ_I(ts_ina228_read_accumulators(&dev, &e, &c), TS_OK);
    CHECK_EQ_U(e, 0u);
    CHECK_EQ_I(c, 0);
}

TS_CASE(negative_charge_accumulates_below_zero)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    ts_ina228_model_set(&m, 5.0, -2.0, 30.0);
    ts_ina228_model_advance(&m, 1.0);
    uint64_t e = 0;
    int64_t c = 0;
    CHECK_EQ_I(ts_ina228_read_accumulators(&dev, &e, &c), TS_OK);
    CHECK(c < 0);
    CHECK_NEAR(ts_ina228_charge_c(c, dev.cal.current_lsb_a), -2.0, 2 * dev.cal.current_lsb_a);
    CHECK_NEAR(ts_ina228_energy_j(e, dev.cal.current_lsb_a), 10.0, 16 * 3.2 * dev.cal.current_lsb_a);
}

static const ts_test_case cases[] = {
    TS_ENTRY(vbus_5v_reads_as_25600_lsb_of_195_3125_uv),
    TS_ENTRY(twenty_bit_values_ignore_the_reserved_low_nibble),
    TS_ENTRY(negative_current_decodes_as_twos_complement),
    TS_ENTRY(twenty_bit_full_scale_both_signs),
    TS_ENTRY(twenty_bit_encode_is_the_inverse_of_decode),
    TS_ENTRY(power_is_24_bit_unsigned_with_lsb_3_2_current_lsb),
    TS_ENTRY(energy_is_40_bit_unsigned_with_lsb_16_x_3_2_current_lsb),
    TS_ENTRY(charge_is_40_bit_signed),
    TS_ENTRY(accumulators_wrap_at_40_bits_in_the_register_file),
    TS_ENTRY(die_temperature_is_16_bit_signed_7_8125_mdegc),
    TS_ENTRY(shunt_cal_for_several_shunts),
    TS_ENTRY(shunt_cal_rejects_a_shunt_voltage_beyond_the_adc_range),
    TS_ENTRY(identity_accepts_ina228_and_rejects_other_chips),
    TS_ENTRY(reset_writes_adcrange_and_shunt_cal),
    TS_ENTRY(adc_config_packs_mode_conversion_times_and_averaging),
    TS_ENTRY(configure_adc_enables_conversion_ready_on_alert_when_asked),
    TS_ENTRY(model_transparent_mode_flag_and_alert_clear_by_themselves_at_the_next_conversion),
    TS_ENTRY(model_latch_mode_holds_flag_and_alert_until_diag_alrt_is_read),
    TS_ENTRY(model_results_change_only_at_a_conversion_and_average_its_interval),
    TS_ENTRY(model_chip_reset_restores_register_defaults_and_restarts_the_accumulators),
    TS_ENTRY(model_injected_i2c_errors_fail_transfers_then_recover),
    TS_ENTRY(match_rate_makes_one_conversion_last_one_sample_period),
    TS_ENTRY(sample_bus_time_follows_the_i2c_transactions),
    TS_ENTRY(read_fast_reads_only_the_selected_registers),
    TS_ENTRY(reset_accumulators_zeroes_energy_and_charge),
    TS_ENTRY(negative_charge_accumulates_below_zero),
};
TS_TEST_MAIN(cases)
