/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, init and final xor
 * 0xFFFFFFFF): "123456789" -> 0xE3069283. */
#ifndef THROTTLESCOPE_CRC32C_H
#define THROTTLESCOPE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/** CRC-32C of a buffer. */
uint32_t ts_crc32c(const void *data, size_t len);
/** Continue a CRC: start with crc = 0, feed chunks, the result is final. */
uint32_t ts_crc32c_update(uint32_t crc, const void *data, size_t len);

#endif
