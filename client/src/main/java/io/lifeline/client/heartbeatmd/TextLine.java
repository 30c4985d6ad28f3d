package io.lifeline.client.heartbeatmd;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** One line of the file: its text and its own terminator ({@code "\n"}, {@code "\r\n"} or {@code ""} at the end). */
final class TextLine {
    /**
     * Terminal escape sequences (colour codes and the like): CSI {@code ESC [ ... final}, OSC {@code ESC ] ... BEL}
     * or {@code ESC ] ... ESC \}, two-character {@code ESC x}, and the one-byte CSI U+009B.
     */
    private static final Pattern TERMINAL_ESCAPE = Pattern.compile(
            "\u001B\\[[0-?]*[ -/]*[@-~]|\u001B\\][^\u0007\u001B]*(?:\u0007|\u001B\\\\)?|\u001B[@-_]"
                    + "|\u009B[0-?]*[ -/]*[@-~]");

    String text;
    String eol;

    TextLine(String text, String eol) {
        this.text = text;
        this.eol = eol;
    }

    /** Splits keeping every terminator, so joining the lines gives the text back byte for byte. */
    static List<TextLine> split(String s) {
        List<TextLine> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\n') {
                boolean crlf = i > start && s.charAt(i - 1) == '\r';
                lines.add(new TextLine(s.substring(start, crlf ? i - 1 : i), crlf ? "\r\n" : "\n"));
                start = i + 1;
            }
        }
        if (start < s.length()) {
            lines.add(new TextLine(s.substring(start), ""));
        }
        return lines;
    }

    /** A new line to go right after {@code previous}, taking over its terminator (and giving it one if it had none). */
    static TextLine after(TextLine previous, String text) {
        TextLine line = new TextLine(text, previous.eol);
        if (previous.eol.isEmpty()) {
            previous.eol = "\n";
        }
        return line;
    }

    /**
     * Text as one field value that reads back exactly as written ({@code - **key**: value}): terminal escape
     * sequences removed; control characters (C0, DEL, C1 such as U+0085) and line or paragraph separators
     * (U+2028, U+2029) turned into spaces; every run of white space one space; no white space at either end; an
     * unpaired surrogate (no character at all) U+FFFD. Null gives the empty string.
     */
    static String oneLine(String s) {
        if (s == null) {
            return "";
        }
        String t = TERMINAL_ESCAPE.matcher(s).replaceAll("");
        StringBuilder out = new StringBuilder(t.length());
        boolean gap = false;
        for (int i = 0; i < t.length(); ) {
            int cp = t.codePointAt(i);
            i += Character.charCount(cp);
            if (Character.isISOControl(cp) || Character.isWhitespace(cp) || cp == 0x2028 || cp == 0x2029) {
                gap = true;
                continue;
            }
            if (gap && out.length() > 0) {
                out.append(' ');
            }
            gap = false;
            out.appendCodePoint(Character.getType(cp) == Character.SURROGATE ? 0xFFFD : cp);
        }
        return out.toString();
    }

    /** {@link #oneLine(String)}, cut to at most {@code max} characters (ending in "...") without splitting a pair. */
    static String oneLine(String s, int max) {
        String t = oneLine(s);
        if (t.length() <= max) {
            return t;
        }
        int cut = max - 3;
        if (Character.isLowSurrogate(t.charAt(cut)) && Character.isHighSurrogate(t.charAt(cut - 1))) {
            cut--;
        }
        return t.substring(0, cut).stripTrailing() + "...";
    }
}
