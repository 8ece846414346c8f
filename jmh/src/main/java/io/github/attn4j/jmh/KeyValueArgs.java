package io.github.attn4j.jmh;

import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code key=value} command-line arguments of the benchmark tools ({@link Grid}, {@link OnnxNodeProfile}). */
final class KeyValueArgs {
    private KeyValueArgs() {
    }

    /**
     * {@code defaults} (in their order) with every {@code key=value} of {@code args} put over them.
     *
     * @throws IllegalArgumentException if an argument has no {@code =} or its key is not one of the defaults'
     */
    static Map<String, String> parse(String[] args, Map<String, String> defaults) {
        Map<String, String> opt = new LinkedHashMap<>(defaults);
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 0 || !opt.containsKey(arg.substring(0, eq))) {
                throw new IllegalArgumentException("argument: expected key=value with key in " + opt.keySet() + ", got " + arg);
            }
            opt.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return opt;
    }
}
