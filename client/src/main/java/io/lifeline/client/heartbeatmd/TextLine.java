package io.lifeline.client.heartbeatmd;

import java.util.ArrayList;
import java.util.List;

/** One line of the file: its text and its own terminator ({@code "\n"}, {@code "\r\n"} or {@code ""} at the end). */
final class TextLine {
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
}
