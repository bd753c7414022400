/* COBS encoder/decoder over caller buffers. */
#include "throttlescope/cobs.h"

int ts_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap,
                   size_t *out_len)
{
    size_t code_at = 0;   /* where the current block's code byte goes */
    size_t o = 1;         /* next output position */
    uint8_t code = 1;     /* 1 + data bytes in the current block */

    if (out_cap < 1u) {
        return TS_ERR_NO_SPACE;
    }
    for (size_t i = 0; i < len; i++) {
        if (in[i] != 0u) {
            if (o >= out_cap) {
                return TS_ERR_NO_SPACE;
            }
            out[o++] = in[i];
            code++;
        }
        if (in[i] == 0u || code == 0xFFu) {
            out[code_at] = code;
            code = 1;
            code_at = o;
            /* A full 254-byte block at the very end needs no new block. */
            if (in[i] == 0u || i + 1u < len) {
                if (o >= out_cap) {
                    return TS_ERR_NO_SPACE;
                }
                o++;
            }
        }
    }
    if (code_at < o) {
        out[code_at] = code;
    }
    *out_len = o;
    return TS_OK;
}

int ts_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap,
                   size_t *out_len)
{
    size_t i = 0;
    size_t o = 0;

    while (i < len) {
        uint8_t code = in[i++];
        if (code == 0u) {
            return TS_ERR_FRAME;
        }
        for (uint8_t k = 1; k < code; k++) {
            if (i >= len || in[i] == 0u) {
                return TS_ERR_FRAME;
            }
            if (o >= out_cap) {
                return TS_ERR_NO_SPACE;
            }
            out[o++] = in[i++];
        }
        if (code != 0xFFu && i < len) {
            if (o >= out_cap) {
                return TS_ERR_NO_SPACE;
            }
            out[o++] = 0u;
        }
    }
    *out_len = o;
    return TS_OK;
}
