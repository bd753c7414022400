/* CC1/CC2 on the ADC (cc_sense.h). Without a "throttlescope,cc-sense" node
 * everything here is a no-op and the probe says it has no CC sensing. */
#include <zephyr/devicetree.h>
#include <zephyr/drivers/adc.h>
#include <zephyr/logging/log.h>

#include "cc_sense.h"

LOG_MODULE_REGISTER(cc_sense, CONFIG_LOG_DEFAULT_LEVEL);

#define CC_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_cc_sense)

#if DT_NODE_EXISTS(CC_NODE)
static const struct adc_dt_spec cc[2] = {
	ADC_DT_SPEC_GET_BY_NAME(CC_NODE, cc1),
	ADC_DT_SPEC_GET_BY_NAME(CC_NODE, cc2),
};
static bool ready;
static uint32_t errors;

bool cc_sense_present(void)
{
	return ready;
}

uint32_t cc_sense_uncertainty_mv(void)
{
	return DT_PROP(CC_NODE, uncertainty_mv);
}

int cc_sense_init(void)
{
	for (int k = 0; k < 2; k++) {
		if (!adc_is_ready_dt(&cc[k])) {
			LOG_ERR("CC%d ADC %s not ready: no CC sensing", k + 1, cc[k].dev->name);
			return -ENODEV;
		}
		int err = adc_channel_setup_dt(&cc[k]);

		if (err != 0) {
			LOG_ERR("CC%d ADC channel %u setup failed (%d)", k + 1, cc[k].channel_id,
				err);
			return err;
		}
	}
	ready = true;
	LOG_INF("CC sensing on %s channels %u/%u, +-%u mV", cc[0].dev->name, cc[0].channel_id,
		cc[1].channel_id, cc_sense_uncertainty_mv());
	return 0;
}

static bool read_mv(const struct adc_dt_spec *spec, uint16_t *out)
{
	int16_t raw = 0;
	struct adc_sequence seq = {.buffer = &raw, .buffer_size = sizeof(raw)};

	if (adc_sequence_init_dt(spec, &seq) != 0 || adc_read_dt(spec, &seq) != 0) {
		return false;
	}
	int32_t mv = raw;

	if (adc_raw_to_millivolts_dt(spec, &mv) != 0) {
		return false;
	}
	*out = (uint16_t)CLAMP(mv, 0, UINT16_MAX);
	return true;
}

uint32_t cc_sense_window(uint16_t *cc1_mv, uint16_t *cc2_mv, uint32_t n)
{
	uint32_t got = 0;

	for (uint32_t i = 0; ready && i < n && i < TS_PORT_MAX_WINDOW; i++) {
		if (!read_mv(&cc[0], &cc1_mv[got]) || !read_mv(&cc[1], &cc2_mv[got])) {
			errors++;
			continue;
		}
		got++;
	}
	return got;
}

uint32_t cc_sense_errors(void)
{
	return errors;
}
#else
bool cc_sense_present(void)
{
	return false;
}

uint32_t cc_sense_uncertainty_mv(void)
{
	return 0;
}

int cc_sense_init(void)
{
	return 0;
}

uint32_t cc_sense_window(uint16_t *cc1_mv, uint16_t *cc2_mv, uint32_t n)
{
	ARG_UNUSED(cc1_mv);
	ARG_UNUSED(cc2_mv);
	ARG_UNUSED(n);
	return 0;
}

uint32_t cc_sense_errors(void)
{
	return 0;
}
#endif

void cc_sense_poll(ts_probe *probe)
{
	uint16_t cc1[CONFIG_THROTTLESCOPE_CC_WINDOW];
	uint16_t cc2[CONFIG_THROTTLESCOPE_CC_WINDOW];
	uint32_t n = cc_sense_window(cc1, cc2, CONFIG_THROTTLESCOPE_CC_WINDOW);

	if (n > 0u) {
		ts_probe_port_cc(probe, cc1, cc2, n);
	}
}
