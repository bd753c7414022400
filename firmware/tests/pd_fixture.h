/* The USB PD fixtures (fixtures/usb-pd/, format in its README.md): a capture's
 * CC edges fed to a decoder, and sigrok's recorded decoding of the same file.
 * Shared by the decoder's tests and the contract-to-PortStatus tests. */
#ifndef THROTTLESCOPE_TEST_PD_FIXTURE_H
#define THROTTLESCOPE_TEST_PD_FIXTURE_H

#include "harness.h"

#include <stdbool.h>

#include "throttlescope/pd_decode.h"

/** Messages a fixture holds at most. */
#define MAX_MSGS 512

/* ------------------------------------------------------------------ */
/* Fixtures: the .edges file (format in fixtures/usb-pd/README.md). */

typedef struct edge_file {
    uint32_t clock_hz;
    uint64_t samples;
    int initial_level;
    uint64_t edges;
    uint64_t last_edge;
} edge_file;

static inline FILE *open_fixture(const char *name, const char *ext)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s%s", TS_PD_FIXTURES_DIR, name, ext);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    return f;
}

/* Read the header, then feed every edge to d (if non-NULL). */
static inline edge_file feed_fixture(const char *name, ts_pd_decoder *d, const ts_pd_config *base)
{
    FILE *f = open_fixture(name, ".edges");
    edge_file ef = {0, 0, -1, 0, 0};
    char tok[64];
    uint64_t t = 0;
    int level = 0;
    bool started = false;
    while (fscanf(f, " %63s", tok) == 1) {
        if (tok[0] == '#') {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n') {
            }
            continue;
        }
        if (strcmp(tok, "clock_hz") == 0) {
            CHECK(fscanf(f, "%" SCNu32, &ef.clock_hz) == 1);
            continue;
        }
        if (strcmp(tok, "samples") == 0) {
            CHECK(fscanf(f, "%" SCNu64, &ef.samples) == 1);
            continue;
        }
        if (strcmp(tok, "initial_level") == 0) {
            CHECK(fscanf(f, "%d", &ef.initial_level) == 1);
            level = ef.initial_level;
            continue;
        }
        if (!started) {
            CHECK(ef.clock_hz > 0 && ef.initial_level >= 0);
            if (d != NULL) {
                ts_pd_config cfg = *base;
                cfg.tick_hz = ef.clock_hz;
                CHECK(ts_pd_init(d, &cfg) == 0);
            }
            started = true;
        }
        uint64_t v = strtoull(tok[0] == '@' ? tok + 1 : tok, NULL, 10);
        uint64_t nt = tok[0] == '@' ? v : t + v;
        CHECK(ef.edges == 0 || nt > t);
        t = nt;
        level ^= 1;
        ef.edges++;
        if (d != NULL) {
            ts_pd_feed_edge(d, t, (uint8_t)level);
        }
    }
    fclose(f);
    ef.last_edge = t;
    if (d != NULL) {
        ts_pd_idle(d, ef.samples > t + ef.clock_hz / 1000u ? ef.samples : t + ef.clock_hz / 1000u);
    }
    return ef;
}

/* ------------------------------------------------------------------ */
/* sigrok's recorded decoding (`--protocol-decoder-samplenum`, classes sop,
 * header, data, crc, warnings, text). One packet's lines end with its
 * full-text line "#N (t ms): ...". */

typedef struct sr_msg {
    uint64_t start;       /* first edge of the burst */
    int sop;              /* ts_pd_sop, or -1 when sigrok found no ordered set */
    bool has_header;
    uint16_t header;
    uint32_t obj[TS_PD_MAX_OBJECTS];
    int nobj;
    uint32_t crc;
    bool bad_crc, no_eop, truncated;
    char text[1024];      /* after "#N (t ms): " */
} sr_msg;

static sr_msg want[MAX_MSGS];
static size_t nwant;
static unsigned sr_junk;

static inline void read_sigrok(const char *name)
{
    FILE *f = open_fixture(name, ".sigrok.txt");
    char line[4096];
    sr_msg cur;
    memset(&cur, 0, sizeof(cur));
    cur.sop = -1;
    nwant = 0;
    sr_junk = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';
        unsigned long long s0, s1;
        int off = 0;
        CHECK(sscanf(line, "%llu-%llu usb_power_delivery-1: %n", &s0, &s1, &off) == 2 && off > 0);
        const char *a = line + off;
        unsigned i;
        unsigned long v;
        if (strcmp(a, "SOP") == 0) {
            cur.sop = TS_PD_SOP;
        } else if (strcmp(a, "SOP'") == 0) {
            cur.sop = TS_PD_SOP_P;
        } else if (strcmp(a, "SOP\"") == 0) {
            cur.sop = TS_PD_SOP_PP;
        } else if (strcmp(a, "SOP' Debug") == 0) {
            cur.sop = TS_PD_SOP_P_DEBUG;
        } else if (strcmp(a, "SOP\" Debug") == 0) {
            cur.sop = TS_PD_SOP_PP_DEBUG;
        } else if (sscanf(a, "H:%lx", &v) == 1) {
            cur.has_header = true;
            cur.header = (uint16_t)v;
        } else if (sscanf(a, "[%u]%lx", &i, &v) == 2) {
            CHECK(i == (unsigned)cur.nobj && i < TS_PD_MAX_OBJECTS);
            cur.obj[cur.nobj++] = (uint32_t)v;
        } else if (sscanf(a, "CRC:%lx", &v) == 1) {
            cur.crc = (uint32_t)v;
        } else if (strncmp(a, "Bad CRC", 7) == 0) {
            cur.bad_crc = true;
        } else if (strcmp(a, "No EOP") == 0) {
            cur.no_eop = true;
        } else if (strcmp(a, "Truncated") == 0) {
            cur.truncated = true;
        } else if (strcmp(a, "No start of packet found") == 0) {
            sr_junk++;
        } else if (a[0] == '#') {
            const char *body = strstr(a, "): ");
            CHECK(body != NULL);
            body += 3;
            cur.start = s0;
            snprintf(cur.text, sizeof(cur.text), "%s", body);
            if (strcmp(body, "HRST") == 0) {
                cur.sop = TS_PD_HARD_RESET;
            } else if (strcmp(body, "CRST") == 0) {
                cur.sop = TS_PD_CABLE_RESET;
            }
            if (cur.sop >= 0) {
                CHECK(nwant < MAX_MSGS);
                want[nwant++] = cur;
            }
            memset(&cur, 0, sizeof(cur));
            cur.sop = -1;
        } else {
            fprintf(stderr, "%s: unexpected sigrok line: %s\n", name, line);
            exit(1);
        }
    }
    fclose(f);
}

#endif
