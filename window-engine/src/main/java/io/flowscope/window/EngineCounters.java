package io.flowscope.window;

/**
 * The engine's counters of records it could not use and state it dropped, in one place (the engine's getters of
 * the same names read them). Plain fields: the engine is single-threaded, and a counter bump on the hot path is one
 * add to a field of an object that stays in cache.
 */
final class EngineCounters {
    /** A record of what was seen already: a step / WR / op / collective / KernelCh start, state or stop twice. */
    long duplicateRecords;
    /** Completions older than a full window ({@link CompletionWindow#LATE}): not in the window, bytes still counted. */
    long lateCompletions;
    /** Op stops and step starts of ops not live (never started, timed out or evicted). */
    long unknownOpRecords;
    /** Step / WR states and stops of keys neither live nor tombstones. */
    long unknownStepRecords;

    long flowsEvicted;
    long opsTimedOut;
    /** Live steps / WRs dropped uncompleted at the step timeout or with their evicted flow. */
    long stepsTimedOut;

    long droppedFlowTableFull;
    long droppedOpTableFull;
    long droppedStepTableFull;
    /** Events of a host that found the host table full (each event counts). */
    long droppedHostTableFull;

    long droppedAggregateTableFull;
    /** Collectives and KernelCh starts that found their pools full. */
    long droppedCollectiveTableFull;

    long droppedGpuClockTableFull;
    /** Records of unknown collectives or KernelCh (or of unknown parents), expired pending KernelCh included. */
    long unknownCollRecords;

    long collectivesEmitted;
    /** Emitted at the collective timeout, not all channels reported. */
    long collectivesIncomplete;
    /** Dropped: no host stop within the step timeout. */
    long collectivesTimedOut;
    /** KernelCh starts held until their Coll START came, then attached. */
    long pendingKernelChAttached;
}
