package io.lifeline.client.cli;

import picocli.CommandLine;

/** The {@code lifeline} command: {@code java -jar client/target/lifeline.jar --help}. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new LifelineCli()).execute(args));
    }
}
