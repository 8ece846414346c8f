package io.github.attn4j.reference;

import io.github.attn4j.AttentionMask;
import io.github.attn4j.AttentionOutput;
import io.github.attn4j.RotaryEmbedding;
import io.github.attn4j.Tensor;
import io.github.attn4j.reference.ReferenceAttention.DecoderOptions;
import io.github.attn4j.reference.ReferenceAttention.Parameters;
import io.github.attn4j.reference.ReferenceAttention.ScoreOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decoder features of the oracle against values derived by hand: sinks, soft-cap, sliding
 * windows, ALiBi, QK-norm, and RoPE inside the module. Zero queries make every score 0, so the
 * weights show what the feature under test adds.
 */
class ReferenceDecoderTest {
    private static final float LN2 = (float) Math.log(2);

    /** q (1, H, Lq, 1) of zeros over keys of zeros; the value of key j is {@code values[j]}. */
    private static AttentionOutput zeroScores(int heads, int lq, float[] values, AttentionMask mask, ScoreOptions o) {
        int lk = values.length;
        return ReferenceAttention.scaledDotProduct(Tensor.zeros(1, heads, lq, 1), Tensor.zeros(1, 1, lk, 1),
                Tensor.of(values.clone(), 1, 1, lk, 1), mask, o);
    }

    // ---- sinks ----

    @Test
    void sinkOfLogNHalvesEveryWeightOfNEqualScores() {
        // w_j = 1 / (4 + e^{ln 4}) = 1/8; output = (1 + 2 + 3 + 10) / 8 = half the mean 4.
        AttentionOutput a = zeroScores(1, 1, new float[]{1, 2, 3, 10}, AttentionMask.none(),
                new ScoreOptions(1f, 0f, new float[]{(float) Math.log(4)}));
        assertArrayEquals(new float[]{1 / 8f, 1 / 8f, 1 / 8f, 1 / 8f}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{2}, a.output().toArray(), 1e-6f);
    }

    @Test
    void sinksArePerQueryHead() {
        // Two query heads sharing one key/value head, 2 keys: sink ln 2 gives 1/(2+2), sink ln 6 gives 1/(2+6).
        AttentionOutput a = zeroScores(2, 1, new float[]{4, 8}, AttentionMask.none(),
                new ScoreOptions(1f, 0f, new float[]{LN2, (float) Math.log(6)}));
        assertArrayEquals(new float[]{1 / 4f, 1 / 4f, 1 / 8f, 1 / 8f}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{3, 1.5f}, a.output().toArray(), 1e-6f);
    }

    @Test
    void sinkFarAboveTheScoresTakesAllTheMassWithoutNaN() {
        // The max subtracted is the sink's 1000: every exp(0 - 1000) underflows to 0, the sink's is 1.
        AttentionOutput a = zeroScores(1, 1, new float[]{5, 7}, AttentionMask.none(), new ScoreOptions(1f, 0f, new float[]{1000}));
        assertArrayEquals(new float[]{0, 0}, a.weights().toArray(), 0f);
        assertArrayEquals(new float[]{0}, a.output().toArray(), 0f);
        // A sink far below changes nothing.
        AttentionOutput b = zeroScores(1, 1, new float[]{5, 7}, AttentionMask.none(), new ScoreOptions(1f, 0f, new float[]{-1000}));
        assertArrayEquals(new float[]{0.5f, 0.5f}, b.weights().toArray(), 0f);
    }

    @Test
    void allMaskedRowWithASinkGivesZeros() {
        AttentionMask mask = AttentionMask.keyPadding(new boolean[][]{{true, true, true}});
        AttentionOutput a = zeroScores(1, 2, new float[]{1, 2, 3}, mask, new ScoreOptions(1f, 0f, new float[]{5}));
        assertArrayEquals(new float[6], a.weights().toArray(), 0f);
        assertArrayEquals(new float[2], a.output().toArray(), 0f);
        // One row fully masked: top-left causal gives query 0 only key 0, which the keep mask forbids.
        Tensor keep = Tensor.of(new float[]{0, 1, 1}, 1, 3);
        AttentionOutput b = zeroScores(1, 2, new float[]{1, 2, 3}, AttentionMask.causalTopLeft().and(AttentionMask.keep(keep)),
                new ScoreOptions(1f, 0f, new float[]{0}));
        // Row 0 sees no key; row 1 sees key 1 only: 1 / (1 + e^0) = 1/2.
        assertArrayEquals(new float[]{0, 0, 0, 0, 0.5f, 0}, b.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{0, 1}, b.output().toArray(), 1e-7f);
    }

    // ---- soft-cap ----

    @Test
    void softcapOfHugeLogitsStaysFinite() {
        // Scores 1e30 and 2e30 (q = 1e15, keys 1e15 and 2e15, d = 1) both cap to 50 · tanh(huge) = 50: equal weights.
        Tensor q = Tensor.of(new float[]{1e15f}, 1, 1, 1, 1);
        Tensor k = Tensor.of(new float[]{1e15f, 2e15f}, 1, 1, 2, 1);
        Tensor v = Tensor.of(new float[]{2, 4}, 1, 1, 2, 1);
        AttentionOutput capped = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), new ScoreOptions(1f, 50f, null));
        assertArrayEquals(new float[]{0.5f, 0.5f}, capped.weights().toArray(), 0f);
        assertArrayEquals(new float[]{3}, capped.output().toArray(), 0f);
        // Without the cap the larger score takes everything.
        AttentionOutput plain = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), 1f);
        assertArrayEquals(new float[]{0, 1}, plain.weights().toArray(), 0f);
    }

    @Test
    void softcapIsNearlyTheIdentityFarBelowTheCap() {
        // cap · tanh(s / cap) = s - s³/(3 cap²) + ...: ln 2 with cap 1000 moves by 1e-7, weights stay 2/3 and 1/3.
        Tensor q = Tensor.of(new float[]{LN2}, 1, 1, 1, 1);
        Tensor k = Tensor.of(new float[]{1, 0}, 1, 1, 2, 1);
        Tensor v = Tensor.zeros(1, 1, 2, 1);
        AttentionOutput a = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), new ScoreOptions(1f, 1000f, null));
        assertArrayEquals(new float[]{2 / 3f, 1 / 3f}, a.weights().toArray(), 1e-6f);
        // With cap 1 the score 1 becomes tanh 1 = 0.7615942: weights sigmoid(0.7615942) = 0.6816997 and the rest.
        Tensor one = Tensor.of(new float[]{1}, 1, 1, 1, 1);
        AttentionOutput b = ReferenceAttention.scaledDotProduct(one, k, v, AttentionMask.none(), new ScoreOptions(1f, 1f, null));
        assertArrayEquals(new float[]{0.6816997f, 1 - 0.6816997f}, b.weights().toArray(), 1e-6f);
    }

    @Test
    void softcapComesAfterTheScaleAndBeforeTheBiases() {
        Tensor q = Tensor.of(new float[]{1}, 1, 1, 1, 1);
        Tensor k = Tensor.of(new float[]{1, 0}, 1, 1, 2, 1);
        Tensor v = Tensor.zeros(1, 1, 2, 1);
        // Scale 1000 first: 1000 · 1 capped at 1 -> tanh(1000) = 1, not 1 · tanh(1) scaled afterwards.
        AttentionOutput scaled = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.none(), new ScoreOptions(1000f, 1f, null));
        float e = (float) Math.E;
        assertArrayEquals(new float[]{e / (e + 1), 1 / (e + 1)}, scaled.weights().toArray(), 1e-6f);
        // A bias of ln 2 on key 1 is added after the cap: scores tanh 1 and 0 + ln 2 (capping after the bias would give tanh(ln 2) = 0.6).
        Tensor bias = Tensor.of(new float[]{0, LN2}, 1, 2);
        AttentionOutput biased = ReferenceAttention.scaledDotProduct(q, k, v, AttentionMask.additive(bias), new ScoreOptions(1f, 1f, null));
        double w0 = Math.exp(Math.tanh(1)) / (Math.exp(Math.tanh(1)) + 2);
        assertArrayEquals(new float[]{(float) w0, (float) (1 - w0)}, biased.weights().toArray(), 1e-6f);
    }

    // ---- sliding window and ALiBi ----

    @Test
    void slidingWindowOfOneWithCausalGivesEachQueryItsOwnValue() {
        AttentionOutput a = zeroScores(1, 4, new float[]{10, 20, 30, 40}, AttentionMask.causal().and(AttentionMask.slidingWindow(1)),
                ScoreOptions.scaled(1f));
        assertArrayEquals(new float[]{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, a.weights().toArray(), 0f);
        assertArrayEquals(new float[]{10, 20, 30, 40}, a.output().toArray(), 1e-6f);
    }

    @Test
    void slidingWindowIsEndAlignedAndTwoSided() {
        // Lq = 2, Lk = 5, window 2, no causal: query 0 is at i' = 3 and sees keys 2, 3, 4; query 1 (i' = 4) sees 3, 4.
        AttentionOutput a = zeroScores(1, 2, new float[]{0, 1, 2, 3, 4}, AttentionMask.slidingWindow(2), ScoreOptions.scaled(1f));
        float t = 1 / 3f;
        assertArrayEquals(new float[]{0, 0, t, t, t, 0, 0, 0, 0.5f, 0.5f}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{3, 3.5f}, a.output().toArray(), 1e-6f);
        // With causal and window 3 on Lq = Lk = 4: query 3 sees keys 1, 2, 3.
        AttentionOutput b = zeroScores(1, 4, new float[]{0, 1, 2, 3}, AttentionMask.causal().and(AttentionMask.slidingWindow(3)),
                ScoreOptions.scaled(1f));
        assertArrayEquals(new float[]{0, 0.5f, 1, 2}, b.output().toArray(), 1e-6f);
    }

    @Test
    void alibiWeightsFallByTheSlopeTimesTheDistance() {
        // Lq = 1, Lk = 4: i' = 3, distances 3, 2, 1, 0. Head 0 slope ln 2: weights ∝ 1/8, 1/4, 1/2, 1 -> (1, 2, 4, 8)/15.
        // Head 1 slope 0: uniform.
        AttentionOutput a = zeroScores(2, 1, new float[]{0, 0, 0, 15}, AttentionMask.alibi(new float[]{LN2, 0}), ScoreOptions.scaled(1f));
        assertArrayEquals(new float[]{1 / 15f, 2 / 15f, 4 / 15f, 8 / 15f, 0.25f, 0.25f, 0.25f, 0.25f}, a.weights().toArray(), 1e-6f);
        assertArrayEquals(new float[]{8, 3.75f}, a.output().toArray(), 1e-5f);
    }

    @Test
    void alibiUsesTheAbsoluteDistanceWithoutCausal() {
        // Lq = Lk = 3, slope ln 2: query 0 has distances 0, 1, 2 -> (4, 2, 1)/7; query 1: 1, 0, 1 -> (1, 2, 1)/4.
        AttentionOutput a = zeroScores(1, 3, new float[]{0, 0, 0}, AttentionMask.alibi(new float[]{LN2}), ScoreOptions.scaled(1f));
        assertArrayEquals(new float[]{4 / 7f, 2 / 7f, 1 / 7f, 0.25f, 0.5f, 0.25f, 1 / 7f, 2 / 7f, 4 / 7f}, a.weights().toArray(), 1e-6f);
        // With causal: query 1 has keys 0, 1 at distances 1, 0 -> (1, 2)/3.
        AttentionOutput b = zeroScores(1, 3, new float[]{0, 0, 0}, AttentionMask.causal().and(AttentionMask.alibi(new float[]{LN2})),
                ScoreOptions.scaled(1f));
        assertArrayEquals(new float[]{1, 0, 0, 1 / 3f, 2 / 3f, 0, 1 / 7f, 2 / 7f, 4 / 7f}, b.weights().toArray(), 1e-6f);
    }

    // ---- QK-norm ----

    @Test
    void rmsNormHandValues() {
        // x = (3, 4): mean square 12.5; w = (1, 2): (3, 8) / √12.5.
        assertArrayEquals(new double[]{0.848528137423857, 2.262741699796952},
                ReferenceDecoder.rmsNorm(new double[]{3, 4}, new float[]{1, 2}, 0), 1e-12);
        // x = (1, 1, 1, 1), eps 3: 1 / √(1 + 3) = 1/2.
        assertArrayEquals(new double[]{0.5, 0.5, 0.5, 0.5},
                ReferenceDecoder.rmsNorm(new double[]{1, 1, 1, 1}, new float[]{1, 1, 1, 1}, 3), 1e-15);
        // With unit weights the output has RMS 1 (eps 0).
        double[] y = ReferenceDecoder.rmsNorm(new double[]{0.1, -7, 3, 2e-3, 9}, new float[]{1, 1, 1, 1, 1}, 0);
        double ms = 0;
        for (double c : y) {
            ms += c * c / y.length;
        }
        assertTrue(Math.abs(ms - 1) < 1e-12, "mean square " + ms);
    }

    @Test
    void rmsNormIgnoresAPositiveScaleOfItsInput() {
        double[] x = {0.5, -1.5, 2, 0.25};
        float[] w = {1, -2, 0.5f, 3};
        double[] y = ReferenceDecoder.rmsNorm(x, w, 0);
        for (double c : new double[]{1e-6, 0.3, 7, 1e6}) {
            double[] scaled = {c * x[0], c * x[1], c * x[2], c * x[3]};
            assertArrayEquals(y, ReferenceDecoder.rmsNorm(scaled, w, 0), 1e-12, "scale " + c);
        }
    }

    /** E = hd = 2, one head, identity projections, no biases, scale 1. */
    private static Parameters identity2() {
        float[] id = {1, 0, 0, 1};
        return new Parameters(2, 1, 1, 2, 1f, id, id.clone(), id.clone(), id.clone(), null, null, null, null);
    }

    @Test
    void qkNormInTheModuleHandValues() {
        // Query (2, 0), keys (5, 0) and (0, 0.1) normalize to (√2, 0), (√2, 0), (0, √2): scores 2 and 0,
        // weights e²/(e²+1) = 0.8807971 and 0.1192029. Values are the raw keys (not normalized):
        // output 0.8807971 · (5, 0) + 0.1192029 · (0, 0.1).
        Tensor keys = Tensor.of(new float[]{5, 0, 0, 0.1f}, 1, 2, 2);
        float[] ones = {1, 1};
        DecoderOptions norm = new DecoderOptions(null, ones, ones, 0f, 0f, null);
        AttentionOutput a = ReferenceAttention.multiHead(Tensor.of(new float[]{2, 0}, 1, 1, 2), keys, keys, AttentionMask.none(), identity2(), norm);
        assertArrayEquals(new float[]{0.8807971f, 0.1192029f}, a.weights().toArray(), 1e-6f);
        assertArrayEquals(new float[]{4.4039854f, 0.0119203f}, a.output().toArray(), 1e-6f);
        // A query 100 times longer gives the same result.
        AttentionOutput b = ReferenceAttention.multiHead(Tensor.of(new float[]{200, 0}, 1, 1, 2), keys, keys, AttentionMask.none(), identity2(), norm);
        assertArrayEquals(a.output().toArray(), b.output().toArray(), 1e-6f);
    }

    // ---- RoPE and the rest in the module ----

    @Test
    void ropeInTheModuleRotatesQueriesAndKeysByTheirPositionsButNotValues() {
        // r = 2: 1 radian per position. Keys (1, 0) at positions 0 and 1 -> (1, 0), (cos 1, sin 1). Values (1, 0), (0, 1).
        // Query 0 (1, 0) at position 0: scores 1, cos 1 -> weights sigmoid(1 - cos 1) = 0.6129425 and the rest.
        // Query 1 (1, 0) at position 1 -> (cos 1, sin 1): scores cos 1, 1 -> the mirror image.
        Tensor x = Tensor.of(new float[]{1, 0, 1, 0}, 1, 2, 2);
        Tensor values = Tensor.of(new float[]{1, 0, 0, 1}, 1, 2, 2);
        DecoderOptions rope = new DecoderOptions(RotaryEmbedding.of(2, 10_000), null, null, 0f, 0f, null);
        AttentionOutput a = ReferenceAttention.multiHead(x, x, values, AttentionMask.none(), identity2(), rope);
        float w = 0.6129425f;
        assertArrayEquals(new float[]{w, 1 - w, 1 - w, w}, a.weights().toArray(), 1e-6f);
        assertArrayEquals(new float[]{w, 1 - w, 1 - w, w}, a.output().toArray(), 1e-6f);
    }

    @Test
    void qkNormComesBeforeRope() {
        // q norm weight (1, 2). Query 1 = (1, 0) at position 1; keys (1, 0) at 0 and (0, 1) at 1 -> (-sin 1, cos 1).
        // Norm first: (√2, 0) -> √2 (cos 1, sin 1): scores √2 cos 1 = 0.7640960 and 0: weight sigmoid = 0.6822438.
        // (RoPE first would give (√2 cos 1, 2√2 sin 1) and weight 0.5302461.)
        Tensor query = Tensor.of(new float[]{1, 0, 1, 0}, 1, 2, 2);
        Tensor keys = Tensor.of(new float[]{1, 0, 0, 1}, 1, 2, 2);
        DecoderOptions o = new DecoderOptions(RotaryEmbedding.of(2, 10_000), new float[]{1, 2}, null, 0f, 0f, null);
        float[] weights = ReferenceAttention.multiHead(query, keys, keys, AttentionMask.none(), identity2(), o).weights().toArray();
        assertArrayEquals(new float[]{0.6822438f, 1 - 0.6822438f}, java.util.Arrays.copyOfRange(weights, 2, 4), 1e-6f);
    }

    @Test
    void moduleSinksAndSoftcap() {
        // Zero queries: scores 0 (capped 0); sink ln 2 over 2 keys: weights 1/4 each, output half the mean value.
        Tensor zeros = Tensor.zeros(1, 1, 2);
        Tensor values = Tensor.of(new float[]{2, 4, 6, 8}, 1, 2, 2);
        DecoderOptions o = new DecoderOptions(null, null, null, 0f, 30f, new float[]{LN2});
        AttentionOutput a = ReferenceAttention.multiHead(zeros, values, values, AttentionMask.none(), identity2(), o);
        assertArrayEquals(new float[]{0.25f, 0.25f}, a.weights().toArray(), 1e-7f);
        assertArrayEquals(new float[]{2, 3}, a.output().toArray(), 1e-6f);
    }

    @Test
    void noneMatchesThePlainModule() {
        Tensor x = Tensor.of(new float[]{0.3f, -1, 2, 0.5f, -0.7f, 0.1f}, 1, 3, 2);
        float[] w = {0.5f, -0.2f, 0.3f, 0.9f};
        Parameters p = new Parameters(2, 1, 1, 2, 0.7f, w, w.clone(), w.clone(), w.clone(), null, null, null, null);
        AttentionOutput plain = ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), p);
        AttentionOutput none = ReferenceAttention.multiHead(x, x, x, AttentionMask.causal(), p, DecoderOptions.none());
        assertArrayEquals(plain.output().toArray(), none.output().toArray(), 0f);
        assertArrayEquals(plain.weights().toArray(), none.weights().toArray(), 0f);
    }

    // ---- validation ----

    @Test
    void rejectsBadOptions() {
        assertMessage("softcap: expected 0 (none) or a finite positive value, got -1.0", () -> new ScoreOptions(1f, -1f, null));
        assertMessage("softcap: expected 0 (none) or a finite positive value, got Infinity",
                () -> new ScoreOptions(1f, Float.POSITIVE_INFINITY, null));
        assertMessage("sinks[1]: expected a finite value, got NaN", () -> new ScoreOptions(1f, 0f, new float[]{0, Float.NaN}));
        assertMessage("normEps: expected a finite value >= 0, got -1.0E-6", () -> new DecoderOptions(null, null, null, -1e-6f, 0f, null));
        assertMessage("softcap: expected 0 (none) or a finite positive value, got NaN",
                () -> new DecoderOptions(null, null, null, 0f, Float.NaN, null));
        assertMessage("sinks[0]: expected a finite value, got -Infinity",
                () -> new DecoderOptions(null, null, null, 0f, 0f, new float[]{Float.NEGATIVE_INFINITY}));
    }

    @Test
    void rejectsOptionsThatDoNotFitTheShapes() {
        Tensor q = Tensor.zeros(1, 2, 1, 2), k = Tensor.zeros(1, 1, 3, 2);
        assertMessage("options.sinks: expected length 2, got 1",
                () -> ReferenceAttention.scaledDotProduct(q, k, k, AttentionMask.none(), new ScoreOptions(1f, 0f, new float[]{0})));
        assertThrows(NullPointerException.class, () -> ReferenceAttention.scaledDotProduct(q, k, k, AttentionMask.none(), (ScoreOptions) null));
        Tensor x = Tensor.zeros(1, 2, 2);
        Parameters p = identity2();
        assertThrows(NullPointerException.class, () -> ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p, null));
        assertMessage("o.qNormWeight: expected length 2, got 3", () -> ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p,
                new DecoderOptions(null, new float[3], null, 0f, 0f, null)));
        assertMessage("o.kNormWeight: expected length 2, got 1", () -> ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p,
                new DecoderOptions(null, null, new float[1], 0f, 0f, null)));
        assertMessage("o.sinks: expected length 1, got 2", () -> ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p,
                new DecoderOptions(null, null, null, 0f, 0f, new float[2])));
        assertMessage("o.rope.rotaryDim: expected a positive even value <= head width 2, got 4",
                () -> ReferenceAttention.multiHead(x, x, x, AttentionMask.none(), p,
                        new DecoderOptions(RotaryEmbedding.of(4, 10_000), null, null, 0f, 0f, null)));
        assertMessage("mask.alibi: expected 2 slopes", () -> ReferenceAttention.scaledDotProduct(q, k, k,
                AttentionMask.alibi(new float[]{1}), ScoreOptions.scaled(1f)));
    }

    private static void assertMessage(String prefix, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().startsWith(prefix), e.getMessage());
    }
}
