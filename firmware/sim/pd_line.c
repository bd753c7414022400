/* USB PD traffic on the simulated CC line (pd_line.h). */
#include "pd_line.h"

#include <string.h>

#include "throttlescope/pd_decode.h"

/* BMC at 300 kbit/s: a unit interval is 40 ticks of 12 MHz, a half bit 20. */
#define UI_TICKS (TS_PD_LINE_TICKS_PER_US * 10u / 3u)
/* tTransmit (GoodCRC within 195 us), then a reply a little later. */
#define GOODCRC_GAP_US 150u
#define REPLY_GAP_US 1000u
/* PS_RDY after Accept: tSrcTransition (25..35 ms) at the same voltage; a new
 * voltage settles first (tSrcReady up to 285 ms). */
#define PS_RDY_SAME_V_US 30000u
#define PS_RDY_NEW_V_US 150000u

enum { SYNC1 = 0x18, SYNC2 = 0x11, RST1 = 0x07, RST2 = 0x19, EOP = 0x0D };
static const uint8_t k4b5b[16] = {0x1E, 0x09, 0x14, 0x15, 0x0A, 0x0B, 0x0E, 0x0F,
                                  0x12, 0x13, 0x16, 0x17, 0x1A, 0x1B, 0x1C, 0x1D};

/* Message types used here (USB PD R3.x Tables 6-5 and 6-6). */
enum { GOODCRC = 1, ACCEPT = 3, PS_RDY = 6, SOURCE_CAPS = 1, REQUEST = 2 };

/* One message being encoded: its bits, least significant first on the wire. */
typedef struct bits {
    uint8_t b[512];
    uint32_t n;
    bool overflow;
} bits;

static void put(bits *w, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        if (w->n >= sizeof w->b) {
            w->overflow = true;
            return;
        }
        w->b[w->n++] = (uint8_t)((v >> i) & 1u);
    }
}

static void put_nibbles(bits *w, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        put(w, k4b5b[(v >> (4u * i)) & 0xFu], 5);
    }
}

static void put_preamble(bits *w)
{
    for (unsigned i = 0; i < 64u; i++) {
        put(w, i & 1u, 1);
    }
}

void ts_pd_line_init(ts_pd_line *l, uint32_t mv)
{
    memset(l, 0, sizeof *l);
    l->mv = mv;
}

bool ts_pd_line_idle(const ts_pd_line *l)
{
    return l->next >= l->count;
}

/* BMC: a transition at every bit's start and in the middle of a one, and a
 * last edge after the final bit; appended at *cursor, which moves past it. */
static bool emit(ts_pd_line *l, const bits *w)
{
    if (w->overflow || l->count + 2u * w->n + 1u > TS_PD_LINE_MAX_EDGES) {
        return false;
    }
    uint64_t t = l->cursor_tick;
    for (uint32_t i = 0; i < w->n; i++) {
        l->edge[l->count++] = t;
        if (w->b[i]) {
            l->edge[l->count++] = t + UI_TICKS / 2u;
        }
        t += UI_TICKS;
    }
    l->edge[l->count++] = t;
    l->cursor_tick = t;
    return true;
}

static uint16_t header(unsigned type, unsigned ndo, unsigned id, bool source)
{
    /* PD 3.0 (spec revision 2); the host port is source and DFP. */
    unsigned role = source ? 1u : 0u;
    return (uint16_t)(type | (role << 5) | (2u << 6) | (role << 8) | ((id & 7u) << 9) |
                      (ndo << 12));
}

/* One SOP message at least gap_us after the previous one. */
static bool message(ts_pd_line *l, uint32_t gap_us, uint16_t h, const uint32_t *obj,
                    unsigned ndo)
{
    bits w;
    w.n = 0;
    w.overflow = false;
    put_preamble(&w);
    put(&w, SYNC1, 5);
    put(&w, SYNC1, 5);
    put(&w, SYNC1, 5);
    put(&w, SYNC2, 5);
    put_nibbles(&w, h, 4);
    for (unsigned i = 0; i < ndo; i++) {
        put_nibbles(&w, obj[i], 8);
    }
    put_nibbles(&w, ts_pd_crc32(h, obj, ndo), 8);
    put(&w, EOP, 5);
    l->cursor_tick += (uint64_t)gap_us * TS_PD_LINE_TICKS_PER_US;
    return emit(l, &w);
}

/* A message and the partner's GoodCRC; the sender's MessageID moves on. */
static bool exchange(ts_pd_line *l, uint32_t gap_us, bool source, unsigned type,
                     const uint32_t *obj, unsigned ndo)
{
    uint8_t *id = source ? &l->src_id : &l->snk_id;
    bool ok = message(l, gap_us, header(type, ndo, *id, source), obj, ndo) &&
              message(l, GOODCRC_GAP_US, header(GOODCRC, 0, *id, !source), NULL, 0);
    *id = (uint8_t)((*id + 1u) & 7u);
    return ok;
}

/* Start a new exchange at at_us (or right after a previous one still on the line). */
static bool begin(ts_pd_line *l, uint64_t at_us)
{
    if (!ts_pd_line_idle(l)) {
        return false;
    }
    uint64_t at = at_us * TS_PD_LINE_TICKS_PER_US;
    l->count = l->next = 0;
    l->cursor_tick = at > l->cursor_tick ? at : l->cursor_tick;
    return true;
}

static uint32_t pdo_fixed(uint32_t mv, uint32_t ma)
{
    return ((mv / 50u) << 10) | (ma / 10u);
}

bool ts_pd_line_negotiate(ts_pd_line *l, uint64_t at_us, uint32_t mv, uint32_t ma)
{
    if (!begin(l, at_us)) {
        return false;
    }
    uint32_t caps[2];
    unsigned ncaps = 1, position = 1;
    caps[0] = pdo_fixed(5000u, mv == 5000u ? ma : 3000u) | (1u << 25); /* USB comm capable */
    if (mv != 5000u) {
        caps[1] = pdo_fixed(mv, ma);
        ncaps = 2;
        position = 2;
    }
    /* Fixed RDO: object position, USB communications capable, operating and maximum current. */
    uint32_t rdo = ((uint32_t)position << 28) | (1u << 25) | ((ma / 10u) << 10) | (ma / 10u);
    bool ok = exchange(l, 0, true, SOURCE_CAPS, caps, ncaps) &&
              exchange(l, REPLY_GAP_US, false, REQUEST, &rdo, 1) &&
              exchange(l, REPLY_GAP_US, true, ACCEPT, NULL, 0);
    uint32_t wait = mv == l->mv ? PS_RDY_SAME_V_US : PS_RDY_NEW_V_US;
    l->mv = mv;
    l->ps_rdy_us = l->cursor_tick / TS_PD_LINE_TICKS_PER_US + wait;
    ok = ok && exchange(l, wait, true, PS_RDY, NULL, 0);
    if (!ok) {
        l->count = l->next = 0;
    }
    return ok;
}

bool ts_pd_line_hard_reset(ts_pd_line *l, uint64_t at_us)
{
    if (!begin(l, at_us)) {
        return false;
    }
    bits w;
    w.n = 0;
    w.overflow = false;
    put_preamble(&w);
    put(&w, RST1, 5);
    put(&w, RST1, 5);
    put(&w, RST1, 5);
    put(&w, RST2, 5);
    l->ps_rdy_us = l->cursor_tick / TS_PD_LINE_TICKS_PER_US;
    l->src_id = l->snk_id = 0; /* a Hard Reset restarts the MessageIDs */
    l->mv = 5000u;             /* and the source returns to vSafe5V */
    return emit(l, &w);
}

bool ts_pd_line_next_edge(ts_pd_line *l, uint64_t until, uint64_t *tick, uint8_t *level)
{
    if (l->next >= l->count || l->edge[l->next] > until) {
        return false;
    }
    *tick = l->edge[l->next++];
    l->level ^= 1u;
    *level = l->level;
    return true;
}
