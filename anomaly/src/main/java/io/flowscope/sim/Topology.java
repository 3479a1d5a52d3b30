package io.flowscope.sim;

/**
 * The edges of one collective pattern over a communicator's ranks, as both simulator models schedule them: edge
 * e carries sender {@link #src} → receiver {@link #dst}; {@link #preds} are the edges whose data e forwards, and
 * {@link #succs} the inverse (the edges that forward what e brings). Built once per model and pattern: the ranks
 * do not change.
 */
final class Topology {
    final int[] src;
    final int[] dst;
    final int[][] preds;
    final int[][] succs;

    private Topology(final int edges) {
        src = new int[edges];
        dst = new int[edges];
        preds = new int[edges][];
        succs = new int[edges][];
    }

    int edges() {
        return src.length;
    }

    /** Ring: edge r = r → r + 1; each edge forwards what the edge into its sender brought. */
    static Topology ring(final int ranks) {
        final Topology t = new Topology(ranks);
        for (int r = 0; r < ranks; r++) {
            t.src[r] = r;
            t.dst[r] = (r + 1) % ranks;
            t.preds[r] = new int[] {(r - 1 + ranks) % ranks};
        }
        return t.withSuccessors();
    }

    /** Pairwise exchange: r → r + n/2 (mod n), no dependency between edges. */
    static Topology pairs(final int ranks) {
        final Topology t = new Topology(ranks);
        final int half = Math.max(1, ranks / 2);
        for (int r = 0; r < ranks; r++) {
            t.src[r] = r;
            t.dst[r] = (r + half) % ranks;
            t.preds[r] = new int[0];
        }
        return t.withSuccessors();
    }

    /**
     * Binary tree (parent of r = (r − 1) / 2), pipelined: up edges leaves first (each waits for its children's up
     * edges of the same step), then down edges root first (each waits for the edge into its sender).
     */
    static Topology tree(final int n) {
        final Topology t = new Topology(2 * Math.max(0, n - 1));
        final int[] upEdgeOf = new int[n];
        int e = 0;
        for (int r = n - 1; r >= 1; r--) {
            upEdgeOf[r] = e;
            t.src[e] = r;
            t.dst[e] = (r - 1) / 2;
            e++;
        }
        for (int r = n - 1; r >= 1; r--) {
            final int c1 = 2 * r + 1;
            final int c2 = 2 * r + 2;
            final int[] preds = new int[(c1 < n ? 1 : 0) + (c2 < n ? 1 : 0)];
            int i = 0;
            if (c1 < n) {
                preds[i++] = upEdgeOf[c1];
            }
            if (c2 < n) {
                preds[i] = upEdgeOf[c2];
            }
            t.preds[upEdgeOf[r]] = preds;
        }
        final int[] downEdgeInto = new int[n];
        for (int r = 1; r < n; r++) {
            downEdgeInto[r] = e;
            final int parent = (r - 1) / 2;
            t.src[e] = parent;
            t.dst[e] = r;
            t.preds[e] = parent == 0
                    ? (2 < n ? new int[] {upEdgeOf[1], upEdgeOf[2]} : new int[] {upEdgeOf[1]})
                    : new int[] {downEdgeInto[parent]};
            e++;
        }
        return t.withSuccessors();
    }

    /** The inverse of the predecessor lists, each in increasing edge order. */
    private Topology withSuccessors() {
        final int edges = edges();
        final int[] count = new int[edges];
        for (int e = 0; e < edges; e++) {
            for (final int p : preds[e]) {
                count[p]++;
            }
        }
        for (int e = 0; e < edges; e++) {
            succs[e] = new int[count[e]];
            count[e] = 0;
        }
        for (int e = 0; e < edges; e++) {
            for (final int p : preds[e]) {
                succs[p][count[p]++] = e;
            }
        }
        return this;
    }
}
