package io.lifeline.engine.expr;

import io.lifeline.engine.Errors;
import io.lifeline.engine.expr.Parser.Kind;
import io.lifeline.engine.expr.Parser.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Splits an expression into words, {@code #names}, {@code :values}, list indexes and punctuation. */
final class Lexer {
    /** Tokens of expressions seen before: callers send the same few expressions again and again. Bounded. */
    private static final Map<String, List<Token>> SEEN = new ConcurrentHashMap<>();
    private static final int MAX_SEEN = 4096;

    private Lexer() {
    }

    static List<Token> lex(String s, String prefix) {
        List<Token> seen = s == null ? null : SEEN.get(s);
        if (seen != null) {
            return seen;
        }
        List<Token> tokens = List.copyOf(scan(s, prefix));
        if (SEEN.size() >= MAX_SEEN) {
            SEEN.clear();
        }
        SEEN.put(s, tokens);
        return tokens;
    }

    private static List<Token> scan(String s, String prefix) {
        if (s == null || s.isBlank()) {
            throw Errors.validation(prefix + "The expression can not be empty;");
        }
        List<Token> out = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
                continue;
            }
            int start = i;
            if (c == '#' || c == ':') {
                i = word(s, i + 1);
                if (i == start + 1) {
                    throw Errors.validation(prefix + "Syntax error; token: \"" + c + "\", near: \""
                            + s.substring(start, Math.min(s.length(), start + 10)) + "\"");
                }
                out.add(new Token(c == '#' ? Kind.NAME : Kind.VALUE, s.substring(start, i), start));
            } else if (Character.isLetter(c) || c == '_') {
                i = word(s, i);
                out.add(new Token(Kind.WORD, s.substring(start, i), start));
            } else if (Character.isDigit(c)) {
                while (i < s.length() && Character.isDigit(s.charAt(i))) {
                    i++;
                }
                out.add(new Token(Kind.INDEX, s.substring(start, i), start));
            } else if ((c == '<' || c == '>') && i + 1 < s.length()
                    && (s.charAt(i + 1) == '=' || c == '<' && s.charAt(i + 1) == '>')) {
                out.add(new Token(Kind.PUNCT, s.substring(i, i + 2), start));
                i += 2;
            } else if ("=<>()[],.+-".indexOf(c) >= 0) {
                out.add(new Token(Kind.PUNCT, String.valueOf(c), start));
                i++;
            } else {
                throw Errors.validation(prefix + "Invalid character encountered; character: " + c + " near: \""
                        + s.substring(start, Math.min(s.length(), start + 10)) + "\"");
            }
        }
        out.add(new Token(Kind.END, "", s.length()));
        return out;
    }

    private static int word(String s, int i) {
        while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_')) {
            i++;
        }
        return i;
    }
}
