package io.github.attn4j.internal.kernel;

import java.util.concurrent.ConcurrentLinkedQueue;
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
 * parked pool thread starts tens of microseconds after the call that wakes it (up to about 100
 * µs measured on development VMs), and a call whose tasks the caller finishes first used to
 * wait that long for a helper that then found nothing to do.
 * A helper announces itself ({@code pending}) before it claims a task, so when the caller has
 * claimed past the last task and sees no helper announced, none can still run one; a helper that
 * starts later claims nothing and leaves.
 *
 * <p>A pool thread that has run out of the tasks of a short call (under
 * {@link Helpers#SHORT_CALL_NANOS}) lingers: it spins for {@link Helpers#LINGER_NANOS} (system
 * property {@code attn4j.lingerMicros}, default 100; 0 turns lingering off) waiting for the next
 * call's tasks before it parks, so short calls in quick succession (the projections and
 * attention of a decode step, layer after layer) hand their tasks over without waking a parked
 * thread. Waking one costs the caller 7 to 22 µs in the wake-up system call on the development
 * VM, and the helper as long again to start; a decode step over a short cache spent more in that
 * than its second thread saved (jmh/README.md, "Lingering helpers"). At most
 * {@code availableProcessors - 1} pool threads linger at once, so spinning never takes a core
 * from a caller.
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
            Helpers.hand(job, w);
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
        final long start = System.nanoTime();

        Job(int tasks, Body body, Thread caller) {
            this.tasks = tasks;
            this.body = body;
            this.caller = caller;
        }

        /**
         * A pool thread's part: claims and runs tasks until none is left, and returns whether the
         * thread lingers for the next call ({@link Helpers#lingerNext}). That is decided before
         * the helper lowers {@code pending}: once the caller sees it leave, a lingering helper is
         * already on offer to the caller's next call.
         */
        boolean help(int worker) {
            pending.incrementAndGet();
            for (int t = next.getAndIncrement(); t < tasks; t = next.getAndIncrement()) {
                try {
                    body.run(t, worker);
                } catch (RuntimeException | Error e) {
                    fail(e);
                }
            }
            boolean lingers = Helpers.lingerNext(System.nanoTime() - start);
            if (pending.decrementAndGet() == 0) {
                LockSupport.unpark(caller);
            }
            return lingers;
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

    /**
     * The hand-over between calls and pool threads. {@code AVAILABLE} counts the lingering
     * threads that no call has claimed: a call claims one by lowering it, then queues a ticket
     * that one of the lingering threads takes; a lingering thread leaves only by lowering it
     * itself, so every queued ticket keeps a thread that will take it. With none on offer, the
     * call submits a task to the pool, which wakes a parked thread.
     */
    static final class Helpers {
        /** How long a pool thread out of tasks spins for another call's before it parks. */
        static final long LINGER_NANOS = Math.max(0L, Long.getLong("attn4j.lingerMicros", 100L)) * 1000L;
        /**
         * Only helpers of calls shorter than this linger. Against a longer call a wake-up is a
         * few percent, and two-thread forwards of 4 to 40 ms whose helpers lingered after every
         * call took 1 to 8% longer on the development VM (jmh/README.md, "Lingering helpers").
         */
        static final long SHORT_CALL_NANOS = 500_000L;
        /** Pool threads that may linger at once: a core stays free for the caller (none linger on one core). */
        private static final int MAX_LINGERING = Math.max(0, Runtime.getRuntime().availableProcessors() - 1);
        private static final AtomicInteger LINGERING = new AtomicInteger();
        private static final AtomicInteger AVAILABLE = new AtomicInteger();
        private static final ConcurrentLinkedQueue<Ticket> TICKETS = new ConcurrentLinkedQueue<>();

        /** Worker {@code worker} of {@code job}, for a lingering thread to run. */
        private record Ticket(Job job, int worker) {
        }

        private Helpers() {
        }

        /** Has worker {@code worker} of {@code job} run by a lingering thread, or else by a pool thread. */
        static void hand(Job job, int worker) {
            for (int a = AVAILABLE.get(); a > 0; a = AVAILABLE.get()) {
                if (AVAILABLE.compareAndSet(a, a - 1)) {
                    TICKETS.offer(new Ticket(job, worker));
                    return;
                }
            }
            Pool.POOL.execute(() -> serve(job, worker));
        }

        /**
         * Whether a helper out of tasks of a call that has run {@code elapsed} nanoseconds
         * lingers: lingering is on, the call was shorter than {@link #SHORT_CALL_NANOS}, and
         * fewer than the most threads linger.
         */
        static boolean lingerNext(long elapsed) {
            if (LINGER_NANOS == 0 || elapsed >= SHORT_CALL_NANOS) {
                return false;
            }
            for (int n = LINGERING.get(); n < MAX_LINGERING; n = LINGERING.get()) {
                if (LINGERING.compareAndSet(n, n + 1)) {
                    AVAILABLE.incrementAndGet();
                    return true;
                }
            }
            return false;
        }

        /** A pool thread's body: its worker of {@code job}, then the tickets it takes while it lingers. */
        private static void serve(Job job, int worker) {
            boolean lingers = job.help(worker);
            while (lingers) {
                long deadline = System.nanoTime() + LINGER_NANOS;
                Ticket ticket;
                while ((ticket = TICKETS.poll()) == null) {
                    if (System.nanoTime() - deadline > 0) {
                        int a = AVAILABLE.get();
                        if (a > 0 && AVAILABLE.compareAndSet(a, a - 1)) {
                            LINGERING.decrementAndGet();
                            return;
                        }
                        // Every lingering thread is claimed: a ticket is on its way.
                    }
                    Thread.onSpinWait();
                }
                LINGERING.decrementAndGet();
                lingers = ticket.job.help(ticket.worker);
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
