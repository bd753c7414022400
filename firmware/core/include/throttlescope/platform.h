/* Hooks the platform (Zephyr app, simulator, tests) gives the probe core. */
#ifndef THROTTLESCOPE_PLATFORM_H
#define THROTTLESCOPE_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Clock and link of the probe. */
typedef struct ts_platform {
    /** Probe monotonic time in microseconds (never goes back). */
    uint64_t (*now_us)(void *ctx);
    /**
     * Queue one complete frame (delimiter included) for the host. Must not
     * block: take all len bytes and return true, or take none and return
     * false when the link has no room now. The core never sends half frames.
     */
    bool (*tx_frame)(void *ctx, const uint8_t *frame, size_t len);
    /**
     * Optional (may be NULL): sampling started (running, rate_hz) or stopped
     * (false, 0), so the platform can arm or disarm its sample timer.
     */
    void (*sampling_changed)(void *ctx, bool running, uint32_t rate_hz);
    /** Passed back to every hook. */
    void *ctx;
} ts_platform;

#endif
