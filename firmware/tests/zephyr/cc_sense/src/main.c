/* The app's CC sensing on native_sim: cc_sense.c reads CC1/CC2 from Zephyr's
 * emulated ADC and the core classifies and debounces them. Time is the
 * kernel's; each window is one link-thread service period (2 ms) apart. */
#include <zephyr/drivers/adc/adc_emul.h>
#include <zephyr/kernel.h>
#include <zephyr/ztest.h>

#include "cc_sense.h"
#include "throttlescope/port.h"

#define CC_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_cc_sense)
#define CC1_CH DT_IO_CHANNELS_INPUT_BY_NAME(CC_NODE, cc1)
#define CC2_CH DT_IO_CHANNELS_INPUT_BY_NAME(CC_NODE, cc2)

static const struct device *const adc = DEVICE_DT_GET(DT_IO_CHANNELS_CTLR_BY_NAME(CC_NODE, cc1));
static ts_port port;

static void set_cc(uint32_t cc1_mv, uint32_t cc2_mv)
{
	zassert_ok(adc_emul_const_value_set(adc, CC1_CH, cc1_mv));
	zassert_ok(adc_emul_const_value_set(adc, CC2_CH, cc2_mv));
}

/* Windows every 2 ms for ms milliseconds of kernel time. */
static void run_ms(uint32_t ms)
{
	int64_t end = k_uptime_get() + ms;

	while (k_uptime_get() < end) {
		uint16_t a[CONFIG_THROTTLESCOPE_CC_WINDOW], b[CONFIG_THROTTLESCOPE_CC_WINDOW];
		uint32_t n = cc_sense_window(a, b, CONFIG_THROTTLESCOPE_CC_WINDOW);

		zassert_equal(n, CONFIG_THROTTLESCOPE_CC_WINDOW);
		ts_port_cc_window(&port, a, b, n, k_ticks_to_us_floor64(k_uptime_ticks()));
		k_msleep(2);
	}
}

static void *setup(void)
{
	zassert_ok(cc_sense_init());
	zassert_true(cc_sense_present());
	zassert_equal(cc_sense_uncertainty_mv(), 25u);
	return NULL;
}

static void before(void *f)
{
	ARG_UNUSED(f);
	ts_port_init(&port, cc_sense_uncertainty_mv());
	set_cc(10, 10);
	run_ms(30);
}

ZTEST(cc_sense, test_reads_millivolts_through_the_emulated_adc)
{
	uint16_t a[4], b[4];

	set_cc(1689, 12);
	zassert_equal(cc_sense_window(a, b, 4), 4u);
	for (int i = 0; i < 4; i++) {
		/* 12 bits over the board's 3.000 V reference: 0.73 mV per code,
		 * truncated twice (emulated ADC, then adc_raw_to_millivolts). */
		zassert_within(a[i], 1689, 2, "CC1 %u mV", a[i]);
		zassert_within(b[i], 12, 2, "CC2 %u mV", b[i]);
	}
	zassert_equal(cc_sense_errors(), 0u);
}

ZTEST(cc_sense, test_attach_3a0_on_cc1_after_tccdebounce)
{
	ts_port_state st;

	zassert_true(ts_port_take_change(&port, &st));
	zassert_equal(st.advertisement, TS_CC_OPEN);
	set_cc(1689, 12); /* Rp 10 k to 5 V over Rd 5.1 k: 3.0 A */
	run_ms(100);
	zassert_false(ts_port_take_change(&port, &st), "reported before tCCDebounce");
	run_ms(80);
	zassert_true(ts_port_take_change(&port, &st));
	zassert_equal(st.advertisement, TS_CC_3A0);
	zassert_equal(st.active, TS_ACTIVE_CC1);
}

ZTEST(cc_sense, test_flipped_plug_at_1a5_reads_on_cc2)
{
	ts_port_state st;

	set_cc(12, 941); /* Rp 22 k to 5 V: 1.5 A */
	run_ms(180);
	zassert_true(ts_port_take_change(&port, &st));
	zassert_equal(st.advertisement, TS_CC_1A5);
	zassert_equal(st.active, TS_ACTIVE_CC2);
}

ZTEST(cc_sense, test_the_cables_ra_and_its_vconn_beside_rd_are_no_advertisement)
{
	ts_port_state st;

	/* 3.0 A (330 uA) over the sink's Rd on CC1, the e-marked cable's 1 kOhm Ra on CC2
	 * (330 mV: Default USB if it were read alone). */
	set_cc(1683, 330);
	run_ms(180);
	zassert_true(ts_port_take_change(&port, &st));
	zassert_equal(st.advertisement, TS_CC_3A0);
	zassert_equal(st.active, TS_ACTIVE_CC1);
	zassert_equal(st.cc2, TS_CC_OPEN);
	/* VCONN on: above the 3.000 V reference the ADC gives its top count. */
	set_cc(1683, 3300);
	run_ms(40);
	zassert_false(ts_port_take_change(&port, &st), "VCONN changed the port");
	ts_port_snapshot(&port, &st);
	zassert_within(st.cc2_mv, 2999, 1, "CC2 %u mV", st.cc2_mv);
	zassert_equal(st.cc2, TS_CC_OPEN);
}

/* BMC: the emulated input toggles between ~0 and vSwing on every read. */
static int bmc(const struct device *dev, unsigned int chan, void *data, uint32_t *result)
{
	static uint32_t n;

	ARG_UNUSED(dev);
	ARG_UNUSED(chan);
	ARG_UNUSED(data);
	*result = (n++ % 2u) ? 1125u : 40u;
	return 0;
}

ZTEST(cc_sense, test_a_bmc_burst_is_discarded_and_counted)
{
	ts_port_state st;

	set_cc(1689, 12);
	run_ms(180);
	zassert_true(ts_port_take_change(&port, &st));
	uint32_t noisy = port.counters.noisy_windows;

	zassert_ok(adc_emul_value_func_set(adc, CC1_CH, bmc, NULL));
	run_ms(6);
	set_cc(1689, 12);
	run_ms(40);
	zassert_true(port.counters.noisy_windows > noisy);
	zassert_false(ts_port_take_change(&port, &st), "the burst changed the port");
	ts_port_snapshot(&port, &st);
	zassert_equal(st.advertisement, TS_CC_3A0);
}

ZTEST(cc_sense, test_a_reading_that_fits_no_range_keeps_its_millivolts)
{
	ts_port_state st;

	set_cc(650, 12);
	run_ms(180);
	zassert_true(ts_port_take_change(&port, &st));
	zassert_equal(st.advertisement, TS_CC_OUT_OF_RANGE);
	zassert_within(st.cc1_mv, 650, 2);
}

ZTEST_SUITE(cc_sense, NULL, setup, before, NULL, NULL);
