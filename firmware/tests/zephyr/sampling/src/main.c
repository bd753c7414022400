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
	uint64_t next_seq;       /* first_seq + len of the last batch */
	bool seq_contiguous;     /* every first_seq == previous next + dropped_before */
	throttlescope_v1_DeviceInfo info;
	/* Fast channels of every sample, for the checks. */
	int32_t vbus_min, vbus_max;
	int32_t current_min, current_max;
	uint32_t power_min, power_max;
	uint64_t dt_sum_us;
	uint64_t dt_count;
	/* First and last accumulator readings with their sample times. */
	uint32_t accumulators;
	uint64_t acc_first_seq, acc_last_seq;
	uint64_t energy_first, energy_last;
	int64_t charge_first, charge_last;
	bool energy_monotonic;
	uint64_t seq_time_us[4096]; /* probe time of each seq (first 4096) */
};

static struct host_view view;
static throttlescope_v1_ProbeToHost msg;

static void decode_wire(void)
{
	static uint8_t body_buf[TS_PROBE_FRAME_MAX];
	static uint8_t payload[TS_PROBE_FRAME_MAX];
	ts_deframer d;

	memset(&view, 0, sizeof(view));
	view.seq_contiguous = true;
	view.energy_monotonic = true;
	view.vbus_min = view.current_min = INT32_MAX;
	view.vbus_max = view.current_max = INT32_MIN;
	view.power_min = UINT32_MAX;
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
		case throttlescope_v1_ProbeToHost_batch_tag: {
			const throttlescope_v1_SampleBatch *b = &msg.msg.batch;
			uint64_t t = b->first_time_us;

			if (view.batches > 0 && b->first_seq != view.next_seq + b->dropped_before) {
				view.seq_contiguous = false;
			}
			view.batches++;
			view.dropped_before += b->dropped_before;
			view.samples += b->dt_us_count;
			view.next_seq = b->first_seq + b->dt_us_count;
			for (pb_size_t k = 0; k < b->dt_us_count; k++) {
				t += b->dt_us[k];
				if (k > 0) {
					view.dt_sum_us += b->dt_us[k];
					view.dt_count++;
				}
				if (b->first_seq + k < ARRAY_SIZE(view.seq_time_us)) {
					view.seq_time_us[b->first_seq + k] = t;
				}
			}
			for (pb_size_t k = 0; k < b->vbus_count; k++) {
				view.vbus_min = MIN(view.vbus_min, b->vbus[k]);
				view.vbus_max = MAX(view.vbus_max, b->vbus[k]);
			}
			for (pb_size_t k = 0; k < b->current_count; k++) {
				view.current_min = MIN(view.current_min, b->current[k]);
				view.current_max = MAX(view.current_max, b->current[k]);
			}
			for (pb_size_t k = 0; k < b->power_count; k++) {
				view.power_min = MIN(view.power_min, b->power[k]);
				view.power_max = MAX(view.power_max, b->power[k]);
			}
			for (pb_size_t k = 0; k < b->accumulators_count; k++) {
				const throttlescope_v1_Accumulators *a = &b->accumulators[k];

				if (view.accumulators == 0) {
					view.acc_first_seq = a->seq;
					view.energy_first = a->energy;
					view.charge_first = a->charge;
				} else if (a->energy < view.energy_last) {
					view.energy_monotonic = false;
				}
				view.accumulators++;
				view.acc_last_seq = a->seq;
				view.energy_last = a->energy;
				view.charge_last = a->charge;
			}
			break;
		}
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

static void host_start(uint32_t rate_hz, throttlescope_v1_ConversionTime ct)
{
	throttlescope_v1_HostToProbe cmd = throttlescope_v1_HostToProbe_init_zero;

	cmd.which_cmd = throttlescope_v1_HostToProbe_start_tag;
	cmd.cmd.start.rate_hz = rate_hz;
	cmd.cmd.start.vbus_ct = ct;
	cmd.cmd.start.vshunt_ct = ct;
	cmd.cmd.start.temp_ct = ct;
	cmd.cmd.start.averaging = throttlescope_v1_Averaging_AVG_1;
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
		.max_rate_hz = 4000,
		.default_rate_hz = 1000,
		.alert_pin = ina228_probe_has_alert(ina_dev),
	};
	ts_bus bus;

	ARG_UNUSED(f);
	wire_len = 0;
	host_not_reading = false;
	ina228_probe_emul_fail_bus(ina_emul, false);
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

ZTEST(sampling, test_device_info_reports_calibration_from_devicetree)
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
	zassert_equal(view.info.max_rate_hz, 4000);
}

ZTEST(sampling, test_paced_samples_match_the_emulated_bus)
{
	const double lsb = 5.0 / 524288.0;

	host_start(500, throttlescope_v1_ConversionTime_CT_540US);
	serve_link_for(1000);
	host_stop();
	serve_link_for(100);
	decode_wire();

	zassert_equal(view.bad_frames, 0);
	zassert_equal(view.errors, 0, "Start was refused");
	zassert_true(view.batches >= 10, "only %u batches", view.batches);
	zassert_true(view.seq_contiguous, "sequence numbers skip");
	zassert_equal(view.dropped_before, 0);
	/* 500 Hz for one second. */
	zassert_within(view.samples, 500, 50, "%llu samples in 1 s at 500 Hz",
		       (unsigned long long)view.samples);
	zassert_within(view.dt_sum_us / view.dt_count, 2000, 100, "mean dt %llu us",
		       (unsigned long long)(view.dt_sum_us / view.dt_count));
	/* 5.1 V / 195.3125 uV = 26112 exactly. */
	zassert_equal(view.vbus_min, 26112);
	zassert_equal(view.vbus_max, 26112);
	/* 1.6 A */
	zassert_within(view.current_min * lsb, 1.6, 0.001);
	zassert_within(view.current_max * lsb, 1.6, 0.001);
	/* 8.16 W, POWER LSB 3.2 x CURRENT_LSB */
	zassert_within(view.power_min * 3.2 * lsb, 8.16, 0.01);
}

ZTEST(sampling, test_accumulators_integrate_power_and_current_without_reset)
{
	const double lsb = 5.0 / 524288.0;

	host_start(500, throttlescope_v1_ConversionTime_CT_540US);
	serve_link_for(1500);
	host_stop();
	serve_link_for(100);
	decode_wire();

	zassert_true(view.accumulators >= 20, "%u accumulator readings", view.accumulators);
	zassert_true(view.energy_monotonic, "ENERGY went backwards: reset on read?");
	zassert_true(view.acc_last_seq < ARRAY_SIZE(view.seq_time_us));
	double dt_s =
		(double)(view.seq_time_us[view.acc_last_seq] - view.seq_time_us[view.acc_first_seq]) /
		1e6;
	/* ENERGY LSB = 16 x 3.2 x CURRENT_LSB J, CHARGE LSB = CURRENT_LSB C. */
	double watts = (double)(view.energy_last - view.energy_first) * 16.0 * 3.2 * lsb / dt_s;
	double amps = (double)(view.charge_last - view.charge_first) * lsb / dt_s;

	zassert_true(dt_s > 1.0, "accumulators span only %.3f s", dt_s);
	zassert_within(watts, 8.16, 0.3, "energy rate %.3f W", watts);
	zassert_within(amps, 1.6, 0.06, "charge rate %.3f A", amps);
}

ZTEST(sampling, test_reverse_current_reads_negative)
{
	const double lsb = 5.0 / 524288.0;

	set_load(5000000, -800);
	host_start(200, throttlescope_v1_ConversionTime_CT_1052US);
	serve_link_for(400);
	host_stop();
	serve_link_for(100);
	decode_wire();

	zassert_true(view.samples > 40);
	zassert_within(view.current_max * lsb, -0.8, 0.001);
	zassert_within(view.power_min * 3.2 * lsb, 4.0, 0.01, "power is a magnitude");
}

ZTEST(sampling, test_host_not_reading_drops_are_counted_and_sampling_goes_on)
{
	ts_probe_counters c;

	host_not_reading = true;
	host_start(1000, throttlescope_v1_ConversionTime_CT_150US);
	serve_link_for(1500);
	ts_probe_counters_get(&probe, &c);

	/* The sampler kept its pace while nothing left the probe ... */
	zassert_within(c.sampler.samples_taken, 1500, 150, "taken %llu",
		       (unsigned long long)c.sampler.samples_taken);
	/* ... and every sample that had no room is counted. */
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

	host_start(500, throttlescope_v1_ConversionTime_CT_540US);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &before_c);
	ina228_probe_emul_fail_bus(ina_emul, true);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &during_c);
	ina228_probe_emul_fail_bus(ina_emul, false);
	serve_link_for(200);
	ts_probe_counters_get(&probe, &after_c);

	zassert_true(during_c.sampler.i2c_errors > before_c.sampler.i2c_errors + 50,
		     "i2c errors %u -> %u", before_c.sampler.i2c_errors,
		     during_c.sampler.i2c_errors);
	zassert_true(after_c.sampler.samples_taken > during_c.sampler.samples_taken + 80,
		     "sampling did not resume");
	/* At most the retries of the one tick that straddled the switch. */
	zassert_true(after_c.sampler.i2c_errors - during_c.sampler.i2c_errors <= 5,
		     "errors after the bus came back");
}

ZTEST_SUITE(sampling, NULL, suite_setup, before, after, NULL);
