/* INA228 driver: identity, reset, calibration, ADC setup, reads, conversions.
 * Register facts from TI SLYS021 (INA228 datasheet) section 7.6. */
#include "throttlescope/ina228.h"

#include <stddef.h>

/* Conversion times in us for codes 0..7. */
static const uint16_t ct_us[8] = {50u, 84u, 150u, 280u, 540u, 1052u, 2074u, 4120u};
/* Averaging counts for codes 0..7. */
static const uint16_t avg_count[8] = {1u, 4u, 16u, 64u, 128u, 256u, 512u, 1024u};

static int write16(ts_ina228 *dev, uint8_t reg, uint16_t value)
{
    uint8_t b[2] = {(uint8_t)(value >> 8), (uint8_t)(value & 0xFFu)};
    return dev->bus.write(dev->bus.ctx, reg, b, sizeof b) == 0 ? TS_OK : TS_ERR_BUS;
}

static int read_bytes(ts_ina228 *dev, uint8_t reg, uint8_t *b, size_t n)
{
    return dev->bus.read(dev->bus.ctx, reg, b, n) == 0 ? TS_OK : TS_ERR_BUS;
}

static int read16(ts_ina228 *dev, uint8_t reg, uint16_t *value)
{
    uint8_t b[2];
    int rc = read_bytes(dev, reg, b, sizeof b);
    if (rc == TS_OK) {
        *value = (uint16_t)(((uint16_t)b[0] << 8) | b[1]);
    }
    return rc;
}

int ts_ina228_calibrate(ts_ina228_calibration *out, uint32_t shunt_micro_ohm,
                        uint32_t max_current_ma, uint8_t adc_range)
{
    if (shunt_micro_ohm == 0u || max_current_ma == 0u || adc_range > 1u) {
        return TS_ERR_RANGE;
    }
    /* SHUNT_CAL = 13107.2e6 * (Imax / 2^19) * R = 25000 * Imax[A] * R[ohm]
     *           = Imax[mA] * R[uohm] / 40000, times 4 in the 40.96 mV range. */
    uint64_t num = (uint64_t)max_current_ma * shunt_micro_ohm * (adc_range ? 4u : 1u);
    uint64_t cal = (num + 20000u) / 40000u;
    /* The shunt voltage at max current must fit the range:
     * Imax * R <= 163.84 mV (40.96 mV): mA x uohm = 1e-9 V, so num <= 163.84e6 (x4 folded in). */
    if (num > 163840000ull || cal == 0u || cal > TS_INA228_SHUNT_CAL_MAX) {
        return TS_ERR_RANGE;
    }
    out->shunt_micro_ohm = shunt_micro_ohm;
    out->max_current_ma = max_current_ma;
    out->adc_range = adc_range;
    out->shunt_cal = (uint16_t)cal;
    out->current_lsb_a = (double)max_current_ma / 1000.0 / 524288.0;
    return TS_OK;
}

void ts_ina228_init(ts_ina228 *dev, const ts_bus *bus, const ts_ina228_calibration *cal)
{
    dev->bus = *bus;
    dev->cal = *cal;
    dev->config = cal->adc_range ? TS_INA228_CONFIG_ADCRANGE : 0u;
}

int ts_ina228_check_identity(ts_ina228 *dev, uint16_t *device_id)
{
    uint16_t mfr = 0;
    uint16_t id = 0;
    int rc = read16(dev, TS_INA228_REG_MANUFACTURER_ID, &mfr);
    if (rc == TS_OK) {
        rc = read16(dev, TS_INA228_REG_DEVICE_ID, &id);
    }
    if (rc != TS_OK) {
        return rc;
    }
    if (device_id != NULL) {
        *device_id = id;
    }
    if (mfr != TS_INA228_MANUFACTURER_TI || (id >> 4) != TS_INA228_DIE_ID) {
        return TS_ERR_IDENTITY;
    }
    return TS_OK;
}

int ts_ina228_reset(ts_ina228 *dev)
{
    int rc = write16(dev, TS_INA228_REG_CONFIG, TS_INA228_CONFIG_RST);
    if (rc == TS_OK) {
        rc = write16(dev, TS_INA228_REG_CONFIG, dev->config);
    }
    if (rc == TS_OK) {
        rc = write16(dev, TS_INA228_REG_SHUNT_CAL, dev->cal.shunt_cal);
    }
    return rc;
}

uint16_t ts_ina228_adc_config_value(const ts_ina228_adc *adc)
{
    uint16_t mode = adc->die_temp ? TS_INA228_MODE_CONT_ALL : TS_INA228_MODE_CONT_BUS_SHUNT;
    return (uint16_t)((mode << 12) | (((unsigned)adc->vbus_ct & 7u) << 9) |
                      (((unsigned)adc->vshunt_ct & 7u) << 6) |
                      (((unsigned)adc->temp_ct & 7u) << 3) | ((unsigned)adc->avg & 7u));
}

uint16_t ts_ina228_diag_control_value(const ts_ina228_adc *adc)
{
    return (uint16_t)((adc->alert_on_ready ? TS_INA228_DIAG_CNVR : 0u) |
                      (adc->latch ? TS_INA228_DIAG_ALATCH : 0u));
}

int ts_ina228_configure_adc(ts_ina228 *dev, const ts_ina228_adc *adc)
{
    int rc = write16(dev, TS_INA228_REG_ADC_CONFIG, ts_ina228_adc_config_value(adc));
    if (rc == TS_OK) {
        rc = write16(dev, TS_INA228_REG_DIAG_ALRT, ts_ina228_diag_control_value(adc));
    }
    return rc;
}

int ts_ina228_read_reg16(ts_ina228 *dev, uint8_t reg, uint16_t *value)
{
    return read16(dev, reg, value);
}

/* Visit every code combination for a setup; die temperature adds VTCT. */
#define FOR_EACH_CODE(adc, c, body)                                                   \
    for (unsigned a_ = 0; a_ < 8u; a_++) {                                            \
        for (unsigned vb_ = 0; vb_ < 8u; vb_++) {                                     \
            for (unsigned vs_ = 0; vs_ < 8u; vs_++) {                                 \
                for (unsigned t_ = 0; t_ < ((adc)->die_temp ? 8u : 1u); t_++) {       \
                    ts_ina228_adc c = *(adc);                                         \
                    c.avg = (ts_ina228_avg)a_;                                        \
                    c.vbus_ct = (ts_ina228_ct)vb_;                                    \
                    c.vshunt_ct = (ts_ina228_ct)vs_;                                  \
                    c.temp_ct = (ts_ina228_ct)t_;                                     \
                    body                                                              \
                }                                                                     \
            }                                                                         \
        }                                                                             \
    }

static uint32_t abs_diff(uint32_t a, uint32_t b)
{
    return a > b ? a - b : b - a;
}

int ts_ina228_match_rate(uint32_t rate_hz, ts_ina228_adc *adc)
{
    if (rate_hz == 0u) {
        return TS_ERR_RANGE;
    }
    uint32_t target = (1000000u + rate_hz / 2u) / rate_hz;
    uint32_t min_err = UINT32_MAX;
    FOR_EACH_CODE(adc, c, {
        uint32_t err = abs_diff(ts_ina228_conversion_period_us(&c), target);
        min_err = err < min_err ? err : min_err;
    })
    if ((uint64_t)min_err * 10u > target) {
        return TS_ERR_RANGE;
    }
    /* Within 2 % of the period (or the closest there is): the most averaging,
     * then equal bus and shunt times, then the closest, then a short VTCT. */
    uint32_t accept = target / 50u > min_err ? target / 50u : min_err;
    int64_t best_score = -1;
    ts_ina228_adc best = *adc;
    FOR_EACH_CODE(adc, c, {
        uint32_t err = abs_diff(ts_ina228_conversion_period_us(&c), target);
        if (err <= accept) {
            int64_t score = ((int64_t)c.avg << 40) + ((int64_t)(c.vbus_ct == c.vshunt_ct) << 36) +
                            ((int64_t)(accept - err) << 4) + (int64_t)(8u - (unsigned)c.temp_ct);
            if (score > best_score) {
                best_score = score;
                best = c;
            }
        }
    })
    *adc = best;
    return TS_OK;
}

uint32_t ts_ina228_read_bits(uint32_t n_bytes)
{
    /* START, address+W, ACK (9), pointer byte + ACK (9), repeated START,
     * address+R + ACK (9), n data bytes + ACK/NACK (9 each), STOP; START, Sr
     * and STOP count as about one bit time each. */
    return 3u + 27u + 9u * n_bytes;
}

uint32_t ts_ina228_sample_bus_us(uint32_t channels, uint32_t bus_hz, uint32_t overhead_us)
{
    uint32_t bits = ts_ina228_read_bits(2u); /* DIAG_ALRT */
    uint32_t txns = 1u;
    if (channels & TS_CH_VBUS) {
        bits += ts_ina228_read_bits(3u);
        txns++;
    }
    if (channels & TS_CH_VSHUNT) {
        bits += ts_ina228_read_bits(3u);
        txns++;
    }
    if (channels & TS_CH_CURRENT) {
        bits += ts_ina228_read_bits(3u);
        txns++;
    }
    if (channels & TS_CH_POWER) {
        bits += ts_ina228_read_bits(3u);
        txns++;
    }
    bits += ts_ina228_read_bits(5u); /* at most one slow register per sample */
    txns++;
    if (bus_hz == 0u) {
        return UINT32_MAX;
    }
    uint64_t us = ((uint64_t)bits * 1000000u + bus_hz - 1u) / bus_hz + (uint64_t)txns * overhead_us;
    return us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
}

int ts_ina228_read_raw(ts_ina228 *dev, uint8_t reg, uint32_t width, uint64_t *value)
{
    uint8_t b[5];
    if (width < 1u || width > 5u) {
        return TS_ERR_RANGE;
    }
    int rc = read_bytes(dev, reg, b, width);
    if (rc == TS_OK) {
        uint64_t v = 0;
        for (uint32_t i = 0; i < width; i++) {
            v = (v << 8) | b[i];
        }
        *value = v;
    }
    return rc;
}

int ts_ina228_shutdown(ts_ina228 *dev)
{
    return write16(dev, TS_INA228_REG_ADC_CONFIG, 0u);
}

int ts_ina228_reset_accumulators(ts_ina228 *dev)
{
    return write16(dev, TS_INA228_REG_CONFIG, (uint16_t)(dev->config | TS_INA228_CONFIG_RSTACC));
}

int ts_ina228_conversion_ready(ts_ina228 *dev, bool *ready, uint16_t *diag)
{
    uint16_t v = 0;
    int rc = read16(dev, TS_INA228_REG_DIAG_ALRT, &v);
    if (rc == TS_OK) {
        *ready = (v & TS_INA228_DIAG_CNVRF) != 0u;
        if (diag != NULL) {
            *diag = v;
        }
    }
    return rc;
}

int ts_ina228_read_fast(ts_ina228 *dev, uint32_t channels, ts_ina228_raw *out)
{
    uint8_t b[3];
    int rc = TS_OK;

    out->vbus = 0;
    out->vshunt = 0;
    out->current = 0;
    out->power = 0;
    out->die_temp = 0;
    if ((channels & TS_CH_VBUS) && rc == TS_OK) {
        rc = read_bytes(dev, TS_INA228_REG_VBUS, b, 3);
        out->vbus = ts_ina228_decode_20(b);
    }
    if ((channels & TS_CH_VSHUNT) && rc == TS_OK) {
        rc = read_bytes(dev, TS_INA228_REG_VSHUNT, b, 3);
        out->vshunt = ts_ina228_decode_20(b);
    }
    if ((channels & TS_CH_CURRENT) && rc == TS_OK) {
        rc = read_bytes(dev, TS_INA228_REG_CURRENT, b, 3);
        out->current = ts_ina228_decode_20(b);
    }
    if ((channels & TS_CH_POWER) && rc == TS_OK) {
        rc = read_bytes(dev, TS_INA228_REG_POWER, b, 3);
        out->power = ts_ina228_decode_power(b);
    }
    if ((channels & TS_CH_DIE_TEMP) && rc == TS_OK) {
        rc = read_bytes(dev, TS_INA228_REG_DIETEMP, b, 2);
        out->die_temp = ts_ina228_decode_dietemp(b);
    }
    return rc;
}

int ts_ina228_read_accumulators(ts_ina228 *dev, uint64_t *energy, int64_t *charge)
{
    uint8_t b[5];
    int rc = read_bytes(dev, TS_INA228_REG_ENERGY, b, 5);
    if (rc == TS_OK) {
        *energy = ts_ina228_decode_energy(b);
        rc = read_bytes(dev, TS_INA228_REG_CHARGE, b, 5);
    }
    if (rc == TS_OK) {
        *charge = ts_ina228_decode_charge(b);
    }
    return rc;
}

uint32_t ts_ina228_ct_us(ts_ina228_ct ct)
{
    return (unsigned)ct < 8u ? ct_us[ct] : 0u;
}

uint32_t ts_ina228_avg_count(ts_ina228_avg avg)
{
    return (unsigned)avg < 8u ? avg_count[avg] : 0u;
}

uint32_t ts_ina228_conversion_period_us(const ts_ina228_adc *adc)
{
    uint32_t one = ts_ina228_ct_us(adc->vbus_ct) + ts_ina228_ct_us(adc->vshunt_ct);
    if (adc->die_temp) {
        one += ts_ina228_ct_us(adc->temp_ct);
    }
    return one * ts_ina228_avg_count(adc->avg);
}

int32_t ts_ina228_decode_20(const uint8_t b[3])
{
    uint32_t v = ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
    v >>= 4;                                   /* bits 23:4 -> 19:0 */
    if (v & 0x80000u) {
        return (int32_t)v - (int32_t)0x100000; /* two's complement, 20 bits */
    }
    return (int32_t)v;
}

uint32_t ts_ina228_decode_power(const uint8_t b[3])
{
    return ((uint32_t)b[0] << 16) | ((uint32_t)b[1] << 8) | b[2];
}

uint64_t ts_ina228_decode_energy(const uint8_t b[5])
{
    return ((uint64_t)b[0] << 32) | ((uint64_t)b[1] << 24) | ((uint64_t)b[2] << 16) |
           ((uint64_t)b[3] << 8) | b[4];
}

int64_t ts_ina228_decode_charge(const uint8_t b[5])
{
    uint64_t v = ts_ina228_decode_energy(b);
    if (v & (1ull << 39)) {
        return (int64_t)v - (int64_t)(1ll << 40);
    }
    return (int64_t)v;
}

int16_t ts_ina228_decode_dietemp(const uint8_t b[2])
{
    uint16_t v = (uint16_t)(((uint16_t)b[0] << 8) | b[1]);
    return v >= 0x8000u ? (int16_t)((int32_t)v - 0x10000) : (int16_t)v;
}

void ts_ina228_encode_20(int32_t raw, uint8_t b[3])
{
    uint32_t v = ((uint32_t)raw & 0xFFFFFu) << 4;
    b[0] = (uint8_t)(v >> 16);
    b[1] = (uint8_t)(v >> 8);
    b[2] = (uint8_t)v;
}

void ts_ina228_encode_power(uint32_t raw, uint8_t b[3])
{
    b[0] = (uint8_t)(raw >> 16);
    b[1] = (uint8_t)(raw >> 8);
    b[2] = (uint8_t)raw;
}

void ts_ina228_encode_energy(uint64_t raw, uint8_t b[5])
{
    b[0] = (uint8_t)(raw >> 32);
    b[1] = (uint8_t)(raw >> 24);
    b[2] = (uint8_t)(raw >> 16);
    b[3] = (uint8_t)(raw >> 8);
    b[4] = (uint8_t)raw;
}

void ts_ina228_encode_charge(int64_t raw, uint8_t b[5])
{
    ts_ina228_encode_energy((uint64_t)raw & 0xFFFFFFFFFFull, b);
}

void ts_ina228_encode_dietemp(int16_t raw, uint8_t b[2])
{
    uint16_t v = (uint16_t)raw;
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

double ts_ina228_vbus_v(int32_t raw)
{
    return (double)raw * TS_INA228_VBUS_LSB_UV * 1e-6;
}

double ts_ina228_vshunt_v(int32_t raw, uint8_t adc_range)
{
    return (double)raw *
           (adc_range ? TS_INA228_VSHUNT_LSB_NV_RANGE1 : TS_INA228_VSHUNT_LSB_NV_RANGE0) * 1e-9;
}

double ts_ina228_current_a(int32_t raw, double current_lsb_a)
{
    return (double)raw * current_lsb_a;
}

double ts_ina228_power_w(uint32_t raw, double current_lsb_a)
{
    return (double)raw * 3.2 * current_lsb_a;
}

double ts_ina228_energy_j(uint64_t raw, double current_lsb_a)
{
    return (double)raw * 16.0 * 3.2 * current_lsb_a;
}

double ts_ina228_charge_c(int64_t raw, double current_lsb_a)
{
    return (double)raw * current_lsb_a;
}

double ts_ina228_die_temp_c(int16_t raw)
{
    return (double)raw * TS_INA228_DIETEMP_LSB_MC * 1e-3;
}
