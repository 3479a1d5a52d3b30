package io.flowscope.collector.fleet;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalySink;
import io.flowscope.api.anomaly.AnomalyStage;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.fleet.wire.FleetWireDecoder;
import io.flowscope.collector.fleet.wire.FleetWireEncoder;
import io.flowscope.collector.fleet.wire.WireSchema;
import io.flowscope.collector.pipeline.AnomalyStages;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The service's anomaly stage with a checkpoint for the tests of the aggregator's checkpoint + tail mechanics, until
 * (and independently of) the engine's own: its checkpoint is the log of every call it took (summaries in the
 * fleet's binary encoding, advances as host and time), and {@link #restore} replays the log into a fresh stage with
 * the events silenced. The stage is deterministic, so the restored one judges what follows as this one would. A
 * checkpoint holds the whole history (this is a test stage); the aggregator's tail after it is what the tests count.
 */
public final class ReplayLogStage implements AnomalyStage {
    private static final byte FLOW = 1;
    private static final byte COLLECTIVE = 2;
    private static final byte ADVANCE = 3;

    private final AnomalyStage real;
    private final FleetWireEncoder encoder = new FleetWireEncoder("replay-log");
    private final ByteArrayOutputStream log = new ByteArrayOutputStream();
    private final DataOutputStream out = new DataOutputStream(log);
    private boolean silent;

    public ReplayLogStage(final AnomalySink sink) {
        this.real = AnomalyStages.create(new AnomalySink() {
            @Override
            public void onOpened(final Anomaly a) {
                if (!silent) {
                    sink.onOpened(a);
                }
            }

            @Override
            public void onUpdated(final Anomaly a) {
                if (!silent) {
                    sink.onUpdated(a);
                }
            }

            @Override
            public void onResolved(final Anomaly a) {
                if (!silent) {
                    sink.onResolved(a);
                }
            }
        });
    }

    @Override
    public void onSummary(final FlowSummary s) {
        write(FLOW, encoder.flow(0, s, null));
        real.onSummary(s);
    }

    @Override
    public void onCollective(final CollectiveSummary s) {
        write(COLLECTIVE, encoder.collective(0, s));
        real.onCollective(s);
    }

    @Override
    public void advanceTo(final long hostId, final long timeNs) {
        try {
            out.writeByte(ADVANCE);
            out.writeLong(hostId);
            out.writeLong(timeNs);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        real.advanceTo(hostId, timeNs);
    }

    @Override
    public List<Anomaly> openAnomalies() {
        return real.openAnomalies();
    }

    @Override
    public byte[] checkpoint() {
        return log.toByteArray();
    }

    @Override
    public void restore(final byte[] checkpoint) {
        final FleetWireDecoder decoder = new FleetWireDecoder();
        final FlowSummary flow = new FlowSummary();
        final CollectiveSummary coll = new CollectiveSummary();
        silent = true;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(checkpoint))) {
            while (in.available() > 0) {
                final byte tag = in.readByte();
                if (tag == ADVANCE) {
                    advanceTo(in.readLong(), in.readLong());
                    continue;
                }
                final byte[] record = new byte[in.readInt()];
                in.readFully(record);
                final int type = decoder.wrap(record);
                if (tag == FLOW && type == WireSchema.FLOW_TEMPLATE_ID) {
                    decoder.flowInto(flow);
                    onSummary(flow);
                } else if (tag == COLLECTIVE && type == WireSchema.COLLECTIVE_TEMPLATE_ID) {
                    decoder.collectiveInto(coll);
                    onCollective(coll);
                } else {
                    throw new IllegalArgumentException("replay log: tag " + tag + " with record type " + type);
                }
            }
        } catch (final IOException e) {
            throw new IllegalArgumentException("replay log truncated: " + e, e);
        } finally {
            silent = false;
        }
    }

    private void write(final byte tag, final byte[] record) {
        try {
            out.writeByte(tag);
            out.writeInt(record.length);
            out.write(record);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
