/* The host link: a UART-class device from devicetree (chosen
 * "throttlescope,link": USB CDC-ACM on the Pico, a pseudo-terminal UART on
 * native_sim). Transmit never blocks: frames go into a ring and are refused
 * whole when it is full. */
#ifndef THROTTLESCOPE_APP_LINK_H
#define THROTTLESCOPE_APP_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttlescope/probe.h"

/** Link counters the protocol does not carry (logged). */
struct link_counters {
	uint32_t rx_bytes_dropped; /**< host bytes lost to a full receive ring */
	uint32_t tx_frames_refused; /**< frames refused for lack of room */
	uint64_t tx_bytes;          /**< bytes handed to the device */
};

/** Bring the link device up and start the link thread serving probe p. */
int link_init(ts_probe *p);

/** ts_platform.tx_frame: queue a whole frame or refuse it, never block. */
bool link_tx_frame(void *ctx, const uint8_t *frame, size_t len);

/** Snapshot of the link counters. */
void link_counters_get(struct link_counters *out);

/** Increments while the link thread is alive (for the watchdog). */
uint32_t link_heartbeat(void);

#endif
