/* Enclosure temperature conversions. */
#include "harness.h"

#include "throttlescope/temp.h"

static const ts_ntc_beta ntc10k = {10000.0, 25.0, 3950.0};

TS_CASE(beta_model_gives_t0_at_r0_and_known_points)
{
    CHECK_NEAR(ts_ntc_beta_c(&ntc10k, 10000.0), 25.0, 1e-9);
    /* 1/T = 1/298.15 + ln(R/R0)/3950 at 85 degC: R = R0 exp(B(1/T - 1/T0)). */
    double r85 = 10000.0 * exp(3950.0 * (1.0 / 358.15 - 1.0 / 298.15));
    CHECK_NEAR(ts_ntc_beta_c(&ntc10k, r85), 85.0, 1e-9);
    CHECK_NEAR(ts_ntc_beta_ohm(&ntc10k, 85.0), r85, 1e-6);
    CHECK(ts_ntc_beta_c(&ntc10k, 20000.0) < 25.0); /* NTC: more ohms, colder */
}

TS_CASE(steinhart_hart_fit_reproduces_its_points)
{
    /* Three points of a 10k B3950 part (0, 25, 85 degC). */
    const double t[3] = {0.0, 25.0, 85.0};
    const double r[3] = {ts_ntc_beta_ohm(&ntc10k, 0.0), 10000.0, ts_ntc_beta_ohm(&ntc10k, 85.0)};
    CHECK_NEAR(r[0], 33620.6, 1.0); /* R0 exp(B(1/273.15 - 1/298.15)) */
    ts_ntc_sh sh;
    CHECK_EQ_I(ts_ntc_sh_fit(&sh, t, r), TS_OK);
    for (int i = 0; i < 3; i++) {
        CHECK_NEAR(ts_ntc_sh_c(&sh, r[i]), t[i], 1e-6);
    }
    /* Between the points it stays close to the beta curve. */
    CHECK_NEAR(ts_ntc_sh_c(&sh, ts_ntc_beta_ohm(&ntc10k, 50.0)), 50.0, 0.1);
    const double same[3] = {10000.0, 10000.0, 5000.0};
    CHECK_EQ_I(ts_ntc_sh_fit(&sh, t, same), TS_ERR_RANGE);
}

TS_CASE(divider_code_round_trips_through_resistance_for_both_wirings)
{
    ts_ntc_divider low = {4095u, 10000.0, true};
    ts_ntc_divider high = {4095u, 10000.0, false};
    for (double c = -20.0; c <= 100.0; c += 10.0) {
        int32_t mc = 0;
        uint32_t code = ts_ntc_code_for_resistance(&low, ts_ntc_beta_ohm(&ntc10k, c));
        CHECK_EQ_I(ts_ntc_beta_milli_c(&low, &ntc10k, code, &mc), TS_OK);
        CHECK_NEAR(mc / 1000.0, c, 0.6); /* 12-bit quantisation */
        code = ts_ntc_code_for_resistance(&high, ts_ntc_beta_ohm(&ntc10k, c));
        CHECK_EQ_I(ts_ntc_beta_milli_c(&high, &ntc10k, code, &mc), TS_OK);
        CHECK_NEAR(mc / 1000.0, c, 0.6);
    }
}

TS_CASE(open_or_shorted_thermistor_is_an_error_not_a_temperature)
{
    ts_ntc_divider d = {4095u, 10000.0, true};
    int32_t mc = 12345;
    CHECK_EQ_I(ts_ntc_beta_milli_c(&d, &ntc10k, 0u, &mc), TS_ERR_RANGE);
    CHECK_EQ_I(ts_ntc_beta_milli_c(&d, &ntc10k, 4095u, &mc), TS_ERR_RANGE);
    CHECK_EQ_I(mc, 12345);
}

TS_CASE(digital_sensor_values_convert_to_millidegrees)
{
    CHECK_EQ_I(ts_tmp117_milli_c(3200), 25000);  /* 0x0C80 = 25 degC */
    CHECK_EQ_I(ts_tmp117_milli_c(-256), -2000);
    CHECK_EQ_I(ts_tmp117_milli_c(1), 8);          /* 7.8125 rounds to 8 */
    CHECK_EQ_I(ts_tmp117_milli_c(-1), -8);
    CHECK_EQ_I(ts_sensor_value_milli_c(25, 500000), 25500);
    CHECK_EQ_I(ts_sensor_value_milli_c(-3, -250000), -3250);
    CHECK_EQ_I(ts_sensor_value_milli_c(0, 999), 1);
}

static const ts_test_case cases[] = {
    TS_ENTRY(beta_model_gives_t0_at_r0_and_known_points),
    TS_ENTRY(steinhart_hart_fit_reproduces_its_points),
    TS_ENTRY(divider_code_round_trips_through_resistance_for_both_wirings),
    TS_ENTRY(open_or_shorted_thermistor_is_an_error_not_a_temperature),
    TS_ENTRY(digital_sensor_values_convert_to_millidegrees),
};
TS_TEST_MAIN(cases)
