package io.lifeline.local.app;

import com.almworks.sqlite4java.SQLiteQueue;
import com.amazonaws.services.dynamodbv2.exceptions.DynamoDBLocalServiceException;
import com.amazonaws.services.dynamodbv2.local.embedded.DDBExceptionMappingInvocationHandler;
import com.amazonaws.services.dynamodbv2.local.shared.access.LocalDBClient;
import com.amazonaws.services.dynamodbv2.local.shared.access.sqlite.SQLiteDBAccess;
import com.amazonaws.services.dynamodbv2.local.shared.access.sqlite.SQLiteLibraryLoader;
import com.amazonaws.services.dynamodbv2.local.shared.jobs.JobsRegister;
import io.lifeline.local.runtime.OwnerOnly;
import java.io.File;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * Amazon's DynamoDB Local, in-process, with no port at all (nothing to reach from the network or from another user
 * of the machine): the store of a Lifeline Local data dir, {@code <data-dir>/dynamodb/}, under the data dir's
 * {@link DataDirLock}, until the engine keeps a data dir of its own ({@link LocalEngine}); in memory, Local runs on
 * the engine. See docs/design/local/decisions.md, "Where Lifeline Local's DynamoDB Local listens" and "Lifeline Local
 * runs on its own engine".
 */
public final class LocalDynamo implements AutoCloseable {
    /** Under the data dir: the stream pump's checkpoints (StreamPump). */
    public static final String STREAM_CHECKPOINTS_FILE = "stream-checkpoints.properties";

    /** The file DynamoDB Local's server keeps with {@code -sharedDb}; the in-process store opens the same one. */
    static final String SHARED_DB_FILE = "shared-local-instance.db";

    /** The AWS SDK v1 inside DynamoDB Local warns about JAXB on every start: harmless noise here. Held so the
     *  level sticks (java.util.logging keeps loggers weakly). */
    private static final Logger SDK_V1_LOGGER = Logger.getLogger("com.amazonaws");

    /** In-process store, its clients and its background jobs' threads. */
    private final LocalDBClient embedded;
    private final DynamoDbClient embeddedClient;
    private final DynamoDbStreamsClient embeddedStreams;
    private final ExecutorService jobs;
    /** The data dir's lock, held while the in-process store is open on it; null otherwise. */
    private final DataDirLock lock;

    private LocalDynamo(LocalDBClient embedded, ExecutorService jobs, DataDirLock lock) {
        this.embedded = embedded;
        this.jobs = jobs;
        this.embeddedClient = shared(DynamoDbClient.class, embedded.dynamoDbClient());
        this.embeddedStreams = shared(DynamoDbStreamsClient.class, embedded.dynamoDbStreamsClient());
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
            return new LocalDynamo(new LocalDBClient(access, new JobsRegister(jobs, false)), jobs, lock);
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

    /** The store's one shared client (closing it does nothing; {@link #close} closes the store). */
    public DynamoDbClient client() {
        return embeddedClient;
    }

    /** The store's streams client, shared like {@link #client()}. */
    public DynamoDbStreamsClient streamsClient() {
        return embeddedStreams;
    }

    @Override
    public void close() throws Exception {
        try {
            embedded.shutdown(); // stops its jobs, then closes the SQLite file (and waits for that)
            jobs.shutdownNow();
            jobs.awaitTermination(10, TimeUnit.SECONDS);
        } finally {
            if (lock != null) {
                lock.close();
            }
        }
    }
}
