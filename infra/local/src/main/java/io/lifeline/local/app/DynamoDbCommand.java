package io.lifeline.local.app;

import io.lifeline.engine.Engine;
import io.lifeline.engine.endpoint.Endpoint;
import java.net.BindException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code lifeline-local.jar dynamodb --port PORT --in-memory}: Lifeline's own DynamoDB engine alone, served as a
 * DynamoDB endpoint on 127.0.0.1 until the process is stopped (Ctrl-C or SIGTERM close it cleanly), for any SDK,
 * the AWS CLI or a test pointed at it with an endpoint override. Nothing of Lifeline runs in it.
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

    @Option(names = "--in-memory", description = "Keep the tables in memory only (required in this build)")
    boolean inMemory;

    @Option(names = "--data-dir", description = "Keep the tables on disk in DIR: not available in this build",
            paramLabel = "DIR")
    Path dataDir;

    @Override
    public Integer call() throws Exception {
        if (dataDir != null) {
            throw new StartRefusedException("--data-dir is not available in this build: the engine keeps its tables "
                    + "in memory only; use --in-memory");
        }
        if (!inMemory) {
            throw new StartRefusedException("give --in-memory (the engine keeps its tables in memory only in this "
                    + "build)");
        }
        Endpoint endpoint;
        try {
            endpoint = Endpoint.start(new Engine(Clock.systemUTC()), port);
        } catch (BindException e) {
            throw new StartRefusedException("port " + port + " on 127.0.0.1 is in use; use --port");
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            endpoint.close();
            System.out.println("Lifeline engine stopped; its tables were in memory and are gone.");
            System.out.flush();
            stopped.countDown();
        }, "dynamodb-stop"));
        System.out.println(SERVING + endpoint.uri() + " (in memory). Stop with Ctrl-C.");
        System.out.flush();
        stopped.await();
        return 0;
    }
}
