package io.lifeline.local;

import io.lifeline.local.app.LocalDynamo;






/**
 * One DynamoDB Local server for the whole test JVM (it takes about a second to start); each test class
 * gets its own table, created from template.yaml, so classes never see each other's items.
 */
final class SharedDynamo {
    private static LocalDynamo server;

    private SharedDynamo() {
    }

    static synchronized LocalDynamo get() {
        if (server == null) {
            try {
                server = LocalDynamo.start(null);
            } catch (Exception e) {
                throw new IllegalStateException("DynamoDB Local did not start", e);
            }
            LocalDynamo started = server;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    started.close();
                } catch (Exception e) {
                    System.err.println("DynamoDB Local did not stop: " + e);
                }
            }));
        }
        return server;
    }
}
