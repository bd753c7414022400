/* The device under test as the probe sees it: bus power from an activity
 * level, enclosure temperature from a first-order thermal RC model. */
#ifndef THROTTLESCOPE_SIM_DUT_MODEL_H
#define THROTTLESCOPE_SIM_DUT_MODEL_H

#include <stdint.h>

typedef struct ts_dut_params {
    double vbus_v;        /**< bus voltage */
    double idle_w;        /**< power at activity 0 */
    double active_w;      /**< power at activity 1 */
    double ambient_c;     /**< ambient temperature */
    double initial_c;     /**< enclosure temperature at the start */
    double rth_c_per_w;   /**< thermal resistance enclosure -> ambient */
    double tau_s;         /**< thermal time constant */
    double time_scale;    /**< model seconds per real second */
} ts_dut_params;

typedef struct ts_dut {
    ts_dut_params p;
    double load;          /**< activity 0..1 */
    double temp_c;        /**< enclosure temperature */
    uint64_t rng;         /**< noise state (xorshift64*) */
} ts_dut;

/** Start at the initial temperature, activity 0. */
void ts_dut_init(ts_dut *d, const ts_dut_params *p, uint64_t seed);
/** Set the activity (clamped to 0..1). */
void ts_dut_set_load(ts_dut *d, double load);
/** Bus power the drive asks for now: idle + (active - idle) x load. */
double ts_dut_power_w(const ts_dut *d);
/**
 * Advance the thermal model by dt real seconds (scaled by time_scale) with
 * power_w dissipated: the power the port delivered, which is less than the
 * drive asks for when the port holds it at its budget.
 */
void ts_dut_advance(ts_dut *d, double dt_s, double power_w);
/** Gaussian noise with standard deviation sigma (deterministic per seed). */
double ts_dut_noise(ts_dut *d, double sigma);

#endif
