/* USB Power Delivery decoder: the edges of one CC line in, PD messages and the
 * power contract out.
 *
 * The probe taps CC without a PD PHY (docs/hardware.md): a PIO state machine
 * timestamps every transition of the line, and this module does the rest in
 * software, following the USB PD specification's physical and protocol
 * layers:
 *
 *   BMC      an interval longer than 2.5 us is a whole bit (a 0), two shorter
 *            ones are a 1; nominal 300 kbit/s (half bit 1.67 us), the spec's
 *            270..330 kbit/s and the duty distortion of a threshold tap fit
 *            (half bits up to 1.85 us, whole bits from 3.03 us). An interval
 *            over 5 us ends a burst (the inter-frame gap is >= 25 us).
 *   framing  the first ordered set of a burst: SOP, SOP', SOP'', SOP'_Debug,
 *            SOP''_Debug, Hard Reset, Cable Reset, each recognised with three
 *            of its four K-codes right (as the spec allows); the bits before
 *            it are the preamble. Then 4b5b symbols: the header, its data
 *            objects, the CRC-32 and EOP.
 *   check    CRC-32 (IEEE, as Ethernet) over the header and data objects.
 *
 * A Hard Reset is also recognised inside a message or its tail (all four
 * K-codes right there), since a PHY may abort a message to send one; it is
 * then stamped with the edge that ends it. The
 * preamble's length is reported, not required: a real capture holds a message
 * whose preamble a gap cut off. Unchunked extended messages longer than seven
 * data objects are not decoded (they fail the CRC).
 *
 * Each message carries the time of its burst's first edge (the start of the
 * preamble) on the caller's clock. A small queue (or a callback) hands
 * messages on; nothing is allocated, every drop and error is counted.
 *
 * The contract: Source_Capabilities (from the source), then Request or
 * EPR_Request (from the sink), Accept, and PS_RDY (from the source) make the
 * requested PDO and RDO the explicit contract (V, A, W), as the sink's policy
 * engine enters PE_SNK_Ready. Hard Reset, an accepted PR_Swap, and a
 * Soft_Reset end it: after a Soft_Reset both policy engines wait for new
 * capabilities, so no explicit contract is in force until the next PS_RDY,
 * though the supply keeps its output (USB PD R3.x 6.8.1, 7.1.1: a Soft Reset
 * has no impact on power supply operation); `end` says which. Reject and Wait
 * keep the contract there was. Only SOP messages with a good CRC count.
 *
 * Portable C99, no allocation, no platform headers; one context owns a
 * decoder (feed it from the thread that drains the PIO FIFO, not an ISR that
 * may preempt a reader of the queue). */
#ifndef THROTTLESCOPE_PD_DECODE_H
#define THROTTLESCOPE_PD_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#ifndef TS_PD_QUEUE_LEN
/** Messages the queue holds (power of two); a message arriving when full is dropped, counted. */
#define TS_PD_QUEUE_LEN 8u
#endif
#if TS_PD_QUEUE_LEN == 0 || (TS_PD_QUEUE_LEN & (TS_PD_QUEUE_LEN - 1)) != 0
#error "TS_PD_QUEUE_LEN must be a power of two"
#endif
/** Data objects a PD message carries at most (3 bits in the header). */
#define TS_PD_MAX_OBJECTS 7u
/** Default BMC timing (ns): above the threshold an interval is a whole bit; above idle, a gap. */
#define TS_PD_DEFAULT_ZERO_NS 2500u
#define TS_PD_DEFAULT_IDLE_NS 5000u
/** A burst of this many bits or more with no ordered set is noise (counted); shorter ones are
 *  the line's level changes (counted apart). A 64-bit preamble alone is longer. */
#define TS_PD_NOISE_MIN_BITS 49u

/** The ordered set that starts a burst (wire order of the spec's table). */
typedef enum ts_pd_sop {
    TS_PD_SOP = 0,          /**< to/from the port partner */
    TS_PD_SOP_P = 1,        /**< SOP': the cable's near plug */
    TS_PD_SOP_PP = 2,       /**< SOP'': the cable's far plug */
    TS_PD_SOP_P_DEBUG = 3,  /**< SOP'_Debug */
    TS_PD_SOP_PP_DEBUG = 4, /**< SOP''_Debug */
    TS_PD_CABLE_RESET = 5,  /**< an ordered set alone: no header, no CRC */
    TS_PD_HARD_RESET = 6,   /**< an ordered set alone: ends the contract */
} ts_pd_sop;

/** ts_pd_msg.flags */
#define TS_PD_F_CRC_OK 0x01u    /**< whole, and the CRC matched */
#define TS_PD_F_EOP 0x02u       /**< EOP followed the CRC */
#define TS_PD_F_TRUNCATED 0x04u /**< the burst ended before the CRC's last symbol */
#define TS_PD_F_ABORTED 0x08u   /**< an edge was missing (two edges to the same level), or a
                                     Hard Reset interrupted the message */

/** One decoded message, or a Hard/Cable Reset. */
typedef struct ts_pd_msg {
    uint64_t t;            /**< first edge of the burst (start of the preamble), caller's ticks;
                                a Hard Reset inside a burst: the edge that ends it */
    uint32_t obj[TS_PD_MAX_OBJECTS]; /**< data objects, as received */
    uint32_t crc;          /**< CRC-32 as received */
    uint16_t header;       /**< message header, as received (0 for an ordered set alone) */
    uint16_t preamble_bits;/**< bits before the ordered set */
    uint8_t sop;           /**< ts_pd_sop */
    uint8_t ndo;           /**< data objects received (header's count, or fewer if truncated) */
    uint8_t flags;         /**< TS_PD_F_* */
    uint8_t bad_symbols;   /**< 5-bit codes that are no data symbol, where data belongs */
} ts_pd_msg;

/** Header fields (USB PD 3.x, Table 6-1). */
typedef struct ts_pd_header {
    uint8_t type;       /**< message type, 5 bits */
    uint8_t ndo;        /**< number of data objects */
    uint8_t id;         /**< MessageID, 3 bits */
    uint8_t spec_rev;   /**< 0: 1.0, 1: 2.0, 2: 3.x */
    bool extended;      /**< an extended message */
    bool power_role;    /**< SOP: 1 = source; SOP'/SOP'': 1 = from a cable plug */
    bool data_role;     /**< SOP: 1 = DFP (reserved in SOP'/SOP'') */
} ts_pd_header;

/** What a message is: control (0x00 | type), data (0x20 | type), extended (0x40 | type). */
typedef enum ts_pd_kind {
    TS_PD_K_GOODCRC = 0x01,
    TS_PD_K_GOTOMIN = 0x02,
    TS_PD_K_ACCEPT = 0x03,
    TS_PD_K_REJECT = 0x04,
    TS_PD_K_PING = 0x05,
    TS_PD_K_PS_RDY = 0x06,
    TS_PD_K_GET_SOURCE_CAP = 0x07,
    TS_PD_K_GET_SINK_CAP = 0x08,
    TS_PD_K_DR_SWAP = 0x09,
    TS_PD_K_PR_SWAP = 0x0A,
    TS_PD_K_VCONN_SWAP = 0x0B,
    TS_PD_K_WAIT = 0x0C,
    TS_PD_K_SOFT_RESET = 0x0D,
    TS_PD_K_DATA_RESET = 0x0E,
    TS_PD_K_DATA_RESET_COMPLETE = 0x0F,
    TS_PD_K_NOT_SUPPORTED = 0x10,
    TS_PD_K_GET_SOURCE_CAP_EXTENDED = 0x11,
    TS_PD_K_GET_STATUS = 0x12,
    TS_PD_K_FR_SWAP = 0x13,
    TS_PD_K_GET_PPS_STATUS = 0x14,
    TS_PD_K_GET_COUNTRY_CODES = 0x15,
    TS_PD_K_GET_SINK_CAP_EXTENDED = 0x16,
    TS_PD_K_GET_SOURCE_INFO = 0x17,
    TS_PD_K_GET_REVISION = 0x18,
    TS_PD_K_SOURCE_CAPABILITIES = 0x21,
    TS_PD_K_REQUEST = 0x22,
    TS_PD_K_BIST = 0x23,
    TS_PD_K_SINK_CAPABILITIES = 0x24,
    TS_PD_K_BATTERY_STATUS = 0x25,
    TS_PD_K_ALERT = 0x26,
    TS_PD_K_GET_COUNTRY_INFO = 0x27,
    TS_PD_K_ENTER_USB = 0x28,      /**< USB4 entry (PD 3.x) */
    TS_PD_K_EPR_REQUEST = 0x29,
    TS_PD_K_EPR_MODE = 0x2A,
    TS_PD_K_SOURCE_INFO = 0x2B,
    TS_PD_K_REVISION = 0x2C,
    TS_PD_K_VENDOR_DEFINED = 0x2F, /**< VDM: see ts_pd_parse_vdm */
    TS_PD_K_EXTENDED = 0x40,       /**< | extended message type */
    TS_PD_K_CABLE_RESET = 0x60,
    TS_PD_K_HARD_RESET = 0x61,
} ts_pd_kind;

/** Power supply kind of a PDO (and of the contract made from it). */
typedef enum ts_pd_supply {
    TS_PD_FIXED = 0,
    TS_PD_BATTERY = 1,
    TS_PD_VARIABLE = 2,
    TS_PD_PPS = 3,      /**< SPR Programmable Power Supply APDO */
    TS_PD_EPR_AVS = 4,  /**< EPR Adjustable Voltage Supply APDO */
    TS_PD_SPR_AVS = 5,  /**< SPR Adjustable Voltage Supply APDO (PD 3.2) */
    TS_PD_APDO_RESERVED = 6,
} ts_pd_supply;

/** A Power Data Object in physical units (0 where the kind has no such field). */
typedef struct ts_pd_pdo {
    ts_pd_supply kind;
    uint32_t mv_min, mv_max; /**< equal for Fixed */
    uint32_t ma_max;         /**< Fixed, Variable, PPS; SPR AVS: in its 9..15 V range */
    uint32_t mw_max;         /**< Battery; EPR AVS (its PDP) */
    uint32_t raw;
} ts_pd_pdo;

/** A Request Data Object, read against the kind of PDO it asks for. */
typedef struct ts_pd_rdo {
    uint8_t position;        /**< object position, 1-based */
    bool give_back, capability_mismatch, usb_comm, no_suspend, unchunked, epr_capable;
    uint32_t op_ma, max_ma;  /**< Fixed/Variable; PPS/AVS: operating current in op_ma */
    uint32_t op_mw, max_mw;  /**< Battery */
    uint32_t out_mv;         /**< PPS/AVS: the requested output voltage */
} ts_pd_rdo;

/** Structured VDM header (word 0 of a Vendor_Defined message). */
typedef struct ts_pd_vdm {
    uint16_t svid;      /**< 0xFF00 PD SID, 0xFF01 DisplayPort, 0x8087 Intel (Thunderbolt) */
    bool structured;
    uint8_t command;    /**< 1 Discover Identity, 2 SVIDs, 3 Modes, 4 Enter, 5 Exit Mode, 6 Attention */
    uint8_t cmd_type;   /**< 0 REQ, 1 ACK, 2 NAK, 3 BUSY */
    uint8_t position;   /**< object position (mode index) */
    uint8_t version;    /**< structured VDM version (major) */
} ts_pd_vdm;
#define TS_PD_VDM_DISCOVER_IDENTITY 1u
#define TS_PD_VDM_DISCOVER_SVIDS 2u
#define TS_PD_VDM_DISCOVER_MODES 3u
#define TS_PD_VDM_ENTER_MODE 4u
#define TS_PD_VDM_EXIT_MODE 5u
#define TS_PD_VDM_ATTENTION 6u

/** What ended the last contract (ts_pd_contract.end, while none is valid). */
typedef enum ts_pd_contract_end {
    TS_PD_END_NONE = 0,       /**< none was ended (never made, or one is in force) */
    TS_PD_END_HARD_RESET = 1, /**< the source returns to vSafe5V: the Type-C current rules */
    TS_PD_END_SOFT_RESET = 2, /**< the supply is untouched; terms unknown until renegotiated */
    TS_PD_END_PR_SWAP = 3,    /**< the power roles swap: the new source offers anew */
} ts_pd_contract_end;

/** The explicit power contract. */
typedef struct ts_pd_contract {
    bool valid;
    ts_pd_supply kind;   /**< of the requested PDO */
    uint8_t position;    /**< requested object position, 1-based */
    bool capability_mismatch;
    uint8_t end;         /**< while not valid: ts_pd_contract_end of the last one */
    uint32_t mv;         /**< Fixed: its voltage; PPS/AVS: the requested voltage; else 0 */
    uint32_t mv_min, mv_max; /**< the PDO's range (equal for Fixed) */
    uint32_t ma;         /**< operating current (Battery: mW / mv_min) */
    uint32_t ma_max;     /**< maximum operating current the RDO asks for (PPS/AVS: = ma) */
    uint32_t mw;         /**< power the contract allows: mv (or mv_max) x ma; Battery: the RDO's */
    uint32_t pdo, rdo;   /**< as sent */
    uint64_t t;          /**< PS_RDY's burst start, caller's ticks (or the reset that ended it) */
    uint32_t generation; /**< +1 on every change (made, replaced, ended) */
} ts_pd_contract;

/** Every error and drop. */
typedef struct ts_pd_counters {
    uint32_t edges;          /**< edges fed */
    uint32_t glitches;       /**< edge pairs dropped by the glitch filter */
    uint32_t level_errors;   /**< an edge to the level the line already had: one was missed */
    uint32_t bmc_errors;     /**< inside a message: a short interval, then a long one (not BMC) */
    uint32_t messages;       /**< messages and reset ordered sets decoded */
    uint32_t crc_failures;   /**< whole messages whose CRC did not match */
    uint32_t bad_symbols;    /**< invalid 5-bit codes inside header, data or CRC */
    uint32_t missing_eop;    /**< whole messages not followed by EOP */
    uint32_t truncated;      /**< bursts that ended inside a message */
    uint32_t noise_bursts;   /**< bursts of >= TS_PD_NOISE_MIN_BITS bits with no ordered set */
    uint32_t short_bursts;   /**< shorter bursts with no ordered set */
    uint32_t queue_overflows;/**< messages dropped: the queue was full */
} ts_pd_counters;

typedef void (*ts_pd_on_msg)(void *ctx, const ts_pd_msg *msg);

typedef struct ts_pd_config {
    uint32_t tick_hz;    /**< rate of the edge timestamps (e.g. the PIO's counting clock) */
    uint32_t zero_ns;    /**< 0: TS_PD_DEFAULT_ZERO_NS */
    uint32_t idle_ns;    /**< 0: TS_PD_DEFAULT_IDLE_NS */
    uint32_t glitch_ns;  /**< an edge at most this long after the previous one cancels it
                              (0, or under one tick: off); held edges wait for the next */
    ts_pd_on_msg on_msg; /**< NULL: messages go to the queue (ts_pd_take) */
    void *ctx;
} ts_pd_config;

enum { TS_PD_HUNT = 0, TS_PD_FRAME = 1, TS_PD_SKIP = 2 };

typedef struct ts_pd_decoder {
    ts_pd_config cfg;
    uint32_t zero_ticks, idle_ticks, glitch_ticks;
    /* edges */
    uint64_t last_t;     /**< last edge that reached the BMC decoder */
    uint64_t pend_t;     /**< edge held by the glitch filter */
    bool pend, in_burst, half_one;
    uint8_t level;       /**< after the last edge; 2 = not known yet */
    /* burst and message being decoded */
    uint8_t state;       /**< TS_PD_HUNT / _FRAME / _SKIP */
    uint8_t sym_bits, sym_acc;
    uint16_t nibbles, nibbles_total;
    uint32_t window;     /**< the last 20 bits, oldest in bit 0 */
    uint32_t burst_bits;
    uint64_t burst_t;
    ts_pd_msg cur;
    /* queue */
    ts_pd_msg q[TS_PD_QUEUE_LEN];
    uint32_t q_head, q_tail;
    ts_pd_counters counters;
    /* contract */
    uint32_t caps[TS_PD_MAX_OBJECTS];
    uint8_t ncaps;
    uint8_t pending;     /**< what the next Accept / PS_RDY completes */
    uint32_t req_rdo, req_pdo;
    ts_pd_contract contract;
} ts_pd_decoder;

/** Start empty; tick_hz must be at least 1 MHz (a BMC half bit is 1.5..1.9 us). 0 on success. */
int ts_pd_init(ts_pd_decoder *d, const ts_pd_config *cfg);
/**
 * One transition of the CC line at time t (ticks of cfg.tick_hz, not
 * decreasing) to `level` (0 or 1, the level after the edge). Edges arrive in
 * order; a message is handed on when its EOP (or its ordered set, for a reset)
 * is decoded.
 */
void ts_pd_feed_edge(ts_pd_decoder *d, uint64_t t, uint8_t level);
/** No edge until `now`: ends a burst idle long enough (hands on a message cut short). */
void ts_pd_idle(ts_pd_decoder *d, uint64_t now);
/** Oldest queued message into *out; false when none. */
bool ts_pd_take(ts_pd_decoder *d, ts_pd_msg *out);
/** The contract now. */
void ts_pd_contract_get(const ts_pd_decoder *d, ts_pd_contract *out);
/**
 * The contract into *out and true when it changed (made, replaced or ended)
 * since the generation in *seen, which is then updated; false otherwise. For
 * a caller that passes each change on (e.g. to the port, ts_probe_pd_contract).
 */
bool ts_pd_contract_changed(const ts_pd_decoder *d, uint32_t *seen, ts_pd_contract *out);
/** Counters so far. */
const ts_pd_counters *ts_pd_counters_get(const ts_pd_decoder *d);

ts_pd_header ts_pd_parse_header(uint16_t header);
ts_pd_kind ts_pd_msg_kind(const ts_pd_msg *m);
/** Short name of a kind ("Source_Capabilities", ...; "?" if none). */
const char *ts_pd_kind_name(ts_pd_kind k);
ts_pd_pdo ts_pd_parse_pdo(uint32_t pdo);
ts_pd_rdo ts_pd_parse_rdo(uint32_t rdo, ts_pd_supply kind);
ts_pd_vdm ts_pd_parse_vdm(uint32_t vdm_header);
/** CRC-32 (IEEE 802.3) as PD computes it over header and data objects. */
uint32_t ts_pd_crc32(uint16_t header, const uint32_t *obj, uint32_t ndo);
#endif
