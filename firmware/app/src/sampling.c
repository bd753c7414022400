/* The sampling thread. It is the only context that touches the INA228 while
 * a run is on (ts_probe_alert, ts_probe_poll_ready, ts_probe_watchdog) and
 * it never touches the link, so a host that stops reading costs dropped
 * (and counted) samples, never a late one.
 *
 * Pacing (core API v2): the core sets DIAG_ALRT = CNVR | ALATCH, so ALERT
 * falls once per conversion and stays low until the core reads DIAG_ALRT.
 * The GPIO interrupt only stamps the edge time and wakes this thread, which
 * runs at the highest application priority and blocks in between (no timer,
 * no busy-wait). A late thread costs slots the core counts from the edge
 * spacing (Status.missed_slots), never a silent loss. No edge for
 * ts_probe_alert_timeout_us() (a reset chip stops raising ALERT):
 * ts_probe_watchdog() checks the chip and re-initialises it.
 * Without the ALERT pin, a timer at half the conversion period polls the
 * latched CNVRF; timestamps are then the poll time (up to half a period
 * late). */
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/spinlock.h>
#include <zephyr/sys/atomic.h>

#include <throttlescope_zephyr/ina228_probe.h>

#include "sampling.h"

LOG_MODULE_REGISTER(sampling, CONFIG_LOG_DEFAULT_LEVEL);

/** Wait between checks while stopped (heartbeat for the watchdog). */
#define IDLE_WAIT K_MSEC(100)

static ts_probe *probe;
static const struct device *ina_dev;
static bool use_alert;

/* One pending wake-up: in latch mode no new edge comes before the core has
 * read DIAG_ALRT, so more than one would only count the same conversion. */
static K_SEM_DEFINE(wake, 0, 1);
static struct k_spinlock edge_lock;
static uint64_t edge_us; /* probe time of the last ALERT edge */
static atomic_t heartbeat;
static bool armed; /* a run is on (sampling_changed only: the link context) */

uint64_t sampling_now_us(void *ctx)
{
	ARG_UNUSED(ctx);
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cyc_to_us_floor64(k_cycle_get_64());
#else
	return k_ticks_to_us_floor64(k_uptime_ticks());
#endif
}

/* ALERT fell (ISR): stamp the conversion's time now, sample in the thread. */
static void alert(const struct device *dev, void *user)
{
	uint64_t now = sampling_now_us(NULL);
	k_spinlock_key_t key = k_spin_lock(&edge_lock);

	ARG_UNUSED(dev);
	ARG_UNUSED(user);
	edge_us = now;
	k_spin_unlock(&edge_lock, key);
	k_sem_give(&wake);
}

static uint64_t last_edge_us(void)
{
	k_spinlock_key_t key = k_spin_lock(&edge_lock);
	uint64_t t = edge_us;

	k_spin_unlock(&edge_lock, key);
	return t;
}

static void poll_tick(struct k_timer *t)
{
	ARG_UNUSED(t);
	k_sem_give(&wake);
}

static K_TIMER_DEFINE(poll_timer, poll_tick, NULL);

void sampling_changed(void *ctx, bool run, uint32_t rate_hz)
{
	ARG_UNUSED(ctx);
	if (!run || rate_hz == 0u) {
		armed = false;
		k_timer_stop(&poll_timer);
		if (use_alert) {
			(void)ina228_probe_alert_disable(ina_dev);
		}
		return;
	}
	/* A wake-up left from a stopped run must not pass for a new edge; a
	 * Start during a run keeps the pending edge (the latched ALERT gives no
	 * other, and the core applies the new setup at that edge). */
	if (!armed) {
		k_sem_reset(&wake);
	}
	armed = true;
	if (use_alert) {
		(void)ina228_probe_alert_enable(ina_dev, alert, NULL);
	} else {
		/* Half the conversion period: a latched flag waits at most that. */
		uint32_t half = MAX(1000000u / rate_hz / 2u, 1u);

		k_timer_start(&poll_timer, K_USEC(half), K_USEC(half));
	}
}

static void sampling_thread(void *a, void *b, void *c)
{
	uint64_t last_sample_us = 0;

	ARG_UNUSED(a);
	ARG_UNUSED(b);
	ARG_UNUSED(c);
	for (;;) {
		k_timeout_t wait = ts_probe_running(probe) ? K_USEC(ts_probe_alert_timeout_us(probe))
							    : IDLE_WAIT;
		int rc = k_sem_take(&wake, wait);

		atomic_inc(&heartbeat);
		if (!ts_probe_running(probe)) {
			continue;
		}
		uint64_t now = sampling_now_us(NULL);

		if (rc == 0 && use_alert) {
			ts_probe_alert(probe, last_edge_us());
			last_sample_us = now;
		} else if (rc == 0 && ts_probe_poll_ready(probe)) {
			last_sample_us = now;
		} else if (now - last_sample_us >= ts_probe_alert_timeout_us(probe)) {
			/* No conversion for too long: a reset chip, or a lost edge. */
			ts_probe_watchdog(probe);
			last_sample_us = now;
		}
	}
}

K_THREAD_STACK_DEFINE(sampling_stack, CONFIG_THROTTLESCOPE_SAMPLING_STACK_SIZE);
static struct k_thread sampling_thread_data;

int sampling_init(ts_probe *p, const struct device *ina)
{
	probe = p;
	ina_dev = ina;
	use_alert = ina228_probe_has_alert(ina);
	/* The highest application priority: above main, the link and USB. It
	 * only ever blocks on the semaphore and the I2C transfers. */
	k_thread_create(&sampling_thread_data, sampling_stack,
			K_THREAD_STACK_SIZEOF(sampling_stack), sampling_thread, NULL, NULL, NULL,
			K_HIGHEST_APPLICATION_THREAD_PRIO, 0, K_NO_WAIT);
	k_thread_name_set(&sampling_thread_data, "sampling");
	LOG_INF("sampling paced by %s", use_alert ? "the latched ALERT pin (conversion ready)"
						  : "a timer polling the latched DIAG_ALRT");
	return 0;
}

uint32_t sampling_heartbeat(void)
{
	return (uint32_t)atomic_get(&heartbeat);
}

bool sampling_uses_alert(void)
{
	return use_alert;
}
