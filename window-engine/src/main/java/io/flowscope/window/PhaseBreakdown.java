package io.flowscope.window;

/** The phase durations of a stopped step from its state timestamps (see {@link Phase}). */
final class PhaseBreakdown
{
    private PhaseBreakdown()
    {
    }

    /** Fills {@code out[Phase.COUNT]} with each phase's ns, or {@link Phase#ABSENT}. */
    static void of(final long[] t, final int b, final long stopNs, final long[] out)
    {
        for (int p = 0; p < Phase.COUNT; p++)
        {
            out[p] = Phase.ABSENT;
        }
        final long seen = t[b + StepTable.FLAGS];
        if ((seen & StepTable.SEND) != 0)
        {
            if ((seen & StepTable.SEEN_8) != 0)
            {
                if ((seen & StepTable.SEEN_20) != 0)
                {
                    out[Phase.GPU_WAIT] = span(t[b + StepTable.TA], t[b + StepTable.TB]);
                }
                else if ((seen & StepTable.SEEN_9) != 0)
                {
                    out[Phase.GPU_WAIT] = span(t[b + StepTable.TA], t[b + StepTable.TC]);
                }
            }
            if ((seen & StepTable.SEEN_20) != 0 && (seen & StepTable.SEEN_9) != 0)
            {
                out[Phase.PEER_WAIT] = span(t[b + StepTable.TB], t[b + StepTable.TC]);
            }
            if ((seen & StepTable.SEEN_9) != 0)
            {
                out[Phase.NETWORK] = span(t[b + StepTable.TC], stopNs);
            }
        }
        else
        {
            if ((seen & StepTable.SEEN_10) != 0 && (seen & StepTable.SEEN_11) != 0)
            {
                out[Phase.NETWORK] = span(t[b + StepTable.TA], t[b + StepTable.TB]);
            }
            if ((seen & StepTable.SEEN_11) != 0 && (seen & StepTable.SEEN_12) != 0)
            {
                out[Phase.FLUSH] = span(t[b + StepTable.TB], t[b + StepTable.TC]);
            }
            if ((seen & StepTable.SEEN_12) != 0)
            {
                out[Phase.GPU_CONSUME] = span(t[b + StepTable.TC], stopNs);
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
