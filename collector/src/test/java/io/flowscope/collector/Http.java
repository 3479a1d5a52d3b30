package io.flowscope.collector;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.collector.pipeline.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A real HTTP client for the tests. */
final class Http {
    private static final HttpClient CLIENT =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private Http() {}

    static HttpResponse<String> get(final String url) throws Exception {
        return CLIENT.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> send(final String method, final String url) throws Exception {
        return CLIENT.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(30))
                        .method(method, HttpRequest.BodyPublishers.ofString("{}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static JsonNode json(final String url) throws Exception {
        final HttpResponse<String> r = get(url);
        if (r.statusCode() != 200) {
            throw new AssertionError(url + " -> " + r.statusCode() + " " + r.body());
        }
        return Json.MAPPER.readTree(r.body());
    }
}
