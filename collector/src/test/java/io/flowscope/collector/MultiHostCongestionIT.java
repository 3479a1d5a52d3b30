package io.flowscope.collector;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #15, acceptance 3 ("Congestion") in the driver-style runs of acceptance 5: a congested NIC, several ranks'
 * sends through it slowing together with work queued, named CONGESTION with its host and device, and nothing else
 * (no SLOW_LINK on its links). The runs are {@link MultiHostHarnessIT}'s ({@code fs_rank} with IB QP events, one
 * process per host). The 8-rank run is usually named by the period rule (work queued, NIC latency up, ~50 ms), the
 * 4-rank run by the wait-state rule (two senders' links of one host slow together, its NIC slowed: ~175 ms).
 */
class MultiHostCongestionIT {
    @TempDir
    Path dir;

    private final MultiHostHarnessIT harness = new MultiHostHarnessIT();

    @BeforeAll
    static void findProducerAndNamespaces() throws Exception {
        MultiHostHarnessIT.findProducerAndNamespaces();
    }

    @BeforeEach
    void shareTempDir() {
        harness.dir = dir;
    }

    @AfterEach
    void removeRings() throws IOException {
        harness.removeRings();
    }

    /** 8 ranks on 2 hosts of 4 (2 NICs each), 1 channel: NIC 1 of node-0 congested (links 2 → 3, 3 → 4). */
    @Test
    void eightRanksCongestedNicNamed() throws Exception {
        final MultiHostHarnessIT.Result r = harness.eightRankCongestion(1);
        r.assertDrainedWhole();
        r.assertExactly();
    }

    /** 4 ranks on 2 hosts of 2 (1 NIC each), 2 channels: NIC 0 of node-1 congested (links 2 → 3, 3 → 0). */
    @Test
    void fourRanksCongestedNicNamed() throws Exception {
        final MultiHostHarnessIT.Result r = harness.fourRankCongestion(2);
        r.assertDrainedWhole();
        r.assertExactly();
    }
}
