package io.flowscope.collector;

/** What feeds the engines: the rings of a directory, or the cluster simulator. Used on the drain thread only. */
public interface Source extends AutoCloseable
{
    /** Hands what is available now to the pipeline; returns the number of input events (0 when idle). */
    int poll(Pipeline out);

    /** One line for humans (and {@code /api/health}). */
    String describe();

    /** Ring figures for the metrics (zero for the simulator). */
    default RingFigures ringFigures()
    {
        return RingFigures.NONE;
    }

    /** True when the source has nothing more to give (a simulation of fixed duration ended). */
    default boolean finished()
    {
        return false;
    }

    @Override
    void close();

    record RingFigures(long records, int attached, long corrupt, long producerDrops, long lag)
    {
        public static final RingFigures NONE = new RingFigures(0, 0, 0, 0, 0);
    }
}
