/* Host port model for the probe simulator (port_model.h). */
#include "port_model.h"

#include <math.h>

void ts_port_model_draw(const ts_port_model *m, double need_w, ts_port_draw *out)
{
    double v = m->source_v, r = m->cable_ohm;
    double i;
    bool held = false;
    if (need_w <= 0.0) {
        i = 0.0;
    } else if (r <= 0.0) {
        i = need_w / v;
    } else if (v * v < 4.0 * r * need_w) {
        i = v / (2.0 * r); /* past the most the cable can carry */
        held = true;
    } else {
        /* need = (v - i r) i, the smaller root. */
        i = (v - sqrt(v * v - 4.0 * r * need_w)) / (2.0 * r);
    }
    if (m->current_a > 0.0 && i > m->current_a) {
        i = m->current_a;
        held = true;
    }
    /* The probe plugs into the port: it sees the port's VBUS and the power with
     * the cable's loss; the drive, beyond the cable, gets (v - i r) i. */
    out->current_a = i;
    out->vbus_v = v;
    out->power_w = v * i;
    out->drive_w = (v - i * r) * i;
    out->held = held;
    out->rate_factor = held && need_w > 0.0 ? out->drive_w / need_w : 1.0;
}

uint16_t ts_port_model_cc_mv(double current_a)
{
    double rp = current_a > 1.5 ? 10000.0 : current_a > 0.9 ? 22000.0 : 56000.0;
    return (uint16_t)(5.0 * 5100.0 / (rp + 5100.0) * 1000.0 + 0.5);
}
