/* Protocol vectors and their canonical JSON (format: fixtures/protocol/README.md). */
#include "protocol_vectors.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- JSON writer over a fixed buffer ---- */
typedef struct jw {
    char *buf;
    size_t cap;
    size_t len;
    bool ok;
    int depth;
    bool first;
} jw;

static void put(jw *w, const char *fmt, ...)
{
    if (!w->ok) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= w->cap - w->len) {
        w->ok = false;
        return;
    }
    w->len += (size_t)n;
}

static void indent(jw *w)
{
    put(w, "\n%*s", w->depth * 2, "");
}

static void key(jw *w, const char *k)
{
    if (!w->first) {
        put(w, ",");
    }
    w->first = false;
    indent(w);
    put(w, "\"%s\": ", k);
}

static void open_obj(jw *w, const char *k)
{
    if (k != NULL) {
        key(w, k);
    }
    put(w, "{");
    w->depth++;
    w->first = true;
}

static void close_obj(jw *w)
{
    w->depth--;
    if (!w->first) {
        indent(w);
    }
    put(w, "}");
    w->first = false;
}

static void kv_u(jw *w, const char *k, uint64_t v)
{
    key(w, k);
    put(w, "%" PRIu64, v);
}

static void kv_i(jw *w, const char *k, int64_t v)
{
    key(w, k);
    put(w, "%" PRId64, v);
}

static void kv_b(jw *w, const char *k, bool v)
{
    key(w, k);
    put(w, v ? "true" : "false");
}

static void kv_s(jw *w, const char *k, const char *s)
{
    key(w, k);
    put(w, "\"");
    for (const char *c = s; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\') {
            put(w, "\\%c", *c);
        } else if ((unsigned char)*c < 0x20u) {
            put(w, "\\u%04x", (unsigned)(unsigned char)*c);
        } else {
            put(w, "%c", *c);
        }
    }
    put(w, "\"");
}

static void kv_f(jw *w, const char *k, float v)
{
    key(w, k);
    put(w, "%.9g", (double)v);
}

/* An array of objects under key k: open_arr, then for element i open_item, its
 * fields and close_obj; close_arr with the number of elements. */
static void open_arr(jw *w, const char *k)
{
    key(w, k);
    put(w, "[");
    w->depth++;
}

static void open_item(jw *w, uint32_t i)
{
    put(w, i ? "," : "");
    w->first = true;
    indent(w);
    open_obj(w, NULL);
}

static void close_arr(jw *w, uint32_t n)
{
    w->depth--;
    if (n) {
        indent(w);
    }
    put(w, "]");
    w->first = false;
}

#define ARRAY(w, k, n, fmt, expr)                                                      \
    do {                                                                               \
        key(w, k);                                                                     \
        put(w, "[");                                                                   \
        for (pb_size_t i_ = 0; i_ < (n); i_++) {                                       \
            put(w, i_ ? ", " fmt : fmt, expr);                                         \
        }                                                                              \
        put(w, "]");                                                                   \
    } while (0)

static void json_batch(jw *w, const throttlescope_v1_SampleBatch *b)
{
    open_obj(w, "batch");
    kv_u(w, "first_seq", b->first_seq);
    kv_u(w, "first_time_us", b->first_time_us);
    ARRAY(w, "dt_us", b->dt_us_count, "%" PRIu32, b->dt_us[i_]);
    ARRAY(w, "vbus", b->vbus_count, "%" PRId32, b->vbus[i_]);
    ARRAY(w, "vshunt", b->vshunt_count, "%" PRId32, b->vshunt[i_]);
    ARRAY(w, "current", b->current_count, "%" PRId32, b->current[i_]);
    ARRAY(w, "power", b->power_count, "%" PRIu32, b->power[i_]);
    ARRAY(w, "die_temp", b->die_temp_count, "%" PRId32, b->die_temp[i_]);
    open_arr(w, "accumulators");
    for (pb_size_t i = 0; i < b->accumulators_count; i++) {
        open_item(w, i);
        kv_u(w, "seq", b->accumulators[i].seq);
        kv_u(w, "energy", b->accumulators[i].energy);
        kv_i(w, "charge", b->accumulators[i].charge);
        close_obj(w);
    }
    close_arr(w, b->accumulators_count);
    open_arr(w, "temps");
    for (pb_size_t i = 0; i < b->temps_count; i++) {
        open_item(w, i);
        kv_u(w, "seq", b->temps[i].seq);
        kv_u(w, "sensor", b->temps[i].sensor);
        kv_i(w, "milli_c", b->temps[i].milli_c);
        close_obj(w);
    }
    close_arr(w, b->temps_count);
    kv_u(w, "dropped_before", b->dropped_before);
    ARRAY(w, "packed", b->packed.size, "%u", (unsigned)b->packed.bytes[i_]);
    kv_u(w, "channels", b->channels);
    kv_u(w, "period_us", b->period_us);
    kv_u(w, "count", b->count);
    kv_u(w, "diag", b->diag);
    kv_u(w, "epoch", b->epoch);
    open_arr(w, "slow");
    for (pb_size_t i = 0; i < b->slow_count; i++) {
        open_item(w, i);
        kv_u(w, "index", b->slow[i].index);
        kv_u(w, "reg", b->slow[i].reg);
        kv_u(w, "value", b->slow[i].value);
        close_obj(w);
    }
    close_arr(w, b->slow_count);
    key(w, "vbus_min");
    if (b->has_vbus_min) {
        put(w, "%" PRId32, b->vbus_min);
    } else {
        put(w, "null");
    }
    close_obj(w);
}

/* v2: the samples packed holds, as the host must decode them. */
static void json_samples(jw *w, const throttlescope_v1_SampleBatch *b, const ts_unpacked_batch *u)
{
    static const char *const ch[TS_PACKED_CHANNELS] = {"vbus", "vshunt", "current", "power"};
    open_arr(w, "samples");
    for (uint32_t i = 0; i < u->count; i++) {
        open_item(w, i);
        kv_u(w, "seq", b->first_seq + i);
        kv_u(w, "time_us", u->time_us[i]);
        for (unsigned c = 0; c < TS_PACKED_CHANNELS; c++) {
            if (b->channels & (1u << c)) {
                kv_i(w, ch[c], u->value[c][i]);
            } else {
                key(w, ch[c]);
                put(w, "null");
            }
        }
        close_obj(w);
    }
    close_arr(w, u->count);
}

static void json_p2h(jw *w, const throttlescope_v1_ProbeToHost *m)
{
    switch (m->which_msg) {
    case throttlescope_v1_ProbeToHost_info_tag: {
        const throttlescope_v1_DeviceInfo *i = &m->msg.info;
        open_obj(w, "info");
        kv_u(w, "protocol_version", i->protocol_version);
        kv_s(w, "firmware_version", i->firmware_version);
        kv_s(w, "probe_id", i->probe_id);
        kv_u(w, "shunt_micro_ohm", i->shunt_micro_ohm);
        kv_f(w, "current_lsb_a", i->current_lsb_a);
        kv_u(w, "adc_range", i->adc_range);
        kv_u(w, "shunt_cal", i->shunt_cal);
        open_arr(w, "sensors");
        for (pb_size_t k = 0; k < i->sensors_count; k++) {
            open_item(w, k);
            kv_u(w, "index", i->sensors[k].index);
            kv_i(w, "kind", i->sensors[k].kind);
            kv_s(w, "name", i->sensors[k].name);
            close_obj(w);
        }
        close_arr(w, i->sensors_count);
        kv_u(w, "max_rate_hz", i->max_rate_hz);
        kv_u(w, "max_batch_samples", i->max_batch_samples);
        kv_u(w, "adc_config", i->adc_config);
        kv_f(w, "conversion_rate_hz", i->conversion_rate_hz);
        kv_u(w, "channels", i->channels);
        kv_u(w, "i2c_bus_hz", i->i2c_bus_hz);
        kv_u(w, "sample_bus_us", i->sample_bus_us);
        kv_b(w, "cc_sensing", i->cc_sensing);
        kv_b(w, "pd_decoding", i->pd_decoding);
        close_obj(w);
        break;
    }
    case throttlescope_v1_ProbeToHost_batch_tag:
        json_batch(w, &m->msg.batch);
        break;
    case throttlescope_v1_ProbeToHost_sync_tag:
        open_obj(w, "sync");
        kv_u(w, "sync_id", m->msg.sync.sync_id);
        kv_u(w, "host_time_ns", m->msg.sync.host_time_ns);
        kv_u(w, "probe_rx_us", m->msg.sync.probe_rx_us);
        kv_u(w, "probe_tx_us", m->msg.sync.probe_tx_us);
        close_obj(w);
        break;
    case throttlescope_v1_ProbeToHost_status_tag: {
        const throttlescope_v1_Status *s = &m->msg.status;
        open_obj(w, "status");
        kv_u(w, "uptime_us", s->uptime_us);
        kv_u(w, "samples_taken", s->samples_taken);
        kv_u(w, "samples_dropped", s->samples_dropped);
        kv_u(w, "i2c_errors", s->i2c_errors);
        kv_u(w, "ring_overflows", s->ring_overflows);
        kv_u(w, "tx_overflows", s->tx_overflows);
        kv_u(w, "rx_bad_frames", s->rx_bad_frames);
        kv_u(w, "rx_bad_messages", s->rx_bad_messages);
        kv_u(w, "temp_errors", s->temp_errors);
        kv_b(w, "running", s->running);
        kv_u(w, "rate_hz", s->rate_hz);
        kv_u(w, "temps_dropped", s->temps_dropped);
        kv_u(w, "batches_sent", s->batches_sent);
        kv_u(w, "missed_slots", s->missed_slots);
        kv_f(w, "achieved_rate_hz", s->achieved_rate_hz);
        kv_f(w, "conversion_rate_hz", s->conversion_rate_hz);
        kv_u(w, "requested_rate_hz", s->requested_rate_hz);
        kv_u(w, "epoch", s->epoch);
        kv_u(w, "reinits", s->reinits);
        kv_u(w, "diag", s->diag);
        close_obj(w);
        break;
    }
    case throttlescope_v1_ProbeToHost_error_tag:
        open_obj(w, "error");
        kv_i(w, "code", m->msg.error.code);
        kv_s(w, "detail", m->msg.error.detail);
        kv_u(w, "request_id", m->msg.error.request_id);
        close_obj(w);
        break;
    case throttlescope_v1_ProbeToHost_ack_tag:
        open_obj(w, "ack");
        kv_u(w, "request_id", m->msg.ack.request_id);
        close_obj(w);
        break;
    case throttlescope_v1_ProbeToHost_port_tag: {
        const throttlescope_v1_PortStatus *ps = &m->msg.port;
        open_obj(w, "port");
        kv_u(w, "probe_time_us", ps->probe_time_us);
        kv_i(w, "advertisement", ps->advertisement);
        kv_i(w, "active_cc", ps->active_cc);
        kv_u(w, "cc1_mv", ps->cc1_mv);
        kv_u(w, "cc2_mv", ps->cc2_mv);
        kv_i(w, "cc1", ps->cc1);
        kv_i(w, "cc2", ps->cc2);
        kv_i(w, "vbus_level", ps->vbus_level);
        kv_u(w, "vbus_mv", ps->vbus_mv);
        kv_u(w, "vbus_min_mv", ps->vbus_min_mv);
        kv_b(w, "pd_contract", ps->pd_contract);
        kv_u(w, "windows", ps->windows);
        kv_u(w, "noisy_windows", ps->noisy_windows);
        kv_u(w, "flaps", ps->flaps);
        kv_u(w, "changes", ps->changes);
        kv_b(w, "requested", ps->requested);
        if (ps->has_contract) {
            const throttlescope_v1_PdContract *c = &ps->contract;
            open_obj(w, "contract");
            kv_u(w, "mv", c->mv);
            kv_u(w, "ma", c->ma);
            kv_u(w, "mw", c->mw);
            kv_i(w, "supply", c->supply);
            kv_u(w, "object_position", c->object_position);
            kv_u(w, "agreed_us", c->agreed_us);
            kv_b(w, "capability_mismatch", c->capability_mismatch);
            kv_u(w, "mv_min", c->mv_min);
            kv_u(w, "mv_max", c->mv_max);
            kv_u(w, "ma_max", c->ma_max);
            close_obj(w);
        } else {
            key(w, "contract");
            put(w, "null");
        }
        close_obj(w);
        break;
    }
    default:
        w->ok = false;
        break;
    }
}

static void json_h2p(jw *w, const throttlescope_v1_HostToProbe *m)
{
    kv_u(w, "request_id", m->request_id);
    switch (m->which_cmd) {
    case throttlescope_v1_HostToProbe_start_tag: {
        const throttlescope_v1_Start *s = &m->cmd.start;
        open_obj(w, "start");
        kv_u(w, "rate_hz", s->rate_hz);
        kv_i(w, "vbus_ct", s->vbus_ct);
        kv_i(w, "vshunt_ct", s->vshunt_ct);
        kv_i(w, "temp_ct", s->temp_ct);
        kv_i(w, "averaging", s->averaging);
        kv_u(w, "batch_samples", s->batch_samples);
        kv_u(w, "accumulators_every", s->accumulators_every);
        kv_b(w, "die_temp", s->die_temp);
        kv_u(w, "channels", s->channels);
        kv_b(w, "manual_adc", s->manual_adc);
        close_obj(w);
        break;
    }
    case throttlescope_v1_HostToProbe_stop_tag:
        open_obj(w, "stop");
        close_obj(w);
        break;
    case throttlescope_v1_HostToProbe_sync_tag:
        open_obj(w, "sync");
        kv_u(w, "sync_id", m->cmd.sync.sync_id);
        kv_u(w, "host_time_ns", m->cmd.sync.host_time_ns);
        close_obj(w);
        break;
    case throttlescope_v1_HostToProbe_get_info_tag:
        open_obj(w, "get_info");
        close_obj(w);
        break;
    case throttlescope_v1_HostToProbe_get_status_tag:
        open_obj(w, "get_status");
        close_obj(w);
        break;
    case throttlescope_v1_HostToProbe_reset_accumulators_tag:
        open_obj(w, "reset_accumulators");
        close_obj(w);
        break;
    case throttlescope_v1_HostToProbe_get_port_status_tag:
        open_obj(w, "get_port_status");
        close_obj(w);
        break;
    default:
        w->ok = false;
        break;
    }
}

bool ts_vector_json(const ts_vector *v, const uint8_t *frame, size_t frame_len, char *out,
                    size_t cap)
{
    jw w = {out, cap, 0, true, 0, true};
    open_obj(&w, NULL);
    kv_s(&w, "name", v->name);
    kv_s(&w, "direction", v->probe_to_host ? "probe_to_host" : "host_to_probe");
    kv_s(&w, "message_type", v->probe_to_host ? "ProbeToHost" : "HostToProbe");
    kv_s(&w, "description", v->description);
    key(&w, "frame_hex");
    put(&w, "\"");
    for (size_t i = 0; i < frame_len; i++) {
        put(&w, "%02x", frame[i]);
    }
    put(&w, "\"");
    open_obj(&w, "message");
    if (v->probe_to_host) {
        json_p2h(&w, &v->p2h);
    } else {
        json_h2p(&w, &v->h2p);
    }
    close_obj(&w);
    if (v->has_samples) {
        json_samples(&w, &v->p2h.msg.batch, &v->samples);
    }
    close_obj(&w);
    put(&w, "\n");
    return w.ok;
}

int ts_vector_frame(const ts_vector *v, uint8_t *out, size_t cap, size_t *len)
{
    return v->probe_to_host ? ts_proto_frame_probe_msg(&v->p2h, out, cap, len)
                            : ts_proto_frame_host_msg(&v->h2p, out, cap, len);
}

/* ---- the vectors ---- */
#define P2H(v, tag)                                                                    \
    do {                                                                               \
        (v)->probe_to_host = true;                                                     \
        (v)->p2h.which_msg = throttlescope_v1_ProbeToHost_##tag##_tag;                 \
    } while (0)
#define H2P(v, tag, id)                                                                \
    do {                                                                               \
        (v)->probe_to_host = false;                                                    \
        (v)->h2p.request_id = (id);                                                    \
        (v)->h2p.which_cmd = throttlescope_v1_HostToProbe_##tag##_tag;                 \
    } while (0)

/* Pack v->samples (count, time_us, value) into a v2 batch the way the probe does. */
static void pack_v2(ts_vector *v)
{
    throttlescope_v1_SampleBatch *b = &v->p2h.msg.batch;
    const ts_unpacked_batch *u = &v->samples;
    size_t pos = 0;
    b->count = u->count;
    b->first_time_us = u->count ? u->time_us[0] : b->first_time_us;
    for (uint32_t i = 0; i < u->count; i++) {
        int64_t dev = i ? (int64_t)(u->time_us[i] - u->time_us[i - 1]) - (int64_t)b->period_us : 0;
        (void)ts_proto_put_zigzag(b->packed.bytes, sizeof b->packed.bytes, &pos, dev);
        for (unsigned c = 0; c < TS_PACKED_CHANNELS; c++) {
            if (b->channels & (1u << c)) {
                int64_t prev = i ? u->value[c][i - 1] : 0;
                (void)ts_proto_put_zigzag(b->packed.bytes, sizeof b->packed.bytes, &pos,
                                          u->value[c][i] - prev);
            }
        }
    }
    b->packed.size = (pb_size_t)pos;
    v->has_samples = true;
}

/* n samples at 1 kHz of a 5 V, ~1.2 A bus on the simulator's calibration. */
static void fill_samples(throttlescope_v1_SampleBatch *b, pb_size_t n, bool die_temp)
{
    b->dt_us_count = b->vbus_count = b->vshunt_count = b->current_count = b->power_count = n;
    b->die_temp_count = die_temp ? n : 0;
    for (pb_size_t i = 0; i < n; i++) {
        b->dt_us[i] = i == 0 ? 0u : 1000u + (uint32_t)(i % 3u);
        b->vbus[i] = 25600 - (int32_t)(i % 7u);            /* 5.000 V */
        b->vshunt[i] = 19200 + (int32_t)(i * 11u % 50u);   /* 6 mV over 5 mohm */
        b->current[i] = 62915 + (int32_t)(i * 13u % 40u);  /* 1.2 A at 19.07 uA/LSB */
        b->power[i] = 98304u + i;                          /* 6 W at 61.0 uW/LSB */
        if (die_temp) {
            b->die_temp[i] = 4480 + (int32_t)(i % 5u);     /* 35 degC */
        }
    }
}

static const char *const names[] = {
    "info_sim_probe",
    "batch_basic",
    "batch_negative_current",
    "batch_full_scale",
    "batch_energy_near_40bit_wrap",
    "batch_empty",
    "batch_max",
    "batch_after_drop",
    "sync_reply",
    "status_counters",
    "error_bad_argument",
    "ack",
    "start_all_fields",
    "start_defaults",
    "stop",
    "sync_request",
    "get_info",
    "get_status",
    "reset_accumulators",
    "batch_v2_default",
    "batch_v2_four_channels_extremes",
    "batch_v2_new_epoch_after_drop",
    "info_v2_running",
    "status_v2",
    "start_v2_manual_adc",
    "info_v3_cc_sensing",
    "port_v3_attach_3a0_flipped",
    "port_v3_requested_out_of_range_pd_contract",
    "batch_v3_vbus_min",
    "get_port_status",
    "info_v3_pd_decoding",
    "port_v3_pd_contract_20v",
    "port_v3_pd_contract_pps_mismatch",
};

void ts_vector_limits_json(char *out, size_t cap)
{
    snprintf(out, cap,
             "{\n  \"probe_to_host_payload_max\": %u,\n  \"host_to_probe_payload_max\": %u\n}\n",
             (unsigned)throttlescope_v1_ProbeToHost_size,
             (unsigned)throttlescope_v1_HostToProbe_size);
}

size_t ts_vector_count(void)
{
    return sizeof names / sizeof names[0];
}

/* The simulated board's DeviceInfo facts (5 mOhm shunt, 10 A range). */
static throttlescope_v1_DeviceInfo *sim_info(ts_vector *v, uint32_t version, const char *fw)
{
    P2H(v, info);
    throttlescope_v1_DeviceInfo *d = &v->p2h.msg.info;
    d->protocol_version = version;
    strcpy(d->firmware_version, fw);
    strcpy(d->probe_id, "sim-0001");
    d->shunt_micro_ohm = 5000;
    d->current_lsb_a = (float)(10.0 / 524288.0);
    d->shunt_cal = 1250;
    return d;
}

void ts_vector_build(size_t i, ts_vector *v)
{
    memset(v, 0, sizeof *v);
    v->name = names[i];
    throttlescope_v1_SampleBatch *b = &v->p2h.msg.batch;
    switch (i) {
    case 0: {
        v->description = "v1 DeviceInfo (GetInfo before a Start): 5 mohm shunt, 10 A max, an NTC and a TMP117";
        throttlescope_v1_DeviceInfo *d = sim_info(v, 1, "0.1.0-sim");
        d->sensors_count = 2;
        d->sensors[0].index = 0;
        d->sensors[0].kind = throttlescope_v1_SensorKind_SENSOR_KIND_NTC;
        strcpy(d->sensors[0].name, "enclosure");
        d->sensors[1].index = 1;
        d->sensors[1].kind = throttlescope_v1_SensorKind_SENSOR_KIND_DIGITAL;
        strcpy(d->sensors[1].name, "tmp117");
        d->max_rate_hz = 10000;
        d->max_batch_samples = 64;
        break;
    }
    case 1:
        P2H(v, batch);
        v->description = "v1 layout (still decoded by the host): " "4 samples, all fast channels, one ENERGY/CHARGE reading, one temperature";
        b->first_seq = 1000;
        b->first_time_us = 12345678;
        fill_samples(b, 4, false);
        b->accumulators_count = 1;
        b->accumulators[0].seq = 1000;
        b->accumulators[0].energy = 163840;
        b->accumulators[0].charge = 629145;
        b->temps_count = 1;
        b->temps[0].seq = 1002;
        b->temps[0].sensor = 0;
        b->temps[0].milli_c = 41250;
        break;
    case 2:
        P2H(v, batch);
        v->description = "v1 layout (still decoded by the host): " "negative shunt voltage, current and charge (reverse current)";
        b->first_seq = 7;
        b->first_time_us = 1000;
        fill_samples(b, 3, false);
        for (pb_size_t k = 0; k < 3; k++) {
            b->vshunt[k] = -19200 - (int32_t)k;
            b->current[k] = -62915 - (int32_t)k;
        }
        b->accumulators_count = 1;
        b->accumulators[0].seq = 7;
        b->accumulators[0].energy = 5;
        b->accumulators[0].charge = -629145;
        break;
    case 3:
        P2H(v, batch);
        v->description = "v1 layout (still decoded by the host): " "full-scale raw values: 20-bit limits, 24-bit power, 16-bit die temperature";
        b->first_seq = 0;
        b->first_time_us = 0;
        fill_samples(b, 2, true);
        b->vbus[0] = 524287;
        b->vbus[1] = -524288;
        b->vshunt[0] = 524287;
        b->vshunt[1] = -524288;
        b->current[0] = 524287;
        b->current[1] = -524288;
        b->power[0] = 0xFFFFFFu;
        b->power[1] = 0;
        b->die_temp[0] = 32767;
        b->die_temp[1] = -32768;
        b->dt_us[1] = 4294967295u;
        break;
    case 4:
        P2H(v, batch);
        v->description = "v1 layout (still decoded by the host): " "ENERGY just below and at the 40-bit limit; CHARGE at both 40-bit signed limits";
        b->first_seq = 4294967296ull; /* past 2^32 */
        b->first_time_us = 86400000000ull;
        fill_samples(b, 2, false);
        b->accumulators_count = 2;
        b->accumulators[0].seq = 4294967296ull;
        b->accumulators[0].energy = 0xFFFFFFFFF0ull;
        b->accumulators[0].charge = 549755813887ll;
        b->accumulators[1].seq = 4294967297ull;
        b->accumulators[1].energy = 0xFFFFFFFFFFull;
        b->accumulators[1].charge = -549755813888ll;
        break;
    case 5:
        P2H(v, batch);
        v->description = "empty batch: no samples, no readings (a gap report only)";
        b->first_seq = 100;
        b->first_time_us = 2000000;
        b->dropped_before = 3;
        break;
    case 6:
        P2H(v, batch);
        v->description = "v1 layout (still decoded by the host): " "largest batch: 64 samples with die temperature, 8 accumulator readings, 8 temperatures";
        b->first_seq = 123456789;
        b->first_time_us = 987654321;
        fill_samples(b, 64, true);
        b->accumulators_count = 8;
        for (pb_size_t k = 0; k < 8; k++) {
            b->accumulators[k].seq = 123456789u + 8u * k;
            b->accumulators[k].energy = 1000000u + 1000u * k;
            b->accumulators[k].charge = -(int64_t)(500000 + 100 * (int64_t)k);
        }
        b->temps_count = 8;
        for (pb_size_t k = 0; k < 8; k++) {
            b->temps[k].seq = 123456789u + 8u * k;
            b->temps[k].sensor = k % 2u;
            b->temps[k].milli_c = -40000 + 20000 * (int32_t)k;
        }
        break;
    case 7:
        P2H(v, batch);
        v->description = "v1 layout (still decoded by the host): " "batch after 17 dropped samples (host stopped reading)";
        b->first_seq = 273;
        b->first_time_us = 273000;
        b->dropped_before = 17;
        fill_samples(b, 2, false);
        break;
    case 8:
        P2H(v, sync);
        v->description = "SyncReply echoing a host Unix time in ns (above 2^53)";
        v->p2h.msg.sync.sync_id = 4242;
        v->p2h.msg.sync.host_time_ns = 1763740000123456789ull;
        v->p2h.msg.sync.probe_rx_us = 3600000123ull;
        v->p2h.msg.sync.probe_tx_us = 3600000180ull;
        break;
    case 9: {
        P2H(v, status);
        v->description = "Status with every counter set";
        throttlescope_v1_Status *s = &v->p2h.msg.status;
        s->uptime_us = 3600000000ull;
        s->samples_taken = 3600000;
        s->samples_dropped = 17;
        s->i2c_errors = 2;
        s->ring_overflows = 1;
        s->tx_overflows = 5;
        s->rx_bad_frames = 3;
        s->rx_bad_messages = 4;
        s->temp_errors = 6;
        s->running = true;
        s->rate_hz = 1000;
        s->temps_dropped = 7;
        s->batches_sent = 112500;
        break;
    }
    case 10:
        P2H(v, error);
        v->description = "Error for a Start with a rate above max_rate_hz";
        v->p2h.msg.error.code = throttlescope_v1_ErrorCode_ERROR_CODE_BAD_ARGUMENT;
        strcpy(v->p2h.msg.error.detail, "rate_hz above DeviceInfo.max_rate_hz");
        v->p2h.msg.error.request_id = 9;
        break;
    case 11:
        P2H(v, ack);
        v->description = "Ack of request 3";
        v->p2h.msg.ack.request_id = 3;
        break;
    case 12: {
        H2P(v, start, 1);
        v->description = "Start with every field set";
        throttlescope_v1_Start *s = &v->h2p.cmd.start;
        s->rate_hz = 2000;
        s->vbus_ct = throttlescope_v1_ConversionTime_CT_84US;
        s->vshunt_ct = throttlescope_v1_ConversionTime_CT_150US;
        s->temp_ct = throttlescope_v1_ConversionTime_CT_4120US;
        s->averaging = throttlescope_v1_Averaging_AVG_4;
        s->batch_samples = 64;
        s->accumulators_every = 100;
        s->die_temp = true;
        s->channels = 1u | 4u;
        break;
    }
    case 13:
        H2P(v, start, 2);
        v->description = "Start with every field default (probe defaults)";
        break;
    case 14:
        H2P(v, stop, 3);
        v->description = "Stop";
        break;
    case 15:
        H2P(v, sync, 0);
        v->description = "SyncRequest with a host Unix time in ns";
        v->h2p.cmd.sync.sync_id = 4242;
        v->h2p.cmd.sync.host_time_ns = 1763740000123456789ull;
        break;
    case 16:
        H2P(v, get_info, 4);
        v->description = "GetInfo";
        break;
    case 17:
        H2P(v, get_status, 5);
        v->description = "GetStatus";
        break;
    case 18:
        H2P(v, reset_accumulators, 6);
        v->description = "ResetAccumulators";
        break;
    case 19: {
        P2H(v, batch);
        v->description = "v2 default batch: 32 samples of VBUS and VSHUNT at 936 us, edge jitter, "
                         "ENERGY/CHARGE slow readings, a temperature";
        b->first_seq = 4096;
        b->channels = 0x3u;
        b->period_us = 936;
        v->samples.count = 32;
        for (uint32_t i = 0; i < 32u; i++) {
            v->samples.time_us[i] = 5000000u + 936u * i + (i % 4u == 3u ? 2u : 0u);
            v->samples.value[0][i] = 25600 - (int32_t)(i * 7u % 9u);  /* 5.000 V */
            v->samples.value[1][i] = 19200 + (int32_t)(i * 11u % 50u); /* 6 mV */
        }
        pack_v2(v);
        b->slow_count = 4;
        for (pb_size_t k = 0; k < 4; k++) {
            b->slow[k].index = 7u + 8u * k;
            b->slow[k].reg = k % 2u ? 0x0Au : 0x09u;
            b->slow[k].value = k % 2u ? 629145u + k : 163840u + 100u * k;
        }
        b->temps_count = 1;
        b->temps[0].seq = 4100;
        b->temps[0].sensor = 0;
        b->temps[0].milli_c = 41250;
        break;
    }
    case 20: {
        P2H(v, batch);
        v->description = "v2, four channels at their raw limits, dt far from the period both "
                         "ways, slow ENERGY/CHARGE/DIETEMP at their register limits, DIAG flags";
        b->first_seq = 4294967296ull;
        b->channels = 0xFu;
        b->period_us = 1000;
        b->diag = 0x0E01u; /* ENERGYOF, CHARGEOF, MATHOF, MEMSTAT error */
        b->epoch = 3;
        v->samples.count = 4;
        const int64_t t[4] = {86400000000ll, 86400000001ll, 86404294967ll, 86404295967ll};
        const int64_t vals[4][4] = {{524287, -524288, 0, 524287},
                                    {-524288, 524287, -1, 0},
                                    {524287, -524288, 524287, -524288},
                                    {16777215, 0, 16777215, 1}};
        for (uint32_t i = 0; i < 4u; i++) {
            v->samples.time_us[i] = (uint64_t)t[i];
            for (unsigned c = 0; c < 4u; c++) {
                v->samples.value[c][i] = vals[c][i];
            }
        }
        pack_v2(v);
        b->slow_count = 3;
        b->slow[0].index = 0;
        b->slow[0].reg = 0x09u;
        b->slow[0].value = 0xFFFFFFFFFFull;
        b->slow[1].index = 1;
        b->slow[1].reg = 0x0Au;
        b->slow[1].value = 0x8000000000ull; /* CHARGE -2^39 */
        b->slow[2].index = 3;
        b->slow[2].reg = 0x06u;
        b->slow[2].value = 0x8000u; /* DIETEMP -256 degC */
        break;
    }
    case 21: {
        P2H(v, batch);
        v->description = "v2, first batch of accumulator epoch 1 (chip reset, re-initialised) "
                         "after 12 missed slots, ENERGY restarted near 0";
        b->first_seq = 300;
        b->dropped_before = 12;
        b->channels = 0x3u;
        b->period_us = 936;
        b->epoch = 1;
        v->samples.count = 3;
        for (uint32_t i = 0; i < 3u; i++) {
            v->samples.time_us[i] = 300000u + 936u * i;
            v->samples.value[0][i] = 25599;
            v->samples.value[1][i] = 19201 - (int32_t)i;
        }
        pack_v2(v);
        b->slow_count = 1;
        b->slow[0].index = 2;
        b->slow[0].reg = 0x09u;
        b->slow[0].value = 21;
        break;
    }
    case 22: {
        v->description = "v2 DeviceInfo after a Start: ADC_CONFIG, conversion rate, channels, I2C";
        throttlescope_v1_DeviceInfo *d = sim_info(v, 2, "0.2.0-sim");
        d->max_rate_hz = 1443;
        d->max_batch_samples = 64;
        d->adc_config = 0xB289u;
        d->conversion_rate_hz = (float)(1e6 / 936.0);
        d->channels = 3;
        d->i2c_bus_hz = 400000;
        d->sample_bus_us = 693;
        break;
    }
    case 23: {
        P2H(v, status);
        v->description = "v2 Status: missed slots, achieved and conversion rate, epoch, DIAG";
        throttlescope_v1_Status *s = &v->p2h.msg.status;
        s->uptime_us = 7200000000ull;
        s->samples_taken = 7690000;
        s->samples_dropped = 420;
        s->missed_slots = 320;
        s->running = true;
        s->rate_hz = 1068;
        s->achieved_rate_hz = 1068.25f;
        s->conversion_rate_hz = (float)(1e6 / 936.0);
        s->requested_rate_hz = 1000;
        s->epoch = 1;
        s->reinits = 1;
        s->diag = 0x0201u;
        s->batches_sent = 240000;
        break;
    }
    case 24: {
        H2P(v, start, 7);
        v->description = "v2 Start with manual_adc: (84 + 84 us) x 16, rate 0";
        throttlescope_v1_Start *s = &v->h2p.cmd.start;
        s->vbus_ct = throttlescope_v1_ConversionTime_CT_84US;
        s->vshunt_ct = throttlescope_v1_ConversionTime_CT_84US;
        s->averaging = throttlescope_v1_Averaging_AVG_16;
        s->manual_adc = true;
        break;
    }
    case 25: {
        v->description = "v3 DeviceInfo of a probe that senses CC (cc_sensing)";
        throttlescope_v1_DeviceInfo *d = sim_info(v, 3, "0.3.0-sim");
        d->max_rate_hz = 1443;
        d->max_batch_samples = 64;
        d->i2c_bus_hz = 400000;
        d->sample_bus_us = 693;
        d->cc_sensing = true;
        break;
    }
    case 26: {
        P2H(v, port);
        v->description = "v3 PortStatus on a change: 3.0 A on CC2 (flipped plug), VBUS 5.05 V "
                         "with a 4.61 V minimum, BMC windows and flaps counted";
        throttlescope_v1_PortStatus *ps = &v->p2h.msg.port;
        ps->probe_time_us = 5368709120ull;
        ps->advertisement = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0;
        ps->active_cc = throttlescope_v1_ActiveCc_ACTIVE_CC_CC2;
        ps->cc1_mv = 12;
        ps->cc2_mv = 1689;
        ps->cc1 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN;
        ps->cc2 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0;
        ps->vbus_level = throttlescope_v1_VbusLevel_VBUS_LEVEL_SAFE5V;
        ps->vbus_mv = 5050;
        ps->vbus_min_mv = 4610;
        ps->windows = 4294967295u;
        ps->noisy_windows = 17;
        ps->flaps = 3;
        ps->changes = 2;
        break;
    }
    case 27: {
        P2H(v, port);
        v->description = "v3 PortStatus on request: CC1 at 650 mV (fits no range), VBUS 9 V "
                         "(a PD contract, W unknown)";
        throttlescope_v1_PortStatus *ps = &v->p2h.msg.port;
        ps->probe_time_us = 1000;
        ps->advertisement = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OUT_OF_RANGE;
        ps->active_cc = throttlescope_v1_ActiveCc_ACTIVE_CC_CC1;
        ps->cc1_mv = 650;
        ps->cc1 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OUT_OF_RANGE;
        ps->cc2 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN;
        ps->vbus_level = throttlescope_v1_VbusLevel_VBUS_LEVEL_ABOVE;
        ps->vbus_mv = 9010;
        ps->vbus_min_mv = 8990;
        ps->pd_contract = true;
        ps->windows = 500;
        ps->changes = 1;
        ps->requested = true;
        break;
    }
    case 28: {
        P2H(v, batch);
        v->description = "v3 batch with vbus_min: 4 samples of a sag to 4.5 V (raw 23040)";
        b->first_seq = 10;
        b->channels = 0x3u;
        b->period_us = 936;
        v->samples.count = 4;
        const int32_t vbus[4] = {25600, 23040, 24000, 25590};
        for (uint32_t i = 0; i < 4u; i++) {
            v->samples.time_us[i] = 10000u + 936u * i;
            v->samples.value[0][i] = vbus[i];
            v->samples.value[1][i] = 28800;
        }
        pack_v2(v);
        b->has_vbus_min = true;
        b->vbus_min = 23040;
        break;
    }
    case 29:
        H2P(v, get_port_status, 12);
        v->description = "v3 GetPortStatus (a v2 probe answers Error BAD_MESSAGE)";
        break;
    case 30: {
        v->description = "v3 DeviceInfo of a probe that decodes USB PD (pd_decoding)";
        throttlescope_v1_DeviceInfo *d = sim_info(v, 3, "0.4.0-sim");
        d->max_rate_hz = 1443;
        d->max_batch_samples = 64;
        d->i2c_bus_hz = 400000;
        d->sample_bus_us = 693;
        d->cc_sensing = true;
        d->pd_decoding = true;
        break;
    }
    case 31: {
        P2H(v, port);
        v->description = "v3 PortStatus with the decoded PD contract: Fixed 20 V 3 A (60 W), "
                         "object 3, agreed at 2446964 us; VBUS 20 V";
        throttlescope_v1_PortStatus *ps = &v->p2h.msg.port;
        ps->probe_time_us = 2447100;
        ps->advertisement = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0;
        ps->active_cc = throttlescope_v1_ActiveCc_ACTIVE_CC_CC1;
        ps->cc1_mv = 1683;
        ps->cc2_mv = 330;
        ps->cc1 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0;
        ps->cc2 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN;
        ps->vbus_level = throttlescope_v1_VbusLevel_VBUS_LEVEL_ABOVE;
        ps->vbus_mv = 20010;
        ps->vbus_min_mv = 19980;
        ps->pd_contract = true;
        ps->windows = 1200;
        ps->noisy_windows = 40;
        ps->changes = 3;
        ps->has_contract = true;
        ps->contract.mv = 20000;
        ps->contract.ma = 3000;
        ps->contract.mw = 60000;
        ps->contract.supply = throttlescope_v1_PdSupply_PD_SUPPLY_FIXED;
        ps->contract.object_position = 3;
        ps->contract.agreed_us = 2446964;
        ps->contract.mv_min = 20000;
        ps->contract.mv_max = 20000;
        ps->contract.ma_max = 3000;
        break;
    }
    case 32: {
        P2H(v, port);
        v->description = "v3 PortStatus on request with a PPS contract: 9.02 V 2.1 A (18.942 W) "
                         "of a 3.3..11 V APDO, Capability Mismatch, agreed after 2^32 us";
        throttlescope_v1_PortStatus *ps = &v->p2h.msg.port;
        ps->probe_time_us = 5000000000ull;
        ps->advertisement = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_1A5;
        ps->active_cc = throttlescope_v1_ActiveCc_ACTIVE_CC_CC2;
        ps->cc1 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN;
        ps->cc2 = throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_1A5;
        ps->cc2_mv = 941;
        ps->vbus_level = throttlescope_v1_VbusLevel_VBUS_LEVEL_ABOVE;
        ps->vbus_mv = 9020;
        ps->vbus_min_mv = 9000;
        ps->pd_contract = true;
        ps->requested = true;
        ps->has_contract = true;
        ps->contract.mv = 9020;
        ps->contract.ma = 2100;
        ps->contract.mw = 18942;
        ps->contract.supply = throttlescope_v1_PdSupply_PD_SUPPLY_PPS;
        ps->contract.object_position = 6;
        ps->contract.agreed_us = 4294967396ull;
        ps->contract.capability_mismatch = true;
        ps->contract.mv_min = 3300;
        ps->contract.mv_max = 11000;
        ps->contract.ma_max = 2100;
        break;
    }
    default:
        break;
    }
}
