package io.flowscope.collector.journal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Properties;

/**
 * The journal's entry layout, written once here. A journal is a Chronicle Queue; each excerpt (document) is one
 * drain batch. Format 2 (issue #16; every batch written since):
 *
 * <pre>
 *   long  head            wall-clock time (ns since the epoch) when the batch was written, with bit 63 set
 *   long  index           the document's own Chronicle index (cycle and sequence): where it belongs
 *   int   crc32c          CRC32C of the document's other bytes (0..16 and 20..end)
 *   entry*                until the end of the document
 * entry = byte type, then its fields, little-endian, fixed size per type (strings: Chronicle 8-bit UTF)
 * </pre>
 *
 * Format 1 (journals written before) is the same without {@code index} and {@code crc32c}: {@code long wallNs}
 * (bit 63 clear), then the entries. Which documents must be format 2 is said by the journal's format file
 * ({@link #FORMAT_FILE}, {@code journal-format.properties}): {@code checksummedFrom} is the index of the first
 * document written with a checksum (0 for a journal created so). A reader verifies every document that has bit 63
 * set, takes a document without it as format 1 only below {@code checksummedFrom}, and counts one at or above it as
 * damaged (its head was damaged); a journal without the file (written before format 2) is read as format 1,
 * unverified, except for documents with bit 63 set.
 * <p>
 * The entries are the window engine's input calls ({@code TelemetryListener}), already keyed as the ring adapter
 * keys them (host id = FNV-1a of the ring's hostname; keys mix host, producer pid and record id), so a replay
 * through the same engines gives the same summaries and anomalies, whatever fed the live run (rings or the
 * simulator). Ring identity and the anomalies that were published are journaled too, for the record and so a
 * restarted service does not announce an anomaly twice.
 */
public final class JournalFormat {
    /** hostId. */
    public static final byte HOST = 1;
    /** opKey, commHash, rank, peer, channel, isSend (byte), timeNs. */
    public static final byte PROXY_OP_START = 2;
    /** opKey, timeNs. */
    public static final byte PROXY_OP_STOP = 3;
    /** stepKey, opKey, step, timeNs. */
    public static final byte PROXY_STEP_START = 4;
    /** stepKey, state, transSize, timeNs. */
    public static final byte PROXY_STEP_STATE = 5;
    /** stepKey, timeNs. */
    public static final byte PROXY_STEP_STOP = 6;
    /** wrKey, device, qpNum, opcode, length, timeNs. */
    public static final byte QP_START = 7;
    /** wrKey, timeNs. */
    public static final byte QP_STOP = 8;
    /** collKey, commHash, rank, nranks, func, algo, proto, count, datatypeSize, nChannels, seqNumber, timeNs. */
    public static final byte COLL_START = 9;
    /** collKey, timeNs. */
    public static final byte COLL_STOP = 10;
    /** chKey, collKey, channel, pTimerNs, timeNs. */
    public static final byte KERNEL_CH_START = 11;
    /** chKey, pTimerNs, timeNs. */
    public static final byte KERNEL_CH_STOP = 12;
    /** A ring was attached: hostId (long), pid (int), hostname (string), path (string). */
    public static final byte RING_ATTACH = 20;
    /** A ring was detached: pid (int), path (string), reason (string). */
    public static final byte RING_DETACH = 21;
    /** An anomaly was published: id (long), opened (byte 1) or resolved (0), summary (string). */
    public static final byte ANOMALY = 22;
    /** The simulator fed this journal: its scenario spec (string). */
    public static final byte SOURCE = 23;
    /**
     * The live run's input ended here (the service stopped, or a finite source finished) and every host's period
     * was ended early ({@code Pipeline.finish}): a reader does the same, so that it derives the live run's last
     * period too. No fields. A journal written on by a later run goes on after it, with the periods' grid unchanged.
     */
    public static final byte END = 24;
    /**
     * A communicator entry of an attached ring ({@code TelemetryListener#onRingComm}): hostId (long), pid (int),
     * commHash (long), rank (int), nranks (int), cudaDevice (int, -1 unknown), hostname (string), pciBusId (string,
     * empty when unknown). Written before the first input call after the entry appeared in the ring, so a reader
     * knows the rank's process and GPU when it names a culprit, as the live run did.
     */
    public static final byte RING_COMM = 25;
    /**
     * The engine settings the run's engines used (string: {@code key=value} pairs separated by spaces, the
     * configuration's keys, e.g. {@code window.periodMs=1 window.windowSize=8}): written first in each run's journal,
     * so that a replay builds its engines as the live run did (issue #16). Journals written before have none.
     */
    public static final byte ENGINE_SETTINGS = 26;
    /**
     * A ring's clock anchor (ring header {@code anchor_realtime_ns}, {@code anchor_monotonic_ns}: CLOCK_REALTIME and
     * CLOCK_MONOTONIC read back to back at ring creation): hostId (long), pid (int), realtimeNs (long), monotonicNs
     * (long). With it a reader puts the host's event times (CLOCK_MONOTONIC) on the epoch: wall = timeNs −
     * monotonicNs + realtimeNs (the Perfetto export, issue #18). Written for each attached ring, last in the batch of
     * its attachment, so a reader from before the entry type loses nothing of that batch (it counts the entry as
     * damage). Journals written before, and the simulator's, have none.
     */
    public static final byte RING_CLOCK = 27;
    /**
     * The GPU UUID of a communicator rank a {@link #RING_COMM} entry described ({@code TelemetryListener
     * #onRingGpuUuid}; ring layout 1.2): hostId (long), pid (int), commHash (long), rank (int), gpuUuid (string,
     * {@code GPU-1a2b3c4d-...} as nvidia-smi prints it). Only where the ring knows it; last in its batch like
     * {@link #RING_CLOCK}, so a reader from before the entry type loses nothing else of the batch (it counts the
     * entry as damage). A new entry rather than a longer {@link #RING_COMM}: older readers read that one whole.
     */
    public static final byte RING_GPU_UUID = 28;
    /**
     * An idle host's time moved on ({@code TelemetryListener#advanceTo}): hostId (long), timeNs (long). Leaves the
     * host of the entries that follow as it was. Journals written before recorded it as a {@link #PROXY_OP_STOP} of
     * {@link #LEGACY_IDLE_TICK_KEY} on the idle host; a reader hands that on as {@code advanceTo} too.
     */
    public static final byte ADVANCE_TO = 29;

    /**
     * The key of the idle tick that journals and traces written before {@link #ADVANCE_TO} carry as a ProxyOp stop
     * with no start (the simulator's former {@code SimulatedRun.TICK_KEY}): read as {@code advanceTo} of the host
     * the entries are on, never as a record.
     */
    public static final long LEGACY_IDLE_TICK_KEY = 0x7fff_ffff_ffff_fff1L;

    /** Bit 63 of a document's first long: the document is format 2 (index and checksum follow). */
    public static final long FORMAT2 = 1L << 63;
    /** Bytes before the first entry of a format-2 document: head, index, crc32c. */
    public static final int HEADER_BYTES = 8 + 8 + 4;
    /** Bytes before the first entry of a format-1 document: wallNs. */
    public static final int HEADER_BYTES_V1 = 8;
    /** Offset of the crc32c in a format-2 document. */
    public static final int CRC_OFFSET = 16;
    /** The journal's format file, in its directory (see the class comment). */
    public static final String FORMAT_FILE = "journal-format.properties";
    /** A journal without a format file: no document must carry a checksum. */
    public static final long NEVER = Long.MAX_VALUE;

    private JournalFormat() {}

    /**
     * The index of the journal's first checksummed document ({@code checksummedFrom} of its format file), or
     * {@link #NEVER} when it has none; a file that cannot be read or parsed counts as 0 (every document must be
     * checksummed: the strict reading of a journal that has the file at all).
     */
    public static long checksummedFrom(final Path dir) {
        final Path f = dir.resolve(FORMAT_FILE);
        if (!Files.exists(f)) {
            return NEVER;
        }
        try {
            final Properties p = new Properties();
            p.load(new java.io.StringReader(Files.readString(f, StandardCharsets.UTF_8)));
            return Long.parseLong(p.getProperty("checksummedFrom", "0").trim());
        } catch (final IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Writes the format file (atomically: a temporary file moved into place). */
    static void writeFormatFile(final Path dir, final long checksummedFrom) throws IOException {
        final String text =
                "# flowscope journal: format of its batches (collector JournalFormat, docs/trace-format.md)\n"
                        + "# format 2: each batch carries its index and a CRC32C; every batch from index checksummedFrom on has them\n"
                        + "format=2\n"
                        + "checksummedFrom="
                        + checksummedFrom + "\n";
        final Path tmp = dir.resolve(FORMAT_FILE + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(FORMAT_FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
