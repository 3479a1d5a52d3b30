package io.flowscope.sink.webhook;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** A real local webhook receiver (JDK HttpServer on 127.0.0.1): answers 500 for the first N requests, then 200. */
final class Receiver implements AutoCloseable {
    record Request(byte[] body, String signature, String contentType, String authorization) {}

    private final HttpServer server;
    private final AtomicInteger failFirst = new AtomicInteger();
    private final AtomicInteger attempts = new AtomicInteger();
    final List<Request> accepted = new CopyOnWriteArrayList<>();

    private Receiver(final HttpServer server) {
        this.server = server;
        server.createContext("/api/v2/alerts", exchange -> {
            final byte[] body = exchange.getRequestBody().readAllBytes();
            attempts.incrementAndGet();
            final int status;
            if (failFirst.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                status = 500;
            } else {
                accepted.add(new Request(
                        body,
                        exchange.getRequestHeaders().getFirst(WebhookConfig.DEFAULT_SIGNATURE_HEADER),
                        exchange.getRequestHeaders().getFirst("Content-Type"),
                        exchange.getRequestHeaders().getFirst("Authorization")));
                status = 200;
            }
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
    }

    /** Listens now, on a free port. */
    static Receiver start() throws IOException {
        return start(0);
    }

    static Receiver start(final int port) throws IOException {
        final HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        final Receiver r = new Receiver(server);
        server.start();
        return r;
    }

    Receiver failFirst(final int n) {
        failFirst.set(n);
        return this;
    }

    int attempts() {
        return attempts.get();
    }

    int port() {
        return server.getAddress().getPort();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + port() + "/api/v2/alerts");
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
