package io.lifeline.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The SDK is a library: an application that embeds it keeps its own logging and server. Its classpath (its
 * dependencies, as an application gets them) holds Jackson and nothing that binds SLF4J, carries a server or the
 * CLI. That classpath is the SDK's classes and its runtime dependencies as Maven resolves them for an application
 * ({@code target/sdk-runtime-classpath.txt}, written by the build), not this test's own, which also holds the Lifeline
 * Local the SDK's behaviour is tested against.
 */
@Tag("unit")
class SdkArtifactTest {
    private static URLClassLoader sdk;

    @BeforeAll
    static void sdkClasspath() throws IOException {
        Path target = Path.of("target");
        List<URL> urls = new ArrayList<>();
        urls.add(url(target.resolve("classes")));
        for (String jar : Files.readString(target.resolve("sdk-runtime-classpath.txt")).strip().split(File.pathSeparator)) {
            if (!jar.isEmpty()) {
                urls.add(url(Path.of(jar)));
            }
        }
        sdk = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
    }

    private static URL url(Path p) {
        try {
            return p.toAbsolutePath().toUri().toURL();
        } catch (MalformedURLException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, sdk);
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
