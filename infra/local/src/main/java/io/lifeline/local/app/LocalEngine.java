package io.lifeline.local.app;

import io.lifeline.engine.Engine;
import io.lifeline.local.runtime.OwnerOnly;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * Lifeline Local's store: the project's own engine ({@code io.lifeline.engine}, docs/engine.md), in process with no
 * port, in memory or over the data dir ({@code <data-dir>/engine/}, under the data dir's {@link DataDirLock}), its
 * streams feeding the outbox and its time to live run at Local's clock. See docs/design/local/decisions.md,
 * "Lifeline Local runs on its own engine".
 */
public final class LocalEngine implements AutoCloseable {
    /** Under the data dir: the stream pump's checkpoints (StreamPump). */
    public static final String STREAM_CHECKPOINTS_FILE = "stream-checkpoints.properties";
    /** Under the data dir: the engine's own files (its format, lock, store and log). */
    static final String ENGINE_DIR = "engine";
    /** What an earlier Lifeline Local kept in the data dir: DynamoDB Local's store, which this one does not read. */
    static final String DYNAMODB_LOCAL_FILE = "dynamodb/shared-local-instance.db";
    /**
     * How often expired items are deleted. AWS deletes them within a few days of their time; Local, at its own
     * clock, within a minute of it, so a demo or a test that moves time sees them go.
     */
    static final Duration TTL_PASS = Duration.ofMinutes(1);

    private final Engine engine;
    private final Engine.Schedule expiry;
    /** The data dir's lock, held while the engine is open on it; null in memory. */
    private final DataDirLock lock;

    private LocalEngine(Engine engine, DataDirLock lock) {
        this.engine = engine;
        this.lock = lock;
        this.expiry = engine.expireEvery(TTL_PASS);
    }

    /**
     * Local's store at {@code clock}: {@code dataDir} null keeps it in memory; otherwise it takes the data dir's lock
     * (refusing, in one line, a data dir another process holds), refuses in one line a data dir an earlier Local
     * wrote with DynamoDB Local, and opens the engine on {@code <dataDir>/engine/}.
     *
     * <p>The stream pump's checkpoints of an earlier run are kept: the engine keeps each stream (its ARN, shard and
     * records) in the data dir, so after a stop, even a SIGKILL, the pump goes on just after the last record the
     * outbox finished, and the records it had not read yet are all still there.
     */
    public static LocalEngine open(Path dataDir, Clock clock) throws IOException {
        if (dataDir == null) {
            return new LocalEngine(new Engine(clock), null);
        }
        DataDirLock lock = DataDirLock.acquire(dataDir);
        try {
            if (Files.exists(dataDir.resolve(DYNAMODB_LOCAL_FILE))) {
                throw new StartRefusedException("data dir " + dataDir.toAbsolutePath() + " was written by an earlier"
                        + " Lifeline Local on DynamoDB Local (it has " + DYNAMODB_LOCAL_FILE + "), which this one does"
                        + " not read and does not migrate: move that dir aside (or delete it) and start again with an"
                        + " empty one, or use another --data-dir");
            }
            Path folder = OwnerOnly.dir(dataDir.resolve(ENGINE_DIR)).toAbsolutePath();
            try {
                return new LocalEngine(Engine.open(folder, clock), lock);
            } catch (IllegalStateException refused) {
                // the engine's own refusals (another format, its lock) are one line saying what to do
                throw new StartRefusedException(refused.getMessage());
            }
        } catch (IOException | RuntimeException e) {
            lock.close();
            throw e;
        }
    }

    /** The engine's client, shared by every caller: closing it does nothing, {@link #close} closes the store. */
    public DynamoDbClient client() {
        return engine.client();
    }

    /** The engine's streams client, shared like {@link #client()}. */
    public DynamoDbStreamsClient streamsClient() {
        return engine.streamsClient();
    }

    /** Stops the TTL pass, checkpoints and closes the engine (a data dir's files are then whole), lets the lock go. */
    @Override
    public void close() throws Exception {
        try {
            expiry.close();
            engine.close();
        } finally {
            if (lock != null) {
                lock.close();
            }
        }
    }
}
