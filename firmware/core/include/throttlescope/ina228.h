/* INA228 85 V, 20-bit power/energy/charge monitor (TI SLYS021): registers,
 * configuration and raw-value conversion over a ts_bus. No allocation. */
#ifndef THROTTLESCOPE_INA228_H
#define THROTTLESCOPE_INA228_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/bus.h"
#include "throttlescope/status.h"

/* Register addresses (datasheet table 7-3) and their widths in bytes. */
#define TS_INA228_REG_CONFIG 0x00u          /* 2 */
#define TS_INA228_REG_ADC_CONFIG 0x01u      /* 2 */
#define TS_INA228_REG_SHUNT_CAL 0x02u       /* 2 */
#define TS_INA228_REG_SHUNT_TEMPCO 0x03u    /* 2 */
#define TS_INA228_REG_VSHUNT 0x04u          /* 3 */
#define TS_INA228_REG_VBUS 0x05u            /* 3 */
#define TS_INA228_REG_DIETEMP 0x06u         /* 2 */
#define TS_INA228_REG_CURRENT 0x07u         /* 3 */
#define TS_INA228_REG_POWER 0x08u           /* 3 */
#define TS_INA228_REG_ENERGY 0x09u          /* 5 */
#define TS_INA228_REG_CHARGE 0x0Au          /* 5 */
#define TS_INA228_REG_DIAG_ALRT 0x0Bu       /* 2 */
#define TS_INA228_REG_MANUFACTURER_ID 0x3Eu /* 2 */
#define TS_INA228_REG_DEVICE_ID 0x3Fu       /* 2 */

/* CONFIG bits. */
#define TS_INA228_CONFIG_RST (1u << 15)
#define TS_INA228_CONFIG_RSTACC (1u << 14)
#define TS_INA228_CONFIG_ADCRANGE (1u << 4)

/* ADC_CONFIG fields: MODE 15:12, VBUSCT 11:9, VSHCT 8:6, VTCT 5:3, AVG 2:0. */
#define TS_INA228_MODE_CONT_BUS_SHUNT 0xBu
#define TS_INA228_MODE_CONT_ALL 0xFu /* bus, shunt and die temperature */

/* DIAG_ALRT bits (datasheet 7.6.1.12). */
#define TS_INA228_DIAG_ALATCH (1u << 15)   /* 1: flags and ALERT held until DIAG_ALRT is read */
#define TS_INA228_DIAG_CNVR (1u << 14)     /* conversion ready drives ALERT */
#define TS_INA228_DIAG_SLOWALERT (1u << 13)
#define TS_INA228_DIAG_APOL (1u << 12)
#define TS_INA228_DIAG_ENERGYOF (1u << 11)
#define TS_INA228_DIAG_CHARGEOF (1u << 10)
#define TS_INA228_DIAG_MATHOF (1u << 9)
#define TS_INA228_DIAG_TMPOL (1u << 7)
#define TS_INA228_DIAG_SHNTOL (1u << 6)
#define TS_INA228_DIAG_SHNTUL (1u << 5)
#define TS_INA228_DIAG_BUSOL (1u << 4)
#define TS_INA228_DIAG_BUSUL (1u << 3)
#define TS_INA228_DIAG_POL (1u << 2)
#define TS_INA228_DIAG_CNVRF (1u << 1)     /* conversion ready flag */
#define TS_INA228_DIAG_MEMSTAT (1u << 0)   /* 1: trim memory checksum ok */
/** Control bits the host may write (15:12); the rest are flags. */
#define TS_INA228_DIAG_CONTROL_MASK 0xF000u

/* Power-on / reset values (datasheet table 7-6). */
#define TS_INA228_RESET_CONFIG 0x0000u
#define TS_INA228_RESET_ADC_CONFIG 0xFB68u
#define TS_INA228_RESET_SHUNT_CAL 0x1000u
#define TS_INA228_RESET_DIAG_ALRT 0x0001u

/* Identity. DEVICE_ID holds DIEID (0x228) in bits 15:4, revision in 3:0. */
#define TS_INA228_MANUFACTURER_TI 0x5449u
#define TS_INA228_DIE_ID 0x228u

/* Fixed LSBs. */
#define TS_INA228_VBUS_LSB_UV 195.3125
#define TS_INA228_VSHUNT_LSB_NV_RANGE0 312.5
#define TS_INA228_VSHUNT_LSB_NV_RANGE1 78.125
#define TS_INA228_DIETEMP_LSB_MC 7.8125
/** Largest SHUNT_CAL (15-bit field). */
#define TS_INA228_SHUNT_CAL_MAX 0x7FFFu

/** Conversion time codes (VBUSCT/VSHCT/VTCT), same values as the proto. */
typedef enum ts_ina228_ct {
    TS_INA228_CT_50US = 0,
    TS_INA228_CT_84US,
    TS_INA228_CT_150US,
    TS_INA228_CT_280US,
    TS_INA228_CT_540US,
    TS_INA228_CT_1052US,
    TS_INA228_CT_2074US,
    TS_INA228_CT_4120US
} ts_ina228_ct;

/** Averaging codes (AVG), same values as the proto. */
typedef enum ts_ina228_avg {
    TS_INA228_AVG_1 = 0,
    TS_INA228_AVG_4,
    TS_INA228_AVG_16,
    TS_INA228_AVG_64,
    TS_INA228_AVG_128,
    TS_INA228_AVG_256,
    TS_INA228_AVG_512,
    TS_INA228_AVG_1024
} ts_ina228_avg;

/** Calibration derived from the shunt and the largest expected current. */
typedef struct ts_ina228_calibration {
    uint32_t shunt_micro_ohm;
    uint32_t max_current_ma;
    uint8_t adc_range;     /**< 0: +-163.84 mV, 1: +-40.96 mV */
    uint16_t shunt_cal;    /**< SHUNT_CAL register value */
    double current_lsb_a;  /**< max_current / 2^19 */
} ts_ina228_calibration;

/** ADC setup for continuous conversions. */
typedef struct ts_ina228_adc {
    ts_ina228_ct vbus_ct;
    ts_ina228_ct vshunt_ct;
    ts_ina228_ct temp_ct;
    ts_ina228_avg avg;
    bool die_temp;      /**< also convert die temperature (MODE 0xF, else 0xB) */
    bool alert_on_ready; /**< drive the ALERT pin on conversion ready (CNVR) */
    bool latch;         /**< ALATCH: hold CNVRF/ALERT until DIAG_ALRT is read */
} ts_ina228_adc;

/** One INA228 on a bus. */
typedef struct ts_ina228 {
    ts_bus bus;
    ts_ina228_calibration cal;
    uint16_t config;   /**< last CONFIG written (RSTACC is added on top) */
} ts_ina228;

/** Raw fast-channel values of one conversion (each as its register decodes). */
typedef struct ts_ina228_raw {
    int32_t vbus;     /**< 20-bit signed, LSB 195.3125 uV */
    int32_t vshunt;   /**< 20-bit signed, LSB per ADC range */
    int32_t current;  /**< 20-bit signed, LSB current_lsb_a */
    uint32_t power;   /**< 24-bit unsigned, LSB 3.2 x current_lsb_a W */
    int16_t die_temp; /**< 16-bit signed, LSB 7.8125 m degC */
} ts_ina228_raw;

/* Fast channel selection for ts_ina228_read_fast (same bits as proto Channel). */
#define TS_CH_VBUS 0x01u
#define TS_CH_VSHUNT 0x02u
#define TS_CH_CURRENT 0x04u
#define TS_CH_POWER 0x08u
#define TS_CH_DIE_TEMP 0x10u /* core-internal: die temperature */
#define TS_CH_DEFAULT (TS_CH_VBUS | TS_CH_VSHUNT | TS_CH_CURRENT | TS_CH_POWER)

/**
 * SHUNT_CAL = 13107.2e6 x CURRENT_LSB x R_SHUNT (x4 with ADCRANGE=1), with
 * CURRENT_LSB = max_current / 2^19. Fails with TS_ERR_RANGE when the shunt
 * voltage at max current exceeds the ADC range or an input is zero.
 */
int ts_ina228_calibrate(ts_ina228_calibration *out, uint32_t shunt_micro_ohm,
                        uint32_t max_current_ma, uint8_t adc_range);

/** Bind a device to a bus and a calibration (no bus traffic). */
void ts_ina228_init(ts_ina228 *dev, const ts_bus *bus, const ts_ina228_calibration *cal);

/** Read MANUFACTURER_ID and DEVICE_ID; TS_ERR_IDENTITY when not an INA228. */
int ts_ina228_check_identity(ts_ina228 *dev, uint16_t *device_id);

/** Full reset (CONFIG.RST), then write CONFIG (ADCRANGE) and SHUNT_CAL. */
int ts_ina228_reset(ts_ina228 *dev);

/** Write ADC_CONFIG for continuous conversions and DIAG_ALRT (CNVR, ALATCH). */
int ts_ina228_configure_adc(ts_ina228 *dev, const ts_ina228_adc *adc);

/** DIAG_ALRT control bits (CNVR, ALATCH) for a setup (pure). */
uint16_t ts_ina228_diag_control_value(const ts_ina228_adc *adc);

/** Read a 16-bit register (CONFIG, ADC_CONFIG, SHUNT_CAL, DIAG_ALRT...). */
int ts_ina228_read_reg16(ts_ina228 *dev, uint8_t reg, uint16_t *value);

/**
 * Pick VBUSCT, VSHCT, VTCT and AVG so one conversion (CT sum x AVG) lasts as
 * close as possible to 1/rate_hz: one ALERT, one sample, averaging its whole
 * interval. Ties prefer more averaging, then equal bus and shunt times.
 * Fills the timing fields of adc (die_temp is an input). TS_ERR_RANGE when
 * rate_hz is 0 or no code comes within 10 % of the period.
 */
int ts_ina228_match_rate(uint32_t rate_hz, ts_ina228_adc *adc);

/** Bit times of one register read of n data bytes (pointer write + repeated start). */
uint32_t ts_ina228_read_bits(uint32_t n_bytes);
/**
 * Worst-case bus time of one sample in microseconds at bus_hz with
 * overhead_us per transaction: DIAG_ALRT, the channels (TS_CH_*), and one
 * slow 5-byte register (ENERGY/CHARGE). The conversion period must not be
 * shorter, or one sample's reads would span two conversions.
 */
uint32_t ts_ina228_sample_bus_us(uint32_t channels, uint32_t bus_hz, uint32_t overhead_us);

/** ADC_CONFIG value for a setup (pure). */
uint16_t ts_ina228_adc_config_value(const ts_ina228_adc *adc);

/** Put the ADC into shutdown (MODE 0). */
int ts_ina228_shutdown(ts_ina228 *dev);

/** Zero ENERGY and CHARGE (CONFIG.RSTACC). */
int ts_ina228_reset_accumulators(ts_ina228 *dev);

/** Read DIAG_ALRT (clears CNVRF); *ready = CNVRF. diag may be NULL. */
int ts_ina228_conversion_ready(ts_ina228 *dev, bool *ready, uint16_t *diag);

/** Read the channels in mask (TS_CH_*); channels not read are left zero. */
int ts_ina228_read_fast(ts_ina228 *dev, uint32_t channels, ts_ina228_raw *out);

/** Read ENERGY (40-bit unsigned) and CHARGE (40-bit signed). */
int ts_ina228_read_accumulators(ts_ina228 *dev, uint64_t *energy, int64_t *charge);

/** Read a register of `width` bytes (2, 3 or 5) as raw big-endian bits. */
int ts_ina228_read_raw(ts_ina228 *dev, uint8_t reg, uint32_t width, uint64_t *value);

/** Conversion time in microseconds of a ts_ina228_ct code (0 if invalid). */
uint32_t ts_ina228_ct_us(ts_ina228_ct ct);

/** Number of averaged conversions of a ts_ina228_avg code (0 if invalid). */
uint32_t ts_ina228_avg_count(ts_ina228_avg avg);

/** Microseconds between results in continuous mode for an ADC setup. */
uint32_t ts_ina228_conversion_period_us(const ts_ina228_adc *adc);

/* Register decoding (big-endian bytes as read from the bus). */
/** VSHUNT/VBUS/CURRENT: 20-bit two's complement in bits 23:4 of 3 bytes. */
int32_t ts_ina228_decode_20(const uint8_t b[3]);
/** POWER: 24-bit unsigned. */
uint32_t ts_ina228_decode_power(const uint8_t b[3]);
/** ENERGY: 40-bit unsigned. */
uint64_t ts_ina228_decode_energy(const uint8_t b[5]);
/** CHARGE: 40-bit two's complement, sign-extended. */
int64_t ts_ina228_decode_charge(const uint8_t b[5]);
/** DIETEMP: 16-bit two's complement. */
int16_t ts_ina228_decode_dietemp(const uint8_t b[2]);

/* Register encoding, the inverse (used by the simulator's register file). */
void ts_ina228_encode_20(int32_t raw, uint8_t b[3]);
void ts_ina228_encode_power(uint32_t raw, uint8_t b[3]);
void ts_ina228_encode_energy(uint64_t raw, uint8_t b[5]);
void ts_ina228_encode_charge(int64_t raw, uint8_t b[5]);
void ts_ina228_encode_dietemp(int16_t raw, uint8_t b[2]);

/* Physical units from raw values. */
double ts_ina228_vbus_v(int32_t raw);
double ts_ina228_vshunt_v(int32_t raw, uint8_t adc_range);
double ts_ina228_current_a(int32_t raw, double current_lsb_a);
double ts_ina228_power_w(uint32_t raw, double current_lsb_a);
double ts_ina228_energy_j(uint64_t raw, double current_lsb_a);
double ts_ina228_charge_c(int64_t raw, double current_lsb_a);
double ts_ina228_die_temp_c(int16_t raw);

#endif
