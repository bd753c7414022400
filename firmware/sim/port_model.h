/* The host port as the drive sees it through the probe: an advertised
 * current (the budget), an optional PD contract voltage, and a cable between
 * the probe and the drive. The probe plugs into the host port, so the cable's
 * drop lies beyond it: VBUS at the probe is the port's, and the power through
 * it includes the cable's loss. The drive is a constant-power load at the
 * cable's far end (VBUS - I x R), and a drive that needs more than the port
 * gives is held at the budget, its rate falling in proportion. The scenario
 * crate's DeviceModel (hostd/crates/scenario/src/model.rs, port_draw) uses the
 * same equations. */
#ifndef THROTTLESCOPE_SIM_PORT_MODEL_H
#define THROTTLESCOPE_SIM_PORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ts_port_model {
    double source_v;   /**< VBUS at the source: 5 V, or the PD contract's voltage */
    double current_a;  /**< advertised current (the budget); 0: no limit, no CC */
    double cable_ohm;  /**< VBUS + GND round trip between the probe and the drive */
} ts_port_model;

/** What the port delivers to a drive that asks for some power. */
typedef struct ts_port_draw {
    double current_a;   /**< drawn */
    double vbus_v;      /**< at the probe: the port's source_v */
    double power_w;     /**< through the probe: vbus_v x current_a, the cable's loss included */
    double drive_w;     /**< reaching the drive: (vbus_v - I x R) x current_a */
    bool held;          /**< the demand was above what the port gives */
    double rate_factor; /**< reaching the drive / asked (1 when not held) */
} ts_port_draw;

/** The drive asks for need_w at its end of the cable; the port gives what it can. */
void ts_port_model_draw(const ts_port_model *m, double need_w, ts_port_draw *out);
/**
 * The CC voltage a sink's 5.1 kOhm Rd sees for an advertised current (Rp to
 * 5 V: 56k Default USB up to 0.9 A, 22k for 1.5 A, 10k for 3.0 A), in mV.
 */
uint16_t ts_port_model_cc_mv(double current_a);

#endif
