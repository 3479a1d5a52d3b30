package io.flowscope.collector;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real alert receiver for the tests: a JDK HTTP server on 127.0.0.1 that keeps every POST (body, signature, when it
 * arrived).
 */
public final class WebhookReceiver implements AutoCloseable {
    public record Post(byte[] body, String signature, Instant received) {}

    public final List<Post> posts = new CopyOnWriteArrayList<>();
    private final HttpServer server;

    public WebhookReceiver(final String signatureHeader) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/alerts", exchange -> {
            posts.add(new Post(
                    exchange.getRequestBody().readAllBytes(),
                    exchange.getRequestHeaders().getFirst(signatureHeader),
                    Instant.now()));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
    }

    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/alerts";
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
