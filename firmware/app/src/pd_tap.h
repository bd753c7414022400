/* The USB PD tap: each CC line through its comparator (docs/hardware.md, "CC
 * data tap") into a PIO state machine that stamps every transition, a DMA channel
 * that moves the stamps into a ring in RAM, and the link thread that feeds
 * them to the core's decoder (ts_pd_*) and hands a changed contract to the
 * probe (ts_probe_pd_contract). Without a "throttlescope,pd-tap" node, or with
 * CONFIG_THROTTLESCOPE_PD_TAP off, everything here does nothing and the probe
 * says it does not decode PD. */
#ifndef THROTTLESCOPE_APP_PD_TAP_H
#define THROTTLESCOPE_APP_PD_TAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/probe.h"

/** What the tap counts per CC line (logged with the probe's counters). */
struct pd_tap_counters {
	uint32_t edges;          /**< edges handed to the decoder */
	uint32_t ring_dropped;   /**< edges the ring overwrote before the thread read them */
	uint32_t fifo_overflows; /**< times the PIO FIFO was full (edges lost there, uncounted) */
	uint32_t rearms;         /**< times the DMA channel ran out of transfers and restarted */
	uint32_t messages;       /**< decoded messages and resets (the decoder's counter) */
	uint32_t crc_failures;   /**< the decoder's */
};

#if defined(CONFIG_THROTTLESCOPE_PD_TAP)
/** Claim the state machines and DMA channels and start them; 0 or a negative errno. */
int pd_tap_init(void);
/**
 * Feed what arrived since the last call to the decoders and pass a changed
 * contract to the probe (link thread, every service period).
 */
void pd_tap_poll(ts_probe *probe);
/** Counters of CC line k (0: CC1, 1: CC2). */
void pd_tap_counters_get(unsigned k, struct pd_tap_counters *out);
#else
static inline int pd_tap_init(void)
{
	return -ENOTSUP;
}

static inline void pd_tap_poll(ts_probe *probe)
{
	(void)probe;
}

static inline void pd_tap_counters_get(unsigned k, struct pd_tap_counters *out)
{
	(void)k;
	*out = (struct pd_tap_counters){0};
}
#endif

#endif
