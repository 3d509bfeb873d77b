/* copy: memcpy between two buffers of N MiB, R times, ping-ponging so each
 * copy reads what the previous one wrote; one byte is changed between
 * copies so no copy repeats the last.
 *
 * usage: copy [N [R]]     N (MiB) defaults to 16, R (copies) to 16
 *
 * Prints  checksum=<hex of bytes sampled every 4 KiB of the last copy>
 */
#include "common.h" /* first: it sets _POSIX_C_SOURCE */

#include <string.h>

int main(int argc, char **argv)
{
    size_t mib = (size_t)arg_size(argc, argv, 1, 16);
    uint64_t reps = arg_size(argc, argv, 2, 16);
    size_t n = mib << 20;
    unsigned char *src = xmalloc(n), *dst = xmalloc(n);

    uint64_t seed = 0x5EED0004ull;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = splitmix64(&seed);
        memcpy(src + i, &v, 8);
    }

    for (uint64_t r = 0; r < reps; r++) {
        memcpy(dst, src, n);
        dst[(size_t)(r * 4099u) % n] ^= (unsigned char)(r + 1);
        unsigned char *tmp = src;
        src = dst;
        dst = tmp;
    }

    uint64_t h = FNV1A_INIT;
    for (size_t i = 0; i < n; i += 4096)
        h = fnv1a_mix(h, src[i] | (uint64_t)src[(i + 4099u) % n] << 8);
    printf("checksum=%016llx\nmib=%zu\ncopies=%llu\n", (unsigned long long)h, mib,
           (unsigned long long)reps);
    free(src);
    free(dst);
    return 0;
}
