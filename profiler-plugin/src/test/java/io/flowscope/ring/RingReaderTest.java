package io.flowscope.ring;

import static io.flowscope.ring.EventKind.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.agrona.concurrent.CachedNanoClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingReaderTest {
    private static final long STALE_NS = TimeUnit.MILLISECONDS.toNanos(100);

    @TempDir
    Path dir;

    private final CachedNanoClock clock = new CachedNanoClock();
    private final TestRingWriter.Draft draft = new TestRingWriter.Draft();
    private final List<AutoCloseable> resources = new ArrayList<>();
    private Path path;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
    }

    private TestRingWriter writer(final int capacity) throws IOException {
        path = dir.resolve("flowscope-1-0.ring");
        final TestRingWriter writer = TestRingWriter.builder(path)
                .capacity(capacity)
                .anchors(1_700_000_000_000_000_000L, 1_000L)
                .create();
        resources.add(writer);
        return writer;
    }

    private TestRingWriter writer(final int lanes, final int laneCapacity) throws IOException {
        path = dir.resolve("flowscope-1-0.ring");
        final TestRingWriter writer = TestRingWriter.builder(path)
                .lanes(lanes)
                .capacity((long) lanes * laneCapacity)
                .anchors(1_700_000_000_000_000_000L, 1_000L)
                .create();
        resources.add(writer);
        return writer;
    }

    private RingReader reader() throws IOException {
        final RingReader reader = RingReader.open(path, clock, STALE_NS);
        resources.add(reader);
        return reader;
    }

    private static List<RingEvent> drain(final RingReader reader) {
        final List<RingEvent> events = new ArrayList<>();
        while (reader.poll(record -> events.add(record.toEvent()), 100) > 0) {
            // keep reading
        }
        return events;
    }

    private static long id(final EventKind kind, final int comm, final long serial) {
        return RecordLayout.id(kind.code(), comm, serial);
    }

    @Test
    void decodesTheStartOfEveryKindWithItsPayloadAndTheCommonFields() throws IOException {
        final TestRingWriter writer = writer(64);
        final int comm = writer.comm(0xABCDEF0123456789L, 2, 8, 1, "world");
        final int allReduce = writer.string("AllReduce");
        final int f32 = writer.string("ncclFloat32");
        final int ring = writer.string("RING");
        final int simple = writer.string("SIMPLE");
        final int send = writer.string("Send");
        final int mc = writer.string("MC");
        long t = 5_000;
        final long[] ids = new long[EventKind.COUNT + 3];
        for (final EventKind kind : EventKind.values()) {
            ids[kind.code()] = id(kind, comm, 100 + kind.code());
        }
        ids[EventKind.COUNT] = id(NET_PLUGIN, comm, 200);
        ids[EventKind.COUNT + 1] = id(NET_PLUGIN, comm, 201);
        ids[EventKind.COUNT + 2] = id(COLL, RingLayout.UNKNOWN_COMM_INDEX, 202);
        writer.append(draft.start(GROUP, 1, t++, ids[0], 0));
        writer.append(draft.start(COLL, 1, t++, ids[1], ids[9])
                .coll(0xFFFF_FFFF_FFFFL, 24, 16, 1L << 40, 3, allReduce, f32, ring, simple));
        writer.append(draft.start(P2P, 1, t++, ids[2], ids[10]).p2p(4096, 5, send, f32, 2));
        writer.append(draft.start(PROXY_OP, 2, t++, ids[3], ids[1]).proxyOp(77777, 6, 12, 131072, 9, true));
        writer.append(draft.start(PROXY_STEP, 2, t++, ids[4], ids[3]).proxyStep(11));
        writer.append(draft.start(PROXY_CTRL, 2, t++, ids[5], 0));
        writer.append(draft.start(KERNEL_CH, 2, t++, ids[6], ids[1]).kernelCh(31, 0xFEDCBA9876543210L));
        writer.append(draft.start(NET_PLUGIN, 3, t++, ids[7], ids[4]).netIb(4, 65535, 0xFFFFFFFEL, 0xFFFFFFFFL, -1L));
        writer.append(draft.start(GROUP_API, 0, t++, ids[8], 0).groupApi(true, 2));
        writer.append(
                draft.start(COLL_API, 0, t++, ids[9], ids[8]).collApi(-1L, 7, allReduce, f32, true, 0x7f00deadbeefL));
        writer.append(draft.start(P2P_API, 0, t++, ids[10], ids[8]).p2pApi(8, send, f32, false, 0x1234));
        writer.append(draft.start(KERNEL_LAUNCH, 0, t++, ids[11], ids[8]).kernelLaunch(0x7f00deadbeefL));
        writer.append(draft.start(CE_COLL, 0, t++, ids[12], ids[9]).ceColl(-2L, 1000, -1, allReduce, f32, mc, true));
        writer.append(draft.start(CE_SYNC, 0, t++, ids[13], ids[12]).ceSync(true, 8));
        writer.append(draft.start(CE_BATCH, 0, t++, ids[14], ids[12]).ceBatch(4, true, 1L << 33));
        writer.append(draft.start(NET_PLUGIN, 3, t++, ids[15], ids[4]).netSocket(1, 42, 1L << 35));
        writer.append(draft.start(NET_PLUGIN, 3, t++, ids[16], ids[4]).netUnknown(0x30001));
        writer.append(draft.start(COLL, 1, t, ids[17], 0).coll(1, 1, 1, 1, 0, allReduce, 0, 0, 0));

        final List<RingEvent> events = drain(reader());

        assertThat(events).hasSize(18);
        assertThat(events).extracting(RingEvent::op).containsOnly(RecordOp.START);
        assertThat(events).extracting(RingEvent::kind).startsWith(EventKind.values());
        final RingEvent group = events.get(0);
        assertThat(group.producerPid()).isEqualTo((int) ProcessHandle.current().pid());
        assertThat(group.host()).isEqualTo("test-host");
        assertThat(group.thread()).isEqualTo(1);
        assertThat(group.timeNs()).isEqualTo(5_000);
        assertThat(group.wallTimeNs()).isEqualTo(1_700_000_000_000_000_000L + 4_000);
        assertThat(group.position()).isZero();
        assertThat(group.id()).isEqualTo(ids[0]);
        assertThat(group.serial()).isEqualTo(100);
        assertThat(group.parent()).isZero();
        assertThat(group.commIndex()).isEqualTo(comm);
        assertThat(group.commHash()).isEqualTo(0xABCDEF0123456789L);
        assertThat(group.rank()).isEqualTo(2);
        assertThat(group.payload()).isEqualTo(RingEvent.Group.INSTANCE);
        assertThat(events.get(1).parent()).isEqualTo(ids[9]);
        assertThat(events.get(1).payload())
                .isEqualTo(new RingEvent.Coll(
                        0xFFFF_FFFF_FFFFL, 24, 16, 1L << 40, 3, "AllReduce", "ncclFloat32", "RING", "SIMPLE"));
        assertThat(events.get(2).payload()).isEqualTo(new RingEvent.P2p(4096, 5, "Send", "ncclFloat32", 2));
        assertThat(events.get(3).payload()).isEqualTo(new RingEvent.ProxyOp(77777, 6, 12, 131072, 9, true));
        assertThat(events.get(4).payload()).isEqualTo(new RingEvent.ProxyStep(11));
        assertThat(events.get(5).payload()).isEqualTo(RingEvent.ProxyCtrl.INSTANCE);
        assertThat(events.get(6).payload()).isEqualTo(new RingEvent.KernelCh(31, 0xFEDCBA9876543210L));
        assertThat(events.get(7).payload())
                .isEqualTo(new RingEvent.NetPlugin(0x10001, 1, 4, 65535, 0xFFFFFFFEL, 0xFFFFFFFFL, -1L, 0, 0));
        assertThat(events.get(8).payload()).isEqualTo(new RingEvent.GroupApi(true, 2));
        assertThat(events.get(9).payload())
                .isEqualTo(new RingEvent.CollApi(-1L, 7, "AllReduce", "ncclFloat32", true, 0x7f00deadbeefL));
        assertThat(events.get(10).payload()).isEqualTo(new RingEvent.P2pApi(8, "Send", "ncclFloat32", false, 0x1234));
        assertThat(events.get(11).payload()).isEqualTo(new RingEvent.KernelLaunch(0x7f00deadbeefL));
        assertThat(events.get(12).payload())
                .isEqualTo(new RingEvent.CeColl(-2L, 1000, -1, "AllReduce", "ncclFloat32", "MC", true));
        assertThat(events.get(13).payload()).isEqualTo(new RingEvent.CeSync(true, 8));
        assertThat(events.get(14).payload()).isEqualTo(new RingEvent.CeBatch(4, true, 1L << 33));
        assertThat(events.get(15).payload())
                .isEqualTo(new RingEvent.NetPlugin(0x20001, 2, 0, 0, 0, 1L << 35, 0, 1, 42));
        assertThat(events.get(16).payload()).isEqualTo(new RingEvent.NetPlugin(0x30001, 0, 0, 0, 0, 0, 0, 0, 0));
        final RingEvent unknownComm = events.get(17);
        assertThat(unknownComm.commIndex()).isEqualTo(RingLayout.UNKNOWN_COMM_INDEX);
        assertThat(unknownComm.commHash()).isZero();
        assertThat(unknownComm.rank()).isEqualTo(-1);
        assertThat(unknownComm.payload()).isEqualTo(new RingEvent.Coll(1, 1, 1, 1, 0, "AllReduce", null, null, null));
    }

    @Test
    void decodesStopAndStateRecordsOfTheirEvent() throws IOException {
        final TestRingWriter writer = writer(16);
        final int comm = writer.comm(7, 0, 2, 1, "");
        final long step = id(PROXY_STEP, comm, 9);
        writer.append(draft.state(PROXY_STEP, 4, 10, step, NcclState.PROXY_STEP_SEND_WAIT, 1L << 20));
        writer.append(draft.state(KERNEL_CH, 4, 11, id(KERNEL_CH, comm, 10), NcclState.KERNEL_CH_STOP, -5L));
        writer.append(draft.stop(PROXY_STEP, 4, 12, step));

        final List<RingEvent> events = drain(reader());

        assertThat(events).extracting(RingEvent::op).containsExactly(RecordOp.STATE, RecordOp.STATE, RecordOp.STOP);
        assertThat(events.get(0).kind()).isEqualTo(PROXY_STEP);
        assertThat(events.get(0).id()).isEqualTo(step);
        assertThat(events.get(0).payload()).isEqualTo(new RingEvent.State(9, 1L << 20));
        assertThat(((RingEvent.State) events.get(0).payload()).stateName()).isEqualTo("ProxyStepSendWait");
        assertThat(events.get(1).payload()).isEqualTo(new RingEvent.State(22, -5L));
        assertThat(events.get(2).payload()).isEqualTo(RingEvent.Stop.INSTANCE);
        assertThat(events.get(2).commHash()).isEqualTo(7);
        assertThat(events.get(2).commIndex()).isEqualTo(comm);
    }

    @Test
    void flyweightAccessorsMatchTheDecodedEvent() throws IOException {
        final TestRingWriter writer = writer(16);
        final int comm = writer.comm(0x55, 1, 4, 1, "tp");
        writer.append(draft.start(PROXY_OP, 3, 99, id(PROXY_OP, comm, 1), 0).proxyOp(1234, 2, 8, 65536, 5, false));
        final List<String> seen = new ArrayList<>();

        reader().poll(
                        r -> seen.add(r.kind().label() + " " + r.op() + " thread=" + r.thread() + " comm="
                                + r.commIndex()
                                + " hash=" + r.commHash() + " rank=" + r.rank() + "/" + r.nranks() + " name="
                                + r.commName()
                                + " pid=" + r.pid() + " peer=" + r.peer() + " nSteps=" + r.nSteps() + " chunk="
                                + r.chunkSize()
                                + " channel=" + r.channel() + " isSend=" + r.isSend() + " serial=" + r.serial()),
                        10);

        assertThat(seen)
                .containsExactly(
                        "ProxyOp START thread=3 comm=0 hash=85 rank=1/4 name=tp pid=1234 peer=2 nSteps=8 chunk=65536 channel=5 "
                                + "isSend=false serial=1");
    }

    @Test
    void readsAcrossTheWrapInProducerOrder() throws IOException {
        final TestRingWriter writer = writer(8);
        final RingReader reader = reader();
        final List<RingEvent> events = new ArrayList<>();
        for (int serial = 1; serial <= 50; serial++) {
            assertThat(writer.append(draft.start(PROXY_STEP, 0, serial, id(PROXY_STEP, 0, serial), 0)
                            .proxyStep(serial)))
                    .isEqualTo(serial - 1);
            if (serial % 3 == 0) {
                events.addAll(drain(reader));
            }
        }
        events.addAll(drain(reader));

        assertThat(events)
                .extracting(RingEvent::serial)
                .containsExactlyElementsOf(
                        java.util.stream.LongStream.rangeClosed(1, 50).boxed().toList());
        assertThat(events)
                .extracting(RingEvent::position)
                .containsExactlyElementsOf(
                        java.util.stream.LongStream.range(0, 50).boxed().toList());
        assertThat(reader.head(0)).isEqualTo(50);
        assertThat(writer.head()).isEqualTo(50);
        assertThat(reader.isDrained()).isTrue();
        assertThat(reader.corrupt()).isZero();
    }

    @Test
    void aFullRingDropsFurtherEventsAndCountsThemWhileKeepingTheFirstCapacityRecords() throws IOException {
        final TestRingWriter writer = writer(16);
        for (int serial = 1; serial <= 40; serial++) {
            writer.append(draft.start(PROXY_STEP, 0, serial, id(PROXY_STEP, 0, serial), 0));
        }

        final RingReader reader = reader();
        final List<RingEvent> events = drain(reader);

        assertThat(events)
                .extracting(RingEvent::serial)
                .containsExactlyElementsOf(
                        java.util.stream.LongStream.rangeClosed(1, 16).boxed().toList());
        assertThat(reader.header().droppedFull()).isEqualTo(24);
        assertThat(writer.append(draft.start(PROXY_STEP, 0, 41, id(PROXY_STEP, 0, 41), 0)))
                .isEqualTo(16);
    }

    @Test
    void pollDeliversAtMostLimitRecords() throws IOException {
        final TestRingWriter writer = writer(16);
        for (int serial = 1; serial <= 10; serial++) {
            writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0));
        }
        final RingReader reader = reader();
        final int[] count = new int[1];

        assertThat(reader.poll(r -> count[0]++, 4)).isEqualTo(4);
        assertThat(count[0]).isEqualTo(4);
        assertThat(reader.head(0)).isEqualTo(4);
        assertThat(reader.lag()).isEqualTo(6);
        assertThat(reader.poll(r -> count[0]++, 100)).isEqualTo(6);
        assertThat(reader.poll(r -> count[0]++, 100)).isZero();
    }

    @Test
    void skipsAndCountsARecordWhoseChecksumDoesNotMatch() throws IOException {
        final TestRingWriter writer = writer(16);
        for (int serial = 1; serial <= 3; serial++) {
            writer.append(draft.start(PROXY_STEP, 0, serial, id(PROXY_STEP, 0, serial), 0)
                    .proxyStep(serial));
        }
        final int slot = writer.slotOffset(1);
        writer.buffer().putInt(slot + RecordLayout.PROXY_STEP_STEP_OFFSET, 999);

        final RingReader reader = reader();
        final List<RingEvent> events = drain(reader);

        assertThat(events).extracting(RingEvent::serial).containsExactly(1L, 3L);
        assertThat(reader.corruptChecksum()).isEqualTo(1);
        assertThat(reader.header().consumerCorrupt()).isEqualTo(1);
        assertThat(writer.buffer().getLong(slot))
                .as("slot released for the next lap")
                .isEqualTo(1 + 16);
    }

    @Test
    void skipsATornRecordWhoseSecondHalfWasOverwrittenByALateWriter() throws IOException {
        final TestRingWriter writer = writer(16);
        writer.append(draft.start(COLL, 0, 1, id(COLL, 0, 1), 0).coll(1, 2, 3, 4, 5, 0, 0, 0, 0));
        // A stalled producer of an earlier lap writes the second half of its own record over the slot.
        final TestRingWriter.Draft late = new TestRingWriter.Draft()
                .start(PROXY_OP, 7, 0, id(PROXY_OP, 0, 77), 0)
                .proxyOp(1, 1, 1, 1, 1, true);
        final int slot = writer.slotOffset(0);
        for (int offset = 40; offset < 64; offset += 8) {
            writer.buffer().putLong(slot + offset, late.buffer.getLong(offset));
        }

        final RingReader reader = reader();

        assertThat(drain(reader)).isEmpty();
        assertThat(reader.corruptChecksum()).isEqualTo(1);
        assertThat(reader.head(0)).isEqualTo(1);
    }

    @Test
    void skipsARecordLeftFromAnEarlierLapBecauseItsChecksumNamesAnotherPosition() throws IOException {
        final TestRingWriter writer = writer(8);
        final long pos = writer.tryClaim();
        writer.write(pos + 8, draft.start(GROUP, 0, 1, id(GROUP, 0, 1), 0));
        writer.publish(pos);

        final RingReader reader = reader();

        assertThat(drain(reader)).isEmpty();
        assertThat(reader.corruptChecksum()).isEqualTo(1);
    }

    @Test
    void rejectsAChecksumValidRecordWithAKindOrOpOutsideLayoutOne() throws IOException {
        final TestRingWriter writer = writer(16);
        writer.append(draft.raw(15, 1, 0, 1, 1, 0));
        writer.append(draft.raw(1, 4, 0, 1, 1, 0));
        writer.append(draft.raw(1, 0, 0, 1, 1, 0));
        writer.append(draft.start(GROUP, 0, 1, id(GROUP, 0, 1), 0));

        final RingReader reader = reader();

        assertThat(drain(reader)).extracting(RingEvent::kind).containsExactly(GROUP);
        assertThat(reader.corruptChecksum()).isEqualTo(3);
    }

    @Test
    void waitsForAClaimedSlotUntilTheStaleTimeoutThenSkipsItAndTheLatePublishFails() throws IOException {
        final TestRingWriter writer = writer(16);
        final long stalled = writer.tryClaim();
        writer.append(draft.start(GROUP, 0, 2, id(GROUP, 0, 2), 0));
        final RingReader reader = reader();
        clock.update(1_000_000);

        assertThat(drain(reader)).as("first sight of the claim").isEmpty();
        clock.advance(STALE_NS - 1);
        assertThat(drain(reader)).as("not yet stale").isEmpty();
        assertThat(reader.head(0)).isEqualTo(stalled);
        clock.advance(1);
        assertThat(drain(reader))
                .as("a timeout passed: tail read, claimed; one more timeout from now")
                .isEmpty();
        clock.advance(STALE_NS - 1);
        assertThat(drain(reader)).isEmpty();
        assertThat(reader.skippedStale()).isZero();
        clock.advance(1);
        final List<RingEvent> events = drain(reader);

        assertThat(events).extracting(RingEvent::serial).containsExactly(2L);
        assertThat(reader.skippedStale()).isEqualTo(1);
        assertThat(reader.header().consumerSkippedStale()).isEqualTo(1);
        writer.write(stalled, draft.start(GROUP, 0, 1, id(GROUP, 0, 1), 0));
        assertThat(writer.publish(stalled)).isFalse();
        assertThat(reader.header().droppedAbandoned()).isEqualTo(1);
        assertThat(drain(reader)).isEmpty();
        assertThat(reader.corrupt()).isZero();
    }

    @Test
    void freesTheSlotOfALateOwnedPublicationALapLaterWithoutCountingCorruption() throws IOException {
        final TestRingWriter writer = writer(16);
        final long stalled = writer.tryClaim();
        final RingReader reader = reader();
        drain(reader);
        clock.advance(STALE_NS);
        drain(reader);
        clock.advance(STALE_NS);
        drain(reader);
        assertThat(reader.skippedStale()).isEqualTo(1);

        // the owner wakes up and publishes by a store over the consumer's mark
        writer.write(0, stalled, draft.start(GROUP, 0, 1, id(GROUP, 0, 1), 0));
        writer.publishOwned(0, stalled);
        final long lap = writer.laneCapacity();
        for (long serial = 2; serial < lap + 1; serial++) {
            assertThat(writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0)))
                    .isEqualTo(serial - 1);
        }
        assertThat(writer.append(draft.start(GROUP, 0, 99, id(GROUP, 0, 99), 0)))
                .as("the skipped slot's next lap still holds the late publication: the lane looks full")
                .isEqualTo(-1);
        assertThat(reader.latePublications()).isZero();

        assertThat(drain(reader))
                .extracting(RingEvent::serial)
                .as("the late record is not read")
                .containsExactlyElementsOf(
                        java.util.stream.LongStream.range(2, lap + 1).boxed().toList());
        assertThat(reader.latePublications())
                .as("reaching the slot a lap later frees it")
                .isEqualTo(1);
        assertThat(writer.append(draft.start(GROUP, 0, 100, id(GROUP, 0, 100), 0)))
                .isEqualTo(lap);
        assertThat(drain(reader)).extracting(RingEvent::serial).containsExactly(100L);
        assertThat(reader.corrupt()).isZero();
        assertThat(reader.skippedStale()).isEqualTo(1);
    }

    @Test
    void deliversAClaimedSlotPublishedBeforeTheStaleTimeoutInOrder() throws IOException {
        final TestRingWriter writer = writer(16);
        final long slow = writer.tryClaim();
        writer.append(draft.start(GROUP, 0, 2, id(GROUP, 0, 2), 0));
        final RingReader reader = reader();
        assertThat(drain(reader)).isEmpty();
        clock.advance(STALE_NS / 2);
        assertThat(drain(reader)).isEmpty();

        writer.write(slow, draft.start(GROUP, 0, 1, id(GROUP, 0, 1), 0));
        assertThat(writer.publish(slow)).isTrue();

        assertThat(drain(reader)).extracting(RingEvent::serial).containsExactly(1L, 2L);
        assertThat(reader.skippedStale()).isZero();
    }

    @Test
    void staleTimeoutRestartsForEachStuckPosition() throws IOException {
        final TestRingWriter writer = writer(16);
        writer.tryClaim();
        writer.tryClaim();
        final RingReader reader = reader();
        drain(reader);
        clock.advance(STALE_NS);
        drain(reader);
        clock.advance(STALE_NS);
        drain(reader);
        assertThat(reader.head(0)).isEqualTo(1);

        drain(reader);
        clock.advance(STALE_NS);
        drain(reader);
        clock.advance(STALE_NS - 1);
        drain(reader);
        assertThat(reader.head(0)).as("the second claim has its own timeouts").isEqualTo(1);
        clock.advance(1);
        drain(reader);
        assertThat(reader.head(0)).isEqualTo(2);
        assertThat(reader.skippedStale()).isEqualTo(2);
        assertThat(reader.isDrained()).isTrue();
    }

    @Test
    void aConsumerKilledWhileDeliveringIsFollowedByANewReaderAtHeadWithNoLoss() throws IOException {
        final TestRingWriter writer = writer(16);
        for (int serial = 1; serial <= 10; serial++) {
            writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0));
        }
        final RingReader first = RingReader.open(path, clock, STALE_NS);
        final List<Long> received = new ArrayList<>();
        assertThatThrownBy(() -> first.poll(
                        record -> {
                            if (record.serial() == 5) {
                                throw new IllegalStateException("killed");
                            }
                            received.add(record.serial());
                        },
                        100))
                .hasMessage("killed");
        first.close();
        for (int serial = 11; serial <= 20; serial++) {
            writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0));
        }

        final RingReader second = reader();
        drain(second).forEach(e -> received.add(e.serial()));

        assertThat(received)
                .containsExactlyElementsOf(
                        java.util.stream.LongStream.rangeClosed(1, 20).boxed().toList());
        assertThat(second.corrupt()).isZero();
    }

    @Test
    void aNewReaderSkipsSlotsConsumedBeforeAKillLostTheHeadStoreEvenWhenTheNextLapIsPublished() throws IOException {
        final TestRingWriter writer = writer(8);
        final RingReader first = RingReader.open(path, clock, STALE_NS);
        for (int serial = 1; serial <= 6; serial++) {
            writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0));
        }
        final List<Long> received = new ArrayList<>();
        drain(first).forEach(e -> received.add(e.serial()));
        first.close();
        // The kill happened after the sequences were released but before head moved past position 2.
        writer.buffer().putLong(RingLayout.laneHeadOffset(0), 2);
        // Producers meanwhile lapped: positions 6..12 reuse slots 6, 7, 0 .. 4 (positions 8, 9 publish into 0, 1).
        for (int serial = 7; serial <= 12; serial++) {
            assertThat(writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0)))
                    .isEqualTo(serial - 1);
        }
        // Position 10 claimed, not yet published: slot 2 has seq 10 = 2 + capacity.
        final long claimed = writer.tryClaim();
        assertThat(claimed).isEqualTo(12);

        final RingReader second = reader();
        drain(second).forEach(e -> received.add(e.serial()));

        assertThat(received)
                .containsExactlyElementsOf(
                        java.util.stream.LongStream.rangeClosed(1, 12).boxed().toList());
        assertThat(second.corrupt()).isZero();
        assertThat(second.recoveredConsumed()).isEqualTo(4);
        assertThat(second.head(0)).isEqualTo(12);
    }

    @Test
    void repairsACorruptSequenceBelowTheTailBySkippingTheSlot() throws IOException {
        final TestRingWriter writer = writer(16);
        for (int serial = 1; serial <= 3; serial++) {
            writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0));
        }
        writer.buffer().putLong(writer.slotOffset(1), 0xDEADBEEFL);

        final RingReader reader = reader();
        final List<RingEvent> events = drain(reader);

        assertThat(events).extracting(RingEvent::serial).containsExactly(1L, 3L);
        assertThat(reader.corruptSequence()).isEqualTo(1);
        assertThat(writer.buffer().getLong(writer.slotOffset(1))).isEqualTo(1 + 16);
    }

    @Test
    void repairsACorruptSequenceAtTheTailByFreeingTheSlotForTheProducer() throws IOException {
        final TestRingWriter writer = writer(16);
        writer.append(draft.start(GROUP, 0, 1, id(GROUP, 0, 1), 0));
        writer.buffer().putLong(writer.slotOffset(1), -77);
        final RingReader reader = reader();
        assertThat(drain(reader)).hasSize(1);
        assertThat(reader.corruptSequence()).isEqualTo(1);

        assertThat(writer.append(draft.start(GROUP, 0, 2, id(GROUP, 0, 2), 0))).isEqualTo(1);
        assertThat(drain(reader)).extracting(RingEvent::serial).containsExactly(2L);
    }

    @Test
    void refusesASecondReaderOfTheSameRing() throws IOException {
        writer(16);
        reader();

        assertThatThrownBy(() -> RingReader.open(path))
                .isInstanceOf(RingLockedException.class)
                .hasMessageContaining("already being read by another consumer");
    }

    @Test
    void aClosedReaderLetsTheNextOneAttach() throws IOException {
        writer(16);
        RingReader.open(path).close();

        assertThat(reader().isClosed()).isFalse();
    }

    @Test
    void publishesHeartbeatAndConsumerPidWhileAttachedAndClearsThePidOnClose() throws IOException {
        final TestRingWriter writer = writer(16);
        clock.update(123_456_789L);
        final RingReader reader = RingReader.open(path, clock, STALE_NS);
        assertThat(writer.buffer().getInt(RingLayout.CONSUMER_PID_OFFSET))
                .isEqualTo((int) ProcessHandle.current().pid());
        clock.update(223_456_789L);

        reader.poll(r -> {}, 1);

        assertThat(writer.buffer().getLong(RingLayout.CONSUMER_HEARTBEAT_NS_OFFSET))
                .isEqualTo(223_456_789L);
        reader.close();
        assertThat(writer.buffer().getInt(RingLayout.CONSUMER_PID_OFFSET)).isZero();
    }

    @Test
    void neverThrowsOnRandomBytesInTheSlotsAndTables() throws IOException {
        for (long seed = 1; seed <= 20; seed++) {
            final Path fuzzed = dir.resolve("fuzz-" + seed + ".ring");
            final SplittableRandom random = new SplittableRandom(seed);
            try (TestRingWriter writer = TestRingWriter.create(fuzzed, 64)) {
                writer.comm(1, 0, 1, 1, "c");
                for (int i = 0; i < 40; i++) {
                    writer.append(draft.raw(
                                    random.nextInt(16),
                                    random.nextInt(4),
                                    random.nextInt(65536),
                                    random.nextLong(),
                                    random.nextLong(),
                                    random.nextLong())
                            .putLong(40, random.nextLong())
                            .putLong(48, random.nextLong())
                            .putLong(56, random.nextLong()));
                }
                final byte[] noise = new byte[64 * 64];
                for (int i = 0; i < noise.length; i++) {
                    noise[i] = (byte) random.nextInt(256);
                }
                final int from = writer.slotOffset(random.nextInt(64));
                final int length = random.nextInt(noise.length - (from - RingLayout.HEADER_SIZE) + 1);
                writer.buffer().putBytes(from, noise, 0, Math.min(length, RingLayout.HEADER_SIZE + 64 * 64 - from));
                writer.buffer().putBytes(RingLayout.STRING_TABLE_OFFSET, noise, 0, 2048);
                writer.buffer().putBytes(RingLayout.COMM_TABLE_OFFSET, noise, 0, 4096);
                writer.buffer().putLong(RingLayout.laneTailOffset(0), random.nextLong(0, 200));

                try (RingReader reader = RingReader.open(fuzzed, clock, STALE_NS)) {
                    for (int round = 0; round < 10; round++) {
                        reader.poll(
                                record -> {
                                    record.toEvent();
                                    record.toString();
                                },
                                1000);
                        clock.advance(STALE_NS);
                    }
                    assertThat(reader.head(0) - reader.header().tail(0)).isLessThanOrEqualTo(64);
                }
            }
        }
    }

    /**
     * Starts {@code threads} producers, each appending ProxyStep records with serials 1..perThread (step =
     * serial) as thread index {@code t}, once {@code start} opens.
     */
    private List<Thread> startProducers(
            final TestRingWriter writer, final int threads, final int perThread, final CountDownLatch start) {
        final List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            final int thread = t;
            producers.add(new Thread(() -> {
                final TestRingWriter.Draft d = new TestRingWriter.Draft();
                try {
                    start.await();
                } catch (final InterruptedException ex) {
                    return;
                }
                for (int serial = 1; serial <= perThread; serial++) {
                    writer.append(d.start(PROXY_STEP, thread, serial, id(PROXY_STEP, 0, serial), 0)
                            .proxyStep(serial));
                }
            }));
        }
        producers.forEach(Thread::start);
        return producers;
    }

    /** Polls while any producer runs, then drains what is left. */
    private static void drainWhileProducing(
            final RingReader reader, final List<Thread> producers, final RecordHandler handler) {
        while (producers.stream().anyMatch(Thread::isAlive)) {
            reader.poll(handler, 1000);
        }
        while (reader.poll(handler, 1000) > 0) {
            // drain
        }
    }

    @Test
    void concurrentProducersLoseNothingThatWasNotCountedAsDroppedAndKeepEachThreadsOrder() throws Exception {
        final TestRingWriter writer = writer(256);
        final int threads = 4;
        final int perThread = 50_000;
        final RingReader reader = reader();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> producers = startProducers(writer, threads, perThread, start);
        final long[] lastSerial = new long[threads];
        final long[] received = {0};
        final AtomicBoolean outOfOrder = new AtomicBoolean();
        final RecordHandler handler = record -> {
            final int thread = record.thread();
            if (record.serial() <= lastSerial[thread] || record.step() != record.serial()) {
                outOfOrder.set(true);
            }
            lastSerial[thread] = record.serial();
            received[0]++;
        };
        start.countDown();
        drainWhileProducing(reader, producers, handler);

        final RingHeader header = reader.header();
        assertThat(outOfOrder).isFalse();
        assertThat(reader.corrupt()).isZero();
        assertThat(received[0] + header.droppedFull() + header.droppedContended())
                .isEqualTo((long) threads * perThread);
        assertThat(reader.isDrained()).isTrue();
    }

    @Test
    void pollAllocatesNothingPerRecord() throws IOException {
        final TestRingWriter writer = writer(4096);
        final int comm = writer.comm(1, 0, 2, 1, "c");
        final int func = writer.string("AllReduce");
        final RingReader reader = reader();
        final long[] sum = {0};
        final RecordHandler handler = r -> {
            sum[0] += r.timeNs()
                    + r.id()
                    + r.commHash()
                    + r.rank()
                    + r.kindCode()
                    + r.opCode()
                    + r.step()
                    + (r.func() == null ? 0 : 1);
        };
        final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // The quietest of the last rounds: a poll that allocates per record allocates in every round
        // (4000 records a round), while a JIT compilation landing in one round must not fail the test.
        long quietest = Long.MAX_VALUE;
        for (int round = 0; round < 60; round++) {
            for (int i = 0; i < 4000; i++) {
                writer.append(
                        i % 2 == 0
                                ? draft.start(PROXY_STEP, 0, i, id(PROXY_STEP, comm, i + 1), 0)
                                        .proxyStep(i)
                                : draft.start(COLL, 0, i, id(COLL, comm, i + 1), 0)
                                        .coll(i, 1, 1, 1, 0, func, func, func, func));
            }
            final long before = threads.getCurrentThreadAllocatedBytes();
            while (reader.poll(handler, 1024) > 0) {
                // drain
            }
            final long after = threads.getCurrentThreadAllocatedBytes();
            if (round >= 40) {
                quietest = Math.min(quietest, after - before);
            }
        }

        assertThat(sum[0]).isNotZero();
        assertThat(reader.delivered()).isEqualTo(60 * 4000);
        assertThat(quietest)
                .as("bytes allocated while draining 4000 records (quietest of 20 rounds)")
                .isLessThan(256);
    }

    // Lanes.

    @Test
    void recordsOfOneThreadStayInOrderWithinTheirLaneWhileLanesInterleave() throws IOException {
        final TestRingWriter writer = writer(4, 16);
        final int threads = 8;
        for (int serial = 1; serial <= 6; serial++) {
            for (int thread = 0; thread < threads; thread++) {
                assertThat(writer.append(
                                draft.start(PROXY_STEP, thread, serial, id(PROXY_STEP, 0, thread * 100 + serial), 0)
                                        .proxyStep(serial)))
                        .isEqualTo((serial - 1) * 2L + thread / 4);
            }
        }
        final RingReader reader = reader();
        final List<int[]> seen = new ArrayList<>();
        final RecordHandler handler = r -> seen.add(new int[] {r.thread(), r.step(), r.lane(), (int) r.position()});

        assertThat(reader.poll(handler, 4)).isEqualTo(4);
        assertThat(seen)
                .extracting(e -> e[2])
                .as("one record of each lane first")
                .containsExactlyInAnyOrder(0, 1, 2, 3);
        while (reader.poll(handler, 5) > 0) {
            // the rest, in small polls
        }

        assertThat(seen).hasSize(threads * 6);
        final int[] lastStep = new int[threads];
        final long[] nextPosition = new long[4];
        for (final int[] e : seen) {
            assertThat(e[2]).as("lane of thread %d", e[0]).isEqualTo(e[0] % 4);
            assertThat(e[1]).as("thread %d in order", e[0]).isEqualTo(lastStep[e[0]] + 1);
            lastStep[e[0]] = e[1];
            assertThat(e[3]).as("position in lane %d", e[2]).isEqualTo(nextPosition[e[2]]++);
        }
        assertThat(nextPosition).containsOnly(12);
        assertThat(seen.subList(4, 10))
                .extracting(e -> e[2])
                .as("polls of 5: shares of 2, the next starts where one ended")
                .containsExactly(0, 0, 1, 1, 2, 3);
        assertThat(reader.head(0)).isEqualTo(12);
        assertThat(writer.head(3)).isEqualTo(12);
        assertThat(reader.isDrained()).isTrue();
        assertThat(reader.lag()).isZero();
        assertThat(reader.corrupt()).isZero();
    }

    @Test
    void pollSharesItsLimitFairlyBetweenLanesAndRotatesTheStartLane() throws IOException {
        final TestRingWriter writer = writer(2, 64);
        for (int serial = 1; serial <= 40; serial++) {
            writer.append(draft.start(GROUP, 0, serial, id(GROUP, 0, serial), 0));
            writer.append(draft.start(GROUP, 1, serial, id(GROUP, 0, 1000 + serial), 0));
        }
        final RingReader reader = reader();
        final int[] perLane = new int[2];
        final List<Integer> order = new ArrayList<>();
        final RecordHandler handler = r -> {
            perLane[r.lane()]++;
            order.add(r.lane());
        };

        assertThat(reader.poll(handler, 10)).isEqualTo(10);
        assertThat(perLane).containsExactly(5, 5);
        assertThat(reader.lag(0)).isEqualTo(35);
        assertThat(reader.lag()).isEqualTo(70);
        order.clear();
        for (int i = 0; i < 4; i++) {
            reader.poll(handler, 1);
        }
        assertThat(order).as("limit 1: one lane after the other").containsExactly(0, 1, 0, 1);
        assertThat(reader.poll(handler, 1000)).isEqualTo(66);
        assertThat(perLane).containsExactly(40, 40);
    }

    @Test
    void aStaleClaimInOneLaneDoesNotBlockTheOtherLanes() throws IOException {
        final TestRingWriter writer = writer(4, 16);
        final long stalled = writer.tryClaim(1);
        for (int thread = 0; thread < 4; thread++) {
            writer.append(draft.start(GROUP, thread, thread, id(GROUP, 0, thread + 1), 0));
            writer.append(draft.start(GROUP, thread + 4, thread, id(GROUP, 0, thread + 11), 0));
        }
        final RingReader reader = reader();
        clock.update(5_000_000);

        assertThat(drain(reader)).extracting(RingEvent::serial).containsExactlyInAnyOrder(1L, 11L, 3L, 13L, 4L, 14L);
        assertThat(reader.head(1)).isEqualTo(stalled);
        assertThat(reader.lag(1)).isEqualTo(3);
        writer.append(draft.start(GROUP, 2, 9, id(GROUP, 0, 21), 0));
        clock.advance(STALE_NS - 1);
        assertThat(drain(reader))
                .as("other lanes keep flowing")
                .extracting(RingEvent::serial)
                .containsExactly(21L);
        assertThat(reader.skippedStale()).isZero();
        clock.advance(1);
        assertThat(drain(reader)).as("claim seen: one more timeout").isEmpty();
        writer.append(draft.start(GROUP, 3, 9, id(GROUP, 0, 22), 0));
        clock.advance(STALE_NS / 2);
        assertThat(drain(reader)).extracting(RingEvent::serial).containsExactly(22L);
        clock.advance(STALE_NS / 2);

        assertThat(drain(reader)).extracting(RingEvent::serial).containsExactly(2L, 12L);
        assertThat(reader.skippedStale()).isEqualTo(1);
        assertThat(reader.isDrained()).isTrue();
        assertThat(reader.corrupt()).isZero();
    }

    @Test
    void tailIsNotReadWhileTheSlotAtHeadIsUnpublishedUntilTheStaleTimeoutPassed() throws IOException {
        final TestRingWriter writer = writer(2, 16);
        writer.append(draft.start(GROUP, 1, 1, id(GROUP, 0, 1), 0));
        final RingReader reader = reader();
        clock.update(1_000_000);
        assertThat(drain(reader)).hasSize(1);
        // Lane 0 at position 0: slot unpublished (seq == 0); its tail now holds garbage far beyond the ring.
        writer.buffer().putLong(RingLayout.laneTailOffset(0), 0x7000_0000_0000_0000L);
        for (int i = 0; i < 10; i++) {
            clock.advance((STALE_NS - 1) / 10);
            assertThat(drain(reader)).isEmpty();
        }

        assertThat(reader.skippedStale())
                .as("nothing skipped before the timeout")
                .isZero();
        assertThat(reader.corrupt()).isZero();
        assertThat(reader.head(0)).isZero();
        assertThat(writer.buffer().getLong(writer.slotOffset(0, 0))).isZero();
        clock.advance(10);
        assertThat(drain(reader)).isEmpty();
        assertThat(reader.skippedStale())
                .as("after the timeout: tail > pos, seen claimed")
                .isZero();
        clock.advance(STALE_NS);
        assertThat(drain(reader)).isEmpty();
        assertThat(reader.skippedStale()).as("claimed a timeout ago: skipped").isEqualTo(1);
        assertThat(reader.head(0)).isEqualTo(1);
        assertThat(writer.buffer().getLong(writer.slotOffset(0, 0))).isEqualTo(16);
        assertThat(reader.corrupt()).isZero();
    }

    @Test
    void aClaimMadeJustBeforeTheTimerExpiresGetsAFullTimeoutAndAnEmptyLaneRestartsTheTimer() throws IOException {
        final TestRingWriter writer = writer(1, 16);
        final RingReader reader = reader();
        clock.update(1_000_000);
        assertThat(drain(reader)).as("empty lane: the timer starts").isEmpty();
        clock.advance(STALE_NS);
        assertThat(drain(reader))
                .as("timeout passed, tail read: empty, the timer restarts")
                .isEmpty();
        clock.advance(STALE_NS - 1);
        final long claimed = writer.tryClaim();
        assertThat(drain(reader)).isEmpty();
        clock.advance(1);
        assertThat(drain(reader))
                .as("claimed 1 ns ago: seen claimed, not skipped")
                .isEmpty();
        assertThat(reader.skippedStale()).isZero();
        clock.advance(STALE_NS - 1);
        assertThat(drain(reader)).isEmpty();
        assertThat(reader.skippedStale()).isZero();
        clock.advance(1);

        assertThat(drain(reader)).isEmpty();
        assertThat(reader.skippedStale()).isEqualTo(1);
        assertThat(reader.head(0)).isEqualTo(claimed + 1);
        assertThat(writer.publish(claimed)).isFalse();
    }

    @Test
    void eachLaneFillsAndDropsOnItsOwnWithExactCounts() throws IOException {
        final TestRingWriter writer = writer(4, 8);
        final int[] perThread = {3, 8, 20, 9};
        long dropped = 0;
        for (int thread = 0; thread < 4; thread++) {
            for (int serial = 1; serial <= perThread[thread]; serial++) {
                final long pos =
                        writer.append(draft.start(GROUP, thread, serial, id(GROUP, 0, thread * 100 + serial), 0));
                assertThat(pos).isEqualTo(serial <= 8 ? serial - 1 : -1);
                dropped += pos < 0 ? 1 : 0;
            }
        }
        final RingReader reader = reader();
        final long[][] serials = new long[4][];
        final List<RingEvent> events = drain(reader);

        for (int lane = 0; lane < 4; lane++) {
            final int l = lane;
            serials[lane] = events.stream()
                    .filter(e -> e.lane() == l)
                    .mapToLong(RingEvent::serial)
                    .toArray();
            assertThat(serials[lane])
                    .as("lane %d keeps its first records", lane)
                    .containsExactly(java.util.stream.LongStream.rangeClosed(1, Math.min(8, perThread[lane]))
                            .map(s -> l * 100 + s)
                            .toArray());
        }
        assertThat(dropped).isEqualTo(12 + 1);
        assertThat(reader.header().droppedFull()).isEqualTo(dropped);
        assertThat(events).hasSize(3 + 8 + 8 + 8);
        assertThat(writer.append(draft.start(GROUP, 2, 21, id(GROUP, 0, 221), 0)))
                .as("lane 2 has room again")
                .isEqualTo(8);
        assertThat(writer.append(draft.start(GROUP, 0, 4, id(GROUP, 0, 4), 0))).isEqualTo(3);
    }

    @Test
    void aNewReaderContinuesEachLaneAtItsOwnHead() throws IOException {
        final TestRingWriter writer = writer(2, 16);
        for (int serial = 1; serial <= 6; serial++) {
            writer.append(draft.start(GROUP, serial % 2, serial, id(GROUP, 0, serial), 0));
        }
        final List<Long> received = new ArrayList<>();
        try (RingReader first = RingReader.open(path, clock, STALE_NS)) {
            first.poll(r -> received.add(r.serial()), 3);
            assertThat(first.head(0) + first.head(1)).isEqualTo(3);
            assertThat(writer.head(0)).isEqualTo(first.head(0));
            assertThat(writer.head(1)).isEqualTo(first.head(1));
        }
        for (int serial = 7; serial <= 10; serial++) {
            writer.append(draft.start(GROUP, serial % 2, serial, id(GROUP, 0, serial), 0));
        }

        final RingReader second = reader();
        drain(second).forEach(e -> received.add(e.serial()));

        assertThat(received)
                .containsExactlyInAnyOrderElementsOf(
                        java.util.stream.LongStream.rangeClosed(1, 10).boxed().toList());
        assertThat(second.head(0)).isEqualTo(5);
        assertThat(second.head(1)).isEqualTo(5);
        assertThat(second.recoveredConsumed()).isZero();
    }

    @Test
    void concurrentProducersOnEightLanesLoseNothingAndKeepEachThreadsOrderAndEachLanesPositions() throws Exception {
        final TestRingWriter writer = writer(8, 64);
        final int threads = 12;
        final int perThread = 30_000;
        final RingReader reader = reader();
        final CountDownLatch start = new CountDownLatch(1);
        final List<Thread> producers = startProducers(writer, threads, perThread, start);
        final long[] lastSerial = new long[threads];
        final long[] nextPosition = new long[8];
        final long[] received = {0};
        final AtomicBoolean wrong = new AtomicBoolean();
        final RecordHandler handler = record -> {
            final int thread = record.thread();
            if (record.serial() <= lastSerial[thread]
                    || record.step() != record.serial()
                    || record.lane() != thread % 8
                    || record.position() != nextPosition[record.lane()]++) {
                wrong.set(true);
            }
            lastSerial[thread] = record.serial();
            received[0]++;
        };
        start.countDown();
        drainWhileProducing(reader, producers, handler);

        final RingHeader header = reader.header();
        assertThat(wrong).isFalse();
        assertThat(reader.corrupt()).isZero();
        assertThat(reader.skippedStale()).isZero();
        assertThat(received[0] + header.droppedFull() + header.droppedContended())
                .isEqualTo((long) threads * perThread);
        assertThat(reader.isDrained()).isTrue();
        for (int lane = 0; lane < 8; lane++) {
            assertThat(reader.head(lane)).isEqualTo(writer.tail(lane)).isEqualTo(nextPosition[lane]);
        }
    }

    @Test
    void pollOfEightLanesAllocatesNothingPerRecordOrPerEmptyPoll() throws IOException {
        final TestRingWriter writer = writer(8, 1024);
        final int comm = writer.comm(1, 0, 2, 1, "c");
        final RingReader reader = reader();
        final long[] sum = {0};
        final RecordHandler handler = r -> sum[0] += r.timeNs() + r.id() + r.commHash() + r.lane() + r.position();
        final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // The quietest of the last rounds: a poll that allocates per record allocates in every round
        // (4000 records a round), while a JIT compilation landing in one round must not fail the test.
        long quietest = Long.MAX_VALUE;
        for (int round = 0; round < 60; round++) {
            for (int i = 0; i < 4000; i++) {
                writer.append(draft.start(PROXY_STEP, i & 15, i, id(PROXY_STEP, comm, i + 1), 0)
                        .proxyStep(i));
            }
            final long before = threads.getCurrentThreadAllocatedBytes();
            while (reader.poll(handler, 256) > 0) {
                // drain
            }
            for (int i = 0; i < 100; i++) {
                reader.poll(handler, 256);
            }
            final long after = threads.getCurrentThreadAllocatedBytes();
            if (round >= 40) {
                quietest = Math.min(quietest, after - before);
            }
        }

        assertThat(sum[0]).isNotZero();
        assertThat(reader.delivered()).isEqualTo(60 * 4000);
        assertThat(quietest)
                .as("bytes allocated while draining 4000 records and 100 empty polls over 8 lanes "
                        + "(quietest of 20 rounds)")
                .isLessThan(256);
    }
}
