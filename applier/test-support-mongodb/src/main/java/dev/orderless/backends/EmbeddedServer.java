package dev.orderless.backends;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import de.bwaldvogel.mongo.wire.MongoWireMessageEncoder;
import de.bwaldvogel.mongo.wire.MongoWireProtocolHandler;
import de.bwaldvogel.mongo.wire.MongoWireReplyEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorChooserFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ThreadPerTaskExecutor;
import java.net.InetSocketAddress;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * mongo-java-server's wire pipeline (its decoder, encoders and command handler, as its {@code MongoServer} sets
 * them up) on a netty server of this package's own, for one reason: which server thread serves a new
 * connection. mongo-java-server hands its threads out round robin over the server's life, so the 33rd
 * connection ever opened shares a thread with the first, even when every other thread is idle. Here a new
 * connection gets the thread that serves the fewest open connections: a thread of its own while there are
 * fewer open connections than threads. A command that a {@link Pause} holds waits on its thread, so no other
 * connection waits with it, however many connections came and went before.
 */
final class EmbeddedServer {
    private final MongoBackend backend;
    private final EventLoopGroup acceptor;
    private final EventLoopGroup workers;
    private final ChannelGroup connections = new DefaultChannelGroup("embedded-mongo", GlobalEventExecutor.INSTANCE);
    private final Channel listener;

    private EmbeddedServer(MongoBackend backend, InetSocketAddress address, int threads) {
        this.backend = backend;
        this.acceptor = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("embedded-mongo-acceptor"),
                NioIoHandler.newFactory());
        Map<EventExecutor, AtomicInteger> served = new IdentityHashMap<>();
        this.workers = new MultiThreadIoEventLoopGroup(threads,
                new ThreadPerTaskExecutor(new DefaultThreadFactory("embedded-mongo-worker")), fewestConnections(served),
                NioIoHandler.newFactory());
        try {
            this.listener = new ServerBootstrap()
                    .group(acceptor, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 100)
                    .childOption(ChannelOption.TCP_NODELAY, Boolean.TRUE)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        public void initChannel(SocketChannel channel) {
                            AtomicInteger count;
                            synchronized (served) {
                                count = served.get(channel.eventLoop());
                            }
                            if (count != null) {
                                channel.closeFuture().addListener(closed -> count.decrementAndGet());
                            }
                            channel.pipeline().addLast(new MongoWireReplyEncoder(), new MongoWireMessageEncoder(),
                                    new MongoWireProtocolHandler(), new MongoDatabaseHandler(backend, connections),
                                    new MongoExceptionHandler());
                        }
                    })
                    .bind(address).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            shutDown();
            throw e;
        }
    }

    /** Listens on {@code address}, with {@code threads} server threads. */
    static EmbeddedServer bind(MongoBackend backend, InetSocketAddress address, int threads) {
        return new EmbeddedServer(backend, address, threads);
    }

    InetSocketAddress address() {
        return (InetSocketAddress) listener.localAddress();
    }

    /** Stops listening, closes every connection, stops the threads and closes the backend. */
    void close() {
        listener.close().syncUninterruptibly();
        connections.close().syncUninterruptibly();
        shutDown();
        backend.close();
    }

    private void shutDown() {
        acceptor.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        acceptor.terminationFuture().syncUninterruptibly();
        workers.terminationFuture().syncUninterruptibly();
    }

    /**
     * Each new connection to the thread with the fewest open connections (the first such, so a thread of its own
     * while there are fewer connections than threads). The count is taken when the thread is chosen, so two
     * connections accepted at once do not both take the same idle thread; it drops when the connection closes.
     */
    private static EventExecutorChooserFactory fewestConnections(Map<EventExecutor, AtomicInteger> served) {
        return executors -> {
            synchronized (served) {
                for (EventExecutor executor : executors) {
                    served.put(executor, new AtomicInteger());
                }
            }
            return () -> {
                synchronized (served) {
                    EventExecutor fewest = executors[0];
                    for (EventExecutor executor : executors) {
                        if (served.get(executor).get() < served.get(fewest).get()) {
                            fewest = executor;
                        }
                    }
                    served.get(fewest).incrementAndGet();
                    return fewest;
                }
            };
        };
    }
}
