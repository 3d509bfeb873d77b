/* bfs: breadth-first search from vertex 0 over a deterministic pseudo-random
 * directed graph of N vertices with 8 out-edges each, in CSR layout.
 *
 * usage: bfs [N]       N (vertices) defaults to 250000
 *
 * Prints  checksum=<sum of distances>:<vertices reached>  n=<N>
 */
#include "common.h"

#define DEGREE 8u

int main(int argc, char **argv)
{
    uint32_t n = (uint32_t)arg_size(argc, argv, 1, 250000);
    if ((uint64_t)n * DEGREE > UINT32_MAX) {
        fprintf(stderr, "bfs: N too large\n");
        return 2;
    }
    /* CSR: every vertex has DEGREE edges, so offsets are i * DEGREE; they are
     * still stored so the traversal reads them like any CSR graph. */
    uint32_t *offsets = xmalloc(((size_t)n + 1) * sizeof *offsets);
    uint32_t *edges = xmalloc((size_t)n * DEGREE * sizeof *edges);
    uint64_t seed = 0x5EED0005ull;
    for (uint32_t v = 0; v <= n; v++)
        offsets[v] = v * DEGREE;
    for (size_t e = 0; e < (size_t)n * DEGREE; e++)
        edges[e] = (uint32_t)(((splitmix64(&seed) >> 32) * n) >> 32);

    uint32_t *dist = xmalloc((size_t)n * sizeof *dist);
    uint32_t *queue = xmalloc((size_t)n * sizeof *queue);
    for (uint32_t v = 0; v < n; v++)
        dist[v] = UINT32_MAX;
    size_t head = 0, tail = 0;
    dist[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        uint32_t u = queue[head++];
        uint32_t du = dist[u] + 1;
        for (uint32_t e = offsets[u]; e < offsets[u + 1]; e++) {
            uint32_t w = edges[e];
            if (dist[w] == UINT32_MAX) {
                dist[w] = du;
                queue[tail++] = w;
            }
        }
    }

    uint64_t sum = 0;
    for (uint32_t v = 0; v < n; v++)
        if (dist[v] != UINT32_MAX)
            sum += dist[v];
    printf("checksum=%llu:%zu\nn=%u\n", (unsigned long long)sum, tail, n);
    free(offsets);
    free(edges);
    free(dist);
    free(queue);
    return 0;
}
