/* The probe simulator driven over its real pseudo-terminal: spawn it, read
 * its `pty` line, speak the protocol, check replies and the sample stream. */
#define _GNU_SOURCE
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "throttlescope/ina228.h"
#include "throttlescope/protocol.h"

#define TAG(x) throttlescope_v1_ProbeToHost_##x##_tag
#define CMD(x) throttlescope_v1_HostToProbe_##x##_tag

typedef struct simproc {
    pid_t pid;
    int in_fd;   /* sim stdin */
    int out_fd;  /* sim stdout */
    int pty;
    char path[128];
    uint8_t buf[1 << 16];
    size_t len;
} simproc;

static simproc P;

static uint64_t mono_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* Read one line from the sim's stdout within timeout_ms. */
static bool read_line(char *out, size_t cap, int timeout_ms)
{
    size_t n = 0;
    uint64_t end = mono_us() + (uint64_t)timeout_ms * 1000u;
    while (mono_us() < end && n + 1 < cap) {
        struct pollfd p = {P.out_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) {
            continue;
        }
        char c;
        if (read(P.out_fd, &c, 1) != 1) {
            return false;
        }
        if (c == '\n') {
            out[n] = '\0';
            return true;
        }
        out[n++] = c;
    }
    return false;
}

static void open_slave(void)
{
    char line[160];
    CHECK(read_line(line, sizeof line, 5000));
    CHECK(strncmp(line, "pty ", 4) == 0);
    strcpy(P.path, line + 4);
    P.pty = open(P.path, O_RDWR | O_NOCTTY | O_NONBLOCK);
    CHECK(P.pty >= 0);
    struct termios tio;
    CHECK(tcgetattr(P.pty, &tio) == 0);
    cfmakeraw(&tio);
    CHECK(tcsetattr(P.pty, TCSANOW, &tio) == 0);
    P.len = 0;
}

static void spawn(const char *const *extra)
{
    int in[2], out[2];
    CHECK(pipe(in) == 0 && pipe(out) == 0);
    const char *argv[24];
    int a = 0;
    argv[a++] = TS_SIM_PATH;
    for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
        argv[a++] = extra[i];
    }
    argv[a] = NULL;
    P.pid = fork();
    CHECK(P.pid >= 0);
    if (P.pid == 0) {
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        close(in[1]);
        close(out[0]);
        execv(TS_SIM_PATH, (char *const *)argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    P.in_fd = in[1];
    P.out_fd = out[0];
    open_slave();
}

static void sim_cmd(const char *line)
{
    CHECK(write(P.in_fd, line, strlen(line)) == (ssize_t)strlen(line));
}

static void finish(void)
{
    sim_cmd("quit\n");
    int status = 0;
    uint64_t end = mono_us() + 5000000u;
    pid_t r = 0;
    while ((r = waitpid(P.pid, &status, WNOHANG)) == 0 && mono_us() < end) {
        usleep(10000);
    }
    if (r == 0) {
        kill(P.pid, SIGKILL);
        waitpid(P.pid, &status, 0);
        CHECK(!"simulator did not quit within 5 s");
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(P.pty);
    close(P.in_fd);
    close(P.out_fd);
}

static void send_cmd(const throttlescope_v1_HostToProbe *m)
{
    uint8_t frame[TS_HOST_FRAME_MAX];
    size_t n = 0;
    CHECK_EQ_I(ts_proto_frame_host_msg(m, frame, sizeof frame, &n), TS_OK);
    CHECK(write(P.pty, frame, n) == (ssize_t)n);
}

/* Next message from the probe within timeout_ms; false on timeout. */
static bool next_msg(throttlescope_v1_ProbeToHost *msg, int timeout_ms)
{
    uint64_t end = mono_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        uint8_t *z = memchr(P.buf, 0, P.len);
        if (z != NULL) {
            size_t body = (size_t)(z - P.buf);
            static uint8_t payload[TS_PROBE_FRAME_MAX];
            size_t n = 0;
            CHECK_EQ_I(ts_frame_decode(P.buf, body, payload, sizeof payload, &n), TS_OK);
            CHECK_EQ_I(ts_proto_decode_probe_msg(payload, n, msg), TS_OK);
            memmove(P.buf, z + 1, P.len - body - 1);
            P.len -= body + 1;
            return true;
        }
        uint64_t now = mono_us();
        if (now >= end) {
            return false;
        }
        struct pollfd p = {P.pty, POLLIN, 0};
        if (poll(&p, 1, (int)((end - now) / 1000u) + 1) > 0) {
            ssize_t n = read(P.pty, P.buf + P.len, sizeof P.buf - P.len);
            if (n > 0) {
                P.len += (size_t)n;
            }
        }
    }
}

static throttlescope_v1_HostToProbe cmd(pb_size_t which, uint32_t id)
{
    throttlescope_v1_HostToProbe m = throttlescope_v1_HostToProbe_init_zero;
    m.which_cmd = which;
    m.request_id = id;
    return m;
}

static throttlescope_v1_ProbeToHost msg;
static ts_unpacked_batch U;

/* Unpack the batch in msg into U. */
static const ts_unpacked_batch *unpack(void)
{
    CHECK_EQ_I(ts_proto_unpack_batch(&msg.msg.batch, &U), TS_OK);
    return &U;
}

/* Bus power of sample i of U (the host computes it from VBUS and VSHUNT). */
static double power_w(uint32_t i)
{
    return ts_ina228_vbus_v((int32_t)U.value[0][i]) *
           ts_ina228_vshunt_v((int32_t)U.value[1][i], 0) / 0.005;
}

/* Ask for the Status and wait for it (batches before it are passed over);
 * it is in msg.msg.status. */
static void await_status(void)
{
    throttlescope_v1_HostToProbe st = cmd(CMD(get_status), 4);
    send_cmd(&st);
    bool got = false;
    while (!got && next_msg(&msg, 2000)) {
        got = msg.which_msg == TAG(status);
    }
    CHECK(got);
}

/* Start at rate_hz and wait for the Ack and DeviceInfo. */
static void start(uint32_t rate_hz)
{
    throttlescope_v1_HostToProbe m = cmd(CMD(start), 2);
    m.cmd.start.rate_hz = rate_hz;
    send_cmd(&m);
    CHECK(next_msg(&msg, 2000));
    CHECK_EQ_I(msg.which_msg, TAG(ack));
    CHECK_EQ_U(msg.msg.ack.request_id, 2u);
    CHECK(next_msg(&msg, 2000));
    CHECK_EQ_I(msg.which_msg, TAG(info));
}

TS_CASE(sim_answers_get_info_over_its_pty)
{
    const char *args[] = {"--probe-id", "bench-7", NULL};
    spawn(args);
    throttlescope_v1_HostToProbe m = cmd(CMD(get_info), 1);
    send_cmd(&m);
    CHECK(next_msg(&msg, 2000));
    CHECK_EQ_I(msg.which_msg, TAG(info));
    CHECK(strcmp(msg.msg.info.probe_id, "bench-7") == 0);
    CHECK_EQ_U(msg.msg.info.protocol_version, 3u);
    CHECK_EQ_U(msg.msg.info.i2c_bus_hz, 400000u);
    CHECK_EQ_U(msg.msg.info.shunt_cal, 1250u);
    CHECK_EQ_U(msg.msg.info.sensors_count, 1u);
    finish();
}

TS_CASE(sim_streams_consecutive_samples_and_answers_sync)
{
    const char *args[] = {"--vbus-v", "5.0", "--idle-w", "2.5", NULL};
    spawn(args);
    start(1000);
    CHECK_EQ_U(msg.msg.info.channels, TS_CH_VBUS | TS_CH_VSHUNT);
    uint32_t period = (uint32_t)(1e6 / msg.msg.info.conversion_rate_hz + 0.5);
    CHECK_EQ_U(period, 936u);
    uint64_t expected = 0, samples = 0, last_time = 0;
    int temps = 0;
    bool synced = false;
    uint64_t t_end = mono_us() + 700000u;
    throttlescope_v1_HostToProbe s = cmd(CMD(sync), 0);
    s.cmd.sync.sync_id = 77;
    s.cmd.sync.host_time_ns = 1763740000000000000ull;
    send_cmd(&s);
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(sync)) {
            CHECK_EQ_U(msg.msg.sync.sync_id, 77u);
            CHECK_EQ_U(msg.msg.sync.host_time_ns, 1763740000000000000ull);
            CHECK(msg.msg.sync.probe_rx_us <= msg.msg.sync.probe_tx_us);
            synced = true;
            continue;
        }
        CHECK_EQ_I(msg.which_msg, TAG(batch));
        const throttlescope_v1_SampleBatch *b = &msg.msg.batch;
        CHECK_EQ_U(b->dropped_before, 0u);
        CHECK_EQ_U(b->first_seq, expected);
        CHECK(b->first_time_us > last_time);
        CHECK_EQ_U(b->period_us, period);
        const ts_unpacked_batch *u = unpack();
        for (uint32_t i = 1; i < u->count; i++) {
            /* Stamped at the ALERT edges: one conversion apart. */
            CHECK_NEAR((double)(u->time_us[i] - u->time_us[i - 1]), (double)period, 1.0);
        }
        last_time = u->time_us[u->count - 1];
        CHECK_NEAR(ts_ina228_vbus_v((int32_t)u->value[0][0]), 5.0, 0.01);
        CHECK_NEAR(power_w(0), 2.5, 0.05);
        temps += b->temps_count;
        expected = b->first_seq + b->count;
        samples += b->count;
    }
    CHECK(synced);
    CHECK(samples >= 300u); /* ~750 expected at 1068 Hz; loose on a busy machine */
    CHECK(temps >= 3);      /* enclosure sensor at 10 Hz */
    finish();
}

TS_CASE(sim_energy_accumulator_closes_against_power_times_time)
{
    const char *args[] = {"--idle-w", "5.0", "--vbus-v", "5.0", NULL};
    spawn(args);
    throttlescope_v1_HostToProbe m = cmd(CMD(start), 2);
    m.cmd.start.rate_hz = 1000;
    m.cmd.start.accumulators_every = 50; /* ENERGY every 100 samples */
    send_cmd(&m);
    double lsb = 10.0 / 524288.0;
    bool have_first = false;
    uint64_t e0 = 0, e1 = 0;
    double t0 = 0, t1 = 0;
    double integral = 0.0;  /* sum of VBUS x VSHUNT / R x dt since the first ENERGY reading */
    double integral_at_1 = 0.0;
    uint64_t t_end = mono_us() + 900000u;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg != TAG(batch)) {
            continue;
        }
        const throttlescope_v1_SampleBatch *b = &msg.msg.batch;
        CHECK_EQ_U(b->dropped_before, 0u);
        const ts_unpacked_batch *u = unpack();
        pb_size_t a = 0;
        for (uint32_t i = 0; i < u->count; i++) {
            if (have_first) {
                /* Each sample averages the conversion that ends at it. */
                integral += power_w(i) * b->period_us * 1e-6;
            }
            while (a < b->slow_count && b->slow[a].index < i) {
                a++;
            }
            if (a < b->slow_count && b->slow[a].index == i && b->slow[a].reg == 0x09u) {
                double t = (double)u->time_us[i] * 1e-6;
                if (!have_first) {
                    have_first = true;
                    e0 = b->slow[a].value;
                    t0 = t;
                } else {
                    e1 = b->slow[a].value;
                    t1 = t;
                    integral_at_1 = integral;
                }
            }
        }
    }
    finish();
    CHECK(have_first && t1 >= t0 + 0.3);
    double measured = ts_ina228_energy_j(e1 - e0, lsb);
    /* ENERGY integrates every conversion; the samples are those conversions. */
    CHECK_NEAR(measured, integral_at_1, integral_at_1 * 0.005);
    CHECK_NEAR(measured, 5.0 * (t1 - t0), 0.02 * measured);
}

TS_CASE(sim_host_that_stops_reading_loses_samples_that_are_all_counted)
{
    /* A 2 kB host buffer and TX queue, so the 2048-sample ring fills in ~3 s. */
    const char *args[] = {"--link-buffer", "2048", "--txq-bytes", "2048", NULL};
    spawn(args);
    start(1000);
    usleep(4000000);        /* the host stops reading: pty, tx queue and ring fill */
    uint64_t delivered = 0, gaps = 0, expected = 0;
    bool acked = false;
    uint64_t resume_end = mono_us() + 500000u; /* it reads again while sampling goes on */
    bool stopped = false;
    while (next_msg(&msg, 500)) { /* then stops the probe and drains until quiet */
        if (!stopped && mono_us() >= resume_end) {
            throttlescope_v1_HostToProbe stop = cmd(CMD(stop), 3);
            send_cmd(&stop);
            stopped = true;
        }
        if (msg.which_msg == TAG(ack)) {
            acked = true;
            continue;
        }
        CHECK_EQ_I(msg.which_msg, TAG(batch));
        const throttlescope_v1_SampleBatch *b = &msg.msg.batch;
        CHECK_EQ_U(b->first_seq, expected + b->dropped_before);
        gaps += b->dropped_before;
        delivered += b->count;
        expected = b->first_seq + b->count;
    }
    CHECK(stopped && acked);
    throttlescope_v1_HostToProbe st = cmd(CMD(get_status), 4);
    send_cmd(&st);
    CHECK(next_msg(&msg, 2000));
    CHECK_EQ_I(msg.which_msg, TAG(status));
    const throttlescope_v1_Status *s = &msg.msg.status;
    CHECK(!s->running);
    CHECK(gaps > 0u);
    CHECK(s->ring_overflows >= 1u);
    /* Every sequence number is delivered or counted, none in between. */
    CHECK_EQ_U(delivered + s->samples_dropped, s->samples_taken);
    CHECK(gaps <= s->samples_dropped);
    finish();
}

TS_CASE(sim_stalled_sampler_misses_slots_that_are_counted_and_seen_as_a_gap)
{
    spawn(NULL);
    start(1000);
    usleep(200000);
    sim_cmd("stall 300\n");
    uint64_t t_end = mono_us() + 900000u;
    uint64_t gaps = 0, biggest = 0;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(batch)) {
            gaps += msg.msg.batch.dropped_before;
            if (msg.msg.batch.dropped_before > biggest) {
                biggest = msg.msg.batch.dropped_before;
            }
        }
    }
    await_status();
    const throttlescope_v1_Status *s = &msg.msg.status;
    /* 300 ms at 936 us per conversion: ~320 slots, all counted. */
    CHECK(s->missed_slots >= 300u && s->missed_slots <= 340u);
    CHECK_EQ_U(gaps, s->missed_slots);
    CHECK(biggest >= 300u);
    /* The achieved rate shows the loss; the conversion rate does not. */
    CHECK(s->achieved_rate_hz < s->conversion_rate_hz * 0.9f);
    CHECK_NEAR(s->conversion_rate_hz, 1e6 / 936.0, 0.01);
    finish();
}

TS_CASE(sim_chip_reset_mid_run_gives_a_new_epoch_and_restored_registers)
{
    spawn(NULL);
    start(1000);
    usleep(300000);
    sim_cmd("reset\n");
    uint64_t t_end = mono_us() + 800000u;
    uint32_t epoch = 0;
    uint64_t after = 0;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(batch)) {
            CHECK(msg.msg.batch.epoch >= epoch);
            epoch = msg.msg.batch.epoch;
            after += epoch == 1u ? msg.msg.batch.count : 0u;
        }
    }
    CHECK_EQ_U(epoch, 1u);
    CHECK(after >= 300u); /* sampling resumed after the re-initialisation */
    await_status();
    CHECK_EQ_U(msg.msg.status.reinits, 1u);
    CHECK_EQ_U(msg.msg.status.epoch, 1u);
    CHECK(msg.msg.status.missed_slots >= 1u);
    finish();
}

TS_CASE(sim_load_command_raises_bus_power)
{
    const char *args[] = {"--idle-w", "1.0", "--active-w", "8.0", NULL};
    spawn(args);
    start(200);
    double before = 0.0, after = 0.0;
    while (next_msg(&msg, 500) && msg.which_msg == TAG(batch)) {
        unpack();
        before = power_w(0);
        if (msg.msg.batch.first_seq > 20u) {
            break;
        }
    }
    sim_cmd("load 1\n");
    uint64_t t_end = mono_us() + 400000u;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(batch) && msg.msg.batch.count > 0u) {
            unpack();
            after = power_w(U.count - 1u);
        }
    }
    CHECK_NEAR(before, 1.0, 0.05);
    CHECK_NEAR(after, 8.0, 0.1);
    finish();
}

/* Run for ms, keeping the last batch's last sample (power, VBUS) and the
 * latest PortStatus (in *port, when one came). */
static void run_port(uint32_t ms, double *p_w, double *vbus_v, double *vbus_min_v,
                     throttlescope_v1_PortStatus *port, int *ports)
{
    uint64_t t_end = mono_us() + (uint64_t)ms * 1000u;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(batch) && msg.msg.batch.count > 0u) {
            unpack();
            *p_w = power_w(U.count - 1u);
            *vbus_v = ts_ina228_vbus_v((int32_t)U.value[0][U.count - 1u]);
            CHECK(msg.msg.batch.has_vbus_min);
            *vbus_min_v = ts_ina228_vbus_v(msg.msg.batch.vbus_min);
        } else if (msg.which_msg == TAG(port)) {
            *port = msg.msg.port;
            (*ports)++;
        }
    }
}

TS_CASE(sim_port_holds_a_drive_at_its_budget_and_a_cable_beyond_the_probe_is_unseen)
{
    /* A 900 mA port (USB 3 default, 4.5 W); a 200 mOhm cable between the probe
     * and the drive, which wants 8 W at full load. The probe plugs into the
     * port: it sees the port's VBUS and the cable's loss with the drive's power. */
    const char *args[] = {"--idle-w", "1.0", "--active-w", "8.0", "--port-current-a", "0.9",
                          "--cable-mohm", "200", "--port-cc", "2", NULL};
    spawn(args);
    throttlescope_v1_HostToProbe m = cmd(CMD(get_info), 1);
    send_cmd(&m);
    CHECK(next_msg(&msg, 2000));
    CHECK(msg.msg.info.cc_sensing);
    start(500);
    double p = 0, v = 0, vmin = 0;
    throttlescope_v1_PortStatus port = throttlescope_v1_PortStatus_init_zero;
    int ports = 0;
    run_port(400, &p, &v, &vmin, &port, &ports);
    /* Idle: 1 W at the drive draws ~0.2 A: 5 V at the probe, 1 W + I^2 R through it. */
    CHECK_NEAR(p, 1.0, 0.05);
    CHECK_NEAR(v, 5.0, 0.01);
    CHECK(ports >= 1);
    CHECK_EQ_I(port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_USB_DEFAULT);
    CHECK_EQ_I(port.active_cc, throttlescope_v1_ActiveCc_ACTIVE_CC_CC2);
    CHECK_NEAR((double)port.cc2_mv, 417.0, 15.0); /* 5 V x 5.1k / (56k + 5.1k) */
    sim_cmd("load 1\n");
    run_port(300, &p, &v, &vmin, &port, &ports);
    /* Held at 0.9 A: 4.5 W through the probe at the port's 5 V, not 8 W; the
     * drive gets 4.82 V x 0.9 A beyond the cable. */
    CHECK_NEAR(v, 5.0, 0.01);
    CHECK_NEAR(p, 5.0 * 0.9, 0.05);
    CHECK(vmin <= v + 0.01);
    /* The host port raises its offer to 3 A: the drive gets its 8 W, ~1.72 A
     * through 200 mOhm: 8.6 W through the probe. */
    sim_cmd("port 3\n");
    int before = ports;
    run_port(500, &p, &v, &vmin, &port, &ports);
    CHECK(ports > before);
    CHECK_EQ_I(port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0);
    CHECK_NEAR(p, 8.6, 0.1);
    m = cmd(CMD(get_port_status), 9);
    send_cmd(&m);
    bool got = false;
    while (!got && next_msg(&msg, 2000)) {
        got = msg.which_msg == TAG(port);
    }
    CHECK(got);
    CHECK(msg.msg.port.requested);
    /* The cable's drop lies beyond the probe: VBUS at the probe stays in vSafe5V. */
    CHECK_EQ_I(msg.msg.port.vbus_level, throttlescope_v1_VbusLevel_VBUS_LEVEL_SAFE5V);
    CHECK_NEAR((double)msg.msg.port.vbus_mv, 5000.0, 15.0);
    CHECK(!msg.msg.port.pd_contract);
    finish();
}

/* Messages until a PortStatus whose contract is mv / ma (or timeout_ms passes), keeping
 * the last sample's power; true when it came (or *port, the latest, already says it). */
static bool until_contract(uint32_t mv, uint32_t ma, uint32_t timeout_ms, double *p_w,
                           throttlescope_v1_PortStatus *port)
{
    if (port->has_contract && port->contract.mv == mv && port->contract.ma == ma) {
        return true;
    }
    uint64_t t_end = mono_us() + (uint64_t)timeout_ms * 1000u;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(batch) && msg.msg.batch.count > 0u) {
            unpack();
            *p_w = power_w(U.count - 1u);
        } else if (msg.which_msg == TAG(port) && msg.msg.port.has_contract &&
                   msg.msg.port.contract.mv == mv && msg.msg.port.contract.ma == ma) {
            *port = msg.msg.port;
            return true;
        }
    }
    return false;
}

/* Power through the probe once it settles near want_w (or timeout_ms passes). */
static double settled_power(double want_w, uint32_t timeout_ms)
{
    double p = 0.0;
    uint64_t t_end = mono_us() + (uint64_t)timeout_ms * 1000u;
    while (mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(batch) && msg.msg.batch.count > 0u) {
            unpack();
            p = power_w(U.count - 1u);
            if (fabs(p - want_w) < 0.1) {
                break;
            }
        }
    }
    return p;
}

TS_CASE(sim_pd_contract_raises_vbus_above_vsafe5v)
{
    const char *args[] = {"--pd-contract-v", "9", "--port-current-a", "3", "--idle-w", "2",
                          NULL};
    spawn(args);
    start(500);
    double p = 0, v = 0, vmin = 0;
    throttlescope_v1_PortStatus port = throttlescope_v1_PortStatus_init_zero;
    int ports = 0;
    run_port(400, &p, &v, &vmin, &port, &ports);
    CHECK_NEAR(v, 9.0, 0.02);
    CHECK(ports >= 1);
    CHECK_EQ_I(port.vbus_level, throttlescope_v1_VbusLevel_VBUS_LEVEL_ABOVE);
    CHECK(port.pd_contract);
    /* The negotiation on CC went through the core's decoder: its terms are on the wire. */
    CHECK(until_contract(9000u, 3000u, 10000u, &p, &port));
    CHECK_EQ_U(port.contract.mv, 9000u);
    CHECK_EQ_U(port.contract.ma, 3000u);
    CHECK_EQ_U(port.contract.mw, 27000u);
    CHECK_EQ_I(port.contract.supply, throttlescope_v1_PdSupply_PD_SUPPLY_FIXED);
    CHECK_EQ_U(port.contract.object_position, 2u);
    finish();
}

TS_CASE(sim_contract_command_renegotiates_and_the_port_follows_at_ps_rdy)
{
    /* A Thunderbolt drive's 5 V 3 A contract; flat out it draws 11 W (2.2 A). */
    const char *args[] = {"--pd-contract-v", "5", "--port-current-a", "3", "--idle-w", "3",
                          "--active-w", "11", NULL};
    spawn(args);
    start(500);
    double p = 0.0;
    throttlescope_v1_PortStatus port = throttlescope_v1_PortStatus_init_zero;
    CHECK(until_contract(5000u, 3000u, 10000u, &p, &port));
    CHECK(port.pd_contract);
    CHECK_EQ_U(port.contract.object_position, 1u);
    /* Once CC has settled (tCCDebounce) Rp reads SinkTxOK, and the contract stays. */
    uint64_t t_end = mono_us() + 10000000u;
    while (port.advertisement != throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0 &&
           mono_us() < t_end && next_msg(&msg, 500)) {
        if (msg.which_msg == TAG(port)) {
            port = msg.msg.port;
        }
    }
    CHECK_EQ_I(port.advertisement, throttlescope_v1_CcAdvertisement_CC_ADVERTISEMENT_3A0);
    CHECK(port.has_contract);
    CHECK_EQ_U(port.contract.ma, 3000u);
    sim_cmd("load 1\n");
    CHECK_NEAR(settled_power(11.0, 10000u), 11.0, 0.1);
    /* The source renegotiates 5 V 1.5 A: the new contract is on the wire, stamped with its
     * PS_RDY, and from then the port holds the drive at 7.5 W. */
    uint64_t asked_us = 0;
    sim_cmd("contract 5 1.5\n");
    CHECK(until_contract(5000u, 1500u, 10000u, &p, &port));
    asked_us = port.probe_time_us;
    CHECK(port.contract.agreed_us <= asked_us);
    CHECK(port.contract.agreed_us + 1000000u > asked_us);
    CHECK_EQ_U(port.contract.mw, 7500u);
    CHECK_EQ_U(port.changes >= 2u, 1u);
    CHECK_NEAR(settled_power(7.5, 10000u), 7.5, 0.1);
    /* A higher voltage: 9 V 3 A, VBUS follows. */
    sim_cmd("contract 9 3\n");
    CHECK(until_contract(9000u, 3000u, 10000u, &p, &port));
    CHECK_EQ_U(port.contract.object_position, 2u);
    CHECK_NEAR(settled_power(11.0, 10000u), 11.0, 0.1);
    finish();
}

TS_CASE(sim_without_a_port_model_has_no_cc_sensing)
{
    spawn(NULL);
    throttlescope_v1_HostToProbe m = cmd(CMD(get_info), 1);
    send_cmd(&m);
    CHECK(next_msg(&msg, 2000));
    CHECK(!msg.msg.info.cc_sensing);
    finish();
}

TS_CASE(sim_unplug_reopens_a_new_pty_and_keeps_counting)
{
    char link[64];
    snprintf(link, sizeof link, "/tmp/ts-sim-link-%d", (int)getpid());
    const char *args[] = {"--link", link, NULL};
    spawn(args);
    char target[128] = {0};
    CHECK(readlink(link, target, sizeof target - 1) > 0);
    CHECK(strcmp(target, P.path) == 0);
    start(500);
    sim_cmd("unplug 200\n");
    close(P.pty);
    open_slave(); /* a new `pty` line arrives after ~200 ms */
    memset(target, 0, sizeof target);
    CHECK(readlink(link, target, sizeof target - 1) > 0);
    CHECK(strcmp(target, P.path) == 0);
    await_status();
    CHECK(msg.msg.status.running);
    CHECK(msg.msg.status.samples_taken >= 50u);
    CHECK(msg.msg.status.uptime_us >= 200000u);
    finish();
    CHECK(access(link, F_OK) != 0); /* the sim removed the link it made */
}

TS_CASE(sim_probe_clock_runs_fast_by_the_drift)
{
    const char *args[] = {"--drift-ppm", "50000", NULL}; /* +5 % */
    spawn(args);
    /* Of several exchanges at each end keep the one with the shortest round
     * trip, as the host's alignment does: on a loaded machine one exchange can
     * wait milliseconds for the scheduler, which would skew the ratio. */
    uint64_t host[2], probe[2];
    for (int k = 0; k < 2; k++) {
        if (k == 1) {
            usleep(1000000);
        }
        uint64_t best_rtt = UINT64_MAX;
        for (uint32_t j = 0; j < 8u; j++) {
            throttlescope_v1_HostToProbe m = cmd(CMD(sync), 0);
            m.cmd.sync.sync_id = (uint32_t)k * 100u + j + 1u;
            uint64_t t0 = mono_us();
            send_cmd(&m);
            CHECK(next_msg(&msg, 2000));
            uint64_t t1 = mono_us();
            CHECK_EQ_I(msg.which_msg, TAG(sync));
            if (t1 - t0 < best_rtt) {
                best_rtt = t1 - t0;
                host[k] = (t0 + t1) / 2u;
                probe[k] = msg.msg.sync.probe_rx_us;
            }
        }
    }
    double ratio = (double)(probe[1] - probe[0]) / (double)(host[1] - host[0]);
    CHECK_NEAR(ratio, 1.05, 0.02);
    /* The simulated chip converts on host time; the probe's clock runs 5 %
     * fast, so a 936 us conversion measures ~983 us on it. */
    start(1000);
    /* On a loaded machine the first batch can close after one or two
     * conversions; take the first that holds at least three. */
    const ts_unpacked_batch *u = NULL;
    for (int tries = 0; tries < 10 && (u == NULL || u->count <= 2u); tries++) {
        CHECK(next_msg(&msg, 2000));
        if (msg.which_msg == TAG(batch)) {
            u = unpack();
        }
    }
    CHECK(u != NULL);
    CHECK(u->count > 2u);
    for (uint32_t i = 1; i < u->count; i++) {
        CHECK_NEAR((double)(u->time_us[i] - u->time_us[i - 1]), 936.0 * 1.05, 1.5);
    }
    finish();
}

TS_CASE(sim_rejects_unknown_flags_with_a_message)
{
    int err[2];
    CHECK(pipe(err) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(err[1], STDERR_FILENO);
        execl(TS_SIM_PATH, TS_SIM_PATH, "--volts", "5", (char *)NULL);
        _exit(127);
    }
    close(err[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    char text[512] = {0};
    ssize_t n = read(err[0], text, sizeof text - 1);
    close(err[0]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    CHECK(n > 0 && strstr(text, "--volts") != NULL);
}

static const ts_test_case cases[] = {
    TS_ENTRY(sim_answers_get_info_over_its_pty),
    TS_ENTRY(sim_streams_consecutive_samples_and_answers_sync),
    TS_ENTRY(sim_energy_accumulator_closes_against_power_times_time),
    TS_ENTRY(sim_host_that_stops_reading_loses_samples_that_are_all_counted),
    TS_ENTRY(sim_stalled_sampler_misses_slots_that_are_counted_and_seen_as_a_gap),
    TS_ENTRY(sim_chip_reset_mid_run_gives_a_new_epoch_and_restored_registers),
    TS_ENTRY(sim_load_command_raises_bus_power),
    TS_ENTRY(sim_port_holds_a_drive_at_its_budget_and_a_cable_beyond_the_probe_is_unseen),
    TS_ENTRY(sim_pd_contract_raises_vbus_above_vsafe5v),
    TS_ENTRY(sim_contract_command_renegotiates_and_the_port_follows_at_ps_rdy),
    TS_ENTRY(sim_without_a_port_model_has_no_cc_sensing),
    TS_ENTRY(sim_unplug_reopens_a_new_pty_and_keeps_counting),
    TS_ENTRY(sim_probe_clock_runs_fast_by_the_drift),
    TS_ENTRY(sim_rejects_unknown_flags_with_a_message),
};
TS_TEST_MAIN(cases)
