/* Protocol vectors in fixtures/protocol/: regenerating gives identical bytes,
 * every frame decodes back to its JSON, and encode -> decode -> encode is the
 * identity for every message type. */
#include "harness.h"

#include "protocol_vectors.h"

static size_t read_file(const char *name, const char *ext, char *buf, size_t cap)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s%s", TS_FIXTURES_DIR, name, ext);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "missing fixture %s (regenerate: cmake --build build/firmware "
                        "--target protocol-fixtures)\n", path);
        exit(1);
    }
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    CHECK(n < cap);
    return n;
}

static char json_gen[1 << 16], json_file[1 << 16];
static uint8_t frame[TS_PROBE_FRAME_MAX];
static ts_vector v;

TS_CASE(fixtures_match_the_generator_byte_for_byte)
{
    for (size_t i = 0; i < ts_vector_count(); i++) {
        size_t n = 0;
        ts_vector_build(i, &v);
        CHECK_EQ_I(ts_vector_frame(&v, frame, sizeof frame, &n), TS_OK);
        CHECK(ts_vector_json(&v, frame, n, json_gen, sizeof json_gen));
        static char bin[TS_PROBE_FRAME_MAX + 1];
        size_t bn = read_file(v.name, ".bin", bin, sizeof bin);
        size_t jn = read_file(v.name, ".json", json_file, sizeof json_file);
        if (bn != n || memcmp(bin, frame, n) != 0 || jn != strlen(json_gen) ||
            memcmp(json_file, json_gen, jn) != 0) {
            fprintf(stderr, "fixture %s differs from the generator; if the change is "
                            "intended, regenerate and review the diff\n", v.name);
            exit(1);
        }
    }
}

TS_CASE(limits_match_the_schema)
{
    static char gen[256], file[256];
    ts_vector_limits_json(gen, sizeof gen);
    size_t n = read_file("limits", ".json", file, sizeof file);
    CHECK(n == strlen(gen) && memcmp(file, gen, n) == 0);
}

TS_CASE(v2_packed_samples_unpack_to_what_was_packed)
{
    size_t v2 = 0;
    for (size_t i = 0; i < ts_vector_count(); i++) {
        ts_vector_build(i, &v);
        if (!v.has_samples) {
            continue;
        }
        v2++;
        static ts_unpacked_batch u;
        CHECK_EQ_I(ts_proto_unpack_batch(&v.p2h.msg.batch, &u), TS_OK);
        CHECK_EQ_U(u.count, v.samples.count);
        for (uint32_t k = 0; k < u.count; k++) {
            CHECK_EQ_U(u.time_us[k], v.samples.time_us[k]);
            for (unsigned c = 0; c < TS_PACKED_CHANNELS; c++) {
                CHECK_EQ_I(u.value[c][k], v.samples.value[c][k]);
            }
        }
        /* One byte short is malformed, not silently shorter. */
        throttlescope_v1_SampleBatch cut = v.p2h.msg.batch;
        cut.packed.size--;
        CHECK_EQ_I(ts_proto_unpack_batch(&cut, &u), TS_ERR_DECODE);
    }
    CHECK(v2 >= 3u);
}

TS_CASE(index_lists_every_vector_in_order)
{
    size_t n = read_file("index", ".json", json_file, sizeof json_file);
    json_file[n] = '\0';
    const char *at = json_file;
    for (size_t i = 0; i < ts_vector_count(); i++) {
        ts_vector_build(i, &v);
        char quoted[128];
        snprintf(quoted, sizeof quoted, "\"%s\"", v.name);
        const char *hit = strstr(at, quoted);
        CHECK(hit != NULL);
        at = hit + strlen(quoted);
    }
    CHECK(strchr(at, '"') == NULL); /* nothing listed that is not generated */
}

TS_CASE(fixture_frames_decode_back_to_their_json)
{
    for (size_t i = 0; i < ts_vector_count(); i++) {
        ts_vector_build(i, &v);
        static uint8_t bin[TS_PROBE_FRAME_MAX + 1];
        size_t bn = read_file(v.name, ".bin", (char *)bin, sizeof bin);
        CHECK(bn >= 2 && bin[bn - 1] == 0u);
        static uint8_t payload[TS_PROBE_FRAME_MAX];
        size_t pn = 0;
        CHECK_EQ_I(ts_frame_decode(bin, bn - 1, payload, sizeof payload, &pn), TS_OK);
        ts_vector decoded = v;
        if (v.probe_to_host) {
            CHECK_EQ_I(ts_proto_decode_probe_msg(payload, pn, &decoded.p2h), TS_OK);
            if (decoded.has_samples) { /* samples from the decoded bytes, not the source */
                memset(&decoded.samples, 0, sizeof decoded.samples);
                CHECK_EQ_I(ts_proto_unpack_batch(&decoded.p2h.msg.batch, &decoded.samples),
                           TS_OK);
            }
        } else {
            CHECK_EQ_I(ts_proto_decode_host_msg(payload, pn, &decoded.h2p), TS_OK);
        }
        CHECK(ts_vector_json(&decoded, bin, bn - 1u + 1u, json_gen, sizeof json_gen));
        size_t jn = read_file(v.name, ".json", json_file, sizeof json_file);
        if (jn != strlen(json_gen) || memcmp(json_file, json_gen, jn) != 0) {
            fprintf(stderr, "%s: decoded frame does not match its JSON\n", v.name);
            exit(1);
        }
    }
}

TS_CASE(encode_decode_encode_is_the_identity_for_every_message_type)
{
    bool seen_p2h[8] = {false}, seen_h2p[8] = {false};
    for (size_t i = 0; i < ts_vector_count(); i++) {
        size_t n = 0, n2 = 0, pn = 0;
        ts_vector_build(i, &v);
        CHECK_EQ_I(ts_vector_frame(&v, frame, sizeof frame, &n), TS_OK);
        static uint8_t payload[TS_PROBE_FRAME_MAX], again[TS_PROBE_FRAME_MAX];
        CHECK_EQ_I(ts_frame_decode(frame, n - 1, payload, sizeof payload, &pn), TS_OK);
        ts_vector d = v;
        if (v.probe_to_host) {
            CHECK_EQ_I(ts_proto_decode_probe_msg(payload, pn, &d.p2h), TS_OK);
            CHECK_EQ_I(d.p2h.which_msg, v.p2h.which_msg);
            seen_p2h[v.p2h.which_msg] = true;
        } else {
            CHECK_EQ_I(ts_proto_decode_host_msg(payload, pn, &d.h2p), TS_OK);
            CHECK_EQ_I(d.h2p.which_cmd, v.h2p.which_cmd);
            seen_h2p[v.h2p.which_cmd] = true;
        }
        CHECK_EQ_I(ts_vector_frame(&d, again, sizeof again, &n2), TS_OK);
        CHECK(n2 == n && memcmp(again, frame, n) == 0);
    }
    for (int t = 1; t <= 6; t++) { /* info..ack */
        CHECK(seen_p2h[t]);
    }
    for (int t = 2; t <= 7; t++) { /* start..reset_accumulators */
        CHECK(seen_h2p[t]);
    }
}

TS_CASE(largest_batch_fits_the_advertised_frame_bound)
{
    size_t n = 0;
    ts_vector_build(6, &v); /* batch_max */
    CHECK(strcmp(v.name, "batch_max") == 0);
    CHECK_EQ_I(ts_vector_frame(&v, frame, sizeof frame, &n), TS_OK);
    CHECK(n <= TS_PROBE_FRAME_MAX);
    CHECK_EQ_U(v.p2h.msg.batch.dt_us_count, TS_MAX_BATCH_SAMPLES);
}

static const ts_test_case cases[] = {
    TS_ENTRY(fixtures_match_the_generator_byte_for_byte),
    TS_ENTRY(limits_match_the_schema),
    TS_ENTRY(v2_packed_samples_unpack_to_what_was_packed),
    TS_ENTRY(index_lists_every_vector_in_order),
    TS_ENTRY(fixture_frames_decode_back_to_their_json),
    TS_ENTRY(encode_decode_encode_is_the_identity_for_every_message_type),
    TS_ENTRY(largest_batch_fits_the_advertised_frame_bound),
};
TS_TEST_MAIN(cases)
