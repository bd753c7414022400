/* Consistent Overhead Byte Stuffing (Cheshire & Baker 1999), without the
 * trailing delimiter (the framer adds it). */
#ifndef THROTTLESCOPE_COBS_H
#define THROTTLESCOPE_COBS_H

#include <stddef.h>
#include <stdint.h>

#include "throttlescope/status.h"

/** Largest encoding of n bytes: one code byte per started 254-byte block. */
#define TS_COBS_MAX_ENCODED(n) ((n) + (n) / 254u + 1u)

/** Encode; TS_ERR_NO_SPACE when out_cap is too small. */
int ts_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap,
                   size_t *out_len);
/**
 * Decode (in must not contain 0x00); TS_ERR_FRAME on a malformed input,
 * TS_ERR_NO_SPACE when out_cap is too small. in and out may be the same
 * buffer (decoding never grows).
 */
int ts_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap,
                   size_t *out_len);

#endif
