/* The status LED (devicetree alias led0), driven from the main loop. */
#ifndef THROTTLESCOPE_APP_STATUS_LED_H
#define THROTTLESCOPE_APP_STATUS_LED_H

#include <stdbool.h>
#include <stdint.h>

/** What the probe is doing, as the LED shows it. */
enum status_led_state {
	STATUS_LED_IDLE,     /**< on: ready, waiting for a host Start */
	STATUS_LED_SAMPLING, /**< 1 Hz blink (500 ms on, 500 ms off) */
	STATUS_LED_DROPPING, /**< sampling, samples dropped in the last ~250 ms: 4 Hz */
	STATUS_LED_FAULT,    /**< INA228 missing or wrong: 10 Hz */
};

/** Configure the pin; a board without led0 makes every call a no-op. */
void status_led_init(void);

/** Show a state; call every main-loop pass with the uptime in ms. */
void status_led_show(enum status_led_state state, int64_t uptime_ms);

#endif
