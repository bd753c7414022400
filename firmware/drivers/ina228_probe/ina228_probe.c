/* "throttlescope,ina228-probe": the INA228 as a bus for the throttlescope core.
 * One register access is one I2C transaction: a register pointer write and
 * a repeated-start burst read of the whole 2/3/5-byte register.
 *
 * Bus recovery at start-up: a reset of the MCU in the middle of a read can
 * leave the INA228 holding SDA low, and every later transfer then fails. The
 * device init asks the controller driver (i2c_recover_bus); controllers
 * without one (Zephyr 4.1's DesignWare driver on the RP2040) are recovered
 * before their driver starts, from the node's scl-gpios/sda-gpios: up to nine
 * SCL clocks until SDA is released, then a STOP. */
#define DT_DRV_COMPAT throttlescope_ina228_probe

#include <errno.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/i2c.h>
#include <zephyr/init.h>
#include <zephyr/logging/log.h>

#include <throttlescope_zephyr/ina228_probe.h>

LOG_MODULE_REGISTER(ina228_probe, CONFIG_LOG_DEFAULT_LEVEL);

/** Widest INA228 register (ENERGY, CHARGE). */
#define INA228_PROBE_REG_MAX_BYTES 5

struct ina228_probe_data {
	const struct device *dev;
	struct gpio_callback alert_cb;
	ina228_probe_alert_handler_t handler;
	void *user;
};

static int bus_read(void *ctx, uint8_t reg, uint8_t *buf, size_t len)
{
	const struct device *dev = ctx;
	const struct ina228_probe_config *cfg = dev->config;

	return i2c_write_read_dt(&cfg->i2c, &reg, sizeof(reg), buf, len) == 0 ? 0 : -1;
}

static int bus_write(void *ctx, uint8_t reg, const uint8_t *buf, size_t len)
{
	const struct device *dev = ctx;
	const struct ina228_probe_config *cfg = dev->config;
	uint8_t msg[1 + INA228_PROBE_REG_MAX_BYTES];

	if (len > INA228_PROBE_REG_MAX_BYTES) {
		return -1;
	}
	msg[0] = reg;
	memcpy(&msg[1], buf, len);
	return i2c_write_dt(&cfg->i2c, msg, len + 1) == 0 ? 0 : -1;
}

const struct ina228_probe_config *ina228_probe_config_get(const struct device *dev)
{
	return dev->config;
}

void ina228_probe_bus_get(const struct device *dev, ts_bus *bus)
{
	bus->read = bus_read;
	bus->write = bus_write;
	bus->ctx = (void *)dev;
}

bool ina228_probe_has_alert(const struct device *dev)
{
	const struct ina228_probe_config *cfg = dev->config;

	return cfg->alert.port != NULL;
}

static void alert_fired(const struct device *port, struct gpio_callback *cb, uint32_t pins)
{
	struct ina228_probe_data *data = CONTAINER_OF(cb, struct ina228_probe_data, alert_cb);

	ARG_UNUSED(port);
	ARG_UNUSED(pins);
	if (data->handler != NULL) {
		data->handler(data->dev, data->user);
	}
}

int ina228_probe_alert_enable(const struct device *dev, ina228_probe_alert_handler_t handler,
			      void *user)
{
	const struct ina228_probe_config *cfg = dev->config;
	struct ina228_probe_data *data = dev->data;

	if (cfg->alert.port == NULL) {
		return -ENOTSUP;
	}
	data->handler = handler;
	data->user = user;
	return gpio_pin_interrupt_configure_dt(&cfg->alert, GPIO_INT_EDGE_TO_ACTIVE);
}

int ina228_probe_alert_disable(const struct device *dev)
{
	const struct ina228_probe_config *cfg = dev->config;

	if (cfg->alert.port == NULL) {
		return -ENOTSUP;
	}
	return gpio_pin_interrupt_configure_dt(&cfg->alert, GPIO_INT_DISABLE);
}

static int ina228_probe_init(const struct device *dev)
{
	const struct ina228_probe_config *cfg = dev->config;
	struct ina228_probe_data *data = dev->data;
	int rc;

	data->dev = dev;
	if (!i2c_is_ready_dt(&cfg->i2c)) {
		LOG_ERR("%s: I2C bus %s not ready", dev->name, cfg->i2c.bus->name);
		return -ENODEV;
	}
	/* Free a bus left stuck by a reset mid-transfer. */
	rc = i2c_recover_bus(cfg->i2c.bus);
	if (rc == -ENOSYS) {
		LOG_DBG("%s: no i2c_recover_bus on %s (scl-gpios/sda-gpios recover it)", dev->name,
			cfg->i2c.bus->name);
	} else if (rc != 0) {
		LOG_WRN("%s: I2C bus recovery failed (%d)", dev->name, rc);
	}
	if (cfg->alert.port == NULL) {
		return 0;
	}
	if (!gpio_is_ready_dt(&cfg->alert)) {
		LOG_ERR("%s: ALERT GPIO not ready", dev->name);
		return -ENODEV;
	}
	rc = gpio_pin_configure_dt(&cfg->alert, GPIO_INPUT);
	if (rc != 0) {
		return rc;
	}
	gpio_init_callback(&data->alert_cb, alert_fired, BIT(cfg->alert.pin));
	return gpio_add_callback_dt(&cfg->alert, &data->alert_cb);
}

#if DT_ANY_INST_HAS_PROP_STATUS_OKAY(scl_gpios)
#define RECOVER_HALF_BIT_US 5 /* 100 kHz: within every mode's timing */

/* Open drain by hand: drive low, or release to the pull-up (input). */
static int line_drive_low(const struct gpio_dt_spec *pin, bool low)
{
	return gpio_pin_configure_dt(pin, low ? GPIO_OUTPUT_INACTIVE : GPIO_INPUT);
}

/* The I2C-bus specification's recovery (UM10204 3.1.16): clock SCL until
 * the target releases SDA (at most nine clocks), then a STOP. */
static int ina228_probe_recover_pins(const struct gpio_dt_spec *scl, const struct gpio_dt_spec *sda)
{
	int clocks = 0;
	int rc;

	if (!gpio_is_ready_dt(scl) || !gpio_is_ready_dt(sda)) {
		return -ENODEV;
	}
	rc = line_drive_low(scl, false);
	rc = rc != 0 ? rc : line_drive_low(sda, false);
	if (rc != 0) {
		return rc;
	}
	k_busy_wait(RECOVER_HALF_BIT_US);
	if (gpio_pin_get_dt(sda) == 1) {
		return 0; /* SDA idle high: nothing to do */
	}
	while (clocks < 9 && gpio_pin_get_dt(sda) == 0) {
		(void)line_drive_low(scl, true);
		k_busy_wait(RECOVER_HALF_BIT_US);
		(void)line_drive_low(scl, false);
		k_busy_wait(RECOVER_HALF_BIT_US);
		clocks++;
	}
	/* STOP: SDA low while SCL is low, SCL up, then SDA up. */
	(void)line_drive_low(scl, true);
	(void)line_drive_low(sda, true);
	k_busy_wait(RECOVER_HALF_BIT_US);
	(void)line_drive_low(scl, false);
	k_busy_wait(RECOVER_HALF_BIT_US);
	(void)line_drive_low(sda, false);
	k_busy_wait(RECOVER_HALF_BIT_US);
	LOG_WRN("I2C bus: SDA was held low, released after %d SCL clocks", clocks);
	return gpio_pin_get_dt(sda) == 1 ? 0 : -EBUSY;
}

/* Runs after GPIO and before the I2C controller's init, which then muxes
 * the pins back to I2C (pinctrl default state). */
static int ina228_probe_recover_all(void)
{
#define RECOVER_INST(inst)                                                                         \
	do {                                                                                       \
		const struct gpio_dt_spec scl = GPIO_DT_SPEC_INST_GET(inst, scl_gpios);            \
		const struct gpio_dt_spec sda = GPIO_DT_SPEC_INST_GET(inst, sda_gpios);            \
		int rc_ = ina228_probe_recover_pins(&scl, &sda);                                   \
		if (rc_ != 0) {                                                                    \
			LOG_ERR("I2C bus recovery of %s failed (%d)",                              \
				DT_NODE_FULL_NAME(DT_DRV_INST(inst)), rc_);                        \
		}                                                                                  \
	} while (0);
	DT_INST_FOREACH_STATUS_OKAY(RECOVER_INST)
	return 0;
}

BUILD_ASSERT(CONFIG_INA228_PROBE_RECOVER_PRIORITY > CONFIG_GPIO_INIT_PRIORITY &&
		     CONFIG_INA228_PROBE_RECOVER_PRIORITY < CONFIG_I2C_INIT_PRIORITY,
	     "bus recovery runs after GPIO, before the I2C controller takes the pins");
SYS_INIT(ina228_probe_recover_all, POST_KERNEL, CONFIG_INA228_PROBE_RECOVER_PRIORITY);
#endif

#define INA228_PROBE_DEFINE(inst)                                                                  \
	static struct ina228_probe_data ina228_probe_data_##inst;                                  \
	static const struct ina228_probe_config ina228_probe_config_##inst = {                     \
		.i2c = I2C_DT_SPEC_INST_GET(inst),                                                 \
		.alert = GPIO_DT_SPEC_INST_GET_OR(inst, alert_gpios, {0}),                         \
		.shunt_micro_ohms = DT_INST_PROP_OR(inst, shunt_micro_ohms, 0),                    \
		.max_current_microamp = DT_INST_PROP_OR(inst, max_current_microamp, 0),            \
		.adc_range = DT_INST_PROP(inst, adc_range),                                        \
	};                                                                                         \
	DEVICE_DT_INST_DEFINE(inst, ina228_probe_init, NULL, &ina228_probe_data_##inst,            \
			      &ina228_probe_config_##inst, POST_KERNEL,                            \
			      CONFIG_INA228_PROBE_INIT_PRIORITY, NULL);

DT_INST_FOREACH_STATUS_OKAY(INA228_PROBE_DEFINE)
