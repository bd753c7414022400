/* The USB PD tap on the RP2040 (pd_tap.h).
 *
 * PIO: one state machine per CC line runs cc_edges (cc_edges_pio.h). X counts down once
 * every two clock cycles, whatever the line does (every second instruction is
 * a `jmp x--`, including on the paths that record an edge), so X is a clock
 * at clk_sys / 2 (62.5 MHz: 16 ns). When the line changes, the machine pushes
 * one word: bit 31 the level after the edge, bits 30..0 the low 31 bits of X.
 * Both machines start in the same cycle (pio_enable_sm_mask_in_sync) with X
 * at 0, so their stamps share one time base.
 *
 * DMA: one channel per machine moves its RX FIFO into a ring in RAM that the
 * channel wraps by itself (the write ring), with a transfer count that lasts
 * years of PD traffic (re-armed if it ever runs out). The link thread reads
 * the channel's transfer count to see how many words arrived; a thread late
 * by more than a ring's worth loses the oldest, counted. A full PIO FIFO (the
 * DMA not keeping up) is seen in FDEBUG.RXSTALL, counted.
 *
 * Time: clk_sys and the 1 MHz system timer both come from the crystal, so a
 * stamp maps to the probe clock by one offset taken when the machines start.
 * The 31-bit stamps wrap every 34 s; the thread widens them to 64 bits, using
 * the probe clock to count the wraps across a long quiet line. */
#include <errno.h>

#include <zephyr/device.h>
#include <zephyr/devicetree.h>
#include <zephyr/drivers/misc/pio_rpi_pico/pio_rpi_pico.h>
#include <zephyr/drivers/pinctrl.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>

#include <hardware/clocks.h>
#include <hardware/dma.h>
#include <hardware/pio.h>

#include "throttlescope/pd_decode.h"

#include "cc_edges_pio.h"
#include "pd_tap.h"
#include "sampling.h"

LOG_MODULE_REGISTER(pd_tap, CONFIG_LOG_DEFAULT_LEVEL);

#define TAP_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_pd_tap)
BUILD_ASSERT(DT_NODE_EXISTS(TAP_NODE), "CONFIG_THROTTLESCOPE_PD_TAP needs a \"throttlescope,pd-tap\" node");

#define RING_WORDS CONFIG_THROTTLESCOPE_PD_TAP_RING_EDGES
BUILD_ASSERT((RING_WORDS & (RING_WORDS - 1)) == 0 && RING_WORDS >= 64 && RING_WORDS <= 8192,
	     "the DMA write ring is a power of two of 256 B .. 32 KB");
#define RING_BITS (__builtin_ctz(RING_WORDS * 4u))
/** Transfers a DMA channel is armed for: about 150 days of 320 edges/s. */
#define DMA_COUNT 0xFFFFFFFFu
#define STAMP_MASK CC_EDGES_STAMP_MASK
#define STAMP_SPAN (1ull << 31)

/* The program: cc_edges_pio.h (the instructions and how they keep time). */
RPI_PICO_PIO_DEFINE_PROGRAM(cc_edges, CC_EDGES_WRAP_TARGET, CC_EDGES_WRAP, CC_EDGES_WORDS);

PINCTRL_DT_DEFINE(TAP_NODE);

/* The rings, each aligned to its size as the DMA's write ring needs. */
static uint32_t rings[2][RING_WORDS] __aligned(RING_WORDS * 4);

/** One CC line's tap. */
struct line {
	uint32_t *ring;
	uint32_t gpio;
	uint32_t sm;
	int dma;
	uint32_t taken;     /**< words read so far (mod 2^32, as the DMA counts) */
	uint32_t last_stamp;
	uint64_t tick;      /**< the last edge, widened */
	uint64_t tick_us;   /**< probe time when it was read */
	bool any;           /**< an edge was read */
	bool quiet;         /**< no edge since the last idle hand-over */
	ts_pd_decoder dec;
	uint32_t seen;      /**< contract generation passed to the probe */
	struct pd_tap_counters counters;
};

static struct line lines[2] = {
	{.ring = rings[0], .gpio = DT_RPI_PICO_PIO_PIN_BY_NAME(TAP_NODE, default, 0, cc_pins, 0)},
	{.ring = rings[1], .gpio = DT_RPI_PICO_PIO_PIN_BY_NAME(TAP_NODE, default, 0, cc_pins, 1)},
};
static PIO pio;
static uint32_t tick_hz;
static uint64_t start_us;   /**< probe time of tick 0 */
static bool running;

static uint64_t ticks_to_us(uint64_t t)
{
	return start_us + t / tick_hz * 1000000u + (t % tick_hz) * 1000000u / tick_hz;
}

static int start_sm(struct line *l, uint32_t offset)
{
	size_t sm = 0;

	if (pio_rpi_pico_allocate_sm(DEVICE_DT_GET(DT_PARENT(TAP_NODE)), &sm) != 0) {
		return -EBUSY;
	}
	l->sm = (uint32_t)sm;
	pio_sm_config c = pio_get_default_sm_config();

	sm_config_set_jmp_pin(&c, l->gpio);
	sm_config_set_in_shift(&c, true, false, 32); /* right: the level lands in bit 31 */
	sm_config_set_fifo_join(&c, PIO_FIFO_JOIN_RX);
	sm_config_set_clkdiv_int_frac(&c, 1, 0);
	sm_config_set_wrap(&c, offset + RPI_PICO_PIO_GET_WRAP_TARGET(cc_edges),
			   offset + RPI_PICO_PIO_GET_WRAP(cc_edges));
	pio_sm_set_consecutive_pindirs(pio, l->sm, l->gpio, 1, false);
	pio_sm_init(pio, l->sm, offset + CC_EDGES_START, &c);
	pio_sm_exec(pio, l->sm, pio_encode_mov(pio_x, pio_null));     /* X = 0 */
	pio_sm_exec(pio, l->sm, pio_encode_mov_not(pio_osr, pio_null)); /* OSR = ones */
	return 0;
}

static void arm_dma(struct line *l)
{
	dma_channel_config c = dma_channel_get_default_config((uint)l->dma);

	channel_config_set_transfer_data_size(&c, DMA_SIZE_32);
	channel_config_set_read_increment(&c, false);
	channel_config_set_write_increment(&c, true);
	channel_config_set_ring(&c, true, RING_BITS);
	channel_config_set_dreq(&c, pio_get_dreq(pio, l->sm, false));
	channel_config_set_high_priority(&c, true);
	l->taken = 0;
	dma_channel_configure((uint)l->dma, &c, l->ring, &pio->rxf[l->sm], DMA_COUNT, true);
}

int pd_tap_init(void)
{
	const struct device *piodev = DEVICE_DT_GET(DT_PARENT(TAP_NODE));

	if (!device_is_ready(piodev)) {
		LOG_ERR("PIO %s not ready: no PD tap", piodev->name);
		return -ENODEV;
	}
	pio = pio_rpi_pico_get_pio(piodev);
	if (!pio_can_add_program(pio, RPI_PICO_PIO_GET_PROGRAM(cc_edges))) {
		LOG_ERR("no room for the PD tap's PIO program");
		return -ENOMEM;
	}
	int offset = pio_add_program(pio, RPI_PICO_PIO_GET_PROGRAM(cc_edges));
	int err = pinctrl_apply_state(PINCTRL_DT_DEV_CONFIG_GET(TAP_NODE), PINCTRL_STATE_DEFAULT);

	if (offset < 0 || err != 0) {
		LOG_ERR("PD tap setup failed (program %d, pins %d)", offset, err);
		return -EIO;
	}
	tick_hz = clock_get_hz(clk_sys) / CC_EDGES_CYCLES_PER_TICK;
	ts_pd_config cfg = {
		.tick_hz = tick_hz,
		.glitch_ns = CONFIG_THROTTLESCOPE_PD_TAP_GLITCH_NS,
	};
	uint32_t mask = 0;

	for (int k = 0; k < 2; k++) {
		struct line *l = &lines[k];

		if (start_sm(l, (uint32_t)offset) != 0) {
			LOG_ERR("no free PIO state machine for CC%d's tap", k + 1);
			return -EBUSY;
		}
		l->dma = dma_claim_unused_channel(false);
		if (l->dma < 0 || ts_pd_init(&l->dec, &cfg) != 0) {
			LOG_ERR("no DMA channel (or decoder) for CC%d's tap", k + 1);
			return -EBUSY;
		}
		arm_dma(l);
		mask |= BIT(l->sm);
	}
	start_us = sampling_now_us(NULL);
	pio_enable_sm_mask_in_sync(pio, mask);
	running = true;
	LOG_INF("PD tap: CC1 on GP%u, CC2 on GP%u, PIO%u SMs %u/%u at %u Hz, DMA %d/%d, "
		"ring %u edges each",
		(unsigned)lines[0].gpio, (unsigned)lines[1].gpio, (unsigned)pio_get_index(pio),
		(unsigned)lines[0].sm, (unsigned)lines[1].sm, (unsigned)tick_hz, lines[0].dma,
		lines[1].dma, (unsigned)RING_WORDS);
	return 0;
}

/* A stamp after the previous one, widened to 64 bits; the probe clock
 * says how many 31-bit wraps a long quiet line hid. */
static uint64_t widen(struct line *l, uint32_t stamp, uint64_t now_us)
{
	if (!l->any) {
		l->any = true;
		l->last_stamp = stamp;
		/* X counts down from 0: the first stamp is ticks since the start, mod 2^31. */
		uint64_t since = (uint64_t)(now_us - start_us) * tick_hz / 1000000u;
		uint64_t t = (0u - stamp) & STAMP_MASK;

		t += (since > t ? (since - t + STAMP_SPAN / 2u) / STAMP_SPAN : 0u) * STAMP_SPAN;
		l->tick = t;
		l->tick_us = now_us;
		return t;
	}
	uint64_t step = (l->last_stamp - stamp) & STAMP_MASK;
	uint64_t since = (uint64_t)(now_us - l->tick_us) * tick_hz / 1000000u;

	step += (since > step ? (since - step + STAMP_SPAN / 2u) / STAMP_SPAN : 0u) * STAMP_SPAN;
	l->last_stamp = stamp;
	l->tick += step;
	l->tick_us = now_us;
	return l->tick;
}

static void poll_line(struct line *l, ts_probe *probe, uint64_t now_us)
{
	uint32_t left = dma_channel_hw_addr((uint)l->dma)->transfer_count;
	uint32_t written = DMA_COUNT - left;
	uint32_t fresh = written - l->taken;

	if (fresh > RING_WORDS) {
		l->counters.ring_dropped += fresh - RING_WORDS;
		l->taken = written - RING_WORDS;
		fresh = RING_WORDS;
	}
	uint32_t stall = PIO_FDEBUG_RXSTALL_LSB + l->sm;

	if (pio->fdebug & BIT(stall)) {
		pio->fdebug = BIT(stall); /* write 1 to clear */
		l->counters.fifo_overflows++;
	}
	for (uint32_t i = 0; i < fresh; i++) {
		uint32_t w = l->ring[(l->taken + i) % RING_WORDS];

		ts_pd_feed_edge(&l->dec, widen(l, w & STAMP_MASK, now_us), (uint8_t)(w >> 31));
	}
	l->taken += fresh;
	l->counters.edges += fresh;
	if (fresh == 0u && l->any && !l->quiet) {
		/* A whole service period without an edge: the burst is over. */
		ts_pd_idle(&l->dec, l->tick + tick_hz / 1000u);
		l->quiet = true;
	} else if (fresh > 0u) {
		l->quiet = false;
	}
	if (!dma_channel_is_busy((uint)l->dma)) {
		l->counters.rearms++; /* its transfers ran out: words wait in the FIFO */
		arm_dma(l);
	}
	ts_pd_msg m;

	while (ts_pd_take(&l->dec, &m)) {
		LOG_DBG("CC%d %s at %llu us", (int)(l - lines) + 1,
			ts_pd_kind_name(ts_pd_msg_kind(&m)), (unsigned long long)ticks_to_us(m.t));
	}
	const ts_pd_counters *dc = ts_pd_counters_get(&l->dec);

	l->counters.messages = dc->messages;
	l->counters.crc_failures = dc->crc_failures;
	ts_pd_contract c;

	if (ts_pd_contract_changed(&l->dec, &l->seen, &c)) {
		LOG_INF("CC%d: contract %s %u mV %u mA (%u mW), object %u", (int)(l - lines) + 1,
			c.valid ? "in force" : "ended", (unsigned)c.mv, (unsigned)c.ma,
			(unsigned)c.mw, (unsigned)c.position);
		ts_probe_pd_contract(probe, &c, ticks_to_us(c.t));
	}
}

void pd_tap_poll(ts_probe *probe)
{
	if (!running) {
		return;
	}
	uint64_t now_us = sampling_now_us(NULL);

	for (int k = 0; k < 2; k++) {
		poll_line(&lines[k], probe, now_us);
	}
}

void pd_tap_counters_get(unsigned k, struct pd_tap_counters *out)
{
	*out = lines[k < 2u ? k : 1u].counters;
}
