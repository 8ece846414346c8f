package io.github.attn4j;

/**
 * The result of {@link MultiHeadAttention#forwardWithWeights}: the module output
 * {@code (B, Lq, E)} and the per-head attention weights {@code (B, H, Lq, Lk)} (not averaged
 * over heads; average them yourself for PyTorch's {@code average_attn_weights=True}).
 *
 * @param output  the output {@code (B, Lq, E)}
 * @param weights the per-head attention weights {@code (B, H, Lq, Lk)}
 */
public record AttentionOutput(Tensor output, Tensor weights) {
}
