package io.lifeline.local.aws.asl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;

/** Parameters and ResultSelector: JSON whose keys ending in ".$" take their value from a path. */
final class Template {
    private Template() {
    }

    /** Checks every ".$" value is a supported path; the message of the IllegalArgumentException names the key. */
    static void validate(JsonNode template) {
        if (template.isArray()) {
            template.forEach(Template::validate);
        }
        if (!template.isObject()) {
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = template.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String key = field.getKey();
            if (!key.endsWith(".$")) {
                validate(field.getValue());
                continue;
            }
            String plain = key.substring(0, key.length() - 2);
            if (template.has(plain)) {
                throw new IllegalArgumentException("both '" + plain + "' and '" + key + "' are given");
            }
            JsonNode value = field.getValue();
            if (!value.isTextual()) {
                throw new IllegalArgumentException("'" + key + "' must be a path string");
            }
            if (value.asText().startsWith("States.")) {
                throw new IllegalArgumentException("'" + key + "': intrinsic function '" + value.asText()
                        + "' is not supported");
            }
            try {
                RefPath.parse(value.asText());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + key + "': " + e.getMessage());
            }
        }
    }

    /** The template with every ".$" key replaced by the value its path selects; a path selecting nothing fails. */
    static JsonNode apply(JsonNode template, JsonNode input, JsonNode context) {
        if (template.isArray()) {
            ArrayNode out = JsonNodeFactory.instance.arrayNode();
            template.forEach(item -> out.add(apply(item, input, context)));
            return out;
        }
        if (!template.isObject()) {
            return template.deepCopy();
        }
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = template.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String key = field.getKey();
            if (key.endsWith(".$")) {
                String path = field.getValue().asText();
                JsonNode value = RefPath.parse(path).select(input, context).orElseThrow(() -> new PathFailure(
                        "The JSONPath '" + path + "' specified for the field '" + key + "' could not be found in the input"));
                out.set(key.substring(0, key.length() - 2), value.deepCopy());
            } else {
                out.set(key, apply(field.getValue(), input, context));
            }
        }
        return out;
    }
}
