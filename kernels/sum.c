/* sum: scalar float sum over 1<<20 floats filled with (i & 7) * 0.25,
 * repeated K passes. Without -ffast-math the compiler may not reassociate the
 * reduction, so each pass is one dependent fadd per element. Every partial
 * sum is exact, so each pass sums to 917504 and the checksum is 917504 * K.
 *
 * usage: sum [K]       K (passes) defaults to 20
 *
 * One untimed warm-up pass runs first (page faults, caches); the K passes are
 * the timed region, reported as elapsed_ns from CLOCK_MONOTONIC. Each pass's
 * sum is stored to a volatile global and added into the printed checksum, so
 * the loop cannot be removed; a compiler barrier between passes stops it
 * from being computed once and reused.
 *
 * Prints  checksum=<917504*K, one decimal>  elapsed_ns=<int>  passes=<K>
 * and exits 1 if the checksum is not the expected value.
 */
#include "common.h"

#define N_FLOATS (1u << 20)

volatile float g_sink;

static float sum_pass(const float *a, size_t n)
{
    float s = 0.0f;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    return s;
}

int main(int argc, char **argv)
{
    uint64_t passes = arg_size(argc, argv, 1, 20);
    float *a = xmalloc(N_FLOATS * sizeof *a);
    for (size_t i = 0; i < N_FLOATS; i++)
        a[i] = (float)(i & 7) * 0.25f;

    g_sink = sum_pass(a, N_FLOATS); /* warm-up, untimed */

    double total = 0.0;
    uint64_t t0 = now_ns();
    for (uint64_t k = 0; k < passes; k++) {
        __asm__ __volatile__("" : : "r"(a) : "memory");
        float s = sum_pass(a, N_FLOATS);
        g_sink = s;
        total += s;
    }
    uint64_t t1 = now_ns();

    double expected = 917504.0 * (double)passes;
    printf("checksum=%.1f\nelapsed_ns=%llu\npasses=%llu\n", total,
           (unsigned long long)(t1 - t0), (unsigned long long)passes);
    free(a);
    if (total != expected) {
        fprintf(stderr, "sum: checksum %.1f, expected %.1f\n", total, expected);
        return 1;
    }
    return 0;
}
