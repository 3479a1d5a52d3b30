package io.flowscope.collector;

import io.flowscope.collector.ingest.Source;
import io.flowscope.collector.journal.EventLog;
import io.flowscope.collector.journal.JournalReader;
import io.flowscope.collector.pipeline.Pipeline;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A recorded trace (or journal) as the service's source: its batches handed to the pipeline one per poll, as fast as
 * the drain loop takes them, up to {@code toNs} (event time), then finished. The service then serves what the trace
 * left, as a live service would have at that instant: a real recording on the live page without GPUs.
 */
final class TraceSource implements Source {
    private final EventLog log;
    private final String description;
    private final Map<Long, String> hostNames = new ConcurrentHashMap<>();
    private final JournalReader.Meta meta = new JournalReader.Meta() {
        @Override
        public void onRingAttached(final long hostId, final int pid, final String hostname, final String path) {
            if (hostname != null && !hostname.isEmpty()) {
                hostNames.put(hostId, hostname);
            }
        }
    };
    private volatile boolean finished;

    TraceSource(final Path trace, final long toNs, final String description) {
        this.log = EventLog.open(trace).timeRange(Long.MIN_VALUE, toNs);
        this.description = description;
    }

    @Override
    public int poll(final Pipeline out) {
        if (finished) {
            return 0;
        }
        final long before = out.events();
        if (log.read(out, meta, 1) == 0) {
            finished = true;
        }
        return (int) Math.max(1, out.events() - before);
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public String hostName(final long hostId) {
        return hostNames.get(hostId);
    }

    @Override
    public boolean finished() {
        return finished;
    }

    @Override
    public void close() {
        log.close();
    }
}
