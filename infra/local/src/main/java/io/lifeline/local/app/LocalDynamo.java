package io.lifeline.local.app;

import com.almworks.sqlite4java.SQLiteQueue;
import com.amazonaws.services.dynamodbv2.exceptions.DynamoDBLocalServiceException;
import com.amazonaws.services.dynamodbv2.local.embedded.DDBExceptionMappingInvocationHandler;
import com.amazonaws.services.dynamodbv2.local.server.LocalDynamoDBRequestHandler;
import com.amazonaws.services.dynamodbv2.local.server.LocalDynamoDBServerHandler;
import com.amazonaws.services.dynamodbv2.local.shared.access.LocalDBClient;
import com.amazonaws.services.dynamodbv2.local.shared.access.sqlite.SQLiteDBAccess;
import com.amazonaws.services.dynamodbv2.local.shared.access.sqlite.SQLiteLibraryLoader;
import com.amazonaws.services.dynamodbv2.local.shared.jobs.JobsRegister;
import io.lifeline.local.aws.LocalClients;
import io.lifeline.local.runtime.OwnerOnly;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * Amazon's DynamoDB Local, in one of two shapes. {@link #open} is Lifeline Local's store: in-process, with no
 * port at all (nothing to reach from the network or from another user of the machine), persisted in
 * {@code <data-dir>/dynamodb/} under the data dir's {@link DataDirLock}, or in memory. {@link #start} is a server
 * on a free port of 127.0.0.1, for tests and benchmarks that need an endpoint (SDK interceptors, child JVMs).
 * See docs/design/local/decisions.md, "Where Lifeline Local's DynamoDB Local listens".
 */
public final class LocalDynamo implements AutoCloseable {
    /** Under the data dir: the stream pump's checkpoints (StreamPump). */
    public static final String STREAM_CHECKPOINTS_FILE = "stream-checkpoints.properties";

    /** The file DynamoDB Local's server keeps with {@code -sharedDb}; the in-process store opens the same one. */
    static final String SHARED_DB_FILE = "shared-local-instance.db";

    /** The AWS SDK v1 inside DynamoDB Local warns about JAXB on every start: harmless noise here. Held so the
     *  level sticks (java.util.logging keeps loggers weakly). */
    private static final Logger SDK_V1_LOGGER = Logger.getLogger("com.amazonaws");

    /** In-process store, its clients and its background jobs' threads; null for a server. */
    private final LocalDBClient embedded;
    private final DynamoDbClient embeddedClient;
    private final DynamoDbStreamsClient embeddedStreams;
    private final ExecutorService jobs;
    /** Server and its request handler; null in-process. */
    private final Server server;
    private final LocalDynamoDBServerHandler handler;
    private final URI endpoint;
    /** The data dir's lock, held while the in-process store is open on it; null otherwise. */
    private final DataDirLock lock;

    private LocalDynamo(LocalDBClient embedded, ExecutorService jobs, Server server, LocalDynamoDBServerHandler handler,
                        URI endpoint, DataDirLock lock) {
        this.embedded = embedded;
        this.jobs = jobs;
        this.embeddedClient = embedded == null ? null : shared(DynamoDbClient.class, embedded.dynamoDbClient());
        this.embeddedStreams = embedded == null ? null
                : shared(DynamoDbStreamsClient.class, embedded.dynamoDbStreamsClient());
        this.server = server;
        this.handler = handler;
        this.endpoint = endpoint;
        this.lock = lock;
    }

    /**
     * Lifeline Local's store, in-process: {@code dataDir} null keeps it in memory; otherwise it first takes the
     * data dir's lock (refusing, in one line, a data dir another process holds) and opens
     * {@code <dataDir>/dynamodb/shared-local-instance.db}, the file earlier versions' server kept.
     */
    public static LocalDynamo open(Path dataDir) throws IOException {
        SDK_V1_LOGGER.setLevel(Level.SEVERE);
        DataDirLock lock = dataDir == null ? null : DataDirLock.acquire(dataDir);
        try {
            File db = null;
            if (dataDir != null) {
                // Owner-only (OwnerOnly): the folder, the store's file (made empty, SQLite takes an empty file as
                // a new database) and the stream checkpoints, tightened too when they exist from before.
                Path folder = OwnerOnly.dir(dataDir.resolve("dynamodb")).toAbsolutePath();
                db = OwnerOnly.file(folder.resolve(SHARED_DB_FILE)).toFile();
                OwnerOnly.tighten(dataDir.resolve(STREAM_CHECKPOINTS_FILE));
            }
            return embedded(db, lock);
        } catch (IOException | RuntimeException e) {
            if (lock != null) {
                lock.close();
            }
            throw e;
        }
    }

    /**
     * DynamoDB Local's engine as its {@code DynamoDBEmbedded} assembles it (a {@code LocalDBClient} over SQLite,
     * its exception mapping), with three differences: the SQLite file is closed before {@link #close} returns
     * (DynamoDBEmbedded stops its SQLite queue without waiting, so a store reopened at once in the same JVM
     * finds the file still locked), its job threads are daemons (DynamoDBEmbedded's keep a JVM alive after
     * shutdown), and it sends no telemetry.
     */
    private static LocalDynamo embedded(File db, DataDirLock lock) throws IOException {
        try {
            SQLiteLibraryLoader.initialize();
        } catch (Exception e) {
            throw new IOException("DynamoDB Local's SQLite library did not load", e);
        }
        ExecutorService jobs = Executors.newFixedThreadPool(10, r -> {
            Thread t = new Thread(r, "dynamodb-local-jobs");
            t.setDaemon(true);
            return t;
        });
        try {
            SQLiteDBAccess access = db == null ? new ClosingSQLiteDBAccess() : new ClosingSQLiteDBAccess(db);
            return new LocalDynamo(new LocalDBClient(access, new JobsRegister(jobs, false)), jobs, null, null, null,
                    lock);
        } catch (RuntimeException e) {
            jobs.shutdownNow();
            throw e;
        }
    }

    /** SQLite access whose {@link #close} waits until the SQLite connection is closed. */
    private static final class ClosingSQLiteDBAccess extends SQLiteDBAccess {
        ClosingSQLiteDBAccess() {
            super();
        }

        ClosingSQLiteDBAccess(File db) {
            super(db);
        }

        @Override
        public void close() {
            SQLiteQueue closing = queue;
            super.close();
            try {
                closing.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The store's client as every caller shares it: DynamoDB Local's errors become the SDK's exceptions (as its
     * embedded mode maps them), and {@code close()} does nothing, since the store is closed once, by its owner.
     */
    private static <T> T shared(Class<T> type, T target) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if ("close".equals(method.getName()) && method.getParameterCount() == 0) {
                return null;
            }
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof DynamoDBLocalServiceException local) {
                    DDBExceptionMappingInvocationHandler.handleDynamoDBLocalServiceException(local, true);
                }
                throw e.getCause();
            }
        }));
    }

    /**
     * A server on a free port of 127.0.0.1 ({@code dbDir} null: in memory), as {@code -sharedDb}: one set of
     * tables whatever the client's credentials. DynamoDB Local's own command line has no option for the
     * address (its server listens on every interface), so the Jetty server is built here with a loopback
     * connector around DynamoDB Local's request handler, the pieces its {@code ServerRunner} uses.
     */
    public static LocalDynamo start(Path dbDir) throws Exception {
        SDK_V1_LOGGER.setLevel(Level.SEVERE);
        String path = dbDir == null ? null : Files.createDirectories(dbDir).toAbsolutePath().toString();
        LocalDynamoDBServerHandler handler = new LocalDynamoDBServerHandler(
                new LocalDynamoDBRequestHandler(0, dbDir == null, path, true, false), null);
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ContextHandler context = new ContextHandler();
        context.setHandler(handler);
        ContextHandlerCollection contexts = new ContextHandlerCollection();
        contexts.addHandler(context);
        server.setHandler(contexts);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            handler.close();
            throw e;
        }
        return new LocalDynamo(null, null, server, handler, URI.create("http://127.0.0.1:" + connector.getLocalPort()),
                null);
    }

    /** The server's endpoint; the in-process store has none. */
    public URI endpoint() {
        if (endpoint == null) {
            throw new IllegalStateException("the in-process store has no endpoint");
        }
        return endpoint;
    }

    /**
     * A client of the store: in-process, the store's one shared client (closing it does nothing; {@link #close}
     * closes the store); for a server, a new HTTP client.
     */
    public DynamoDbClient client() {
        return embedded != null ? embeddedClient : LocalClients.build(DynamoDbClient.builder(), endpoint);
    }

    /** The store's streams client, shared or new like {@link #client()}. */
    public DynamoDbStreamsClient streamsClient() {
        return embedded != null ? embeddedStreams : LocalClients.build(DynamoDbStreamsClient.builder(), endpoint);
    }

    @Override
    public void close() throws Exception {
        try {
            if (embedded != null) {
                embedded.shutdown(); // stops its jobs, then closes the SQLite file (and waits for that)
                jobs.shutdownNow();
                jobs.awaitTermination(10, TimeUnit.SECONDS);
            } else {
                server.stop();
                handler.close();
            }
        } finally {
            if (lock != null) {
                lock.close();
            }
        }
    }
}
