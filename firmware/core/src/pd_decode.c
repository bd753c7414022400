/* USB PD decoder: BMC edges -> bits -> ordered sets and 4b5b symbols ->
 * messages -> the explicit contract. See pd_decode.h. */
#include "throttlescope/pd_decode.h"

#include <stddef.h>
#include <string.h>

/* 4b5b decoding, indexed by the five bits in the order received (the first
 * bit in bit 0, as the spec writes symbols right to left): data nibbles
 * 0x0..0xF, the K-codes, and 0xFF for codes that are neither. */
enum { K_SYNC1 = 0x11, K_SYNC2 = 0x12, K_SYNC3 = 0x13, K_RST1 = 0x14, K_RST2 = 0x15,
       K_EOP = 0x16, K_BAD = 0xFF };
static const uint8_t dec4b5b[32] = {
    /* 00000 */ K_BAD, K_BAD, K_BAD, K_BAD, K_BAD, K_BAD, K_SYNC3, K_RST1,
    /* 01000 */ K_BAD, 0x1, 0x4, 0x5, K_BAD, K_EOP, 0x6, 0x7,
    /* 10000 */ K_BAD, K_SYNC2, 0x8, 0x9, 0x2, 0x3, 0xA, 0xB,
    /* 11000 */ K_SYNC1, K_RST2, 0xC, 0xD, 0xE, 0xF, 0x0, K_BAD,
};

/* Ordered sets, in ts_pd_sop order (the first K-code is sent first). */
static const uint8_t ordered_sets[7][4] = {
    {K_SYNC1, K_SYNC1, K_SYNC1, K_SYNC2}, /* SOP */
    {K_SYNC1, K_SYNC1, K_SYNC3, K_SYNC3}, /* SOP' */
    {K_SYNC1, K_SYNC3, K_SYNC1, K_SYNC3}, /* SOP'' */
    {K_SYNC1, K_RST2, K_RST2, K_SYNC3},   /* SOP'_Debug */
    {K_SYNC1, K_RST2, K_SYNC3, K_SYNC2},  /* SOP''_Debug */
    {K_RST1, K_SYNC1, K_RST1, K_SYNC3},   /* Cable Reset */
    {K_RST1, K_RST1, K_RST1, K_RST2},     /* Hard Reset */
};

/* CRC-32, reflected polynomial 0xEDB88320, a nibble at a time (64 bytes of table). */
static const uint32_t crc32_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

static uint32_t crc32_byte(uint32_t crc, uint8_t b)
{
    crc ^= b;
    crc = (crc >> 4) ^ crc32_nibble[crc & 0x0Fu];
    crc = (crc >> 4) ^ crc32_nibble[crc & 0x0Fu];
    return crc;
}

uint32_t ts_pd_crc32(uint16_t header, const uint32_t *obj, uint32_t ndo)
{
    uint32_t crc = 0xFFFFFFFFu;
    crc = crc32_byte(crc, (uint8_t)header);
    crc = crc32_byte(crc, (uint8_t)(header >> 8));
    for (uint32_t i = 0; i < ndo; i++) {
        for (uint32_t s = 0; s < 32u; s += 8u) {
            crc = crc32_byte(crc, (uint8_t)(obj[i] >> s));
        }
    }
    return ~crc;
}

static uint32_t ns_to_ticks(uint32_t tick_hz, uint32_t ns)
{
    return (uint32_t)(((uint64_t)tick_hz * ns) / 1000000000u);
}

int ts_pd_init(ts_pd_decoder *d, const ts_pd_config *cfg)
{
    memset(d, 0, sizeof(*d));
    if (cfg == NULL || cfg->tick_hz < 1000000u) {
        return -1;
    }
    d->cfg = *cfg;
    d->zero_ticks = ns_to_ticks(cfg->tick_hz, cfg->zero_ns ? cfg->zero_ns : TS_PD_DEFAULT_ZERO_NS);
    d->idle_ticks = ns_to_ticks(cfg->tick_hz, cfg->idle_ns ? cfg->idle_ns : TS_PD_DEFAULT_IDLE_NS);
    d->glitch_ticks = ns_to_ticks(cfg->tick_hz, cfg->glitch_ns);
    if (d->idle_ticks <= d->zero_ticks) {
        return -1;
    }
    d->level = 2u;
    return 0;
}

/* ---- contract ---------------------------------------------------------- */

enum { PEND_NONE = 0, PEND_REQUEST, PEND_ACCEPTED, PEND_PR_SWAP };

static void contract_end(ts_pd_decoder *d, uint64_t t, ts_pd_contract_end why)
{
    d->ncaps = 0;
    d->pending = PEND_NONE;
    /* A contract ends; so does the wait after a Soft_Reset when a Hard Reset or a
     * swap comes before the renegotiation. */
    if (d->contract.valid ||
        (d->contract.end == TS_PD_END_SOFT_RESET && why != TS_PD_END_SOFT_RESET)) {
        uint32_t gen = d->contract.generation + 1u;
        memset(&d->contract, 0, sizeof(d->contract));
        d->contract.generation = gen;
        d->contract.t = t;
        d->contract.end = (uint8_t)why;
    }
}

static void contract_make(ts_pd_decoder *d, uint64_t t, uint8_t spec_rev)
{
    (void)spec_rev;
    ts_pd_pdo pdo = ts_pd_parse_pdo(d->req_pdo);
    ts_pd_rdo rdo = ts_pd_parse_rdo(d->req_rdo, pdo.kind);
    ts_pd_contract c;
    memset(&c, 0, sizeof(c));
    c.valid = true;
    c.kind = pdo.kind;
    c.position = rdo.position;
    c.capability_mismatch = rdo.capability_mismatch;
    c.mv_min = pdo.mv_min;
    c.mv_max = pdo.mv_max;
    c.pdo = d->req_pdo;
    c.rdo = d->req_rdo;
    c.t = t;
    switch (pdo.kind) {
    case TS_PD_FIXED:
        c.mv = pdo.mv_min;
        c.ma = rdo.op_ma;
        c.ma_max = rdo.max_ma;
        c.mw = c.mv * c.ma / 1000u;
        break;
    case TS_PD_VARIABLE:
        c.ma = rdo.op_ma;
        c.ma_max = rdo.max_ma;
        c.mw = c.mv_max * c.ma / 1000u;
        break;
    case TS_PD_BATTERY:
        c.mw = rdo.op_mw;
        c.ma = c.mv_min ? rdo.op_mw * 1000u / c.mv_min : 0u;
        c.ma_max = c.mv_min ? rdo.max_mw * 1000u / c.mv_min : 0u;
        break;
    default: /* PPS and AVS */
        c.mv = rdo.out_mv;
        c.ma = rdo.op_ma;
        c.ma_max = rdo.op_ma;
        c.mw = c.mv * c.ma / 1000u;
        break;
    }
    c.generation = d->contract.generation + 1u;
    d->contract = c;
}

static void contract_track(ts_pd_decoder *d, const ts_pd_msg *m)
{
    if (m->sop == TS_PD_HARD_RESET) {
        contract_end(d, m->t, TS_PD_END_HARD_RESET);
        return;
    }
    if (m->sop != TS_PD_SOP || !(m->flags & TS_PD_F_CRC_OK)) {
        return;
    }
    ts_pd_header h = ts_pd_parse_header(m->header);
    switch (ts_pd_msg_kind(m)) {
    case TS_PD_K_SOURCE_CAPABILITIES:
        if (h.power_role) {
            memcpy(d->caps, m->obj, sizeof(d->caps));
            d->ncaps = m->ndo;
            d->pending = PEND_NONE;
        }
        break;
    case TS_PD_K_REQUEST:
    case TS_PD_K_EPR_REQUEST:
        if (!h.power_role && m->ndo >= 1u) {
            uint32_t pos = m->obj[0] >> 28;
            d->req_rdo = m->obj[0];
            d->pending = PEND_NONE;
            if (ts_pd_msg_kind(m) == TS_PD_K_EPR_REQUEST && m->ndo >= 2u) {
                d->req_pdo = m->obj[1]; /* the sink repeats the PDO it asks for */
                d->pending = PEND_REQUEST;
            } else if (pos >= 1u && pos <= d->ncaps) {
                d->req_pdo = d->caps[pos - 1u];
                d->pending = PEND_REQUEST;
            }
        }
        break;
    case TS_PD_K_ACCEPT:
        if (d->pending == PEND_REQUEST && h.power_role) {
            d->pending = PEND_ACCEPTED;
        } else if (d->pending == PEND_PR_SWAP) {
            contract_end(d, m->t, TS_PD_END_PR_SWAP); /* the new source offers anew */
        }
        break;
    case TS_PD_K_PS_RDY:
        if (d->pending == PEND_ACCEPTED && h.power_role) {
            contract_make(d, m->t, h.spec_rev);
            d->pending = PEND_NONE;
        }
        break;
    case TS_PD_K_REJECT:
    case TS_PD_K_WAIT:
        d->pending = PEND_NONE;
        break;
    case TS_PD_K_SOFT_RESET:
        /* Either side: both policy engines go back to the capabilities (PE_SNK_
         * Wait_for_Capabilities); the supply keeps its output meanwhile. */
        contract_end(d, m->t, TS_PD_END_SOFT_RESET);
        break;
    case TS_PD_K_PR_SWAP:
        d->pending = PEND_PR_SWAP;
        break;
    default:
        break;
    }
}

/* ---- messages out ------------------------------------------------------ */

static void hand_on(ts_pd_decoder *d, const ts_pd_msg *m)
{
    d->counters.messages++;
    contract_track(d, m);
    if (d->cfg.on_msg != NULL) {
        d->cfg.on_msg(d->cfg.ctx, m);
        return;
    }
    if (d->q_head - d->q_tail >= TS_PD_QUEUE_LEN) {
        d->counters.queue_overflows++;
        return;
    }
    d->q[d->q_head % TS_PD_QUEUE_LEN] = *m;
    d->q_head++;
}

bool ts_pd_take(ts_pd_decoder *d, ts_pd_msg *out)
{
    if (d->q_head == d->q_tail) {
        return false;
    }
    *out = d->q[d->q_tail % TS_PD_QUEUE_LEN];
    d->q_tail++;
    return true;
}

/* The message in d->cur ends: whole (CRC read) or cut short. */
static void finish_message(ts_pd_decoder *d, bool eop)
{
    ts_pd_msg *m = &d->cur;
    if (d->nibbles >= d->nibbles_total) {
        if (m->crc == ts_pd_crc32(m->header, m->obj, m->ndo)) {
            m->flags |= TS_PD_F_CRC_OK;
        } else {
            d->counters.crc_failures++;
        }
        if (eop) {
            m->flags |= TS_PD_F_EOP;
        } else {
            d->counters.missing_eop++;
        }
    } else {
        m->flags |= TS_PD_F_TRUNCATED;
        d->counters.truncated++;
        if (d->nibbles < 4u + 8u * m->ndo) {
            m->ndo = (uint8_t)(d->nibbles < 4u ? 0u : (d->nibbles - 4u) / 8u);
        }
    }
    d->state = TS_PD_SKIP;
    hand_on(d, m);
}

/* ---- bits -------------------------------------------------------------- */

static int match_ordered_set(uint32_t window)
{
    uint8_t k[4];
    for (uint32_t j = 0; j < 4u; j++) {
        k[j] = dec4b5b[(window >> (5u * j)) & 0x1Fu];
    }
    for (int s = 0; s < 7; s++) {
        if (memcmp(k, ordered_sets[s], 4) == 0) {
            return s;
        }
    }
    for (int s = 0; s < 7; s++) { /* three of four K-codes right is enough */
        int right = 0;
        for (uint32_t j = 0; j < 4u; j++) {
            right += k[j] == ordered_sets[s][j];
        }
        if (right >= 3) {
            return s;
        }
    }
    return -1;
}

static void symbol(ts_pd_decoder *d, uint8_t code)
{
    ts_pd_msg *m = &d->cur;
    uint8_t v = dec4b5b[code];
    uint32_t n = d->nibbles;
    if (n >= d->nibbles_total) { /* after the CRC: EOP is due */
        finish_message(d, v == K_EOP);
        return;
    }
    if (v > 0x0Fu) {
        m->bad_symbols++;
        d->counters.bad_symbols++;
        v = 0;
    }
    if (n < 4u) {
        m->header = (uint16_t)(m->header | ((uint32_t)v << (4u * n)));
        if (n == 3u) {
            m->ndo = (uint8_t)((m->header >> 12) & 7u);
            d->nibbles_total = (uint16_t)(4u + 8u * m->ndo + 8u);
        }
    } else if (n < 4u + 8u * m->ndo) {
        uint32_t i = (n - 4u) / 8u, s = (n - 4u) % 8u;
        m->obj[i] |= (uint32_t)v << (4u * s);
    } else {
        uint32_t s = n - 4u - 8u * m->ndo;
        m->crc |= (uint32_t)v << (4u * s);
    }
    d->nibbles++;
}

/* Hard Reset's four K-codes as the last 20 bits received (oldest in bit 0). */
#define HARD_RESET_BITS                                                                  \
    ((uint32_t)0x07u | ((uint32_t)0x07u << 5) | ((uint32_t)0x07u << 10) | ((uint32_t)0x19u << 15))

static void ordered_set_alone(ts_pd_decoder *d, int s, uint64_t t)
{
    ts_pd_msg *m = &d->cur;
    memset(m, 0, sizeof(*m));
    m->t = t;
    m->sop = (uint8_t)s;
    m->preamble_bits = (uint16_t)(d->burst_bits - 20u > 0xFFFFu ? 0xFFFFu : d->burst_bits - 20u);
    m->flags = TS_PD_F_CRC_OK; /* nothing to check: the ordered set is the message */
    d->state = TS_PD_SKIP;
    hand_on(d, m);
}

static void bit(ts_pd_decoder *d, uint32_t b)
{
    d->burst_bits++;
    d->window = (d->window >> 1) | (b << 19);
    if (d->state != TS_PD_HUNT) {
        if (d->window == HARD_RESET_BITS && d->burst_bits >= 20u) {
            if (d->state == TS_PD_FRAME) { /* aborted for a Hard Reset */
                d->cur.flags |= TS_PD_F_ABORTED;
                finish_message(d, false);
            }
            ordered_set_alone(d, TS_PD_HARD_RESET, d->last_t); /* its preamble is unknown */
            return;
        }
    }
    if (d->state == TS_PD_HUNT) {
        if (d->burst_bits < 20u) {
            return;
        }
        int s = match_ordered_set(d->window);
        if (s < 0) {
            return;
        }
        if (s == TS_PD_HARD_RESET || s == TS_PD_CABLE_RESET) {
            ordered_set_alone(d, s, d->burst_t);
            return;
        }
        ts_pd_msg *m = &d->cur;
        memset(m, 0, sizeof(*m));
        m->t = d->burst_t;
        m->sop = (uint8_t)s;
        m->preamble_bits = (uint16_t)(d->burst_bits - 20u > 0xFFFFu ? 0xFFFFu : d->burst_bits - 20u);
        d->state = TS_PD_FRAME;
        d->nibbles = 0;
        d->nibbles_total = 4u; /* until the header says more */
        d->sym_bits = 0;
        d->sym_acc = 0;
    } else if (d->state == TS_PD_FRAME) {
        d->sym_acc = (uint8_t)(d->sym_acc | (b << d->sym_bits));
        if (++d->sym_bits == 5u) {
            uint8_t code = d->sym_acc;
            d->sym_bits = 0;
            d->sym_acc = 0;
            symbol(d, code);
        }
    }
}

/* ---- edges ------------------------------------------------------------- */

static void burst_end(ts_pd_decoder *d)
{
    if (d->state == TS_PD_FRAME) {
        finish_message(d, false);
    } else if (d->state == TS_PD_HUNT) {
        if (d->burst_bits >= TS_PD_NOISE_MIN_BITS) {
            d->counters.noise_bursts++;
        } else {
            d->counters.short_bursts++;
        }
    }
    d->in_burst = false;
}

static void burst_start(ts_pd_decoder *d, uint64_t t)
{
    d->in_burst = true;
    d->burst_t = t;
    d->burst_bits = 0;
    d->window = 0;
    d->half_one = false;
    d->state = TS_PD_HUNT;
}

/* One edge past the glitch filter: BMC. */
static void edge(ts_pd_decoder *d, uint64_t t)
{
    if (!d->in_burst) {
        d->last_t = t;
        burst_start(d, t);
        return;
    }
    uint64_t dt = t - d->last_t;
    d->last_t = t;
    if (dt > d->idle_ticks) {
        burst_end(d);
        burst_start(d, t);
        return;
    }
    bool whole = dt > d->zero_ticks;
    if (!whole && !d->half_one) {
        d->half_one = true;
    } else if (!whole) {
        d->half_one = false;
        bit(d, 1u);
    } else {
        if (d->half_one) { /* half a one, then a whole bit: not BMC; read as a 0 */
            if (d->state == TS_PD_FRAME) {
                d->counters.bmc_errors++; /* before the ordered set it is noise */
            }
            d->half_one = false;
        }
        bit(d, 0u);
    }
}

void ts_pd_feed_edge(ts_pd_decoder *d, uint64_t t, uint8_t level)
{
    d->counters.edges++;
    level = level ? 1u : 0u;
    if (level == d->level) {
        /* The line cannot go to where it is: an edge was lost between. */
        d->counters.level_errors++;
        if (d->state == TS_PD_FRAME) {
            d->cur.flags |= TS_PD_F_ABORTED;
            finish_message(d, false);
        }
        d->state = TS_PD_SKIP;
    }
    d->level = level;
    if (d->glitch_ticks == 0u) {
        edge(d, t);
        return;
    }
    if (d->pend && t - d->pend_t <= d->glitch_ticks) {
        d->pend = false; /* a pulse shorter than a glitch: neither edge was real */
        d->counters.glitches++;
        return;
    }
    if (d->pend) {
        edge(d, d->pend_t);
    }
    d->pend = true;
    d->pend_t = t;
}

void ts_pd_idle(ts_pd_decoder *d, uint64_t now)
{
    if (d->pend && now - d->pend_t > d->glitch_ticks) {
        edge(d, d->pend_t);
        d->pend = false;
    }
    if (d->in_burst && !d->pend && now - d->last_t > d->idle_ticks) {
        burst_end(d);
    }
}

bool ts_pd_contract_changed(const ts_pd_decoder *d, uint32_t *seen, ts_pd_contract *out)
{
    if (d->contract.generation == *seen) {
        return false;
    }
    *seen = d->contract.generation;
    *out = d->contract;
    return true;
}

void ts_pd_contract_get(const ts_pd_decoder *d, ts_pd_contract *out)
{
    *out = d->contract;
}

const ts_pd_counters *ts_pd_counters_get(const ts_pd_decoder *d)
{
    return &d->counters;
}

/* ---- parsing ----------------------------------------------------------- */

ts_pd_header ts_pd_parse_header(uint16_t header)
{
    ts_pd_header h;
    h.type = (uint8_t)(header & 0x1Fu);
    h.data_role = (header >> 5) & 1u;
    h.spec_rev = (uint8_t)((header >> 6) & 3u);
    h.power_role = (header >> 8) & 1u;
    h.id = (uint8_t)((header >> 9) & 7u);
    h.ndo = (uint8_t)((header >> 12) & 7u);
    h.extended = (header >> 15) & 1u;
    return h;
}

ts_pd_kind ts_pd_msg_kind(const ts_pd_msg *m)
{
    if (m->sop == TS_PD_HARD_RESET) {
        return TS_PD_K_HARD_RESET;
    }
    if (m->sop == TS_PD_CABLE_RESET) {
        return TS_PD_K_CABLE_RESET;
    }
    ts_pd_header h = ts_pd_parse_header(m->header);
    if (h.extended) {
        return (ts_pd_kind)(TS_PD_K_EXTENDED | h.type);
    }
    return (ts_pd_kind)((h.ndo ? 0x20u : 0x00u) | h.type);
}

const char *ts_pd_kind_name(ts_pd_kind k)
{
    static const char *const control[] = {
        "?", "GoodCRC", "GotoMin", "Accept", "Reject", "Ping", "PS_RDY", "Get_Source_Cap",
        "Get_Sink_Cap", "DR_Swap", "PR_Swap", "VCONN_Swap", "Wait", "Soft_Reset",
        "Data_Reset", "Data_Reset_Complete", "Not_Supported", "Get_Source_Cap_Extended",
        "Get_Status", "FR_Swap", "Get_PPS_Status", "Get_Country_Codes",
        "Get_Sink_Cap_Extended", "Get_Source_Info", "Get_Revision",
    };
    static const char *const data[] = {
        "?", "Source_Capabilities", "Request", "BIST", "Sink_Capabilities", "Battery_Status",
        "Alert", "Get_Country_Info", "Enter_USB", "EPR_Request", "EPR_Mode", "Source_Info",
        "Revision", "?", "?", "Vendor_Defined",
    };
    uint32_t v = (uint32_t)k;
    if (v < sizeof(control) / sizeof(control[0])) {
        return control[v];
    }
    if (v >= 0x20u && v - 0x20u < sizeof(data) / sizeof(data[0])) {
        return data[v - 0x20u];
    }
    if (k == TS_PD_K_HARD_RESET) {
        return "Hard_Reset";
    }
    if (k == TS_PD_K_CABLE_RESET) {
        return "Cable_Reset";
    }
    if ((v & 0x60u) == TS_PD_K_EXTENDED) {
        return "Extended";
    }
    return "?";
}

ts_pd_pdo ts_pd_parse_pdo(uint32_t pdo)
{
    ts_pd_pdo p;
    memset(&p, 0, sizeof(p));
    p.raw = pdo;
    switch (pdo >> 30) {
    case 0u:
        p.kind = TS_PD_FIXED;
        p.mv_min = p.mv_max = ((pdo >> 10) & 0x3FFu) * 50u;
        p.ma_max = (pdo & 0x3FFu) * 10u;
        break;
    case 1u:
        p.kind = TS_PD_BATTERY;
        p.mv_max = ((pdo >> 20) & 0x3FFu) * 50u;
        p.mv_min = ((pdo >> 10) & 0x3FFu) * 50u;
        p.mw_max = (pdo & 0x3FFu) * 250u;
        break;
    case 2u:
        p.kind = TS_PD_VARIABLE;
        p.mv_max = ((pdo >> 20) & 0x3FFu) * 50u;
        p.mv_min = ((pdo >> 10) & 0x3FFu) * 50u;
        p.ma_max = (pdo & 0x3FFu) * 10u;
        break;
    default:
        switch ((pdo >> 28) & 3u) {
        case 0u:
            p.kind = TS_PD_PPS;
            p.mv_max = ((pdo >> 17) & 0xFFu) * 100u;
            p.mv_min = ((pdo >> 8) & 0xFFu) * 100u;
            p.ma_max = (pdo & 0x7Fu) * 50u;
            break;
        case 1u:
            p.kind = TS_PD_EPR_AVS;
            p.mv_max = ((pdo >> 17) & 0x1FFu) * 100u;
            p.mv_min = ((pdo >> 8) & 0xFFu) * 100u;
            p.mw_max = (pdo & 0xFFu) * 1000u;
            break;
        case 2u:
            p.kind = TS_PD_SPR_AVS; /* 9..15 V, and to 20 V when it gives current there */
            p.mv_min = 9000u;
            p.mv_max = (pdo & 0x3FFu) ? 20000u : 15000u;
            p.ma_max = ((pdo >> 10) & 0x3FFu) * 10u;
            break;
        default:
            p.kind = TS_PD_APDO_RESERVED;
            break;
        }
        break;
    }
    return p;
}

ts_pd_rdo ts_pd_parse_rdo(uint32_t rdo, ts_pd_supply kind)
{
    ts_pd_rdo r;
    memset(&r, 0, sizeof(r));
    r.position = (uint8_t)(rdo >> 28);
    r.give_back = (rdo >> 27) & 1u;
    r.capability_mismatch = (rdo >> 26) & 1u;
    r.usb_comm = (rdo >> 25) & 1u;
    r.no_suspend = (rdo >> 24) & 1u;
    r.unchunked = (rdo >> 23) & 1u;
    r.epr_capable = (rdo >> 22) & 1u;
    switch (kind) {
    case TS_PD_FIXED:
    case TS_PD_VARIABLE:
        r.op_ma = ((rdo >> 10) & 0x3FFu) * 10u;
        r.max_ma = (rdo & 0x3FFu) * 10u;
        break;
    case TS_PD_BATTERY:
        r.op_mw = ((rdo >> 10) & 0x3FFu) * 250u;
        r.max_mw = (rdo & 0x3FFu) * 250u;
        break;
    case TS_PD_PPS:
        r.give_back = false; /* bit 27 is reserved here */
        r.out_mv = ((rdo >> 9) & 0xFFFu) * 20u;
        r.op_ma = (rdo & 0x7Fu) * 50u;
        break;
    case TS_PD_EPR_AVS:
    case TS_PD_SPR_AVS:
        r.give_back = false;
        r.out_mv = ((rdo >> 9) & 0xFFFu) * 25u;
        r.op_ma = (rdo & 0x7Fu) * 50u;
        break;
    default:
        break;
    }
    return r;
}

ts_pd_vdm ts_pd_parse_vdm(uint32_t w)
{
    ts_pd_vdm v;
    memset(&v, 0, sizeof(v));
    v.svid = (uint16_t)(w >> 16);
    v.structured = (w >> 15) & 1u;
    if (v.structured) {
        v.version = (uint8_t)((w >> 13) & 3u);
        v.position = (uint8_t)((w >> 8) & 7u);
        v.cmd_type = (uint8_t)((w >> 6) & 3u);
        v.command = (uint8_t)(w & 0x1Fu);
    }
    return v;
}
