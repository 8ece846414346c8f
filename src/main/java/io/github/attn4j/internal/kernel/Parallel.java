package io.github.attn4j.internal.kernel;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs independent tasks on a few threads. Workers claim task indices from a shared counter, so
 * which thread runs a task varies from call to call; callers make every task write its own
 * outputs with a fixed reduction order, so results never depend on the schedule or the thread
 * count.
 *
 * <p>The calling thread is worker 0; the others run on one shared pool of daemon threads
 * ({@code attn4j-worker-N}), created on first use and sized to the available processors (a
 * larger request still runs, with fewer threads than asked).
 */
public final class Parallel {
    /** A task body: runs task {@code task} on worker {@code worker} (in {@code [0, workers)}), for per-worker scratch. */
    @FunctionalInterface
    public interface Body {
        void run(int task, int worker);
    }

    private Parallel() {
    }

    /** Number of workers {@link #forEach} uses for {@code tasks} tasks and {@code threads} requested threads. */
    public static int workers(int threads, int tasks) {
        return Math.max(1, Math.min(threads, tasks));
    }

    /**
     * Runs {@code body} for every task in {@code [0, tasks)} on {@link #workers} workers and
     * returns when all are done. An exception thrown by a task is rethrown here.
     */
    public static void forEach(int threads, int tasks, Body body) {
        int workers = workers(threads, tasks);
        if (workers == 1) {
            for (int t = 0; t < tasks; t++) {
                body.run(t, 0);
            }
            return;
        }
        AtomicInteger next = new AtomicInteger();
        @SuppressWarnings("unchecked")
        Future<?>[] helpers = new Future<?>[workers - 1];
        for (int w = 1; w < workers; w++) {
            int worker = w;
            helpers[w - 1] = Pool.POOL.submit(() -> drain(next, tasks, body, worker));
        }
        Throwable failure = null;
        try {
            drain(next, tasks, body, 0);
        } catch (RuntimeException | Error e) {
            failure = e;
            next.set(tasks);
        }
        for (Future<?> f : helpers) {
            try {
                f.get();
            } catch (ExecutionException e) {
                failure = failure == null ? e.getCause() : failure;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = failure == null ? e : failure;
            }
        }
        if (failure instanceof RuntimeException r) {
            throw r;
        } else if (failure instanceof Error err) {
            throw err;
        } else if (failure != null) {
            throw new IllegalStateException("attention worker interrupted", failure);
        }
    }

    private static void drain(AtomicInteger next, int tasks, Body body, int worker) {
        for (int t = next.getAndIncrement(); t < tasks; t = next.getAndIncrement()) {
            body.run(t, worker);
        }
    }

    /** Lazy holder of the shared worker pool. */
    private static final class Pool {
        static final ForkJoinPool POOL = new ForkJoinPool(Math.max(1, Runtime.getRuntime().availableProcessors()),
                pool -> {
                    var thread = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
                    thread.setDaemon(true);
                    thread.setName("attn4j-worker-" + thread.getPoolIndex());
                    return thread;
                }, null, false);
    }
}
