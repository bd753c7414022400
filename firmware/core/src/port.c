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

/* A class that is an Rd reading under some Rp. */
static bool advertises(ts_cc_class c)
{
    return c == TS_CC_USB_DEFAULT || c == TS_CC_1A5 || c == TS_CC_3A0;
}

/* The most the cable's Ra reads under the Rp that makes an Rd read `rp`. */
static uint32_t vra_max_mv(ts_cc_class rp)
{
    switch (rp) {
    case TS_CC_USB_DEFAULT:
        return TS_PORT_VRA_USB_MAX_MV;
    case TS_CC_1A5:
        return TS_PORT_VRA_1A5_MAX_MV;
    case TS_CC_3A0:
        return TS_PORT_VRA_3A0_MAX_MV;
    default:
        return 0u;
    }
}

/* The class of a pin reading `mv` beside a pin reading `other_mv`, as the sink
 * behind the cable sees it. A source puts the same Rp on both pins; the sink's
 * Rd is on one of them, and the other carries the cable's Ra (VCONN off or on)
 * or nothing. Beside a pin in an Rd range, this pin is that other pin, and
 * reads OPEN (no Rp for the sink), when
 *   - it reads at most vRa under the Rp the Rd pin gives (Ra with VCONN off: a
 *     3.0 A Rp puts 0.24..0.73 V on 0.8..1.2 kOhm, inside vRd-USB and up to
 *     vRd-1.5, which read alone would be an advertisement), unless it is the
 *     higher of the two, or
 *   - it reads above every Rd range: VCONN is on (the ADC saturates at its
 *     reference), or an Rp with no termination under it.
 * Anything else keeps its own class: Rd on both pins (a debug accessory, or a
 * port that is not a plain source) is reported as both by active_of(). */
static ts_cc_class pair_class(uint32_t mv, uint32_t other_mv, uint32_t guard)
{
    ts_cc_class c = ts_port_classify_mv(mv, guard);
    ts_cc_class other = ts_port_classify_mv(other_mv, guard);
    if (!advertises(other) || (advertises(c) && mv >= other_mv)) {
        return c;
    }
    if (mv <= vra_max_mv(other) + guard || mv > TS_PORT_VRD_3A0_MAX_MV + guard) {
        return TS_CC_OPEN;
    }
    return c;
}

/* tCCDebounce for an attach (no Rp -> Rp), tPDDebounce for anything else. */
static uint32_t debounce_us(ts_cc_class from, ts_cc_class to)
{
    return !has_rp(from) && has_rp(to) ? TS_PORT_CC_DEBOUNCE_US : TS_PORT_PD_DEBOUNCE_US;
}

/* Feed one valid mean and its class to a pin; true when its stable class changed. */
static bool pin_update(ts_port *p, ts_cc_pin *pin, uint32_t mv, ts_cc_class c, uint64_t now_us)
{
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
    uint32_t mean[2] = {0, 0};
    bool valid[2];
    for (unsigned k = 0; k < 2u; k++) {
        valid[k] = window_mean(in[k], n, &mean[k]);
    }
    bool changed = false;
    for (unsigned k = 0; k < 2u; k++) {
        if (!valid[k]) {
            continue;
        }
        /* The partner's mean from this window, or its latest (BMC traffic runs
         * on the CC pin, so that is the one a burst hides). */
        uint32_t other = valid[1u - k] ? mean[1u - k] : p->pin[1u - k].mv;
        ts_cc_class c = pair_class(mean[k], other, p->guard_mv);
        changed |= pin_update(p, &p->pin[k], mean[k], c, now_us);
    }
    if (!valid[0] || !valid[1]) {
        p->counters.noisy_windows++;
    }
    if (changed) {
        p->change_pending = true;
        /* A detach (no Rp on either pin for its debounce) ends any contract. */
        if (p->pd != TS_PORT_PD_NONE && p->pin[0].stable == TS_CC_OPEN &&
            p->pin[1].stable == TS_CC_OPEN) {
            p->pd = TS_PORT_PD_NONE;
            memset(&p->terms, 0, sizeof p->terms);
        }
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

/* The same terms, whenever they were agreed. */
static bool same_terms(const ts_port_contract *a, const ts_port_contract *b)
{
    return a->mv == b->mv && a->mv_min == b->mv_min && a->mv_max == b->mv_max &&
           a->ma == b->ma && a->ma_max == b->ma_max && a->mw == b->mw &&
           a->supply == b->supply && a->position == b->position &&
           a->capability_mismatch == b->capability_mismatch;
}

void ts_port_set_pd_contract(ts_port *p, const ts_port_contract *terms)
{
    if (p->pd != TS_PORT_PD_EXPLICIT || !same_terms(&p->terms, terms)) {
        p->pd = TS_PORT_PD_EXPLICIT;
        p->terms = *terms;
        p->change_pending = true;
    }
}

void ts_port_pd_renegotiating(ts_port *p)
{
    if (p->pd != TS_PORT_PD_RENEGOTIATING) {
        p->pd = TS_PORT_PD_RENEGOTIATING;
        memset(&p->terms, 0, sizeof p->terms);
        p->change_pending = true;
    }
}

void ts_port_clear_pd_contract(ts_port *p)
{
    if (p->pd != TS_PORT_PD_NONE) {
        p->pd = TS_PORT_PD_NONE;
        memset(&p->terms, 0, sizeof p->terms);
        p->change_pending = true;
    }
}

/* The pin with a valid advertisement is the active one (the other reads OPEN
 * when it is the cable's Ra, VCONN or nothing: pair_class); failing that, a
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
    out->pd_contract = p->pd != TS_PORT_PD_NONE || p->vbus_stable == TS_VBUS_ABOVE;
    out->has_contract = p->pd == TS_PORT_PD_EXPLICIT;
    if (out->has_contract) {
        out->contract = p->terms;
        out->budget = TS_BUDGET_PD;
        out->budget_mv = p->terms.mv != 0u                         ? p->terms.mv
                         : p->terms.supply == TS_SUPPLY_BATTERY ? p->terms.mv_min
                                                                 : p->terms.mv_max;
        out->budget_ma = p->terms.ma;
    } else if (out->pd_contract) {
        out->budget = TS_BUDGET_PD_UNKNOWN;
    } else if (advertises(out->advertisement)) {
        out->budget = TS_BUDGET_TYPE_C;
        out->budget_mv = 5000u;
        out->budget_ma = out->advertisement == TS_CC_3A0   ? 3000u
                         : out->advertisement == TS_CC_1A5 ? 1500u
                                                           : 0u;
    }
}

/* A class as a report compares it: under a contract Rp is collision avoidance
 * (PD 3.0: SinkTxOK = 3.0 A, SinkTxNG = 1.5 A, and a source that advertised
 * Default USB before the contract moves to them), so the Rp classes are one. */
static ts_cc_class as_reported(ts_cc_class c, bool contract)
{
    return contract && advertises(c) ? TS_CC_3A0 : c;
}

static bool same_report(const ts_port_state *a, const ts_port_state *b)
{
    bool k = a->pd_contract && b->pd_contract;
    return as_reported(a->advertisement, k) == as_reported(b->advertisement, k) &&
           a->active == b->active && as_reported(a->cc1, k) == as_reported(b->cc1, k) &&
           as_reported(a->cc2, k) == as_reported(b->cc2, k) && a->vbus == b->vbus &&
           a->pd_contract == b->pd_contract && a->has_contract == b->has_contract &&
           same_terms(&a->contract, &b->contract) &&
           a->contract.agreed_us == b->contract.agreed_us;
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
    if (same_report(&now, &p->reported)) {
        return false; /* the pins moved but the port's status did not */
    }
    ts_port_snapshot(p, out);
    p->reported = *out;
    p->counters.changes++;
    return true;
}
