/* The INA228 emulator against the datasheet (TI SLYS021A 7.3.7, 7.6; TI E2E
 * 1391284), at the register level through the real I2C API. The last two
 * tests play two sampling handshakes against it: polling CNVRF with
 * ALATCH = 0 (the firmware before issue #14) misses conversions without a
 * trace; with ALATCH = 1 every conversion is seen. */
#include <zephyr/drivers/emul.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/i2c.h>
#include <zephyr/kernel.h>
#include <zephyr/ztest.h>

#include <throttlescope_zephyr/ina228_probe.h>

#define INA_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_ina228_probe)

#define REG_CONFIG 0x00
#define REG_ADC_CONFIG 0x01
#define REG_SHUNT_CAL 0x02
#define REG_VBUS 0x05
#define REG_ENERGY 0x09
#define REG_CHARGE 0x0A
#define REG_DIAG_ALRT 0x0B
#define REG_MANUFACTURER_ID 0x3E

#define DIAG_ALATCH BIT(15)
#define DIAG_CNVR BIT(14)
#define DIAG_CNVRF BIT(1)
#define DIAG_MEMSTAT BIT(0)

/* Continuous VBUS + VSHUNT, 540 us each, AVG 1: one conversion per 1080 us. */
#define ADC_BUS_SHUNT_540 ((0xBu << 12) | (4u << 9) | (4u << 6) | (4u << 3) | 0u)
#define PERIOD_US 1080u

static const struct i2c_dt_spec bus = I2C_DT_SPEC_GET(INA_NODE);
static const struct gpio_dt_spec alert = GPIO_DT_SPEC_GET(INA_NODE, alert_gpios);
static const struct emul *const emul = EMUL_DT_GET(INA_NODE);

static struct gpio_callback alert_cb;
static K_SEM_DEFINE(edge, 0, 1000);
static atomic_t edges;

static void alert_fired(const struct device *port, struct gpio_callback *cb, uint32_t pins)
{
	ARG_UNUSED(port);
	ARG_UNUSED(cb);
	ARG_UNUSED(pins);
	atomic_inc(&edges);
	k_sem_give(&edge);
}

static uint64_t read_reg(uint8_t reg, size_t width)
{
	uint8_t buf[5];
	uint64_t v = 0;

	zassert_ok(i2c_write_read_dt(&bus, &reg, 1, buf, width), "read of 0x%02x", reg);
	for (size_t i = 0; i < width; i++) {
		v = (v << 8) | buf[i];
	}
	return v;
}

static uint16_t read16(uint8_t reg)
{
	return (uint16_t)read_reg(reg, 2);
}

static void write16(uint8_t reg, uint16_t v)
{
	uint8_t msg[3] = {reg, (uint8_t)(v >> 8), (uint8_t)v};

	zassert_ok(i2c_write_dt(&bus, msg, sizeof(msg)), "write of 0x%02x", reg);
}

static struct ina228_probe_emul_stats stats(void)
{
	struct ina228_probe_emul_stats st;

	ina228_probe_emul_stats_get(emul, &st);
	return st;
}

/* Wait for the next ALERT edge (at most 10 periods). */
static void wait_edge(void)
{
	zassert_ok(k_sem_take(&edge, K_USEC(10 * PERIOD_US)), "no ALERT edge");
}

static void *suite_setup(void)
{
	zassert_true(i2c_is_ready_dt(&bus));
	zassert_true(gpio_is_ready_dt(&alert));
	zassert_ok(gpio_pin_configure_dt(&alert, GPIO_INPUT));
	gpio_init_callback(&alert_cb, alert_fired, BIT(alert.pin));
	zassert_ok(gpio_add_callback_dt(&alert, &alert_cb));
	zassert_ok(gpio_pin_interrupt_configure_dt(&alert, GPIO_INT_EDGE_TO_ACTIVE));
	return NULL;
}

static void before(void *f)
{
	ARG_UNUSED(f);
	ina228_probe_emul_fail_bus(emul, false);
	ina228_probe_emul_fail_transfers(emul, 0);
	ina228_probe_emul_model_bus_time(emul, true);
	ina228_probe_emul_set_transparent_hold(emul, 20);
	write16(REG_CONFIG, BIT(15)); /* RST */
	k_sem_reset(&edge);
	atomic_set(&edges, 0);
}

ZTEST(ina228_emul, test_power_on_defaults)
{
	zassert_equal(read16(REG_MANUFACTURER_ID), 0x5449);
	zassert_equal(read16(REG_CONFIG), 0x0000);
	zassert_equal(read16(REG_ADC_CONFIG), 0xFB68);
	zassert_equal(read16(REG_SHUNT_CAL), 0x1000, "SHUNT_CAL default per table 7-6");
	zassert_equal(read16(REG_DIAG_ALRT) & ~DIAG_CNVRF, DIAG_MEMSTAT);
}

ZTEST(ina228_emul, test_transparent_flag_clears_by_itself_without_a_read)
{
	ina228_probe_emul_model_bus_time(emul, false);
	write16(REG_DIAG_ALRT, DIAG_CNVR);
	write16(REG_ADC_CONFIG, ADC_BUS_SHUNT_540);
	k_sem_reset(&edge);
	wait_edge();
	/* At the edge the flag is up ... */
	zassert_true(read16(REG_DIAG_ALRT) & DIAG_CNVRF);
	/* ... a read does not clear it in transparent mode ... */
	zassert_true(read16(REG_DIAG_ALRT) & DIAG_CNVRF);
	/* ... the next conversion getting under way does, unread. */
	k_busy_wait(40);
	zassert_false(read16(REG_DIAG_ALRT) & DIAG_CNVRF, "transparent CNVRF held");
	/* And ALERT pulses on every conversion whether or not anything is read. */
	uint32_t e0 = atomic_get(&edges);

	k_busy_wait(10 * PERIOD_US);
	zassert_within(atomic_get(&edges) - e0, 10, 1);
}

ZTEST(ina228_emul, test_latched_flag_and_alert_held_until_diag_is_read)
{
	ina228_probe_emul_model_bus_time(emul, false);
	write16(REG_DIAG_ALRT, DIAG_CNVR | DIAG_ALATCH);
	write16(REG_ADC_CONFIG, ADC_BUS_SHUNT_540);
	k_sem_reset(&edge);
	wait_edge();
	uint32_t e0 = atomic_get(&edges);
	uint32_t c0 = stats().conversions;

	/* Five conversions later, unread: still one flag, ALERT still held,
	 * no further edges. */
	k_busy_wait(5 * PERIOD_US);
	zassert_equal(atomic_get(&edges), e0, "a held ALERT gave new edges");
	zassert_within(stats().conversions - c0, 5, 1);
	zassert_equal(gpio_pin_get_dt(&alert), 1, "ALERT released without a read");
	/* The read returns the flag and clears it, releasing ALERT. */
	zassert_true(read16(REG_DIAG_ALRT) & DIAG_CNVRF);
	zassert_false(read16(REG_DIAG_ALRT) & DIAG_CNVRF);
	zassert_equal(gpio_pin_get_dt(&alert), 0);
	/* The next conversion raises it again. */
	wait_edge();
	zassert_equal(atomic_get(&edges), e0 + 1);
	zassert_true(read16(REG_DIAG_ALRT) & DIAG_CNVRF);
}

ZTEST(ina228_emul, test_chip_reset_restores_defaults_and_clears_accumulators)
{
	struct ina228_probe_emul_inputs in = {
		.vbus_uv = 5000000, .vshunt_nv = 10000000, .die_temp_mc = 30000};

	/* Instant reads: ENERGY right after the reset is exactly 0. */
	ina228_probe_emul_model_bus_time(emul, false);
	ina228_probe_emul_set_inputs(emul, &in);
	write16(REG_SHUNT_CAL, 625);
	write16(REG_DIAG_ALRT, DIAG_CNVR | DIAG_ALATCH);
	write16(REG_ADC_CONFIG, ADC_BUS_SHUNT_540);
	k_msleep(200);
	zassert_true(read_reg(REG_ENERGY, 5) > 0);
	zassert_true(read_reg(REG_CHARGE, 5) > 0);
	uint32_t resets = stats().resets;

	ina228_probe_emul_power_on_reset(emul);
	zassert_equal(stats().resets, resets + 1);
	zassert_equal(read16(REG_SHUNT_CAL), 0x1000);
	zassert_equal(read16(REG_ADC_CONFIG), 0xFB68);
	zassert_equal(read16(REG_DIAG_ALRT) & (DIAG_CNVR | DIAG_ALATCH), 0,
		      "a reset chip no longer signals conversions on ALERT");
	zassert_equal(read_reg(REG_ENERGY, 5), 0);
	zassert_equal(read_reg(REG_CHARGE, 5), 0);
	/* It keeps converting at its defaults (ENERGY restarts from 0). */
	k_msleep(100);
	zassert_true(read_reg(REG_ENERGY, 5) > 0);
}

ZTEST(ina228_emul, test_i2c_errors)
{
	uint8_t reg = REG_VBUS;
	uint8_t buf[3];

	ina228_probe_emul_fail_transfers(emul, 2);
	zassert_equal(i2c_write_read_dt(&bus, &reg, 1, buf, 3), -EIO);
	zassert_equal(i2c_write_read_dt(&bus, &reg, 1, buf, 3), -EIO);
	zassert_ok(i2c_write_read_dt(&bus, &reg, 1, buf, 3));

	ina228_probe_emul_fail_bus(emul, true);
	zassert_equal(i2c_write_read_dt(&bus, &reg, 1, buf, 3), -EIO);
	ina228_probe_emul_fail_bus(emul, false);
	/* A read of the wrong width is refused as well. */
	zassert_equal(i2c_write_read_dt(&bus, &reg, 1, buf, 2), -EIO);
}

ZTEST(ina228_emul, test_a_transfer_takes_its_bus_time)
{
	/* Pointer write + Sr + 3 data bytes at 400 kHz: 10 + 9 + 10 + 27 + 1
	 * = 57 bit times = 142.5 us. */
	uint32_t t0 = k_cycle_get_32();

	(void)read_reg(REG_VBUS, 3);
	uint32_t us = k_cyc_to_us_near32(k_cycle_get_32() - t0);

	zassert_within(us, 143, 3, "3-byte read took %u us", us);
}

/* A sampler that polls DIAG_ALRT every half period and counts a sample per
 * CNVRF seen, with the bus time modelled: how many of `n` conversions does
 * it catch? */
static uint32_t poll_handshake(uint16_t diag, uint32_t n)
{
	uint32_t seen = 0;
	uint32_t c0;

	write16(REG_DIAG_ALRT, diag);
	write16(REG_ADC_CONFIG, ADC_BUS_SHUNT_540);
	c0 = stats().conversions;
	while (stats().conversions - c0 < n) {
		if (read16(REG_DIAG_ALRT) & DIAG_CNVRF) {
			seen++;
		}
		k_busy_wait(PERIOD_US / 2);
	}
	return seen;
}

ZTEST(ina228_emul, test_transparent_polling_misses_conversions)
{
	/* The handshake before issue #14: ALATCH = 0, poll CNVRF. The flag is
	 * up 20 us per 1080 us; a 2-byte read latches it ~72 us after it
	 * starts. Most conversions go unseen and nothing says so. */
	uint32_t seen = poll_handshake(DIAG_CNVR, 200);

	zassert_true(seen < 100, "transparent polling saw %u of 200 conversions", seen);
}

ZTEST(ina228_emul, test_latched_polling_sees_every_conversion)
{
	uint32_t seen = poll_handshake(DIAG_CNVR | DIAG_ALATCH, 200);

	zassert_within(seen, 200, 1, "latched polling saw %u of 200 conversions", seen);
}

ZTEST_SUITE(ina228_emul, NULL, suite_setup, before, NULL, NULL);
