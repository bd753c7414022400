/* Protocol test vectors (fixtures/protocol/): the messages, their frames and
 * a canonical JSON rendering of each decoded message. Shared by the
 * generator (gen_protocol_fixtures) and the check (test_fixtures). */
#ifndef THROTTLESCOPE_TEST_PROTOCOL_VECTORS_H
#define THROTTLESCOPE_TEST_PROTOCOL_VECTORS_H

#include <stdbool.h>
#include <stddef.h>

#include "throttlescope/protocol.h"

typedef struct ts_vector {
    const char *name;
    const char *description;
    bool probe_to_host;
    throttlescope_v1_ProbeToHost p2h;
    throttlescope_v1_HostToProbe h2p;
    /** v2 batches: what SampleBatch.packed holds, sample by sample. */
    bool has_samples;
    ts_unpacked_batch samples;
} ts_vector;

/** Number of vectors. */
size_t ts_vector_count(void);
/** Build vector i (deterministic). */
void ts_vector_build(size_t i, ts_vector *v);
/** Frame bytes of a vector. */
int ts_vector_frame(const ts_vector *v, uint8_t *out, size_t cap, size_t *len);
/**
 * The vector's JSON document (name, direction, description, frame_hex,
 * message, and for v2 batches `samples`: packed decoded) into out; false
 * when cap is too small.
 */
bool ts_vector_json(const ts_vector *v, const uint8_t *frame, size_t frame_len, char *out,
                    size_t cap);
/**
 * limits.json: the schema's largest ProbeToHost and HostToProbe payloads
 * (nanopb's *_size), the bound a host's frame decoder must accept.
 */
void ts_vector_limits_json(char *out, size_t cap);

#endif
