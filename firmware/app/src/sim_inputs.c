/* native_sim only: what the emulated probe "measures". A device under test
 * on a 5.1 V bus alternates between 0.4 A idle and 1.6 A busy every two
 * seconds, and the enclosure NTC warms from 25 degC towards 45 degC
 * (first order, 30 s time constant), so the log shows changing values. */
#include <math.h>

#include <zephyr/device.h>
#include <zephyr/drivers/adc/adc_emul.h>
#include <zephyr/drivers/emul.h>
#include <zephyr/init.h>
#include <zephyr/kernel.h>

#include <throttlescope_zephyr/ina228_probe.h>

#include "throttlescope/temp.h"

#define INA_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_ina228_probe)
#define CC_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_cc_sense)
#define NTC_NODE DT_ALIAS(enclosure_temp0)

static const struct emul *const ina_emul = EMUL_DT_GET(INA_NODE);

static void update_load(struct k_timer *t)
{
	ARG_UNUSED(t);
	bool busy = (k_uptime_get() / 2000) % 2 == 1;
	uint32_t shunt_uohm = DT_PROP(INA_NODE, shunt_micro_ohms);
	int64_t current_ma = busy ? 1600 : 400;
	struct ina228_probe_emul_inputs in = {
		.vbus_uv = 5100000,
		.vshunt_nv = current_ma * shunt_uohm, /* mA x uOhm = nV */
		.die_temp_mc = busy ? 41000 : 33000,
	};

	ina228_probe_emul_set_inputs(ina_emul, &in);
}

static K_TIMER_DEFINE(load_timer, update_load, NULL);

#if DT_NODE_HAS_STATUS(NTC_NODE, okay)
/* B57861S0103A039: 10 kOhm at 25 degC, beta 3988 K, to ground under the
 * devicetree's pull-up from the divider's own supply (pullup-uv: 3V3 on the
 * Pico board). The emulated ADC turns these millivolts into codes with its
 * reference (3.000 V, as the board's ADC_VREF), so the driver's conversion is
 * exercised as on the board: code -> mV by the reference, mV -> ohm by the
 * supply. */
static int ntc_millivolts(const struct device *dev, unsigned int chan, void *data,
			  uint32_t *result)
{
	static const ts_ntc_beta model = {.r0_ohm = 10000.0, .t0_c = 25.0, .beta_k = 3988.0};
	/* Without pullup-uv the driver reads the divider against the ADC's full
	 * scale, i.e. as fed from the reference itself. */
	const double supply_mv =
		DT_PROP_OR(NTC_NODE, pullup_uv,
			   DT_PROP(DT_IO_CHANNELS_CTLR(NTC_NODE), ref_internal_mv) * 1000) /
		1000.0;
	const double pullup_ohm = DT_PROP(NTC_NODE, pullup_ohm);
	double t_s = (double)k_uptime_get() / 1000.0;
	double celsius = 45.0 - 20.0 * exp(-t_s / 30.0);
	double ohm = ts_ntc_beta_ohm(&model, celsius);

	ARG_UNUSED(dev);
	ARG_UNUSED(chan);
	ARG_UNUSED(data);
	*result = (uint32_t)(supply_mv * ohm / (ohm + pullup_ohm));
	return 0;
}
#endif

#if DT_NODE_EXISTS(CC_NODE)
/* A host port advertising 1.5 A (Rp 22 k to 5 V over the sink's 5.1 k Rd:
 * 941 mV) on CC1, CC2 open: an unflipped plug. */
static int cc_inputs_init(void)
{
	const struct device *adc = DEVICE_DT_GET(DT_IO_CHANNELS_CTLR_BY_NAME(CC_NODE, cc1));
	int err = adc_emul_const_value_set(adc, DT_IO_CHANNELS_INPUT_BY_NAME(CC_NODE, cc1), 941);

	return err != 0 ? err
			: adc_emul_const_value_set(adc, DT_IO_CHANNELS_INPUT_BY_NAME(CC_NODE, cc2),
						   15);
}
#endif

static int sim_inputs_init(void)
{
	update_load(NULL);
#if DT_NODE_EXISTS(CC_NODE)
	int cc_err = cc_inputs_init();

	if (cc_err != 0) {
		return cc_err;
	}
#endif
	k_timer_start(&load_timer, K_MSEC(100), K_MSEC(100));
#if DT_NODE_HAS_STATUS(NTC_NODE, okay)
	const struct device *adc = DEVICE_DT_GET(DT_IO_CHANNELS_CTLR(NTC_NODE));

	return adc_emul_value_func_set(adc, DT_IO_CHANNELS_INPUT(NTC_NODE), ntc_millivolts, NULL);
#else
	return 0;
#endif
}

SYS_INIT(sim_inputs_init, APPLICATION, 0);
