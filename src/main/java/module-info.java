/**
 * attn4j: multi-head attention on CPU SIMD lanes through the Java Vector API.
 *
 * <p>Exported packages:
 * <ul>
 *   <li>{@code io.github.attn4j}: the API ({@code Tensor}, {@code AttentionMask},
 *       {@code MultiHeadAttention}, {@code ScaledDotProductAttention}, {@code KvCache}, ...).</li>
 *   <li>{@code io.github.attn4j.reference}: the double-precision reference implementation, the
 *       oracle of attn4j's own property tests. It is exported so that users can check their own
 *       integration (weight import, masks, shapes, cache handling) against an independent
 *       implementation of the same definition, in their own tests. It is slow (plain loops in
 *       double precision) and not meant for production use.</li>
 * </ul>
 * The kernel package is internal and not exported.
 *
 * <p>{@code jdk.incubator.vector} is an optional dependence ({@code requires static}): the
 * library loads and runs its scalar kernels when the application does not add the module, and
 * selects the Vector API kernels when it does ({@code --add-modules jdk.incubator.vector}), on the
 * class path and on the module path alike. {@code java.management} and {@code jdk.management}
 * are read to find out, once per JVM, whether the C2 compiler is on.
 */
module io.github.attn4j {
    requires static jdk.incubator.vector;
    requires java.management;
    requires jdk.management;

    exports io.github.attn4j;
    exports io.github.attn4j.reference;
}
