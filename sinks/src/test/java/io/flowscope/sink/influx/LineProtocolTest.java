package io.flowscope.sink.influx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class LineProtocolTest {
    private final StringBuilder out = new StringBuilder();
    private final LineProtocol p = new LineProtocol(out);

    @Test
    void aPointHasMeasurementTagsFieldsAndANanosecondTimestamp() {
        p.measurement("flow")
                .tag("host", "h1")
                .tag("rank", "3")
                .field("bytes", 42L)
                .field("bw", 1.5)
                .field("ok", true)
                .field("text", "hi")
                .end(1_700_000_000_000_000_000L);

        assertThat(out).hasToString("flow,host=h1,rank=3 bytes=42i,bw=1.5,ok=t,text=\"hi\" 1700000000000000000");
        assertThat(p.seriesKey()).isEqualTo("flow,host=h1,rank=3");
    }

    @Test
    void commasSpacesAndEqualsSignsAreEscapedInNamesAndTagsAndQuotesInStrings() {
        p.measurement("my meas,x")
                .tag("k", "a b,c=d")
                .field(LineProtocol.escapeKey("f x=1"), "say \"hi\" \\o/")
                .end(1);

        assertThat(out).hasToString("my\\ meas\\,x,k=a\\ b\\,c\\=d f\\ x\\=1=\"say \\\"hi\\\" \\\\o/\" 1");
    }

    @Test
    void nullOrEmptyTagsAndNonFiniteNumbersAreLeftOut() {
        p.measurement("m")
                .tag("a", null)
                .tag("b", "")
                .field("x", Double.NaN)
                .field("y", 2L)
                .end(5);

        assertThat(out).hasToString("m y=2i 5");
    }

    @Test
    void aPreEscapedTagValueIsWrittenAsGivenAndAKeyThatIsNotAnIdentifierIsCaught() {
        p.measurement("m")
                .tagEscaped("host", LineProtocol.escapeTagValue("node 1"))
                .field("v", 1L)
                .end(2);

        assertThat(out).hasToString("m,host=node\\ 1 v=1i 2");
        assertThatThrownBy(() ->
                        new LineProtocol(new StringBuilder()).measurement("m").tag("bad key", "v"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("bad key");
    }

    @Test
    void aPointWithoutFieldsIsRefused() {
        p.measurement("m").tag("a", "1");

        assertThatThrownBy(() -> p.end(1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("m,a=1");
    }
}
