package io.flowscope.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flowscope.api.anomaly.AnomalyKind;
import org.junit.jupiter.api.Test;

class ScenarioTest {
    @Test
    void theCompactSpecSetsShapeSizesAndFaults() {
        final Scenario s = Scenario.parse(
                "nodes=4,gpus=8,channels=4,size=8M,seed=1,fault=slow-link,rank=3,peer=4,fraction=0.5,at=200ms");

        assertThat(s.ranks()).isEqualTo(32);
        assertThat(s.channels()).isEqualTo(4);
        assertThat(s.sizeBytes()).isEqualTo(8L << 20);
        assertThat(s.faults()).containsExactly(new Fault(AnomalyKind.SLOW_LINK, 3, 4, -1, -1, 0.5, 200_000_000L, -1));
    }

    @Test
    void aSpecReadsBackFromItsOwnPrintout() {
        final Scenario s = Scenario.parse("name=x,nodes=3,gpus=2,algo=tree,size=1M,duration=50ms,bursty=true,"
                + "fault=congestion,node=1,device=0,fraction=0.4,at=10ms,for=20ms,fault=hang,rank=2,at=30ms");

        assertThat(Scenario.parse(s.toSpec()).toSpec()).isEqualTo(s.toSpec());
        assertThat(s.faults()).hasSize(2);
    }

    @Test
    void theNcclModelsKeysAndTheLateRankFaultsReadBackAndBadValuesAreRejected() {
        final Scenario s = Scenario.parse(Scenario.REAL_SOCKET_PAIR + ",size=4M,fault=late-cpu,rank=0,delay=1ms,"
                + "at=10ms,fault=slow-gpu,rank=1,fraction=1,delay=2ms,at=20ms,for=5ms");

        assertThat(s.model()).isEqualTo(Scenario.MODEL_NCCL);
        assertThat(s.socket()).isTrue();
        assertThat(s.ahead()).isEqualTo(10);
        assertThat(s.syncEvery()).isEqualTo(10);
        assertThat(s.netNoise()).isEqualTo(0.15);
        assertThat(s.faults())
                .containsExactly(
                        new Fault(AnomalyKind.SLOW_NODE, 0, -1, -1, -1, 1.0, 10_000_000L, -1, 1_000_000L, true),
                        new Fault(
                                AnomalyKind.SLOW_NODE, 1, -1, -1, -1, 1.0, 20_000_000L, 5_000_000L, 2_000_000L, false));
        assertThat(Scenario.parse(s.toSpec()).toSpec()).isEqualTo(s.toSpec());
        assertThat(Scenario.parse("nodes=2").model()).isEqualTo(Scenario.MODEL_CLASSIC);
        assertThatThrownBy(() -> Scenario.parse("model=magic")).hasMessageContaining("model");
        assertThatThrownBy(() -> Scenario.parse("transport=carrier-pigeon")).hasMessageContaining("transport");
        assertThatThrownBy(() -> Scenario.parse("ahead=0")).hasMessageContaining("ahead");
        assertThatThrownBy(() -> Scenario.parse("model=nccl,fault=late-cpu,rank=1"))
                .hasMessageContaining("delay");
        assertThatThrownBy(() -> Scenario.parse("fault=late-cpu,rank=1,delay=1ms"))
                .hasMessageContaining("model=nccl");
    }

    @Test
    void aHostPrefixNamesTheHostsAndGivesThemOtherIdsSoTwoClustersDoNotMix() {
        final ClusterSimulator plain = new ClusterSimulator(Scenario.parse("nodes=2,gpus=2"));
        final ClusterSimulator other = new ClusterSimulator(Scenario.parse("nodes=2,gpus=2,hosts=rack-b"));

        assertThat(plain.hostName(1)).isEqualTo("sim-node-1");
        assertThat(other.hostName(1)).isEqualTo("rack-b-node-1");
        assertThat(other.hostId(0)).isNotIn(plain.hostId(0), plain.hostId(1));
        assertThat(other.hostId(1)).isNotIn(plain.hostId(0), plain.hostId(1), other.hostId(0));
        assertThat(Scenario.parse(other.scenario().toSpec()).hosts()).isEqualTo("rack-b");
        assertThatThrownBy(() -> Scenario.parse("hosts=a b")).hasMessageContaining("hosts");
    }

    @Test
    void unknownKeysAndBadFaultsAreRejectedWithTheOffendingText() {
        assertThatThrownBy(() -> Scenario.parse("nodes=2,colour=blue")).hasMessageContaining("colour");
        assertThatThrownBy(() -> Scenario.parse("nodes=2,gpus=2,fault=hang,rank=9"))
                .hasMessageContaining("rank");
        assertThatThrownBy(() -> Scenario.parse("fault=melt")).hasMessageContaining("melt");
    }

    @Test
    void everyBuiltInScenarioParses() {
        assertThat(Scenario.builtInNames()).isNotEmpty();
        for (final String name : Scenario.builtInNames()) {
            assertThat(Scenario.builtIn(name).name()).isEqualTo(name);
        }
    }
}
