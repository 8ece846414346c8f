package io.github.attn4j.internal.kernel;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

/**
 * {@link Parallel#forEach} runs every task exactly once on a worker index below
 * {@link Parallel#workers}, returns only when every claimed task has ended (also when one
 * throws, whose exception it rethrows), and keeps the caller's interrupt status.
 */
class ParallelTest {
    @Test
    void runsEveryTaskOnceOnAValidWorker() {
        qt().withExamples(300).forAll(integers().between(1, 4), integers().between(0, 70)).checkAssert((threads, tasks) -> {
            AtomicIntegerArray runs = new AtomicIntegerArray(Math.max(1, tasks));
            AtomicInteger badWorker = new AtomicInteger(-1);
            int workers = Parallel.workers(threads, tasks);
            Parallel.forEach(threads, tasks, (t, w) -> {
                if (w < 0 || w >= workers) {
                    badWorker.set(w);
                }
                runs.incrementAndGet(t);
            });
            assertEquals(-1, badWorker.get(), "worker index outside [0, " + workers + ")");
            for (int t = 0; t < tasks; t++) {
                assertEquals(1, runs.get(t), "runs of task " + t + " of " + tasks + " on " + threads + " threads");
            }
        });
    }

    @Test
    void returnsOnlyWhenEveryTaskHasEnded() {
        for (int round = 0; round < 20; round++) {
            AtomicIntegerArray ended = new AtomicIntegerArray(4);
            Parallel.forEach(2, 4, (t, w) -> {
                sleep(5);
                ended.set(t, 1);
            });
            for (int t = 0; t < 4; t++) {
                assertEquals(1, ended.get(t), "task " + t + " in round " + round);
            }
        }
    }

    @Test
    void rethrowsAFailureAfterTheClaimedTasksEnd() {
        for (int round = 0; round < 20; round++) {
            IllegalStateException boom = new IllegalStateException("boom");
            AtomicInteger started = new AtomicInteger();
            AtomicInteger ended = new AtomicInteger();
            IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> Parallel.forEach(2, 64, (t, w) -> {
                started.incrementAndGet();
                try {
                    sleep(1);
                    if (t == 5) {
                        throw boom;
                    }
                } finally {
                    ended.incrementAndGet();
                }
            }));
            assertSame(boom, thrown);
            assertEquals(started.get(), ended.get(), "a task still ran after forEach threw");
            assertTrue(started.get() < 64, "tasks kept starting after the failure: " + started.get());
        }
        AssertionError error = new AssertionError("an error, not an exception");
        assertSame(error, assertThrows(AssertionError.class, () -> Parallel.forEach(2, 8, (t, w) -> {
            if (t == 7) {
                throw error;
            }
        })));
    }

    /**
     * Calls back to back, as a module call makes them, with helpers of one call still leaving
     * when the next begins: no two tasks run at once on the same worker index (each index owns
     * its scratch), and every call's tasks all run, also from two callers at once.
     */
    @Test
    void callsInARowNeverShareAWorkerIndexAtOnce() throws Exception {
        assertCallsBackToBack(2, 400, 9, 2_000L);
    }

    /**
     * More callers than cores, each making short calls in quick succession: tasks go to lingering
     * pool threads through the hand-over queue as often as to woken ones. Every task of every
     * call runs once, and no worker index runs two tasks at once.
     */
    @Test
    void manyCallersInQuickSuccessionRunEveryTaskOnce() throws Exception {
        assertCallsBackToBack(4, 600, 12, 250L);
    }

    /**
     * {@code callers} threads, each making {@code rounds} calls back to back on 2 to 4 threads
     * with 1 to {@code maxTasks} tasks that busy-wait {@code spinNanos} times 1 to 3: no task
     * starts while another task of the same worker index runs, and every task runs exactly once
     * (counted on every caller's thread, asserted here).
     */
    private static void assertCallsBackToBack(int callers, int rounds, int maxTasks, long spinNanos)
            throws InterruptedException {
        AtomicInteger clashes = new AtomicInteger();
        AtomicInteger missed = new AtomicInteger();
        Runnable calls = () -> {
            for (int round = 0; round < rounds; round++) {
                int threads = 2 + round % 3;
                int tasks = 1 + round % maxTasks;
                AtomicIntegerArray busy = new AtomicIntegerArray(threads);
                AtomicIntegerArray runs = new AtomicIntegerArray(tasks);
                Parallel.forEach(threads, tasks, (t, w) -> {
                    if (!busy.compareAndSet(w, 0, 1)) {
                        clashes.incrementAndGet();
                    }
                    long end = System.nanoTime() + spinNanos * (1 + t % 3);
                    while (System.nanoTime() < end) {
                        Thread.onSpinWait();
                    }
                    busy.set(w, 0);
                    runs.incrementAndGet(t);
                });
                for (int t = 0; t < tasks; t++) {
                    if (runs.get(t) != 1) {
                        missed.incrementAndGet();
                    }
                }
            }
        };
        Thread[] others = new Thread[callers - 1];
        for (int i = 0; i < others.length; i++) {
            others[i] = new Thread(calls);
            others[i].start();
        }
        calls.run();
        for (Thread other : others) {
            other.join();
        }
        assertEquals(0, clashes.get(), "tasks that ran beside another task of the same worker index");
        assertEquals(0, missed.get(), "tasks that did not run exactly once");
    }

    @Test
    void keepsTheCallersInterruptStatusAndStillWaits() {
        AtomicIntegerArray ended = new AtomicIntegerArray(6);
        Thread.currentThread().interrupt();
        try {
            Parallel.forEach(2, 6, (t, w) -> {
                long end = System.nanoTime() + 3_000_000L;
                while (System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
                ended.set(t, 1);
            });
        } finally {
            assertTrue(Thread.interrupted(), "interrupt status lost");
        }
        for (int t = 0; t < 6; t++) {
            assertEquals(1, ended.get(t), "task " + t);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
