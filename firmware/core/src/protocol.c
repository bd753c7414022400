/* nanopb encode/decode of the two top-level messages, plus framing. */
#include "throttlescope/protocol.h"

#include <pb_decode.h>
#include <pb_encode.h>

static int frame_msg(const pb_msgdesc_t *fields, const void *msg, size_t max_payload,
                     uint8_t *out, size_t cap, size_t *len)
{
    /* Encode the payload into the tail of out, then frame it in place:
     * ts_frame_encode stages its input at the tail anyway. */
    if (cap < TS_FRAME_MAX(max_payload)) {
        return TS_ERR_NO_SPACE;
    }
    size_t start = cap - max_payload;
    pb_ostream_t os = pb_ostream_from_buffer(out + start, max_payload);
    if (!pb_encode(&os, fields, msg)) {
        return TS_ERR_DECODE;
    }
    return ts_frame_encode(out + start, os.bytes_written, out, cap, len);
}

int ts_proto_frame_probe_msg(const throttlescope_v1_ProbeToHost *msg, uint8_t *out,
                             size_t cap, size_t *len)
{
    return frame_msg(throttlescope_v1_ProbeToHost_fields, msg,
                     throttlescope_v1_ProbeToHost_size, out, cap, len);
}

int ts_proto_frame_host_msg(const throttlescope_v1_HostToProbe *msg, uint8_t *out,
                            size_t cap, size_t *len)
{
    return frame_msg(throttlescope_v1_HostToProbe_fields, msg,
                     throttlescope_v1_HostToProbe_size, out, cap, len);
}

int ts_proto_decode_probe_msg(const uint8_t *payload, size_t len,
                              throttlescope_v1_ProbeToHost *msg)
{
    pb_istream_t is = pb_istream_from_buffer(payload, len);
    *msg = (throttlescope_v1_ProbeToHost)throttlescope_v1_ProbeToHost_init_zero;
    return pb_decode(&is, throttlescope_v1_ProbeToHost_fields, msg) ? TS_OK : TS_ERR_DECODE;
}

int ts_proto_decode_host_msg(const uint8_t *payload, size_t len,
                             throttlescope_v1_HostToProbe *msg)
{
    pb_istream_t is = pb_istream_from_buffer(payload, len);
    *msg = (throttlescope_v1_HostToProbe)throttlescope_v1_HostToProbe_init_zero;
    return pb_decode(&is, throttlescope_v1_HostToProbe_fields, msg) ? TS_OK : TS_ERR_DECODE;
}

bool ts_proto_put_zigzag(uint8_t *buf, size_t cap, size_t *pos, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = (uint8_t)(z & 0x7Fu);
        z >>= 7;
        tmp[n++] = (uint8_t)(byte | (z != 0u ? 0x80u : 0u));
    } while (z != 0u);
    if (*pos + n > cap) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        buf[*pos + i] = tmp[i];
    }
    *pos += n;
    return true;
}

static bool get_zigzag(const uint8_t *buf, size_t len, size_t *pos, int64_t *v)
{
    uint64_t z = 0;
    for (unsigned shift = 0; shift < 64u; shift += 7u) {
        if (*pos >= len) {
            return false;
        }
        uint8_t byte = buf[(*pos)++];
        z |= (uint64_t)(byte & 0x7Fu) << shift;
        if (!(byte & 0x80u)) {
            *v = (int64_t)(z >> 1) ^ -(int64_t)(z & 1u);
            return true;
        }
    }
    return false;
}

int ts_proto_unpack_batch(const throttlescope_v1_SampleBatch *b, ts_unpacked_batch *out)
{
    if (b->count > TS_MAX_BATCH_SAMPLES) {
        return TS_ERR_DECODE;
    }
    out->count = b->count;
    int64_t prev[TS_PACKED_CHANNELS] = {0, 0, 0, 0};
    uint64_t t = b->first_time_us;
    size_t pos = 0;
    for (uint32_t i = 0; i < b->count; i++) {
        int64_t dev = 0;
        if (!get_zigzag(b->packed.bytes, b->packed.size, &pos, &dev)) {
            return TS_ERR_DECODE;
        }
        if (i > 0u) {
            t += (uint64_t)b->period_us + (uint64_t)dev; /* unsigned: wraps, never UB */
        }
        out->time_us[i] = t;
        for (unsigned c = 0; c < TS_PACKED_CHANNELS; c++) {
            out->value[c][i] = 0;
            if (!(b->channels & (1u << c))) {
                continue;
            }
            int64_t d = 0;
            if (!get_zigzag(b->packed.bytes, b->packed.size, &pos, &d)) {
                return TS_ERR_DECODE;
            }
            prev[c] = (int64_t)((uint64_t)prev[c] + (uint64_t)d);
            out->value[c][i] = prev[c];
        }
    }
    return pos == b->packed.size ? TS_OK : TS_ERR_DECODE;
}
