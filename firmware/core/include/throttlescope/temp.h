/* Enclosure temperature conversions: NTC thermistors (beta and
 * Steinhart-Hart) read through a divider on an ADC, and digital sensors. */
#ifndef THROTTLESCOPE_TEMP_H
#define THROTTLESCOPE_TEMP_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/status.h"

/** Kelvin at 0 degC. */
#define TS_KELVIN_0C 273.15

/** An NTC in a voltage divider read by an ADC referenced to the divider supply. */
typedef struct ts_ntc_divider {
    uint32_t adc_full_scale; /**< largest ADC code, e.g. 4095 for 12 bits */
    double fixed_ohm;        /**< the divider's fixed resistor */
    bool ntc_to_ground;      /**< true: NTC between ADC input and ground */
} ts_ntc_divider;

/** Beta model: 1/T = 1/T0 + ln(R/R0)/beta. */
typedef struct ts_ntc_beta {
    double r0_ohm;   /**< resistance at t0 */
    double t0_c;     /**< usually 25 */
    double beta_k;   /**< e.g. 3950 */
} ts_ntc_beta;

/** Steinhart-Hart model: 1/T = a + b ln R + c (ln R)^3, T in kelvin. */
typedef struct ts_ntc_sh {
    double a, b, c;
} ts_ntc_sh;

/** NTC resistance from an ADC code; TS_ERR_RANGE at the rails (open/short). */
int ts_ntc_resistance(const ts_ntc_divider *div, uint32_t code, double *ohm);

/** ADC code the divider gives for a resistance (inverse; rounds). */
uint32_t ts_ntc_code_for_resistance(const ts_ntc_divider *div, double ohm);

/** Temperature in degC from resistance by the beta model. */
double ts_ntc_beta_c(const ts_ntc_beta *m, double ohm);

/** Resistance at a temperature by the beta model (inverse). */
double ts_ntc_beta_ohm(const ts_ntc_beta *m, double celsius);

/** Temperature in degC from resistance by Steinhart-Hart. */
double ts_ntc_sh_c(const ts_ntc_sh *m, double ohm);

/**
 * Steinhart-Hart coefficients through three (degC, ohm) points; TS_ERR_RANGE
 * when the points are degenerate.
 */
int ts_ntc_sh_fit(ts_ntc_sh *out, const double t_c[3], const double r_ohm[3]);

/** ADC code -> milli-degC by the beta model; TS_ERR_RANGE on open/short. */
int ts_ntc_beta_milli_c(const ts_ntc_divider *div, const ts_ntc_beta *m,
                        uint32_t code, int32_t *milli_c);

/** TMP117-style 16-bit two's complement register (7.8125 m degC/LSB) -> m degC. */
int32_t ts_tmp117_milli_c(int16_t raw);

/** A Zephyr-style sensor value (val1 + val2 x 1e-6 degC) -> m degC, rounded. */
int32_t ts_sensor_value_milli_c(int32_t val1, int32_t val2);

#endif
