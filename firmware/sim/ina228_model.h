/* A simulated INA228: the register file the real driver talks to over a
 * ts_bus, fed with physical values (bus volts, amps, die temperature) by a
 * device model. Used by the probe simulator and the host tests. */
#ifndef THROTTLESCOPE_SIM_INA228_MODEL_H
#define THROTTLESCOPE_SIM_INA228_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/bus.h"

typedef struct ts_ina228_model {
    double shunt_ohm;        /**< the physical shunt on the simulated board */
    /* Physical inputs. */
    double vbus_v;
    double current_a;
    double die_temp_c;
    /* Accumulated since reset, physical. */
    double energy_j;
    double charge_c;
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
    uint32_t reads[64];            /**< reads per register address */
    uint32_t writes[64];
    uint32_t bad_width;            /**< transfers with a wrong byte count */
    uint32_t resets;
} ts_ina228_model;

/** Power-on state for a board with this shunt. */
void ts_ina228_model_init(ts_ina228_model *m, double shunt_ohm);
/** A ts_bus over the model. */
ts_bus ts_ina228_model_bus(ts_ina228_model *m);
/** Set the measured quantities (takes effect for the next conversion). */
void ts_ina228_model_set(ts_ina228_model *m, double vbus_v, double current_a, double die_temp_c);
/** Integrate power and current over dt seconds into ENERGY/CHARGE; set CNVRF. */
void ts_ina228_model_advance(ts_ina228_model *m, double dt_s);
/** CURRENT_LSB implied by SHUNT_CAL and the shunt (0 when SHUNT_CAL is 0). */
double ts_ina228_model_current_lsb(const ts_ina228_model *m);

#endif
