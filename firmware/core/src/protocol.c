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
