/* The tiny register bus the INA228 driver talks through. The Zephyr app
 * implements it with i2c_write_read(); the simulator with a register file. */
#ifndef THROTTLESCOPE_BUS_H
#define THROTTLESCOPE_BUS_H

#include <stddef.h>
#include <stdint.h>

/**
 * Register access of one device. Register contents travel most significant
 * byte first, exactly as on the I2C wire (INA228 registers are 2, 3 or 5
 * bytes wide). Both functions return 0 on success, nonzero on a bus error.
 */
typedef struct ts_bus {
    /** Read len bytes starting at register reg into buf. */
    int (*read)(void *ctx, uint8_t reg, uint8_t *buf, size_t len);
    /** Write len bytes from buf to register reg. */
    int (*write)(void *ctx, uint8_t reg, const uint8_t *buf, size_t len);
    /** Passed back to read/write (e.g. the I2C device spec). */
    void *ctx;
} ts_bus;

#endif
