/* A tiny test harness: each test binary holds named cases; ctest runs one
 * case per test (`binary CASE`), so every behaviour is its own ctest entry. */
#ifndef THROTTLESCOPE_TEST_HARNESS_H
#define THROTTLESCOPE_TEST_HARNESS_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ts_test_case {
    const char *name;
    void (*fn)(void);
} ts_test_case;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define CHECK_EQ_I(a, b)                                                               \
    do {                                                                               \
        long long va_ = (long long)(a), vb_ = (long long)(b);                          \
        if (va_ != vb_) {                                                              \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__,         \
                    __LINE__, #a, #b, va_, vb_);                                       \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define CHECK_EQ_U(a, b)                                                               \
    do {                                                                               \
        unsigned long long va_ = (unsigned long long)(a), vb_ = (unsigned long long)(b); \
        if (va_ != vb_) {                                                              \
            fprintf(stderr, "%s:%d: %s == %s failed: %llu (0x%llx) != %llu (0x%llx)\n", \
                    __FILE__, __LINE__, #a, #b, va_, va_, vb_, vb_);                   \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                          \
    do {                                                                               \
        double va_ = (double)(a), vb_ = (double)(b);                                   \
        if (!(fabs(va_ - vb_) <= (tol))) {                                             \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.12g vs %.12g (tol %g)\n",       \
                    __FILE__, __LINE__, #a, #b, va_, vb_, (double)(tol));              \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

/* Declare a case; tests/CMakeLists.txt registers every TS_CASE(name) with ctest. */
#define TS_CASE(name) static void name(void)
#define TS_ENTRY(name) {#name, name}

static inline int ts_test_main(int argc, char **argv, const ts_test_case *cases, size_t n)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++) {
            printf("%s\n", cases[i].name);
        }
        return 0;
    }
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        if (argc < 2 || strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("ok %s\n", cases[i].name);
            ran++;
        }
    }
    if (ran == 0) {
        fprintf(stderr, "no test case named %s\n", argc > 1 ? argv[1] : "(none)");
        return 2;
    }
    return 0;
}

#define TS_TEST_MAIN(cases)                                                            \
    int main(int argc, char **argv)                                                    \
    {                                                                                  \
        return ts_test_main(argc, argv, cases, sizeof(cases) / sizeof(cases[0]));     \
    }

#endif
