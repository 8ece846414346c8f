package io.github.attn4j.jmh;
import org.openjdk.jmh.annotations.*;
@Fork(value = 1, jvmArgsAppend = "--add-modules=jdk.incubator.vector")
public class ProbeBench { @Benchmark public int lanes() { return io.github.attn4j.kernel.Probe.lanes(); } }
