/* sort: sort N pseudo-random uint32 values with a comparison sort, so the work
 * grows as n log n: 1.04 * N is about 4.2% more work (see merge_sort).
 *
 * usage: sort [N]      N defaults to 1000000
 *
 * The program sorts N * SIZE_PERCENT / 100 values; benchbot's demo makes its
 * head commit by changing SIZE_PERCENT from 100 to 104. The same change can be
 * made by editing N in benchbot.yml.
 *
 * Prints
 *   sorted_ok=1             the output is in order and holds the same values
 *                           as the input (identical for every N)
 *   checksum=<hex>          hash of sampled positions of the sorted array
 *                           (depends on N)
 *   n=<values sorted>
 */
#include "common.h"

#define SIZE_PERCENT 100

/* A hand-written top-down merge sort rather than qsort() or a quicksort:
 * - the comparison is inlined and the merge is branch-free (the compiler
 *   turns the selects into conditional moves), so each element moved costs
 *   about the same whatever the data, and the time follows the number of
 *   moves, n*log2(n) up to a smooth linear term;
 * - a quicksort's work depends on its pivots: with different seeds the
 *   comparison count for 1.04*N over N ranged from 1.015 to 1.09;
 * - qsort() changes with the C library (glibc's was a merge sort calling the
 *   comparator through a pointer before 2.37, an introsort after).
 * The two arrays take turns as source and destination from one level to the
 * next, so no half is copied out before its merge: every element moved is
 * moved by merge_sort itself (a copy-out called memcpy, whose instructions a
 * profile gave to the C library, not to the sort).
 * Between powers of two the cost is a linear function of n (every added
 * element sits at the deepest level), which is close to n*log2(n): from
 * N = 1000000 to 1040000 the merges move 1.0421 times as many elements and
 * the program runs 1.0423 times as many instructions (cachegrind), against
 * 1.0430 for n*ln(n).
 */

/* Sort the n values of src into dst. On entry both hold the same values; src
 * is left in some other order. */
static void merge_sort(uint32_t *dst, uint32_t *src, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2, nr = n - h;
    /* Each half sorted into src, dst serving as the other array. */
    merge_sort(src, dst, h);
    merge_sort(src + h, dst + h, nr);

    const uint32_t *left = src, *right = src + h;
    size_t i = 0, j = 0, k = 0;
    while (i < h && j < nr) {
        uint32_t x = left[i], y = right[j];
        size_t take_right = y < x;
        dst[k++] = take_right ? y : x;
        i += 1 - take_right;
        j += take_right;
    }
    while (i < h)
        dst[k++] = left[i++];
    while (j < nr)
        dst[k++] = right[j++];
}

int main(int argc, char **argv)
{
    size_t n = (size_t)(arg_size(argc, argv, 1, 1000000) * SIZE_PERCENT / 100);
    if (n == 0) {
        fprintf(stderr, "sort: N * %d / 100 is 0\n", SIZE_PERCENT);
        return 2;
    }
    uint32_t *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b);
    uint64_t seed = 0x5EED0001ull, sum_in = 0, xor_in = 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = b[i] = (uint32_t)(splitmix64(&seed) >> 32);
        sum_in += a[i];
        xor_in ^= a[i];
    }

    merge_sort(a, b, n);
    free(b);

    /* Consume the whole result: order and multiset (sum, xor) are checked. */
    int ok = 1;
    uint64_t sum_out = 0, xor_out = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && a[i - 1] > a[i])
            ok = 0;
        sum_out += a[i];
        xor_out ^= a[i];
    }
    ok = ok && sum_in == sum_out && xor_in == xor_out;

    uint64_t h = FNV1A_INIT;
    size_t step = n / 1024 ? n / 1024 : 1;
    for (size_t i = 0; i < n; i += step)
        h = fnv1a_mix(h, a[i]);
    h = fnv1a_mix(h, a[n - 1]);

    printf("sorted_ok=%d\nchecksum=%016llx\nn=%zu\n", ok, (unsigned long long)h, n);
    free(a);
    return ok ? 0 : 1;
}
