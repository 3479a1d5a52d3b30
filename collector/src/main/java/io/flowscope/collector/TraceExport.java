package io.flowscope.collector;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import io.flowscope.anomaly.Anomaly;
import io.flowscope.window.CollectiveSink;
import io.flowscope.window.CollectiveSummary;
import io.flowscope.window.FlowSummary;
import io.flowscope.window.FlowSummarySink;

/**
 * Chrome / Perfetto trace JSON ({@code {"traceEvents": [...]}}, timestamps in µs of event time): one process per
 * communicator with a counter track of send bandwidth per link ("C" events, one per link period), one complete
 * event ("X") per collective on its rank's thread, and one "X" span per anomaly (onset to resolution, or to the end
 * of the trace) in an "anomalies" process with its culprit and evidence as args. Opens in ui.perfetto.dev or
 * chrome://tracing.
 */
public final class TraceExport implements FlowSummarySink, CollectiveSink, AutoCloseable
{
    private static final int ANOMALY_PID = 1;
    private final JsonGenerator json;
    private final OutputStream out;
    private long lastNs = Long.MIN_VALUE;
    private long events;

    public TraceExport(final Path file) throws IOException
    {
        this.out = Files.newOutputStream(file);
        this.json = Json.MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8);
        json.writeStartObject();
        json.writeStringField("displayTimeUnit", "ns");
        json.writeArrayFieldStart("traceEvents");
        meta(ANOMALY_PID, "anomalies");
    }

    public long events()
    {
        return events;
    }

    private void meta(final long pid, final String name) throws IOException
    {
        json.writeStartObject();
        json.writeStringField("ph", "M");
        json.writeStringField("name", "process_name");
        json.writeNumberField("pid", pid);
        json.writeObjectFieldStart("args");
        json.writeStringField("name", name);
        json.writeEndObject();
        json.writeEndObject();
    }

    private static long pidOf(final long commHash)
    {
        return 2 + ((commHash ^ (commHash >>> 32)) & 0x3FFFFFFFL);
    }

    private final java.util.Set<Long> namedPids = new java.util.HashSet<>();

    private void process(final long commHash) throws IOException
    {
        if (namedPids.add(commHash))
        {
            meta(pidOf(commHash), "comm " + FlowRow.hex(commHash));
        }
    }

    @Override
    public void onSummary(final FlowSummary s)
    {
        if (s.kind() != FlowSummary.KIND_LINK || !s.isSend())
        {
            return;
        }
        try
        {
            process(s.commHash());
            lastNs = Math.max(lastNs, s.periodEndNs());
            json.writeStartObject();
            json.writeStringField("ph", "C");
            json.writeStringField("name", "send GB/s rank " + s.rank() + " -> " + s.peer());
            json.writeNumberField("pid", pidOf(s.commHash()));
            json.writeNumberField("ts", s.periodStartNs() / 1000.0);
            json.writeObjectFieldStart("args");
            json.writeNumberField("GBps", FlowRow.finite(s.periodBandwidthBytesPerSecond()) / 1e9);
            json.writeEndObject();
            json.writeEndObject();
            events++;
        }
        catch (final IOException e)
        {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void onCollective(final CollectiveSummary c)
    {
        try
        {
            process(c.commHash());
            final long startNs = c.gpuStartHostKnown() ? c.gpuStartHostNs() : c.hostStartNs();
            lastNs = Math.max(lastNs, startNs + c.durationNs());
            json.writeStartObject();
            json.writeStringField("ph", "X");
            json.writeStringField("name", "collective #" + c.seqNumber());
            json.writeNumberField("pid", pidOf(c.commHash()));
            json.writeNumberField("tid", c.rank());
            json.writeNumberField("ts", startNs / 1000.0);
            json.writeNumberField("dur", Math.max(0, c.durationNs()) / 1000.0);
            json.writeObjectFieldStart("args");
            json.writeNumberField("bytes", c.bytes());
            json.writeNumberField("algBwGBps", FlowRow.finite(c.algBandwidthBytesPerSecond()) / 1e9);
            json.writeBooleanField("complete", c.complete());
            json.writeEndObject();
            json.writeEndObject();
            events++;
        }
        catch (final IOException e)
        {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Writes the anomalies (latest state of each) and closes the file. */
    public void finish(final List<Anomaly> anomalies, final long fromNs, final long toNs) throws IOException
    {
        for (final Anomaly a : anomalies)
        {
            final long end = a.isOpen() ? Math.max(lastNs, a.detectedNs()) : a.resolvedNs();
            if (end < fromNs || a.startNs() > toNs)
            {
                continue;
            }
            json.writeStartObject();
            json.writeStringField("ph", "X");
            json.writeStringField("name", a.kind() + " " + a.summary());
            json.writeNumberField("pid", ANOMALY_PID);
            json.writeNumberField("tid", a.culprit().rank());
            json.writeNumberField("ts", a.startNs() / 1000.0);
            json.writeNumberField("dur", Math.max(0, end - a.startNs()) / 1000.0);
            json.writeObjectField("args", Json.anomaly(a));
            json.writeEndObject();
            events++;
        }
    }

    @Override
    public void close() throws IOException
    {
        json.writeEndArray();
        json.writeEndObject();
        json.close();
        out.close();
    }
}
