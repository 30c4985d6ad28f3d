package io.lifeline.engine.expr;

import java.util.List;

/**
 * A document path, its names already resolved from {@code #aliases}: {@code a.b[2].c} is
 * {@code [Name a, Name b, Index 2, Name c]}.
 *
 * @param elements the path's steps, the first always a name
 */
public record Path(List<Element> elements) {
    /** One step of a path. */
    public sealed interface Element permits Name, Index {
    }

    /** A map key (or the item's top-level attribute). */
    public record Name(String name) implements Element {
    }

    /** A list index. */
    public record Index(int index) implements Element {
    }

    /** The top-level attribute the path starts from. */
    public String root() {
        return ((Name) elements.get(0)).name();
    }

    /** Whether this path is a prefix of {@code other} or the other way round (AWS's "overlap"). */
    public boolean overlaps(Path other) {
        int n = Math.min(elements.size(), other.elements.size());
        return elements.subList(0, n).equals(other.elements.subList(0, n));
    }

    /** As AWS prints a path in its messages: {@code [a, b, [2]]}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < elements.size(); i++) {
            b.append(i == 0 ? "" : ", ");
            Element e = elements.get(i);
            b.append(e instanceof Name nm ? nm.name() : "[" + ((Index) e).index() + "]");
        }
        return b.append(']').toString();
    }
}
