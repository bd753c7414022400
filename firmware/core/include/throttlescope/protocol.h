/* Protocol messages (nanopb structs generated from throttlescope.proto) to
 * and from frames. Used by the probe and, for the other direction, by the
 * host-side tests, the simulator's test client and the benchmark. */
#ifndef THROTTLESCOPE_PROTOCOL_H
#define THROTTLESCOPE_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "throttlescope.pb.h"
#include "throttlescope/frame.h"
#include "throttlescope/status.h"

/** Protocol version in DeviceInfo.protocol_version. */
#define TS_PROTOCOL_VERSION 3u
/** Largest probe->host frame, delimiter included. */
#define TS_PROBE_FRAME_MAX TS_FRAME_MAX(throttlescope_v1_ProbeToHost_size)
/** Largest host->probe frame, delimiter included. */
#define TS_HOST_FRAME_MAX TS_FRAME_MAX(throttlescope_v1_HostToProbe_size)
/** Samples per SampleBatch at most (nanopb max_count). */
#define TS_MAX_BATCH_SAMPLES 64u
/** ENERGY/CHARGE readings per batch at most. */
#define TS_MAX_BATCH_ACCUMULATORS 8u
/** Enclosure temperature readings per batch at most. */
#define TS_MAX_BATCH_TEMPS 8u

/** Bytes of SampleBatch.packed at most (64 samples x (5 + 3 x 3 + 4) bytes). */
#define TS_MAX_PACKED_BYTES 1152u
/** Fast channels in SampleBatch.packed order (lowest Channel bit first). */
#define TS_PACKED_CHANNELS 4u

/**
 * Append v as a zig-zag varint at buf[*pos]; false (nothing written) when it
 * does not fit cap.
 */
bool ts_proto_put_zigzag(uint8_t *buf, size_t cap, size_t *pos, int64_t v);

/** A v2 SampleBatch.packed unpacked (host side: tests, simulator client). */
typedef struct ts_unpacked_batch {
    uint32_t count;
    uint64_t time_us[TS_MAX_BATCH_SAMPLES];
    /** Raw values per channel in Channel bit order (VBUS, VSHUNT, CURRENT, POWER). */
    int64_t value[TS_PACKED_CHANNELS][TS_MAX_BATCH_SAMPLES];
} ts_unpacked_batch;

/** Unpack SampleBatch.packed; TS_ERR_DECODE when it is malformed or too long. */
int ts_proto_unpack_batch(const throttlescope_v1_SampleBatch *b, ts_unpacked_batch *out);

/** Encode a probe->host message as a complete frame. */
int ts_proto_frame_probe_msg(const throttlescope_v1_ProbeToHost *msg, uint8_t *out,
                             size_t cap, size_t *len);
/** Encode a host->probe message as a complete frame. */
int ts_proto_frame_host_msg(const throttlescope_v1_HostToProbe *msg, uint8_t *out,
                            size_t cap, size_t *len);
/** Decode a probe->host payload (a frame already unwrapped by ts_frame_decode). */
int ts_proto_decode_probe_msg(const uint8_t *payload, size_t len,
                              throttlescope_v1_ProbeToHost *msg);
/** Decode a host->probe payload. */
int ts_proto_decode_host_msg(const uint8_t *payload, size_t len,
                             throttlescope_v1_HostToProbe *msg);

#endif
