/* Framing: payload || CRC-32C (little-endian), COBS, 0x00 delimiter. */
#include "throttlescope/frame.h"

#include <string.h>

#include "throttlescope/crc32c.h"

int ts_frame_encode(const uint8_t *payload, size_t len, uint8_t *out, size_t out_cap,
                    size_t *out_len)
{
    /* Encode payload and CRC as one COBS stream without copying the payload:
     * COBS is a streaming code, so run it over the payload, then the trailer.
     * The simple way that stays correct is to stage both in out's tail. */
    uint32_t crc = ts_crc32c(payload, len);
    size_t raw_len = len + TS_FRAME_CRC_BYTES;
    size_t enc_len = 0;

    if (out_cap < TS_FRAME_MAX(len)) {
        return TS_ERR_NO_SPACE;
    }
    /* Stage raw bytes at the end of out; COBS output never overtakes its input
     * when the input starts at least (max_encoded - raw_len) bytes later. */
    size_t stage = out_cap - raw_len;
    if (len > 0u) {
        memmove(out + stage, payload, len);
    }
    out[stage + len + 0] = (uint8_t)(crc & 0xFFu);
    out[stage + len + 1] = (uint8_t)((crc >> 8) & 0xFFu);
    out[stage + len + 2] = (uint8_t)((crc >> 16) & 0xFFu);
    out[stage + len + 3] = (uint8_t)((crc >> 24) & 0xFFu);
    int rc = ts_cobs_encode(out + stage, raw_len, out, out_cap - 1u, &enc_len);
    if (rc != TS_OK) {
        return rc;
    }
    out[enc_len] = 0u;
    *out_len = enc_len + 1u;
    return TS_OK;
}

int ts_frame_decode(const uint8_t *body, size_t len, uint8_t *payload, size_t payload_cap,
                    size_t *payload_len)
{
    size_t raw_len = 0;
    int rc = ts_cobs_decode(body, len, payload, payload_cap, &raw_len);
    if (rc != TS_OK) {
        return rc == TS_ERR_NO_SPACE ? TS_ERR_FRAME : rc;
    }
    if (raw_len < TS_FRAME_CRC_BYTES) {
        return TS_ERR_FRAME;
    }
    size_t n = raw_len - TS_FRAME_CRC_BYTES;
    uint32_t want = (uint32_t)payload[n] | ((uint32_t)payload[n + 1] << 8) |
                    ((uint32_t)payload[n + 2] << 16) | ((uint32_t)payload[n + 3] << 24);
    if (ts_crc32c(payload, n) != want) {
        return TS_ERR_FRAME;
    }
    *payload_len = n;
    return TS_OK;
}

void ts_deframer_init(ts_deframer *d, uint8_t *buf, size_t cap)
{
    d->buf = buf;
    d->cap = cap;
    d->len = 0;
    d->overflowed = false;
    d->overflows = 0;
}

bool ts_deframer_push(ts_deframer *d, uint8_t byte, const uint8_t **body, size_t *len)
{
    if (byte == 0u) {
        bool complete = !d->overflowed && d->len > 0u;
        size_t n = d->len;
        d->len = 0;
        d->overflowed = false;
        if (complete) {
            *body = d->buf;
            *len = n;
        }
        return complete;
    }
    if (d->overflowed) {
        return false;
    }
    if (d->len >= d->cap) {
        d->overflowed = true;
        d->overflows++;
        return false;
    }
    d->buf[d->len++] = byte;
    return false;
}
