package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The SDK is a library: an application that embeds it keeps its own logging and server. Its classpath (its
 * dependencies, as an application gets them) holds Jackson and nothing that binds SLF4J, carries a server or the
 * CLI. (The SDK's behaviour is tested against Lifeline Local in the client module, which depends on it.)
 */
@Tag("unit")
class SdkArtifactTest {
    private static boolean present(String className) {
        try {
            Class.forName(className, false, SdkArtifactTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    @Test
    void classpath_holdsJackson_andNoLoggingBindingServerOrCli() {
        assertTrue(present("com.fasterxml.jackson.databind.ObjectMapper"));
        assertTrue(present("io.lifeline.client.LifelineClient"));
        assertTrue(present("io.lifeline.client.manager.HeartbeatManager"));
        for (String absent : new String[] {"org.slf4j.Logger", "org.slf4j.nop.NOPServiceProvider",
                "org.slf4j.simple.SimpleServiceProvider", "ch.qos.logback.classic.Logger",
                "org.apache.catalina.startup.Tomcat", "io.modelcontextprotocol.server.McpServer",
                "picocli.CommandLine", "io.lifeline.client.cli.Main", "io.lifeline.client.daemon.HostDaemon"}) {
            assertFalse(present(absent), absent + " is on the SDK's classpath");
        }
    }
}
