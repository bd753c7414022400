/* The USB PD traffic of the simulated host port on CC, as the probe's tap
 * sees it: a source and a sink negotiating a contract (Source_Capabilities,
 * Request, Accept, PS_RDY, each answered with GoodCRC) or a Hard Reset,
 * encoded as the USB PD physical layer sends them (4b5b symbols, CRC-32, BMC
 * at 300 kbit/s) into the times of the line's edges. The simulator feeds
 * those edges, as time reaches them, to the firmware core's own decoder
 * (pd_decode.c), which is what the Zephyr app does with the PIO's
 * timestamps, so the PortStatus a host reads comes from the same code path.
 * No allocation: one exchange's edges fit a fixed buffer. */
#ifndef THROTTLESCOPE_SIM_PD_LINE_H
#define THROTTLESCOPE_SIM_PD_LINE_H

#include <stdbool.h>
#include <stdint.h>

/** Edge timestamps per microsecond of probe time (a 12 MHz tick, as a PIO counting at
 *  125 MHz / 10 would give: fine enough for the decoder's 1.5..1.9 us half bits). */
#define TS_PD_LINE_TICKS_PER_US 12u
/** Edges one exchange holds at most (a negotiation is about 2 000). */
#define TS_PD_LINE_MAX_EDGES 4096u

typedef struct ts_pd_line {
    uint64_t edge[TS_PD_LINE_MAX_EDGES]; /**< tick of each edge, increasing */
    uint32_t count, next;                /**< edges queued; the next to hand over */
    uint8_t level;                       /**< the line after the last queued edge */
    uint8_t src_id, snk_id;              /**< MessageID counters (3 bits) */
    uint64_t cursor_tick;                /**< where the next message may start */
    uint64_t ps_rdy_us;                  /**< probe time of the last exchange's PS_RDY (or
                                              Hard Reset): when its terms hold at the port */
    uint32_t mv;                         /**< VBUS the source holds (its last contract's) */
} ts_pd_line;

/** An idle line whose source holds VBUS at mv. */
void ts_pd_line_init(ts_pd_line *l, uint32_t mv);
/**
 * Queue a negotiation starting at probe time at_us: the source offers Fixed
 * 5 V (at ma, or 3 A beside another voltage) and, when mv is not 5 V, Fixed mv
 * at ma; the sink requests mv at ma; the source accepts and, tSrcTransition
 * later (longer when VBUS moves to a new voltage), sends PS_RDY. False when an exchange is
 * still being handed over or it does not fit.
 */
bool ts_pd_line_negotiate(ts_pd_line *l, uint64_t at_us, uint32_t mv, uint32_t ma);
/** Queue a Hard Reset ordered set at probe time at_us (false as above). */
bool ts_pd_line_hard_reset(ts_pd_line *l, uint64_t at_us);
/**
 * The next queued edge at or before tick `until` into *tick and *level (the
 * line after it); false when none is due.
 */
bool ts_pd_line_next_edge(ts_pd_line *l, uint64_t until, uint64_t *tick, uint8_t *level);
/** Every queued edge handed over. */
bool ts_pd_line_idle(const ts_pd_line *l);

#endif
