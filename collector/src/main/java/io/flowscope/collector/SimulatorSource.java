package io.flowscope.collector;

/**
 * The cluster simulator as a source (issue #4's {@code io.flowscope.sim.ClusterSimulator}): its event time follows
 * the wall clock times {@code simulate.speed}. Wired in when the simulator lands.
 */
public final class SimulatorSource implements Source
{
    private final String spec;

    public SimulatorSource(final String spec, final double speed, final long durationSeconds)
    {
        throw new IllegalStateException("the cluster simulator is not part of this build yet (issue #4)");
    }

    @Override
    public int poll(final Pipeline out)
    {
        return 0;
    }

    @Override
    public String describe()
    {
        return "simulator " + spec;
    }

    @Override
    public void close()
    {
    }
}
