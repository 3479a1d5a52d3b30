package io.flowscope.collector.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.config.FleetConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The argument of {@link Aggregator}'s javadoc without a broker: a partition's state written as a checkpoint at
 * offset C, restored into a fresh state by the next owner, with the tail (C, O) replayed and its events discarded,
 * judges the records from O on exactly as the owner that never stopped: the events of the three stretches
 * (before C, the tail, after O) are those of the uninterrupted run, none twice, none missing.
 */
class AggregatorCheckpointTest {
    private static final FleetConfig FLEET =
            CollectorConfig.load(null, Map.of(), Map.of()).fleet();
    private static final List<byte[]> RECORDS = new ArrayList<>();

    /** One simulated run with a slow link, as an agent publishes it in the binary encoding. */
    @BeforeAll
    static void records() {
        RECORDS.addAll(SimulatedAgent.run(
                        "nodes=2,gpus=4,channels=2,duration=400ms,fault=slow-link,rank=3,peer=4,fraction=0.4,at=100ms,for=150ms")
                .all());
    }

    private static Aggregator aggregator() {
        return new Aggregator(FLEET, "checkpoint-test", e -> {});
    }

    private static List<byte[]> range(final int from, final int to) {
        return RECORDS.subList(from, to);
    }

    @Test
    void aTakeoverFromCheckpointAndTailWritesWhatAnUninterruptedOwnerWrites() {
        final List<String> reference = aggregator().applyOffline(RECORDS);
        assertThat(reference).as("events of the uninterrupted run").hasSizeGreaterThanOrEqualTo(2);
        final int n = RECORDS.size();
        // checkpoints and commits before, between and after the events
        for (final int[] cut : new int[][] {{1, 2}, {n / 5, n / 3}, {n / 3, n / 3 + 1}, {n / 2, n - 10}, {n - 1, n}}) {
            final int c = cut[0];
            final int o = cut[1];
            final Aggregator dead = aggregator();
            final Aggregator.PartitionState owner = dead.newState(true);
            final List<String> written = new ArrayList<>(dead.applyOffline(owner, range(0, c), 0));
            final byte[] checkpoint = owner.checkpoint();
            written.addAll(dead.applyOffline(owner, range(c, o), c)); // the tail, committed with its events

            final Aggregator next = aggregator();
            final Aggregator.PartitionState taken = next.newState(false);
            taken.restore(checkpoint);
            assertThat(taken.checkpointOffset).isEqualTo(c - 1);
            next.applyOffline(taken, range(c, o), c); // replayed: the dead owner wrote these events
            taken.live = true;
            written.addAll(next.applyOffline(taken, range(o, n), o));

            assertThat(written)
                    .as("checkpoint at %d, committed up to %d", c - 1, o)
                    .isEqualTo(reference);
            assertThat(taken.anomalies.keySet())
                    .as("open at the checkpoint, or seen in the tail or after it")
                    .containsAll(taken.stage.openAnomalies().stream()
                            .map(x -> x.id())
                            .toList());
        }
    }

    @Test
    void theAgentsMarksSurviveTheCheckpointSoAResendIsStillDropped() {
        final Aggregator a = aggregator();
        final Aggregator.PartitionState owner = a.newState(true);
        a.applyOffline(owner, range(0, 100), 0);
        final Aggregator next = aggregator();
        final Aggregator.PartitionState taken = next.newState(true);
        taken.restore(owner.checkpoint());
        assertThat(taken.lastSeq).isEqualTo(owner.lastSeq).isNotEmpty();
        assertThat(taken.hostNames).isEqualTo(owner.hostNames).containsValue("node-a");
        next.applyOffline(taken, List.of(RECORDS.get(50)), 100); // an agent's resend after the takeover
        assertThat(next.duplicates()).isEqualTo(1);
    }

    @Test
    void aDamagedCheckpointIsOneClearError() {
        final Aggregator a = aggregator();
        final Aggregator.PartitionState owner = a.newState(true);
        a.applyOffline(owner, range(0, 10), 0);
        final byte[] good = owner.checkpoint();
        assertThatThrownBy(() -> aggregator().newState(false).restore(Arrays.copyOf(good, good.length / 2)))
                .isInstanceOf(IllegalArgumentException.class);
        final byte[] foreign = good.clone();
        foreign[7] = 9; // version 9
        assertThatThrownBy(() -> aggregator().newState(false).restore(foreign))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("version 9");
    }
}
