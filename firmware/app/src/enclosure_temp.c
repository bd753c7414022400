#include <limits.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/sensor.h>
#include <zephyr/logging/log.h>

#include "throttlescope/temp.h"

#include "enclosure_temp.h"

LOG_MODULE_REGISTER(enclosure_temp, CONFIG_LOG_DEFAULT_LEVEL);

/* A sensor on an ADC channel (io-channels) is a thermistor; others are digital. */
#define TEMP_KIND(node)                                                                            \
	COND_CODE_1(DT_NODE_HAS_PROP(node, io_channels),                                           \
		    (throttlescope_v1_SensorKind_SENSOR_KIND_NTC),                                 \
		    (throttlescope_v1_SensorKind_SENSOR_KIND_DIGITAL))

#define TEMP_INFO(alias)                                                                           \
	IF_ENABLED(DT_NODE_HAS_STATUS(DT_ALIAS(alias), okay),                                      \
		   ({.kind = TEMP_KIND(DT_ALIAS(alias)),                                           \
		     .name = DT_PROP_OR(DT_ALIAS(alias), label, DT_NODE_FULL_NAME(DT_ALIAS(alias)))},))

#define TEMP_DEV(alias)                                                                            \
	IF_ENABLED(DT_NODE_HAS_STATUS(DT_ALIAS(alias), okay), (DEVICE_DT_GET(DT_ALIAS(alias)),))

static const ts_temp_sensor_info infos[] = {
	TEMP_INFO(enclosure_temp0) TEMP_INFO(enclosure_temp1)
	TEMP_INFO(enclosure_temp2) TEMP_INFO(enclosure_temp3)
};

static const struct device *const devs[] = {
	TEMP_DEV(enclosure_temp0) TEMP_DEV(enclosure_temp1)
	TEMP_DEV(enclosure_temp2) TEMP_DEV(enclosure_temp3)
};

BUILD_ASSERT(ARRAY_SIZE(devs) <= TS_MAX_TEMP_SENSORS, "at most 4 enclosure sensors");

static int32_t last_milli_c = INT32_MIN;

uint32_t enclosure_temp_sensors(const ts_temp_sensor_info **out)
{
	*out = infos;
	return ARRAY_SIZE(devs);
}

void enclosure_temp_read_all(ts_probe *p)
{
	for (uint32_t i = 0; i < ARRAY_SIZE(devs); i++) {
		struct sensor_value v;
		int rc = device_is_ready(devs[i]) ? 0 : -ENODEV;

		if (rc == 0) {
			rc = sensor_sample_fetch_chan(devs[i], SENSOR_CHAN_AMBIENT_TEMP);
		}
		if (rc == 0) {
			rc = sensor_channel_get(devs[i], SENSOR_CHAN_AMBIENT_TEMP, &v);
		}
		if (rc != 0) {
			ts_probe_temp_error(p);
			continue;
		}
		int32_t milli_c = ts_sensor_value_milli_c(v.val1, v.val2);

		if (i == 0u) {
			last_milli_c = milli_c;
		}
		ts_probe_temp(p, i, milli_c);
	}
}

int32_t enclosure_temp_last_milli_c(void)
{
	return last_milli_c;
}
