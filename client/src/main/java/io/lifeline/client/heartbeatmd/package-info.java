/**
 * The heartbeat.md runner: {@link io.lifeline.client.heartbeatmd.Wake#run} is what
 * {@code lifeline wake heartbeat.md} calls. Self-contained: no HTTP calls to Lifeline; the caller passes a
 * {@link io.lifeline.client.heartbeatmd.WakeOptions.HeartbeatSender} that receives
 * {@code nextHeartbeatWithinSeconds}.
 *
 * <h2>Decisions</h2>
 * <ul>
 *   <li><b>Round trip.</b> The file keeps its lines; a change rewrites only the line it touches, new fields go at the
 *       end of their block, new frontmatter keys before the closing {@code ---}. Headings inside fenced code are
 *       not actions; a {@code ###} heading without {@code [PRIORITY]} is prose unless a field line follows it.</li>
 *   <li><b>Written as read.</b> Every value the runner writes reads back as written: action fields are one line
 *       (terminal escapes dropped; control characters, U+0085, U+2028 and U+2029 made spaces; white space collapsed
 *       and trimmed; {@code error} and {@code result} at most 200 characters), frontmatter strings that are not
 *       plain are double-quoted YAML with escapes. When parsing, lines end only at {@code \n}. Bounds: error_count
 *       0 to 999999999 (a failing wake leaves it there), retry_count up to 999/999, {@code not:} at most 16 deep;
 *       the frontmatter keys the runner writes must each be one plain {@code key: value} line.</li>
 *   <li><b>Corrupt vs. malformed.</b> Not a heartbeat.md at all (empty, NUL bytes, not UTF-8, no or unterminated
 *       frontmatter, frontmatter that is not YAML) is corrupt and is restored from the newest backup that parses,
 *       keeping the corrupt bytes as {@code history/corrupt-*.md}. A field-level mistake (bad priority, schedule,
 *       status, retry, timeout, condition, duplicate id, unknown dependency, an unknown action field, with the field
 *       probably meant: {@code url} for {@code target}, {@code comand} for {@code command}) is an error naming the
 *       line and the file is left untouched, so a person's edit is never reverted behind their back.</li>
 *   <li><b>Edits and resets.</b> A failure, and the completion of a one-shot action, carry the action's
 *       {@code definition_hash} (priority, name, defining fields and params). An action edited since (the hash no
 *       longer fits), or set back to {@code status: pending} with an old result still on it, is due at once (an
 *       {@code at:} one at its instant) and its attempts are counted afresh; the old result goes when it runs.</li>
 *   <li><b>Recurring actions.</b> {@code completed} is written as the format shows, and recurring forms run again when
 *       their schedule says so; one-shot forms (no schedule, {@code at:}) run once.</li>
 *   <li><b>Retries across wakes.</b> {@code retry} is the maximum number of attempts. Each wake makes one attempt;
 *       a failure with attempts left gets {@code next_retry} = failed_at + retry_delay × 2^(n−1) (default 1 min,
 *       at most 1 h), which next_wake includes: next_wake is never later than the earliest pending retry or due
 *       action, and one that fell due while the wake ran makes it the wake's end.</li>
 *   <li><b>Conditions.</b> {@code file_exists:<path>}, {@code env:<NAME>}, {@code env:<NAME>=<value>},
 *       {@code not:<condition>}, {@code always}, {@code never}; anything else is a parse error.</li>
 *   <li><b>Held-back actions</b> (condition false: SKIPPED; dependency not completed: BLOCKED) are reported in the
 *       result, not written to the file, and looked at again next wake. Every other action that did not run is in
 *       the result's {@code notRun}, with why and when it next is due ({@code lifeline wake} prints them as
 *       {@code later} lines).</li>
 *   <li><b>Permissions.</b> The atomic rewrite gives the new file the old one's POSIX permissions.</li>
 *   <li><b>[BG]</b> ("non-blocking, async") actions start when the wake starts, on a pool of
 *       {@code backgroundParallelism} threads (default 4), and run alongside the others; the wake awaits them
 *       before it writes the file, so their results are recorded like any other under the same lock. One whose
 *       dependency is not completed yet is looked at again after the others have run. A CRITICAL failure holds back
 *       the [BG] actions not yet started; one already running finishes. A foreground action that depends on a
 *       [BG] action waits for the next wake.</li>
 *   <li><b>[LOW]</b> ("if time permits") actions run last of the foreground, each only if what it may take fits in
 *       what is left of the wake's {@code budget} (default 10 min): its last recorded {@code duration}, else its
 *       {@code timeout}. One that does not fit stays {@code pending} with a {@code deferred} field giving the
 *       reason (reported as DEFERRED), and next_wake comes within the retry delay so it gets its turn soon; the
 *       field goes when it runs.</li>
 *   <li><b>Locks.</b> {@code heartbeat.md.lock} is created with CREATE_NEW and refreshed by its holder; one not
 *       refreshed for {@code staleAfter} (default 2 min) is broken and the result says so. Waiting uses the real
 *       clock; schedule decisions use the injected {@link java.time.Clock}.</li>
 *   <li><b>config_hash</b> covers what the actions are (priority, name, id, type, schedule, retry, timeout,
 *       depends_on, condition, command, target, params), not their run state.</li>
 * </ul>
 */
package io.lifeline.client.heartbeatmd;
