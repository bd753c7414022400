/* The PD tap's PIO program (firmware/app/src/cc_edges_pio.h), its very words,
 * run on a model of the RP2040 PIO instructions it uses (JMP on X-- and PIN,
 * IN from X, NULL and OSR with the ISR shifting right, PUSH noblock into an
 * RX FIFO that DMA drains, .wrap; RP2040 datasheet 3.4) with a real capture's
 * CC edges on its jmp pin at 125 MHz. Every edge must come out as one word
 * with its level, the stamps must keep the edges' time (X at clk_sys / 2,
 * whatever the line did, also across X's wrap), and the decoder fed those
 * stamps as the app feeds them must read what it reads from the capture. */
#include "harness.h"

#include "../app/src/cc_edges_pio.h"
#include "pd_fixture.h"
#include "throttlescope/pd_decode.h"

#define CLK_HZ 125000000u
#define MAX_EDGES 32768u

static const uint16_t program[] = {CC_EDGES_WORDS};

/* The capture's edges, in PIO cycles, and the level after each. */
static uint64_t edge_cycle[MAX_EDGES];
static uint8_t edge_level[MAX_EDGES];
static size_t nedges;
static uint8_t initial_level;

/* What the state machine pushed: the word and the cycle it was pushed in. */
static uint32_t word[MAX_EDGES];
static uint64_t word_cycle[MAX_EDGES];
static size_t nwords;

static void load_edges(const char *name)
{
    FILE *f = open_fixture(name, ".edges");
    char tok[64];
    uint32_t clock_hz = 0;
    uint64_t t = 0;
    int level = 0;
    nedges = 0;
    while (fscanf(f, " %63s", tok) == 1) {
        if (tok[0] == '#') {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n') {
            }
        } else if (strcmp(tok, "clock_hz") == 0) {
            CHECK(fscanf(f, "%" SCNu32, &clock_hz) == 1);
        } else if (strcmp(tok, "samples") == 0) {
            uint64_t ignored;
            CHECK(fscanf(f, "%" SCNu64, &ignored) == 1);
        } else if (strcmp(tok, "initial_level") == 0) {
            CHECK(fscanf(f, "%d", &level) == 1);
            initial_level = (uint8_t)level;
        } else {
            uint64_t v = strtoull(tok[0] == '@' ? tok + 1 : tok, NULL, 10);
            t = tok[0] == '@' ? v : t + v;
            level ^= 1;
            CHECK(nedges < MAX_EDGES && clock_hz > 0);
            edge_cycle[nedges] = 1000u + t * CLK_HZ / clock_hz;
            edge_level[nedges] = (uint8_t)level;
            nedges++;
        }
    }
    fclose(f);
}

/* Run the state machine from cycle 0 until `until` with X = x0, OSR = ~0 (as
 * pd_tap.c starts it); the pin follows the edges from the capture's initial
 * level (a line high at the start is pushed as a rise at once). A push is taken
 * at once (the DMA drains the FIFO); returns X at the end. */
static uint32_t run_pio(uint32_t x0, uint64_t until)
{
    uint32_t x = x0, isr = 0, osr = 0xFFFFFFFFu;
    unsigned pc = CC_EDGES_START, isr_count = 0;
    size_t e = 0;
    uint8_t pin = initial_level;
    nwords = 0;
    for (uint64_t cyc = 0; cyc < until; cyc++) {
        while (e < nedges && edge_cycle[e] <= cyc) {
            pin = edge_level[e++];
        }
        uint16_t ins = program[pc];
        unsigned next = pc == CC_EDGES_WRAP ? CC_EDGES_WRAP_TARGET : pc + 1u;
        switch (ins >> 13) {
        case 0: { /* JMP */
            unsigned cond = (ins >> 5) & 7u, addr = ins & 31u;
            CHECK((ins & 0x1F00u) == 0u); /* no delay, no side-set */
            if (cond == 2u) {             /* X--: jump if X was not 0, then decrement */
                bool take = x != 0u;
                x--;
                pc = take ? addr : next;
            } else if (cond == 6u) { /* PIN */
                pc = pin ? addr : next;
            } else {
                CHECK(false); /* the program uses no other condition */
            }
            break;
        }
        case 2: { /* IN, shifting right: new bits enter at the top */
            unsigned src = (ins >> 5) & 7u, n = ins & 31u;
            CHECK(n != 0u);
            uint32_t v = src == 1u ? x : src == 3u ? 0u : src == 7u ? osr : 0xDEADu;
            CHECK(v != 0xDEADu);
            v &= (1u << n) - 1u;
            isr = (isr >> n) | (v << (32u - n));
            isr_count += n;
            pc = next;
            break;
        }
        case 4: /* PUSH noblock */
            CHECK(ins == 0x8000u);
            CHECK(isr_count == 32u);
            CHECK(nwords < MAX_EDGES);
            word[nwords] = isr;
            word_cycle[nwords++] = cyc;
            isr = 0;
            isr_count = 0;
            pc = next;
            break;
        default:
            CHECK(false);
        }
    }
    return x;
}

/* The stamps widened as pd_tap.c widens them (31 bits, X counting down from x0). */
static uint64_t widen(uint32_t prev, uint32_t now)
{
    return (prev - now) & CC_EDGES_STAMP_MASK;
}

static void check_capture(const char *name, uint32_t x0)
{
    load_edges(name);
    CHECK(nedges > 100u);
    uint64_t until = edge_cycle[nedges - 1u] + 1000u;
    uint32_t x_end = run_pio(x0, until);
    /* X is a clock at clk_sys / 2: whatever the line did, it moved by the cycles / 2. */
    CHECK_EQ_U((uint32_t)(x0 - x_end), (uint32_t)(until / CC_EDGES_CYCLES_PER_TICK));
    /* A line high at the start is one rise at once, which the decoder takes as a level
     * change; then one word per edge, with its level, pushed 8 cycles or less after it. */
    if (initial_level == 1u) {
        CHECK(nwords > 0u && word[0] >> 31 == 1u && word_cycle[0] <= 10u);
        memmove(word, word + 1, (nwords - 1u) * sizeof word[0]);
        memmove(word_cycle, word_cycle + 1, (nwords - 1u) * sizeof word_cycle[0]);
        nwords--;
    }
    CHECK_EQ_U(nwords, nedges);
    for (size_t i = 0; i < nedges; i++) {
        CHECK_EQ_U(word[i] >> 31, edge_level[i]);
        CHECK(word_cycle[i] > edge_cycle[i] && word_cycle[i] <= edge_cycle[i] + 10u);
    }
    /* The stamps keep the edges' time to within the 2-cycle tick. */
    static ts_pd_decoder from_pio, from_capture;
    ts_pd_config cfg = {0};
    cfg.tick_hz = CLK_HZ / CC_EDGES_CYCLES_PER_TICK;
    cfg.glitch_ns = 300u;
    CHECK(ts_pd_init(&from_pio, &cfg) == 0);
    cfg.tick_hz = CLK_HZ;
    CHECK(ts_pd_init(&from_capture, &cfg) == 0);
    uint64_t tick = 0;
    for (size_t i = 0; i < nwords; i++) {
        uint32_t stamp = word[i] & CC_EDGES_STAMP_MASK;
        tick = i == 0 ? widen(x0 & CC_EDGES_STAMP_MASK, stamp)
                      : tick + widen(word[i - 1u] & CC_EDGES_STAMP_MASK, stamp);
        if (i > 0) {
            double cycles = (double)(edge_cycle[i] - edge_cycle[0]);
            double from_stamps = (double)(tick - (uint64_t)widen(x0 & CC_EDGES_STAMP_MASK,
                                                                 word[0] & CC_EDGES_STAMP_MASK)) *
                                 CC_EDGES_CYCLES_PER_TICK;
            CHECK_NEAR(from_stamps, cycles, 2.0);
        }
        ts_pd_feed_edge(&from_pio, tick, (uint8_t)(word[i] >> 31));
        ts_pd_feed_edge(&from_capture, edge_cycle[i], edge_level[i]);
    }
    ts_pd_idle(&from_pio, tick + cfg.tick_hz / 1000u);
    ts_pd_idle(&from_capture, edge_cycle[nedges - 1u] + CLK_HZ / 1000u);
    /* The decoder reads the same messages from the stamps as from the capture. */
    const ts_pd_counters *a = ts_pd_counters_get(&from_pio), *b = ts_pd_counters_get(&from_capture);
    CHECK(b->messages > 0u);
    CHECK_EQ_U(a->messages, b->messages);
    CHECK_EQ_U(a->crc_failures, b->crc_failures);
    CHECK_EQ_U(a->level_errors, 0u);
    ts_pd_msg ma, mb;
    size_t n = 0;
    while (ts_pd_take(&from_capture, &mb)) {
        CHECK(ts_pd_take(&from_pio, &ma));
        CHECK_EQ_U(ma.header, mb.header);
        CHECK_EQ_U(ma.crc, mb.crc);
        CHECK_EQ_U(ma.flags, mb.flags);
        CHECK_NEAR((double)ma.t * CC_EDGES_CYCLES_PER_TICK, (double)(mb.t - edge_cycle[0]) +
                   (double)widen(x0 & CC_EDGES_STAMP_MASK, word[0] & CC_EDGES_STAMP_MASK) *
                       CC_EDGES_CYCLES_PER_TICK, 2.0);
        n++;
    }
    ts_pd_contract ca, cb;
    ts_pd_contract_get(&from_pio, &ca);
    ts_pd_contract_get(&from_capture, &cb);
    CHECK_EQ_U(ca.valid, cb.valid);
    CHECK_EQ_U(ca.mv, cb.mv);
    CHECK_EQ_U(ca.ma, cb.ma);
    printf("%s, X from 0x%08x: %zu edges -> %zu words, %zu messages as from the capture, "
           "contract %u mV %u mA\n",
           name, (unsigned)x0, nedges, nwords, n, (unsigned)ca.mv, (unsigned)ca.ma);
}

TS_CASE(each_edge_of_a_capture_is_one_stamped_word_that_decodes_alike)
{
    /* The PD 3.0 supply's negotiation (8 messages, a 20 V 2.25 A contract), X from 0
     * as pd_tap.c starts it. The queue holds 8 messages: the capture has 8. */
    check_capture("thinkpad_yoga_370-aukey_45w.cc2", 0u);
}

TS_CASE(the_stamps_keep_time_across_the_counters_wrap)
{
    /* X reaches 0 just before the first message (in the waiting loop) and in its middle
     * (about 13 ms in): the program's fall-through copies keep the count. */
    check_capture("thinkpad_yoga_370-aukey_45w.cc2", 820000u);
    check_capture("thinkpad_yoga_370-aukey_45w.cc2", 827000u);
}

static const ts_test_case cases[] = {
    TS_ENTRY(each_edge_of_a_capture_is_one_stamped_word_that_decodes_alike),
    TS_ENTRY(the_stamps_keep_time_across_the_counters_wrap),
};

int main(int argc, char **argv)
{
    return ts_test_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));
}
