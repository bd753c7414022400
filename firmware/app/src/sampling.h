/* The sampling thread: one sample per latched ALERT edge (conversion ready),
 * stamped in the GPIO interrupt; boards without the pin poll DIAG_ALRT from a
 * timer at half the conversion period. */
#ifndef THROTTLESCOPE_APP_SAMPLING_H
#define THROTTLESCOPE_APP_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/device.h>

#include "throttlescope/probe.h"

/** Start the sampling thread for probe p, whose INA228 is device ina. */
int sampling_init(ts_probe *p, const struct device *ina);

/** ts_platform.sampling_changed: arm or disarm the pacing for a run. */
void sampling_changed(void *ctx, bool running, uint32_t rate_hz);

/** ts_platform.now_us: the probe clock, microseconds since boot. */
uint64_t sampling_now_us(void *ctx);

/** Increments while the sampling thread is alive (for the watchdog). */
uint32_t sampling_heartbeat(void);

/** True when samples are paced by the ALERT pin. */
bool sampling_uses_alert(void);

#endif
