package io.flowscope.collector.journal;

/**
 * The journal's entry layout, written once here. A journal is a Chronicle Queue; each excerpt (document) is one
 * drain batch:
 *
 * <pre>
 *   long  wallNs          wall-clock time (ns since the epoch) when the batch was written
 *   entry*                until the end of the document
 * entry = byte type, then its fields, little-endian, fixed size per type (strings: Chronicle 8-bit UTF)
 * </pre>
 *
 * The entries are the window engine's input calls ({@code TelemetryListener}), already keyed as the ring adapter
 * keys them (host id = FNV-1a of the ring's hostname; keys mix host, producer pid and record id), so a replay
 * through the same engines gives the same summaries and anomalies, whatever fed the live run (rings or the
 * simulator). Ring identity and the anomalies that were published are journaled too, for the record and so a
 * restarted service does not announce an anomaly twice.
 */
public final class JournalFormat
{
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

    private JournalFormat()
    {
    }
}
