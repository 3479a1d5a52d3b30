package io.flowscope.sink;

import java.util.List;
import java.util.stream.IntStream;

class InMemoryExporterContractTest extends ExporterContractTest<Integer> {
    private InMemoryExporter<Integer> memory;

    @Override
    protected Exporter<Integer> newExporter() {
        memory = new InMemoryExporter<>();
        return memory;
    }

    @Override
    protected List<Integer> items(final int offset, final int n) {
        return IntStream.range(offset, offset + n).boxed().toList();
    }

    @Override
    protected long delivered() {
        return memory == null ? 0 : memory.received().size();
    }
}
