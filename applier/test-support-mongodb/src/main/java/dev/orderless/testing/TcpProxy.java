package dev.orderless.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy in this JVM, between a client and a server on loopback, with three controls:
 * <ul>
 *   <li>{@link #cut()} closes every open connection and refuses new ones until {@link #restore()}: the
 *       client sees exactly what a network partition or a crashed server looks like from its side;
 *   <li>{@link #latency(Duration)} delays every forwarded chunk, in each direction, by that much (so a
 *       request-response round trip gains twice it);
 *   <li>{@link #bandwidth(long)} caps the bytes per second each direction forwards;
 *   <li>{@link #dropWhenClientSends(String)} closes any connection whose client sends a chunk containing
 *       the given text, before forwarding it: a fault that hits every operation on one entity (the
 *       client sees a connection dropped mid-operation) while every other operation succeeds.
 * </ul>
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final String targetHost;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;
    private volatile boolean closed;
    private volatile long latencyNanos;
    private volatile long bytesPerSecond;
    private volatile byte[] poison = new byte[0];

    private TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public static TcpProxy start(String targetHost, int targetPort) {
        try {
            return new TcpProxy(targetHost, targetPort);
        } catch (IOException e) {
            throw new IllegalStateException("proxy did not start", e);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Closes every connection through the proxy and refuses new ones. */
    public void cut() {
        cut = true;
        open.forEach(TcpProxy::closeQuietly);
        open.clear();
    }

    /** Accepts connections again. */
    public void restore() {
        cut = false;
    }

    /** Delays each forwarded chunk by {@code oneWay} in each direction; zero turns it off. */
    public void latency(Duration oneWay) {
        latencyNanos = oneWay.toNanos();
    }

    /** Caps each direction at {@code bytesPerSecond}; zero turns the cap off. */
    public void bandwidth(long bytesPerSecond) {
        this.bytesPerSecond = bytesPerSecond;
    }

    /** Drops connections whose client sends {@code text} (UTF-8); an empty text turns it off. */
    public void dropWhenClientSends(String text) {
        poison = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        closed = true;
        cut();
        closeQuietly(listener);
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket server = new Socket(targetHost, targetPort);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                open.add(client);
                open.add(server);
                pump(client, server, true);
                pump(server, client, false);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean fromClient) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[64 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    long delay = latencyNanos;
                    long rate = bytesPerSecond;
                    if (rate > 0) {
                        delay += n * 1_000_000_000L / rate;
                    }
                    if (delay > 0) {
                        LockSupport.parkNanos(delay);
                    }
                    if (fromClient && contains(buffer, n, poison)) {
                        return;   // the finally closes both sides: the request is never forwarded
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // a cut or a close on either side ends the pair
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static boolean contains(byte[] buffer, int length, byte[] needle) {
        if (needle.length == 0) {
            return false;
        }
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (buffer[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // already closed
        }
    }
}
