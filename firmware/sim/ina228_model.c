/* Simulated INA228 register file (behaviour per TI SLYS021 section 7.6). */
#include "ina228_model.h"

#include <math.h>
#include <string.h>

#include "throttlescope/ina228.h"

void ts_ina228_model_init(ts_ina228_model *m, double shunt_ohm)
{
    memset(m, 0, sizeof *m);
    m->shunt_ohm = shunt_ohm;
    m->adc_config = 0xFB68u; /* power-on default: continuous all, 1052 us, AVG 1 */
    m->device_id = 0x2281u;
    m->manufacturer_id = TS_INA228_MANUFACTURER_TI;
    m->diag_alrt = TS_INA228_DIAG_MEMSTAT;
    m->die_temp_c = 25.0;
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
    double shunt = m->shunt_ohm;
    double v = m->vbus_v, i = m->current_a, t = m->die_temp_c;
    uint32_t fail = m->fail_next_transfers;
    uint32_t resets = m->resets;
    uint32_t reads[64], writes[64];
    memcpy(reads, m->reads, sizeof reads);
    memcpy(writes, m->writes, sizeof writes);
    ts_ina228_model_init(m, shunt);
    m->vbus_v = v;
    m->current_a = i;
    m->die_temp_c = t;
    m->fail_next_transfers = fail;
    m->resets = resets + 1u;
    memcpy(m->reads, reads, sizeof reads);
    memcpy(m->writes, writes, sizeof writes);
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
        m->diag_alrt &= (uint16_t)~TS_INA228_DIAG_CNVRF; /* cleared by the read */
        break;
    case TS_INA228_REG_VBUS:
        ts_ina228_encode_20(clamp20(m->vbus_v / (TS_INA228_VBUS_LSB_UV * 1e-6)), buf);
        break;
    case TS_INA228_REG_VSHUNT: {
        double vlsb = (adc_range(m) ? TS_INA228_VSHUNT_LSB_NV_RANGE1
                                    : TS_INA228_VSHUNT_LSB_NV_RANGE0) * 1e-9;
        ts_ina228_encode_20(clamp20(m->current_a * m->shunt_ohm / vlsb), buf);
        break;
    }
    case TS_INA228_REG_CURRENT:
        ts_ina228_encode_20(lsb > 0.0 ? clamp20(m->current_a / lsb) : 0, buf);
        break;
    case TS_INA228_REG_POWER: {
        double p = lsb > 0.0 ? floor(fabs(m->vbus_v * m->current_a) / (3.2 * lsb) + 0.5) : 0.0;
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
        double t = floor(m->die_temp_c / (TS_INA228_DIETEMP_LSB_MC * 1e-3) + 0.5);
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

void ts_ina228_model_advance(ts_ina228_model *m, double dt_s)
{
    if ((m->adc_config >> 12) == 0u) {
        return; /* shutdown: no conversions, no accumulation */
    }
    m->energy_j += fabs(m->vbus_v * m->current_a) * dt_s;
    m->charge_c += m->current_a * dt_s;
    m->diag_alrt |= TS_INA228_DIAG_CNVRF;
}
