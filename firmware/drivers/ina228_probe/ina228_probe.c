/* "ti,ina228-probe": the INA228 as a bus for the throttlescope core.
 * One register access is one I2C transaction: a register pointer write and
 * a repeated-start burst read of the whole 2/3/5-byte register. */
#define DT_DRV_COMPAT ti_ina228_probe

#include <errno.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/i2c.h>
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
