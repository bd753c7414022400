/* CC classification, debounce and VBUS level of the host port (port.h). */
#include "throttlescope/port.h"

#include <string.h>

void ts_port_init(ts_port *p, uint32_t guard_mv)
{
    memset(p, 0, sizeof *p);
    p->guard_mv = guard_mv == ~0u ? TS_PORT_GUARD_MV : guard_mv;
}

static bool within(uint32_t mv, uint32_t lo, uint32_t hi, uint32_t guard)
{
    return mv + guard >= lo && mv <= hi + guard;
}

ts_cc_class ts_port_classify_mv(uint32_t mv, uint32_t guard_mv)
{
    if (mv < TS_PORT_VRD_CONNECT_MV) {
        return TS_CC_OPEN;
    }
    if (within(mv, TS_PORT_VRD_USB_MIN_MV, TS_PORT_VRD_USB_MAX_MV, guard_mv)) {
        return TS_CC_USB_DEFAULT;
    }
    if (within(mv, TS_PORT_VRD_1A5_MIN_MV, TS_PORT_VRD_1A5_MAX_MV, guard_mv)) {
        return TS_CC_1A5;
    }
    if (within(mv, TS_PORT_VRD_3A0_MIN_MV, TS_PORT_VRD_3A0_MAX_MV, guard_mv)) {
        return TS_CC_3A0;
    }
    return TS_CC_OUT_OF_RANGE;
}

ts_vbus_level ts_port_vbus_level(uint32_t mv)
{
    if (mv < TS_PORT_VSAFE5V_MIN_MV) {
        return TS_VBUS_LOW;
    }
    return mv > TS_PORT_VSAFE5V_MAX_MV ? TS_VBUS_ABOVE : TS_VBUS_SAFE5V;
}

static bool has_rp(ts_cc_class c)
{
    return c != TS_CC_UNKNOWN && c != TS_CC_OPEN;
}

/* tCCDebounce for an attach (no Rp -> Rp), tPDDebounce for anything else. */
static uint32_t debounce_us(ts_cc_class from, ts_cc_class to)
{
    return !has_rp(from) && has_rp(to) ? TS_PORT_CC_DEBOUNCE_US : TS_PORT_PD_DEBOUNCE_US;
}

/* Feed one valid mean to a pin; returns true when its stable class changed. */
static bool pin_update(ts_port *p, ts_cc_pin *pin, uint32_t mv, uint64_t now_us)
{
    ts_cc_class c = ts_port_classify_mv(mv, p->guard_mv);
    pin->mv = mv;
    if (c != pin->candidate) {
        if (pin->candidate != pin->stable) {
            p->counters.flaps++; /* the previous candidate did not last */
        }
        pin->candidate = c;
        pin->candidate_since_us = now_us;
    }
    if (pin->candidate != pin->stable &&
        now_us - pin->candidate_since_us >= debounce_us(pin->stable, pin->candidate)) {
        pin->stable = pin->candidate;
        pin->stable_mv = mv;
        return true;
    }
    return false;
}

/* Mean of a window into *mean; false when its spread says BMC traffic. */
static bool window_mean(const uint16_t *mv, uint32_t n, uint32_t *mean)
{
    uint32_t lo = mv[0], hi = mv[0], sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        lo = mv[i] < lo ? mv[i] : lo;
        hi = mv[i] > hi ? mv[i] : hi;
        sum += mv[i];
    }
    *mean = (sum + n / 2u) / n;
    return hi - lo <= TS_PORT_NOISY_SPREAD_MV;
}

void ts_port_cc_window(ts_port *p, const uint16_t *cc1_mv, const uint16_t *cc2_mv, uint32_t n,
                       uint64_t now_us)
{
    if (n == 0u) {
        return;
    }
    if (n > TS_PORT_MAX_WINDOW) {
        n = TS_PORT_MAX_WINDOW;
    }
    p->counters.windows++;
    const uint16_t *in[2] = {cc1_mv, cc2_mv};
    bool noisy = false;
    for (unsigned k = 0; k < 2u; k++) {
        uint32_t mean = 0;
        if (!window_mean(in[k], n, &mean)) {
            noisy = true;
            continue;
        }
        if (pin_update(p, &p->pin[k], mean, now_us)) {
            p->change_pending = true;
        }
    }
    if (noisy) {
        p->counters.noisy_windows++;
    }
}

void ts_port_vbus(ts_port *p, uint32_t mv, uint64_t now_us)
{
    ts_vbus_level l = ts_port_vbus_level(mv);
    p->vbus_mv = mv;
    if (!p->vbus_seen || mv < p->vbus_min_mv) {
        p->vbus_min_mv = mv;
    }
    p->vbus_seen = true;
    if (l != p->vbus_candidate) {
        p->vbus_candidate = l;
        p->vbus_since_us = now_us;
    }
    if (p->vbus_candidate != p->vbus_stable &&
        (p->vbus_stable == TS_VBUS_UNKNOWN ||
         now_us - p->vbus_since_us >= TS_PORT_PD_DEBOUNCE_US)) {
        p->vbus_stable = p->vbus_candidate;
        p->change_pending = true;
    }
}

static bool advertises(ts_cc_class c)
{
    return c == TS_CC_USB_DEFAULT || c == TS_CC_1A5 || c == TS_CC_3A0;
}

/* The pin with a valid advertisement is the active one (the other may be
 * open, or VCONN for an e-marked cable: out of range high); failing that, a
 * pin with some Rp-like voltage that fits no range. */
static ts_active_cc active_of(ts_cc_class cc1, ts_cc_class cc2)
{
    bool a = advertises(cc1), b = advertises(cc2);
    if (!a && !b) {
        a = has_rp(cc1);
        b = has_rp(cc2);
    }
    return a && b ? TS_ACTIVE_BOTH : a ? TS_ACTIVE_CC1 : b ? TS_ACTIVE_CC2 : TS_ACTIVE_NONE;
}

static void fill(const ts_port *p, ts_port_state *out)
{
    memset(out, 0, sizeof *out);
    out->cc1 = p->pin[0].stable;
    out->cc2 = p->pin[1].stable;
    out->active = active_of(out->cc1, out->cc2);
    switch (out->active) {
    case TS_ACTIVE_CC1:
        out->advertisement = out->cc1;
        break;
    case TS_ACTIVE_CC2:
        out->advertisement = out->cc2;
        break;
    case TS_ACTIVE_BOTH:
        /* Rp on both pins gives no orientation: the lower offer binds. */
        out->advertisement = out->cc1 < out->cc2 ? out->cc1 : out->cc2;
        break;
    default:
        out->advertisement = out->cc1 == TS_CC_UNKNOWN && out->cc2 == TS_CC_UNKNOWN
                                 ? TS_CC_UNKNOWN
                                 : TS_CC_OPEN;
        break;
    }
    out->cc1_mv = p->pin[0].mv;
    out->cc2_mv = p->pin[1].mv;
    out->vbus = p->vbus_stable;
    out->vbus_mv = p->vbus_mv;
    out->vbus_min_mv = p->vbus_seen ? p->vbus_min_mv : 0u;
}

void ts_port_snapshot(ts_port *p, ts_port_state *out)
{
    fill(p, out);
    p->vbus_seen = false; /* the minimum restarts with each report */
}

bool ts_port_take_change(ts_port *p, ts_port_state *out)
{
    if (!p->change_pending) {
        return false;
    }
    p->change_pending = false;
    ts_port_state now;
    fill(p, &now);
    if (now.advertisement == p->reported.advertisement && now.active == p->reported.active &&
        now.cc1 == p->reported.cc1 && now.cc2 == p->reported.cc2 &&
        now.vbus == p->reported.vbus) {
        return false; /* the pins moved but the port's status did not */
    }
    ts_port_snapshot(p, out);
    p->reported = *out;
    p->counters.changes++;
    return true;
}
