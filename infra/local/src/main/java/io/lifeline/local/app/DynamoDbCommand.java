package io.lifeline.local.app;

import io.lifeline.engine.Engine;
import io.lifeline.engine.endpoint.Endpoint;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code lifeline-local.jar dynamodb --port PORT (--in-memory | --data-dir DIR)}: Lifeline's own DynamoDB engine
 * alone, served as a DynamoDB endpoint on 127.0.0.1 until the process is stopped (Ctrl-C or SIGTERM close it
 * cleanly: with a data dir, the engine checkpoints and lets the dir go), for any SDK, the AWS CLI or a test pointed at
 * it with an endpoint override. Nothing of Lifeline runs in it.
 */
@Command(name = "dynamodb", mixinStandardHelpOptions = true,
        description = {"Serves Lifeline's own DynamoDB engine alone as a DynamoDB endpoint on 127.0.0.1 (DynamoDB's "
                + "JSON 1.0 protocol; any region and any credentials), until stopped with Ctrl-C.",
                "Point an SDK or the AWS CLI at it: aws dynamodb --endpoint-url http://127.0.0.1:PORT list-tables"})
final class DynamoDbCommand implements Callable<Integer> {
    /** The start of the line that gives the endpoint, for scripts and tests that start this command. */
    static final String SERVING = "Lifeline engine serving DynamoDB at ";

    @Option(names = "--port", description = "Port on 127.0.0.1 (default ${DEFAULT-VALUE}, DynamoDB Local's; 0 picks "
            + "a free one)")
    int port = 8000;

    @Option(names = "--in-memory", description = "Keep the tables in memory only: gone when the process ends")
    boolean inMemory;

    @Option(names = "--data-dir", description = "Keep the tables in DIR (created if missing), durable across a crash; "
            + "one process per dir", paramLabel = "DIR")
    Path dataDir;

    @Override
    public Integer call() throws Exception {
        if (inMemory == (dataDir != null)) {
            throw new StartRefusedException(inMemory ? "give --in-memory or --data-dir DIR, not both"
                    : "give --in-memory (tables gone when it stops) or --data-dir DIR (tables kept in DIR)");
        }
        Engine engine = open();
        Endpoint endpoint;
        try {
            endpoint = Endpoint.start(engine, port);
        } catch (BindException e) {
            engine.close();
            throw new StartRefusedException("port " + port + " on 127.0.0.1 is in use; use --port");
        }
        String where = dataDir == null ? "in memory" : "in " + dataDir;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            endpoint.close();
            engine.close();
            System.out.println(dataDir == null ? "Lifeline engine stopped; its tables were in memory and are gone."
                    : "Lifeline engine stopped; its tables are kept in " + dataDir + ".");
            System.out.flush();
            stopped.countDown();
        }, "dynamodb-stop"));
        System.out.println(SERVING + endpoint.uri() + " (" + where + "). Stop with Ctrl-C.");
        System.out.flush();
        stopped.await();
        return 0;
    }

    /** The engine in memory, or over the data dir; a dir it refuses (open elsewhere, another format) in one line. */
    private Engine open() throws StartRefusedException {
        if (dataDir == null) {
            return new Engine(Clock.systemUTC());
        }
        try {
            return Engine.open(dataDir, Clock.systemUTC());
        } catch (IllegalStateException e) {
            throw new StartRefusedException(e.getMessage());
        } catch (UncheckedIOException e) {
            throw new StartRefusedException(e.getMessage() + ": " + e.getCause().getMessage());
        }
    }
}
