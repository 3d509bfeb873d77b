/* Helpers shared by the benchbot kernels: a deterministic PRNG, a size
 * argument parser and a monotonic clock. Header-only so that each kernel is
 * one translation unit and the compiler sees everything it inlines. */
#ifndef BENCHBOT_KERNELS_COMMON_H
#define BENCHBOT_KERNELS_COMMON_H

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* splitmix64: one 64-bit state, fixed seed, same stream on every platform. */
static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* FNV-1a over 64-bit words, for checksums of sampled values. */
static inline uint64_t fnv1a_mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xFFu;
        h *= 0x100000001B3ull;
    }
    return h;
}
#define FNV1A_INIT 0xCBF29CE484222325ull

/* argv[i] as a positive integer, or dflt when absent; exits 2 when malformed. */
static inline uint64_t arg_size(int argc, char **argv, int i, uint64_t dflt)
{
    if (argc <= i)
        return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(argv[i], &end, 10);
    if (errno != 0 || end == argv[i] || *end != '\0' || v == 0 || argv[i][0] == '-') {
        fprintf(stderr, "%s: argument %d must be a positive integer, got '%s'\n",
                argv[0], i, argv[i]);
        exit(2);
    }
    return (uint64_t)v;
}

static inline void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
