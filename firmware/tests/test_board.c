/* The board description against the board: docs/hardware.md's table "The board's analog
 * values" says what is fitted (the ADC reference on ADC_VREF, the NTC divider); the Pico's
 * devicetree, the native_sim overlays that mirror it and the RP2040 emulator script must say
 * the same, and the conversions the firmware runs with those values must give the right
 * millivolts and the right temperature.
 *
 * The conversions are the ones Zephyr 4.1 runs on the board, written out here from their
 * documented arithmetic (no Zephyr headers on the host):
 *   - adc_raw_to_millivolts (include/zephyr/drivers/adc.h): mV = code x ref_mv >> resolution,
 *     ref_mv being the RP2040 driver's ADC_REF_INTERNAL voltage, its `vref-mv` property
 *     (default 3300: the 3V3 rail);
 *   - the NTC driver with `pullup-uv` set (drivers/sensor/ntc_thermistor): the reading in mV
 *     as above, R = pullup-ohm x mV / (pullup-uv / 1000 - mV) for an NTC to ground, then the
 *     part's R/T table interpolated linearly in ohms between its rows. */
#include "harness.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>

#include "throttlescope/port.h"

#define FW TS_SOURCE_DIR
#define HARDWARE_MD FW "/../docs/hardware.md"
#define PICO_OVERLAY FW "/app/boards/rpi_pico.overlay"
#define SIM_OVERLAY FW "/app/boards/native_sim.overlay"
#define CC_TEST_OVERLAY FW "/tests/zephyr/cc_sense/boards/native_sim.overlay"
#define EMULATOR FW "/scripts/rp2040-emulate.mjs"

/* The RP2040's ADC: 12 bits, one LSB = reference / 4096 (RP2040 datasheet 4.9). */
#define ADC_BITS 12
#define ADC_MAX_CODE 4095

/* ---- reading the descriptions ---- */

static char text[1 << 17];

/* The file at path into `text`, comments ("/" "*" ... "*" "/" and // to the end of the
 * line) blanked out when strip is set, so that a value quoted in a comment is not read. */
static const char *load(const char *path, bool strip)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    CHECK(n < sizeof text - 1);
    text[n] = '\0';
    if (strip) {
        for (char *p = text; *p != '\0'; p++) {
            if (p[0] == '/' && p[1] == '*') {
                char *end = strstr(p + 2, "*/");
                CHECK(end != NULL);
                memset(p, ' ', (size_t)(end + 2 - p));
            } else if (p[0] == '/' && p[1] == '/' && (p == text || p[-1] != ':')) {
                while (*p != '\0' && *p != '\n') {
                    *p++ = ' ';
                }
                if (*p == '\0') {
                    break;
                }
            }
        }
    }
    return text;
}

/* The body of the devicetree node opened by `opener` (e.g. "&adc {"), into out. */
static void node(const char *src, const char *opener, char *out, size_t cap)
{
    const char *start = strstr(src, opener);
    if (start == NULL) {
        fprintf(stderr, "no node \"%s\"\n", opener);
        exit(1);
    }
    const char *p = start + strlen(opener);
    int depth = 1;
    const char *body = p;
    for (; *p != '\0' && depth > 0; p++) {
        depth += *p == '{' ? 1 : *p == '}' ? -1 : 0;
    }
    CHECK(depth == 0);
    size_t n = (size_t)(p - 1 - body);
    CHECK(n < cap);
    memcpy(out, body, n);
    out[n] = '\0';
}

/* The integer of `name = <N>;` in a node body (the property itself, not e.g.
 * "zephyr,name"); -1 when absent. */
static long prop(const char *body, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(body, name); p != NULL; p = strstr(p + 1, name)) {
        bool starts = p == body || isspace((unsigned char)p[-1]) || p[-1] == ';';
        const char *q = p + len;
        while (*q == ' ' || *q == '\t') {
            q++;
        }
        if (!starts || *q != '=') {
            continue;
        }
        q++;
        while (*q == ' ' || *q == '\t') {
            q++;
        }
        CHECK(*q == '<');
        return strtol(q + 1, NULL, 0);
    }
    return -1;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(s, what); p != NULL; p = strstr(p + 1, what)) {
        n++;
    }
    return n;
}

/* `const NAME = N;` in the emulator script. */
static long js_const(const char *src, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "const %s = ", name);
    const char *p = strstr(src, key);
    if (p == NULL) {
        fprintf(stderr, "%s: no %s\n", EMULATOR, key);
        exit(1);
    }
    return strtol(p + strlen(key), NULL, 10);
}

/* The number before `unit` on the row of hardware.md's table whose devicetree column names
 * `key` (e.g. "`vref-mv`"), scaled: "3.000 V" with scale 1000 is 3000. Only table rows
 * (lines that start with '|') count; the key may also appear in the page's prose. */
static long doc_value(const char *md, const char *key, const char *unit, double scale)
{
    for (const char *k = strstr(md, key); k != NULL; k = strstr(k + 1, key)) {
        const char *row = k;
        while (row > md && row[-1] != '\n') {
            row--;
        }
        if (row[0] != '|') {
            continue;
        }
        for (const char *p = row; p < k; p++) {
            if (!isdigit((unsigned char)*p) || (p > row && isalnum((unsigned char)p[-1]))) {
                continue;
            }
            char *end = NULL;
            double v = strtod(p, &end);
            const char *u = end;
            while (*u == ' ') {
                u++;
            }
            if (strncmp(u, unit, strlen(unit)) == 0) {
                return lround(v * scale);
            }
            p = end - 1;
        }
    }
    fprintf(stderr, "%s: no table row for %s with a value in %s\n", HARDWARE_MD, key, unit);
    exit(1);
}

/* What the board has, from hardware.md. */
typedef struct board {
    long vref_mv, ntc_supply_mv, ntc_pullup_ohm, ntc_series_ohm;
} board;

static board fitted(void)
{
    const char *md = load(HARDWARE_MD, false);
    board b = {
        .vref_mv = doc_value(md, "`vref-mv`", "V", 1000.0),
        .ntc_supply_mv = doc_value(md, "`pullup-uv`", "V", 1000.0),
        .ntc_pullup_ohm = doc_value(md, "`pullup-ohm`", "kΩ", 1000.0),
        .ntc_series_ohm = doc_value(md, "`pulldown-ohm`", "Ω", 1.0),
    };
    /* Every place the page names the reference part gives it the same voltage. */
    size_t named = 0;
    for (const char *p = strstr(md, "LM4040A30 ("); p != NULL; p = strstr(p + 1, "LM4040A30 (")) {
        CHECK_EQ_I(lround(strtod(p + strlen("LM4040A30 ("), NULL) * 1000.0), b.vref_mv);
        named++;
    }
    CHECK(named >= 2u); /* the front end's drawing and the bill of materials */
    return b;
}

/* ---- the conversions the firmware runs (Zephyr 4.1) ---- */

/* adc_raw_to_millivolts with gain 1. */
static int32_t raw_to_mv(int32_t code, int32_t ref_mv)
{
    return (code * ref_mv) >> ADC_BITS;
}

/* The code the RP2040 gives for an input (ideal converter: floor(V / LSB)). */
static int32_t code_of(double mv, long vref_mv)
{
    double c = floor(mv * (1 << ADC_BITS) / (double)vref_mv);
    return c < 0.0 ? 0 : c > ADC_MAX_CODE ? ADC_MAX_CODE : (int32_t)c;
}

/* TDK/EPCOS B57861S0103A039 (R/T characteristic 8016, B25/100 = 3988 K): resistance at
 * each 10 degC row, from TDK's data sheet, the table Zephyr's `epcos,b57861s0103a039`
 * compatible converts with. */
static const struct {
    int32_t c;
    uint32_t ohm;
} b57861[] = {
    {-25, 146676}, {-15, 78875}, {-5, 44424}, {5, 26075},  {15, 15881},
    {25, 10000},   {35, 6488},   {45, 4326},  {55, 2956},  {65, 2066},
    {75, 1474},    {85, 1072},   {95, 793},   {105, 596},  {115, 454},
    {125, 351},
};
#define ROWS (sizeof b57861 / sizeof b57861[0])

/* m degC from ohms: linear in ohms between the bracketing rows, clamped to the ends. */
static int32_t table_milli_c(uint32_t ohm)
{
    if (ohm >= b57861[0].ohm) {
        return b57861[0].c * 1000;
    }
    for (size_t i = 1; i < ROWS; i++) {
        if (ohm >= b57861[i].ohm) {
            int32_t t0 = b57861[i - 1].c * 1000, t1 = b57861[i].c * 1000;
            int32_t r0 = (int32_t)b57861[i - 1].ohm, r1 = (int32_t)b57861[i].ohm;
            return t0 + (t1 - t0) * ((int32_t)ohm - r0) / (r1 - r0);
        }
    }
    return b57861[ROWS - 1].c * 1000;
}

/* The driver's reading of an NTC to ground under a pull-up from supply_mv, in m degC. */
static int32_t ntc_milli_c(int32_t code, long vref_mv, long supply_mv, long pullup_ohm)
{
    int32_t mv = raw_to_mv(code, (int32_t)vref_mv);
    if (mv <= 0) {
        return b57861[ROWS - 1].c * 1000; /* 0 ohm: shorted */
    }
    if (mv >= supply_mv) {
        return b57861[0].c * 1000; /* open */
    }
    uint32_t ohm = (uint32_t)pullup_ohm * (uint32_t)mv / (uint32_t)(supply_mv - mv);
    return table_milli_c(ohm);
}

/* The divider's output for the NTC at `ohm` on the board as fitted, in mV. */
static double ntc_node_mv(const board *b, double ohm)
{
    double r = ohm + (double)b->ntc_series_ohm;
    return (double)b->ntc_supply_mv * r / (r + (double)b->ntc_pullup_ohm);
}

/* ---- the cases ---- */

TS_CASE(every_board_description_converts_with_the_reference_the_bill_of_materials_fits)
{
    board b = fitted();
    CHECK_EQ_I(b.vref_mv, 3000); /* LM4040A30 */
    static char body[1 << 14];
    /* The Pico: the RP2040 driver's reference is the controller's vref-mv, and every channel
     * converts with it (ADC_REF_INTERNAL, no per-channel zephyr,vref-mv to disagree). */
    node(load(PICO_OVERLAY, true), "&adc {", body, sizeof body);
    CHECK_EQ_I(prop(body, "vref-mv"), b.vref_mv);
    CHECK(count(body, "channel@") >= 3u);
    CHECK_EQ_U(count(body, "\"ADC_REF_INTERNAL\""), count(body, "channel@"));
    CHECK_EQ_U(count(body, "zephyr,vref-mv"), 0u);
    /* native_sim (the app and the CC test): the emulated ADC's ADC_REF_INTERNAL voltage. */
    const char *sims[] = {SIM_OVERLAY, CC_TEST_OVERLAY};
    for (size_t i = 0; i < 2; i++) {
        node(load(sims[i], true), "&adc0 {", body, sizeof body);
        CHECK_EQ_I(prop(body, "ref-internal-mv"), b.vref_mv);
        CHECK_EQ_U(count(body, "\"ADC_REF_INTERNAL\""), count(body, "channel@"));
    }
    /* The RP2040 emulator turns its input voltages into codes with the same reference. */
    CHECK_EQ_I(js_const(load(EMULATOR, false), "ADC_VREF_MV"), b.vref_mv);
}

TS_CASE(every_board_description_has_the_ntc_divider_the_board_has)
{
    board b = fitted();
    CHECK_EQ_I(b.ntc_supply_mv, 3300); /* the Pico's 3V3 */
    CHECK_EQ_I(b.ntc_pullup_ohm, 10000);
    CHECK_EQ_I(b.ntc_series_ohm, 0);
    static char body[1 << 14];
    const char *overlays[] = {PICO_OVERLAY, SIM_OVERLAY};
    for (size_t i = 0; i < 2; i++) {
        node(load(overlays[i], true), "enclosure-ntc {", body, sizeof body);
        CHECK(strstr(body, "\"epcos,b57861s0103a039\"") != NULL);
        /* pullup-uv is the divider's supply; without it the driver would read the divider
         * against the ADC's full scale, as if fed from the 3.000 V reference. */
        CHECK_EQ_I(prop(body, "pullup-uv"), b.ntc_supply_mv * 1000);
        CHECK_EQ_I(prop(body, "pullup-ohm"), b.ntc_pullup_ohm);
        CHECK_EQ_I(prop(body, "pulldown-ohm"), b.ntc_series_ohm);
        CHECK(strstr(body, "connected-positive") == NULL); /* NTC to ground */
    }
    const char *js = load(EMULATOR, false);
    CHECK_EQ_I(js_const(js, "NTC_SUPPLY_MV"), b.ntc_supply_mv);
    CHECK_EQ_I(js_const(js, "NTC_PULLUP_OHM"), b.ntc_pullup_ohm);
}

TS_CASE(a_raw_adc_count_converts_to_the_right_millivolts_with_the_board_reference)
{
    board b = fitted();
    static char body[1 << 14];
    node(load(PICO_OVERLAY, true), "&adc {", body, sizeof body);
    int32_t ref = (int32_t)prop(body, "vref-mv");
    /* One LSB is 3000/4096 = 0.732 mV: mid-scale is 1.5 V, full scale just under 3 V. */
    CHECK_EQ_I(raw_to_mv(2048, ref), 1500);
    CHECK_EQ_I(raw_to_mv(1024, ref), 750);
    CHECK_EQ_I(raw_to_mv(ADC_MAX_CODE, ref), 2999);
    /* Zephyr's default for this ADC (3300, the 3V3 rail) read the same count 10 % high. */
    CHECK_EQ_I(raw_to_mv(2048, 3300), 1650);
    /* Every edge of the Type-C sink ranges, put on the pin as a voltage, reads back within
     * one count (truncated) and in its own class with the front end's guard. */
    static const struct {
        uint32_t mv;
        ts_cc_class c;
    } edge[] = {
        {250, TS_CC_USB_DEFAULT}, {610, TS_CC_USB_DEFAULT}, {700, TS_CC_1A5},
        {1160, TS_CC_1A5},        {1310, TS_CC_3A0},        {1689, TS_CC_3A0},
        {2040, TS_CC_3A0},
    };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        int32_t code = code_of(edge[i].mv, b.vref_mv);
        int32_t mv = raw_to_mv(code, ref);
        CHECK(mv <= (int32_t)edge[i].mv && mv >= (int32_t)edge[i].mv - 1);
        CHECK_EQ_I(ts_port_classify_mv((uint32_t)mv, TS_PORT_GUARD_MV), edge[i].c);
        /* With 3300 the top of vRd-1.5 and of vRd-3.0 fell out of range. */
        if (edge[i].mv == 1160u || edge[i].mv == 2040u) {
            CHECK_EQ_I(ts_port_classify_mv((uint32_t)raw_to_mv(code, 3300), TS_PORT_GUARD_MV),
                       TS_CC_OUT_OF_RANGE);
        }
    }
}

TS_CASE(the_ntc_reads_its_rt_table_through_the_board_divider_at_three_temperatures)
{
    board b = fitted();
    static char body[1 << 14];
    const char *pico = load(PICO_OVERLAY, true);
    node(pico, "&adc {", body, sizeof body);
    long ref = prop(body, "vref-mv");
    node(load(PICO_OVERLAY, true), "enclosure-ntc {", body, sizeof body);
    long supply_mv = prop(body, "pullup-uv") / 1000, pullup = prop(body, "pullup-ohm");
    /* 5, 25 and 85 degC: rows of the part's table, so the table's own interpolation adds
     * nothing and what is left is the divider, the reference and 12 bits (< 0.1 degC). */
    static const struct {
        int32_t c;
        uint32_t ohm;
    } at[] = {{5, 26075}, {25, 10000}, {85, 1072}};
    for (size_t i = 0; i < 3; i++) {
        int32_t code = code_of(ntc_node_mv(&b, at[i].ohm), b.vref_mv);
        int32_t mc = ntc_milli_c(code, ref, supply_mv, pullup);
        CHECK_NEAR(mc, at[i].c * 1000, 100);
    }
    /* The description this replaces (the reference taken as 3300 mV) read the 25 degC
     * enclosure 3.8 degC cold, and the ends of the range further off. */
    int32_t code25 = code_of(ntc_node_mv(&b, 10000.0), b.vref_mv);
    int32_t old25 = ntc_milli_c(code25, 3300, supply_mv, pullup);
    CHECK(old25 < 21500 && old25 > 21000);
    /* Above 100 kOhm (about -20 degC) the divider passes the 3.000 V reference and the
     * reading sticks at full scale: the enclosure range (0..85 degC) is far from it. */
    CHECK(ntc_node_mv(&b, 26075.0) < (double)b.vref_mv);
    CHECK_EQ_I(code_of(ntc_node_mv(&b, 146676.0), b.vref_mv), ADC_MAX_CODE);
}

static const ts_test_case cases[] = {
    TS_ENTRY(every_board_description_converts_with_the_reference_the_bill_of_materials_fits),
    TS_ENTRY(every_board_description_has_the_ntc_divider_the_board_has),
    TS_ENTRY(a_raw_adc_count_converts_to_the_right_millivolts_with_the_board_reference),
    TS_ENTRY(the_ntc_reads_its_rt_table_through_the_board_divider_at_three_temperatures),
};
TS_TEST_MAIN(cases)
