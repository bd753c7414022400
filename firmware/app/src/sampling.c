/* The sampling thread. It is the only caller of ts_probe_sample() and
 * ts_probe_poll_ready(); it never touches the link, so a host that stops
 * reading costs dropped (and counted) samples, never a late one.
 *
 * Pacing: with the ALERT pin wired, each conversion-ready edge wakes the
 * thread; a sample is taken on the first fresh conversion at or after its
 * due time, so requested rates below the conversion rate are honoured.
 * Without ALERT, a timer ticks at the sample rate and the thread polls
 * DIAG_ALRT (CNVRF) so each sample is a new conversion. */
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/atomic.h>

#include <throttlescope_zephyr/ina228_probe.h>

#include "sampling.h"

LOG_MODULE_REGISTER(sampling, CONFIG_LOG_DEFAULT_LEVEL);

/** Polls for a fresh conversion after a tick before giving the slot up. */
#define NOT_READY_RETRIES 4

static ts_probe *probe;
static const struct device *ina_dev;
static bool use_alert;

/* Wake-ups queue up to a few so a short stall is caught up, not lost. */
static K_SEM_DEFINE(wake, 0, 4);
static atomic_t heartbeat;
static atomic_t period_us;   /* 0 while stopped */
static uint64_t next_due_us; /* sampling thread only */
static atomic_t restart;     /* a new run began: reset next_due_us */

static void tick(struct k_timer *t)
{
	ARG_UNUSED(t);
	k_sem_give(&wake);
}

static K_TIMER_DEFINE(pace_timer, tick, NULL);

static void alert(const struct device *dev, void *user)
{
	ARG_UNUSED(dev);
	ARG_UNUSED(user);
	k_sem_give(&wake);
}

uint64_t sampling_now_us(void *ctx)
{
	ARG_UNUSED(ctx);
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cyc_to_us_floor64(k_cycle_get_64());
#else
	return k_ticks_to_us_floor64(k_uptime_ticks());
#endif
}

void sampling_changed(void *ctx, bool running, uint32_t rate_hz)
{
	ARG_UNUSED(ctx);
	if (!running || rate_hz == 0u) {
		atomic_set(&period_us, 0);
		k_timer_stop(&pace_timer);
		if (use_alert) {
			(void)ina228_probe_alert_disable(ina_dev);
		}
		return;
	}
	uint32_t period = 1000000u / rate_hz;

	atomic_set(&period_us, (atomic_val_t)MAX(period, 1u));
	atomic_set(&restart, 1);
	if (use_alert) {
		(void)ina228_probe_alert_enable(ina_dev, alert, NULL);
	} else {
		k_timer_start(&pace_timer, K_USEC(period), K_USEC(period));
	}
}

/* One ALERT edge: sample when due, else just clear the flag (and re-arm). */
static void on_alert(uint32_t period)
{
	uint64_t now = sampling_now_us(NULL);

	if (now + period / 8u >= next_due_us) {
		if (ts_probe_poll_ready(probe)) {
			next_due_us = MAX(next_due_us + period, now);
		}
	} else {
		bool ready;

		(void)ts_ina228_conversion_ready(&probe->ina, &ready, NULL);
	}
}

/* One timer tick: take the sample once the chip has a fresh conversion. */
static void on_tick(uint32_t period)
{
	for (int i = 0; i <= NOT_READY_RETRIES; i++) {
		if (ts_probe_poll_ready(probe) || !ts_probe_running(probe)) {
			return;
		}
		k_busy_wait(MAX(period / 16u, 10u));
	}
	/* No fresh conversion this slot: no sample rather than a stale one. */
}

static void sampling_thread(void *a, void *b, void *c)
{
	ARG_UNUSED(a);
	ARG_UNUSED(b);
	ARG_UNUSED(c);
	for (;;) {
		int rc = k_sem_take(&wake, K_MSEC(100));

		atomic_inc(&heartbeat);
		if (rc != 0) {
			continue;
		}
		uint32_t period = (uint32_t)atomic_get(&period_us);

		if (period == 0u || !ts_probe_running(probe)) {
			continue;
		}
		if (atomic_cas(&restart, 1, 0)) {
			next_due_us = sampling_now_us(NULL);
		}
		if (use_alert) {
			on_alert(period);
		} else {
			on_tick(period);
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
	k_thread_create(&sampling_thread_data, sampling_stack,
			K_THREAD_STACK_SIZEOF(sampling_stack), sampling_thread, NULL, NULL, NULL,
			K_PRIO_PREEMPT(CONFIG_THROTTLESCOPE_SAMPLING_PRIORITY), 0, K_NO_WAIT);
	k_thread_name_set(&sampling_thread_data, "sampling");
	LOG_INF("sampling paced by %s", use_alert ? "the ALERT pin (conversion ready)"
						  : "a timer polling DIAG_ALRT");
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
