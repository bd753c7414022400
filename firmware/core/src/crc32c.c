/* CRC-32C with a 16-entry (nibble) table: 64 bytes of flash, two lookups per byte. */
#include "throttlescope/crc32c.h"

static const uint32_t crc32c_nibble[16] = {
    0x00000000u, 0x105EC76Fu, 0x20BD8EDEu, 0x30E349B1u, 0x417B1DBCu, 0x5125DAD3u,
    0x61C69362u, 0x7198540Du, 0x82F63B78u, 0x92A8FC17u, 0xA24BB5A6u, 0xB21572C9u,
    0xC38D26C4u, 0xD3D3E1ABu, 0xE330A81Au, 0xF36E6F75u,
};

uint32_t ts_crc32c_update(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ crc32c_nibble[crc & 0x0Fu];
        crc = (crc >> 4) ^ crc32c_nibble[crc & 0x0Fu];
    }
    return ~crc;
}

uint32_t ts_crc32c(const void *data, size_t len)
{
    return ts_crc32c_update(0u, data, len);
}
