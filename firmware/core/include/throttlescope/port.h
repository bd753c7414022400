/* The host port's power budget as a USB Type-C sink sees it on CC.
 *
 * The probe sits inline and reads CC1 and CC2 with the MCU's ADC through a
 * high-impedance front end (docs/hardware.md). This module turns windows of
 * those readings into the source's current advertisement, classified by the
 * USB Type-C specification's sink voltage ranges (Table 4-36, Rd = 5.1 kOhm):
 *
 *   below vRd-Connect (200 mV)        open: no Rp on this pin
 *   vRd-USB   250 ..  610 mV          Default USB power (500/900 mA)
 *   vRd-1.5   700 .. 1160 mV          1.5 A at 5 V
 *   vRd-3.0  1310 .. 2040 mV          3.0 A at 5 V
 *   anything else                     out of range, reported with its mV
 *
 * Each range is widened by the front end's measurement uncertainty (guard_mv)
 * so that a compliant source is never called out of range by our own error.
 *
 * Robust to USB PD's BMC traffic on CC: a window whose readings spread more
 * than TS_PORT_NOISY_SPREAD_MV is discarded and counted (a burst in flight),
 * and a class must hold for tCCDebounce (attach: open -> Rp) or tPDDebounce
 * (any other change) before it is reported; a change that does not last is a
 * flap, counted. The active CC (which pin carries Rp) gives the plug's
 * orientation. VBUS above vSafe5V's maximum says a PD contract raised it: the
 * RP2040 has no PD PHY, so its wattage stays unknown.
 *
 * Portable C99, no allocation; one context owns a ts_port. */
#ifndef THROTTLESCOPE_PORT_H
#define THROTTLESCOPE_PORT_H

#include <stdbool.h>
#include <stdint.h>

/** Below this a sink sees no source on the pin (vRd-Connect threshold). */
#define TS_PORT_VRD_CONNECT_MV 200u
/** Spec ranges of the sink CC voltage per advertisement (Type-C Table 4-36). */
#define TS_PORT_VRD_USB_MIN_MV 250u
#define TS_PORT_VRD_USB_MAX_MV 610u
#define TS_PORT_VRD_1A5_MIN_MV 700u
#define TS_PORT_VRD_1A5_MAX_MV 1160u
#define TS_PORT_VRD_3A0_MIN_MV 1310u
#define TS_PORT_VRD_3A0_MAX_MV 2040u
/** vSafe5V: 4.75 .. 5.5 V at the sink. */
#define TS_PORT_VSAFE5V_MIN_MV 4750u
#define TS_PORT_VSAFE5V_MAX_MV 5500u
#ifndef TS_PORT_GUARD_MV
/** Default front-end uncertainty added to each side of every range (hardware.md). */
#define TS_PORT_GUARD_MV 25u
#endif
#ifndef TS_PORT_NOISY_SPREAD_MV
/** A window whose readings spread more than this carries BMC traffic: discarded. */
#define TS_PORT_NOISY_SPREAD_MV 150u
#endif
#ifndef TS_PORT_CC_DEBOUNCE_US
/** tCCDebounce (100..200 ms): an attach (open -> Rp) must hold this long. */
#define TS_PORT_CC_DEBOUNCE_US 150000u
#endif
#ifndef TS_PORT_PD_DEBOUNCE_US
/** tPDDebounce (10..20 ms): any other change must hold this long. */
#define TS_PORT_PD_DEBOUNCE_US 15000u
#endif
/** Readings per window at most. */
#define TS_PORT_MAX_WINDOW 32u

/** Classification of one CC pin, and of the port (wire values of CcAdvertisement). */
typedef enum ts_cc_class {
    TS_CC_UNKNOWN = 0,      /**< nothing measured yet / no CC sensing */
    TS_CC_OPEN = 1,         /**< below vRd-Connect: no Rp */
    TS_CC_USB_DEFAULT = 2,  /**< vRd-USB: Default USB power */
    TS_CC_1A5 = 3,          /**< vRd-1.5: 1.5 A at 5 V */
    TS_CC_3A0 = 4,          /**< vRd-3.0: 3.0 A at 5 V */
    TS_CC_OUT_OF_RANGE = 5, /**< fits no range: see the millivolts */
} ts_cc_class;

/** Which CC pin carries the source's Rp (wire values of ActiveCc). */
typedef enum ts_active_cc {
    TS_ACTIVE_NONE = 0,
    TS_ACTIVE_CC1 = 1, /**< plug unflipped */
    TS_ACTIVE_CC2 = 2, /**< plug flipped */
    TS_ACTIVE_BOTH = 3, /**< Rp on both: a debug accessory or a miswired port */
} ts_active_cc;

/** VBUS against vSafe5V (wire values of VbusLevel). */
typedef enum ts_vbus_level {
    TS_VBUS_UNKNOWN = 0, /**< no VBUS reading yet (not sampling) */
    TS_VBUS_LOW = 1,     /**< below vSafe5V's 4.75 V minimum */
    TS_VBUS_SAFE5V = 2,  /**< 4.75 .. 5.5 V */
    TS_VBUS_ABOVE = 3,   /**< above 5.5 V: a PD contract raised it, W unknown */
} ts_vbus_level;

/** Debounce state of one pin. */
typedef struct ts_cc_pin {
    ts_cc_class stable;     /**< last class that held its debounce time */
    ts_cc_class candidate;  /**< class of the latest window */
    uint64_t candidate_since_us;
    uint32_t mv;            /**< latest window's mean */
    uint32_t stable_mv;     /**< mean of the window that made `stable` */
} ts_cc_pin;

/** Counters (every discarded or rejected reading is counted). */
typedef struct ts_port_counters {
    uint32_t windows;        /**< windows taken */
    uint32_t noisy_windows;  /**< discarded: spread above TS_PORT_NOISY_SPREAD_MV (BMC) */
    uint32_t flaps;          /**< class changes that did not last their debounce */
    uint32_t changes;        /**< reported changes of the port status */
} ts_port_counters;

/** The port as last reported. */
typedef struct ts_port_state {
    ts_cc_class advertisement; /**< the active pin's class (OPEN when none) */
    ts_active_cc active;
    ts_cc_class cc1, cc2;      /**< debounced per pin */
    uint32_t cc1_mv, cc2_mv;   /**< latest window means */
    ts_vbus_level vbus;        /**< debounced */
    uint32_t vbus_mv;          /**< latest VBUS */
    uint32_t vbus_min_mv;      /**< lowest VBUS since the last report (0: none) */
} ts_port_state;

typedef struct ts_port {
    uint32_t guard_mv;
    ts_cc_pin pin[2];
    ts_vbus_level vbus_stable, vbus_candidate;
    uint64_t vbus_since_us;
    uint32_t vbus_mv, vbus_min_mv;
    bool vbus_seen;
    ts_port_state reported;
    bool change_pending;
    ts_port_counters counters;
} ts_port;

/** Start unknown; guard_mv is the front end's uncertainty (TS_PORT_GUARD_MV if ~0u). */
void ts_port_init(ts_port *p, uint32_t guard_mv);
/** Class of one steady CC voltage with `guard_mv` of measurement uncertainty. */
ts_cc_class ts_port_classify_mv(uint32_t mv, uint32_t guard_mv);
/** Level of VBUS in mV against vSafe5V. */
ts_vbus_level ts_port_vbus_level(uint32_t mv);
/**
 * One window of n (1..TS_PORT_MAX_WINDOW) simultaneous-ish readings of CC1
 * and CC2 in mV at probe time now_us. A pin whose window spreads too much is
 * skipped (counted); otherwise its mean is classified and debounced.
 */
void ts_port_cc_window(ts_port *p, const uint16_t *cc1_mv, const uint16_t *cc2_mv, uint32_t n,
                       uint64_t now_us);
/** A VBUS reading (mV) at probe time now_us: level debounced, minimum kept. */
void ts_port_vbus(ts_port *p, uint32_t mv, uint64_t now_us);
/**
 * True once when the debounced status changed since the last call (then
 * *out is the new status and the VBUS minimum restarts).
 */
bool ts_port_take_change(ts_port *p, ts_port_state *out);
/** The status now (for a request); restarts the VBUS minimum. */
void ts_port_snapshot(ts_port *p, ts_port_state *out);
#endif
