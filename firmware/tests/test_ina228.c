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
                       true, false};
    CHECK_EQ_U(ts_ina228_adc_config_value(&a), 0xF000u);
    CHECK_EQ_U(ts_ina228_conversion_period_us(&a), 150u);
    a.die_temp = false;
    CHECK_EQ_U(ts_ina228_conversion_period_us(&a), 100u);
    ts_ina228_adc b = {TS_INA228_CT_540US, TS_INA228_CT_540US, TS_INA228_CT_540US,
                       TS_INA228_AVG_16, false, false};
    CHECK_EQ_U(ts_ina228_adc_config_value(&b), 0xB922u);
    CHECK_EQ_U(ts_ina228_conversion_period_us(&b), 1080u * 16u);
    ts_ina228_adc dflt = {TS_INA228_CT_1052US, TS_INA228_CT_1052US, TS_INA228_CT_1052US,
                          TS_INA228_AVG_1, true, false};
    CHECK_EQ_U(ts_ina228_adc_config_value(&dflt), 0xFB68u); /* datasheet reset value */
}

TS_CASE(configure_adc_enables_conversion_ready_on_alert_when_asked)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    ts_ina228_adc a = {TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_CT_84US, TS_INA228_AVG_4,
                       false, true};
    CHECK_EQ_I(ts_ina228_configure_adc(&dev, &a), TS_OK);
    CHECK_EQ_U(m.adc_config, ts_ina228_adc_config_value(&a));
    CHECK(m.diag_alrt & TS_INA228_DIAG_CNVR);
}

TS_CASE(conversion_ready_flag_is_seen_once_per_conversion)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    bool ready = true;
    CHECK_EQ_I(ts_ina228_conversion_ready(&dev, &ready, NULL), TS_OK);
    CHECK(!ready);
    ts_ina228_model_advance(&m, 1e-4);
    CHECK_EQ_I(ts_ina228_conversion_ready(&dev, &ready, NULL), TS_OK);
    CHECK(ready);
    CHECK_EQ_I(ts_ina228_conversion_ready(&dev, &ready, NULL), TS_OK);
    CHECK(!ready);
}

TS_CASE(read_fast_reads_only_the_selected_registers)
{
    ts_ina228_model m;
    ts_ina228 dev = make_dev(&m, 5000u, 5000u, 0u);
    CHECK_EQ_I(ts_ina228_reset(&dev), TS_OK);
    ts_ina228_model_set(&m, 5.0, -1.5, 40.0);
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
    TS_ENTRY(conversion_ready_flag_is_seen_once_per_conversion),
    TS_ENTRY(read_fast_reads_only_the_selected_registers),
    TS_ENTRY(reset_accumulators_zeroes_energy_and_charge),
    TS_ENTRY(negative_charge_accumulates_below_zero),
};
TS_TEST_MAIN(cases)
