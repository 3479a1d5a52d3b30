package io.flowscope.sink;

/**
 * A snapshot of one sink's counters. Every offered item ends in exactly one of exported, droppedQueueFull,
 * droppedAfterRetries, rejected, or is still queued / in flight; refused items never entered the queue.
 *
 * @param offered             items offered to the processor
 * @param exported            items delivered
 * @param droppedQueueFull    evicted by drop-oldest, timed out by block-with-timeout, or offered after shutdown
 * @param droppedAfterRetries items of batches that still failed after the last attempt
 * @param rejected            items of batches the destination refused for good (4xx)
 * @param retries             attempts after the first, over all batches
 * @param batches             export attempts that succeeded
 * @param queued              items waiting now
 * @param refused             items refused before the queue by the sink itself (series cap, duplicates)
 */
public record SinkCounters(
        long offered,
        long exported,
        long droppedQueueFull,
        long droppedAfterRetries,
        long rejected,
        long retries,
        long batches,
        long queued,
        long refused) {
    public SinkCounters withRefused(final long refusedItems) {
        return new SinkCounters(
                offered,
                exported,
                droppedQueueFull,
                droppedAfterRetries,
                rejected,
                retries,
                batches,
                queued,
                refusedItems);
    }

    /** Items lost for any reason (queue full, retries exhausted, rejected, refused). */
    public long lost() {
        return droppedQueueFull + droppedAfterRetries + rejected + refused;
    }
}
