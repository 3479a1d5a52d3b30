package io.flowscope.window;

/** The phase durations of a stopped step from its state timestamps (see {@link Phase}). */
final class PhaseBreakdown
{
    private PhaseBreakdown()
    {
    }

    /** Fills {@code out[Phase.COUNT]} with each phase's ns, or {@link Phase#ABSENT}. */
    static void of(final StepState s, final long[] out)
    {
        for (int p = 0; p < Phase.COUNT; p++)
        {
            out[p] = Phase.ABSENT;
        }
        if (s.isSend)
        {
            if (s.has(StepState.SEEN_8))
            {
                if (s.has(StepState.SEEN_20))
                {
                    out[Phase.GPU_WAIT] = span(s.t8, s.t20);
                }
                else if (s.has(StepState.SEEN_9))
                {
                    out[Phase.GPU_WAIT] = span(s.t8, s.t9);
                }
            }
            if (s.has(StepState.SEEN_20) && s.has(StepState.SEEN_9))
            {
                out[Phase.PEER_WAIT] = span(s.t20, s.t9);
            }
            if (s.has(StepState.SEEN_9))
            {
                out[Phase.NETWORK] = span(s.t9, s.stopNs);
            }
        }
        else
        {
            if (s.has(StepState.SEEN_10) && s.has(StepState.SEEN_11))
            {
                out[Phase.NETWORK] = span(s.t10, s.t11);
            }
            if (s.has(StepState.SEEN_11) && s.has(StepState.SEEN_12))
            {
                out[Phase.FLUSH] = span(s.t11, s.t12);
            }
            if (s.has(StepState.SEEN_12))
            {
                out[Phase.GPU_CONSUME] = span(s.t12, s.stopNs);
            }
        }
    }

    /** end − start, or ABSENT when negative (records of a step out of their order). */
    private static long span(final long start, final long end)
    {
        final long d = end - start;
        return d >= 0 ? d : Phase.ABSENT;
    }
}
