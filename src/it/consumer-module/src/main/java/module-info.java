/** A downstream application that uses attn4j as a named module. */
module attn4j.consumer {
    requires io.github.attn4j;
    requires java.logging;
}
