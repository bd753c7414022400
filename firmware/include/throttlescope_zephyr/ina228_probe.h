/* The INA228 as the throttlescope probe uses it on Zephyr: a devicetree
 * node ("throttlescope,ina228-probe") becomes a device that gives the portable core its
 * register bus (I2C burst reads) and, where wired, the ALERT pin as a
 * data-ready interrupt. The core does all register work itself. */
#ifndef THROTTLESCOPE_ZEPHYR_INA228_PROBE_H
#define THROTTLESCOPE_ZEPHYR_INA228_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include <zephyr/device.h>
#include <zephyr/drivers/emul.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/i2c.h>

#include "throttlescope/bus.h"

/** Board facts of one INA228, from devicetree. */
struct ina228_probe_config {
	struct i2c_dt_spec i2c;
	struct gpio_dt_spec alert;       /**< port NULL when ALERT is not wired */
	uint32_t shunt_micro_ohms;       /**< 0 when not given in devicetree */
	uint32_t max_current_microamp;   /**< 0 when not given in devicetree */
	uint8_t adc_range;
};

/** Called from the ALERT interrupt (ISR context) on each conversion ready. */
typedef void (*ina228_probe_alert_handler_t)(const struct device *dev, void *user);

/** The device's devicetree facts. */
const struct ina228_probe_config *ina228_probe_config_get(const struct device *dev);

/** Fill the core's register bus for this device (I2C, big-endian bytes). */
void ina228_probe_bus_get(const struct device *dev, ts_bus *bus);

/** True when alert-gpios is set in devicetree. */
bool ina228_probe_has_alert(const struct device *dev);

/**
 * Route the ALERT pin's falling edge (conversion ready) to handler.
 * -ENOTSUP when the pin is not wired; other negative errno on GPIO errors.
 */
int ina228_probe_alert_enable(const struct device *dev, ina228_probe_alert_handler_t handler,
			      void *user);

/** Stop the ALERT interrupt. */
int ina228_probe_alert_disable(const struct device *dev);

/** Physical inputs of the emulated INA228 (native_sim tests and demo). */
struct ina228_probe_emul_inputs {
	int64_t vbus_uv;      /**< bus voltage in microvolts */
	int64_t vshunt_nv;    /**< shunt voltage in nanovolts (negative: reverse) */
	int32_t die_temp_mc;  /**< die temperature in milli-degC */
};

/** Set what the emulated chip measures from now on. */
void ina228_probe_emul_set_inputs(const struct emul *target,
				  const struct ina228_probe_emul_inputs *in);

/** Make every following bus transfer to the emulated chip fail (or work again). */
void ina228_probe_emul_fail_bus(const struct emul *target, bool fail);

/** Register reads the emulated chip has served (to check burst reads). */
uint32_t ina228_probe_emul_reads(const struct emul *target);

/** Make the next n transfers fail (no ACK), then work again. */
void ina228_probe_emul_fail_transfers(const struct emul *target, uint32_t n);

/**
 * Power-on reset of the emulated chip (as after ESD or a dip on its supply):
 * every register back to its default (SHUNT_CAL 0x1000, ADC_CONFIG 0xFB68,
 * DIAG_ALRT 0x0001: no CNVR, no ALATCH), ENERGY and CHARGE from 0.
 */
void ina228_probe_emul_power_on_reset(const struct emul *target);

/**
 * How long CNVRF stays set after a conversion with ALATCH = 0 (default 20 us;
 * the datasheet gives no figure).
 */
void ina228_probe_emul_set_transparent_hold(const struct emul *target, uint32_t hold_us);

/**
 * Let each transfer take its bus time at the controller's clock-frequency
 * (on by default; native_sim's k_busy_wait advances the emulated time).
 */
void ina228_probe_emul_model_bus_time(const struct emul *target, bool on);

/** What the emulated chip did since start-up. */
struct ina228_probe_emul_stats {
	uint32_t reads;        /**< register reads served */
	uint32_t conversions;  /**< conversions completed since the last reset */
	uint32_t alert_edges;  /**< ALERT inactive-to-active edges (CNVR set) */
	uint32_t resets;       /**< RST writes and power-on resets after start-up */
};

/** Snapshot of the emulated chip's counters. */
void ina228_probe_emul_stats_get(const struct emul *target, struct ina228_probe_emul_stats *out);

#endif
