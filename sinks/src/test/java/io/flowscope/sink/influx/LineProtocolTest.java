package io.flowscope.sink.influx;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LineProtocolTest
{
    private final StringBuilder out = new StringBuilder();
    private final LineProtocol p = new LineProtocol(out);

    @Test
    void aPointHasMeasurementTagsFieldsAndANanosecondTimestamp()
    {
        p.measurement("flow").tag("host", "h1").tag("rank", "3").field("bytes", 42L).field("bw", 1.5)
            .field("ok", true).field("text", "hi").end(1_700_000_000_000_000_000L);

        assertThat(out).hasToString("flow,host=h1,rank=3 bytes=42i,bw=1.5,ok=t,text=\"hi\" 1700000000000000000");
        assertThat(p.seriesKey()).isEqualTo("flow,host=h1,rank=3");
    }

    @Test
    void commasSpacesAndEqualsSignsAreEscapedInNamesAndTagsAndQuotesInStrings()
    {
        p.measurement("my meas,x").tag("k=1", "a b,c=d").field("f x", "say \"hi\" \\o/").end(1);

        assertThat(out).hasToString("my\\ meas\\,x,k\\=1=a\\ b\\,c\\=d f\\ x=\"say \\\"hi\\\" \\\\o/\" 1");
    }

    @Test
    void nullOrEmptyTagsAndNonFiniteNumbersAreLeftOut()
    {
        p.measurement("m").tag("a", null).tag("b", "").field("x", Double.NaN).field("y", 2L).end(5);

        assertThat(out).hasToString("m y=2i 5");
    }

    @Test
    void aPointWithoutFieldsIsRefused()
    {
        p.measurement("m").tag("a", "1");

        assertThatThrownBy(() -> p.end(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("m,a=1");
    }
}
