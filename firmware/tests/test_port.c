/* The host port's budget on CC: classification at the Type-C specification's
 * edges, debounce, orientation, BMC traffic, VBUS and the PortStatus message. */
#include "probe_rig.h"

#include "throttlescope/port.h"

#define TAG(m) throttlescope_v1_ProbeToHost_##m##_tag

static probe_rig g;
static throttlescope_v1_ProbeToHost msg;

/* One steady window of 8 readings per pin at time t_us. */
static void steady(ts_port *p, uint16_t cc1, uint16_t cc2, uint64_t t_us)
{
    uint16_t a[8], b[8];
    for (int i = 0; i < 8; i++) {
        a[i] = cc1;
        b[i] = cc2;
    }
    ts_port_cc_window(p, a, b, 8u, t_us);
}

/* Steady windows every ms from *t for ms milliseconds. */
static void hold(ts_port *p, uint16_t cc1, uint16_t cc2, uint64_t *t, uint32_t ms)
{
    for (uint32_t i = 0; i < ms; i++) {
        steady(p, cc1, cc2, *t);
        *t += 1000u;
    }
}

/* The decoder's caller reports a Fixed contract at mv / ma (object 1). */
static void set_fixed(ts_port *p, uint32_t mv, uint32_t ma)
{
    ts_port_contract c;
    memset(&c, 0, sizeof c);
    c.mv = c.mv_min = c.mv_max = mv;
    c.ma = c.ma_max = ma;
    c.mw = mv * ma / 1000u;
    c.supply = TS_SUPPLY_FIXED;
    c.position = 1;
    ts_port_set_pd_contract(p, &c);
}

/* A port that has reported cc1/cc2 held for 200 ms (past tCCDebounce). */
static void attached(ts_port *p, uint16_t cc1, uint16_t cc2, uint64_t *t)
{
    ts_port_state st;
    ts_port_init(p, ~0u);
    hold(p, cc1, cc2, t, 200);
    CHECK(ts_port_take_change(p, &st));
}

TS_CASE(classification_at_and_around_every_specification_edge)
{
    /* Exact spec ranges (guard 0): vRd-Connect 200, vRd-USB 250..610,
     * vRd-1.5 700..1160, vRd-3.0 1310..2040 mV. */
    static const struct {
        uint32_t mv;
        ts_cc_class c;
    } v[] = {
        {0, TS_CC_OPEN},          {199, TS_CC_OPEN},           {200, TS_CC_OUT_OF_RANGE},
        {249, TS_CC_OUT_OF_RANGE}, {250, TS_CC_USB_DEFAULT},   {610, TS_CC_USB_DEFAULT},
        {611, TS_CC_OUT_OF_RANGE}, {660, TS_CC_OUT_OF_RANGE},  {699, TS_CC_OUT_OF_RANGE},
        {700, TS_CC_1A5},          {1160, TS_CC_1A5},          {1161, TS_CC_OUT_OF_RANGE},
        {1230, TS_CC_OUT_OF_RANGE}, {1309, TS_CC_OUT_OF_RANGE}, {1310, TS_CC_3A0},
        {2040, TS_CC_3A0},         {2041, TS_CC_OUT_OF_RANGE}, {3300, TS_CC_OUT_OF_RANGE},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        CHECK_EQ_I(ts_port_classify_mv(v[i].mv, 0u), v[i].c);
    }
    /* With the front end's 25 mV each range widens by 25 mV both ways; the
     * vRd-Connect threshold does not move. */
    static const struct {
        uint32_t mv;
        ts_cc_class c;
    } w[] = {
        {199, TS_CC_OPEN},          {200, TS_CC_OUT_OF_RANGE}, {224, TS_CC_OUT_OF_RANGE},
        {225, TS_CC_USB_DEFAULT},   {635, TS_CC_USB_DEFAULT},  {636, TS_CC_OUT_OF_RANGE},
        {674, TS_CC_OUT_OF_RANGE},  {675, TS_CC_1A5},          {1185, TS_CC_1A5},
        {1186, TS_CC_OUT_OF_RANGE}, {1284, TS_CC_OUT_OF_RANGE}, {1285, TS_CC_3A0},
        {2065, TS_CC_3A0},          {2066, TS_CC_OUT_OF_RANGE},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        CHECK_EQ_I(ts_port_classify_mv(w[i].mv, TS_PORT_GUARD_MV), w[i].c);
    }
}

/* Every source the spec allows (Rp to 5 V or 3.3 V, or a current source, at
 * its tolerance corners) over a sink Rd of 5.1 kOhm +-10 % lands in its own
 * class with the front end's guard. */
TS_CASE(every_compliant_rp_rd_corner_lands_in_its_own_class)
{
    static const struct {
        double rp_ohm, rp_tol, pull_lo, pull_hi, src_ua, src_tol;
        ts_cc_class c;
    } s[] = {
        {56000, 0.20, 4.75, 5.5, 0, 0, TS_CC_USB_DEFAULT},
        {22000, 0.05, 4.75, 5.5, 0, 0, TS_CC_1A5},
        {10000, 0.05, 4.75, 5.5, 0, 0, TS_CC_3A0},
        {36000, 0.20, 3.135, 3.465, 0, 0, TS_CC_USB_DEFAULT},
        {12000, 0.05, 3.135, 3.465, 0, 0, TS_CC_1A5},
        {4700, 0.05, 3.135, 3.465, 0, 0, TS_CC_3A0},
        {0, 0, 0, 0, 80, 0.20, TS_CC_USB_DEFAULT},
        {0, 0, 0, 0, 180, 0.08, TS_CC_1A5},
        {0, 0, 0, 0, 330, 0.08, TS_CC_3A0},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        for (int corner = 0; corner < 8; corner++) {
            double rd = 5100.0 * ((corner & 1) ? 1.10 : 0.90);
            double v;
            if (s[i].rp_ohm > 0) {
                double rp = s[i].rp_ohm * ((corner & 2) ? 1.0 + s[i].rp_tol : 1.0 - s[i].rp_tol);
                double pull = (corner & 4) ? s[i].pull_hi : s[i].pull_lo;
                v = pull * rd / (rp + rd);
            } else {
                double ua = s[i].src_ua * ((corner & 2) ? 1.0 + s[i].src_tol : 1.0 - s[i].src_tol);
                v = ua * 1e-6 * rd;
            }
            uint32_t mv = (uint32_t)(v * 1000.0 + 0.5);
            CHECK_EQ_I(ts_port_classify_mv(mv, TS_PORT_GUARD_MV), s[i].c);
        }
    }
}

/* What a pin reads (mV) with the source's Rp over a termination of r_ohm: a pull-up of
 * rp_ohm to pull_v, or (rp_ohm 0) a current source of src_ua. */
static uint16_t cc_mv(double rp_ohm, double pull_v, double src_ua, double r_ohm)
{
    double v = rp_ohm > 0 ? pull_v * r_ohm / (rp_ohm + r_ohm) : src_ua * 1e-6 * r_ohm;
    return (uint16_t)(v * 1000.0 + 0.5);
}

/* VCONN on the cable's pin, as the probe reads it: at or above the ADC's 3.000 V
 * reference, the top count. */
#define VCONN_MV 2999u

/* A fresh port attached with cc1/cc2 held past tCCDebounce; its report in *st. */
static void attach(ts_port *p, uint16_t cc1, uint16_t cc2, uint64_t *t, ts_port_state *st)
{
    ts_port_init(p, ~0u);
    hold(p, cc1, cc2, t, 200);
    CHECK(ts_port_take_change(p, st));
}

TS_CASE(the_cables_ra_beside_rd_is_not_an_advertisement_whether_vconn_is_on_or_off)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    /* A 3.0 A current source (330 uA): the sink's 5.1 kOhm Rd on CC1 reads 1683 mV, the
     * e-marked cable's 1 kOhm Ra on CC2 330 mV, which read alone is Default USB. */
    uint16_t rd = cc_mv(0, 0, 330, 5100), ra = cc_mv(0, 0, 330, 1000);
    CHECK_EQ_U(ra, 330u);
    CHECK_EQ_I(ts_port_classify_mv(ra, TS_PORT_GUARD_MV), TS_CC_USB_DEFAULT);
    attach(&p, rd, ra, &t, &st);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC1);
    CHECK_EQ_I(st.cc1, TS_CC_3A0);
    CHECK_EQ_I(st.cc2, TS_CC_OPEN);
    CHECK_EQ_U(st.cc2_mv, 330u);
    /* 15 W, not the 4.5 W that "Rp on both pins, the lower offer" made of it. */
    CHECK_EQ_I(st.budget, TS_BUDGET_TYPE_C);
    CHECK_EQ_U(st.budget_mv, 5000u);
    CHECK_EQ_U(st.budget_ma, 3000u);
    CHECK(!st.pd_contract);
    /* The source turns VCONN on, then off again: nothing changes, nothing flaps. */
    hold(&p, rd, VCONN_MV, &t, 100);
    CHECK(!ts_port_take_change(&p, &st));
    ts_port_snapshot(&p, &st);
    CHECK_EQ_I(st.cc2, TS_CC_OPEN);
    CHECK_EQ_U(st.cc2_mv, VCONN_MV);
    hold(&p, rd, ra, &t, 100);
    CHECK(!ts_port_take_change(&p, &st));
    CHECK_EQ_U(p.counters.flaps, 0u);
    /* Flipped, with the plug's VCONN already on at the attach. */
    attach(&p, VCONN_MV, rd, &t, &st);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC2);
    CHECK_EQ_I(st.cc1, TS_CC_OPEN);
    /* The highest Ra reading a compliant 3.0 A source gives (4.7 kOhm -5 % to 3.3 V +5 %
     * over 1.2 kOhm: 734 mV, inside vRd-1.5 once guarded) is still the cable's. */
    ra = cc_mv(4700 * 0.95, 3.465, 0, 1200);
    CHECK_EQ_U(ra, 734u);
    CHECK_EQ_I(ts_port_classify_mv(ra, TS_PORT_GUARD_MV), TS_CC_1A5);
    attach(&p, ra, cc_mv(4700 * 0.95, 3.465, 0, 5100), &t, &st);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC2);
    CHECK_EQ_I(st.cc1, TS_CC_OPEN);
}

/* Every source the spec allows, at its tolerance corners, over the sink's Rd (+-10 %) on
 * one pin and the cable's Ra (800 Ohm .. 1.2 kOhm) on the other, VCONN off or on, either
 * orientation: the Rd pin is chosen and its class is the advertisement. */
TS_CASE(every_compliant_source_with_the_cables_ra_gives_the_rd_pins_class)
{
    static const struct {
        double rp_ohm, rp_tol, pull_lo, pull_hi, src_ua, src_tol;
        ts_cc_class c;
        uint32_t ma;
    } s[] = {
        {56000, 0.20, 4.75, 5.5, 0, 0, TS_CC_USB_DEFAULT, 0},
        {22000, 0.05, 4.75, 5.5, 0, 0, TS_CC_1A5, 1500},
        {10000, 0.05, 4.75, 5.5, 0, 0, TS_CC_3A0, 3000},
        {36000, 0.20, 3.135, 3.465, 0, 0, TS_CC_USB_DEFAULT, 0},
        {12000, 0.05, 3.135, 3.465, 0, 0, TS_CC_1A5, 1500},
        {4700, 0.05, 3.135, 3.465, 0, 0, TS_CC_3A0, 3000},
        {0, 0, 0, 0, 80, 0.20, TS_CC_USB_DEFAULT, 0},
        {0, 0, 0, 0, 180, 0.08, TS_CC_1A5, 1500},
        {0, 0, 0, 0, 330, 0.08, TS_CC_3A0, 3000},
    };
    uint64_t t = 0;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        for (int corner = 0; corner < 64; corner++) {
            double rd = 5100.0 * ((corner & 1) ? 1.10 : 0.90);
            double ra = (corner & 8) ? 1200.0 : 800.0;
            double rp = s[i].rp_ohm * ((corner & 2) ? 1.0 + s[i].rp_tol : 1.0 - s[i].rp_tol);
            double pull = (corner & 4) ? s[i].pull_hi : s[i].pull_lo;
            double ua = s[i].src_ua * ((corner & 2) ? 1.0 + s[i].src_tol : 1.0 - s[i].src_tol);
            uint16_t on_rd = cc_mv(rp, pull, ua, rd);
            uint16_t on_ra = (corner & 16) ? (uint16_t)VCONN_MV : cc_mv(rp, pull, ua, ra);
            bool flipped = (corner & 32) != 0;
            ts_port p;
            ts_port_state st;
            attach(&p, flipped ? on_ra : on_rd, flipped ? on_rd : on_ra, &t, &st);
            CHECK_EQ_I(st.advertisement, s[i].c);
            CHECK_EQ_I(st.active, flipped ? TS_ACTIVE_CC2 : TS_ACTIVE_CC1);
            CHECK_EQ_I(flipped ? st.cc1 : st.cc2, TS_CC_OPEN);
            CHECK_EQ_I(st.budget, TS_BUDGET_TYPE_C);
            CHECK_EQ_U(st.budget_ma, s[i].ma);
        }
    }
}

TS_CASE(rd_on_both_pins_is_both_with_the_lower_offer)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    /* A debug accessory: Rd on both pins under one 3.0 A Rp. */
    attach(&p, 1689, 1689, &t, &st);
    CHECK_EQ_I(st.active, TS_ACTIVE_BOTH);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    /* Rd under 3.0 A on one pin and a reading inside vRd-1.5 above any Ra on the other:
     * no orientation, and the lower offer binds. */
    attach(&p, 1689, 941, &t, &st);
    CHECK_EQ_I(st.active, TS_ACTIVE_BOTH);
    CHECK_EQ_I(st.advertisement, TS_CC_1A5);
    CHECK_EQ_U(st.budget_ma, 1500u);
    /* Under a 1.5 A Rp, Ra reads at most 0.35 V: the pin is the cable's. */
    attach(&p, 941, 330, &t, &st);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC1);
    CHECK_EQ_I(st.advertisement, TS_CC_1A5);
    CHECK_EQ_I(st.cc2, TS_CC_OPEN);
    /* ... and 0.40 V beside it fits neither Ra nor an Rd under that Rp: Default USB is
     * the lower offer of the two. */
    attach(&p, 941, 400, &t, &st);
    CHECK_EQ_I(st.active, TS_ACTIVE_BOTH);
    CHECK_EQ_I(st.advertisement, TS_CC_USB_DEFAULT);
}

/* SinkTxNG / SinkTxOK: a PD 3.0 source sets Rp to 1.5 A before each exchange it starts
 * (then waits tSinkTx, 16..20 ms, longer than tPDDebounce) and back to 3.0 A after it. */
static void sinktx_exchange(ts_port *p, uint64_t *t)
{
    hold(p, cc_mv(0, 0, 180, 5100), cc_mv(0, 0, 180, 1000), t, 40); /* SinkTxNG */
    hold(p, cc_mv(0, 0, 330, 5100), cc_mv(0, 0, 330, 1000), t, 40); /* SinkTxOK */
}

TS_CASE(under_a_pd_contract_rp_moves_are_not_budget_changes)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 330, 5100), cc_mv(0, 0, 330, 1000), &t, &st);
    CHECK_EQ_U(st.budget_ma, 3000u);
    /* Without a contract a move to 1.5 A that lasts is the port's new budget. */
    hold(&p, cc_mv(0, 0, 180, 5100), cc_mv(0, 0, 180, 1000), &t, 40);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_1A5);
    CHECK_EQ_U(st.budget_ma, 1500u);
    hold(&p, cc_mv(0, 0, 330, 5100), cc_mv(0, 0, 330, 1000), &t, 40);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.budget_ma, 3000u);
    /* The decoder reports a 9 V 3 A contract: reported once, the budget is its. */
    set_fixed(&p, 9000u, 3000u);
    CHECK(ts_port_take_change(&p, &st));
    CHECK(st.pd_contract);
    CHECK_EQ_I(st.budget, TS_BUDGET_PD);
    CHECK_EQ_U(st.budget_mv, 9000u);
    CHECK_EQ_U(st.budget_ma, 3000u);
    CHECK_EQ_U(st.contract.mv, 9000u);
    set_fixed(&p, 9000u, 3000u); /* the same again: nothing new */
    CHECK(!ts_port_take_change(&p, &st));
    /* Five exchanges the source starts: Rp to SinkTxNG and back, each past tPDDebounce. */
    uint32_t flaps = p.counters.flaps;
    for (int k = 0; k < 5; k++) {
        hold(&p, cc_mv(0, 0, 180, 5100), cc_mv(0, 0, 180, 1000), &t, 40);
        CHECK(!ts_port_take_change(&p, &st));
        ts_port_snapshot(&p, &st);
        CHECK_EQ_I(st.advertisement, TS_CC_1A5); /* the pin says what it reads ... */
        CHECK_EQ_I(st.budget, TS_BUDGET_PD);     /* ... and the budget stays the contract's */
        CHECK_EQ_U(st.budget_mv * st.budget_ma, 27000000u);
        hold(&p, cc_mv(0, 0, 330, 5100), cc_mv(0, 0, 330, 1000), &t, 40);
        CHECK(!ts_port_take_change(&p, &st));
    }
    CHECK_EQ_U(p.counters.flaps, flaps); /* they lasted: moves, not flaps */
    /* A new contract (15 V) is a change; the end of the contract is one, and from there
     * the advertisement is the budget again. */
    set_fixed(&p, 15000u, 3000u);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.budget_mv, 15000u);
    sinktx_exchange(&p, &t);
    CHECK(!ts_port_take_change(&p, &st));
    ts_port_clear_pd_contract(&p);
    CHECK(ts_port_take_change(&p, &st));
    CHECK(!st.pd_contract);
    CHECK_EQ_I(st.budget, TS_BUDGET_TYPE_C);
    CHECK_EQ_U(st.budget_ma, 3000u);
    CHECK_EQ_U(st.contract.mv, 0u);
    ts_port_clear_pd_contract(&p);
    CHECK(!ts_port_take_change(&p, &st));
}

TS_CASE(a_source_that_advertised_default_usb_moves_to_sinktxok_under_its_contract)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 80, 5100), 20, &t, &st);
    CHECK_EQ_I(st.advertisement, TS_CC_USB_DEFAULT);
    set_fixed(&p, 5000u, 3000u); /* e.g. a USB4 drive's 5 V contract */
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.budget_ma, 3000u);
    hold(&p, cc_mv(0, 0, 330, 5100), 20, &t, 40); /* SinkTxOK */
    CHECK(!ts_port_take_change(&p, &st));
    sinktx_exchange(&p, &t);
    CHECK(!ts_port_take_change(&p, &st));
}

TS_CASE(vbus_above_vsafe5v_is_a_contract_whose_terms_are_unknown)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 330, 5100), 20, &t, &st);
    for (int i = 0; i < 20; i++, t += 1000u) {
        ts_port_vbus(&p, 9000u, t);
    }
    CHECK(ts_port_take_change(&p, &st));
    CHECK(st.pd_contract);
    CHECK_EQ_I(st.budget, TS_BUDGET_PD_UNKNOWN);
    CHECK_EQ_U(st.budget_ma, 0u);
    CHECK_EQ_U(st.contract.mv, 0u);
    sinktx_exchange(&p, &t);
    CHECK(!ts_port_take_change(&p, &st));
    /* The decoder knows more: its terms are the budget. */
    set_fixed(&p, 9000u, 2000u);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.budget, TS_BUDGET_PD);
    CHECK_EQ_U(st.budget_ma, 2000u);
}

/* USB PD R3.x 6.8.1 / 7.1.1: a Soft_Reset leaves the supply as it was and sends both
 * policy engines back to the capabilities; no explicit contract until the next PS_RDY. */
TS_CASE(a_soft_reset_keeps_pd_in_force_with_its_terms_unknown_until_renegotiated)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 330, 5100), cc_mv(0, 0, 330, 1000), &t, &st);
    set_fixed(&p, 5000u, 3000u);
    CHECK(ts_port_take_change(&p, &st));
    CHECK(st.has_contract);
    CHECK_EQ_U(st.contract.mw, 15000u);
    ts_port_pd_renegotiating(&p);
    CHECK(ts_port_take_change(&p, &st));
    CHECK(st.pd_contract);
    CHECK(!st.has_contract);
    CHECK_EQ_U(st.contract.mv, 0u);
    CHECK_EQ_I(st.budget, TS_BUDGET_PD_UNKNOWN);
    CHECK_EQ_U(st.budget_ma, 0u);
    /* Rp moves while it renegotiates are collision avoidance, as under the contract. */
    sinktx_exchange(&p, &t);
    CHECK(!ts_port_take_change(&p, &st));
    ts_port_pd_renegotiating(&p); /* again: nothing new */
    CHECK(!ts_port_take_change(&p, &st));
    set_fixed(&p, 5000u, 3000u);
    CHECK(ts_port_take_change(&p, &st));
    CHECK(st.has_contract);
    CHECK_EQ_I(st.budget, TS_BUDGET_PD);
    CHECK_EQ_U(st.budget_ma, 3000u);
}

TS_CASE(the_same_terms_agreed_again_are_no_change_and_keep_their_time)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 330, 5100), 20, &t, &st);
    ts_port_contract c;
    memset(&c, 0, sizeof c);
    c.mv = 9000u; /* a PPS sink asks for 9.00 V 2 A, then again every few seconds */
    c.mv_min = 3300u;
    c.mv_max = 11000u;
    c.ma = c.ma_max = 2000u;
    c.mw = 18000u;
    c.supply = TS_SUPPLY_PPS;
    c.position = 4;
    c.agreed_us = 1000000u;
    ts_port_set_pd_contract(&p, &c);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.contract.agreed_us, 1000000u);
    c.agreed_us = 11000000u;
    ts_port_set_pd_contract(&p, &c);
    CHECK(!ts_port_take_change(&p, &st));
    ts_port_snapshot(&p, &st);
    CHECK_EQ_U(st.contract.agreed_us, 1000000u);
    c.mv = 8800u; /* a new voltage is a new contract */
    c.mw = 17600u;
    c.agreed_us = 21000000u;
    ts_port_set_pd_contract(&p, &c);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.contract.mv, 8800u);
    CHECK_EQ_U(st.budget_mv, 8800u);
    CHECK_EQ_U(st.contract.agreed_us, 21000000u);
}

TS_CASE(a_variable_or_battery_contract_is_budgeted_at_its_range)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 330, 5100), 20, &t, &st);
    ts_port_contract c;
    memset(&c, 0, sizeof c);
    c.mv_min = 5000u;
    c.mv_max = 20000u;
    c.ma = 1500u;
    c.mw = 30000u;
    c.supply = TS_SUPPLY_VARIABLE;
    ts_port_set_pd_contract(&p, &c);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.budget_mv, 20000u);
    CHECK_EQ_U(st.budget_ma, 1500u);
    c.supply = TS_SUPPLY_BATTERY;
    c.ma = 8000u;
    c.mw = 40000u;
    ts_port_set_pd_contract(&p, &c);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_U(st.budget_mv, 5000u);
    CHECK_EQ_U(st.budget_ma, 8000u);
}

TS_CASE(a_detach_ends_the_contract)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attach(&p, cc_mv(0, 0, 330, 5100), cc_mv(0, 0, 330, 1000), &t, &st);
    set_fixed(&p, 20000u, 5000u);
    CHECK(ts_port_take_change(&p, &st));
    hold(&p, 20, 20, &t, 16); /* unplugged: both pins open for tPDDebounce */
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_OPEN);
    CHECK(!st.pd_contract);
    CHECK_EQ_I(st.budget, TS_BUDGET_NONE);
    /* Plugged again without a contract: the advertisement is the budget. */
    hold(&p, cc_mv(0, 0, 180, 5100), 20, &t, 151);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.budget, TS_BUDGET_TYPE_C);
    CHECK_EQ_U(st.budget_ma, 1500u);
}

TS_CASE(attach_waits_for_tccdebounce_and_gives_the_orientation)
{
    ts_port p;
    ts_port_init(&p, ~0u);
    ts_port_state st;
    uint64_t t = 0;
    hold(&p, 40, 30, &t, 20);            /* nothing attached */
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_OPEN);
    CHECK_EQ_I(st.active, TS_ACTIVE_NONE);
    /* A 3.0 A source on CC2 (10k to 5 V over 5.1k: 1689 mV): flipped plug. */
    uint64_t attach = t;
    hold(&p, 40, 1689, &t, 149);
    CHECK(!ts_port_take_change(&p, &st)); /* 149 ms < tCCDebounce */
    hold(&p, 40, 1689, &t, 2);
    CHECK(ts_port_take_change(&p, &st));
    CHECK(t - attach >= TS_PORT_CC_DEBOUNCE_US);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC2);
    CHECK_EQ_I(st.cc1, TS_CC_OPEN);
    CHECK_EQ_U(st.cc2_mv, 1689u);
    CHECK_EQ_U(p.counters.flaps, 0u);
    /* Unplugged: back to open after tPDDebounce, not tCCDebounce. */
    hold(&p, 40, 30, &t, 16);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_OPEN);
}

TS_CASE(an_advertisement_change_holds_tpddebounce_and_a_short_one_is_a_counted_flap)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attached(&p, 1689, 20, &t);
    ts_port_snapshot(&p, &st);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC1);
    /* 5 ms at 1.5 A (a hub re-budgeting for a moment): not reported. */
    hold(&p, 941, 20, &t, 5);
    hold(&p, 1689, 20, &t, 50);
    CHECK(!ts_port_take_change(&p, &st));
    CHECK_EQ_U(p.counters.flaps, 1u);
    /* Flapping between classes every 3 ms for 60 ms: nothing reported, each
     * excursion that did not last counted once. */
    for (int k = 0; k < 10; k++) {
        hold(&p, 941, 20, &t, 3);
        hold(&p, 1689, 20, &t, 3);
    }
    CHECK(!ts_port_take_change(&p, &st));
    CHECK_EQ_U(p.counters.flaps, 11u);
    /* 1.5 A for good: reported once tPDDebounce (15 ms) has passed. */
    hold(&p, 941, 20, &t, 15);
    CHECK(!ts_port_take_change(&p, &st));
    hold(&p, 941, 20, &t, 1);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_1A5);
    CHECK_EQ_U(p.counters.changes, 2u);
}

TS_CASE(a_bmc_burst_on_cc_changes_nothing_and_is_counted)
{
    ts_port p;
    ts_port_state st;
    uint64_t t = 0;
    attached(&p, 1689, 0, &t);
    /* A PD message: BMC at 300 kbit/s swings CC between ~0 and vSwing
     * (1.05..1.2 V) for ~1 ms; windows that catch it spread over 1 V. */
    for (int w = 0; w < 4; w++) {
        uint16_t a[8], b[8];
        for (int i = 0; i < 8; i++) {
            a[i] = (uint16_t)((i + w) % 2 ? 1125 : 40);
            b[i] = 0;
        }
        ts_port_cc_window(&p, a, b, 8u, t);
        t += 250u;
    }
    CHECK_EQ_U(p.counters.noisy_windows, 4u);
    /* Through the RC filter the burst's mean (~560 mV, "default USB") shows
     * as a steady level for 2 ms: shorter than tPDDebounce. */
    hold(&p, 560, 0, &t, 2);
    hold(&p, 1689, 0, &t, 30);
    CHECK(!ts_port_take_change(&p, &st));
    ts_port_snapshot(&p, &st);
    CHECK_EQ_I(st.advertisement, TS_CC_3A0);
    CHECK_EQ_U(p.counters.flaps, 1u);
}

TS_CASE(a_reading_that_fits_no_range_is_reported_with_its_millivolts)
{
    ts_port p;
    ts_port_init(&p, ~0u);
    ts_port_state st;
    uint64_t t = 0;
    hold(&p, 650, 0, &t, 151); /* between vRd-USB and vRd-1.5 */
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_OUT_OF_RANGE);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC1);
    CHECK_EQ_U(st.cc1_mv, 650u);
    /* VCONN on the other pin (an e-marked cable) does not hide a valid Rp: that pin
     * is the cable's, open as the sink sees it, with its millivolts kept. */
    hold(&p, 941, 3300, &t, 151);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.advertisement, TS_CC_1A5);
    CHECK_EQ_I(st.active, TS_ACTIVE_CC1);
    CHECK_EQ_I(st.cc2, TS_CC_OPEN);
    CHECK_EQ_U(st.cc2_mv, 3300u);
}

TS_CASE(vbus_above_vsafe5v_is_a_pd_contract_and_its_minimum_is_kept)
{
    CHECK_EQ_I(ts_port_vbus_level(4749), TS_VBUS_LOW);
    CHECK_EQ_I(ts_port_vbus_level(4750), TS_VBUS_SAFE5V);
    CHECK_EQ_I(ts_port_vbus_level(5500), TS_VBUS_SAFE5V);
    CHECK_EQ_I(ts_port_vbus_level(5501), TS_VBUS_ABOVE);
    ts_port p;
    ts_port_init(&p, ~0u);
    ts_port_state st;
    ts_port_vbus(&p, 5050, 0);
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.vbus, TS_VBUS_SAFE5V);
    /* A 2 ms sag to 4.5 V: below vSafe5V but shorter than tPDDebounce, so
     * the level stays; the minimum still says 4.5 V. */
    uint64_t t = 1000;
    for (int i = 0; i < 2; i++, t += 1000) {
        ts_port_vbus(&p, 4500, t);
    }
    for (int i = 0; i < 20; i++, t += 1000) {
        ts_port_vbus(&p, 5050, t);
    }
    CHECK(!ts_port_take_change(&p, &st));
    ts_port_snapshot(&p, &st);
    CHECK_EQ_I(st.vbus, TS_VBUS_SAFE5V);
    CHECK_EQ_U(st.vbus_min_mv, 4500u);
    ts_port_vbus(&p, 5040, t);
    ts_port_snapshot(&p, &st);
    CHECK_EQ_U(st.vbus_min_mv, 5040u); /* restarted by the previous report */
    /* 9 V for 20 ms: a contract. */
    for (int i = 0; i < 20; i++, t += 1000) {
        ts_port_vbus(&p, 9000, t);
    }
    CHECK(ts_port_take_change(&p, &st));
    CHECK_EQ_I(st.vbus, TS_VBUS_ABOVE);
}

/* The probe: PortStatus on change and on request, DeviceInfo.cc_sensing and
 * the batch's VBUS minimum. */
static void rig_with_cc(void)
{
    rig_init(&g);
    g.probe.config.cc_sensing = true;
}

static void probe_cc(uint16_t cc1, uint16_t cc2, uint32_t ms)
{
    uint16_t a[4] = {cc1, cc1, cc1, cc1}, b[4] = {cc2, cc2, cc2, cc2};
    for (uint32_t i = 0; i < ms; i++) {
        ts_probe_port_cc(&g.probe, a, b, 4u);
        ts_probe_service(&g.probe);
        g.clock_us += 1000u;
    }
}

TS_CASE(probe_sends_port_status_on_change_and_on_request)
{
    rig_with_cc();
    rig_send(&g, &(throttlescope_v1_HostToProbe){
                     .request_id = 1, .which_cmd = throttlescope_v1_HostToProbe_get_info_tag});
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(info));
    CHECK_EQ_U(msg.msg.info.protocol_version, 3u);
    CHECK(msg.msg.info.cc_sensing);
    /* Attach at 1.5 A on CC1: the port reads open (CC2 settles first), then
     * one PortStatus after tCCDebounce, none before. */
    probe_cc(941, 20, 140);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK_EQ_I(msg.msg.port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN);
    CHECK(!rig_next(&g, &msg));
    probe_cc(941, 20, 20);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    const throttlescope_v1_PortStatus *ps = &msg.msg.port;
    CHECK_EQ_I(ps->advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_1A5);
    CHECK_EQ_I(ps->active_cc, throttlescope_v1_ActiveCc_ACTIVE_CC_CC1);
    CHECK_EQ_U(ps->cc1_mv, 941u);
    CHECK_EQ_U(ps->cc2_mv, 20u);
    CHECK(!ps->requested);
    CHECK(!ps->pd_contract);
    CHECK_EQ_I(ps->vbus_level, throttlescope_v1_VbusLevel_VBUS_LEVEL_UNKNOWN);
    CHECK(!rig_next(&g, &msg)); /* sent once */
    probe_cc(941, 20, 100);
    CHECK(!rig_next(&g, &msg));
    /* On request, with the VBUS the samples carried (the rig's chip: 5.0 V). */
    throttlescope_v1_HostToProbe start = rig_start(1000, 32, 4);
    rig_send(&g, &start);
    while (rig_next(&g, &msg)) {
    }
    rig_run(&g, 64);
    ts_probe_service(&g.probe);
    uint32_t batches = 0;
    while (rig_next(&g, &msg)) {
        if (msg.which_msg == TAG(batch)) {
            batches++;
            CHECK(msg.msg.batch.has_vbus_min);
            CHECK_NEAR(ts_ina228_vbus_v(msg.msg.batch.vbus_min), 5.0, 2e-4);
        }
    }
    CHECK_EQ_U(batches, 2u);
    rig_send(&g, &(throttlescope_v1_HostToProbe){
                     .request_id = 2,
                     .which_cmd = throttlescope_v1_HostToProbe_get_port_status_tag});
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK(ps->requested);
    CHECK_EQ_I(ps->advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_1A5);
    CHECK_EQ_I(ps->vbus_level, throttlescope_v1_VbusLevel_VBUS_LEVEL_SAFE5V);
    CHECK_EQ_U(ps->vbus_min_mv, 5000u);
    CHECK_EQ_U(ps->changes, 2u);
}

TS_CASE(probe_reports_the_decoders_contract_and_no_rp_move_under_it)
{
    rig_with_cc();
    probe_cc(1683, 330, 140); /* 3.0 A on CC1, the cable's Ra on CC2 */
    CHECK(rig_next(&g, &msg)); /* open while CC1's attach debounces */
    CHECK_EQ_I(msg.msg.port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN);
    probe_cc(1683, 330, 20);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK_EQ_I(msg.msg.port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0);
    CHECK_EQ_I(msg.msg.port.active_cc, throttlescope_v1_ActiveCc_ACTIVE_CC_CC1);
    CHECK_EQ_I(msg.msg.port.cc2, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_OPEN);
    CHECK(!msg.msg.port.pd_contract);
    CHECK(!rig_next(&g, &msg));
    ts_pd_contract c;
    memset(&c, 0, sizeof c);
    c.valid = true;
    c.kind = TS_PD_FIXED;
    c.position = 1;
    c.mv = c.mv_min = c.mv_max = 5000u;
    c.ma = c.ma_max = 3000u;
    c.mw = 15000u;
    c.generation = 1;
    ts_probe_pd_contract(&g.probe, &c, 1234567u);
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK(msg.msg.port.pd_contract);
    CHECK(msg.msg.port.has_contract);
    CHECK_EQ_U(msg.msg.port.contract.mv, 5000u);
    CHECK_EQ_U(msg.msg.port.contract.ma, 3000u);
    CHECK_EQ_U(msg.msg.port.contract.mw, 15000u);
    CHECK_EQ_I(msg.msg.port.contract.supply, throttlescope_v1_PdSupply_PD_SUPPLY_FIXED);
    CHECK_EQ_U(msg.msg.port.contract.object_position, 1u);
    CHECK_EQ_U(msg.msg.port.contract.agreed_us, 1234567u);
    CHECK(!rig_next(&g, &msg));
    for (int k = 0; k < 3; k++) {
        probe_cc(941, 180, 40); /* SinkTxNG */
        probe_cc(1683, 330, 40); /* SinkTxOK */
    }
    CHECK(!rig_next(&g, &msg));
    /* A Soft_Reset: PD in force, its terms unknown until renegotiated. */
    memset(&c, 0, sizeof c);
    c.end = TS_PD_END_SOFT_RESET;
    c.generation = 2;
    ts_probe_pd_contract(&g.probe, &c, 2000000u);
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK(msg.msg.port.pd_contract);
    CHECK(!msg.msg.port.has_contract);
    /* A Hard Reset ends it. */
    c.end = TS_PD_END_HARD_RESET;
    c.generation = 3;
    ts_probe_pd_contract(&g.probe, &c, 2100000u);
    ts_probe_service(&g.probe);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK(!msg.msg.port.pd_contract);
    CHECK(!msg.msg.port.has_contract);
    CHECK_EQ_I(msg.msg.port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0);
}

TS_CASE(a_refused_port_status_is_sent_when_the_link_has_room)
{
    rig_with_cc();
    g.link_full = true;
    probe_cc(1689, 0, 160);
    CHECK(g.refused > 0u);
    g.link_full = false;
    probe_cc(1689, 0, 1);
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK_EQ_I(msg.msg.port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0);
    CHECK(!rig_next(&g, &msg));
}

TS_CASE(a_probe_without_cc_sensing_never_volunteers_port_status)
{
    rig_init(&g);
    probe_cc(1689, 0, 300);
    CHECK(!rig_next(&g, &msg));
    rig_send(&g, &(throttlescope_v1_HostToProbe){
                     .request_id = 3,
                     .which_cmd = throttlescope_v1_HostToProbe_get_port_status_tag});
    CHECK(rig_next(&g, &msg));
    CHECK_EQ_I(msg.which_msg, TAG(port));
    CHECK(msg.msg.port.requested);
}

static const ts_test_case cases[] = {
    TS_ENTRY(classification_at_and_around_every_specification_edge),
    TS_ENTRY(every_compliant_rp_rd_corner_lands_in_its_own_class),
    TS_ENTRY(the_cables_ra_beside_rd_is_not_an_advertisement_whether_vconn_is_on_or_off),
    TS_ENTRY(every_compliant_source_with_the_cables_ra_gives_the_rd_pins_class),
    TS_ENTRY(rd_on_both_pins_is_both_with_the_lower_offer),
    TS_ENTRY(under_a_pd_contract_rp_moves_are_not_budget_changes),
    TS_ENTRY(a_source_that_advertised_default_usb_moves_to_sinktxok_under_its_contract),
    TS_ENTRY(vbus_above_vsafe5v_is_a_contract_whose_terms_are_unknown),
    TS_ENTRY(a_soft_reset_keeps_pd_in_force_with_its_terms_unknown_until_renegotiated),
    TS_ENTRY(the_same_terms_agreed_again_are_no_change_and_keep_their_time),
    TS_ENTRY(a_variable_or_battery_contract_is_budgeted_at_its_range),
    TS_ENTRY(a_detach_ends_the_contract),
    TS_ENTRY(attach_waits_for_tccdebounce_and_gives_the_orientation),
    TS_ENTRY(an_advertisement_change_holds_tpddebounce_and_a_short_one_is_a_counted_flap),
    TS_ENTRY(a_bmc_burst_on_cc_changes_nothing_and_is_counted),
    TS_ENTRY(a_reading_that_fits_no_range_is_reported_with_its_millivolts),
    TS_ENTRY(vbus_above_vsafe5v_is_a_pd_contract_and_its_minimum_is_kept),
    TS_ENTRY(probe_sends_port_status_on_change_and_on_request),
    TS_ENTRY(probe_reports_the_decoders_contract_and_no_rp_move_under_it),
    TS_ENTRY(a_refused_port_status_is_sent_when_the_link_has_room),
    TS_ENTRY(a_probe_without_cc_sensing_never_volunteers_port_status),
};
TS_TEST_MAIN(cases)
