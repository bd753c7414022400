/* Protocol messages (nanopb structs generated from throttlescope.proto) to
 * and from frames. Used by the probe and, for the other direction, by the
 * host-side tests, the simulator's test client and the benchmark. */
#ifndef THROTTLESCOPE_PROTOCOL_H
#define THROTTLESCOPE_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "throttlescope.pb.h"
#include "throttlescope/frame.h"
#include "throttlescope/status.h"

/** Protocol version in DeviceInfo.protocol_version. */
#define TS_PROTOCOL_VERSION 1u
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
