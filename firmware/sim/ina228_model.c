/* Simulated INA228 register file and conversion clock (behaviour per TI
 * SLYS021A sections 7.3.7 and 7.6; see ina228_model.h). */
#include "ina228_model.h"

#include <math.h>
#include <string.h>

#include "throttlescope/ina228.h"

void ts_ina228_model_init(ts_ina228_model *m, double shunt_ohm)
{
    memset(m, 0, sizeof *m);
    m->shunt_ohm = shunt_ohm;
    m->config = TS_INA228_RESET_CONFIG;
    m->adc_config = TS_INA228_RESET_ADC_CONFIG; /* continuous all, 1052 us, AVG 1 */
    m->shunt_cal = TS_INA228_RESET_SHUNT_CAL;
    m->device_id = 0x2281u;
    m->manufacturer_id = TS_INA228_MANUFACTURER_TI;
    m->diag_alrt = TS_INA228_RESET_DIAG_ALRT;
    m->die_temp_c = 25.0;
    m->res_die_temp_c = 25.0;
    m->transparent_hold_us = 20.0;
    m->accumulate_scale = 1.0;
}

static uint8_t adc_range(const ts_ina228_model *m)
{
    return (m->config & TS_INA228_CONFIG_ADCRANGE) ? 1u : 0u;
}

double ts_ina228_model_current_lsb(const ts_ina228_model *m)
{
    if (m->shunt_cal == 0u || m->shunt_ohm <= 0.0) {
        return 0.0;
    }
    double cal = (double)m->shunt_cal;
    if (adc_range(m)) {
        cal /= 4.0;
    }
    return cal / (13107.2e6 * m->shunt_ohm);
}

static int32_t clamp20(double x)
{
    double r = floor(x + 0.5);
    if (r > 524287.0) {
        return 524287;
    }
    if (r < -524288.0) {
        return -524288;
    }
    return (int32_t)r;
}

static void power_on(ts_ina228_model *m)
{
    ts_ina228_model keep = *m;
    ts_ina228_model_init(m, keep.shunt_ohm);
    m->vbus_v = keep.vbus_v;
    m->current_a = keep.current_a;
    m->die_temp_c = keep.die_temp_c;
    m->time_s = keep.time_s;
    m->transparent_hold_us = keep.transparent_hold_us;
    m->accumulate_scale = keep.accumulate_scale; /* the board's, not the chip's */
    m->fail_next_transfers = keep.fail_next_transfers;
    m->resets = keep.resets + 1u;
    m->conversions = keep.conversions;
    m->alert_edges = keep.alert_edges;
    m->last_edge_s = keep.last_edge_s;
    m->bad_width = keep.bad_width;
    memcpy(m->reads, keep.reads, sizeof m->reads);
    memcpy(m->writes, keep.writes, sizeof m->writes);
}

void ts_ina228_model_power_on_reset(ts_ina228_model *m)
{
    power_on(m);
}

static int width_of(uint8_t reg)
{
    switch (reg) {
    case TS_INA228_REG_VSHUNT:
    case TS_INA228_REG_VBUS:
    case TS_INA228_REG_CURRENT:
    case TS_INA228_REG_POWER:
        return 3;
    case TS_INA228_REG_ENERGY:
    case TS_INA228_REG_CHARGE:
        return 5;
    case TS_INA228_REG_CONFIG:
    case TS_INA228_REG_ADC_CONFIG:
    case TS_INA228_REG_SHUNT_CAL:
    case TS_INA228_REG_SHUNT_TEMPCO:
    case TS_INA228_REG_DIETEMP:
    case TS_INA228_REG_DIAG_ALRT:
    case TS_INA228_REG_MANUFACTURER_ID:
    case TS_INA228_REG_DEVICE_ID:
        return 2;
    default:
        return 0;
    }
}

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static int model_read(void *ctx, uint8_t reg, uint8_t *buf, size_t len)
{
    ts_ina228_model *m = (ts_ina228_model *)ctx;
    if (m->fail_next_transfers > 0u) {
        m->fail_next_transfers--;
        return -5; /* like -EIO from a NACK */
    }
    if (m->fail_reg_reads > 0u && reg == m->fail_reg) {
        m->fail_reg_reads--;
        return -5;
    }
    if (reg < 64u) {
        m->reads[reg]++;
    }
    int w = width_of(reg);
    if (w == 0 || (size_t)w != len) {
        m->bad_width++;
        return -22;
    }
    double lsb = ts_ina228_model_current_lsb(m);
    switch (reg) {
    case TS_INA228_REG_CONFIG:
        put16(buf, m->config);
        break;
    case TS_INA228_REG_ADC_CONFIG:
        put16(buf, m->adc_config);
        break;
    case TS_INA228_REG_SHUNT_CAL:
        put16(buf, m->shunt_cal);
        break;
    case TS_INA228_REG_SHUNT_TEMPCO:
        put16(buf, m->shunt_tempco);
        break;
    case TS_INA228_REG_MANUFACTURER_ID:
        put16(buf, m->manufacturer_id);
        break;
    case TS_INA228_REG_DEVICE_ID:
        put16(buf, m->device_id);
        break;
    case TS_INA228_REG_DIAG_ALRT:
        put16(buf, m->diag_alrt);
        if (m->diag_alrt & TS_INA228_DIAG_ALATCH) {
            /* Latch mode: the read clears the latched flags and releases ALERT.
             * Transparent mode: flags follow the conversions, reads do nothing. */
            m->diag_alrt &= (uint16_t)~TS_INA228_DIAG_CNVRF;
        }
        break;
    case TS_INA228_REG_VBUS:
        ts_ina228_encode_20(clamp20(m->res_vbus_v / (TS_INA228_VBUS_LSB_UV * 1e-6)), buf);
        break;
    case TS_INA228_REG_VSHUNT: {
        double vlsb = (adc_range(m) ? TS_INA228_VSHUNT_LSB_NV_RANGE1
                                    : TS_INA228_VSHUNT_LSB_NV_RANGE0) * 1e-9;
        ts_ina228_encode_20(clamp20(m->res_current_a * m->shunt_ohm / vlsb), buf);
        break;
    }
    case TS_INA228_REG_CURRENT:
        ts_ina228_encode_20(lsb > 0.0 ? clamp20(m->res_current_a / lsb) : 0, buf);
        break;
    case TS_INA228_REG_POWER: {
        double p = lsb > 0.0 ? floor(fabs(m->res_vbus_v * m->res_current_a) / (3.2 * lsb) + 0.5)
                             : 0.0;
        ts_ina228_encode_power(p > 16777215.0 ? 16777215u : (uint32_t)p, buf);
        break;
    }
    case TS_INA228_REG_ENERGY: {
        double e = lsb > 0.0 ? floor(m->energy_j / (16.0 * 3.2 * lsb)) : 0.0;
        ts_ina228_encode_energy((uint64_t)fmod(e, 1099511627776.0), buf);
        break;
    }
    case TS_INA228_REG_CHARGE: {
        double c = lsb > 0.0 ? floor(m->charge_c / lsb) : 0.0;
        ts_ina228_encode_charge((int64_t)fmod(c, 1099511627776.0), buf);
        break;
    }
    case TS_INA228_REG_DIETEMP: {
        double t = floor(m->res_die_temp_c / (TS_INA228_DIETEMP_LSB_MC * 1e-3) + 0.5);
        ts_ina228_encode_dietemp((int16_t)(t > 32767.0 ? 32767.0 : t < -32768.0 ? -32768.0 : t),
                                 buf);
        break;
    }
    default:
        return -22;
    }
    return 0;
}

static int model_write(void *ctx, uint8_t reg, const uint8_t *buf, size_t len)
{
    ts_ina228_model *m = (ts_ina228_model *)ctx;
    if (m->fail_next_transfers > 0u) {
        m->fail_next_transfers--;
        return -5;
    }
    if (reg < 64u) {
        m->writes[reg]++;
    }
    if (len != 2u || width_of(reg) != 2) {
        m->bad_width++;
        return -22;
    }
    uint16_t v = (uint16_t)(((uint16_t)buf[0] << 8) | buf[1]);
    switch (reg) {
    case TS_INA228_REG_CONFIG:
        if (v & TS_INA228_CONFIG_RST) {
            power_on(m);
            return 0;
        }
        if (v & TS_INA228_CONFIG_RSTACC) {
            m->energy_j = 0.0;
            m->charge_c = 0.0;
        }
        m->config = (uint16_t)(v & ~(TS_INA228_CONFIG_RST | TS_INA228_CONFIG_RSTACC));
        break;
    case TS_INA228_REG_ADC_CONFIG:
        m->adc_config = v;
        /* A write restarts the conversion in progress. */
        m->conv_elapsed_s = 0.0;
        m->sum_v = m->sum_i = m->sum_t = 0.0;
        break;
    case TS_INA228_REG_SHUNT_CAL:
        m->shunt_cal = (uint16_t)(v & 0x7FFFu);
        break;
    case TS_INA228_REG_SHUNT_TEMPCO:
        m->shunt_tempco = (uint16_t)(v & 0x3FFFu);
        break;
    case TS_INA228_REG_DIAG_ALRT:
        /* Only the control bits 15:12 are writable; flags stay. */
        m->diag_alrt = (uint16_t)((m->diag_alrt & 0x0FFFu) | (v & 0xF000u));
        break;
    default:
        return -22; /* read-only register */
    }
    return 0;
}

ts_bus ts_ina228_model_bus(ts_ina228_model *m)
{
    ts_bus b;
    b.read = model_read;
    b.write = model_write;
    b.ctx = m;
    return b;
}

void ts_ina228_model_set(ts_ina228_model *m, double vbus_v, double current_a, double die_temp_c)
{
    m->vbus_v = vbus_v;
    m->current_a = current_a;
    m->die_temp_c = die_temp_c;
}

double ts_ina228_model_period_s(const ts_ina228_model *m)
{
    ts_ina228_adc adc;
    unsigned mode = m->adc_config >> 12;
    if ((mode & 0x8u) == 0u || (mode & 0x7u) == 0u) {
        return 0.0; /* shutdown or triggered: no continuous conversions */
    }
    adc.vbus_ct = (ts_ina228_ct)((mode & 0x1u) ? (m->adc_config >> 9) & 7u : 0u);
    adc.vshunt_ct = (ts_ina228_ct)((m->adc_config >> 6) & 7u);
    adc.temp_ct = (ts_ina228_ct)((m->adc_config >> 3) & 7u);
    adc.avg = (ts_ina228_avg)(m->adc_config & 7u);
    adc.die_temp = (mode & 0x4u) != 0u;
    double one = ((mode & 0x1u) ? ts_ina228_ct_us(adc.vbus_ct) : 0.0) +
                 ((mode & 0x2u) ? ts_ina228_ct_us(adc.vshunt_ct) : 0.0) +
                 ((mode & 0x4u) ? ts_ina228_ct_us(adc.temp_ct) : 0.0);
    return one * ts_ina228_avg_count(adc.avg) * 1e-6;
}

double ts_ina228_model_until_conversion(const ts_ina228_model *m)
{
    double period = ts_ina228_model_period_s(m);
    return period > 0.0 ? period - m->conv_elapsed_s : 1e9;
}

bool ts_ina228_model_alert(const ts_ina228_model *m)
{
    return (m->diag_alrt & TS_INA228_DIAG_CNVR) && (m->diag_alrt & TS_INA228_DIAG_CNVRF);
}

static void expire_transparent_flag(ts_ina228_model *m)
{
    if (!(m->diag_alrt & TS_INA228_DIAG_ALATCH) && (m->diag_alrt & TS_INA228_DIAG_CNVRF) &&
        (m->time_s - m->flag_set_s) * 1e6 >= m->transparent_hold_us - 1e-9) {
        m->diag_alrt &= (uint16_t)~TS_INA228_DIAG_CNVRF;
    }
}

static void complete_conversion(ts_ina228_model *m, double period)
{
    m->res_vbus_v = m->sum_v / period;
    m->res_current_a = m->sum_i / period;
    m->res_die_temp_c = m->sum_t / period;
    m->sum_v = m->sum_i = m->sum_t = 0.0;
    m->conv_elapsed_s = 0.0;
    m->conversions++;
    bool was = ts_ina228_model_alert(m);
    m->diag_alrt |= TS_INA228_DIAG_CNVRF;
    m->flag_set_s = m->time_s;
    if (!was && ts_ina228_model_alert(m)) {
        m->alert_edges++;
        m->last_edge_s = m->time_s;
    }
}

void ts_ina228_model_advance(ts_ina228_model *m, double dt_s)
{
    double period = ts_ina228_model_period_s(m);
    if (period <= 0.0) {
        m->time_s += dt_s; /* shutdown: no conversions, no accumulation */
        return;
    }
    double remaining = dt_s;
    while (remaining > 0.0) {
        double step = period - m->conv_elapsed_s;
        if (step > remaining) {
            step = remaining;
        }
        /* A transparent flag clears once the next conversion is under way. */
        if (!(m->diag_alrt & TS_INA228_DIAG_ALATCH) && (m->diag_alrt & TS_INA228_DIAG_CNVRF)) {
            double left = m->transparent_hold_us * 1e-6 - (m->time_s - m->flag_set_s);
            if (left > 0.0 && left < step) {
                step = left;
            }
        }
        m->sum_v += m->vbus_v * step;
        m->sum_i += m->current_a * step;
        m->sum_t += m->die_temp_c * step;
        m->energy_j += fabs(m->vbus_v * m->current_a) * step * m->accumulate_scale;
        m->charge_c += m->current_a * step * m->accumulate_scale;
        m->conv_elapsed_s += step;
        m->time_s += step;
        remaining -= step;
        expire_transparent_flag(m);
        if (m->conv_elapsed_s >= period - 1e-12) {
            complete_conversion(m, period);
        }
    }
}
