/* edit_distance: Levenshtein distance between two deterministic
 * pseudo-random strings of length N over a 4-letter alphabet, by the
 * O(N^2) two-row dynamic programme.
 *
 * usage: edit_distance [N]     N defaults to 5000
 *
 * Prints  checksum=<distance>  n=<N>
 */
#include "common.h"

static size_t levenshtein(const char *s, const char *t, size_t n, size_t m)
{
    size_t *prev = xmalloc((m + 1) * sizeof *prev);
    size_t *cur = xmalloc((m + 1) * sizeof *cur);
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        char c = s[i - 1];
        for (size_t j = 1; j <= m; j++) {
            size_t sub = prev[j - 1] + (c != t[j - 1]);
            size_t del = prev[j] + 1;
            size_t ins = cur[j - 1] + 1;
            size_t best = sub < del ? sub : del;
            cur[j] = best < ins ? best : ins;
        }
        size_t *tmp = prev;
        prev = cur;
        cur = tmp;
    }
    size_t d = prev[m];
    free(prev);
    free(cur);
    return d;
}

int main(int argc, char **argv)
{
    size_t n = (size_t)arg_size(argc, argv, 1, 5000);
    static const char alphabet[4] = {'A', 'C', 'G', 'T'};
    char *s = xmalloc(n), *t = xmalloc(n);
    uint64_t seed = 0x5EED0003ull;
    for (size_t i = 0; i < n; i++) {
        s[i] = alphabet[splitmix64(&seed) & 3];
        t[i] = alphabet[splitmix64(&seed) & 3];
    }
    size_t d = levenshtein(s, t, n, n);
    printf("checksum=%zu\nn=%zu\n", d, n);
    free(s);
    free(t);
    return 0;
}
