/* throttlescope-probe-sim: the real firmware core on the host, over a
 * simulated INA228 register file and a device-under-test model, speaking the
 * real protocol on a pseudo-terminal. Contract: docs/protocol.md ("Simulator")
 * and the team preamble (contract 2).
 *
 *   throttlescope-probe-sim [--link PATH] [--vbus-v V] [--idle-w W]
 *     [--active-w W] [--ambient-c C] [--initial-c C] [--rth-c-per-w K] [--tau-s S]
 *     [--time-scale X] [--drift-ppm P] [--probe-id ID] [--seed N]
 *     [--max-rate-hz R] [--default-rate-hz R] [--i2c-hz HZ]
 *     [--txq-bytes N] [--link-buffer N]
 *     [--port-current-a A] [--pd-contract-v V] [--cable-mohm R] [--port-cc 1|2]
 *
 * stdout: `pty <slave-path>` lines only. stdin: `load F`, `port A`, `contract V A`
 * (the source renegotiates: USB PD traffic on CC that the core's decoder reads,
 * then VBUS and the current limit follow at its PS_RDY), `unplug MS`,
 * `reset` (power-on reset of the simulated INA228), `stall MS` (the sampling
 * context does not answer ALERT for MS ms: slots are missed), `quit`.
 *
 * Pacing is the firmware's: the simulated chip converts on its own clock,
 * each latched ALERT edge calls ts_probe_alert() with the edge time, and
 * ts_probe_watchdog() runs when no edge came for the alert timeout. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "dut_model.h"
#include "ina228_model.h"
#include "pd_line.h"
#include "port_model.h"
#include "throttlescope/probe.h"
#include "throttlescope/temp.h"

#define SIM_VERSION "0.1.0-sim"
#define SIM_SHUNT_UOHM 5000u       /* 5 mohm */
#define SIM_MAX_CURRENT_MA 10000u  /* 10 A: 50 mV at full scale, ADCRANGE 0 */
#define SIM_TXQ_BYTES 16384u       /* like a USB CDC TX FIFO */
#define SIM_TEMP_PERIOD_NS 100000000ull /* enclosure sensor at 10 Hz */
#define SIM_MAX_CATCH_UP_NS 1000000000ull
#define SIM_CC_WINDOW 8u                /* CC readings per window, one window per loop */

typedef struct sim_options {
    const char *link;
    double vbus_v, idle_w, active_w, ambient_c, rth, tau_s, time_scale, drift_ppm;
    double initial_c;      /* enclosure at the start; NAN: its idle equilibrium */
    const char *probe_id;
    uint64_t seed;
    uint32_t max_rate_hz, default_rate_hz, i2c_hz;
    uint32_t txq_bytes;   /* the probe's USB TX queue (<= SIM_TXQ_BYTES) */
    uint32_t link_buffer; /* bytes the host side may hold unread; 0: the kernel's */
    double port_current_a; /* advertised current, or with pd_contract_v the contract's;
                              0: no port model, no CC sensing */
    double pd_contract_v;  /* voltage of a PD contract; 0: none (VBUS is --vbus-v) */
    double cable_mohm;     /* cable resistance beyond the probe, VBUS + GND */
    uint32_t port_cc;      /* the CC pin carrying Rp: 1 or 2 */
} sim_options;

typedef struct sim {
    sim_options opt;
    ts_ina228_model ina;
    ts_dut dut;
    ts_port_model port;
    double rp_a;           /* the current the source's Rp advertises on CC */
    double delivered_w;    /* what the port gave the drive at the last step */
    /* USB PD on CC: the traffic (pd_line.c) and the core's decoder reading it, as
     * the probe's tap and link thread do. */
    ts_pd_line pd_line;
    ts_pd_decoder pd_dec;
    uint32_t pd_seen;      /* the decoder's contract generation passed on */
    bool pd_contract;      /* the port is under a PD contract (the model's truth) */
    bool pd_pending;       /* a negotiation's terms reach the port at its PS_RDY */
    double pd_next_v, pd_next_a;
    ts_probe probe;
    int master_fd;
    int slave_fd;
    char slave_path[128];
    bool link_made;
    bool unplugged;
    uint64_t replug_at_ns;
    uint8_t txq[SIM_TXQ_BYTES];
    size_t txq_len;
    struct timespec t0;
    bool override;
    uint64_t override_us;
    uint64_t model_ns;       /* time up to which the models have advanced */
    uint64_t last_service_ns; /* last ALERT serviced (or watchdog run) */
    uint64_t stall_until_ns; /* the sampling context is busy until then */
    uint64_t next_temp_ns;
    uint32_t rate_hz;
    ts_ntc_divider divider;
    ts_ntc_beta ntc;
} sim;

static sim S;
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    int64_t s = (int64_t)t.tv_sec - (int64_t)S.t0.tv_sec;
    int64_t ns = (int64_t)t.tv_nsec - (int64_t)S.t0.tv_nsec;
    return (uint64_t)(s * 1000000000ll + ns);
}

/* Probe clock: host monotonic microseconds since start x (1 + drift). */
static uint64_t probe_us_at(uint64_t ns)
{
    return (uint64_t)((double)ns / 1000.0 * (1.0 + S.opt.drift_ppm * 1e-6));
}

static uint64_t plat_now_us(void *ctx)
{
    (void)ctx;
    return S.override ? S.override_us : probe_us_at(mono_ns());
}

static bool plat_tx_frame(void *ctx, const uint8_t *frame, size_t len)
{
    (void)ctx;
    if (S.unplugged || S.txq_len + len > S.opt.txq_bytes) {
        return false;
    }
    memcpy(S.txq + S.txq_len, frame, len);
    S.txq_len += len;
    return true;
}

static void plat_sampling(void *ctx, bool running, uint32_t rate_hz)
{
    (void)ctx;
    S.rate_hz = running ? rate_hz : 0u;
    S.last_service_ns = mono_ns();
}

static void flush_txq(void)
{
    while (!S.unplugged && S.txq_len > 0u) {
        size_t room = S.txq_len;
        if (S.opt.link_buffer > 0u) {
            /* A smaller host-side buffer than the kernel's pty (tests). */
            int queued = 0;
            if (ioctl(S.slave_fd, FIONREAD, &queued) != 0 || queued < 0) {
                queued = 0;
            }
            if ((uint32_t)queued >= S.opt.link_buffer) {
                return;
            }
            size_t free_bytes = S.opt.link_buffer - (uint32_t)queued;
            room = room < free_bytes ? room : free_bytes;
        }
        ssize_t n = write(S.master_fd, S.txq, room);
        if (n <= 0) {
            return; /* EAGAIN: the host is not reading; the queue waits */
        }
        memmove(S.txq, S.txq + n, S.txq_len - (size_t)n);
        S.txq_len -= (size_t)n;
    }
}

static int open_pty(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
        fprintf(stderr, "throttlescope-probe-sim: cannot open a pseudo-terminal: %s\n",
                strerror(errno));
        return -1;
    }
    const char *name = ptsname(m);
    if (name == NULL || strlen(name) >= sizeof S.slave_path) {
        fprintf(stderr, "throttlescope-probe-sim: ptsname failed\n");
        close(m);
        return -1;
    }
    strcpy(S.slave_path, name);
    /* Keep one slave descriptor open: raw mode sticks, and the master never
     * sees a hang-up while the host reconnects. */
    int s = open(S.slave_path, O_RDWR | O_NOCTTY);
    struct termios tio;
    if (s < 0 || tcgetattr(s, &tio) != 0) {
        fprintf(stderr, "throttlescope-probe-sim: cannot open %s: %s\n", S.slave_path,
                strerror(errno));
        close(m);
        if (s >= 0) {
            close(s);
        }
        return -1;
    }
    cfmakeraw(&tio);
    tcsetattr(s, TCSANOW, &tio);
    fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
    S.master_fd = m;
    S.slave_fd = s;
    return 0;
}

static void close_pty(void)
{
    if (S.master_fd >= 0) {
        close(S.master_fd);
    }
    if (S.slave_fd >= 0) {
        close(S.slave_fd);
    }
    S.master_fd = S.slave_fd = -1;
    S.txq_len = 0; /* bytes in flight are lost, as on a real unplug */
}

static int make_link(void)
{
    if (S.opt.link == NULL) {
        return 0;
    }
    struct stat st;
    if (lstat(S.opt.link, &st) == 0) {
        if (!S_ISLNK(st.st_mode)) {
            fprintf(stderr,
                    "throttlescope-probe-sim: refusing to replace %s: it exists and is not "
                    "a symlink\n", S.opt.link);
            return -1;
        }
        unlink(S.opt.link);
    }
    if (symlink(S.slave_path, S.opt.link) != 0) {
        fprintf(stderr, "throttlescope-probe-sim: cannot link %s -> %s: %s\n", S.opt.link,
                S.slave_path, strerror(errno));
        return -1;
    }
    S.link_made = true;
    return 0;
}

static void remove_link(void)
{
    char target[128];
    if (!S.link_made) {
        return;
    }
    ssize_t n = readlink(S.opt.link, target, sizeof target - 1u);
    if (n > 0) {
        target[n] = '\0';
        if (strcmp(target, S.slave_path) == 0) {
            unlink(S.opt.link);
        }
    }
    S.link_made = false;
}

static int plug(void)
{
    if (open_pty() != 0 || make_link() != 0) {
        return -1;
    }
    S.unplugged = false;
    printf("pty %s\n", S.slave_path);
    fflush(stdout);
    return 0;
}

/* Advance the device and the register file to time t. */
static void advance_models(uint64_t t_ns)
{
    if (t_ns <= S.model_ns) {
        return;
    }
    double dt = (double)(t_ns - S.model_ns) * 1e-9;
    S.model_ns = t_ns;
    /* The enclosure heats from what the port delivered over the step (the
     * draw in force during it), not from what a held drive asks for. */
    ts_dut_advance(&S.dut, dt, S.delivered_w);
    double need = ts_dut_power_w(&S.dut) * (1.0 + ts_dut_noise(&S.dut, 0.002));
    ts_port_draw draw;
    ts_port_model_draw(&S.port, need, &draw); /* a drive over budget is held at it */
    S.delivered_w = draw.drive_w; /* the enclosure heats from what reaches the drive */
    double v = draw.vbus_v + ts_dut_noise(&S.dut, 0.001);
    double i = draw.current_a;
    double die = S.opt.ambient_c + 3.0 + 0.2 * (S.dut.temp_c - S.opt.ambient_c);
    ts_ina228_model_set(&S.ina, v, i, die);
    /* The thermal model runs in scaled time, and so do ENERGY/CHARGE
     * (accumulate_scale): the host records a run played N x faster on a clock
     * N x faster too, so they close against power x time there. The probe's
     * own clock and conversions stay in real time. */
    ts_ina228_model_advance(&S.ina, dt);
}

/* Service a pending ALERT as the sampling thread would: at once, unless it
 * is stalled, with the edge time the GPIO interrupt stamped. */
static void service_alert(uint64_t at_ns)
{
    if (!ts_probe_running(&S.probe) || at_ns < S.stall_until_ns ||
        !ts_ina228_model_alert(&S.ina)) {
        return;
    }
    uint64_t edge_ns = (uint64_t)(S.ina.last_edge_s * 1e9 + 0.5);
    S.override = true;
    S.override_us = probe_us_at(at_ns);
    ts_probe_alert(&S.probe, probe_us_at(edge_ns));
    S.override = false;
    S.last_service_ns = at_ns;
}

/* Run the chip up to now, conversion by conversion, answering each ALERT. */
static void run_chip(uint64_t now)
{
    if (now > S.model_ns + SIM_MAX_CATCH_UP_NS) {
        /* The host process stalled: the chip ran, the sampler saw nothing. */
        advance_models(now - SIM_MAX_CATCH_UP_NS);
    }
    for (;;) {
        service_alert(S.model_ns);
        double until = ts_ina228_model_until_conversion(&S.ina);
        uint64_t t = S.model_ns + (uint64_t)ceil(until * 1e9);
        if (t > now) {
            break;
        }
        advance_models(t);
    }
    advance_models(now);
    service_alert(now);
    if (ts_probe_running(&S.probe) && now >= S.stall_until_ns &&
        now - S.last_service_ns >= (uint64_t)ts_probe_alert_timeout_us(&S.probe) * 1000u) {
        S.override = true;
        S.override_us = probe_us_at(now);
        ts_probe_watchdog(&S.probe);
        S.override = false;
        S.last_service_ns = now;
        service_alert(now);
    }
}

/* One window of CC1/CC2 readings as the ADC sees them through the front
 * end: the advertisement on the active pin, the other open. */
static void read_cc(void)
{
    if (S.opt.port_current_a <= 0.0) {
        return;
    }
    uint16_t active[SIM_CC_WINDOW], open[SIM_CC_WINDOW];
    uint16_t mv = ts_port_model_cc_mv(S.rp_a);
    for (uint32_t k = 0; k < SIM_CC_WINDOW; k++) {
        active[k] = (uint16_t)((double)mv + ts_dut_noise(&S.dut, 3.0));
        open[k] = (uint16_t)(10.0 + fabs(ts_dut_noise(&S.dut, 3.0)));
    }
    if (S.opt.port_cc == 2u) {
        ts_probe_port_cc(&S.probe, open, active, SIM_CC_WINDOW);
    } else {
        ts_probe_port_cc(&S.probe, active, open, SIM_CC_WINDOW);
    }
}

/* The CC line's PD traffic up to now, through the core's decoder as the
 * probe's link thread feeds it; a changed contract goes to the probe's port.
 * The port model takes a negotiation's terms at its PS_RDY. */
static void service_pd(void)
{
    if (S.opt.port_current_a <= 0.0) {
        return;
    }
    uint64_t now_us = plat_now_us(NULL);
    if (S.pd_pending && now_us >= S.pd_line.ps_rdy_us) {
        run_chip(mono_ns());
        S.port.source_v = S.pd_next_v;
        S.port.current_a = S.pd_next_a;
        S.rp_a = 3.0; /* a PD 3.0 source at SinkTxOK */
        S.pd_contract = true;
        S.pd_pending = false;
    }
    uint64_t until = now_us * TS_PD_LINE_TICKS_PER_US, tick = 0;
    uint8_t level = 0;
    while (ts_pd_line_next_edge(&S.pd_line, until, &tick, &level)) {
        ts_pd_feed_edge(&S.pd_dec, tick, level);
    }
    ts_pd_idle(&S.pd_dec, until);
    ts_pd_msg m;
    while (ts_pd_take(&S.pd_dec, &m)) {
        /* The app logs them; here only the contract matters. */
    }
    ts_pd_contract c;
    if (ts_pd_contract_changed(&S.pd_dec, &S.pd_seen, &c)) {
        ts_probe_pd_contract(&S.probe, &c, c.t / TS_PD_LINE_TICKS_PER_US);
    }
}

static void read_enclosure(void)
{
    double t = S.dut.temp_c + ts_dut_noise(&S.dut, 0.05);
    uint32_t code = ts_ntc_code_for_resistance(&S.divider, ts_ntc_beta_ohm(&S.ntc, t));
    int32_t mc = 0;
    if (ts_ntc_beta_milli_c(&S.divider, &S.ntc, code, &mc) == TS_OK) {
        ts_probe_temp(&S.probe, 0, mc);
    } else {
        ts_probe_temp_error(&S.probe);
    }
}

/* One stdin command; returns false on quit. */
static bool command(char *line)
{
    char *nl = strchr(line, '\n');
    if (nl != NULL) {
        *nl = '\0';
    }
    double f = 0.0;
    unsigned long ms = 0;
    char extra;
    if (line[0] == '\0') {
        return true;
    }
    if (strcmp(line, "quit") == 0) {
        return false;
    }
    if (sscanf(line, "load %lf %c", &f, &extra) == 1) {
        if (!(f >= 0.0 && f <= 1.0)) {
            fprintf(stderr, "throttlescope-probe-sim: load %s is outside 0..1; clamped\n",
                    line + 5);
        }
        run_chip(mono_ns());
        ts_dut_set_load(&S.dut, f);
        return true;
    }
    if (sscanf(line, "port %lf %c", &f, &extra) == 1) {
        if (!(f > 0.0 && f <= 5.0) || S.opt.port_current_a <= 0.0) {
            fprintf(stderr, "throttlescope-probe-sim: port %s ignored (needs --port-current-a "
                            "and 0 < A <= 5)\n", line + 5);
            return true;
        }
        run_chip(mono_ns());
        S.rp_a = f;
        if (!S.pd_contract) {
            S.port.current_a = f; /* without a contract the advertisement is the limit */
        }
        return true;
    }
    double v = 0.0;
    if (sscanf(line, "contract %lf %lf %c", &v, &f, &extra) == 2) {
        if (!(v >= 5.0 && v <= 48.0 && f > 0.0 && f <= 5.0) || S.opt.port_current_a <= 0.0 ||
            !ts_pd_line_negotiate(&S.pd_line, plat_now_us(NULL), (uint32_t)(v * 1000.0 + 0.5),
                                  (uint32_t)(f * 1000.0 + 0.5))) {
            fprintf(stderr, "throttlescope-probe-sim: contract %s ignored (needs "
                            "--port-current-a, 5 <= V <= 48, 0 < A <= 5, and no negotiation "
                            "under way)\n", line + 9);
            return true;
        }
        S.pd_pending = true;
        S.pd_next_v = v;
        S.pd_next_a = f;
        return true;
    }
    if (strcmp(line, "reset") == 0) {
        run_chip(mono_ns());
        ts_ina228_model_power_on_reset(&S.ina);
        return true;
    }
    if (sscanf(line, "stall %lu %c", &ms, &extra) == 1) {
        run_chip(mono_ns());
        S.stall_until_ns = mono_ns() + (uint64_t)ms * 1000000ull;
        return true;
    }
    if (sscanf(line, "unplug %lu %c", &ms, &extra) == 1) {
        remove_link();
        close_pty();
        S.unplugged = true;
        S.replug_at_ns = mono_ns() + (uint64_t)ms * 1000000ull;
        return true;
    }
    fprintf(stderr,
            "throttlescope-probe-sim: unknown command '%s' (expected: load F | port A | "
            "contract V A | unplug MS | reset | stall MS | quit)\n",
            line);
    return true;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: throttlescope-probe-sim [--link PATH] [--vbus-v V] [--idle-w W] "
            "[--active-w W]\n"
            "         [--ambient-c C] [--initial-c C] [--rth-c-per-w K] [--tau-s S] [--time-scale X]\n"
            "         [--drift-ppm P] [--probe-id ID] [--seed N] [--max-rate-hz R]\n"
            "         [--default-rate-hz R] [--i2c-hz HZ] [--txq-bytes N] [--link-buffer N]\n"
            "         [--port-current-a A] [--pd-contract-v V] [--cable-mohm R] [--port-cc 1|2]\n"
            "Prints `pty <path>` on stdout; stdin commands: load F | port A | unplug MS |\n"
            "reset | stall MS | quit.\n");
}

static bool parse_double(const char *flag, const char *v, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !isfinite(d)) {
        fprintf(stderr, "throttlescope-probe-sim: %s needs a number, got '%s'\n", flag, v);
        return false;
    }
    *out = d;
    return true;
}

static bool parse_u64(const char *flag, const char *v, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long u = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || v[0] == '-') {
        fprintf(stderr, "throttlescope-probe-sim: %s needs a whole number, got '%s'\n", flag,
                v);
        return false;
    }
    *out = u;
    return true;
}

static int parse_args(int argc, char **argv, sim_options *o)
{
    o->link = NULL;
    o->vbus_v = 5.0;
    o->idle_w = 0.8;
    o->active_w = 6.9;
    o->ambient_c = 25.0;
    o->initial_c = NAN;
    o->rth = 5.0;
    o->tau_s = 300.0;
    o->time_scale = 1.0;
    o->drift_ppm = 0.0;
    o->probe_id = "sim-0001";
    o->seed = 1;
    o->max_rate_hz = 2000;
    o->default_rate_hz = 1000;
    o->i2c_hz = 400000;
    o->txq_bytes = SIM_TXQ_BYTES;
    o->link_buffer = 0;
    o->port_current_a = 0.0;
    o->pd_contract_v = 0.0;
    o->cable_mohm = 0.0;
    o->port_cc = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "throttlescope-probe-sim: %s needs a value\n", a);
            usage(stderr);
            return -1;
        }
        const char *v = argv[++i];
        uint64_t u = 0;
        bool ok = true;
        if (strcmp(a, "--link") == 0) {
            o->link = v;
        } else if (strcmp(a, "--vbus-v") == 0) {
            ok = parse_double(a, v, &o->vbus_v) && o->vbus_v > 0.0 && o->vbus_v < 85.0;
        } else if (strcmp(a, "--idle-w") == 0) {
            ok = parse_double(a, v, &o->idle_w) && o->idle_w >= 0.0;
        } else if (strcmp(a, "--active-w") == 0) {
            ok = parse_double(a, v, &o->active_w) && o->active_w >= 0.0;
        } else if (strcmp(a, "--ambient-c") == 0) {
            ok = parse_double(a, v, &o->ambient_c);
        } else if (strcmp(a, "--initial-c") == 0) {
            ok = parse_double(a, v, &o->initial_c);
        } else if (strcmp(a, "--rth-c-per-w") == 0) {
            ok = parse_double(a, v, &o->rth) && o->rth >= 0.0;
        } else if (strcmp(a, "--tau-s") == 0) {
            ok = parse_double(a, v, &o->tau_s) && o->tau_s >= 0.0;
        } else if (strcmp(a, "--time-scale") == 0) {
            ok = parse_double(a, v, &o->time_scale) && o->time_scale > 0.0;
        } else if (strcmp(a, "--drift-ppm") == 0) {
            ok = parse_double(a, v, &o->drift_ppm) && fabs(o->drift_ppm) < 100000.0;
        } else if (strcmp(a, "--probe-id") == 0) {
            o->probe_id = v;
        } else if (strcmp(a, "--seed") == 0) {
            ok = parse_u64(a, v, &o->seed);
        } else if (strcmp(a, "--max-rate-hz") == 0) {
            ok = parse_u64(a, v, &u) && u >= 1u && u <= 100000u;
            o->max_rate_hz = (uint32_t)u;
        } else if (strcmp(a, "--i2c-hz") == 0) {
            ok = parse_u64(a, v, &u) && u >= 10000u && u <= 3400000u;
            o->i2c_hz = (uint32_t)u;
        } else if (strcmp(a, "--txq-bytes") == 0) {
            ok = parse_u64(a, v, &u) && u >= 1024u && u <= SIM_TXQ_BYTES;
            o->txq_bytes = (uint32_t)u;
        } else if (strcmp(a, "--link-buffer") == 0) {
            ok = parse_u64(a, v, &u) && u <= 1048576u;
            o->link_buffer = (uint32_t)u;
        } else if (strcmp(a, "--port-current-a") == 0) {
            ok = parse_double(a, v, &o->port_current_a) && o->port_current_a > 0.0 &&
                 o->port_current_a <= 5.0;
        } else if (strcmp(a, "--pd-contract-v") == 0) {
            ok = parse_double(a, v, &o->pd_contract_v) && o->pd_contract_v >= 5.0 &&
                 o->pd_contract_v <= 48.0;
        } else if (strcmp(a, "--cable-mohm") == 0) {
            ok = parse_double(a, v, &o->cable_mohm) && o->cable_mohm >= 0.0 &&
                 o->cable_mohm <= 10000.0;
        } else if (strcmp(a, "--port-cc") == 0) {
            ok = parse_u64(a, v, &u) && (u == 1u || u == 2u);
            o->port_cc = (uint32_t)u;
        } else if (strcmp(a, "--default-rate-hz") == 0) {
            ok = parse_u64(a, v, &u) && u <= 100000u;
            o->default_rate_hz = (uint32_t)u;
        } else {
            fprintf(stderr, "throttlescope-probe-sim: unknown option %s\n", a);
            usage(stderr);
            return -1;
        }
        if (!ok) {
            fprintf(stderr, "throttlescope-probe-sim: invalid value '%s' for %s\n", v, a);
            return -1;
        }
    }
    if (o->pd_contract_v > 0.0) {
        o->vbus_v = o->pd_contract_v; /* the contract sets VBUS at the source */
    }
    double max_a = (double)SIM_MAX_CURRENT_MA / 1000.0;
    if (o->active_w / o->vbus_v > max_a || o->idle_w / o->vbus_v > max_a) {
        fprintf(stderr,
                "throttlescope-probe-sim: %.1f W at %.1f V is %.2f A, above the simulated "
                "probe's %.0f A range\n",
                o->active_w, o->vbus_v, o->active_w / o->vbus_v, max_a);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const ts_temp_sensor_info sensors[] = {
        {throttlescope_v1_SensorKind_SENSOR_KIND_NTC, "enclosure"},
    };
    clock_gettime(CLOCK_MONOTONIC, &S.t0);
    S.master_fd = S.slave_fd = -1;
    if (parse_args(argc, argv, &S.opt) != 0) {
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);

    if (isnan(S.opt.initial_c)) { /* at rest on the bench: idle's equilibrium */
        S.opt.initial_c = S.opt.ambient_c + S.opt.rth * S.opt.idle_w;
    }
    ts_dut_params dp = {S.opt.vbus_v,     S.opt.idle_w, S.opt.active_w,
                        S.opt.ambient_c,  S.opt.initial_c, S.opt.rth,
                        S.opt.tau_s,      S.opt.time_scale};
    ts_dut_init(&S.dut, &dp, S.opt.seed);
    S.delivered_w = S.opt.idle_w;
    S.port.source_v = S.opt.vbus_v;
    S.port.current_a = S.opt.port_current_a;
    S.rp_a = S.opt.pd_contract_v > 0.0 ? 3.0 : S.opt.port_current_a; /* SinkTxOK under PD */
    S.pd_contract = S.opt.pd_contract_v > 0.0;
    ts_pd_line_init(&S.pd_line, (uint32_t)(S.opt.vbus_v * 1000.0 + 0.5));
    ts_pd_config pd_cfg;
    memset(&pd_cfg, 0, sizeof pd_cfg);
    pd_cfg.tick_hz = TS_PD_LINE_TICKS_PER_US * 1000000u;
    if (ts_pd_init(&S.pd_dec, &pd_cfg) != 0) {
        fprintf(stderr, "throttlescope-probe-sim: PD decoder failed to start\n");
        return 1;
    }
    S.port.cable_ohm = S.opt.cable_mohm * 1e-3;
    /* 10k B3950 NTC to ground with a 10k pull-up on a 12-bit ADC. */
    S.divider.adc_full_scale = 4095u;
    S.divider.fixed_ohm = 10000.0;
    S.divider.ntc_to_ground = true;
    S.ntc.r0_ohm = 10000.0;
    S.ntc.t0_c = 25.0;
    S.ntc.beta_k = 3950.0;
    ts_ina228_model_init(&S.ina, (double)SIM_SHUNT_UOHM * 1e-6);
    S.ina.accumulate_scale = S.opt.time_scale;
    advance_models(0);

    ts_bus bus = ts_ina228_model_bus(&S.ina);
    ts_platform plat = {plat_now_us, plat_tx_frame, plat_sampling, NULL};
    ts_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.firmware_version = SIM_VERSION;
    cfg.probe_id = S.opt.probe_id;
    cfg.shunt_micro_ohm = SIM_SHUNT_UOHM;
    cfg.max_current_ma = SIM_MAX_CURRENT_MA;
    cfg.adc_range = 0;
    cfg.sensors = sensors;
    cfg.sensor_count = 1;
    cfg.max_rate_hz = S.opt.max_rate_hz;
    cfg.default_rate_hz = S.opt.default_rate_hz;
    cfg.i2c_bus_hz = S.opt.i2c_hz;
    cfg.alert_pin = true;
    cfg.cc_sensing = S.opt.port_current_a > 0.0; /* no port model: a probe without CC */
    cfg.pd_decoding = cfg.cc_sensing;           /* the tap beside the CC front end */
    if (ts_probe_init(&S.probe, &cfg, &plat, &bus) != TS_OK) {
        fprintf(stderr, "throttlescope-probe-sim: probe core failed to start\n");
        return 1;
    }
    if (plug() != 0) {
        close_pty();
        return 1;
    }
    if (S.pd_contract && S.opt.port_current_a > 0.0) {
        /* The contract the port is under when the probe starts (plugged in long before):
         * its negotiation again, at the voltage the source already holds, so the first
         * PortStatus a host asks for already has its terms. */
        ts_pd_line_negotiate(&S.pd_line, plat_now_us(NULL),
                             (uint32_t)(S.opt.pd_contract_v * 1000.0 + 0.5),
                             (uint32_t)(S.opt.port_current_a * 1000.0 + 0.5));
    }

    char line[256];
    size_t line_len = 0;
    bool stdin_open = true;
    bool quit = false;
    uint8_t rx[4096];
    while (!quit && !stop_requested) {
        uint64_t now = mono_ns();
        uint64_t wake = now + (ts_probe_running(&S.probe) ? 1000000ull : 10000000ull);
        if (S.unplugged && S.replug_at_ns < wake) {
            wake = S.replug_at_ns;
        }
        if (S.next_temp_ns < wake) {
            wake = S.next_temp_ns;
        }
        struct pollfd fds[2];
        nfds_t nfds = 0;
        int stdin_idx = -1, pty_idx = -1;
        if (stdin_open) {
            fds[nfds].fd = STDIN_FILENO;
            fds[nfds].events = POLLIN;
            stdin_idx = (int)nfds++;
        }
        if (!S.unplugged) {
            fds[nfds].fd = S.master_fd;
            fds[nfds].events = POLLIN | (S.txq_len > 0u ? POLLOUT : 0);
            pty_idx = (int)nfds++;
        }
        struct timespec ts = {0, 0};
        if (wake > now) {
            ts.tv_sec = (time_t)((wake - now) / 1000000000ull);
            ts.tv_nsec = (long)((wake - now) % 1000000000ull);
        }
        int pr = ppoll(fds, nfds, &ts, NULL);
        if (pr < 0 && errno != EINTR) {
            fprintf(stderr, "throttlescope-probe-sim: poll failed: %s\n", strerror(errno));
            break;
        }
        if (pr > 0 && stdin_idx >= 0 && (fds[stdin_idx].revents & (POLLIN | POLLHUP))) {
            ssize_t n = read(STDIN_FILENO, line + line_len, sizeof line - 1u - line_len);
            if (n <= 0) {
                stdin_open = false;
                quit = true; /* EOF on stdin = quit */
            } else {
                line_len += (size_t)n;
                line[line_len] = '\0';
                char *nl;
                while (!quit && (nl = strchr(line, '\n')) != NULL) {
                    *nl = '\0';
                    quit = !command(line);
                    size_t used = (size_t)(nl - line) + 1u;
                    memmove(line, nl + 1, line_len - used + 1u);
                    line_len -= used;
                }
                if (line_len >= sizeof line - 1u) {
                    fprintf(stderr, "throttlescope-probe-sim: command line too long; dropped\n");
                    line_len = 0;
                }
            }
        }
        if (pr > 0 && pty_idx >= 0 && (fds[pty_idx].revents & POLLIN)) {
            ssize_t n = read(S.master_fd, rx, sizeof rx);
            if (n > 0) {
                ts_probe_rx(&S.probe, rx, (size_t)n, plat_now_us(NULL));
            }
        }
        now = mono_ns();
        if (S.unplugged && now >= S.replug_at_ns) {
            if (plug() != 0) {
                break;
            }
        }
        run_chip(now);
        read_cc();
        service_pd();
        if (now >= S.next_temp_ns) {
            read_enclosure();
            S.next_temp_ns = now + SIM_TEMP_PERIOD_NS;
        }
        ts_probe_service(&S.probe);
        flush_txq();
    }
    /* Give the host what is already queued, briefly, then leave cleanly. */
    flush_txq();
    remove_link();
    close_pty();
    return 0;
}
