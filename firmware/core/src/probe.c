/* The probe: command handler, sync replies, batching and link flow control. */
#include "throttlescope/probe.h"

#include <string.h>

#define ALL_CHANNELS (TS_CH_VBUS | TS_CH_VSHUNT | TS_CH_CURRENT | TS_CH_POWER)
/** Fast channels when Start.channels is 0: the host computes current and power. */
#define DEFAULT_CHANNELS (TS_CH_VBUS | TS_CH_VSHUNT)
/** Slow readings per batch at most (nanopb max_count of SampleBatch.slow). */
#define MAX_BATCH_SLOW 16u

static uint64_t now_us(ts_probe *p)
{
    return p->platform.now_us(p->platform.ctx);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    if (src != NULL) {
        while (n + 1u < cap && src[n] != '\0') {
            dst[n] = src[n];
            n++;
        }
    }
    dst[n] = '\0';
}

/* Encode p->msg into tx_buf and hand it to the link; false if refused. */
static bool send_msg(ts_probe *p)
{
    size_t len = 0;
    if (ts_proto_frame_probe_msg(&p->msg, p->tx_buf, sizeof p->tx_buf, &len) != TS_OK) {
        p->counters.tx_overflows++; /* cannot happen with the generated size bound */
        return false;
    }
    if (!p->platform.tx_frame(p->platform.ctx, p->tx_buf, len)) {
        p->counters.tx_overflows++;
        return false;
    }
    return true;
}

static void clear_msg(ts_probe *p, pb_size_t which)
{
    memset(&p->msg, 0, sizeof p->msg);
    p->msg.which_msg = which;
}

static void send_error(ts_probe *p, throttlescope_v1_ErrorCode code, const char *detail,
                       uint32_t request_id)
{
    clear_msg(p, throttlescope_v1_ProbeToHost_error_tag);
    p->msg.msg.error.code = code;
    p->msg.msg.error.request_id = request_id;
    copy_str(p->msg.msg.error.detail, sizeof p->msg.msg.error.detail, detail);
    (void)send_msg(p);
}

static void send_ack(ts_probe *p, uint32_t request_id)
{
    clear_msg(p, throttlescope_v1_ProbeToHost_ack_tag);
    p->msg.msg.ack.request_id = request_id;
    (void)send_msg(p);
}

static void send_info(ts_probe *p)
{
    clear_msg(p, throttlescope_v1_ProbeToHost_info_tag);
    throttlescope_v1_DeviceInfo *info = &p->msg.msg.info;
    info->protocol_version = TS_PROTOCOL_VERSION;
    copy_str(info->firmware_version, sizeof info->firmware_version, p->config.firmware_version);
    copy_str(info->probe_id, sizeof info->probe_id, p->config.probe_id);
    info->shunt_micro_ohm = p->ina.cal.shunt_micro_ohm;
    info->current_lsb_a = (float)p->ina.cal.current_lsb_a;
    info->adc_range = p->ina.cal.adc_range;
    info->shunt_cal = p->ina.cal.shunt_cal;
    uint32_t n = p->config.sensor_count;
    if (n > TS_MAX_TEMP_SENSORS) {
        n = TS_MAX_TEMP_SENSORS;
    }
    info->sensors_count = (pb_size_t)n;
    for (uint32_t i = 0; i < n; i++) {
        info->sensors[i].index = i;
        info->sensors[i].kind = p->config.sensors[i].kind;
        copy_str(info->sensors[i].name, sizeof info->sensors[i].name, p->config.sensors[i].name);
    }
    info->max_rate_hz = ts_probe_max_rate_hz(p, DEFAULT_CHANNELS);
    info->max_batch_samples = TS_MAX_BATCH_SAMPLES;
    info->i2c_bus_hz = p->config.i2c_bus_hz;
    info->cc_sensing = p->config.cc_sensing;
    info->pd_decoding = p->config.pd_decoding;
    info->sample_bus_us = ts_ina228_sample_bus_us(
        p->running ? p->channels : DEFAULT_CHANNELS, p->config.i2c_bus_hz,
        p->config.i2c_txn_overhead_us);
    if (p->running) {
        info->adc_config = p->adc_config;
        info->conversion_rate_hz = p->period_us > 0u ? 1e6f / (float)p->period_us : 0.0f;
        info->channels = p->channels;
    }
    (void)send_msg(p);
}

static void send_status(ts_probe *p)
{
    ts_probe_counters c;
    ts_probe_counters_get(p, &c);
    clear_msg(p, throttlescope_v1_ProbeToHost_status_tag);
    throttlescope_v1_Status *st = &p->msg.msg.status;
    st->uptime_us = now_us(p);
    st->samples_taken = c.sampler.samples_taken;
    st->samples_dropped = c.sampler.samples_dropped;
    st->i2c_errors = c.sampler.i2c_errors;
    st->ring_overflows = c.sampler.ring_overflows;
    st->tx_overflows = c.tx_overflows;
    st->rx_bad_frames = c.rx_bad_frames;
    st->rx_bad_messages = c.rx_bad_messages;
    st->temp_errors = c.sampler.temp_errors;
    st->running = p->running;
    /* Rates of the current run, or of the last one once stopped. */
    double achieved = ts_sampler_achieved_rate_hz(&p->sampler);
    st->rate_hz = (uint32_t)(achieved + 0.5);
    st->achieved_rate_hz = (float)achieved;
    st->conversion_rate_hz = p->period_us > 0u ? 1e6f / (float)p->period_us : 0.0f;
    st->requested_rate_hz = p->requested_rate_hz;
    st->temps_dropped = c.sampler.temps_dropped;
    st->batches_sent = c.batches_sent;
    st->missed_slots = c.sampler.missed_slots;
    st->epoch = c.sampler.epoch;
    st->reinits = c.sampler.reinits;
    st->diag = c.sampler.diag;
    (void)send_msg(p);
}

/* Send a PortStatus; false when the link refused it. */
static bool send_port(ts_probe *p, const ts_port_state *st, bool requested)
{
    clear_msg(p, throttlescope_v1_ProbeToHost_port_tag);
    throttlescope_v1_PortStatus *m = &p->msg.msg.port;
    m->probe_time_us = now_us(p);
    m->advertisement = (throttlescope_v1_CcAdvertisement)st->advertisement;
    m->active_cc = (throttlescope_v1_ActiveCc)st->active;
    m->cc1_mv = st->cc1_mv;
    m->cc2_mv = st->cc2_mv;
    m->cc1 = (throttlescope_v1_CcAdvertisement)st->cc1;
    m->cc2 = (throttlescope_v1_CcAdvertisement)st->cc2;
    m->vbus_level = (throttlescope_v1_VbusLevel)st->vbus;
    m->vbus_mv = st->vbus_mv;
    m->vbus_min_mv = st->vbus_min_mv;
    m->pd_contract = st->pd_contract; /* decoded, renegotiating, or VBUS above vSafe5V */
    m->has_contract = st->has_contract;
    if (st->has_contract) {
        const ts_port_contract *c = &st->contract;
        throttlescope_v1_PdContract *w = &m->contract;
        w->mv = c->mv;
        w->ma = c->ma;
        w->mw = c->mw;
        w->supply = (throttlescope_v1_PdSupply)c->supply;
        w->object_position = c->position;
        w->agreed_us = c->agreed_us;
        w->capability_mismatch = c->capability_mismatch;
        w->mv_min = c->mv_min;
        w->mv_max = c->mv_max;
        w->ma_max = c->ma_max;
    }
    m->windows = p->port.counters.windows;
    m->noisy_windows = p->port.counters.noisy_windows;
    m->flaps = p->port.counters.flaps;
    m->changes = p->port.counters.changes;
    m->requested = requested;
    return send_msg(p);
}

int ts_probe_init(ts_probe *p, const ts_probe_config *config, const ts_platform *platform,
                  const ts_bus *bus)
{
    memset(p, 0, sizeof *p);
    p->config = *config;
    p->platform = *platform;
    if (p->config.i2c_bus_hz == 0u) {
        p->config.i2c_bus_hz = TS_DEFAULT_I2C_BUS_HZ;
    }
    if (p->config.i2c_txn_overhead_us == 0u) {
        p->config.i2c_txn_overhead_us = TS_DEFAULT_I2C_TXN_OVERHEAD_US;
    }
    if (p->config.max_rate_hz == 0u || p->config.max_rate_hz > TS_MAX_RATE_HZ) {
        p->config.max_rate_hz = TS_MAX_RATE_HZ;
    }
    if (p->config.max_batch_age_us == 0u) {
        p->config.max_batch_age_us = TS_DEFAULT_MAX_BATCH_AGE_US;
    }
    ts_deframer_init(&p->deframer, p->rx_buf, sizeof p->rx_buf);
    ts_port_init(&p->port, p->config.cc_guard_mv != 0u ? p->config.cc_guard_mv : TS_PORT_GUARD_MV);

    ts_ina228_calibration cal;
    int rc = ts_ina228_calibrate(&cal, config->shunt_micro_ohm, config->max_current_ma,
                                 config->adc_range);
    if (rc != TS_OK) {
        memset(&cal, 0, sizeof cal);
    }
    ts_ina228_init(&p->ina, bus, &cal);
    ts_sampler_init(&p->sampler, &p->ina);
    if (rc == TS_OK) {
        rc = ts_ina228_check_identity(&p->ina, NULL);
    }
    if (rc == TS_OK) {
        rc = ts_ina228_reset(&p->ina);
    }
    p->sensor_status = rc;
    return rc;
}

static const char *sensor_fault_text(int status)
{
    switch (status) {
    case TS_ERR_RANGE:
        return "shunt/max current outside the INA228 range";
    case TS_ERR_IDENTITY:
        return "no INA228 at the configured address (wrong id)";
    default:
        return "INA228 not answering on the bus";
    }
}

/* Append text at d (NUL-terminated); returns the new end. */
static char *put_text(char *d, const char *text)
{
    while (*text != '\0') {
        *d++ = *text++;
    }
    *d = '\0';
    return d;
}

/* Append v in decimal at d (NUL-terminated); returns the new end. */
static char *put_u32(char *d, uint32_t v)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0) {
        *d++ = digits[--n];
    }
    *d = '\0';
    return d;
}

static void handle_start(ts_probe *p, const throttlescope_v1_Start *s, uint32_t request_id)
{
    if (p->sensor_status != TS_OK) {
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_SENSOR_FAULT,
                   sensor_fault_text(p->sensor_status), request_id);
        return;
    }
    if ((unsigned)s->vbus_ct > 7u || (unsigned)s->vshunt_ct > 7u || (unsigned)s->temp_ct > 7u ||
        (unsigned)s->averaging > 7u) {
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT,
                   "conversion time or averaging code above 7", request_id);
        return;
    }
    if (s->batch_samples > TS_MAX_BATCH_SAMPLES) {
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT,
                   "batch_samples above 64", request_id);
        return;
    }
    if ((s->channels & ~(uint32_t)ALL_CHANNELS) != 0u) {
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT,
                   "unknown bit in channels", request_id);
        return;
    }
    uint32_t channels = s->channels != 0u ? s->channels : DEFAULT_CHANNELS;
    ts_ina228_adc adc;
    memset(&adc, 0, sizeof adc);
    adc.die_temp = s->die_temp;
    adc.alert_on_ready = true; /* CNVR: also what makes ALERT follow CNVRF */
    adc.latch = true;          /* held until DIAG_ALRT is read: no conversion goes unseen */
    uint32_t asked = s->rate_hz != 0u ? s->rate_hz
                                      : (p->config.default_rate_hz != 0u ? p->config.default_rate_hz
                                                                         : p->config.max_rate_hz);
    if (s->manual_adc) {
        adc.vbus_ct = (ts_ina228_ct)s->vbus_ct;
        adc.vshunt_ct = (ts_ina228_ct)s->vshunt_ct;
        adc.temp_ct = (ts_ina228_ct)s->temp_ct;
        adc.avg = (ts_ina228_avg)s->averaging;
        uint32_t conv = 1000000u / ts_ina228_conversion_period_us(&adc);
        if (s->rate_hz != 0u && (s->rate_hz * 20u < conv * 19u || s->rate_hz * 20u > conv * 21u)) {
            send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT,
                       "rate_hz is not the conversion rate of manual_adc", request_id);
            return;
        }
        asked = conv;
    } else if (asked <= ts_probe_max_rate_hz(p, channels) &&
               ts_ina228_match_rate(asked, &adc) != TS_OK) {
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT,
                   "no conversion time x averaging matches rate_hz", request_id);
        return;
    }
    uint32_t period = ts_ina228_conversion_period_us(&adc);
    uint32_t rate = (1000000u + period / 2u) / period;
    uint32_t ceiling = ts_probe_max_rate_hz(p, channels);
    if (!s->manual_adc && asked > ceiling) {
        rate = asked; /* refused below, with the ceiling in the message */
    }
    /* No rate asked: the default, or the fastest these channels allow. */
    for (uint32_t target = rate; s->rate_hz == 0u && !s->manual_adc && rate > ceiling &&
                                  target > 1u;) {
        target = target * 19u / 20u;
        if (ts_ina228_match_rate(target, &adc) == TS_OK) {
            period = ts_ina228_conversion_period_us(&adc);
            rate = (1000000u + period / 2u) / period;
        }
    }
    if (rate > ceiling) {
        /* e.g. "rate 1200 Hz above the 972 Hz ceiling (1028 us I2C/sample)" */
        char detail[96];
        char *d = put_text(detail, "rate ");
        d = put_u32(d, rate);
        d = put_text(d, " Hz above the ");
        d = put_u32(d, ceiling);
        d = put_text(d, " Hz ceiling (");
        d = put_u32(d, ts_ina228_sample_bus_us(channels, p->config.i2c_bus_hz,
                                               p->config.i2c_txn_overhead_us));
        (void)put_text(d, " us I2C/sample)");
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT, detail, request_id);
        return;
    }
    ts_sampler_config sc;
    memset(&sc, 0, sizeof sc);
    /* Idle: write the setup here. Running: the sampling context owns the bus
     * and writes it at its next edge (no health check sees a half-done Start). */
    if (!p->running) {
        if (ts_ina228_configure_adc(&p->ina, &adc) != TS_OK) {
            p->link_i2c_errors++;
            send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_SENSOR_FAULT,
                       "INA228 ADC_CONFIG write failed", request_id);
            return;
        }
        sc.configured = true;
    }
    sc.channels = channels;
    sc.die_temp = s->die_temp;
    sc.period_us = period;
    sc.adc = adc;
    sc.slow_every =
        s->accumulators_every != 0u ? s->accumulators_every : TS_DEFAULT_ACCUMULATORS_EVERY;
    p->has_pending = false;
    p->expected_seq = 0;
    p->rate_hz = rate;
    p->requested_rate_hz = asked;
    p->period_us = period;
    p->channels = channels;
    p->adc_config = ts_ina228_adc_config_value(&adc);
    p->batch_samples = s->batch_samples != 0u ? s->batch_samples : TS_DEFAULT_BATCH_SAMPLES;
    /* Any run of 16N consecutive samples holds at most 16 slow readings taken
     * every N samples: cap the batch there so the list never overflows. */
    if (sc.slow_every < TS_MAX_BATCH_SAMPLES &&
        p->batch_samples > sc.slow_every * MAX_BATCH_SLOW) {
        p->batch_samples = sc.slow_every * MAX_BATCH_SLOW;
    }
    p->max_batch_age_us = p->config.max_batch_age_us;
    ts_sampler_start(&p->sampler, &sc);
    p->running = true;
    send_ack(p, request_id);
    send_info(p);
    if (p->platform.sampling_changed != NULL) {
        p->platform.sampling_changed(p->platform.ctx, true, rate);
    }
}

static void handle_stop(ts_probe *p, uint32_t request_id)
{
    bool was_running = p->running;
    ts_sampler_stop(&p->sampler);
    p->running = false;
    if (was_running) {
        (void)ts_ina228_shutdown(&p->ina);
    }
    send_ack(p, request_id);
    if (was_running && p->platform.sampling_changed != NULL) {
        p->platform.sampling_changed(p->platform.ctx, false, 0u);
    }
}

static void handle_sync(ts_probe *p, const throttlescope_v1_SyncRequest *req,
                        uint64_t rx_time_us)
{
    clear_msg(p, throttlescope_v1_ProbeToHost_sync_tag);
    p->msg.msg.sync.sync_id = req->sync_id;
    p->msg.msg.sync.host_time_ns = req->host_time_ns;
    p->msg.msg.sync.probe_rx_us = rx_time_us;
    p->msg.msg.sync.probe_tx_us = now_us(p);
    (void)send_msg(p);
}

static void handle_reset_accumulators(ts_probe *p, uint32_t request_id)
{
    if (p->sensor_status != TS_OK) {
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_SENSOR_FAULT,
                   sensor_fault_text(p->sensor_status), request_id);
        return;
    }
    if (p->running) {
        /* The sampling context owns the bus and the epoch while running. */
        ts_sampler_reset_accumulators(&p->sampler);
        send_ack(p, request_id);
        return;
    }
    if (ts_ina228_reset_accumulators(&p->ina) != TS_OK) {
        p->link_i2c_errors++;
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_SENSOR_FAULT,
                   "INA228 CONFIG write failed", request_id);
        return;
    }
    p->sampler.counters.epoch++;
    p->sampler.new_epoch_pending = true;
    send_ack(p, request_id);
}

static void handle_command(ts_probe *p, const throttlescope_v1_HostToProbe *m,
                           uint64_t rx_time_us)
{
    switch (m->which_cmd) {
    case throttlescope_v1_HostToProbe_start_tag:
        handle_start(p, &m->cmd.start, m->request_id);
        break;
    case throttlescope_v1_HostToProbe_stop_tag:
        handle_stop(p, m->request_id);
        break;
    case throttlescope_v1_HostToProbe_sync_tag:
        handle_sync(p, &m->cmd.sync, rx_time_us);
        break;
    case throttlescope_v1_HostToProbe_get_info_tag:
        send_info(p);
        break;
    case throttlescope_v1_HostToProbe_get_status_tag:
        send_status(p);
        break;
    case throttlescope_v1_HostToProbe_reset_accumulators_tag:
        handle_reset_accumulators(p, m->request_id);
        break;
    case throttlescope_v1_HostToProbe_get_port_status_tag: {
        /* Without CC sensing the CC fields stay UNKNOWN; VBUS is still told. */
        ts_port_state st;
        ts_port_snapshot(&p->port, &st);
        (void)send_port(p, &st, true);
        break;
    }
    default:
        p->counters.rx_bad_messages++;
        send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_MESSAGE,
                   "no known command in HostToProbe", m->request_id);
        break;
    }
}

void ts_probe_rx(ts_probe *p, const uint8_t *data, size_t len, uint64_t rx_time_us)
{
    for (size_t i = 0; i < len; i++) {
        const uint8_t *body = NULL;
        size_t body_len = 0;
        if (!ts_deframer_push(&p->deframer, data[i], &body, &body_len)) {
            continue;
        }
        size_t payload_len = 0;
        if (ts_frame_decode(body, body_len, p->rx_payload, sizeof p->rx_payload,
                            &payload_len) != TS_OK) {
            p->counters.rx_bad_frames++;
            send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_FRAME,
                       "COBS or CRC-32C check failed", 0u);
            continue;
        }
        throttlescope_v1_HostToProbe m;
        if (ts_proto_decode_host_msg(p->rx_payload, payload_len, &m) != TS_OK) {
            p->counters.rx_bad_messages++;
            send_error(p, throttlescope_v1_ErrorCode_ERROR_CODE_BAD_MESSAGE,
                       "not a HostToProbe message", 0u);
            continue;
        }
        handle_command(p, &m, rx_time_us);
    }
}

void ts_probe_alert(ts_probe *p, uint64_t edge_us)
{
    if (p->running) {
        (void)ts_sampler_alert(&p->sampler, edge_us, now_us(p));
    }
}

bool ts_probe_poll_ready(ts_probe *p)
{
    if (!p->running) {
        return false;
    }
    return ts_sampler_check(&p->sampler, now_us(p), false);
}

void ts_probe_watchdog(ts_probe *p)
{
    if (p->running) {
        (void)ts_sampler_check(&p->sampler, now_us(p), true);
    }
}

uint32_t ts_probe_period_us(const ts_probe *p)
{
    return p->running ? p->period_us : 0u;
}

uint32_t ts_probe_alert_timeout_us(const ts_probe *p)
{
    return 2u * p->period_us + 10000u;
}

uint32_t ts_probe_max_rate_hz(const ts_probe *p, uint32_t channels)
{
    uint32_t bus_us = ts_ina228_sample_bus_us(channels, p->config.i2c_bus_hz,
                                              p->config.i2c_txn_overhead_us);
    uint32_t ceiling = bus_us > 0u ? 1000000u / bus_us : p->config.max_rate_hz;
    return ceiling < p->config.max_rate_hz ? ceiling : p->config.max_rate_hz;
}

void ts_probe_temp(ts_probe *p, uint32_t sensor, int32_t milli_c)
{
    ts_sampler_temp(&p->sampler, sensor, milli_c);
}

void ts_probe_temp_error(ts_probe *p)
{
    ts_sampler_temp_error(&p->sampler);
}

/* Build the next batch from the rings into p->pending. Returns false when
 * nothing is due. */
static bool build_batch(ts_probe *p, uint64_t now)
{
    ts_ring *ring = &p->sampler.samples;
    ts_ring *temps = &p->sampler.temps;
    /* What is left of a previous run (queued before a new Start) is lost:
     * discard and count it. */
    uint32_t run = p->sampler.requested_run;
    const ts_sample *first = (const ts_sample *)ts_ring_peek(ring, 0);
    while (first != NULL && first->run != (uint8_t)run) {
        if (first->flags & TS_SAMPLE_NEW_EPOCH) {
            p->tx_epoch++; /* the epoch began even if its first sample is stale */
        }
        ts_ring_pop(ring, 1);
        p->stale_dropped++;
        first = (const ts_sample *)ts_ring_peek(ring, 0);
    }
    const ts_temp_sample *t0 = (const ts_temp_sample *)ts_ring_peek(temps, 0);
    while (t0 != NULL && t0->run != run) {
        ts_ring_pop(temps, 1);
        p->stale_temps++;
        t0 = (const ts_temp_sample *)ts_ring_peek(temps, 0);
    }
    uint32_t n = ts_ring_count(ring);
    uint32_t nt = ts_ring_count(temps);

    if (n == 0u) {
        /* Temperatures alone go out only once sampling stopped (otherwise
         * they ride with the next samples). */
        if (nt == 0u || p->running) {
            return false;
        }
    } else if (p->running && n < p->batch_samples &&
               now - first->time_us < p->max_batch_age_us) {
        return false;
    }

    clear_msg(p, throttlescope_v1_ProbeToHost_batch_tag);
    throttlescope_v1_SampleBatch *b = &p->msg.msg.batch;
    uint32_t k = 0;
    uint64_t last_seq;
    uint32_t epoch = p->tx_epoch;
    b->period_us = p->period_us;
    if (n == 0u) {
        b->first_seq = p->expected_seq;
        b->first_time_us = now;
        last_seq = UINT64_MAX;
    } else {
        b->first_seq = first->seq;
        b->first_time_us = first->time_us;
        b->dropped_before = (uint32_t)(first->seq - p->expected_seq);
        b->channels = first->channels;
        if (first->flags & TS_SAMPLE_NEW_EPOCH) {
            epoch++;
        }
        uint32_t limit = p->batch_samples;
        const ts_sample *prev = NULL;
        size_t pos = 0;
        for (k = 0; k < limit && k < n; k++) {
            const ts_sample *s = (const ts_sample *)ts_ring_peek(ring, k);
            /* A batch holds consecutive samples of one channel set and epoch. */
            if (s->seq != first->seq + k || s->channels != first->channels ||
                (k > 0u && (s->flags & TS_SAMPLE_NEW_EPOCH))) {
                break;
            }
            if ((s->flags & TS_SAMPLE_HAS_SLOW) && b->slow_count >= MAX_BATCH_SLOW) {
                break;
            }
            size_t mark = pos;
            int64_t dev = prev != NULL ? (int64_t)(s->time_us - prev->time_us) - (int64_t)p->period_us
                                       : 0;
            const int32_t vals[TS_PACKED_CHANNELS] = {s->vbus, s->vshunt, s->current,
                                                      (int32_t)s->power};
            const int32_t pvals[TS_PACKED_CHANNELS] = {
                prev ? prev->vbus : 0, prev ? prev->vshunt : 0, prev ? prev->current : 0,
                prev ? (int32_t)prev->power : 0};
            bool fits = ts_proto_put_zigzag(b->packed.bytes, sizeof b->packed.bytes, &pos, dev);
            for (unsigned c = 0; fits && c < TS_PACKED_CHANNELS; c++) {
                if (s->channels & (1u << c)) {
                    fits = ts_proto_put_zigzag(b->packed.bytes, sizeof b->packed.bytes, &pos,
                                               (int64_t)vals[c] - (int64_t)pvals[c]);
                }
            }
            if (!fits) {
                pos = mark; /* cannot happen within TS_MAX_PACKED_BYTES; end the batch */
                break;
            }
            b->diag |= s->diag;
            if (s->channels & TS_CH_VBUS) {
                if (!b->has_vbus_min || s->vbus < b->vbus_min) {
                    b->vbus_min = s->vbus;
                }
                b->has_vbus_min = true;
                /* VBUS LSB 195.3125 uV = 25/128 mV; negative reads as 0. */
                ts_port_vbus(&p->port, s->vbus > 0 ? (uint32_t)(((uint64_t)s->vbus * 25u) / 128u) : 0u,
                             s->time_us);
            }
            if (s->flags & TS_SAMPLE_HAS_SLOW) {
                throttlescope_v1_RegisterReading *r = &b->slow[b->slow_count++];
                r->index = k;
                r->reg = s->slow_reg;
                r->value = ((uint64_t)s->slow_hi << 32) | s->slow_lo;
            }
            prev = s;
        }
        b->packed.size = (pb_size_t)pos;
        b->count = k;
        last_seq = first->seq + k - 1u;
    }
    b->epoch = epoch;
    uint32_t t = 0;
    while (t < nt && t < TS_MAX_BATCH_TEMPS) {
        const ts_temp_sample *ts = (const ts_temp_sample *)ts_ring_peek(temps, t);
        if (ts->seq > last_seq) {
            break;
        }
        throttlescope_v1_TempReading *r = &b->temps[t];
        r->seq = ts->seq;
        r->sensor = ts->sensor;
        r->milli_c = ts->milli_c;
        t++;
    }
    b->temps_count = (pb_size_t)t;
    if (k == 0u && t == 0u) {
        return false;
    }

    size_t len = 0;
    if (ts_proto_frame_probe_msg(&p->msg, p->pending.frame, sizeof p->pending.frame, &len) !=
        TS_OK) {
        return false; /* unreachable: sizes are bounded by the .options */
    }
    p->pending.len = len;
    p->pending.samples = k;
    p->pending.temps = t;
    p->pending.next_seq = k > 0u ? first->seq + k : p->expected_seq;
    p->pending.epoch = epoch;
    return true;
}

static bool send_pending(ts_probe *p)
{
    if (!p->platform.tx_frame(p->platform.ctx, p->pending.frame, p->pending.len)) {
        return false;
    }
    ts_ring_pop(&p->sampler.samples, p->pending.samples);
    ts_ring_pop(&p->sampler.temps, p->pending.temps);
    p->expected_seq = p->pending.next_seq;
    p->tx_epoch = p->pending.epoch;
    p->counters.batches_sent++;
    p->has_pending = false;
    return true;
}

void ts_probe_port_cc(ts_probe *p, const uint16_t *cc1_mv, const uint16_t *cc2_mv, uint32_t n)
{
    ts_port_cc_window(&p->port, cc1_mv, cc2_mv, n, now_us(p));
}

void ts_probe_pd_contract(ts_probe *p, const ts_pd_contract *c, uint64_t agreed_us)
{
    if (c->valid) {
        ts_port_contract t;
        memset(&t, 0, sizeof t);
        t.mv = c->mv;
        t.mv_min = c->mv_min;
        t.mv_max = c->mv_max;
        t.ma = c->ma;
        t.ma_max = c->ma_max;
        t.mw = c->mw;
        t.agreed_us = agreed_us;
        /* ts_pd_supply counts from Fixed = 0; the wire keeps 0 for "unspecified". */
        t.supply = c->kind <= TS_PD_SPR_AVS ? (uint8_t)(c->kind + 1) : TS_SUPPLY_UNSPECIFIED;
        t.position = c->position;
        t.capability_mismatch = c->capability_mismatch;
        ts_port_set_pd_contract(&p->port, &t);
    } else if (c->end == TS_PD_END_SOFT_RESET) {
        ts_port_pd_renegotiating(&p->port);
    } else {
        ts_port_clear_pd_contract(&p->port);
    }
}

/* A changed port status goes out once; a refused one is retried with the
 * latest state. */
static void service_port(ts_probe *p)
{
    if (!p->config.cc_sensing) {
        return;
    }
    bool changed = ts_port_take_change(&p->port, &p->port_changed);
    if (!changed && !p->port_resend) {
        return;
    }
    p->port_resend = !send_port(p, &p->port_changed, false);
}

void ts_probe_service(ts_probe *p)
{
    service_port(p);
    /* Bounded: at most as many batches as the ring can hold. */
    for (uint32_t round = 0; round <= TS_SAMPLE_RING_CAPACITY; round++) {
        if (!p->has_pending) {
            if (!build_batch(p, now_us(p))) {
                return;
            }
            p->has_pending = true;
            if (!send_pending(p)) {
                p->counters.tx_overflows++; /* kept and retried; samples not lost yet */
                return;
            }
        } else if (!send_pending(p)) {
            return;
        }
    }
}

bool ts_probe_running(const ts_probe *p)
{
    return p->running;
}

uint32_t ts_probe_rate_hz(const ts_probe *p)
{
    return p->running ? p->rate_hz : 0u;
}

void ts_probe_counters_get(const ts_probe *p, ts_probe_counters *out)
{
    *out = p->counters;
    out->sampler = p->sampler.counters;
    out->sampler.samples_dropped += p->stale_dropped;
    out->sampler.temps_dropped += p->stale_temps;
    out->sampler.i2c_errors += p->link_i2c_errors;
    out->rx_bad_frames += p->deframer.overflows;
}
