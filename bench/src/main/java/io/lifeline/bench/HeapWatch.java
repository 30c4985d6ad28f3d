package io.lifeline.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The heap one sweep needs beyond the live table (which the engine holds in the same JVM): from a baseline read
 * after a full collection, the most live heap after any collection during the sweep (what it held: its facts and
 * the pages in flight) and the most heap in use at all (garbage not yet collected included), sampled every 5 ms.
 */
final class HeapWatch implements AutoCloseable {
    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final List<String> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).toList();
    private final long baseline;
    private final AtomicLong peakLive = new AtomicLong();
    private final AtomicLong peakUsed = new AtomicLong();
    private final AtomicLong collections = new AtomicLong();
    private final NotificationListener listener = (n, h) -> afterCollection(n);
    private final Thread sampler;
    private volatile boolean running = true;

    HeapWatch() {
        memory.gc();
        baseline = memory.getHeapMemoryUsage().getUsed();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            ((NotificationEmitter) gc).addNotificationListener(listener, null, null);
        }
        sampler = new Thread(() -> {
            while (running) {
                peakUsed.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "heap-watch");
        sampler.setDaemon(true);
        sampler.start();
    }

    private void afterCollection(Notification n) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from(
                (CompositeData) n.getUserData());
        long live = 0;
        for (Map.Entry<String, MemoryUsage> e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
            live += heapPools.contains(e.getKey()) ? e.getValue().getUsed() : 0;
        }
        collections.incrementAndGet();
        peakLive.accumulateAndGet(live, Math::max);
    }

    @Override
    public void close() {
        running = false;
        sampler.interrupt();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            try {
                ((NotificationEmitter) gc).removeNotificationListener(listener);
            } catch (ListenerNotFoundException e) {
                // never added
            }
        }
    }

    void report(Report report, String label, ObjectNode d) {
        double liveMb = Math.max(0, peakLive.get() - baseline) / 1e6;
        double usedMb = Math.max(0, peakUsed.get() - baseline) / 1e6;
        report.add("2", label + ": peak live heap above the table's (after each GC in the sweep)", liveMb, "MB",
                "peak heap in use above it", usedMb, "< 1000", liveMb < 1000);
        d.putObject("heap " + label).put("baselineBytes", baseline).put("peakLiveBytes", peakLive.get())
                .put("peakUsedBytes", peakUsed.get()).put("collections", collections.get());
        System.out.printf("  %s: heap baseline %.0f MB, peak live above it %.0f MB over %d collections, peak in"
                + " use above it %.0f MB%n", label, baseline / 1e6, liveMb, collections.get(), usedMb);
    }
}
