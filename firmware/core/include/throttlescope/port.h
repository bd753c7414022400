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
 * The two pins are read as a pair, as the sink behind the cable sees them: a
 * sink sees only the pin its Rd sits on. The other pin, when a pin reads in an
 * Rd range, is the e-marked cable's Ra (800 Ohm .. 1.2 kOhm on its VCONN pin)
 * or nothing, and is reported OPEN whether VCONN is off (Ra under the same Rp
 * reads at most vRa: 0.15 / 0.35 / 0.75 V under a Default / 1.5 A / 3.0 A Rp,
 * the spec's "CC Voltages on Source Side" tables) or on (the pin then
 * reads above every Rd range; the ADC saturates at its reference). Rd on both
 * pins (a debug accessory) is reported as both, with the lower offer.
 *
 * Robust to USB PD's BMC traffic on CC: a window whose readings spread more
 * than TS_PORT_NOISY_SPREAD_MV is discarded and counted (a burst in flight),
 * and a class must hold for tCCDebounce (attach: open -> Rp) or tPDDebounce
 * (any other change) before it is reported; a change that does not last is a
 * flap, counted. The active CC (which pin carries Rd under Rp) gives the plug's
 * orientation.
 *
 * The advertisement is the port's budget only while no USB PD contract is in
 * force. A contract is known from the PD decoder (ts_port_set_pd_contract:
 * its terms become the budget; ts_port_pd_renegotiating: a Soft_Reset, PD
 * still in force with its terms unknown until the next PS_RDY) or from VBUS
 * above vSafe5V's maximum (terms unknown). Under a contract Rp is not a budget: a PD 3.0 source moves it
 * between SinkTxOK (the 3.0 A Rp) and SinkTxNG (the 1.5 A Rp) around every
 * exchange it starts (USB PD R3.0 5.7 "Collision Avoidance"; Linux's tcpm.h
 * has SINK_TX_NG = TYPEC_CC_RP_1_5, SINK_TX_OK = TYPEC_CC_RP_3_0), holding
 * SinkTxNG tSinkTx (16..20 ms) before it transmits, longer than tPDDebounce;
 * so a move of the active pin between the Rp classes is not reported as a
 * change then. Without the decoder, a contract at 5 V is not seen.
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
/** vRa maximum under each Rp: the highest the cable's Ra (800 Ohm .. 1.2 kOhm)
 *  reads under that advertisement (USB Type-C specification, "CC Voltages on
 *  Source Side - Default USB / 1.5 A @ 5 V / 3.0 A @ 5 V", Tables 4-23..4-25 in
 *  revision 1.x: vRa 0 .. 0.15 / 0.35 / 0.75 V, vRd from 0.25 / 0.45 / 0.85 V; a
 *  source tells Ra from Rd between the two, as Chromium EC's
 *  PD_SRC_*_RD_THRESH_MV 200 / 400 / 800 do). Each is below the same
 *  advertisement's lowest Rd reading at the sink (vRd-USB, vRd-1.5, vRd-3.0
 *  minimum), so beside an Rd pin the two cannot be confused. */
#define TS_PORT_VRA_USB_MAX_MV 150u
#define TS_PORT_VRA_1A5_MAX_MV 350u
#define TS_PORT_VRA_3A0_MAX_MV 750u
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

/** Which CC pin the source's Rp meets the sink's Rd on (wire values of ActiveCc). */
typedef enum ts_active_cc {
    TS_ACTIVE_NONE = 0,
    TS_ACTIVE_CC1 = 1, /**< plug unflipped */
    TS_ACTIVE_CC2 = 2, /**< plug flipped */
    TS_ACTIVE_BOTH = 3, /**< Rd under Rp on both: a debug accessory or a miswired port */
} ts_active_cc;

/** Where the port's budget comes from. */
typedef enum ts_budget_source {
    TS_BUDGET_NONE = 0,        /**< no source attached, or not classified yet */
    TS_BUDGET_TYPE_C = 1,      /**< no PD contract: the Type-C advertisement at 5 V */
    TS_BUDGET_PD = 2,          /**< the PD contract's terms, from the decoder */
    TS_BUDGET_PD_UNKNOWN = 3,  /**< a PD contract (VBUS above vSafe5V), terms unknown */
} ts_budget_source;

/** The kind of supply a PD contract is drawn from (wire values of PdSupply). */
typedef enum ts_port_supply {
    TS_SUPPLY_UNSPECIFIED = 0,
    TS_SUPPLY_FIXED = 1,
    TS_SUPPLY_BATTERY = 2,
    TS_SUPPLY_VARIABLE = 3,
    TS_SUPPLY_PPS = 4,     /**< SPR Programmable Power Supply */
    TS_SUPPLY_EPR_AVS = 5, /**< EPR Adjustable Voltage Supply */
    TS_SUPPLY_SPR_AVS = 6, /**< SPR Adjustable Voltage Supply */
} ts_port_supply;

/** The terms of an explicit PD contract, as the decoder read them (wire PdContract). */
typedef struct ts_port_contract {
    uint32_t mv;             /**< Fixed: its voltage; PPS/AVS: the requested; else 0 */
    uint32_t mv_min, mv_max; /**< the requested PDO's range (equal for Fixed) */
    uint32_t ma;             /**< operating current (Battery: mW over mv_min) */
    uint32_t ma_max;         /**< maximum operating current asked for */
    uint32_t mw;             /**< power the contract allows */
    uint64_t agreed_us;      /**< probe time of the PS_RDY that put it in force */
    uint8_t supply;          /**< ts_port_supply */
    uint8_t position;        /**< requested object position, 1-based */
    bool capability_mismatch;
} ts_port_contract;

/** VBUS against vSafe5V (wire values of VbusLevel). */
typedef enum ts_vbus_level {
    TS_VBUS_UNKNOWN = 0, /**< no VBUS reading yet (not sampling) */
    TS_VBUS_LOW = 1,     /**< below vSafe5V's 4.75 V minimum */
    TS_VBUS_SAFE5V = 2,  /**< 4.75 .. 5.5 V */
    TS_VBUS_ABOVE = 3,   /**< above 5.5 V: a PD contract raised it */
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
    ts_cc_class cc1, cc2;      /**< debounced per pin; the pin beside the active one
                                    (Ra, VCONN or nothing) is OPEN */
    uint32_t cc1_mv, cc2_mv;   /**< latest window means */
    ts_vbus_level vbus;        /**< debounced */
    uint32_t vbus_mv;          /**< latest VBUS */
    uint32_t vbus_min_mv;      /**< lowest VBUS since the last report (0: none) */
    bool pd_contract;          /**< a PD contract is in force (decoded, renegotiating after
                                    a Soft_Reset, or VBUS above) */
    bool has_contract;         /**< its terms are known: `contract` */
    ts_port_contract contract; /**< the decoder's terms (all 0 unless has_contract) */
    ts_budget_source budget;   /**< what budget_mv/budget_ma come from */
    uint32_t budget_mv;        /**< 5000 for the Type-C advertisement; the contract's
                                    (a Variable supply: its highest, Battery: its lowest) */
    uint32_t budget_ma;        /**< 1500 / 3000; 0 for Default USB power (500 mA for a
                                    USB 2 device, 900 mA for USB 3: the device's) and
                                    when unknown */
} ts_port_state;

/** What the PD decoder's caller said of the contract (ts_port.pd). */
enum {
    TS_PORT_PD_NONE = 0,          /**< none decoded (VBUS above vSafe5V may still say one) */
    TS_PORT_PD_EXPLICIT = 1,      /**< in force, its terms known */
    TS_PORT_PD_RENEGOTIATING = 2, /**< after a Soft_Reset: PD in force, terms unknown */
};

typedef struct ts_port {
    uint32_t guard_mv;
    ts_cc_pin pin[2];
    ts_vbus_level vbus_stable, vbus_candidate;
    uint64_t vbus_since_us;
    uint32_t vbus_mv, vbus_min_mv;
    bool vbus_seen;
    uint8_t pd;                /**< TS_PORT_PD_*: set by the PD decoder's caller */
    ts_port_contract terms;    /**< with TS_PORT_PD_EXPLICIT */
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
 * For the PD decoder's caller: a contract is in force on these terms (the
 * source's PS_RDY after its Accept of a Request). From here the budget is the
 * contract's and Rp moves are not changes, until ts_port_pd_renegotiating (a
 * Soft_Reset), ts_port_clear_pd_contract (a Hard Reset, a power role swap) or
 * a detach (both pins without Rp for tPDDebounce), which ends it by itself.
 * A new contract or different terms are reported as a change; the same terms
 * agreed again (a PPS sink's periodic Request) are not, and keep their time.
 */
void ts_port_set_pd_contract(ts_port *p, const ts_port_contract *terms);
/**
 * For the PD decoder's caller: a Soft_Reset. No explicit contract is in force
 * until the next PS_RDY, but PD is (the supply keeps its output): the budget's
 * terms are unknown and Rp moves are still not changes. Reported as a change.
 */
void ts_port_pd_renegotiating(ts_port *p);
/** For the PD decoder's caller: no contract any more (reported when there was one). */
void ts_port_clear_pd_contract(ts_port *p);
/**
 * True once when the debounced status changed since the last call (then
 * *out is the new status and the VBUS minimum restarts).
 */
bool ts_port_take_change(ts_port *p, ts_port_state *out);
/** The status now (for a request); restarts the VBUS minimum. */
void ts_port_snapshot(ts_port *p, ts_port_state *out);
#endif
