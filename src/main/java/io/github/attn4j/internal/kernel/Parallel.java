package io.github.attn4j.internal.kernel;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs independent tasks on a few threads. Workers claim task indices from a shared counter, so
 * which thread runs a task varies from call to call; callers make every task write its own
 * outputs with a fixed reduction order, so results never depend on the schedule or the thread
 * count.
 *
 * <p>The calling thread is worker 0; the others run on one shared pool of daemon threads
 * ({@code attn4j-worker-N}), created on first use and sized to the available processors (a
 * larger request still runs, with fewer threads than asked).
 *
 * <p>The caller waits only for tasks that a helper has claimed, never for a helper to start: a
 * parked pool thread takes about 100 µs to wake on the development VM, and a call whose tasks
 * the caller finishes first used to wait that long for a helper that then found nothing to do.
 * A helper announces itself ({@code pending}) before it claims a task, so when the caller has
 * claimed past the last task and sees no helper announced, none can still run one; a helper that
 * starts later claims nothing and leaves.
 */
public final class Parallel {
    /** Spins of the waiting caller before it parks: the last tasks are often about to end. */
    private static final int SPINS = 1 << 12;

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
     * returns when all are done. An exception thrown by a task is rethrown here, after the tasks
     * already claimed have ended; tasks not yet claimed are then skipped. The caller's interrupt
     * status is kept, and does not cut the wait short: the tasks write into the caller's outputs.
     */
    public static void forEach(int threads, int tasks, Body body) {
        int workers = workers(threads, tasks);
        if (workers == 1) {
            for (int t = 0; t < tasks; t++) {
                body.run(t, 0);
            }
            return;
        }
        Job job = new Job(tasks, body, Thread.currentThread());
        for (int w = 1; w < workers; w++) {
            int worker = w;
            Pool.POOL.execute(() -> job.help(worker));
        }
        try {
            for (int t = job.next.getAndIncrement(); t < tasks; t = job.next.getAndIncrement()) {
                body.run(t, 0);
            }
        } catch (RuntimeException | Error e) {
            job.fail(e);
        }
        job.awaitHelpers();
        Throwable failure = job.failure.get();
        if (failure instanceof RuntimeException r) {
            throw r;
        } else if (failure instanceof Error err) {
            throw err;
        }
    }

    /** One {@link #forEach} call: its task counter, the helpers inside it, the first failure. */
    private static final class Job {
        final AtomicInteger next = new AtomicInteger();
        /** Helpers that may hold a claimed task: raised before a claim, lowered after the task. */
        final AtomicInteger pending = new AtomicInteger();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final int tasks;
        final Body body;
        final Thread caller;

        Job(int tasks, Body body, Thread caller) {
            this.tasks = tasks;
            this.body = body;
            this.caller = caller;
        }

        /** A pool thread's part: claims and runs tasks until none is left. */
        void help(int worker) {
            while (true) {
                pending.incrementAndGet();
                int t = next.getAndIncrement();
                try {
                    if (t >= tasks) {
                        return;
                    }
                    body.run(t, worker);
                } catch (RuntimeException | Error e) {
                    fail(e);
                } finally {
                    if (pending.decrementAndGet() == 0 && next.get() >= tasks) {
                        LockSupport.unpark(caller);
                    }
                }
            }
        }

        /** Keeps the first failure and lets no further task start. */
        void fail(Throwable e) {
            failure.compareAndSet(null, e);
            next.set(tasks);
        }

        /** Waits, on the caller, until no helper holds a claimed task; the caller has claimed past the last. */
        void awaitHelpers() {
            boolean interrupted = false;
            for (int spin = 0; pending.get() != 0; spin++) {
                if (spin < SPINS) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
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
