/* The PD tap's PIO program, cc_edges (pd_tap.c runs it on the RP2040; the host
 * test firmware/tests/test_cc_edges_pio.c runs the same words on a model of
 * the PIO instructions they use). Plain C: no Zephyr, no SDK.
 *
 * X counts down once every two clock cycles, whatever the line does: every
 * second instruction is a `jmp x--`, on the waiting loops and on the paths
 * that record an edge alike. A change of the jmp pin pushes one word: bit 31
 * the level after the edge (shifted in from OSR, which holds ones, or from
 * NULL), bits 30..0 the low 31 bits of X (the ISR shifts right). Addresses
 * from 0 (pio_add_program relocates them):
 *
 *  0 rise: jmp x-- 1        c2    ; an edge up was seen at c1
 *  1       in x, 31         c1
 *  2       jmp x-- 3        c2
 *  3       in osr, 1        c1    ; the level, 1
 *  4       jmp x-- 5        c2
 *  5       push noblock     c1    ; a full FIFO drops it and sets FDEBUG.RXSTALL
 *  6       jmp x-- 7        c2
 *  7 hi:   jmp pin 17       c1    ; still high
 *  8 fall: jmp x-- 9        c2
 *  9       in x, 31         c1
 * 10       jmp x-- 11       c2
 * 11       in null, 1       c1    ; the level, 0
 * 12       jmp x-- 13       c2
 * 13       push noblock     c1
 * 14       jmp x-- 15       c2
 * 15 lo:   jmp pin 0        c1    ; .wrap_target: the line went high
 * 16       jmp x-- 15       c2    ; .wrap (X was 0: falls through to the wrap, the same)
 * 17       jmp x-- 7        c2    ; from hi; X was 0: falls through to 18, a copy of hi
 * 18       jmp pin 17       c1
 * 19       jmp x-- 9        c2    ; a copy of fall (X is not 0 here: always jumps)
 *
 * A `jmp x-- N` whose target is the next instruction decrements and goes on
 * either way, so every even cycle decrements X exactly once; recording an
 * edge takes 8 cycles. Start at CC_EDGES_START with X = 0 and OSR = ~0. */
#ifndef THROTTLESCOPE_APP_CC_EDGES_PIO_H
#define THROTTLESCOPE_APP_CC_EDGES_PIO_H

/** The program's 16-bit instructions, in order. */
#define CC_EDGES_WORDS                                                                   \
    0x0041, 0x403f, 0x0043, 0x40e1, 0x0045, 0x8000, 0x0047, 0x00d1, 0x0049, 0x403f,      \
        0x004b, 0x4061, 0x004d, 0x8000, 0x004f, 0x00c0, 0x004f, 0x0047, 0x00d1, 0x0049
/** .wrap_target and .wrap. */
#define CC_EDGES_WRAP_TARGET 15u
#define CC_EDGES_WRAP 16u
/** Where a state machine starts: `lo`, the line low. */
#define CC_EDGES_START 15u
/** Clock cycles per count of X. */
#define CC_EDGES_CYCLES_PER_TICK 2u
/** Bits of X a word carries (bit 31 is the level). */
#define CC_EDGES_STAMP_MASK 0x7FFFFFFFu

#endif
