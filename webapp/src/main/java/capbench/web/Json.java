package capbench.web;

import java.util.LinkedHashMap;
import java.util.Map;

/** A one-line JSON object writer for the servlet's small, flat responses (strings and numbers only). */
final class Json {

    private final Map<String, Object> fields = new LinkedHashMap<>();

    Json put(String name, Object value) {
        if (value != null) {
            fields.put(name, value);
        }
        return this;
    }

    /** This object's fields, then `other`'s. */
    Json merge(Json other) {
        fields.putAll(other.fields);
        return this;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, Object> field : fields.entrySet()) {
            if (out.length() > 1) {
                out.append(',');
            }
            appendString(out, field.getKey());
            out.append(':');
            Object value = field.getValue();
            if (value instanceof Number || value instanceof Boolean) {
                out.append(value);
            } else {
                appendString(out, String.valueOf(value));
            }
        }
        return out.append('}').toString();
    }

    private static void appendString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
