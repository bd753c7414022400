/* throttlescope probe: wires the portable core (firmware/core) to Zephyr.
 * Everything board-specific comes from devicetree and Kconfig:
 *   - the INA228: the "throttlescope,ina228-probe" node (I2C address, shunt, current,
 *     ADC range, ALERT pin);
 *   - the host link: chosen "throttlescope,link" (USB CDC-ACM on the Pico);
 *   - enclosure temperature: aliases enclosure-temp0..3;
 *   - the status LED: alias led0; the watchdog: alias watchdog0.
 * Threads: sampling (the highest application priority, blocked between
 * ALERT edges), link (CONFIG_THROTTLESCOPE_LINK_PRIORITY), and this main loop
 * (CONFIG_MAIN_THREAD_PRIORITY, the lowest of the three: temperature, LED,
 * watchdog, counters). */
#include <stdio.h>
#include <string.h>

#include <app_version.h>
#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/hwinfo.h>
#include <zephyr/drivers/watchdog.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#include <throttlescope_zephyr/ina228_probe.h>

#include "throttlescope/probe.h"

#include "cc_sense.h"
#include "enclosure_temp.h"
#include "link.h"
#include "pd_tap.h"
#include "sampling.h"
#include "status_led.h"

LOG_MODULE_REGISTER(probe, CONFIG_LOG_DEFAULT_LEVEL);

#define INA_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_ina228_probe)
BUILD_ASSERT(DT_NODE_EXISTS(INA_NODE), "devicetree needs an okay \"throttlescope,ina228-probe\" node");

#define WDT_NODE DT_ALIAS(watchdog0)

/* The core computes its rate ceiling from the bus clock devicetree sets. */
#define INA_BUS_HZ DT_PROP_OR(DT_BUS(INA_NODE), clock_frequency, 0)
BUILD_ASSERT(INA_BUS_HZ <= 400000,
	     "the INA228 is rated for Fast mode (400 kHz), not Fast-mode Plus; "
	     "High-speed mode needs an HS master code (docs/hardware.md)");
BUILD_ASSERT(CONFIG_MAIN_THREAD_PRIORITY > CONFIG_THROTTLESCOPE_LINK_PRIORITY,
	     "the main loop must run below the link (and the sampling thread)");

static const struct device *const ina_dev = DEVICE_DT_GET(INA_NODE);

/* The probe: ~25 KB of rings and frame buffers, static, never allocated. */
static ts_probe probe;
static char probe_id[33];

static const char *make_probe_id(void)
{
	if (strlen(CONFIG_THROTTLESCOPE_PROBE_ID) > 0) {
		return CONFIG_THROTTLESCOPE_PROBE_ID;
	}
#if defined(CONFIG_HWINFO)
	uint8_t id[16];
	ssize_t n = hwinfo_get_device_id(id, sizeof(id));

	if (n > 0) {
		for (ssize_t i = 0; i < n && (size_t)(2 * i + 2) < sizeof(probe_id); i++) {
			snprintf(&probe_id[2 * i], 3, "%02x", id[i]);
		}
		return probe_id;
	}
#endif
	return "unknown";
}

#if DT_NODE_HAS_STATUS(WDT_NODE, okay) && defined(CONFIG_WATCHDOG)
static const struct device *const wdt = DEVICE_DT_GET(WDT_NODE);
static int wdt_channel = -1;

static void watchdog_start(void)
{
	struct wdt_timeout_cfg cfg = {
		.window = {.min = 0, .max = CONFIG_THROTTLESCOPE_WATCHDOG_TIMEOUT_MS},
		.flags = WDT_FLAG_RESET_SOC,
	};

	if (!device_is_ready(wdt)) {
		LOG_WRN("watchdog %s not ready: running without one", wdt->name);
		return;
	}
	wdt_channel = wdt_install_timeout(wdt, &cfg);
	if (wdt_channel < 0 || wdt_setup(wdt, WDT_OPT_PAUSE_HALTED_BY_DBG) != 0) {
		LOG_WRN("watchdog setup failed (%d): running without one", wdt_channel);
		wdt_channel = -1;
		return;
	}
	LOG_INF("watchdog %u ms", CONFIG_THROTTLESCOPE_WATCHDOG_TIMEOUT_MS);
}

static void watchdog_feed(void)
{
	if (wdt_channel >= 0) {
		(void)wdt_feed(wdt, wdt_channel);
	}
}
#else
static void watchdog_start(void)
{
	LOG_INF("no watchdog0 in devicetree");
}

static void watchdog_feed(void)
{
}
#endif

static void log_counters(void)
{
	ts_probe_counters c;
	struct link_counters l;
	int32_t mc = enclosure_temp_last_milli_c();

	ts_probe_counters_get(&probe, &c);
	link_counters_get(&l);
	LOG_INF("%s %u Hz | taken %llu dropped %llu (missed slots %llu) | reinits %u | "
		"batches %llu, tx refused %u, i2c errors %u | rx bad frames %u, bad messages %u, "
		"rx bytes lost %u | enclosure %d.%01d C",
		ts_probe_running(&probe) ? "sampling" : "idle", ts_probe_rate_hz(&probe),
		(unsigned long long)c.sampler.samples_taken,
		(unsigned long long)c.sampler.samples_dropped,
		(unsigned long long)c.sampler.missed_slots, c.sampler.reinits,
		(unsigned long long)c.batches_sent, c.tx_overflows, c.sampler.i2c_errors,
		c.rx_bad_frames, c.rx_bad_messages, l.rx_bytes_dropped, mc / 1000,
		(mc < 0 ? -mc : mc) % 1000 / 100);
	if (probe.config.cc_sensing) {
		/* Written by the link thread; a torn read only garbles this line. */
		const ts_port_state *ps = &probe.port.reported;

		LOG_INF("port: advertisement %d on CC%d (CC1 %u mV, CC2 %u mV) | vbus level %d | "
			"pd contract %d, budget %d: %u mV %u mA | "
			"windows %u, noisy %u, flaps %u, changes %u, adc errors %u",
			(int)ps->advertisement, (int)ps->active, ps->cc1_mv, ps->cc2_mv,
			(int)ps->vbus, (int)ps->pd_contract, (int)ps->budget, ps->budget_mv,
			ps->budget_ma, probe.port.counters.windows, probe.port.counters.noisy_windows,
			probe.port.counters.flaps, probe.port.counters.changes, cc_sense_errors());
	}
	if (probe.config.pd_decoding) {
		for (unsigned k = 0; k < 2u; k++) {
			struct pd_tap_counters t;

			pd_tap_counters_get(k, &t);
			LOG_INF("pd tap CC%u: edges %u, ring dropped %u, fifo overflows %u, "
				"rearms %u | messages %u, crc failures %u",
				k + 1u, (unsigned)t.edges, (unsigned)t.ring_dropped,
				(unsigned)t.fifo_overflows, (unsigned)t.rearms, (unsigned)t.messages,
				(unsigned)t.crc_failures);
		}
	}
}

int main(void)
{
	const struct ina228_probe_config *ina = ina228_probe_config_get(ina_dev);
	ts_probe_config config = {
		.firmware_version = APP_VERSION_STRING,
		.probe_id = make_probe_id(),
		.shunt_micro_ohm = ina->shunt_micro_ohms != 0u ? ina->shunt_micro_ohms
							     : CONFIG_THROTTLESCOPE_SHUNT_MICRO_OHM,
		.max_current_ma = ina->max_current_microamp != 0u
					  ? ina->max_current_microamp / 1000u
					  : CONFIG_THROTTLESCOPE_MAX_CURRENT_MA,
		.adc_range = ina->adc_range,
		.max_rate_hz = CONFIG_THROTTLESCOPE_MAX_RATE_HZ,
		.max_batch_age_us = CONFIG_THROTTLESCOPE_MAX_BATCH_AGE_MS * 1000u,
		.alert_pin = ina228_probe_has_alert(ina_dev),
		.default_rate_hz = CONFIG_THROTTLESCOPE_DEFAULT_RATE_HZ,
		.i2c_bus_hz = INA_BUS_HZ,
		.i2c_txn_overhead_us = CONFIG_THROTTLESCOPE_I2C_TXN_OVERHEAD_US,
	};
	const ts_platform platform = {
		.now_us = sampling_now_us,
		.tx_frame = link_tx_frame,
		.sampling_changed = sampling_changed,
		.ctx = NULL,
	};
	ts_bus bus;

	config.sensor_count = enclosure_temp_sensors(&config.sensors);
	config.cc_sensing = cc_sense_init() == 0 && cc_sense_present();
	config.cc_guard_mv = cc_sense_uncertainty_mv();
	/* The contract reaches the host in PortStatus, which needs CC sensing. */
	config.pd_decoding = config.cc_sensing && pd_tap_init() == 0;
	status_led_init();
	LOG_INF("throttlescope probe %s, id %s", APP_VERSION_STRING, config.probe_id);

	if (!device_is_ready(ina_dev)) {
		LOG_ERR("INA228 device %s not ready", ina_dev->name);
	}
	ina228_probe_bus_get(ina_dev, &bus);
	int rc = ts_probe_init(&probe, &config, &platform, &bus);

	if (rc == TS_OK) {
		LOG_INF("INA228 at 0x%02x on %s: shunt %u uOhm, max %u mA, ADC range %u, "
			"SHUNT_CAL %u",
			ina->i2c.addr, ina->i2c.bus->name, config.shunt_micro_ohm,
			config.max_current_ma, config.adc_range, probe.ina.cal.shunt_cal);
	} else {
		/* The probe still answers the host, which learns the reason. */
		LOG_ERR("INA228 at 0x%02x on %s failed (%d): Start will report a sensor fault",
			ina->i2c.addr, ina->i2c.bus->name, rc);
	}
	LOG_INF("%u enclosure temperature sensor(s)", config.sensor_count);

	sampling_init(&probe, ina_dev);
	if (link_init(&probe) != 0) {
		LOG_ERR("no host link: the probe cannot be reached");
	}
	watchdog_start();

	uint32_t last_sampling_beat = sampling_heartbeat();
	uint32_t last_link_beat = link_heartbeat();
	uint64_t last_dropped = 0;
	int64_t next_temp = k_uptime_get();
	int64_t next_check = k_uptime_get() + 1000;
	int64_t next_log = k_uptime_get() + (int64_t)CONFIG_THROTTLESCOPE_STATUS_LOG_S * 1000;
	bool dropping = false;

	for (;;) {
		int64_t now = k_uptime_get();

		if (now >= next_temp) {
			next_temp += CONFIG_THROTTLESCOPE_TEMP_PERIOD_MS;
			if (ts_probe_running(&probe)) {
				enclosure_temp_read_all(&probe);
			}
		}
		if (now >= next_check) {
			/* Feed only while both threads make progress: a wedged bus
			 * or link then resets the probe. */
			uint32_t s = sampling_heartbeat();
			uint32_t l = link_heartbeat();
			ts_probe_counters c;

			if (s != last_sampling_beat && l != last_link_beat) {
				watchdog_feed();
			}
			last_sampling_beat = s;
			last_link_beat = l;
			ts_probe_counters_get(&probe, &c);
			dropping = c.sampler.samples_dropped != last_dropped;
			last_dropped = c.sampler.samples_dropped;
			next_check += 250;
		}
		if (CONFIG_THROTTLESCOPE_STATUS_LOG_S > 0 && now >= next_log) {
			next_log += (int64_t)CONFIG_THROTTLESCOPE_STATUS_LOG_S * 1000;
			log_counters();
		}
		status_led_show(rc != TS_OK			? STATUS_LED_FAULT
				: !ts_probe_running(&probe) ? STATUS_LED_IDLE
				: dropping			? STATUS_LED_DROPPING
								: STATUS_LED_SAMPLING,
				now);
		k_msleep(10);
	}
	return 0;
}
