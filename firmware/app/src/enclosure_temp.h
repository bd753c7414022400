/* Enclosure temperature: every devicetree sensor aliased enclosure-temp0..3
 * that gives SENSOR_CHAN_AMBIENT_TEMP (an NTC thermistor on the ADC, a
 * TMP117, ...), read at CONFIG_THROTTLESCOPE_TEMP_PERIOD_MS. */
#ifndef THROTTLESCOPE_APP_ENCLOSURE_TEMP_H
#define THROTTLESCOPE_APP_ENCLOSURE_TEMP_H

#include <stdint.h>

#include "throttlescope/probe.h"

/** The sensors for DeviceInfo; returns how many (0..TS_MAX_TEMP_SENSORS). */
uint32_t enclosure_temp_sensors(const ts_temp_sensor_info **out);

/** Read every sensor once and hand the readings (or errors) to the probe. */
void enclosure_temp_read_all(ts_probe *p);

/** Last good reading of sensor 0 in m degC; INT32_MIN when none yet. */
int32_t enclosure_temp_last_milli_c(void);

#endif
