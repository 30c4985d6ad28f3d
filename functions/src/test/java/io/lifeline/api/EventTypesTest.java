package io.lifeline.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lifeline.app.EventCatalogue;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The events route's type filter accepts exactly the types the catalogue sends. */
@Tag("unit")
class EventTypesTest {
    @Test
    void eventTypes_ofTheEventsRoute_areExactlyTheCataloguesTypes() throws IllegalAccessException {
        Set<String> catalogue = new TreeSet<>();
        for (Field f : EventCatalogue.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
                catalogue.add((String) f.get(null));
            }
        }
        assertEquals(25, catalogue.size(), catalogue.toString());
        assertEquals(catalogue, new TreeSet<>(TeamHandler.EVENT_TYPES));
    }
}
