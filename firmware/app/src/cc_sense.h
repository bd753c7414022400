/* CC1/CC2 through the "throttlescope,cc-sense" front end on the ADC: thin
 * glue that hands windows of readings to the core (ts_probe_port_cc). */
#ifndef THROTTLESCOPE_APP_CC_SENSE_H
#define THROTTLESCOPE_APP_CC_SENSE_H

#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/probe.h"

/** True when devicetree has an okay "throttlescope,cc-sense" node. */
bool cc_sense_present(void);
/** Front-end uncertainty from devicetree (mV), 0 without the node. */
uint32_t cc_sense_uncertainty_mv(void);
/** Set the ADC channels up; 0 or a negative errno (then CC is not sensed). */
int cc_sense_init(void);
/**
 * Read n (<= TS_PORT_MAX_WINDOW) CC1/CC2 pairs in mV; returns the pairs read
 * (fewer after an ADC error, which is counted).
 */
uint32_t cc_sense_window(uint16_t *cc1_mv, uint16_t *cc2_mv, uint32_t n);
/** One window into the core (the link thread calls this before servicing). */
void cc_sense_poll(ts_probe *probe);
/** ADC reads that failed. */
uint32_t cc_sense_errors(void);

#endif
