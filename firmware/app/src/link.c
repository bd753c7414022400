/* The link thread owns the host side of the probe: it feeds received bytes
 * to ts_probe_rx() and calls ts_probe_service() every millisecond or two,
 * which hands finished frames to link_tx_frame(). Bytes move between the
 * rings and the device in the UART interrupt where the driver has one
 * (CDC-ACM, hardware UARTs) and by polling otherwise (native_sim's pty). */
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/drivers/uart.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/sys/atomic.h>
#include <zephyr/sys/ring_buffer.h>


#include "throttlescope/protocol.h"

#include "cc_sense.h"
#include "link.h"
#include "pd_tap.h"
#include "sampling.h"

LOG_MODULE_REGISTER(link, CONFIG_LOG_DEFAULT_LEVEL);

#define LINK_NODE DT_CHOSEN(throttlescope_link)
BUILD_ASSERT(DT_NODE_HAS_STATUS(LINK_NODE, okay),
	     "devicetree needs chosen { throttlescope,link = &<uart or cdc-acm>; }");

/** How often the link thread services the probe when idle. */
#define SERVICE_PERIOD K_MSEC(2)

static const struct device *const link_dev = DEVICE_DT_GET(LINK_NODE);
static ts_probe *probe;

RING_BUF_DECLARE(tx_ring, CONFIG_THROTTLESCOPE_LINK_TX_BUF_SIZE);
RING_BUF_DECLARE(rx_ring, CONFIG_THROTTLESCOPE_LINK_RX_BUF_SIZE);
static struct k_spinlock tx_lock;
static struct k_spinlock rx_lock;
static K_SEM_DEFINE(rx_ready, 0, 1);
static struct link_counters counters;
static atomic_t heartbeat;

#if defined(CONFIG_UART_INTERRUPT_DRIVEN)
static void uart_isr(const struct device *dev, void *user)
{
	ARG_UNUSED(user);
	while (uart_irq_update(dev) > 0 && uart_irq_is_pending(dev) > 0) {
		if (uart_irq_rx_ready(dev) > 0) {
			uint8_t buf[64];
			int n = uart_fifo_read(dev, buf, sizeof(buf));

			if (n > 0) {
				k_spinlock_key_t key = k_spin_lock(&rx_lock);
				uint32_t put = ring_buf_put(&rx_ring, buf, (uint32_t)n);

				counters.rx_bytes_dropped += (uint32_t)n - put;
				k_spin_unlock(&rx_lock, key);
				k_sem_give(&rx_ready);
			}
		}
		if (uart_irq_tx_ready(dev) > 0) {
			k_spinlock_key_t key = k_spin_lock(&tx_lock);
			uint8_t *data;
			uint32_t avail = ring_buf_get_claim(&tx_ring, &data, 64);

			if (avail == 0u) {
				uart_irq_tx_disable(dev);
			} else {
				int sent = uart_fifo_fill(dev, data, (int)avail);

				sent = MAX(sent, 0);
				ring_buf_get_finish(&tx_ring, (uint32_t)sent);
				counters.tx_bytes += (uint32_t)sent;
			}
			k_spin_unlock(&tx_lock, key);
		}
	}
}
#endif

bool link_tx_frame(void *ctx, const uint8_t *frame, size_t len)
{
	ARG_UNUSED(ctx);
	k_spinlock_key_t key = k_spin_lock(&tx_lock);

	if (ring_buf_space_get(&tx_ring) < len) {
		counters.tx_frames_refused++;
		k_spin_unlock(&tx_lock, key);
		return false; /* the core keeps the batch and counts the refusal */
	}
	(void)ring_buf_put(&tx_ring, frame, (uint32_t)len);
	k_spin_unlock(&tx_lock, key);
#if defined(CONFIG_UART_INTERRUPT_DRIVEN)
	uart_irq_tx_enable(link_dev);
#endif
	return true;
}

/* Without interrupts: move whatever the device has and takes, then return. */
static void poll_device(void)
{
#if !defined(CONFIG_UART_INTERRUPT_DRIVEN)
	unsigned char c;
	uint8_t *data;

	while (uart_poll_in(link_dev, &c) == 0) {
		if (ring_buf_put(&rx_ring, &c, 1) != 1u) {
			counters.rx_bytes_dropped++;
		}
	}
	k_spinlock_key_t key = k_spin_lock(&tx_lock);
	uint32_t avail = ring_buf_get_claim(&tx_ring, &data, CONFIG_THROTTLESCOPE_LINK_TX_BUF_SIZE);

	k_spin_unlock(&tx_lock, key);
	for (uint32_t i = 0; i < avail; i++) {
		uart_poll_out(link_dev, data[i]);
	}
	key = k_spin_lock(&tx_lock);
	ring_buf_get_finish(&tx_ring, avail);
	counters.tx_bytes += avail;
	k_spin_unlock(&tx_lock, key);
#endif
}

static void drain_rx(void)
{
	uint8_t buf[64];

	for (;;) {
		k_spinlock_key_t key = k_spin_lock(&rx_lock);
		uint32_t n = ring_buf_get(&rx_ring, buf, sizeof(buf));

		k_spin_unlock(&rx_lock, key);
		if (n == 0u) {
			return;
		}
		ts_probe_rx(probe, buf, n, sampling_now_us(NULL));
	}
}

#if defined(CONFIG_THROTTLESCOPE_AUTOSTART)
/* Hand the core the Start a host would send, through the same decoder. */
static void autostart(void)
{
	static uint8_t frame[TS_HOST_FRAME_MAX];
	throttlescope_v1_HostToProbe cmd = throttlescope_v1_HostToProbe_init_zero;
	size_t len = 0;

	cmd.which_cmd = throttlescope_v1_HostToProbe_start_tag;
	/* Every field 0: the configured defaults (Kconfig). */
	cmd.cmd.start.vbus_ct = throttlescope_v1_ConversionTime_CT_150US;
	cmd.cmd.start.vshunt_ct = throttlescope_v1_ConversionTime_CT_150US;
	cmd.cmd.start.temp_ct = throttlescope_v1_ConversionTime_CT_150US;
	cmd.cmd.start.averaging = throttlescope_v1_Averaging_AVG_1;
	if (ts_proto_frame_host_msg(&cmd, frame, sizeof(frame), &len) != TS_OK) {
		LOG_ERR("could not encode the autostart command");
		return;
	}
	ts_probe_rx(probe, frame, len, sampling_now_us(NULL));
	LOG_INF("autostart: %u Hz, %u samples per batch", ts_probe_rate_hz(probe),
		CONFIG_THROTTLESCOPE_DEFAULT_BATCH_SAMPLES);
}
#endif

static void link_thread(void *a, void *b, void *c)
{
	ARG_UNUSED(a);
	ARG_UNUSED(b);
	ARG_UNUSED(c);
#if defined(CONFIG_THROTTLESCOPE_AUTOSTART)
	autostart();
#endif
	for (;;) {
		(void)k_sem_take(&rx_ready, SERVICE_PERIOD);
		atomic_inc(&heartbeat);
		poll_device();
		drain_rx();
		pd_tap_poll(probe);   /* the contract before the CC window it governs */
		cc_sense_poll(probe); /* the core owns the port state in this thread */
		ts_probe_service(probe);
		poll_device();
	}
}

K_THREAD_STACK_DEFINE(link_stack, CONFIG_THROTTLESCOPE_LINK_STACK_SIZE);
static struct k_thread link_thread_data;

int link_init(ts_probe *p)
{
	probe = p;
	if (!device_is_ready(link_dev)) {
		LOG_ERR("link device %s not ready", link_dev->name);
		return -ENODEV;
	}
	/* On USB boards the device stack (device_next) with its CDC-ACM
	 * function is started at boot (CDC_ACM_SERIAL_INITIALIZE_AT_BOOT). */
#if defined(CONFIG_UART_INTERRUPT_DRIVEN)
	int err = uart_irq_callback_user_data_set(link_dev, uart_isr, NULL);

	if (err != 0) {
		LOG_ERR("link device %s has no interrupt API (%d)", link_dev->name, err);
		return err;
	}
	uart_irq_rx_enable(link_dev);
#endif
	k_thread_create(&link_thread_data, link_stack, K_THREAD_STACK_SIZEOF(link_stack),
			link_thread, NULL, NULL, NULL,
			K_PRIO_PREEMPT(CONFIG_THROTTLESCOPE_LINK_PRIORITY), 0, K_NO_WAIT);
	k_thread_name_set(&link_thread_data, "link");
	LOG_INF("link on %s (%s)", link_dev->name,
		IS_ENABLED(CONFIG_UART_INTERRUPT_DRIVEN) ? "interrupt driven" : "polled");
	return 0;
}

void link_counters_get(struct link_counters *out)
{
	k_spinlock_key_t key = k_spin_lock(&tx_lock);

	*out = counters;
	k_spin_unlock(&tx_lock, key);
}

uint32_t link_heartbeat(void)
{
	return (uint32_t)atomic_get(&heartbeat);
}
