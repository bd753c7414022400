/* The PD contract from the CC line to the wire: a real capture's edges
 * (fixtures/usb-pd/) through the decoder (pd_decode.c), the probe's port
 * (ts_probe_pd_contract, port.c) and the encoded PortStatus, decoded back as a
 * host does. The contracts the wire carries must be the ones the capture
 * negotiated: each Request the source accepted and then announced PS_RDY
 * for, read here from sigrok's decoding of the same file (its header and
 * data objects, with the USB PD specification's field layout), once per
 * change of terms, stamped with the PS_RDY's first edge on the probe clock. */
#include "probe_rig.h"

#include "pd_fixture.h"
#include "throttlescope/pd_decode.h"

#define TAG(m) throttlescope_v1_ProbeToHost_##m##_tag
/** Probe time of the capture's sample 0, us (the rig's clock starts at 1 s). */
#define BASE_US 1000000u

static probe_rig g;

/* The decoder's caller, as the probe's link thread is: after each message, a
 * changed contract goes to the port and the probe sends what changed. */
typedef struct tap {
    ts_pd_decoder dec;
    uint32_t seen;
} tap;
static tap line;

static uint64_t probe_us(uint64_t ticks)
{
    return BASE_US + ticks * 1000000u / line.dec.cfg.tick_hz;
}

static void on_msg(void *ctx, const ts_pd_msg *m)
{
    tap *t = (tap *)ctx;
    ts_pd_contract c;
    g.clock_us = probe_us(m->t);
    if (ts_pd_contract_changed(&t->dec, &t->seen, &c)) {
        ts_probe_pd_contract(&g.probe, &c, probe_us(c.t));
    }
    ts_probe_service(&g.probe);
}

/* One contract as the wire says it, or as the capture negotiated it. */
typedef struct terms {
    bool in_force;
    uint32_t mv, ma, mw, position, supply;
    uint64_t agreed_us;
} terms;

#define MAX_CHANGES 32

/* Every PortStatus the probe sent for the capture. */
static size_t wire_contracts(const char *name, terms *out)
{
    rig_init(&g);
    g.probe.config.cc_sensing = true;
    g.probe.config.pd_decoding = true;
    memset(&line, 0, sizeof line);
    ts_pd_config cfg = {0};
    cfg.on_msg = on_msg;
    cfg.ctx = &line;
    feed_fixture(name, &line.dec, &cfg);
    size_t n = 0;
    throttlescope_v1_ProbeToHost msg;
    while (rig_next(&g, &msg)) {
        CHECK_EQ_I(msg.which_msg, TAG(port));
        const throttlescope_v1_PortStatus *ps = &msg.msg.port;
        CHECK(!ps->requested);
        CHECK(n < MAX_CHANGES);
        terms *t = &out[n++];
        memset(t, 0, sizeof *t);
        t->in_force = ps->has_contract;
        CHECK(ps->pd_contract == ps->has_contract); /* no Soft_Reset in these captures */
        if (ps->has_contract) {
            t->mv = ps->contract.mv;
            t->ma = ps->contract.ma;
            t->mw = ps->contract.mw;
            t->position = ps->contract.object_position;
            t->supply = ps->contract.supply;
            t->agreed_us = ps->contract.agreed_us;
            CHECK_EQ_U(ps->contract.mv_min, ps->contract.mv);
            CHECK_EQ_U(ps->contract.mv_max, ps->contract.mv);
        }
    }
    return n;
}

/* The contracts sigrok's decoding of the capture says were made (SOP only):
 * Source_Capabilities from the source, a Request from the sink, Accept and
 * then PS_RDY from the source; an accepted PR_Swap or a Hard Reset ends one.
 * Only changes of terms count, as the port reports them. */
static size_t negotiated(const char *name, terms *out)
{
    read_sigrok(name);
    edge_file ef = feed_fixture(name, NULL, NULL);
    uint32_t caps[TS_PD_MAX_OBJECTS] = {0};
    uint32_t rdo = 0;
    enum { IDLE, REQUESTED, ACCEPTED, SWAP } state = IDLE;
    size_t n = 0;
    terms now;
    memset(&now, 0, sizeof now);
    for (size_t i = 0; i < nwant; i++) {
        const sr_msg *w = &want[i];
        terms next = now;
        if (w->sop == TS_PD_HARD_RESET) {
            memset(&next, 0, sizeof next);
            state = IDLE;
        } else if (w->sop == TS_PD_SOP && w->has_header && !w->bad_crc) {
            unsigned type = w->header & 0x1Fu;
            bool source = (w->header >> 8) & 1u;
            bool data = w->nobj > 0;
            if (data && type == 1u && source) { /* Source_Capabilities */
                memcpy(caps, w->obj, sizeof caps);
                state = IDLE;
            } else if (data && type == 2u && !source) { /* Request */
                rdo = w->obj[0];
                state = REQUESTED;
            } else if (!data && type == 10u) { /* PR_Swap */
                state = SWAP;
            } else if (!data && type == 3u) { /* Accept */
                if (state == SWAP) {
                    memset(&next, 0, sizeof next);
                    state = IDLE;
                } else if (state == REQUESTED && source) {
                    state = ACCEPTED;
                }
            } else if (!data && (type == 4u || type == 12u)) { /* Reject, Wait */
                state = IDLE;
            } else if (!data && type == 6u && source && state == ACCEPTED) { /* PS_RDY */
                uint32_t pos = rdo >> 28;
                CHECK(pos >= 1u && pos <= TS_PD_MAX_OBJECTS);
                uint32_t pdo = caps[pos - 1u];
                CHECK_EQ_U(pdo >> 30, 0u); /* these captures contract Fixed supplies */
                next.in_force = true;
                next.mv = ((pdo >> 10) & 0x3FFu) * 50u;
                next.ma = ((rdo >> 10) & 0x3FFu) * 10u; /* operating current */
                next.mw = next.mv * next.ma / 1000u;
                next.position = pos;
                next.supply = throttlescope_v1_PdSupply_PD_SUPPLY_FIXED;
                next.agreed_us = BASE_US + w->start * 1000000u / ef.clock_hz;
                state = IDLE;
            }
        }
        bool same = next.in_force == now.in_force && next.mv == now.mv && next.ma == now.ma &&
                    next.position == now.position;
        if (!same) {
            CHECK(n < MAX_CHANGES);
            out[n++] = next;
        }
        now = same ? now : next;
    }
    return n;
}

/* The wire's contracts equal the capture's, in order; returns how many. */
static size_t check_capture(const char *name)
{
    static terms wire[MAX_CHANGES], want_terms[MAX_CHANGES];
    size_t nw = wire_contracts(name, wire);
    size_t nn = negotiated(name, want_terms);
    for (size_t i = 0; i < nw; i++) {
        printf("%s: PortStatus %zu: %s %u mV %u mA %u mW, object %u, agreed at %.3f ms\n", name,
               i, wire[i].in_force ? "contract" : "none", (unsigned)wire[i].mv,
               (unsigned)wire[i].ma, (unsigned)wire[i].mw, (unsigned)wire[i].position,
               (double)(wire[i].agreed_us - (wire[i].in_force ? BASE_US : 0u)) / 1000.0);
    }
    CHECK_EQ_U(nw, nn);
    for (size_t i = 0; i < nn; i++) {
        CHECK_EQ_U(wire[i].in_force, want_terms[i].in_force);
        CHECK_EQ_U(wire[i].mv, want_terms[i].mv);
        CHECK_EQ_U(wire[i].ma, want_terms[i].ma);
        CHECK_EQ_U(wire[i].mw, want_terms[i].mw);
        CHECK_EQ_U(wire[i].position, want_terms[i].position);
        CHECK_EQ_U(wire[i].supply, want_terms[i].supply);
        /* The PS_RDY's first edge, to a tick of the capture's clock. */
        CHECK_NEAR((double)wire[i].agreed_us, (double)want_terms[i].agreed_us, 1.0);
    }
    return nn;
}

/* The README's Pixel with Google's 20 V supply: 5 V 3 A first, then 20 V 3 A (60 W). */
TS_CASE(pixel_20v_supply_contract_reaches_the_wire)
{
    static terms wire[MAX_CHANGES];
    CHECK_EQ_U(check_capture("pixel_2015-power_supply_20V.cc1"), 2u);
    wire_contracts("pixel_2015-power_supply_20V.cc1", wire);
    CHECK_EQ_U(wire[0].mv, 5000u);
    CHECK_EQ_U(wire[0].ma, 3000u);
    CHECK_EQ_U(wire[1].mv, 20000u);
    CHECK_EQ_U(wire[1].ma, 3000u);
    CHECK_EQ_U(wire[1].mw, 60000u);
    CHECK_EQ_U(wire[1].position, 3u);
    CHECK_NEAR((double)(wire[1].agreed_us - BASE_US) / 1000.0, 2446.964, 0.001);
}

/* The PD 3.0 supply that offers a PPS APDO; the ThinkPad takes its 20 V 2.25 A. */
TS_CASE(pps_supply_contract_reaches_the_wire)
{
    static terms wire[MAX_CHANGES];
    CHECK_EQ_U(check_capture("thinkpad_yoga_370-aukey_45w.cc2"), 1u);
    wire_contracts("thinkpad_yoga_370-aukey_45w.cc2", wire);
    CHECK_EQ_U(wire[0].mv, 20000u);
    CHECK_EQ_U(wire[0].ma, 2250u);
    CHECK_EQ_U(wire[0].mw, 45000u);
    CHECK_EQ_U(wire[0].position, 5u);
    CHECK_EQ_U(wire[0].supply, throttlescope_v1_PdSupply_PD_SUPPLY_FIXED);
}

/* A trigger module stepping through 5, 9, 12, 15, 20 and 5 V: each new contract is a
 * change on the wire; the same 5 V 3 A agreed again after new capabilities is not. */
TS_CASE(each_contract_change_of_a_capture_is_one_port_status)
{
    static terms wire[MAX_CHANGES];
    CHECK_EQ_U(check_capture("zy12pds_sink_module-anker_powerbank.cc1"), 6u);
    wire_contracts("zy12pds_sink_module-anker_powerbank.cc1", wire);
    const uint32_t mv[6] = {5000u, 9000u, 12000u, 15000u, 20000u, 5000u};
    const uint32_t ma[6] = {3000u, 3000u, 2500u, 2000u, 1250u, 3000u};
    for (int i = 0; i < 6; i++) {
        CHECK_EQ_U(wire[i].mv, mv[i]);
        CHECK_EQ_U(wire[i].ma, ma[i]);
        CHECK(i == 0 || wire[i].agreed_us > wire[i - 1].agreed_us);
    }
}

/* A dock's power role swap ends the contract (a PortStatus without one); the new
 * source's 12 V 2 A is the next. */
TS_CASE(a_power_role_swap_in_a_capture_ends_the_contract_on_the_wire)
{
    static terms wire[MAX_CHANGES];
    size_t n = check_capture("thinkpad_yoga_370-passtrough_dongle-anker_powerbank.cc2");
    wire_contracts("thinkpad_yoga_370-passtrough_dongle-anker_powerbank.cc2", wire);
    CHECK(n >= 3u);
    CHECK(!wire[n - 2].in_force);
    CHECK_EQ_U(wire[n - 1].mv, 12000u);
    CHECK_EQ_U(wire[n - 1].ma, 2000u);
}

/* Every other capture: whatever it negotiated, the wire says the same. */
TS_CASE(every_captures_contracts_reach_the_wire)
{
    const char *names[] = {
        "macbook_2015-apple_av_hdmi.cc1",
        "macbook_2015-apple_power_brick.cc1",
        "pixel_2015-hdmi_dongle.cc2",
        "thinkpad_yoga_370-anker_powerbank-both_orientations.cc1",
        "thinkpad_yoga_370-anker_powerbank-both_orientations.cc2",
        "zy12pds_sink_module-65w_noname_supply.cc1",
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        total += check_capture(names[i]);
    }
    CHECK(total >= 6u);
}

static const ts_test_case cases[] = {
    TS_ENTRY(pixel_20v_supply_contract_reaches_the_wire),
    TS_ENTRY(pps_supply_contract_reaches_the_wire),
    TS_ENTRY(each_contract_change_of_a_capture_is_one_port_status),
    TS_ENTRY(a_power_role_swap_in_a_capture_ends_the_contract_on_the_wire),
    TS_ENTRY(every_captures_contracts_reach_the_wire),
};

int main(int argc, char **argv)
{
    return ts_test_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
