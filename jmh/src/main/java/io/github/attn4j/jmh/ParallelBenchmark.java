package io.github.attn4j.jmh;

import io.github.attn4j.internal.kernel.Parallel;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The fixed cost of one parallel call of the kernels ({@code Parallel.forEach} on 2 threads)
 * whose tasks take {@code taskMicros} each: what a short call (a decode step's projections, the
 * attention of a short sequence) pays for splitting its work. With 0 the caller can run every task
 * before a parked pool thread wakes; the time is then the call's bookkeeping alone.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class ParallelBenchmark {
    /** Busy time of each of the two tasks, in microseconds. */
    @Param({"0", "50"})
    public int taskMicros;

    private volatile long sink;

    @Benchmark
    public long twoTasks() {
        long nanos = taskMicros * 1000L;
        Parallel.forEach(2, 2, (t, w) -> {
            long end = System.nanoTime() + nanos;
            long spins = 0;
            while (System.nanoTime() < end) {
                spins++;
            }
            sink += spins + t;
        });
        return sink;
    }
}
