/* Slots for the figures whose subjects are still being built. Each prints
 * why it has no numbers, never a placeholder value; when the cluster
 * router lands, its figure replaces the stub here with a file of its own. */
#include "bench.h"

int bench_fig_cluster(bench_ctx *ctx)
{
    bench_row_begin(ctx, "cluster", "all figures, 6-node cluster");
    bench_row_text("status", "n/a: cluster support not built yet");
    bench_row_end();
    return 0;
}
