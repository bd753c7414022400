/* The host port as the drive sees it through the probe: an advertised
 * current (the budget), an optional PD contract voltage, and a cable
 * resistance. The drive is a constant-power load: VBUS at the probe sags by
 * I x R, and a drive that needs more than the port gives is held at the
 * budget, its rate falling in proportion. The scenario crate's DeviceModel
 * (hostd/crates/scenario/src/model.rs, port_draw) uses the same equations. */
#ifndef THROTTLESCOPE_SIM_PORT_MODEL_H
#define THROTTLESCOPE_SIM_PORT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ts_port_model {
    double source_v;   /**< VBUS at the source: 5 V, or the PD contract's voltage */
    double current_a;  /**< advertised current (the budget); 0: no limit, no CC */
    double cable_ohm;  /**< VBUS + GND round trip between source and probe */
} ts_port_model;

/** What the port delivers to a drive that asks for some power. */
typedef struct ts_port_draw {
    double current_a;   /**< drawn */
    double vbus_v;      /**< at the probe: source_v - I x R */
    double power_w;     /**< delivered: vbus_v x current_a */
    bool held;          /**< the demand was above what the port gives */
    double rate_factor; /**< delivered / asked (1 when not held) */
} ts_port_draw;

/** The drive asks for need_w at the probe; the port gives what it can. */
void ts_port_model_draw(const ts_port_model *m, double need_w, ts_port_draw *out);
/**
 * The CC voltage a sink's 5.1 kOhm Rd sees for an advertised current (Rp to
 * 5 V: 56k Default USB up to 0.9 A, 22k for 1.5 A, 10k for 3.0 A), in mV.
 */
uint16_t ts_port_model_cc_mv(double current_a);

#endif
