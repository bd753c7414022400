/* Frames on the link: COBS(payload || CRC-32C(payload) little-endian) || 0x00. */
#ifndef THROTTLESCOPE_FRAME_H
#define THROTTLESCOPE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttlescope/cobs.h"
#include "throttlescope/status.h"

/** Bytes of the CRC trailer inside a frame. */
#define TS_FRAME_CRC_BYTES 4u
/** Largest frame (delimiter included) for a payload of n bytes. */
#define TS_FRAME_MAX(n) (TS_COBS_MAX_ENCODED((n) + TS_FRAME_CRC_BYTES) + 1u)

/** Build a frame, trailing 0x00 included. */
int ts_frame_encode(const uint8_t *payload, size_t len, uint8_t *out, size_t out_cap,
                    size_t *out_len);
/**
 * Check and unwrap one frame body (the bytes between delimiters, without
 * the 0x00): COBS-decode into payload, verify and strip the CRC. TS_ERR_FRAME
 * on a COBS or CRC failure or a body too short for a CRC.
 */
int ts_frame_decode(const uint8_t *body, size_t len, uint8_t *payload, size_t payload_cap,
                    size_t *payload_len);

/** Splits a byte stream into frame bodies; a fixed buffer, no allocation. */
typedef struct ts_deframer {
    uint8_t *buf;
    size_t cap;
    size_t len;
    bool overflowed;        /**< current frame outgrew buf; skip to next 0x00 */
    uint32_t overflows;     /**< frames discarded for length */
} ts_deframer;

/** buf must hold the largest frame body expected. */
void ts_deframer_init(ts_deframer *d, uint8_t *buf, size_t cap);
/**
 * Feed one byte. Returns true when it completed a frame body (the 0x00
 * delimiter arrived after at least one byte): *body and *len then point into
 * the deframer's buffer until the next call. Empty frames are ignored.
 */
bool ts_deframer_push(ts_deframer *d, uint8_t byte, const uint8_t **body, size_t *len);

#endif
