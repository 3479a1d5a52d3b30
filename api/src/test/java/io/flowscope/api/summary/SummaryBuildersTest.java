package io.flowscope.api.summary;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The summary types' public builders set every field a getter reads (found by reflection, so a field added
 * without its setter fails here), {@code into} fills the reused record itself, and {@code copyFrom} copies all.
 */
class SummaryBuildersTest {
    /** The no-argument public getters of {@code type} (its fields), each with a distinct value to set. */
    private static List<Method> getters(final Class<?> type) {
        final List<Method> out = new ArrayList<>();
        for (final Method m : type.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())
                    && !Modifier.isStatic(m.getModifiers())
                    && m.getParameterCount() == 0
                    && m.getReturnType() != void.class
                    && !m.getName().equals("toString")
                    && !m.getName().equals("hashCode")) {
                out.add(m);
            }
        }
        return out;
    }

    private static Object value(final Class<?> type, final int i) {
        if (type == long.class) {
            return 1_000L + i;
        }
        if (type == int.class) {
            return 100 + i;
        }
        if (type == double.class) {
            return 0.5 + i;
        }
        return true;
    }

    /** Sets every getter's field through the builder method of the same name; returns what each must read. */
    private static Object[] setAll(final Object builder, final List<Method> getters) throws Exception {
        final Object[] expected = new Object[getters.size()];
        for (int i = 0; i < getters.size(); i++) {
            final Method g = getters.get(i);
            final Method setter = builder.getClass().getMethod(g.getName(), g.getReturnType());
            expected[i] = value(g.getReturnType(), i);
            assertThat(setter.invoke(builder, expected[i])).isSameAs(builder);
        }
        return expected;
    }

    private static void assertReads(final Object record, final List<Method> getters, final Object[] expected)
            throws Exception {
        for (int i = 0; i < getters.size(); i++) {
            assertThat(getters.get(i).invoke(record))
                    .as(getters.get(i).getName())
                    .isEqualTo(expected[i]);
        }
    }

    @Test
    void shouldSetEveryFieldOfAFlowSummaryAndCopyItWhole() throws Exception {
        final List<Method> getters = getters(FlowSummary.class);
        assertThat(getters).hasSizeGreaterThanOrEqualTo(25);
        final FlowSummary.Builder b = FlowSummary.builder();
        final Object[] expected = setAll(b, getters);
        for (int p = 0; p < Phase.COUNT; p++) {
            b.phase(p, 10 + p, 20 + p, 30 + p).phasePercentiles(p, 40 + p, 50 + p, 60 + p);
        }
        final FlowSummary s = b.build();
        assertReads(s, getters, expected);

        final FlowSummary copy = new FlowSummary();
        copy.copyFrom(s);
        assertReads(copy, getters, expected);
        for (int p = 0; p < Phase.COUNT; p++) {
            assertThat(new long[] {
                        copy.phaseCount(p),
                        copy.phaseSumNs(p),
                        copy.phaseMaxNs(p),
                        copy.phaseP50Ns(p),
                        copy.phaseP90Ns(p),
                        copy.phaseP99Ns(p)
                    })
                    .containsExactly(10 + p, 20 + p, 30 + p, 40 + p, 50 + p, 60 + p);
        }
        FlowSummary.into(copy).clearPhases();
        assertThat(copy.phaseCount(Phase.NETWORK)).isZero();
        assertThat(copy.phaseP99Ns(Phase.NETWORK)).isEqualTo(Phase.ABSENT);
    }

    @Test
    void shouldFillTheReusedRecordItselfThroughInto() throws Exception {
        final FlowSummary reused = new FlowSummary();
        final FlowSummary.Builder b = FlowSummary.into(reused);
        assertThat(b.bytes(7).build()).isSameAs(reused);
        assertThat(reused.bytes()).isEqualTo(7);
        final CollectiveSummary collective = new CollectiveSummary();
        assertThat(CollectiveSummary.into(collective).durationNs(9).build()).isSameAs(collective);
        assertThat(collective.durationNs()).isEqualTo(9);
        assertThat(FlowSummary.builder().build())
                .isNotSameAs(FlowSummary.builder().build());
    }

    @Test
    void shouldSetEveryFieldOfACollectiveSummaryAndCopyItWhole() throws Exception {
        final List<Method> getters = getters(CollectiveSummary.class);
        assertThat(getters).hasSizeGreaterThanOrEqualTo(25);
        final CollectiveSummary.Builder b = CollectiveSummary.builder();
        final Object[] expected = setAll(b, getters);
        final CollectiveSummary s = b.build();
        assertReads(s, getters, expected);
        final CollectiveSummary copy = new CollectiveSummary();
        copy.copyFrom(s);
        assertReads(copy, getters, expected);
    }
}
