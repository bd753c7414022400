/* Result codes shared by every throttlescope core module. */
#ifndef THROTTLESCOPE_STATUS_H
#define THROTTLESCOPE_STATUS_H

/** Return value of core functions: 0 on success, a negative ts_err otherwise. */
typedef enum ts_err {
    TS_OK = 0,
    TS_ERR_BUS = -1,       /**< the bus transfer failed */
    TS_ERR_IDENTITY = -2,  /**< the chip is not an INA228 */
    TS_ERR_RANGE = -3,     /**< an argument is out of range */
    TS_ERR_NO_SPACE = -4,  /**< an output buffer is too small */
    TS_ERR_FRAME = -5,     /**< COBS or CRC failure */
    TS_ERR_DECODE = -6,    /**< protobuf encode/decode failure */
    TS_ERR_BUSY = -7       /**< the link refused the frame for now */
} ts_err;

#endif
