/* An I2C emulator of the INA228 register file for native_sim, following the
 * datasheet (TI SLYS021A) rather than the firmware's expectations:
 *  - identity, register widths, power-on/RST defaults (SHUNT_CAL 0x1000,
 *    ADC_CONFIG 0xFB68, DIAG_ALRT 0x0001, ENERGY/CHARGE 0; section 7.6);
 *  - continuous conversions on a timer at (CT sum) x AVG from ADC_CONFIG, a
 *    write to ADC_CONFIG restarting the conversion in progress;
 *  - conversion ready (section 7.3.7, TI E2E 1391284): with ALATCH = 0
 *    (transparent) CNVRF and the ALERT pin follow the conversions and clear
 *    by themselves shortly after each one, whether or not anything is read;
 *    with ALATCH = 1 they are held until DIAG_ALRT is read, and a conversion
 *    that completes while ALERT is held gives no new edge;
 *  - the time a transfer takes on the bus (bit count at the controller's
 *    clock-frequency, k_busy_wait on native_sim), so a flag that clears
 *    during a slow read is missed as on a board;
 *  - a chip reset (RST bit, or a test's power-on reset) and I2C errors;
 *  - result registers computed from physical inputs the test sets, with
 *    ENERGY and CHARGE accumulating over (emulated) time as the chip's do. */
#define DT_DRV_COMPAT throttlescope_ina228_probe

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zephyr/device.h>
#include <zephyr/drivers/emul.h>
#include <zephyr/drivers/gpio.h>
#include <zephyr/drivers/i2c.h>
#include <zephyr/drivers/i2c_emul.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/spinlock.h>

#if defined(CONFIG_GPIO_EMUL)
#include <zephyr/drivers/gpio/gpio_emul.h>
#endif

#include <throttlescope_zephyr/ina228_probe.h>

LOG_MODULE_REGISTER(ina228_probe_emul, CONFIG_LOG_DEFAULT_LEVEL);

enum {
	REG_CONFIG = 0x00,
	REG_ADC_CONFIG = 0x01,
	REG_SHUNT_CAL = 0x02,
	REG_SHUNT_TEMPCO = 0x03,
	REG_VSHUNT = 0x04,
	REG_VBUS = 0x05,
	REG_DIETEMP = 0x06,
	REG_CURRENT = 0x07,
	REG_POWER = 0x08,
	REG_ENERGY = 0x09,
	REG_CHARGE = 0x0A,
	REG_DIAG_ALRT = 0x0B,
	REG_SOVL = 0x0C,
	REG_SUVL = 0x0D,
	REG_BOVL = 0x0E,
	REG_BUVL = 0x0F,
	REG_TEMP_LIMIT = 0x10,
	REG_PWR_LIMIT = 0x11,
	REG_MANUFACTURER_ID = 0x3E,
	REG_DEVICE_ID = 0x3F,
};

#define CONFIG_RST BIT(15)
#define CONFIG_RSTACC BIT(14)
#define CONFIG_ADCRANGE BIT(4)
#define DIAG_ALATCH BIT(15)
#define DIAG_CNVR BIT(14)
#define DIAG_CNVRF BIT(1)
#define DIAG_MEMSTAT BIT(0)
#define DIAG_WRITABLE 0xF000u /* ALATCH, CNVR, SLOWALERT, APOL */

/* How long a transparent-mode CNVRF (and ALERT) stays set after a conversion
 * completes. The datasheet gives no figure; TI says the flag "clears
 * automatically after being sent" (E2E 1391284). The host model
 * (firmware/sim) uses the same default. */
#define TRANSPARENT_HOLD_US_DEFAULT 20u

/* Bit times of the parts of one transfer: START + address byte + ACK. */
#define I2C_ADDR_BITS 10u
#define I2C_BYTE_BITS 9u
#define I2C_STOP_BITS 1u

#define ADC_CONFIG_DEFAULT 0xFB68u /* continuous all, 1052 us each, AVG 1 */
#define SHUNT_CAL_DEFAULT 0x1000u
#define MANUFACTURER_TI 0x5449u
#define DEVICE_ID_INA228 0x2281u

#define RAW20_MAX ((1 << 19) - 1)
#define RAW20_MIN (-(1 << 19))
#define MASK40 ((UINT64_C(1) << 40) - 1)

struct ina228_emul_cfg {
	struct gpio_dt_spec alert; /* driven on conversion ready when DIAG_ALRT.CNVR is set */
	uint32_t bus_hz;           /* the I2C controller's clock-frequency */
};

struct ina228_emul_data {
	struct k_spinlock lock;
	const struct emul *self;
	struct k_timer conv_timer; /* one expiry per completed conversion */
	struct ina228_probe_emul_inputs in;
	uint16_t config;
	uint16_t adc_config;
	uint16_t shunt_cal;
	uint16_t shunt_tempco;
	uint16_t diag;           /* writable alert bits + MEMSTAT */
	uint16_t limits[6];      /* SOVL .. PWR_LIMIT, stored only */
	uint64_t energy;         /* 40-bit */
	int64_t charge;          /* 40-bit two's complement, kept sign-extended */
	uint64_t energy_rem;     /* POWER x us not yet worth one ENERGY LSB */
	int64_t charge_rem;      /* CURRENT x us not yet worth one CHARGE LSB */
	uint64_t last_update_us;
	bool cnvrf_latched;      /* ALATCH = 1: CNVRF held until DIAG_ALRT is read */
	bool release_alert;      /* a read released ALERT: drive the pin outside the lock */
	uint64_t last_conv_us;   /* when the last conversion completed */
	uint32_t conversions;    /* completed since the last reset */
	uint32_t alert_edges;    /* inactive -> active edges of ALERT */
	uint32_t transparent_hold_us;
	bool model_bus_time;
	bool fail_bus;
	uint32_t fail_next;      /* transfers still to fail */
	uint32_t reads;
	uint32_t resets;
};

static const uint16_t ct_us[8] = {50, 84, 150, 280, 540, 1052, 2074, 4120};
static const uint16_t avg_n[8] = {1, 4, 16, 64, 128, 256, 512, 1024};

static uint64_t emul_now_us(void)
{
#if defined(CONFIG_TIMER_HAS_64BIT_CYCLE_COUNTER)
	return k_cyc_to_us_floor64(k_cycle_get_64());
#else
	return k_ticks_to_us_floor64(k_uptime_ticks());
#endif
}

static uint32_t mode_of(const struct ina228_emul_data *d)
{
	return (d->adc_config >> 12) & 0xFu;
}

static bool continuous(const struct ina228_emul_data *d)
{
	return (mode_of(d) & 0x8u) != 0u && (mode_of(d) & 0x7u) != 0u;
}

/* Microseconds between completed conversion cycles (0 when not converting). */
static uint64_t conversion_period_us(const struct ina228_emul_data *d)
{
	uint32_t mode = mode_of(d);
	uint64_t cycle = 0;

	if (!continuous(d)) {
		return 0;
	}
	if (mode & 0x1u) {
		cycle += ct_us[(d->adc_config >> 9) & 0x7u];
	}
	if (mode & 0x2u) {
		cycle += ct_us[(d->adc_config >> 6) & 0x7u];
	}
	if (mode & 0x4u) {
		cycle += ct_us[(d->adc_config >> 3) & 0x7u];
	}
	return cycle * avg_n[d->adc_config & 0x7u];
}

static int32_t clamp20(int64_t v)
{
	return (int32_t)CLAMP(v, RAW20_MIN, RAW20_MAX);
}

static int32_t vshunt_raw(const struct ina228_emul_data *d)
{
	/* LSB 312.5 nV = 625/2, or 78.125 nV = 625/8 with ADCRANGE=1. */
	int64_t per_625 = (d->config & CONFIG_ADCRANGE) ? 8 : 2;

	return clamp20(d->in.vshunt_nv * per_625 / 625);
}

static int32_t vbus_raw(const struct ina228_emul_data *d)
{
	/* LSB 195.3125 uV = 3125/16 uV; the bus voltage is never negative. */
	return clamp20(MAX(d->in.vbus_uv, 0) * 16 / 3125);
}

static int32_t current_raw(const struct ina228_emul_data *d)
{
	/* CURRENT = VSHUNT x 4096 / SHUNT_CAL in either ADC range (the x4 of
	 * SHUNT_CAL with ADCRANGE=1 cancels the 4x finer VSHUNT LSB). */
	if (d->shunt_cal == 0u) {
		return 0;
	}
	return clamp20((int64_t)vshunt_raw(d) * 4096 / d->shunt_cal);
}

static uint32_t power_raw(const struct ina228_emul_data *d)
{
	/* POWER LSB = 3.2 x CURRENT_LSB: |CURRENT| x VBUS x 195.3125e-6 / 3.2. */
	uint64_t p = (uint64_t)llabs((int64_t)current_raw(d)) * (uint64_t)vbus_raw(d) / 16384u;

	return (uint32_t)MIN(p, 0xFFFFFFu);
}

static int16_t dietemp_raw(const struct ina228_emul_data *d)
{
	/* LSB 7.8125 m degC = 125/16. */
	return (int16_t)CLAMP((int64_t)d->in.die_temp_mc * 16 / 125, INT16_MIN, INT16_MAX);
}

/* Integrate ENERGY and CHARGE up to now while bus and shunt are converting. */
static void accumulate(struct ina228_emul_data *d)
{
	uint64_t now = emul_now_us();
	uint64_t dt = now - d->last_update_us;

	d->last_update_us = now;
	if (!continuous(d) || (mode_of(d) & 0x3u) != 0x3u || dt == 0u) {
		return;
	}
	/* ENERGY LSB = 16 x POWER LSB x 1 s: +POWER/16 per second. */
	d->energy_rem += (uint64_t)power_raw(d) * dt;
	d->energy = (d->energy + d->energy_rem / 16000000u) & MASK40;
	d->energy_rem %= 16000000u;
	/* CHARGE LSB = CURRENT_LSB x 1 s: +CURRENT per second. */
	d->charge_rem += (int64_t)current_raw(d) * (int64_t)dt;
	int64_t whole = d->charge_rem / 1000000;

	d->charge_rem -= whole * 1000000;
	uint64_t q = ((uint64_t)d->charge + (uint64_t)whole) & MASK40;

	d->charge = (q & (UINT64_C(1) << 39)) ? (int64_t)(q | ~MASK40) : (int64_t)q;
}

static void reset_chip(struct ina228_emul_data *d)
{
	d->config = 0;
	d->adc_config = ADC_CONFIG_DEFAULT;
	d->shunt_cal = SHUNT_CAL_DEFAULT;
	d->shunt_tempco = 0;
	d->diag = DIAG_MEMSTAT;
	memset(d->limits, 0, sizeof(d->limits));
	d->energy = 0;
	d->charge = 0;
	d->energy_rem = 0;
	d->charge_rem = 0;
	d->last_update_us = emul_now_us();
	d->cnvrf_latched = false;
	d->last_conv_us = 0;
	d->conversions = 0;
	d->resets++;
}

static bool latch_mode(const struct ina228_emul_data *d)
{
	return (d->diag & DIAG_ALATCH) != 0u;
}

/* CNVRF as a read at `now` sees it. */
static bool cnvrf_at(const struct ina228_emul_data *d, uint64_t now)
{
	if (latch_mode(d)) {
		return d->cnvrf_latched;
	}
	return d->conversions > 0u && now - d->last_conv_us < d->transparent_hold_us;
}

/* Drive the ALERT pin (only conversion ready is emulated as an alert source). */
static void alert_pin_set(struct ina228_emul_data *d, bool active)
{
	const struct ina228_emul_cfg *cfg = d->self->cfg;

#if defined(CONFIG_GPIO_EMUL)
	if (cfg->alert.port != NULL) {
		int level = (cfg->alert.dt_flags & GPIO_ACTIVE_LOW) ? !active : active;

		(void)gpio_emul_input_set(cfg->alert.port, cfg->alert.pin, level);
	}
#else
	ARG_UNUSED(cfg);
	ARG_UNUSED(active);
#endif
}

/* One conversion completed: results update (computed on read from the
 * inputs), CNVRF sets, and ALERT falls if it was not already held. */
static void conversion_done(struct k_timer *timer)
{
	struct ina228_emul_data *d = CONTAINER_OF(timer, struct ina228_emul_data, conv_timer);
	k_spinlock_key_t key = k_spin_lock(&d->lock);
	bool cnvr = (d->diag & DIAG_CNVR) != 0u;
	bool edge;

	accumulate(d);
	d->conversions++;
	d->last_conv_us = emul_now_us();
	if (latch_mode(d)) {
		/* A held ALERT stays low: no new edge until DIAG_ALRT is read. */
		edge = cnvr && !d->cnvrf_latched;
		d->cnvrf_latched = true;
	} else {
		edge = cnvr;
	}
	if (edge) {
		d->alert_edges++;
	}
	k_spin_unlock(&d->lock, key);

	if (edge) {
		/* The handler runs on this edge (GPIO_INT_EDGE_TO_ACTIVE). */
		alert_pin_set(d, true);
		if (!latch_mode(d)) {
			/* Transparent: the pin is released again by itself (after
			 * transparent_hold_us on the chip; at once here, only edges
			 * are seen by the firmware). */
			alert_pin_set(d, false);
		}
	}
}

/* (Re)start the conversion clock: after a reset and an ADC_CONFIG write. */
static void conversions_restart(struct ina228_emul_data *d)
{
	uint64_t period = conversion_period_us(d);

	if (period != 0u) {
		k_timer_start(&d->conv_timer, K_USEC(period), K_USEC(period));
	} else {
		k_timer_stop(&d->conv_timer);
	}
}

static void put_be(uint8_t *buf, uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		buf[i] = (uint8_t)(v >> (8u * (n - 1u - i)));
	}
}

static uint16_t diag_read(struct ina228_emul_data *d)
{
	uint16_t v = d->diag;

	if (cnvrf_at(d, emul_now_us())) {
		v |= DIAG_CNVRF;
	}
	if (latch_mode(d) && d->cnvrf_latched) {
		/* Reading DIAG_ALRT clears the latched flag and releases ALERT. */
		d->cnvrf_latched = false;
		if (d->diag & DIAG_CNVR) {
			d->release_alert = true;
		}
	}
	return v;
}

/* The register's width in bytes, 0 when it does not exist. */
static size_t reg_width(uint8_t reg)
{
	switch (reg) {
	case REG_VSHUNT:
	case REG_VBUS:
	case REG_CURRENT:
	case REG_POWER:
		return 3;
	case REG_ENERGY:
	case REG_CHARGE:
		return 5;
	case REG_CONFIG:
	case REG_ADC_CONFIG:
	case REG_SHUNT_CAL:
	case REG_SHUNT_TEMPCO:
	case REG_DIETEMP:
	case REG_DIAG_ALRT:
	case REG_SOVL:
	case REG_SUVL:
	case REG_BOVL:
	case REG_BUVL:
	case REG_TEMP_LIMIT:
	case REG_PWR_LIMIT:
	case REG_MANUFACTURER_ID:
	case REG_DEVICE_ID:
		return 2;
	default:
		return 0;
	}
}

static int reg_read(struct ina228_emul_data *d, uint8_t reg, uint8_t *buf, size_t len)
{
	size_t width = reg_width(reg);
	uint64_t v;

	if (width == 0u || len != width) {
		LOG_ERR("read of %u bytes from register 0x%02x (width %u)", (unsigned int)len,
			reg, (unsigned int)width);
		return -EIO;
	}
	accumulate(d);
	switch (reg) {
	case REG_CONFIG:
		v = d->config;
		break;
	case REG_ADC_CONFIG:
		v = d->adc_config;
		break;
	case REG_SHUNT_CAL:
		v = d->shunt_cal;
		break;
	case REG_SHUNT_TEMPCO:
		v = d->shunt_tempco;
		break;
	case REG_VSHUNT:
		v = ((uint32_t)vshunt_raw(d) & 0xFFFFFu) << 4;
		break;
	case REG_VBUS:
		v = ((uint32_t)vbus_raw(d) & 0xFFFFFu) << 4;
		break;
	case REG_DIETEMP:
		v = (uint16_t)dietemp_raw(d);
		break;
	case REG_CURRENT:
		v = ((uint32_t)current_raw(d) & 0xFFFFFu) << 4;
		break;
	case REG_POWER:
		v = power_raw(d);
		break;
	case REG_ENERGY:
		v = d->energy;
		break;
	case REG_CHARGE:
		v = (uint64_t)d->charge & MASK40;
		break;
	case REG_DIAG_ALRT:
		v = diag_read(d);
		break;
	case REG_MANUFACTURER_ID:
		v = MANUFACTURER_TI;
		break;
	case REG_DEVICE_ID:
		v = DEVICE_ID_INA228;
		break;
	default:
		v = d->limits[reg - REG_SOVL];
		break;
	}
	put_be(buf, v, len);
	d->reads++;
	return 0;
}

static int reg_write(struct ina228_emul_data *d, uint8_t reg, const uint8_t *buf, size_t len)
{
	uint16_t v;

	if (len != 2u || reg_width(reg) != 2u) {
		LOG_ERR("write of %u bytes to register 0x%02x", (unsigned int)len, reg);
		return -EIO;
	}
	v = (uint16_t)((buf[0] << 8) | buf[1]);
	accumulate(d);
	switch (reg) {
	case REG_CONFIG:
		if (v & CONFIG_RST) {
			reset_chip(d);
			d->release_alert = true;
			conversions_restart(d);
			return 0;
		}
		if (v & CONFIG_RSTACC) {
			d->energy = 0;
			d->charge = 0;
			d->energy_rem = 0;
			d->charge_rem = 0;
		}
		d->config = v & (uint16_t)~(CONFIG_RST | CONFIG_RSTACC);
		return 0;
	case REG_ADC_CONFIG:
		/* A write restarts the conversion in progress. */
		d->adc_config = v;
		conversions_restart(d);
		return 0;
	case REG_SHUNT_CAL:
		d->shunt_cal = v & 0x7FFFu;
		return 0;
	case REG_SHUNT_TEMPCO:
		d->shunt_tempco = v & 0x3FFFu;
		return 0;
	case REG_DIAG_ALRT:
		/* Control bits only; the flags are the chip's. Leaving latch
		 * mode drops a held flag (it then follows the conversions). */
		d->diag = (uint16_t)((v & DIAG_WRITABLE) | DIAG_MEMSTAT);
		if (!latch_mode(d) && d->cnvrf_latched) {
			d->cnvrf_latched = false;
			d->release_alert = true;
		}
		return 0;
	case REG_MANUFACTURER_ID:
	case REG_DEVICE_ID:
	case REG_DIETEMP:
		return 0; /* read-only: the chip ignores the write */
	default:
		d->limits[reg - REG_SOVL] = v;
		return 0;
	}
}

/* Bit times a message adds on the bus: address byte (with START/Sr) and its data bytes. */
static uint32_t msg_bits(const struct i2c_msg *m)
{
	return I2C_ADDR_BITS + I2C_BYTE_BITS * m->len;
}

static void bus_wait(const struct ina228_emul_data *d, uint32_t bits)
{
	const struct ina228_emul_cfg *cfg = d->self->cfg;

	if (d->model_bus_time && cfg->bus_hz != 0u && bits != 0u) {
		k_busy_wait((uint32_t)DIV_ROUND_UP((uint64_t)bits * 1000000u, cfg->bus_hz));
	}
}

static int ina228_emul_transfer(const struct emul *target, struct i2c_msg *msgs, int num_msgs,
				int addr)
{
	struct ina228_emul_data *d = target->data;
	k_spinlock_key_t key;
	uint32_t before = 0, after = I2C_STOP_BITS;
	bool release;
	int rc;

	ARG_UNUSED(addr);
	/* The chip latches a register's value when its first data byte is
	 * shifted out, i.e. after the pointer write and the repeated start. */
	for (int i = 0; i < num_msgs; i++) {
		if (msgs[i].flags & I2C_MSG_READ) {
			before += I2C_ADDR_BITS;
			after += I2C_BYTE_BITS * msgs[i].len;
		} else {
			before += msg_bits(&msgs[i]);
		}
	}
	bus_wait(d, before);

	key = k_spin_lock(&d->lock);
	if (d->fail_bus || d->fail_next > 0u) {
		/* No ACK: the controller gives up after the address byte. */
		if (d->fail_next > 0u) {
			d->fail_next--;
		}
		rc = -EIO;
		after = I2C_STOP_BITS;
	} else if (num_msgs == 1 && !(msgs[0].flags & I2C_MSG_READ) && msgs[0].len >= 1u) {
		/* Register pointer followed by the value, one write. */
		rc = reg_write(d, msgs[0].buf[0], &msgs[0].buf[1], msgs[0].len - 1u);
	} else if (num_msgs == 2 && !(msgs[0].flags & I2C_MSG_READ) && msgs[0].len == 1u &&
		   (msgs[1].flags & I2C_MSG_READ)) {
		/* Register pointer, repeated start, burst read of the register. */
		rc = reg_read(d, msgs[0].buf[0], msgs[1].buf, msgs[1].len);
	} else {
		LOG_ERR("unsupported transfer of %d messages", num_msgs);
		rc = -EIO;
	}
	release = d->release_alert;
	d->release_alert = false;
	k_spin_unlock(&d->lock, key);

	if (release) {
		alert_pin_set(d, false);
	}
	bus_wait(d, after);
	return rc;
}

/* Run stmt with the emulator's lock held. */
#define WITH_LOCK(d, stmt)                                                                         \
	do {                                                                                       \
		k_spinlock_key_t key_ = k_spin_lock(&(d)->lock);                                   \
		stmt;                                                                              \
		k_spin_unlock(&(d)->lock, key_);                                                   \
	} while (0)

void ina228_probe_emul_set_inputs(const struct emul *target,
				  const struct ina228_probe_emul_inputs *in)
{
	struct ina228_emul_data *d = target->data;

	/* What was measured so far used the old inputs. */
	WITH_LOCK(d, (accumulate(d), d->in = *in));
}

void ina228_probe_emul_fail_bus(const struct emul *target, bool fail)
{
	struct ina228_emul_data *d = target->data;

	WITH_LOCK(d, d->fail_bus = fail);
}

void ina228_probe_emul_fail_transfers(const struct emul *target, uint32_t n)
{
	struct ina228_emul_data *d = target->data;

	WITH_LOCK(d, d->fail_next = n);
}

void ina228_probe_emul_power_on_reset(const struct emul *target)
{
	struct ina228_emul_data *d = target->data;

	WITH_LOCK(d, (accumulate(d), reset_chip(d), conversions_restart(d)));
	alert_pin_set(d, false);
}

void ina228_probe_emul_set_transparent_hold(const struct emul *target, uint32_t hold_us)
{
	struct ina228_emul_data *d = target->data;

	WITH_LOCK(d, d->transparent_hold_us = hold_us);
}

void ina228_probe_emul_model_bus_time(const struct emul *target, bool on)
{
	struct ina228_emul_data *d = target->data;

	WITH_LOCK(d, d->model_bus_time = on);
}

void ina228_probe_emul_stats_get(const struct emul *target, struct ina228_probe_emul_stats *out)
{
	struct ina228_emul_data *d = target->data;

	WITH_LOCK(d, (out->reads = d->reads, out->conversions = d->conversions,
		      out->alert_edges = d->alert_edges, out->resets = d->resets));
}

uint32_t ina228_probe_emul_reads(const struct emul *target)
{
	struct ina228_probe_emul_stats st;

	ina228_probe_emul_stats_get(target, &st);
	return st.reads;
}

static int ina228_emul_init(const struct emul *target, const struct device *parent)
{
	struct ina228_emul_data *d = target->data;

	ARG_UNUSED(parent);
	d->self = target;
	d->transparent_hold_us = TRANSPARENT_HOLD_US_DEFAULT;
	d->model_bus_time = true;
	k_timer_init(&d->conv_timer, conversion_done, NULL);
	reset_chip(d);
	d->resets = 0; /* power-on is not counted as a reset */
	conversions_restart(d);
	/* A plausible idle bus until a test says otherwise: 5 V, 0 A, 25 degC. */
	d->in.vbus_uv = 5000000;
	d->in.vshunt_nv = 0;
	d->in.die_temp_mc = 25000;
	return 0;
}

static const struct i2c_emul_api ina228_emul_api = {
	.transfer = ina228_emul_transfer,
};

#define INA228_EMUL_DEFINE(inst)                                                                   \
	static struct ina228_emul_data ina228_emul_data_##inst;                                    \
	static const struct ina228_emul_cfg ina228_emul_cfg_##inst = {                             \
		.alert = GPIO_DT_SPEC_INST_GET_OR(inst, alert_gpios, {0}),                         \
		.bus_hz = DT_PROP_OR(DT_INST_BUS(inst), clock_frequency, 0),                       \
	};                                                                                         \
	EMUL_DT_INST_DEFINE(inst, ina228_emul_init, &ina228_emul_data_##inst,                      \
			    &ina228_emul_cfg_##inst, &ina228_emul_api, NULL);

DT_INST_FOREACH_STATUS_OKAY(INA228_EMUL_DEFINE)
