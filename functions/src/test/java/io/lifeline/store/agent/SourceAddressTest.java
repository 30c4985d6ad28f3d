package io.lifeline.store.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A beat's source address on the agent item ({@code ip}): 4 bytes for IPv4, 16 for IPv6, read back as the same text;
 * anything that is not an address literal (a name, an octet over 255, junk) is not stored, and nothing is looked up.
 */
@Tag("store")
class SourceAddressTest {

    private static String roundTrip(String text) {
        var v = AgentItems.address(text);
        return v == null ? null : AgentItems.addressOf(Map.of(AgentItems.SOURCE, v));
    }

    @Test
    void ipv4_isFourBytes_andReadsBack() {
        assertEquals(4, AgentItems.address("203.0.113.7").b().asByteArray().length);
        assertEquals("203.0.113.7", roundTrip("203.0.113.7"));
    }

    @Test
    void ipv6_isSixteenBytes_andReadsBack() {
        assertEquals(16, AgentItems.address("2001:db8::7").b().asByteArray().length);
        assertEquals("2001:db8:0:0:0:0:0:7", roundTrip("2001:db8::7"));
    }

    @Test
    void notAnAddressLiteral_isNotStored() {
        assertNull(AgentItems.address((String) null));
        assertNull(AgentItems.address("example.com"));
        assertNull(AgentItems.address("256.1.1.1"));
        assertNull(AgentItems.address("1.2.3"));
        assertNull(AgentItems.address("::zz"));
        assertNull(AgentItems.addressOf(Map.of()));
    }
}
