/* COBS, CRC-32C, frames and the deframer. */
#include "harness.h"

#include "throttlescope/cobs.h"
#include "throttlescope/crc32c.h"
#include "throttlescope/frame.h"

static void roundtrip(const uint8_t *in, size_t len)
{
    uint8_t enc[1200];
    uint8_t dec[1200];
    size_t enc_len = 0, dec_len = 0;
    CHECK_EQ_I(ts_cobs_encode(in, len, enc, sizeof enc, &enc_len), TS_OK);
    CHECK(enc_len <= TS_COBS_MAX_ENCODED(len));
    for (size_t i = 0; i < enc_len; i++) {
        CHECK(enc[i] != 0u);
    }
    CHECK_EQ_I(ts_cobs_decode(enc, enc_len, dec, sizeof dec, &dec_len), TS_OK);
    CHECK_EQ_U(dec_len, len);
    CHECK(len == 0 || memcmp(in, dec, len) == 0);
}

TS_CASE(cobs_empty_input_encodes_to_one_code_byte)
{
    uint8_t enc[4];
    size_t n = 0;
    CHECK_EQ_I(ts_cobs_encode(NULL, 0, enc, sizeof enc, &n), TS_OK);
    CHECK_EQ_U(n, 1u);
    CHECK_EQ_U(enc[0], 0x01u);
    roundtrip(NULL, 0);
}

TS_CASE(cobs_known_vectors)
{
    /* Cheshire & Baker's examples. */
    const uint8_t z1[] = {0x00};
    const uint8_t z2[] = {0x00, 0x00};
    const uint8_t mix[] = {0x11, 0x22, 0x00, 0x33};
    const uint8_t e_z1[] = {0x01, 0x01};
    const uint8_t e_z2[] = {0x01, 0x01, 0x01};
    const uint8_t e_mix[] = {0x03, 0x11, 0x22, 0x02, 0x33};
    uint8_t enc[16];
    size_t n = 0;
    CHECK_EQ_I(ts_cobs_encode(z1, sizeof z1, enc, sizeof enc, &n), TS_OK);
    CHECK(n == sizeof e_z1 && memcmp(enc, e_z1, n) == 0);
    CHECK_EQ_I(ts_cobs_encode(z2, sizeof z2, enc, sizeof enc, &n), TS_OK);
    CHECK(n == sizeof e_z2 && memcmp(enc, e_z2, n) == 0);
    CHECK_EQ_I(ts_cobs_encode(mix, sizeof mix, enc, sizeof enc, &n), TS_OK);
    CHECK(n == sizeof e_mix && memcmp(enc, e_mix, n) == 0);
}

TS_CASE(cobs_254_byte_run_takes_one_block_without_trailer)
{
    uint8_t in[254];
    for (size_t i = 0; i < sizeof in; i++) {
        in[i] = (uint8_t)(i + 1u);
    }
    uint8_t enc[300];
    size_t n = 0;
    CHECK_EQ_I(ts_cobs_encode(in, sizeof in, enc, sizeof enc, &n), TS_OK);
    CHECK_EQ_U(n, 255u);
    CHECK_EQ_U(enc[0], 0xFFu);
    roundtrip(in, sizeof in);
}

TS_CASE(cobs_255_byte_run_splits_into_two_blocks)
{
    uint8_t in[255];
    for (size_t i = 0; i < sizeof in; i++) {
        in[i] = (uint8_t)((i % 255u) + 1u);
    }
    uint8_t enc[300];
    size_t n = 0;
    CHECK_EQ_I(ts_cobs_encode(in, sizeof in, enc, sizeof enc, &n), TS_OK);
    CHECK_EQ_U(n, 257u);
    CHECK_EQ_U(enc[0], 0xFFu);
    CHECK_EQ_U(enc[255], 0x02u);
    roundtrip(in, sizeof in);
}

TS_CASE(cobs_zeros_and_mixed_runs_round_trip)
{
    uint8_t buf[1000];
    memset(buf, 0, sizeof buf);
    roundtrip(buf, sizeof buf); /* all zeros */
    for (size_t i = 0; i < sizeof buf; i++) {
        buf[i] = (uint8_t)((i * 7u) % 251u); /* zeros every 251 bytes */
    }
    roundtrip(buf, sizeof buf);
    buf[253] = 0;
    buf[508] = 0;
    roundtrip(buf, 509);
    roundtrip(buf, 254);
    roundtrip(buf, 253);
    uint32_t x = 12345u;
    for (size_t len = 0; len < 600; len += 7) {
        for (size_t i = 0; i < len; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (uint8_t)((x >> 16) % 4u == 0u ? 0u : (x >> 8));
        }
        roundtrip(buf, len);
    }
}

TS_CASE(cobs_encode_reports_a_too_small_buffer)
{
    uint8_t in[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    uint8_t enc[10];
    size_t n = 0;
    CHECK_EQ_I(ts_cobs_encode(in, sizeof in, enc, sizeof enc, &n), TS_ERR_NO_SPACE);
    CHECK_EQ_I(ts_cobs_encode(in, sizeof in, enc, 0, &n), TS_ERR_NO_SPACE);
}

TS_CASE(cobs_decode_rejects_malformed_input)
{
    uint8_t out[16];
    size_t n = 0;
    const uint8_t zero_code[] = {0x00, 0x11};
    const uint8_t short_block[] = {0x05, 0x11, 0x22};
    const uint8_t inner_zero[] = {0x03, 0x11, 0x00};
    CHECK_EQ_I(ts_cobs_decode(zero_code, sizeof zero_code, out, sizeof out, &n), TS_ERR_FRAME);
    CHECK_EQ_I(ts_cobs_decode(short_block, sizeof short_block, out, sizeof out, &n), TS_ERR_FRAME);
    CHECK_EQ_I(ts_cobs_decode(inner_zero, sizeof inner_zero, out, sizeof out, &n), TS_ERR_FRAME);
    const uint8_t ok[] = {0x03, 0x11, 0x22, 0x02, 0x33};
    CHECK_EQ_I(ts_cobs_decode(ok, sizeof ok, out, 3, &n), TS_ERR_NO_SPACE);
}

TS_CASE(crc32c_check_value_123456789)
{
    CHECK_EQ_U(ts_crc32c("123456789", 9), 0xE3069283u);
}

TS_CASE(crc32c_known_vectors_and_chunking)
{
    /* RFC 3720 (iSCSI) B.4 test patterns. */
    uint8_t buf[32];
    memset(buf, 0, sizeof buf);
    CHECK_EQ_U(ts_crc32c(buf, 32), 0x8A9136AAu);
    memset(buf, 0xFF, sizeof buf);
    CHECK_EQ_U(ts_crc32c(buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++) {
        buf[i] = (uint8_t)i;
    }
    CHECK_EQ_U(ts_crc32c(buf, 32), 0x46DD794Eu);
    CHECK_EQ_U(ts_crc32c(NULL, 0), 0u);
    uint32_t c = ts_crc32c_update(0u, "1234", 4);
    c = ts_crc32c_update(c, "56789", 5);
    CHECK_EQ_U(c, 0xE3069283u);
}

TS_CASE(frame_round_trip_and_layout)
{
    const uint8_t payload[] = {0x08, 0x01, 0x00, 0x42};
    uint8_t frame[64];
    size_t n = 0;
    CHECK_EQ_I(ts_frame_encode(payload, sizeof payload, frame, sizeof frame, &n), TS_OK);
    CHECK_EQ_U(frame[n - 1], 0x00u);
    for (size_t i = 0; i + 1 < n; i++) {
        CHECK(frame[i] != 0u);
    }
    /* Un-COBS by hand: payload then CRC little-endian. */
    uint8_t raw[64];
    size_t raw_len = 0;
    CHECK_EQ_I(ts_cobs_decode(frame, n - 1, raw, sizeof raw, &raw_len), TS_OK);
    CHECK_EQ_U(raw_len, sizeof payload + 4u);
    uint32_t crc = ts_crc32c(payload, sizeof payload);
    CHECK_EQ_U(raw[4], crc & 0xFFu);
    CHECK_EQ_U(raw[7], crc >> 24);
    uint8_t out[64];
    size_t out_len = 0;
    CHECK_EQ_I(ts_frame_decode(frame, n - 1, out, sizeof out, &out_len), TS_OK);
    CHECK(out_len == sizeof payload && memcmp(out, payload, out_len) == 0);
}

TS_CASE(frame_decode_rejects_a_flipped_bit_and_short_bodies)
{
    const uint8_t payload[] = {1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t frame[64];
    size_t n = 0;
    CHECK_EQ_I(ts_frame_encode(payload, sizeof payload, frame, sizeof frame, &n), TS_OK);
    uint8_t out[64];
    size_t out_len = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        uint8_t save = frame[i];
        frame[i] ^= 0x10u;
        if (frame[i] != 0u) {
            CHECK_EQ_I(ts_frame_decode(frame, n - 1, out, sizeof out, &out_len), TS_ERR_FRAME);
        }
        frame[i] = save;
    }
    const uint8_t tiny[] = {0x03, 0x11, 0x22}; /* 2 bytes: no room for a CRC */
    CHECK_EQ_I(ts_frame_decode(tiny, sizeof tiny, out, sizeof out, &out_len), TS_ERR_FRAME);
    CHECK_EQ_I(ts_frame_decode(frame, n - 1, out, 4, &out_len), TS_ERR_FRAME);
}

TS_CASE(frame_of_empty_payload_is_crc_only)
{
    uint8_t frame[16];
    size_t n = 0;
    CHECK_EQ_I(ts_frame_encode(NULL, 0, frame, sizeof frame, &n), TS_OK);
    uint8_t out[16];
    size_t out_len = 99;
    CHECK_EQ_I(ts_frame_decode(frame, n - 1, out, sizeof out, &out_len), TS_OK);
    CHECK_EQ_U(out_len, 0u);
}

TS_CASE(deframer_splits_a_stream_and_skips_overlong_frames)
{
    uint8_t buf[16];
    ts_deframer d;
    ts_deframer_init(&d, buf, sizeof buf);
    const uint8_t stream[] = {0x00, 0x00, 0x02, 0x41, 0x00, /* empty frames ignored */
                              1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                              0x00, 0x03, 0x42, 0x43, 0x00};
    const uint8_t *body = NULL;
    size_t len = 0;
    int frames = 0;
    for (size_t i = 0; i < sizeof stream; i++) {
        if (ts_deframer_push(&d, stream[i], &body, &len)) {
            frames++;
            if (frames == 1) {
                CHECK(len == 2 && body[0] == 0x02 && body[1] == 0x41);
            } else {
                CHECK(len == 3 && body[0] == 0x03 && body[2] == 0x43);
            }
        }
    }
    CHECK_EQ_I(frames, 2);
    CHECK_EQ_U(d.overflows, 1u);
}

static const ts_test_case cases[] = {
    TS_ENTRY(cobs_empty_input_encodes_to_one_code_byte),
    TS_ENTRY(cobs_known_vectors),
    TS_ENTRY(cobs_254_byte_run_takes_one_block_without_trailer),
    TS_ENTRY(cobs_255_byte_run_splits_into_two_blocks),
    TS_ENTRY(cobs_zeros_and_mixed_runs_round_trip),
    TS_ENTRY(cobs_encode_reports_a_too_small_buffer),
    TS_ENTRY(cobs_decode_rejects_malformed_input),
    TS_ENTRY(crc32c_check_value_123456789),
    TS_ENTRY(crc32c_known_vectors_and_chunking),
    TS_ENTRY(frame_round_trip_and_layout),
    TS_ENTRY(frame_decode_rejects_a_flipped_bit_and_short_bodies),
    TS_ENTRY(frame_of_empty_payload_is_crc_only),
    TS_ENTRY(deframer_splits_a_stream_and_skips_overlong_frames),
};
TS_TEST_MAIN(cases)
