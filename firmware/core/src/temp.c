/* NTC (beta, Steinhart-Hart) and digital temperature sensor conversions. */
#include "throttlescope/temp.h"

#include <math.h>

int ts_ntc_resistance(const ts_ntc_divider *div, uint32_t code, double *ohm)
{
    if (code == 0u || code >= div->adc_full_scale) {
        return TS_ERR_RANGE; /* open or shorted thermistor */
    }
    double ratio = (double)code / (double)div->adc_full_scale; /* Vout / Vref */
    /* NTC to ground: Vout = Vref R/(R+F) -> R = F x/(1-x);
     * NTC to supply: Vout = Vref F/(R+F) -> R = F (1-x)/x. */
    *ohm = div->ntc_to_ground ? div->fixed_ohm * ratio / (1.0 - ratio)
                              : div->fixed_ohm * (1.0 - ratio) / ratio;
    return TS_OK;
}

uint32_t ts_ntc_code_for_resistance(const ts_ntc_divider *div, double ohm)
{
    double ratio = div->ntc_to_ground ? ohm / (ohm + div->fixed_ohm)
                                      : div->fixed_ohm / (ohm + div->fixed_ohm);
    double code = ratio * (double)div->adc_full_scale + 0.5;
    if (code < 0.0) {
        return 0u;
    }
    if (code > (double)div->adc_full_scale) {
        return div->adc_full_scale;
    }
    return (uint32_t)code;
}

double ts_ntc_beta_c(const ts_ntc_beta *m, double ohm)
{
    double inv_t = 1.0 / (m->t0_c + TS_KELVIN_0C) + log(ohm / m->r0_ohm) / m->beta_k;
    return 1.0 / inv_t - TS_KELVIN_0C;
}

double ts_ntc_beta_ohm(const ts_ntc_beta *m, double celsius)
{
    double k = celsius + TS_KELVIN_0C;
    double k0 = m->t0_c + TS_KELVIN_0C;
    return m->r0_ohm * exp(m->beta_k * (1.0 / k - 1.0 / k0));
}

double ts_ntc_sh_c(const ts_ntc_sh *m, double ohm)
{
    double l = log(ohm);
    return 1.0 / (m->a + m->b * l + m->c * l * l * l) - TS_KELVIN_0C;
}

int ts_ntc_sh_fit(ts_ntc_sh *out, const double t_c[3], const double r_ohm[3])
{
    /* Standard closed form for three points. */
    double l1 = log(r_ohm[0]), l2 = log(r_ohm[1]), l3 = log(r_ohm[2]);
    double y1 = 1.0 / (t_c[0] + TS_KELVIN_0C);
    double y2 = 1.0 / (t_c[1] + TS_KELVIN_0C);
    double y3 = 1.0 / (t_c[2] + TS_KELVIN_0C);
    if (l2 == l1 || l3 == l1 || l3 == l2) {
        return TS_ERR_RANGE;
    }
    double g2 = (y2 - y1) / (l2 - l1);
    double g3 = (y3 - y1) / (l3 - l1);
    double denom = (l1 + l2 + l3);
    if (denom == 0.0) {
        return TS_ERR_RANGE;
    }
    double c = (g3 - g2) / (l3 - l2) / denom;
    double b = g2 - c * (l1 * l1 + l1 * l2 + l2 * l2);
    double a = y1 - (b + l1 * l1 * c) * l1;
    out->a = a;
    out->b = b;
    out->c = c;
    return TS_OK;
}

int ts_ntc_beta_milli_c(const ts_ntc_divider *div, const ts_ntc_beta *m, uint32_t code,
                        int32_t *milli_c)
{
    double ohm = 0.0;
    int rc = ts_ntc_resistance(div, code, &ohm);
    if (rc != TS_OK) {
        return rc;
    }
    double mc = ts_ntc_beta_c(m, ohm) * 1000.0;
    if (mc > 1e6 || mc < -1e6) {
        return TS_ERR_RANGE;
    }
    *milli_c = (int32_t)(mc < 0.0 ? mc - 0.5 : mc + 0.5);
    return TS_OK;
}

int32_t ts_tmp117_milli_c(int16_t raw)
{
    /* 7.8125 m degC = 125/16; round half away from zero. */
    int32_t x = (int32_t)raw * 125;
    return x >= 0 ? (x + 8) / 16 : -((-x + 8) / 16);
}

int32_t ts_sensor_value_milli_c(int32_t val1, int32_t val2)
{
    int32_t frac = val2 >= 0 ? (val2 + 500) / 1000 : -((-val2 + 500) / 1000);
    return val1 * 1000 + frac;
}
