package io.flowscope.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The constants against the numbers written in RING.md (a second, independent copy of the contract). */
class RingLayoutTest {
    @Test
    void headerOffsetsAreThoseOfRingMd() {
        assertThat(RingLayout.MAGIC).isEqualTo(0x0A31474E49525346L);
        assertThat(new String(new byte[] {'F', 'S', 'R', 'I', 'N', 'G', '1', '\n'}).getBytes())
                .isEqualTo(java.nio.ByteBuffer.allocate(8)
                        .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .putLong(RingLayout.MAGIC)
                        .array());
        assertThat(RingLayout.LAYOUT_VERSION).isEqualTo(0x00010003); // 1.3
        assertThat(new int[] {
                    RingLayout.LAYOUT_VERSION_OFFSET,
                    RingLayout.RECORD_SIZE_OFFSET,
                    RingLayout.CAPACITY_OFFSET,
                    RingLayout.HEADER_SIZE_OFFSET,
                    RingLayout.PRODUCER_PID_OFFSET,
                    RingLayout.ABI_VERSION_OFFSET,
                    RingLayout.NCCL_VERSION_OFFSET,
                    RingLayout.EVENT_MASK_OFFSET,
                    RingLayout.ANCHOR_REALTIME_NS_OFFSET,
                    RingLayout.ANCHOR_MONOTONIC_NS_OFFSET,
                    RingLayout.PRODUCER_STATE_OFFSET,
                    RingLayout.CLOCK_SOURCE_OFFSET,
                    RingLayout.CLOSED_MONOTONIC_NS_OFFSET,
                    RingLayout.STRING_CAPACITY_OFFSET,
                    RingLayout.STRING_COUNT_OFFSET,
                    RingLayout.COMM_CAPACITY_OFFSET,
                    RingLayout.COMM_COUNT_OFFSET,
                    RingLayout.HOSTNAME_OFFSET,
                    RingLayout.PLUGIN_VERSION_OFFSET,
                    RingLayout.LANE_COUNT_OFFSET,
                    RingLayout.LANE_CAPACITY_OFFSET,
                    RingLayout.CONSUMER_HEARTBEAT_NS_OFFSET,
                    RingLayout.CONSUMER_PID_OFFSET,
                    RingLayout.CONSUMER_SKIPPED_STALE_OFFSET,
                    RingLayout.CONSUMER_CORRUPT_OFFSET,
                    RingLayout.DROPPED_FULL_OFFSET,
                    RingLayout.DROPPED_ABANDONED_OFFSET,
                    RingLayout.DROPPED_CONTENDED_OFFSET,
                    RingLayout.INVALID_CALLS_OFFSET,
                    RingLayout.STRINGS_OVERFLOW_OFFSET,
                    RingLayout.COMMS_OVERFLOW_OFFSET,
                    RingLayout.STRING_TABLE_OFFSET,
                    RingLayout.COMM_TABLE_OFFSET,
                    RingLayout.LANE_TABLE_OFFSET,
                    RingLayout.HEADER_SIZE
                })
                .containsExactly(
                        8, 12, 16, 24, 32, 36, 40, 44, 48, 56, 64, 68, 72, 80, 84, 88, 92, 96, 160, 192, 200, 768, 776,
                        784, 792, 896, 904, 912, 920, 928, 936, 4096, 16384, 147456, 262144);
        assertThat(RingLayout.stringEntryOffset(RingLayout.STRING_CAPACITY)).isEqualTo(12288);
        assertThat(RingLayout.commEntryOffset(RingLayout.COMM_CAPACITY)).isEqualTo(147456);
        // 1.2: the GPU UUID table right after the lane table (64 lanes of 256 B), inside the header
        assertThat(RingLayout.GPU_UUID_TABLE_OFFSET)
                .isEqualTo(RingLayout.LANE_TABLE_OFFSET + 64 * 256)
                .isEqualTo(163840);
        assertThat(RingLayout.GPU_UUID_TABLE_OFFSET + RingLayout.GPU_UUID_SIZE * RingLayout.COMM_CAPACITY)
                .isEqualTo(180224)
                .isLessThanOrEqualTo(RingLayout.HEADER_SIZE);
        assertThat(RingLayout.COMM_NAME_OFFSET + RingLayout.COMM_NAME_LENGTH)
                .isEqualTo(RingLayout.COMM_CUDA_DEV_OFFSET)
                .isEqualTo(96);
        assertThat(RingLayout.COMM_CUDA_DEV_OFFSET + 4)
                .isEqualTo(RingLayout.COMM_PCI_BUS_ID_OFFSET)
                .isEqualTo(100);
        assertThat(RingLayout.COMM_PCI_BUS_ID_OFFSET + RingLayout.COMM_PCI_BUS_ID_LENGTH)
                .isEqualTo(RingLayout.COMM_ENTRY_SIZE);
        assertThat(RingLayout.COMM_NAME_OFFSET + RingLayout.COMM_NAME_LENGTH_1_0)
                .isEqualTo(RingLayout.COMM_ENTRY_SIZE);
        assertThat(RingLayout.STRING_NAME_OFFSET + RingLayout.STRING_NAME_MAX).isEqualTo(RingLayout.STRING_ENTRY_SIZE);
    }

    @Test
    void eachLanesTailAndHeadAndTheCountersOwnTheirCacheLines() {
        assertThat(RingLayout.laneTailOffset(0)).isEqualTo(147456);
        assertThat(RingLayout.laneHeadOffset(0)).isEqualTo(147456 + 128);
        assertThat(RingLayout.laneTailOffset(1)).isEqualTo(147456 + 256);
        assertThat(RingLayout.laneHeadOffset(63)).isEqualTo(147456 + 63 * 256 + 128);
        assertThat(RingLayout.laneTailOffset(RingLayout.MAX_LANES)).isEqualTo(163840);
        assertThat(RingLayout.MIN_HEADER_SIZE).isEqualTo(163840);
        assertThat(RingLayout.DROPPED_FULL_OFFSET - RingLayout.CONSUMER_HEARTBEAT_NS_OFFSET)
                .isEqualTo(128);
    }

    @Test
    void slotOfLaneLAndIndexIIsAtHeaderSizePlus64TimesLTimesLaneCapacityPlusI() {
        assertThat(RingLayout.slotOffset(262144, 16, 0, 0)).isEqualTo(262144);
        assertThat(RingLayout.slotOffset(262144, 16, 0, 17)).isEqualTo(262144 + 64);
        assertThat(RingLayout.slotOffset(262144, 16, 3, 5)).isEqualTo(262144 + 64 * (3 * 16 + 5));
        assertThat(RingLayout.slotOffset(262144, 16, 3, 16 + 5)).isEqualTo(262144 + 64 * (3 * 16 + 5));
    }

    @Test
    void recordOffsetsAreThoseOfRingMd() {
        assertThat(new int[] {
                    RecordLayout.SEQ_OFFSET,
                    RecordLayout.KIND_OFFSET,
                    RecordLayout.OP_OFFSET,
                    RecordLayout.THREAD_OFFSET,
                    RecordLayout.CHECKSUM_OFFSET,
                    RecordLayout.TIME_NS_OFFSET,
                    RecordLayout.ID_OFFSET,
                    RecordLayout.PARENT_OFFSET,
                    RecordLayout.PAYLOAD_OFFSET,
                    RecordLayout.RECORD_SIZE
                })
                .containsExactly(0, 8, 9, 10, 12, 16, 24, 32, 40, 64);
        assertThat(new int[] {
                    RecordLayout.PROXY_OP_PID_OFFSET,
                    RecordLayout.PROXY_OP_PEER_OFFSET,
                    RecordLayout.PROXY_OP_N_STEPS_OFFSET,
                    RecordLayout.PROXY_OP_CHUNK_SIZE_OFFSET,
                    RecordLayout.PROXY_OP_CHANNEL_OFFSET,
                    RecordLayout.PROXY_OP_IS_SEND_OFFSET
                })
                .containsExactly(40, 44, 48, 52, 56, 57);
        assertThat(new int[] {
                    RecordLayout.NET_PLUGIN_ID_OFFSET, RecordLayout.NET_TYPE_OFFSET, RecordLayout.NET_IB_OPCODE_OFFSET,
                    RecordLayout.NET_IB_DEVICE_OFFSET, RecordLayout.NET_IB_QP_NUM_OFFSET,
                            RecordLayout.NET_IB_LENGTH_OFFSET,
                    RecordLayout.NET_IB_WR_ID_OFFSET, RecordLayout.NET_SOCK_OP_OFFSET, RecordLayout.NET_SOCK_FD_OFFSET,
                    RecordLayout.NET_SOCK_LENGTH_OFFSET
                })
                .containsExactly(40, 44, 45, 46, 48, 52, 56, 45, 48, 56);
        assertThat(new int[] {
                    RecordLayout.CE_COLL_SEQ_NUMBER_OFFSET,
                    RecordLayout.CE_COLL_COUNT_OFFSET,
                    RecordLayout.CE_COLL_ROOT_OFFSET,
                    RecordLayout.CE_COLL_FUNC_OFFSET,
                    RecordLayout.CE_COLL_DATATYPE_OFFSET,
                    RecordLayout.CE_COLL_SYNC_STRATEGY_OFFSET,
                    RecordLayout.CE_COLL_INTRA_BATCH_SYNC_OFFSET
                })
                .containsExactly(40, 48, 56, 60, 61, 62, 63);
        assertThat(new int[] {RecordLayout.STATE_STATE_OFFSET, RecordLayout.STATE_ARG_OFFSET})
                .containsExactly(40, 48);
    }

    @Test
    void idPutsKindInBits63To60CommIndexIn59To48AndSerialIn47To0() {
        final long id = RecordLayout.id(14, 4095, 0xABCDEF012345L);

        assertThat(id).isEqualTo(0xEFFFABCDEF012345L);
        assertThat(RecordLayout.idKind(id)).isEqualTo(14);
        assertThat(RecordLayout.idCommIndex(id)).isEqualTo(4095);
        assertThat(RecordLayout.idSerial(id)).isEqualTo(0xABCDEF012345L);
    }

    @Test
    void eventKindCodesAreTheNcclEventBitIndexes() {
        assertThat(EventKind.values())
                .extracting(EventKind::label)
                .containsExactly(
                        "Group",
                        "Coll",
                        "P2p",
                        "ProxyOp",
                        "ProxyStep",
                        "ProxyCtrl",
                        "KernelCh",
                        "NetPlugin",
                        "GroupApi",
                        "CollApi",
                        "P2pApi",
                        "KernelLaunch",
                        "CeColl",
                        "CeSync",
                        "CeBatch");
        assertThat(EventKind.of(4)).isEqualTo(EventKind.PROXY_STEP);
        assertThat(EventKind.PROXY_STEP.maskBit()).isEqualTo(16);
        assertThat(EventKind.ofLabel("NetPlugin")).isEqualTo(EventKind.NET_PLUGIN);
        assertThatThrownBy(() -> EventKind.of(15)).hasMessageContaining("unknown event kind 15");
        assertThat(RecordOp.of(1)).isEqualTo(RecordOp.START);
        assertThat(RecordOp.of(3)).isEqualTo(RecordOp.STATE);
        assertThatThrownBy(() -> RecordOp.of(0)).hasMessageContaining("unknown record op 0");
    }

    @Test
    void ncclStateNamesFollowTheNcclEnum() {
        assertThat(NcclState.name(8)).isEqualTo("ProxyStepSendGPUWait");
        assertThat(NcclState.name(9)).isEqualTo("ProxyStepSendWait");
        assertThat(NcclState.name(10)).isEqualTo("ProxyStepRecvWait");
        assertThat(NcclState.name(11)).isEqualTo("ProxyStepRecvFlushWait");
        assertThat(NcclState.name(12)).isEqualTo("ProxyStepRecvGPUWait");
        assertThat(NcclState.name(13)).isEqualTo("ProxyCtrlIdle");
        assertThat(NcclState.name(18)).isEqualTo("ProxyCtrlAppendEnd");
        assertThat(NcclState.name(19)).isEqualTo("ProxyOpInProgress");
        assertThat(NcclState.name(20)).isEqualTo("ProxyStepSendPeerWait");
        assertThat(NcclState.name(21)).isEqualTo("NetPluginUpdate");
        assertThat(NcclState.name(22)).isEqualTo("KernelChStop");
        assertThat(NcclState.name(23)).isEqualTo("GroupStartApiStop");
        assertThat(NcclState.name(24)).isEqualTo("GroupEndApiStart");
        assertThat(NcclState.name(99)).isEqualTo("State99");
    }
}
