/* The probe app's sampling path on native_sim: the app's sampling thread
 * (sampling.c) paces the portable core, which reads the emulated INA228
 * through the probe driver's I2C bus. The test plays the host: it sends
 * real command frames and decodes every frame the probe sends. */
#include <math.h>
#include <string.h>

#include <zephyr/drivers/emul.h>
#include <zephyr/kernel.h>
#include <zephyr/ztest.h>

#include <throttlescope_zephyr/ina228_probe.h>

#include "sampling.h"
#include "throttlescope/probe.h"
#include "throttlescope/protocol.h"

#define INA_NODE DT_COMPAT_GET_ANY_STATUS_OKAY(throttlescope_ina228_probe)

static const struct device *const ina_dev = DEVICE_DT_GET(INA_NODE);
static const struct emul *const ina_emul = EMUL_DT_GET(INA_NODE);

static ts_probe probe;

/* Everything the probe sent, as bytes on the wire. */
static uint8_t wire[128 * 1024];
static size_t wire_len;
static bool host_not_reading;

static bool capture_tx(void *ctx, const uint8_t *frame, size_t len)
{
	ARG_UNUSED(ctx);
	if (host_not_reading || wire_len + len > sizeof(wire)) {
		return false;
	}
	memcpy(&wire[wire_len], frame, len);
	wire_len += len;
	return true;
}

static const ts_platform platform = {
	.now_us = sampling_now_us,
	.tx_frame = capture_tx,
	.sampling_changed = sampling_changed,
	.ctx = NULL,
};

/* What the host learned from the frames. */
struct host_view {
	uint32_t frames;
	uint32_t bad_frames;
	uint32_t infos;
	uint32_t acks;
	uint32_t errors;
	uint32_t batches;
	uint64_t samples;
	uint64_t dropped_before;
	uint64_t next_seq;       /* first_seq + count of the last batch */
	bool seq_contiguous;     /* every first_seq == previous next + dropped_before */
	throttlescope_v1_DeviceInfo info;
	uint32_t period_us;      /* of the last batch */
	uint32_t channels;       /* of the last batch */
	uint32_t epoch_first, epoch_last;
	/* Fast channels of every sample (raw). */
	int64_t vbus_min, vbus_max;
	int64_t vshunt_min, vshunt_max;
	uint64_t dt_sum_us;
	uint64_t dt_count;
	uint64_t dt_max_us;
	/* First and last ENERGY / CHARGE readings (same epoch) and their times. */
	uint32_t energies, charges;
	uint64_t energy_first, energy_last, energy_t0, energy_t1;
	uint64_t charge_first, charge_last, charge_t0, charge_t1;
	bool energy_monotonic;   /* within one epoch */
};

static struct host_view view;
static throttlescope_v1_ProbeToHost msg;
static ts_unpacked_batch unpacked;

static int64_t sext40(uint64_t v)
{
	return (v & (UINT64_C(1) << 39)) ? (int64_t)(v | ~((UINT64_C(1) << 40) - 1)) : (int64_t)v;
}

static void take_batch(const throttlescope_v1_SampleBatch *b)
{
	zassert_equal(ts_proto_unpack_batch(b, &unpacked), TS_OK, "batch does not unpack");
	if (view.batches > 0 && b->first_seq != view.next_seq + b->dropped_before) {
		view.seq_contiguous = false;
	}
	if (view.batches == 0) {
		view.epoch_first = b->epoch;
	}
	view.batches++;
	view.epoch_last = b->epoch;
	view.period_us = b->period_us;
	view.channels = b->channels;
	view.dropped_before += b->dropped_before;
	view.samples += unpacked.count;
	view.next_seq = b->first_seq + unpacked.count;
	for (uint32_t k = 0; k < unpacked.count; k++) {
		if (k > 0) {
			uint64_t dt = unpacked.time_us[k] - unpacked.time_us[k - 1];

			view.dt_sum_us += dt;
			view.dt_count++;
			view.dt_max_us = MAX(view.dt_max_us, dt);
		}
		view.vbus_min = MIN(view.vbus_min, unpacked.value[0][k]);
		view.vbus_max = MAX(view.vbus_max, unpacked.value[0][k]);
		view.vshunt_min = MIN(view.vshunt_min, unpacked.value[1][k]);
		view.vshunt_max = MAX(view.vshunt_max, unpacked.value[1][k]);
	}
	for (pb_size_t k = 0; k < b->slow_count; k++) {
		const throttlescope_v1_RegisterReading *r = &b->slow[k];
		uint64_t t = unpacked.time_us[MIN(r->index, unpacked.count - 1u)];

		if (b->epoch != view.epoch_first) {
			continue; /* accumulators restarted: compare within one epoch */
		}
		if (r->reg == 0x09) {
			if (view.energies == 0) {
				view.energy_first = r->value;
				view.energy_t0 = t;
			} else if (r->value < view.energy_last) {
				view.energy_monotonic = false;
			}
			view.energies++;
			view.energy_last = r->value;
			view.energy_t1 = t;
		} else if (r->reg == 0x0A) {
			if (view.charges == 0) {
				view.charge_first = r->value;
				view.charge_t0 = t;
			}
			view.charges++;
			view.charge_last = r->value;
			view.charge_t1 = t;
		}
	}
}

static void decode_wire(void)
{
	static uint8_t body_buf[TS_PROBE_FRAME_MAX];
	static uint8_t payload[TS_PROBE_FRAME_MAX];
	ts_deframer d;

	memset(&view, 0, sizeof(view));
	view.seq_contiguous = true;
	view.energy_monotonic = true;
	view.vbus_min = view.vshunt_min = INT64_MAX;
	view.vbus_max = view.vshunt_max = INT64_MIN;
	ts_deframer_init(&d, body_buf, sizeof(body_buf));
	for (size_t i = 0; i < wire_len; i++) {
		const uint8_t *body;
		size_t body_len, payload_len;

		if (!ts_deframer_push(&d, wire[i], &body, &body_len)) {
			continue;
		}
		view.frames++;
		if (ts_frame_decode(body, body_len, payload, sizeof(payload), &payload_len) != TS_OK ||
		    ts_proto_decode_probe_msg(payload, payload_len, &msg) != TS_OK) {
			view.bad_frames++;
			continue;
		}
		switch (msg.which_msg) {
		case throttlescope_v1_ProbeToHost_info_tag:
			view.infos++;
			view.info = msg.msg.info;
			break;
		case throttlescope_v1_ProbeToHost_ack_tag:
			view.acks++;
			break;
		case throttlescope_v1_ProbeToHost_error_tag:
			view.errors++;
			break;
		case throttlescope_v1_ProbeToHost_batch_tag:
			take_batch(&msg.msg.batch);
			break;
		default:
			break;
		}
	}
}

static void host_send(throttlescope_v1_HostToProbe *cmd, uint32_t request_id)
{
	static uint8_t frame[TS_HOST_FRAME_MAX];
	size_t len = 0;

	cmd->request_id = request_id;
	zassert_equal(ts_proto_frame_host_msg(cmd, frame, sizeof(frame), &len), TS_OK);
	/* Deliver in small pieces, as a USB link would. */
	for (size_t off = 0; off < len; off += 7) {
		ts_probe_rx(&probe, &frame[off], MIN(7u, len - off), sampling_now_us(NULL));
	}
}

/* Start at rate_hz with the default channels (VBUS, VSHUNT): the probe
 * picks the conversion time x averaging that lasts one sample period. */
static void host_start(uint32_t rate_hz)
{
	throttlescope_v1_HostToProbe cmd = throttlescope_v1_HostToProbe_init_zero;

	cmd.which_cmd = throttlescope_v1_HostToProbe_start_tag;
	cmd.cmd.start.rate_hz = rate_hz;
	host_send(&cmd, 1);
}

static void host_stop(void)
{
	throttlescope_v1_HostToProbe cmd = throttlescope_v1_HostToProbe_init_zero;

	cmd.which_cmd = throttlescope_v1_HostToProbe_stop_tag;
	host_send(&cmd, 2);
}

/* The link thread's job: service the probe every 2 ms for ms milliseconds. */
static void serve_link_for(int ms)
{
	int64_t end = k_uptime_get() + ms;

	while (k_uptime_get() < end) {
		ts_probe_service(&probe);
		k_msleep(2);
	}
}

static void set_load(int64_t vbus_uv, int64_t current_ma)
{
	struct ina228_probe_emul_inputs in = {
		.vbus_uv = vbus_uv,
		/* 5 mOhm shunt: 1 mA gives 5000 nV. */
		.vshunt_nv = current_ma * 5000,
		.die_temp_mc = 30000,
	};

	ina228_probe_emul_set_inputs(ina_emul, &in);
}

static void *suite_setup(void)
{
	zassert_true(device_is_ready(ina_dev), "INA228 probe device not ready");
	zassert_equal(sampling_init(&probe, ina_dev), 0);
	return NULL;
}

static void before(void *f)
{
	ts_probe_config config = {
		.firmware_version = "test",
		.probe_id = "native_sim",
		.shunt_micro_ohm = 5000,
		.max_current_ma = 5000,
		.adc_range = 0,
		.max_rate_hz = CONFIG_THROTTLESCOPE_MAX_RATE_HZ,
		.default_rate_hz = 1000,
		.alert_pin = ina228_probe_has_alert(ina_dev),
		.i2c_bus_hz = DT_PROP(DT_BUS(INA_NODE), clock_frequency),
		.i2c_txn_overhead_us = CONFIG_THROTTLESCOPE_I2C_TXN_OVERHEAD_US,
	};
	ts_bus bus;

	ARG_UNUSED(f);
	wire_len = 0;
	host_not_reading = false;
	ina228_probe_emul_fail_bus(ina_emul, false);
	ina228_probe_emul_model_bus_time(ina_emul, true);
	set_load(5100000, 1600);
	ina228_probe_bus_get(ina_dev, &bus);
	zassert_equal(ts_probe_init(&probe, &config, &platform, &bus), TS_OK,
		      "the emulated INA228 must pass the identity check");
}

static void after(void *f)
{
	ARG_UNUSED(f);
	host_stop();
	host_not_reading = false;
	ina228_probe_emul_fail_bus(ina_emul, false);
	serve_link_for(20);
}

ZTEST(sampling, test_pacing_follows_devicetree)
{
	/* The "alert" scenario adds alert-gpios: samples must then be paced by
	 * the ALERT pin, else by the timer polling DIAG_ALRT. */
	zassert_equal(sampling_uses_alert(), DT_NODE_HAS_PROP(INA_NODE, alert_gpios));
}

ZTEST(sampling, test_device_info_reports_calibration_and_the_i2c_ceiling)
{
	throttlescope_v1_HostToProbe cmd = throttlescope_v1_HostToProbe_init_zero;

	cmd.which_cmd = throttlescope_v1_HostToProbe_get_info_tag;
	host_send(&cmd, 9);
	serve_link_for(10);
	decode_wire();
	zassert_equal(view.bad_frames, 0);
	zassert_equal(view.infos, 1);
	zassert_equal(view.info.shunt_micro_ohm, 5000);
	/* 13107.2e6 x (5 A / 2^19) x 5 mOhm = 625 */
	zassert_equal(view.info.shunt_cal, 625);
	/* 400 kHz, VBUS + VSHUNT: the worst sample is DIAG_ALRT + 2 x 3-byte +
	 * one 5-byte read = 237 bits = 592.5 us + 4 x 25 us: 1443 S/s at most. */
	zassert_true(view.info.max_rate_hz <= 1443 && view.info.max_rate_hz >= 1400,
		     "max_rate_hz %u", view.info.max_rate_hz);
}

/* Only the shunt voltage carries the current: 5 mOhm, LSB 312.5 nV. */
#define VSHUNT_RAW(ma) ((ma) * 5000 * 2 / 625)

ZTEST(sampling, test_one_sample_per_conversion_at_the_asked_rate)
{
	ts_probe_counters c;

	host_start(500);
	serve_link_for(1000);
	ts_probe_counters_get(&probe, &c);
	host_stop();
	serve_link_for(100);
	decode_wire();

	zassert_equal(view.bad_frames, 0);
	zassert_equal(view.errors, 0, "Start was refused");
	zassert_true(view.batches >= 10, "only %u batches", view.batches);
	zassert_true(view.seq_contiguous, "sequence numbers skip");
	zassert_equal(view.dropped_before, 0);
	zassert_equal(c.sampler.missed_slots, 0, "slots missed with nothing else running");
	/* The conversion period matches the asked rate within the CT x AVG steps. */
	zassert_within(view.period_us, 2000, 200, "period %u us", view.period_us);
	/* One sample per conversion for one second, each one period apart. */
	uint64_t expect = 1000000u / view.period_us;

	zassert_within(view.samples, expect, 3, "%llu samples in 1 s, period %u us",
		       (unsigned long long)view.samples, view.period_us);
	zassert_within(view.dt_sum_us / view.dt_count, view.period_us, 2, "mean dt %llu us",
		       (unsigned long long)(view.dt_sum_us / view.dt_count));
	zassert_true(view.dt_max_us < view.period_us + 50, "a sample came %llu us late",
		     (unsigned long long)view.dt_max_us);
	/* 5.1 V / 195.3125 uV = 26112 exactly; 1.6 A x 5 mOhm / 312.5 nV. */
	zassert_equal(view.vbus_min, 26112);
	zassert_equal(view.vbus_max, 26112);
	zassert_equal(view.vshunt_min, VSHUNT_RAW(1600));
	zassert_equal(view.vshunt_max, VSHUNT_RAW(1600));
}

ZTEST(sampling, test_rates_above_the_i2c_ceiling_are_refused)
{
	host_start(2000);
	serve_link_for(20);
	decode_wire();
	zassert_equal(view.errors, 1, "2000 Hz accepted at 400 kHz");
	zassert_false(ts_probe_running(&probe));
}

ZTEST(sampling, test_accumulators_integrate_power_and_current_without_reset)
{
	const double lsb = 5.0 / 524288.0;

	host_start(500);
	serve_link_for(1500);
	host_stop();
	serve_link_for(100);
	decode_wire();

	zassert_true(view.energies >= 10, "%u ENERGY readings", view.energies);
	zassert_true(view.charges >= 10, "%u CHARGE readings", view.charges);
	zassert_true(view.energy_monotonic, "ENERGY went backwards: reset on read?");
	double e_s = (double)(view.energy_t1 - view.energy_t0) / 1e6;
	double q_s = (double)(view.charge_t1 - view.charge_t0) / 1e6;
	/* ENERGY LSB = 16 x 3.2 x CURRENT_LSB J, CHARGE LSB = CURRENT_LSB C. */
	double watts = (double)(view.energy_last - view.energy_first) * 16.0 * 3.2 * lsb / e_s;
	double amps = (double)(sext40(view.charge_last) - sext40(view.charge_first)) * lsb / q_s;

	zassert_true(e_s > 1.0, "ENERGY readings span only %.3f s", e_s);
	zassert_within(watts, 8.16, 0.2, "energy rate %.3f W", watts);
	zassert_within(amps, 1.6, 0.05, "charge rate %.3f A", amps);
}

ZTEST(sampling, test_reverse_current_reads_negative)
{
	set_load(5000000, -800);
	host_start(200);
	serve_link_for(400);
	host_stop();
	serve_link_for(100);
	decode_wire();

	zassert_within(view.samples, 80, 3);
	zassert_equal(view.vshunt_max, VSHUNT_RAW(-800));
}

ZTEST(sampling, test_a_late_sampling_thread_costs_counted_slots)
{
	ts_probe_counters before_c, after_c;
	int prio = k_thread_priority_get(k_current_get());

	host_start(500);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &before_c);
	/* Hold the CPU at the sampling thread's priority for 10 periods: the
	 * latched ALERT waits, the conversions in between are lost. */
	k_thread_priority_set(k_current_get(), K_HIGHEST_APPLICATION_THREAD_PRIO);
	k_busy_wait(20000);
	k_thread_priority_set(k_current_get(), prio);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &after_c);
	host_stop();
	serve_link_for(100);
	decode_wire();

	uint64_t missed = after_c.sampler.missed_slots - before_c.sampler.missed_slots;

	zassert_within(missed, 9, 1, "%llu slots counted missed in a 10-period stall",
		       (unsigned long long)missed);
	/* The host sees the gap: sequence numbers stay accounted for. */
	zassert_true(view.seq_contiguous);
	zassert_equal(view.dropped_before, after_c.sampler.samples_dropped);
}

ZTEST(sampling, test_host_not_reading_drops_are_counted_and_sampling_goes_on)
{
	ts_probe_counters c;

	host_not_reading = true;
	host_start(1000);
	serve_link_for(2500);
	ts_probe_counters_get(&probe, &c);

	/* The sampler kept its pace while nothing left the probe ... */
	zassert_within(c.sampler.samples_taken, 2500u * 1000u / 936u, 30, "taken %llu",
		       (unsigned long long)c.sampler.samples_taken);
	/* ... the ring held one second and every sample with no room is counted. */
	zassert_true(c.sampler.samples_dropped > 0);
	zassert_true(c.sampler.samples_taken - c.sampler.samples_dropped <=
			     TS_SAMPLE_RING_CAPACITY,
		     "more samples kept than the ring holds");
	zassert_true(c.tx_overflows > 0, "refused frames not counted");
	zassert_equal(wire_len, 0);

	/* The host reads again: batches flow and announce the gap. */
	host_not_reading = false;
	serve_link_for(300);
	host_stop();
	serve_link_for(100);
	decode_wire();
	ts_probe_counters_get(&probe, &c);
	zassert_true(view.batches > 0);
	zassert_true(view.seq_contiguous, "a gap was not announced in dropped_before");
	zassert_equal(view.dropped_before, c.sampler.samples_dropped,
		      "host saw %llu dropped, probe counted %llu",
		      (unsigned long long)view.dropped_before,
		      (unsigned long long)c.sampler.samples_dropped);
}

ZTEST(sampling, test_bus_errors_are_counted_and_sampling_recovers)
{
	ts_probe_counters before_c, during_c, after_c;

	host_start(500);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &before_c);
	ina228_probe_emul_fail_bus(ina_emul, true);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &during_c);
	ina228_probe_emul_fail_bus(ina_emul, false);
	serve_link_for(300);
	ts_probe_counters_get(&probe, &after_c);

	zassert_true(during_c.sampler.i2c_errors > before_c.sampler.i2c_errors,
		     "i2c errors %u -> %u", before_c.sampler.i2c_errors,
		     during_c.sampler.i2c_errors);
	zassert_true(after_c.sampler.samples_taken > during_c.sampler.samples_taken + 100,
		     "sampling did not resume");
}

ZTEST(sampling, test_a_chip_reset_is_a_new_epoch_not_a_wrap)
{
	ts_probe_counters c;

	host_start(500);
	serve_link_for(500);
	ina228_probe_emul_power_on_reset(ina_emul);
	serve_link_for(1000);
	ts_probe_counters_get(&probe, &c);
	host_stop();
	serve_link_for(100);
	decode_wire();

	/* The reset chip stopped raising ALERT (CNVR cleared): the watchdog
	 * found it, re-initialised it and started a new accumulator epoch. */
	zassert_equal(c.sampler.reinits, 1, "reinits %u", c.sampler.reinits);
	zassert_equal(view.epoch_last, view.epoch_first + 1, "epoch %u -> %u", view.epoch_first,
		      view.epoch_last);
	/* Sampling resumed at the run's rate with the run's calibration. */
	zassert_true(view.samples > 600, "%llu samples", (unsigned long long)view.samples);
	zassert_equal(view.vshunt_max, VSHUNT_RAW(1600));
	zassert_true(view.seq_contiguous);
}

ZTEST_SUITE(sampling, NULL, suite_setup, before, after, NULL);
