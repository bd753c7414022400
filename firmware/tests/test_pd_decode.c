/* USB PD decoder (core/src/pd_decode.c).
 *
 * Truth from outside: fixtures/usb-pd/ holds the CC edges of real captures
 * from sigrok-dumps and sigrok's usb_power_delivery decoding of each
 * (recorded). Every message must come out as sigrok decoded it: time, SOP,
 * header, data objects, CRC, type, and the PDO/RDO/VDM fields sigrok prints.
 * The synthetic cases encode messages themselves (BMC at 270..330 kbit/s with
 * jitter) for what the captures do not hold: resets, CRC failures, contracts
 * of every supply kind. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <dirent.h>

#include "pd_fixture.h"
#include "throttlescope/pd_decode.h"

/* ------------------------------------------------------------------ */
/* Collect decoded messages through the callback. */

static ts_pd_msg got[MAX_MSGS];
static size_t ngot;
static void collect(void *ctx, const ts_pd_msg *m)
{
    (void)ctx;
    CHECK(ngot < MAX_MSGS);
    got[ngot++] = *m;
}

/* ------------------------------------------------------------------ */
/* What sigrok prints for a message, rebuilt from our decoding: its type
 * names (4-bit type, as sigrok reads it) and payload texts. */

static const char *sigrok_control[] = {
    "reserved", "GOOD CRC", "GOTO MIN", "ACCEPT", "REJECT", "PING", "PS RDY",
    "GET SOURCE CAP", "GET SINK CAP", "DR SWAP", "PR SWAP", "VCONN SWAP", "WAIT",
    "SOFT RESET", "reserved", "reserved",
};
static const char *sigrok_data(unsigned t)
{
    switch (t) {
    case 1: return "SOURCE CAP";
    case 2: return "REQUEST";
    case 3: return "BIST";
    case 4: return "SINK CAP";
    case 5: return "Battery_Status";
    case 6: return "Alert";
    case 7: return "Get_Country_Info";
    case 15: return "VDM";
    default: return "DAT???";
    }
}

/* Our kind as sigrok names it (checks ts_pd_msg_kind against sigrok's table). */
static const char *kind_as_sigrok(ts_pd_kind k)
{
    switch (k) {
    case TS_PD_K_GOODCRC: return "GOOD CRC";
    case TS_PD_K_GOTOMIN: return "GOTO MIN";
    case TS_PD_K_ACCEPT: return "ACCEPT";
    case TS_PD_K_REJECT: return "REJECT";
    case TS_PD_K_PING: return "PING";
    case TS_PD_K_PS_RDY: return "PS RDY";
    case TS_PD_K_GET_SOURCE_CAP: return "GET SOURCE CAP";
    case TS_PD_K_GET_SINK_CAP: return "GET SINK CAP";
    case TS_PD_K_DR_SWAP: return "DR SWAP";
    case TS_PD_K_PR_SWAP: return "PR SWAP";
    case TS_PD_K_VCONN_SWAP: return "VCONN SWAP";
    case TS_PD_K_WAIT: return "WAIT";
    case TS_PD_K_SOFT_RESET: return "SOFT RESET";
    case TS_PD_K_SOURCE_CAPABILITIES: return "SOURCE CAP";
    case TS_PD_K_REQUEST: return "REQUEST";
    case TS_PD_K_BIST: return "BIST";
    case TS_PD_K_SINK_CAPABILITIES: return "SINK CAP";
    case TS_PD_K_VENDOR_DEFINED: return "VDM";
    default: return NULL;
    }
}

static const char *vdm_cmd_name(unsigned c)
{
    switch (c) {
    case TS_PD_VDM_DISCOVER_IDENTITY: return "Disc Ident";
    case TS_PD_VDM_DISCOVER_SVIDS: return "Disc SVID";
    case TS_PD_VDM_DISCOVER_MODES: return "Disc Mode";
    case TS_PD_VDM_ENTER_MODE: return "Enter Mode";
    case TS_PD_VDM_EXIT_MODE: return "Exit Mode";
    case TS_PD_VDM_ATTENTION: return "Attention";
    case 16: return "DP Status";
    case 17: return "DP Configure";
    default: return "cmd?";
    }
}

/* The PDO kinds sigrok last saw (source or sink caps), for reading a Request. */
static ts_pd_supply last_caps_kind[8];

static void payload_text(const ts_pd_msg *m, int i, bool source, char *out, size_t n)
{
    uint32_t w = m->obj[i];
    switch (ts_pd_msg_kind(m)) {
    case TS_PD_K_SOURCE_CAPABILITIES:
    case TS_PD_K_SINK_CAPABILITIES: {
        (void)source;
        ts_pd_pdo p = ts_pd_parse_pdo(w);
        last_caps_kind[i + 1] = p.kind;
        switch (p.kind) {
        case TS_PD_FIXED:
            snprintf(out, n, "[%d] [Fixed] %gV %gA (", i + 1, p.mv_max / 1000.0, p.ma_max / 1000.0);
            break;
        case TS_PD_BATTERY:
            snprintf(out, n, "[%d] [Battery] %g/%gV %gW", i + 1, p.mv_min / 1000.0,
                     p.mv_max / 1000.0, p.mw_max / 1000.0);
            break;
        case TS_PD_VARIABLE:
            snprintf(out, n, "[%d] [Variable] %g/%gV %gA", i + 1, p.mv_min / 1000.0,
                     p.mv_max / 1000.0, p.ma_max / 1000.0);
            break;
        case TS_PD_PPS:
            snprintf(out, n, "[%d] [Programmable|PPS] %g/%gV %gA", i + 1, p.mv_min / 1000.0,
                     p.mv_max / 1000.0, p.ma_max / 1000.0);
            break;
        default:
            snprintf(out, n, "[%d] [Reserved APDO", i + 1);
            break;
        }
        break;
    }
    case TS_PD_K_REQUEST: {
        /* sigrok reads a Request against the kind of the last capabilities it
         * printed, source or sink (ours use the source's), with 3 bits of
         * position, and prints the two 10-bit fields of a Variable PDO's RDO
         * as watts (x 0.25) and a Battery PDO's as amperes (x 0.01); the spec
         * has it the other way round. Its text is rebuilt here from our
         * parse of the RDO under the same PDO kind. */
        unsigned pos = (w >> 28) & 7u;
        ts_pd_supply k = last_caps_kind[pos];
        ts_pd_rdo r = ts_pd_parse_rdo(w, k);
        char flags[96] = "";
        if ((w >> 27) & 1u) strcat(flags, " [give_back]");
        if (r.capability_mismatch) strcat(flags, " [cap_mismatch]");
        if (r.usb_comm) strcat(flags, " [comm_cap]");
        if (r.no_suspend) strcat(flags, " [no_suspend]");
        if (r.unchunked) strcat(flags, " [unchunked]");
        char settings[64];
        if (k == TS_PD_PPS) {
            snprintf(settings, sizeof(settings), "%gV %gA", r.out_mv / 1000.0, r.op_ma / 1000.0);
        } else if (k == TS_PD_VARIABLE) { /* 10 mA units read as 0.25 W */
            snprintf(settings, sizeof(settings), "%gW (operating)", r.op_ma / 10u * 0.25);
        } else if (k == TS_PD_BATTERY) { /* 250 mW units read as 10 mA */
            snprintf(settings, sizeof(settings), "%gA (operating) / %gA (max)",
                     r.op_mw / 250u * 0.01, r.max_mw / 250u * 0.01);
        } else {
            snprintf(settings, sizeof(settings), "%gA (operating) / %gA (max)", r.op_ma / 1000.0,
                     r.max_ma / 1000.0);
        }
        /* "(PDO #n: <sigrok's name of that PDO>) settings flags": check the parts. */
        snprintf(out, n, "[%d] (PDO #%u|) %s%s$", i + 1, pos, settings, flags);
        break;
    }
    case TS_PD_K_VENDOR_DEFINED: {
        if (i > 0) {
            snprintf(out, n, "[%d] VDO:%08x$", i + 1, (unsigned)w);
            break;
        }
        ts_pd_vdm v = ts_pd_parse_vdm(w);
        static const char *const ack[] = {"REQ", "ACK", "NAK", "BSY"};
        if (v.structured) {
            char pos[16] = " ";
            if (v.position) snprintf(pos, sizeof(pos), " pos %u", v.position);
            snprintf(out, n, "[1] %s %s%s SVID:%04x$", ack[v.cmd_type], vdm_cmd_name(v.command),
                     pos, v.svid);
        } else {
            snprintf(out, n, "[1] unstruct [%04x] SVID:%04x$", (unsigned)(w & 0x7FFFu), v.svid);
        }
        break;
    }
    default:
        out[0] = '\0';
        break;
    }
}

/* sigrok's payload items are " - "-separated after the type. An item is
 * found when the text holds it; one ending in '$' must end an item there. */
static bool at_item_end(const char *p)
{
    return *p == '\0' || strncmp(p, " - ", 3) == 0;
}

static bool text_has_item(const char *text, const char *item)
{
    char buf[160];
    snprintf(buf, sizeof(buf), "%s", item);
    size_t len = strlen(buf);
    bool exact = len > 0 && buf[len - 1] == '$';
    if (exact) {
        buf[--len] = '\0';
    }
    item = buf;
    const char *bar = strchr(item, '|');
    if (bar == NULL) {
        for (const char *p = strstr(text, item); p != NULL; p = strstr(p + 1, item)) {
            if (!exact || at_item_end(p + len)) {
                return true;
            }
        }
        return false;
    }
    /* "head|tail": head, then (after sigrok's PDO name) tail, in one item */
    char head[128];
    size_t hn = (size_t)(bar - item);
    CHECK(hn < sizeof(head));
    memcpy(head, item, hn);
    head[hn] = '\0';
    const char *p = strstr(text, head);
    if (p == NULL) {
        return false;
    }
    const char *end = strstr(p, " - ");
    const char *q = strstr(p, bar + 1);
    return q != NULL && (end == NULL || q < end) && (!exact || at_item_end(q + strlen(bar + 1)));
}

static void compare_message(const char *name, size_t k, const sr_msg *w, const ts_pd_msg *m)
{
    char where[256];
    snprintf(where, sizeof(where), "%s: message %zu (sigrok #%zu at sample %llu)", name, k, k + 1,
             (unsigned long long)w->start);
#define MCHECK(cond)                                                                   \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s: %s\n  sigrok: %s\n", where, #cond, w->text);          \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)
    MCHECK(m->t == w->start);
    MCHECK(m->sop == (uint8_t)w->sop);
    if (w->sop == TS_PD_HARD_RESET || w->sop == TS_PD_CABLE_RESET) {
        return;
    }
    MCHECK(w->has_header && !w->truncated);
    MCHECK(m->header == w->header);
    MCHECK(m->ndo == (uint8_t)w->nobj);
    for (int i = 0; i < w->nobj; i++) {
        MCHECK(m->obj[i] == w->obj[i]);
    }
    MCHECK(m->crc == w->crc);
    MCHECK(!(m->flags & TS_PD_F_CRC_OK) == w->bad_crc);
    MCHECK(!(m->flags & TS_PD_F_EOP) == w->no_eop);
    MCHECK(!(m->flags & TS_PD_F_TRUNCATED));

    /* "(rN) ROLE[/DR][id]: TYPE" from our header fields */
    ts_pd_header h = ts_pd_parse_header(m->header);
    char role[16];
    snprintf(role, sizeof(role), "%s%s", h.power_role ? "SRC" : "SNK",
             h.data_role == h.power_role ? "" : (h.data_role ? "/DFP" : "/UFP"));
    const char *ours = kind_as_sigrok(ts_pd_msg_kind(m));
    const char *theirs = h.ndo ? sigrok_data(h.type & 0xFu) : sigrok_control[h.type & 0xFu];
    if (ours != NULL) {
        MCHECK(strcmp(ours, theirs) == 0);
    }
    char head[96];
    snprintf(head, sizeof(head), "(r%u) %s[%u]: %s", h.spec_rev + 1u, role, h.id, theirs);
    MCHECK(strncmp(w->text, head, strlen(head)) == 0);

    for (int i = 0; i < m->ndo; i++) {
        char item[160];
        payload_text(m, i, h.power_role, item, sizeof(item));
        if (item[0] != '\0' && !text_has_item(w->text, item)) {
            fprintf(stderr, "%s: payload %d: ours \"%s\"\n  sigrok: %s\n", where, i, item, w->text);
            exit(1);
        }
    }
#undef MCHECK
}

typedef struct fixture_result {
    size_t messages;
    ts_pd_counters counters;
    ts_pd_contract contract;
} fixture_result;

static fixture_result check_fixture_with(const char *name, uint32_t glitch_ns, bool verbose)
{
    static ts_pd_decoder dec;
    ts_pd_config cfg = {0};
    cfg.on_msg = collect;
    cfg.glitch_ns = glitch_ns;
    ngot = 0;
    memset(last_caps_kind, 0, sizeof(last_caps_kind));
    read_sigrok(name);
    edge_file ef = feed_fixture(name, &dec, &cfg);
    const ts_pd_counters *c = ts_pd_counters_get(&dec);
    unsigned sr_bad_crc = 0, pre_min = 0xFFFF, pre_max = 0;
    for (size_t i = 0; i < ngot; i++) {
        pre_min = got[i].preamble_bits < pre_min ? got[i].preamble_bits : pre_min;
        pre_max = got[i].preamble_bits > pre_max ? got[i].preamble_bits : pre_max;
    }
    for (size_t i = 0; i < nwant; i++) {
        sr_bad_crc += want[i].bad_crc;
    }
    if (verbose) {
        printf("%s: %llu edges at %u Hz, glitch filter %u ns: %zu messages (sigrok %zu), "
               "CRC failures %u (sigrok %u), noise bursts %u (sigrok %u), short bursts %u, "
               "BMC errors %u, bad symbols %u, missing EOP %u, truncated %u, glitches %u, "
               "preamble %u..%u bits\n",
               name, (unsigned long long)ef.edges, (unsigned)ef.clock_hz, (unsigned)glitch_ns,
               ngot, nwant, (unsigned)c->crc_failures, sr_bad_crc, (unsigned)c->noise_bursts,
               sr_junk, (unsigned)c->short_bursts, (unsigned)c->bmc_errors,
               (unsigned)c->bad_symbols, (unsigned)c->missing_eop, (unsigned)c->truncated,
               (unsigned)c->glitches, pre_min, pre_max);
    }
    CHECK_EQ_U(c->edges, ef.edges);
    size_t n = ngot < nwant ? ngot : nwant;
    for (size_t i = 0; i < n; i++) {
        compare_message(name, i, &want[i], &got[i]);
    }
    CHECK_EQ_U(ngot, nwant);
    CHECK_EQ_U(c->messages, nwant);
    CHECK_EQ_U(c->crc_failures, sr_bad_crc);
    CHECK_EQ_U(c->noise_bursts, sr_junk);
    CHECK_EQ_U(c->queue_overflows, 0);
    fixture_result r;
    r.messages = ngot;
    r.counters = *c;
    ts_pd_contract_get(&dec, &r.contract);
    return r;
}

/* Each fixture twice: edges as captured, and through the default glitch filter
 * (which must not touch a real capture's messages). */
static fixture_result check_fixture(const char *name)
{
    check_fixture_with(name, 300u, true);
    return check_fixture_with(name, 0u, true);
}

static void check_contract(const ts_pd_contract *c, ts_pd_supply kind, uint32_t mv, uint32_t ma,
                           uint32_t mw)
{
    CHECK(c->valid);
    CHECK_EQ_U(c->kind, kind);
    CHECK_EQ_U(c->mv, mv);
    CHECK_EQ_U(c->ma, ma);
    CHECK_EQ_U(c->mw, mw);
}


/* ------------------------------------------------------------------ */
/* Synthetic traffic: an encoder (4b5b, BMC) with the rate, jitter, duty skew
 * and tick clock of the test's choosing. */

enum { S1 = 0x18, S2 = 0x11, S3 = 0x06, R1 = 0x07, R2 = 0x19, EOPK = 0x0D };
static const uint8_t enc4b5b[16] = {0x1E, 0x09, 0x14, 0x15, 0x0A, 0x0B, 0x0E, 0x0F,
                                    0x12, 0x13, 0x16, 0x17, 0x1A, 0x1B, 0x1C, 0x1D};
static const uint8_t sets[7][4] = {
    {S1, S1, S1, S2}, {S1, S1, S3, S3}, {S1, S3, S1, S3}, {S1, R2, R2, S3},
    {S1, R2, S3, S2}, {R1, S1, R1, S3}, {R1, R1, R1, R2},
};

typedef struct line {
    ts_pd_decoder dec;
    uint32_t tick_hz;
    double ui_ns, jitter_ns, skew_ns; /* skew: a one's first half is longer by this */
    double now_ns;
    uint32_t rng;
    uint8_t level;
    uint8_t bits[1200];
    size_t nbits;
    uint64_t first_tick;  /* first edge of the last burst sent */
} line;

static double jitter(line *l)
{
    l->rng = l->rng * 1664525u + 1013904223u;
    return ((double)(l->rng >> 8) / 16777216.0 * 2.0 - 1.0) * l->jitter_ns;
}

static uint64_t to_tick(const line *l, double ns)
{
    return (uint64_t)(ns * (double)l->tick_hz / 1e9);
}

static void line_edge(line *l, double t_ns)
{
    l->level ^= 1u;
    ts_pd_feed_edge(&l->dec, to_tick(l, t_ns + jitter(l)), l->level);
}

static void line_init(line *l, uint32_t tick_hz, double kbps, uint32_t glitch_ns)
{
    memset(l, 0, sizeof(*l));
    l->tick_hz = tick_hz;
    l->ui_ns = 1e6 / kbps;
    l->now_ns = 1e6; /* 1 ms in */
    l->rng = 12345u;
    ts_pd_config cfg = {0};
    cfg.tick_hz = tick_hz;
    cfg.glitch_ns = glitch_ns;
    cfg.on_msg = collect;
    CHECK(ts_pd_init(&l->dec, &cfg) == 0);
    ngot = 0;
}

static void put_bits(line *l, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        CHECK(l->nbits < sizeof(l->bits));
        l->bits[l->nbits++] = (uint8_t)((v >> i) & 1u);
    }
}

static void put_nibbles(line *l, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        put_bits(l, enc4b5b[(v >> (4u * i)) & 0xFu], 5);
    }
}

/* Send the bits queued: BMC, a transition at each bit's start and in a one's
 * middle, a final edge, then an inter-frame gap of 30 us. */
static void line_send(line *l)
{
    l->first_tick = to_tick(l, l->now_ns); /* jitter may move it a little */
    uint64_t before = l->dec.counters.edges;
    for (size_t i = 0; i < l->nbits; i++) {
        line_edge(l, l->now_ns);
        if (i == 0) {
            CHECK(l->dec.counters.edges == before + 1u);
        }
        if (l->bits[i]) {
            line_edge(l, l->now_ns + l->ui_ns / 2 + l->skew_ns);
        }
        l->now_ns += l->ui_ns;
    }
    line_edge(l, l->now_ns);
    l->now_ns += 30000.0;
    ts_pd_idle(&l->dec, to_tick(l, l->now_ns));
    l->nbits = 0;
}

static void put_preamble(line *l, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        put_bits(l, i & 1u, 1);
    }
}

static void put_set(line *l, int sop)
{
    for (int j = 0; j < 4; j++) {
        put_bits(l, sets[sop][j], 5);
    }
}

static uint16_t header(unsigned type, unsigned ndo, unsigned id, bool source)
{
    return (uint16_t)(type | (2u << 6) | ((source ? 1u : 0u) << 8) | ((source ? 1u : 0u) << 5) |
                      ((id & 7u) << 9) | (ndo << 12));
}

/* One whole message: preamble, ordered set, header, objects, CRC, EOP. */
static void send_msg(line *l, int sop, uint16_t h, const uint32_t *obj, unsigned ndo)
{
    put_preamble(l, 64);
    put_set(l, sop);
    put_nibbles(l, h, 4);
    for (unsigned i = 0; i < ndo; i++) {
        put_nibbles(l, obj[i], 8);
    }
    put_nibbles(l, ts_pd_crc32(h, obj, ndo), 8);
    put_bits(l, EOPK, 5);
    line_send(l);
}

static void send_reset(line *l, int set)
{
    put_preamble(l, 64);
    put_set(l, set);
    line_send(l);
}

static void send_control(line *l, unsigned type, unsigned id, bool source)
{
    send_msg(l, TS_PD_SOP, header(type, 0, id, source), NULL, 0);
}

/* PDOs and RDOs */
static uint32_t pdo_fixed(uint32_t mv, uint32_t ma) { return ((mv / 50u) << 10) | (ma / 10u); }
static uint32_t pdo_variable(uint32_t mv_min, uint32_t mv_max, uint32_t ma)
{
    return (2u << 30) | ((mv_max / 50u) << 20) | ((mv_min / 50u) << 10) | (ma / 10u);
}
static uint32_t pdo_battery(uint32_t mv_min, uint32_t mv_max, uint32_t mw)
{
    return (1u << 30) | ((mv_max / 50u) << 20) | ((mv_min / 50u) << 10) | (mw / 250u);
}
static uint32_t pdo_pps(uint32_t mv_min, uint32_t mv_max, uint32_t ma)
{
    return (3u << 30) | ((mv_max / 100u) << 17) | ((mv_min / 100u) << 8) | (ma / 50u);
}
static uint32_t rdo_fixed(unsigned pos, uint32_t op_ma, uint32_t max_ma, bool mismatch)
{
    return ((uint32_t)pos << 28) | ((mismatch ? 1u : 0u) << 26) | (1u << 25) |
           ((op_ma / 10u) << 10) | (max_ma / 10u);
}
static uint32_t rdo_pps(unsigned pos, uint32_t mv, uint32_t ma)
{
    return ((uint32_t)pos << 28) | ((mv / 20u) << 9) | (ma / 50u);
}

static void send_caps(line *l, unsigned id)
{
    uint32_t caps[6];
    caps[0] = 0x0A01912Cu; /* 5 V 3 A, flags as the Aukey's */
    caps[1] = pdo_fixed(9000, 3000);
    caps[2] = pdo_fixed(15000, 3000);
    caps[3] = pdo_variable(5000, 20000, 2000);
    caps[4] = pdo_battery(5000, 20000, 45000);
    caps[5] = pdo_pps(3300, 11000, 3000);
    send_msg(l, TS_PD_SOP, header(1, 6, id, true), caps, 6);
}

/* Source_Capabilities, Request(rdo), Accept, PS_RDY with GoodCRCs between. */
static void negotiate(line *l, uint32_t rdo, unsigned id)
{
    send_caps(l, id);
    send_control(l, 1, id, false);
    send_msg(l, TS_PD_SOP, header(2, 1, id, false), &rdo, 1);
    send_control(l, 1, id, true);
    send_control(l, 3, id + 1u, true);
    send_control(l, 1, id + 1u, false);
    send_control(l, 6, id + 2u, true);
    send_control(l, 1, id + 2u, false);
}

TS_CASE(crc32_known_answers)
{
    /* From the captures: GoodCRC 0x0041, and the Aukey's Source_Capabilities. */
    CHECK_EQ_U(ts_pd_crc32(0x0041, NULL, 0), 0xa8bb6cbbu);
    const uint32_t aukey[6] = {0x0a01912cu, 0x0002d12cu, 0x0003c12cu,
                               0x0004b12cu, 0x000640e1u, 0xc1401e3cu};
    CHECK_EQ_U(ts_pd_crc32(0x61a1, aukey, 6), 0xf0c14f02u);
}

TS_CASE(init_rejects_a_slow_clock)
{
    static ts_pd_decoder d;
    ts_pd_config cfg = {0};
    cfg.tick_hz = 500000u;
    CHECK(ts_pd_init(&d, &cfg) != 0);
    cfg.tick_hz = 1000000u;
    CHECK(ts_pd_init(&d, &cfg) == 0);
    cfg.zero_ns = 6000u; /* above idle */
    CHECK(ts_pd_init(&d, &cfg) != 0);
}

/* The spec's 270..330 kbit/s, each with +-150 ns of jitter and a 250 ns duty
 * skew, on a fine (25 MHz) and a coarse (4 MHz) clock. */
TS_CASE(negotiation_at_spec_rates_with_jitter)
{
    static line l;
    const double rates[3] = {270.0, 300.0, 330.0};
    const uint32_t clocks[2] = {25000000u, 4000000u};
    for (int c = 0; c < 2; c++) {
        for (int r = 0; r < 3; r++) {
            line_init(&l, clocks[c], rates[r], 0);
            l.jitter_ns = 150.0;
            l.skew_ns = 250.0;
            negotiate(&l, rdo_fixed(2, 3000, 3000, false), 0);
            const ts_pd_counters *k = ts_pd_counters_get(&l.dec);
            CHECK_EQ_U(ngot, 8);
            CHECK_EQ_U(k->crc_failures + k->bad_symbols + k->bmc_errors + k->missing_eop, 0);
            CHECK_EQ_U(ts_pd_msg_kind(&got[0]), TS_PD_K_SOURCE_CAPABILITIES);
            CHECK_EQ_U(got[0].ndo, 6);
            CHECK(got[0].preamble_bits >= 63 && got[0].preamble_bits <= 64);
            CHECK_EQ_U(ts_pd_msg_kind(&got[2]), TS_PD_K_REQUEST);
            CHECK_EQ_U(ts_pd_msg_kind(&got[4]), TS_PD_K_ACCEPT);
            CHECK_EQ_U(ts_pd_msg_kind(&got[6]), TS_PD_K_PS_RDY);
            for (size_t i = 0; i < ngot; i++) {
                CHECK(got[i].flags & TS_PD_F_CRC_OK);
                CHECK(got[i].flags & TS_PD_F_EOP);
            }
            /* the last message's time is its first edge (within the jitter) */
            CHECK_NEAR((double)got[7].t, (double)l.first_tick, 150e-9 * clocks[c] + 1);
            ts_pd_contract ct;
            ts_pd_contract_get(&l.dec, &ct);
            check_contract(&ct, TS_PD_FIXED, 9000, 3000, 27000);
            CHECK_EQ_U(ct.position, 2);
            CHECK_EQ_U(ct.ma_max, 3000);
            CHECK_EQ_U(ct.t, got[6].t);
            CHECK_EQ_U(ct.generation, 1);
        }
    }
}

TS_CASE(no_contract_before_ps_rdy_nor_after_reject)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    uint32_t rdo = rdo_fixed(3, 2000, 3000, false);
    send_caps(&l, 0);
    send_msg(&l, TS_PD_SOP, header(2, 1, 0, false), &rdo, 1);
    send_control(&l, 3, 1, true); /* Accept */
    ts_pd_contract ct;
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
    send_control(&l, 6, 2, true); /* PS_RDY */
    ts_pd_contract_get(&l.dec, &ct);
    check_contract(&ct, TS_PD_FIXED, 15000, 2000, 30000);
    /* A new Request rejected, and a PS_RDY without Accept: the contract stays. */
    rdo = rdo_fixed(1, 3000, 3000, false);
    send_msg(&l, TS_PD_SOP, header(2, 1, 1, false), &rdo, 1);
    send_control(&l, 4, 3, true); /* Reject */
    send_control(&l, 6, 4, true);
    ts_pd_contract_get(&l.dec, &ct);
    check_contract(&ct, TS_PD_FIXED, 15000, 2000, 30000);
    CHECK_EQ_U(ct.generation, 1);
    CHECK_EQ_U(ct.end, TS_PD_END_NONE);
}

/* USB PD R3.x 6.8.1, 7.1.1: a Soft_Reset leaves the supply alone but sends both policy
 * engines back to the capabilities; no explicit contract until the next PS_RDY. */
TS_CASE(soft_reset_ends_the_contract_until_renegotiated)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    negotiate(&l, rdo_fixed(3, 2000, 3000, false), 0);
    ts_pd_contract ct;
    uint32_t seen = 0;
    CHECK(ts_pd_contract_changed(&l.dec, &seen, &ct));
    check_contract(&ct, TS_PD_FIXED, 15000, 2000, 30000);
    CHECK(!ts_pd_contract_changed(&l.dec, &seen, &ct)); /* once per change */
    send_control(&l, 13, 0, false); /* Soft_Reset from the sink */
    CHECK(ts_pd_contract_changed(&l.dec, &seen, &ct));
    CHECK(!ct.valid);
    CHECK_EQ_U(ct.end, TS_PD_END_SOFT_RESET);
    CHECK_EQ_U(ct.generation, 2);
    CHECK_EQ_U(ct.t, got[ngot - 1].t);
    send_control(&l, 3, 0, true); /* Accept */
    negotiate(&l, rdo_fixed(1, 500, 900, false), 0);
    CHECK(ts_pd_contract_changed(&l.dec, &seen, &ct));
    check_contract(&ct, TS_PD_FIXED, 5000, 500, 2500);
    CHECK_EQ_U(ct.ma_max, 900);
    CHECK_EQ_U(ct.generation, 3);
    CHECK_EQ_U(ct.end, TS_PD_END_NONE);
    /* A Hard Reset while it renegotiates after a Soft_Reset ends that too. */
    send_control(&l, 13, 1, true);
    CHECK(ts_pd_contract_changed(&l.dec, &seen, &ct));
    CHECK_EQ_U(ct.end, TS_PD_END_SOFT_RESET);
    send_reset(&l, TS_PD_HARD_RESET);
    CHECK(ts_pd_contract_changed(&l.dec, &seen, &ct));
    CHECK(!ct.valid);
    CHECK_EQ_U(ct.end, TS_PD_END_HARD_RESET);
    CHECK_EQ_U(ct.generation, 5);
}

TS_CASE(hard_reset_ends_the_contract_cable_reset_does_not)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    negotiate(&l, rdo_fixed(2, 3000, 3000, false), 0);
    ts_pd_contract ct;
    send_reset(&l, TS_PD_CABLE_RESET);
    CHECK_EQ_U(got[ngot - 1].sop, TS_PD_CABLE_RESET);
    CHECK_EQ_U(ts_pd_msg_kind(&got[ngot - 1]), TS_PD_K_CABLE_RESET);
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(ct.valid);
    send_reset(&l, TS_PD_HARD_RESET);
    CHECK_EQ_U(ts_pd_msg_kind(&got[ngot - 1]), TS_PD_K_HARD_RESET);
    CHECK_EQ_U(got[ngot - 1].ndo, 0);
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
    CHECK_EQ_U(ct.generation, 2);
    CHECK_EQ_U(ct.t, got[ngot - 1].t);
    CHECK_EQ_U(ct.end, TS_PD_END_HARD_RESET);
    /* A Request after the reset, for capabilities from before it: no contract. */
    uint32_t rdo = rdo_fixed(2, 3000, 3000, false);
    send_msg(&l, TS_PD_SOP, header(2, 1, 0, false), &rdo, 1);
    send_control(&l, 3, 0, true);
    send_control(&l, 6, 1, true);
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
    /* Hard Reset with one K-code wrong is still one (3 of 4). */
    put_preamble(&l, 64);
    put_bits(&l, R1, 5);
    put_bits(&l, R1, 5);
    put_bits(&l, S1, 5); /* wrong */
    put_bits(&l, R2, 5);
    line_send(&l);
    CHECK_EQ_U(ts_pd_msg_kind(&got[ngot - 1]), TS_PD_K_HARD_RESET);
}

/* A PHY may abort a message to send Hard Reset, with no gap between. */
TS_CASE(hard_reset_inside_a_burst_aborts_the_message)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    negotiate(&l, rdo_fixed(2, 3000, 3000, false), 0);
    uint16_t h = header(1, 6, 3, true);
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_nibbles(&l, h, 4);
    put_nibbles(&l, 0x0002D12Cu, 8);
    put_nibbles(&l, 0x0004, 3); /* cut here */
    put_preamble(&l, 64);
    put_set(&l, TS_PD_HARD_RESET);
    line_send(&l);
    CHECK_EQ_U(ngot, 10);
    CHECK(got[8].flags & TS_PD_F_ABORTED);
    CHECK(got[8].flags & TS_PD_F_TRUNCATED);
    CHECK_EQ_U(ts_pd_msg_kind(&got[9]), TS_PD_K_HARD_RESET);
    CHECK(got[9].t > got[8].t);
    ts_pd_contract ct;
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
    /* ... and right after a whole message's EOP. */
    negotiate(&l, rdo_fixed(2, 3000, 3000, false), 0);
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_nibbles(&l, 0x0041, 4);
    put_nibbles(&l, ts_pd_crc32(0x0041, NULL, 0), 8);
    put_bits(&l, EOPK, 5);
    put_preamble(&l, 64);
    put_set(&l, TS_PD_HARD_RESET);
    line_send(&l);
    CHECK_EQ_U(ngot, 20);
    CHECK(got[18].flags & TS_PD_F_CRC_OK);
    CHECK_EQ_U(ts_pd_msg_kind(&got[19]), TS_PD_K_HARD_RESET);
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
}

TS_CASE(every_supply_kind_makes_its_contract)
{
    static line l;
    ts_pd_contract ct;
    line_init(&l, 25000000u, 300.0, 0);
    negotiate(&l, rdo_pps(6, 9000, 2000), 0); /* PPS 9.0 V 2 A */
    ts_pd_contract_get(&l.dec, &ct);
    check_contract(&ct, TS_PD_PPS, 9000, 2000, 18000);
    CHECK_EQ_U(ct.mv_min, 3300);
    CHECK_EQ_U(ct.mv_max, 11000);
    negotiate(&l, rdo_fixed(4, 1500, 2000, false), 3); /* Variable 5..20 V 1.5 A */
    ts_pd_contract_get(&l.dec, &ct);
    check_contract(&ct, TS_PD_VARIABLE, 0, 1500, 30000);
    CHECK_EQ_U(ct.mv_max, 20000);
    /* Battery: operating 40 W, max 45 W, in 250 mW units */
    negotiate(&l, (5u << 28) | ((40000u / 250u) << 10) | (45000u / 250u), 6);
    ts_pd_contract_get(&l.dec, &ct);
    check_contract(&ct, TS_PD_BATTERY, 0, 8000, 40000); /* 40 W at 5 V minimum */
    CHECK_EQ_U(ct.generation, 3);
}

TS_CASE(capability_mismatch_is_kept)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    negotiate(&l, rdo_fixed(1, 900, 3000, true), 0);
    ts_pd_contract ct;
    ts_pd_contract_get(&l.dec, &ct);
    check_contract(&ct, TS_PD_FIXED, 5000, 900, 4500);
    CHECK(ct.capability_mismatch);
    ts_pd_rdo r = ts_pd_parse_rdo(got[2].obj[0], TS_PD_FIXED);
    CHECK(r.capability_mismatch && r.usb_comm && !r.give_back);
    CHECK_EQ_U(r.position, 1);
}

TS_CASE(pr_swap_ends_the_contract)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    negotiate(&l, rdo_fixed(2, 3000, 3000, false), 0);
    send_control(&l, 10, 3, false); /* PR_Swap from the sink */
    send_control(&l, 3, 3, true);   /* Accept */
    ts_pd_contract ct;
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
    CHECK_EQ_U(ct.end, TS_PD_END_PR_SWAP);
}

TS_CASE(crc_failures_and_bad_symbols_are_counted)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    /* A Request whose CRC does not match (one data nibble changed after the CRC). */
    uint32_t rdo = rdo_fixed(2, 3000, 3000, false);
    uint16_t h = header(2, 1, 0, false);
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_nibbles(&l, h, 4);
    put_nibbles(&l, rdo ^ 0x10u, 8);
    put_nibbles(&l, ts_pd_crc32(h, &rdo, 1), 8);
    put_bits(&l, EOPK, 5);
    line_send(&l);
    CHECK_EQ_U(ngot, 1);
    CHECK(!(got[0].flags & TS_PD_F_CRC_OK));
    CHECK(got[0].flags & TS_PD_F_EOP);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->crc_failures, 1);
    /* A symbol that is no data symbol where the header goes. */
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_bits(&l, 0x00, 5);
    put_nibbles(&l, 0x004, 3);
    put_nibbles(&l, ts_pd_crc32(0x0041, NULL, 0), 8);
    put_bits(&l, EOPK, 5);
    line_send(&l);
    CHECK_EQ_U(ngot, 2);
    CHECK_EQ_U(got[1].bad_symbols, 1);
    CHECK_EQ_U(got[1].header, 0x0040);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->bad_symbols, 1);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->crc_failures, 2);
    /* Neither makes a contract with an Accept and PS_RDY after it. */
    send_control(&l, 3, 1, true);
    send_control(&l, 6, 2, true);
    ts_pd_contract ct;
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
}

TS_CASE(cut_messages_are_truncated_or_lack_eop)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    uint32_t rdo = rdo_fixed(2, 3000, 3000, false);
    uint16_t h = header(2, 1, 0, false);
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_nibbles(&l, h, 4);
    put_nibbles(&l, rdo, 5); /* cut inside the data object */
    line_send(&l);
    CHECK_EQ_U(ngot, 1);
    CHECK(got[0].flags & TS_PD_F_TRUNCATED);
    CHECK_EQ_U(got[0].ndo, 0);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->truncated, 1);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->crc_failures, 0);
    /* Whole, but a data symbol where EOP belongs. */
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_nibbles(&l, h, 4);
    put_nibbles(&l, rdo, 8);
    put_nibbles(&l, ts_pd_crc32(h, &rdo, 1), 8);
    put_nibbles(&l, 0x0, 1);
    line_send(&l);
    CHECK_EQ_U(ngot, 2);
    CHECK(got[1].flags & TS_PD_F_CRC_OK);
    CHECK(!(got[1].flags & TS_PD_F_EOP));
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->missing_eop, 1);
    /* A burst of preamble alone is noise; a few edges are a short burst. */
    put_preamble(&l, 64);
    line_send(&l);
    put_preamble(&l, 6);
    line_send(&l);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->noise_bursts, 1);
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->short_bursts, 1);
}

TS_CASE(a_missed_edge_aborts_the_message)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    uint16_t h = header(1, 0, 0, false);
    put_preamble(&l, 64);
    put_set(&l, TS_PD_SOP);
    put_nibbles(&l, h, 4);
    put_nibbles(&l, ts_pd_crc32(h, NULL, 0), 8);
    put_bits(&l, EOPK, 5);
    l.first_tick = to_tick(&l, l.now_ns);
    for (size_t i = 0; i < l.nbits; i++) {
        line_edge(&l, l.now_ns);
        if (i == 100) { /* report the same level again: an edge was lost */
            l.level ^= 1u;
        }
        if (l.bits[i]) {
            line_edge(&l, l.now_ns + l.ui_ns / 2);
        }
        l.now_ns += l.ui_ns;
    }
    line_edge(&l, l.now_ns);
    ts_pd_idle(&l.dec, to_tick(&l, l.now_ns + 30000.0));
    l.nbits = 0;
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->level_errors, 1);
    CHECK_EQ_U(ngot, 1);
    CHECK(got[0].flags & TS_PD_F_ABORTED);
    CHECK(!(got[0].flags & TS_PD_F_CRC_OK));
}

/* An unfiltered tap: 80 ns pulses in the middle of bits, on a 125 MHz clock. */
TS_CASE(glitches_are_filtered)
{
    static line l;
    for (int filtered = 0; filtered < 2; filtered++) {
        line_init(&l, 125000000u, 300.0, filtered ? 300u : 0u);
        uint32_t rdo = rdo_fixed(2, 3000, 3000, false);
        uint16_t h = header(2, 1, 0, false);
        put_preamble(&l, 64);
        put_set(&l, TS_PD_SOP);
        put_nibbles(&l, h, 4);
        put_nibbles(&l, rdo, 8);
        put_nibbles(&l, ts_pd_crc32(h, &rdo, 1), 8);
        put_bits(&l, EOPK, 5);
        for (size_t i = 0; i < l.nbits; i++) {
            line_edge(&l, l.now_ns);
            if (l.bits[i]) {
                line_edge(&l, l.now_ns + l.ui_ns / 2);
            } else if (i % 7 == 3) {
                line_edge(&l, l.now_ns + l.ui_ns / 2);
                line_edge(&l, l.now_ns + l.ui_ns / 2 + 80.0);
            }
            l.now_ns += l.ui_ns;
        }
        line_edge(&l, l.now_ns);
        ts_pd_idle(&l.dec, to_tick(&l, l.now_ns + 30000.0));
        l.nbits = 0;
        const ts_pd_counters *k = ts_pd_counters_get(&l.dec);
        if (filtered) {
            CHECK_EQ_U(ngot, 1);
            CHECK(got[0].flags & TS_PD_F_CRC_OK);
            CHECK_EQ_U(got[0].obj[0], rdo);
            CHECK(k->glitches > 10);
        } else {
            CHECK(ngot == 0 || !(got[0].flags & TS_PD_F_CRC_OK));
        }
    }
}

TS_CASE(queue_holds_eight_and_counts_the_rest)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    l.dec.cfg.on_msg = NULL;
    for (unsigned i = 0; i < TS_PD_QUEUE_LEN + 2u; i++) {
        send_control(&l, 1, i & 7u, true);
    }
    CHECK_EQ_U(ts_pd_counters_get(&l.dec)->queue_overflows, 2);
    ts_pd_msg m;
    for (unsigned i = 0; i < TS_PD_QUEUE_LEN; i++) {
        CHECK(ts_pd_take(&l.dec, &m));
        CHECK_EQ_U(ts_pd_parse_header(m.header).id, i & 7u);
    }
    CHECK(!ts_pd_take(&l.dec, &m));
    send_control(&l, 1, 5, true);
    CHECK(ts_pd_take(&l.dec, &m));
    CHECK_EQ_U(ts_pd_parse_header(m.header).id, 5);
}

/* What a Thunderbolt 3 / USB4 drive's mode entry looks like: SOP' Discover
 * Identity to the cable, then Discover Identity / SVIDs / Modes and Enter Mode
 * for Intel's SVID (0x8087), or Enter_USB. */
TS_CASE(mode_entry_traffic_is_recognised)
{
    static line l;
    line_init(&l, 25000000u, 300.0, 0);
    uint32_t vdm = (0xFF00u << 16) | (1u << 15) | (1u << 13) | TS_PD_VDM_DISCOVER_IDENTITY;
    send_msg(&l, TS_PD_SOP_P, header(15, 1, 0, true), &vdm, 1);
    send_msg(&l, TS_PD_SOP, header(15, 1, 1, true), &vdm, 1);
    vdm = (0xFF00u << 16) | (1u << 15) | (1u << 13) | TS_PD_VDM_DISCOVER_SVIDS;
    send_msg(&l, TS_PD_SOP, header(15, 1, 2, true), &vdm, 1);
    vdm = (0x8087u << 16) | (1u << 15) | (1u << 13) | TS_PD_VDM_DISCOVER_MODES;
    send_msg(&l, TS_PD_SOP, header(15, 1, 3, true), &vdm, 1);
    uint32_t enter[2] = {(0x8087u << 16) | (1u << 15) | (1u << 13) | (1u << 8) | (1u << 6) |
                             TS_PD_VDM_ENTER_MODE,
                         0x00000001u};
    send_msg(&l, TS_PD_SOP, header(15, 2, 4, false), enter, 2);
    uint32_t eudo = (2u << 28); /* Enter_USB, USB4 */
    send_msg(&l, TS_PD_SOP, header(8, 1, 5, true), &eudo, 1);
    CHECK_EQ_U(ngot, 6);
    CHECK_EQ_U(got[0].sop, TS_PD_SOP_P);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_U(ts_pd_msg_kind(&got[i]), TS_PD_K_VENDOR_DEFINED);
    }
    ts_pd_vdm v = ts_pd_parse_vdm(got[1].obj[0]);
    CHECK(v.structured);
    CHECK_EQ_U(v.svid, 0xFF00);
    CHECK_EQ_U(v.command, TS_PD_VDM_DISCOVER_IDENTITY);
    CHECK_EQ_U(v.cmd_type, 0);
    CHECK_EQ_U(ts_pd_parse_vdm(got[2].obj[0]).command, TS_PD_VDM_DISCOVER_SVIDS);
    CHECK_EQ_U(ts_pd_parse_vdm(got[3].obj[0]).command, TS_PD_VDM_DISCOVER_MODES);
    v = ts_pd_parse_vdm(got[4].obj[0]);
    CHECK_EQ_U(v.svid, 0x8087);
    CHECK_EQ_U(v.command, TS_PD_VDM_ENTER_MODE);
    CHECK_EQ_U(v.cmd_type, 1); /* ACK */
    CHECK_EQ_U(v.position, 1);
    CHECK_EQ_U(ts_pd_msg_kind(&got[5]), TS_PD_K_ENTER_USB);
    CHECK(strcmp(ts_pd_kind_name(TS_PD_K_ENTER_USB), "Enter_USB") == 0);
    CHECK(strcmp(ts_pd_kind_name(TS_PD_K_VENDOR_DEFINED), "Vendor_Defined") == 0);
    CHECK(strcmp(ts_pd_kind_name(TS_PD_K_HARD_RESET), "Hard_Reset") == 0);
    CHECK(strcmp(ts_pd_kind_name(TS_PD_K_PS_RDY), "PS_RDY") == 0);
    /* No contract from any of it. */
    ts_pd_contract ct;
    ts_pd_contract_get(&l.dec, &ct);
    CHECK(!ct.valid);
}

TS_CASE(pdo_and_rdo_fields)
{
    ts_pd_pdo p = ts_pd_parse_pdo(0x0a01912cu); /* Fixed 5 V 3 A */
    CHECK_EQ_U(p.kind, TS_PD_FIXED);
    CHECK_EQ_U(p.mv_min, 5000);
    CHECK_EQ_U(p.mv_max, 5000);
    CHECK_EQ_U(p.ma_max, 3000);
    p = ts_pd_parse_pdo(0xc1401e3cu); /* the Aukey's PPS: 3..16 V 3 A */
    CHECK_EQ_U(p.kind, TS_PD_PPS);
    CHECK_EQ_U(p.mv_min, 3000);
    CHECK_EQ_U(p.mv_max, 16000);
    CHECK_EQ_U(p.ma_max, 3000);
    p = ts_pd_parse_pdo(pdo_battery(5000, 21000, 60000));
    CHECK_EQ_U(p.kind, TS_PD_BATTERY);
    CHECK_EQ_U(p.mv_max, 21000);
    CHECK_EQ_U(p.mw_max, 60000);
    p = ts_pd_parse_pdo(pdo_variable(4750, 21000, 3000));
    CHECK_EQ_U(p.kind, TS_PD_VARIABLE);
    CHECK_EQ_U(p.mv_min, 4750);
    CHECK_EQ_U(p.ma_max, 3000);
    /* EPR AVS 15..48 V 140 W */
    p = ts_pd_parse_pdo((3u << 30) | (1u << 28) | (480u << 17) | (150u << 8) | 140u);
    CHECK_EQ_U(p.kind, TS_PD_EPR_AVS);
    CHECK_EQ_U(p.mv_min, 15000);
    CHECK_EQ_U(p.mv_max, 48000);
    CHECK_EQ_U(p.mw_max, 140000);
    /* SPR AVS: 3 A in 9..15 V, 2.25 A in 15..20 V */
    p = ts_pd_parse_pdo((3u << 30) | (2u << 28) | (300u << 10) | 225u);
    CHECK_EQ_U(p.kind, TS_PD_SPR_AVS);
    CHECK_EQ_U(p.mv_max, 20000);
    CHECK_EQ_U(p.ma_max, 3000);
    ts_pd_rdo r = ts_pd_parse_rdo(0x530384e1u, TS_PD_FIXED); /* the ThinkPad's: #5 2.25 A */
    CHECK_EQ_U(r.position, 5);
    CHECK_EQ_U(r.op_ma, 2250);
    CHECK_EQ_U(r.max_ma, 2250);
    CHECK(r.usb_comm && r.no_suspend && !r.capability_mismatch);
    r = ts_pd_parse_rdo((4u << 28) | ((15000u / 25u) << 9) | 60u, TS_PD_EPR_AVS);
    CHECK_EQ_U(r.out_mv, 15000);
    CHECK_EQ_U(r.op_ma, 3000);
    ts_pd_header h = ts_pd_parse_header(0x61a1);
    CHECK_EQ_U(h.type, 1);
    CHECK_EQ_U(h.ndo, 6);
    CHECK_EQ_U(h.id, 0);
    CHECK_EQ_U(h.spec_rev, 2);
    CHECK(h.power_role && h.data_role && !h.extended);
}

/* The contract at the end of each capture, read from its messages: the last
 * Request the source accepted and then announced PS_RDY for. */
TS_CASE(fixture_macbook_2015_apple_av_hdmi)
{
    fixture_result r = check_fixture("macbook_2015-apple_av_hdmi.cc1");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_macbook_2015_apple_power_brick)
{
    fixture_result r = check_fixture("macbook_2015-apple_power_brick.cc1");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_pixel_2015_hdmi_dongle)
{
    fixture_result r = check_fixture("pixel_2015-hdmi_dongle.cc2");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_pixel_2015_power_supply_20v)
{
    fixture_result r = check_fixture("pixel_2015-power_supply_20V.cc1");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_thinkpad_anker_both_orientations_cc1)
{
    fixture_result r = check_fixture("thinkpad_yoga_370-anker_powerbank-both_orientations.cc1");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_thinkpad_anker_both_orientations_cc2)
{
    fixture_result r = check_fixture("thinkpad_yoga_370-anker_powerbank-both_orientations.cc2");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_thinkpad_aukey_45w)
{
    fixture_result r = check_fixture("thinkpad_yoga_370-aukey_45w.cc2");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_thinkpad_passthrough_dongle_anker)
{
    fixture_result r = check_fixture("thinkpad_yoga_370-passtrough_dongle-anker_powerbank.cc2");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_zy12pds_65w_noname)
{
    fixture_result r = check_fixture("zy12pds_sink_module-65w_noname_supply.cc1");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}
TS_CASE(fixture_zy12pds_anker_powerbank)
{
    fixture_result r = check_fixture("zy12pds_sink_module-anker_powerbank.cc1");
    printf("contract valid %d: %u mV %u mA %u mW\n", r.contract.valid, (unsigned)r.contract.mv,
           (unsigned)r.contract.ma, (unsigned)r.contract.mw);
}

static const ts_test_case cases[] = {
    TS_ENTRY(crc32_known_answers),
    TS_ENTRY(init_rejects_a_slow_clock),
    TS_ENTRY(negotiation_at_spec_rates_with_jitter),
    TS_ENTRY(no_contract_before_ps_rdy_nor_after_reject),
    TS_ENTRY(soft_reset_ends_the_contract_until_renegotiated),
    TS_ENTRY(hard_reset_ends_the_contract_cable_reset_does_not),
    TS_ENTRY(hard_reset_inside_a_burst_aborts_the_message),
    TS_ENTRY(every_supply_kind_makes_its_contract),
    TS_ENTRY(capability_mismatch_is_kept),
    TS_ENTRY(pr_swap_ends_the_contract),
    TS_ENTRY(crc_failures_and_bad_symbols_are_counted),
    TS_ENTRY(cut_messages_are_truncated_or_lack_eop),
    TS_ENTRY(a_missed_edge_aborts_the_message),
    TS_ENTRY(glitches_are_filtered),
    TS_ENTRY(queue_holds_eight_and_counts_the_rest),
    TS_ENTRY(mode_entry_traffic_is_recognised),
    TS_ENTRY(pdo_and_rdo_fields),
    TS_ENTRY(fixture_macbook_2015_apple_av_hdmi),
    TS_ENTRY(fixture_macbook_2015_apple_power_brick),
    TS_ENTRY(fixture_pixel_2015_hdmi_dongle),
    TS_ENTRY(fixture_pixel_2015_power_supply_20v),
    TS_ENTRY(fixture_thinkpad_anker_both_orientations_cc1),
    TS_ENTRY(fixture_thinkpad_anker_both_orientations_cc2),
    TS_ENTRY(fixture_thinkpad_aukey_45w),
    TS_ENTRY(fixture_thinkpad_passthrough_dongle_anker),
    TS_ENTRY(fixture_zy12pds_65w_noname),
    TS_ENTRY(fixture_zy12pds_anker_powerbank),
};

int main(int argc, char **argv)
{
    return ts_test_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
