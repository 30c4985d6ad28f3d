package io.lifeline.client.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code lifeline daemon}'s options as given, unchecked: {@link DaemonSettings} reads and checks them,
 * {@link DaemonSetup} builds from them what the daemon runs on.
 */
final class DaemonOptions {
    @Option(names = "--host", required = true, description = "This host's id (the agents' hostId)")
    String host;

    @Option(names = "--agent", required = true, paramLabel = "ID=COMMAND",
            description = "An agent and the command that runs it, e.g. a1='python agent.py'; repeat per agent")
    LinkedHashMap<String, String> agents;

    @Option(names = "--interval", description = "Round interval, e.g. 10s (default: the server's advice, the "
            + "smallest heartbeatIntervalSeconds of the agents, which keeps each of them alive)")
    String interval;

    @Option(names = "--iterations", description = "Stop after this many rounds (default: until stopped)")
    Integer iterations;

    @Option(names = "--no-restart-on-exit", description = "Report an exited command but do not restart it (the same "
            + "as --restart no)")
    boolean noRestart;

    @Option(names = "--restart", paramLabel = "POLICY|ID=POLICY", description = "When a command is started again, in "
            + "systemd's words: on-failure (the default: after a crash, a non-zero exit status or a signal), always "
            + "(after an exit with status 0 too: the agent leaves, then joins again), no; POLICY for every agent, "
            + "ID=POLICY for one; repeatable")
    List<String> restart = new ArrayList<>();

    @Option(names = "--log-dir", description = "Write each agent's output to DIR/<id>.log")
    Path logDir;

    @Option(names = "--local-beats", description = "Agents prove they are not hung by local beats: the daemon "
            + "listens on 127.0.0.1 and sets LIFELINE_DAEMON for them ('lifeline beat ID' sends one there); an agent "
            + "whose process runs but that stops beating goes stale like any silent agent")
    boolean localBeats;

    @Option(names = "--no-leave-on-stop", description = "On stop, do not leave: the agents stay ready or working "
            + "until their deadlines pass and they are marked dead (and revived)")
    boolean noLeaveOnStop;

    @Option(names = "--max-crashes", description = "Give an agent up after this many crashes in --crash-window "
            + "(default ${DEFAULT-VALUE})")
    int maxCrashes = 5;

    @Option(names = "--crash-window", description = "The window of --max-crashes, e.g. 10m (default ${DEFAULT-VALUE})")
    String crashWindow = "10m";

    @Option(names = "--restart-backoff", description = "The wait before restarting after a second crash in the "
            + "window, doubling with each further one up to 5m (default ${DEFAULT-VALUE}; the first restarts at once)")
    String restartBackoff = "2s";

    @Option(names = "--stall-after", description = "An agent with --runtime in a turn whose model connections "
            + "received nothing and whose hooks said nothing this long is stalled, e.g. 2m; a tool call in flight and a "
            + "wait for input or a person never are; 'off': not watched (default ${DEFAULT-VALUE})")
    String stallAfter = "120s";

    @Option(names = "--on-stall", description = "restart: stop a stalled agent's process group (TERM, then KILL), "
            + "report it dead and start it again on its session; alert: leave it running, flagged in its beats "
            + "(default ${DEFAULT-VALUE})")
    String onStall = "restart";

    @Option(names = "--runtime", paramLabel = "ID=RUNTIME", description = "The agent's command runs a coding-agent "
            + "runtime (claude-code, codex, gemini, opencode) whose hooks post to this daemon: the daemon listens on "
            + "127.0.0.1 (LIFELINE_DAEMON, as --local-beats), takes POST /hooks/RUNTIME there, and a restart resumes the "
            + "session the hooks last named; repeat per agent")
    LinkedHashMap<String, String> runtimes = new LinkedHashMap<>();

    @Option(names = "--local-port", paramLabel = "PORT", description = "The local channel's port on 127.0.0.1 "
            + "(default: a free one, printed at start and given to the commands in LIFELINE_DAEMON); a fixed port lets "
            + "a hook name the daemon in a literal URL")
    int localPort;

    @Option(names = "--state-dir", paramLabel = "DIR", description = "Where the daemon keeps its lock and its "
            + "commands' pids, so a daemon restarted after a kill -9 stops what the old one left running "
            + "(default: $XDG_STATE_HOME/lifeline/daemon/HOST, else ~/.local/state/lifeline/daemon/HOST)")
    Path stateDir;

    @Option(names = "--opencode", paramLabel = "URL", description = "Also bridge the opencode server at URL "
            + "(config opencode_url): its sessions' events become heartbeats, error reports and rotations of the "
            + "agents they map to, as 'lifeline bridge opencode' does (default: no bridge)")
    String opencodeUrl;

    @Option(names = "--opencode-map", paramLabel = "SESSION=AGENT", description = "With the bridge: map a session "
            + "to an agent (AGENT or TEAM/AGENT); repeatable; wins over the title teams::<team>::agent::<id>")
    List<String> opencodeMaps = new ArrayList<>();

    @Option(names = "--opencode-interval", description = "With the bridge: at most one beat per agent per interval, "
            + "status changes excepted (default ${DEFAULT-VALUE})")
    String opencodeInterval = "10s";
}
