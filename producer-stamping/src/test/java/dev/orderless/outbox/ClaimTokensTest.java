package dev.orderless.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ClaimTokensTest {

    @Test
    void two_relays_with_the_same_owner_never_claim_under_the_same_token() {
        ClaimTokens a = new ClaimTokens("host-1@4242");
        ClaimTokens b = new ClaimTokens("host-1@4242");

        assertThat(a.next()).isNotEqualTo(b.next()).startsWith("host-1@4242:");
    }

    @Test
    void one_relay_never_claims_twice_under_the_same_token() {
        ClaimTokens tokens = new ClaimTokens("r");

        assertThat(tokens.next()).isNotEqualTo(tokens.next());
    }
}
