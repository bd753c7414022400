/* Device-under-test model for the probe simulator. */
#include "dut_model.h"

#include <math.h>

void ts_dut_init(ts_dut *d, const ts_dut_params *p, uint64_t seed)
{
    d->p = *p;
    d->load = 0.0;
    d->temp_c = p->initial_c;
    d->rng = seed != 0u ? seed : 0x9E3779B97F4A7C15ull;
}

void ts_dut_set_load(ts_dut *d, double load)
{
    d->load = load < 0.0 ? 0.0 : load > 1.0 ? 1.0 : load;
}

double ts_dut_power_w(const ts_dut *d)
{
    return d->p.idle_w + (d->p.active_w - d->p.idle_w) * d->load;
}

void ts_dut_advance(ts_dut *d, double dt_s, double power_w)
{
    double dt = dt_s * d->p.time_scale;
    double target = d->p.ambient_c + d->p.rth_c_per_w * power_w;
    if (d->p.tau_s <= 0.0) {
        d->temp_c = target;
        return;
    }
    /* Exact step of dT/dt = (target - T)/tau for constant power over dt. */
    d->temp_c = target + (d->temp_c - target) * exp(-dt / d->p.tau_s);
}

static double uniform(ts_dut *d)
{
    d->rng ^= d->rng >> 12;
    d->rng ^= d->rng << 25;
    d->rng ^= d->rng >> 27;
    uint64_t x = d->rng * 0x2545F4914F6CDD1Dull;
    return ((double)(x >> 11) + 0.5) / 9007199254740992.0;
}

double ts_dut_noise(ts_dut *d, double sigma)
{
    double u1 = uniform(d), u2 = uniform(d);
    return sigma * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
