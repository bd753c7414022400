#include <zephyr/drivers/gpio.h>

#include "status_led.h"

#if DT_NODE_HAS_STATUS(DT_ALIAS(led0), okay)
static const struct gpio_dt_spec led = GPIO_DT_SPEC_GET(DT_ALIAS(led0), gpios);
static bool have_led;

void status_led_init(void)
{
	have_led = gpio_is_ready_dt(&led) && gpio_pin_configure_dt(&led, GPIO_OUTPUT_INACTIVE) == 0;
}

void status_led_show(enum status_led_state state, int64_t uptime_ms)
{
	int64_t half_period_ms;

	if (!have_led) {
		return;
	}
	switch (state) {
	case STATUS_LED_IDLE:
		(void)gpio_pin_set_dt(&led, 1);
		return;
	case STATUS_LED_SAMPLING:
		half_period_ms = 500;
		break;
	case STATUS_LED_DROPPING:
		half_period_ms = 125;
		break;
	default:
		half_period_ms = 50;
		break;
	}
	(void)gpio_pin_set_dt(&led, (int)((uptime_ms / half_period_ms) & 1));
}
#else
void status_led_init(void)
{
}

void status_led_show(enum status_led_state state, int64_t uptime_ms)
{
	ARG_UNUSED(state);
	ARG_UNUSED(uptime_ms);
}
#endif
