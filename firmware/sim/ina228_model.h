/* A simulated INA228: the register file the real driver talks to over a
 * ts_bus, fed with physical values (bus volts, amps, die temperature) by a
 * device model, converting in continuous mode on its own clock.
 *
 * Follows TI SLYS021A where the firmware depends on it:
 * - Conversions complete every (VBUSCT + VSHCT [+ VTCT]) x AVG (ADC_CONFIG);
 *   each completion latches the interval's average into VBUS/VSHUNT/DIETEMP
 *   and sets CNVRF. ENERGY/CHARGE integrate at every conversion.
 * - DIAG_ALRT.ALATCH = 1 (latch): CNVRF, and ALERT when CNVR = 1, stay set
 *   until DIAG_ALRT is read. ALATCH = 0 (transparent): they clear by
 *   themselves when the next conversion starts (here transparent_hold_us
 *   after the completion; the datasheet gives no figure) and a read does
 *   not clear them (section 7.3.7, TI E2E 1391284).
 * - CONFIG.RST and an injected power-on reset restore every register's
 *   reset value (SHUNT_CAL 0x1000, ADC_CONFIG 0xFB68, DIAG_ALRT 0x0001) and
 *   restart ENERGY/CHARGE from 0.
 * - Injected I2C errors: the next N transfers fail as a NACK would. */
#ifndef THROTTLESCOPE_SIM_INA228_MODEL_H
#define THROTTLESCOPE_SIM_INA228_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/bus.h"

typedef struct ts_ina228_model {
    double shunt_ohm;        /**< the physical shunt on the simulated board */
    /* Physical inputs (piecewise constant between ts_ina228_model_set calls). */
    double vbus_v;
    double current_a;
    double die_temp_c;
    /* Accumulated since reset, physical. */
    double energy_j;
    double charge_c;
    /** ENERGY and CHARGE gain this many seconds of power and current per second of the
     *  conversion clock (1 by default; a device model played N x faster accumulates N x,
     *  so the accumulators close against power x time on the host's record clock). */
    double accumulate_scale;
    /* Conversion clock. */
    double time_s;           /**< model time */
    double conv_elapsed_s;   /**< time into the conversion in progress */
    double sum_v, sum_i, sum_t; /**< integrals over the conversion in progress */
    double flag_set_s;       /**< time CNVRF was last set */
    double transparent_hold_us; /**< ALATCH = 0: CNVRF lasts this long (default 20) */
    /* Latched results of the last completed conversion (physical). */
    double res_vbus_v, res_current_a, res_die_temp_c;
    /* Registers the host can write. */
    uint16_t config;
    uint16_t adc_config;
    uint16_t shunt_cal;
    uint16_t shunt_tempco;
    uint16_t diag_alrt;      /**< control bits and flags */
    uint16_t device_id;      /**< 0x2281 by default */
    uint16_t manufacturer_id;
    /* Fault injection and observation. */
    uint32_t fail_next_transfers;  /**< this many transfers fail (bus error) */
    uint8_t fail_reg;              /**< reads of this register fail... */
    uint32_t fail_reg_reads;       /**< ...this many times */
    uint32_t reads[64];            /**< reads per register address */
    uint32_t writes[64];
    uint32_t bad_width;            /**< transfers with a wrong byte count */
    uint32_t resets;               /**< RST writes and injected power-on resets */
    uint64_t conversions;          /**< conversions completed */
    uint64_t alert_edges;          /**< ALERT pin assertions */
    double last_edge_s;            /**< model time of the latest ALERT assertion */
} ts_ina228_model;

/** Power-on state for a board with this shunt. */
void ts_ina228_model_init(ts_ina228_model *m, double shunt_ohm);
/** A ts_bus over the model. */
ts_bus ts_ina228_model_bus(ts_ina228_model *m);
/** Set the measured quantities (from now on). */
void ts_ina228_model_set(ts_ina228_model *m, double vbus_v, double current_a, double die_temp_c);
/**
 * Run the chip for dt seconds: conversions complete on its clock, results,
 * flags and ALERT change as the datasheet says, ENERGY/CHARGE integrate.
 */
void ts_ina228_model_advance(ts_ina228_model *m, double dt_s);
/** Seconds until the conversion in progress completes (a large value in shutdown). */
double ts_ina228_model_until_conversion(const ts_ina228_model *m);
/** Conversion period in seconds from ADC_CONFIG (0 in shutdown). */
double ts_ina228_model_period_s(const ts_ina228_model *m);
/** ALERT pin asserted (conversion-ready function: CNVR and CNVRF). */
bool ts_ina228_model_alert(const ts_ina228_model *m);
/** Power-on reset (a dip on its supply, ESD): every register to its reset value. */
void ts_ina228_model_power_on_reset(ts_ina228_model *m);
/** CURRENT_LSB implied by SHUNT_CAL and the shunt (0 when SHUNT_CAL is 0). */
double ts_ina228_model_current_lsb(const ts_ina228_model *m);

#endif
