// Describes a Spark parse tree (a LogicalPlan or an Expression, as Spark's own parser made it)
// as flat JSON, for Tessera's SQL guard (jobs/executor/sqlguard.py, core/planner/spark_guard.py).
//
// Compiled inside the worker's driver JVM by Janino (which Spark ships for code generation), so
// it needs no JDK and no jar of ours. Janino reads Java 1.5-style source: no generics, lambdas
// or diamonds here.
//
// Every case class is walked through scala.Product (its constructor fields, by name), every
// collection element by element: nothing Spark parsed can hide in a field this walker does not
// know. What it cannot take apart it names ("opaque") and the guard refuses unknown names.
//
// Output: {"root": <ref>, "nodes": [<node>, ...]}, nodes numbered in the order they are found.
// A ref is a JSON string, true/false, null, or {"#": index}. A node is one of
//   {"k": "plan"|"expr"|"tree"|"product", "c": class, "f": [[name, ref], ...]}
//   {"k": "seq", "items": [ref, ...]}          Scala/Java sequences and sets, Java arrays
//   {"k": "map", "items": [[ref, ref], ...]}   Scala maps, Java maps (options)
//   {"k": "num", "v": "123"}                    numbers and characters, as text
//   {"k": "type", "v": "DECIMAL(10,2)"}         Spark data types, as SQL
//   {"k": "object", "c": class}                 Scala objects (case objects: Inner$, ...)
//   {"k": "enum", "c": class, "v": name}        Java enums
//   {"k": "opaque", "c": class}                 anything else
// Trees are not recursed into: the JVM and Python both walk any depth without a deep stack.
package tessera.guard;

public class TreeDescriber {
    private int maxNodes = 1000000;

    // Spark's parse of a statement (or an expression), described: one call from Python.
    public String parse(
            org.apache.spark.sql.catalyst.parser.ParserInterface parser, String text,
            boolean expression, int maxNodes) throws Exception {
        Object tree = expression ? (Object) parser.parseExpression(text) : parser.parsePlan(text);
        return describe(tree, maxNodes);
    }

    // Not thread-safe: callers hold one describer per thread or serialise (sqlguard does).
    public synchronized String describe(Object root, int maxNodes) {
        this.maxNodes = maxNodes;
        java.util.ArrayList pending = new java.util.ArrayList();
        StringBuilder out = new StringBuilder(4096);
        out.append("{\"root\":");
        ref(out, root, pending);
        out.append(",\"nodes\":[");
        for (int i = 0; i < pending.size(); i++) {
            if (i > 0) out.append(',');
            node(out, pending.get(i), pending);
        }
        out.append("]}");
        return out.toString();
    }

    // What Spark's lexer makes of each character of a text, as one character per code point:
    // S (inside a string literal, quotes included), Q (a backquoted identifier), H (a comment or
    // whitespace) or X (other code). The lexer is driven exactly as Spark's parser drives it
    // (AbstractParser.parse: SqlBaseLexer over an UpperCaseCharStream); it takes no settings.
    public String lexClasses(String text) {
        org.antlr.v4.runtime.CodePointCharStream chars =
            org.antlr.v4.runtime.CharStreams.fromString(text);
        org.apache.spark.sql.catalyst.parser.SqlBaseLexer lexer =
            new org.apache.spark.sql.catalyst.parser.SqlBaseLexer(
                new org.apache.spark.sql.catalyst.parser.UpperCaseCharStream(chars));
        lexer.removeErrorListeners();
        org.antlr.v4.runtime.Vocabulary vocabulary = lexer.getVocabulary();
        int[] points = text.codePoints().toArray();
        char[] classes = new char[chars.size()];
        java.util.Arrays.fill(classes, 'X');
        while (true) {
            org.antlr.v4.runtime.Token token = lexer.nextToken();
            if (token.getType() == org.antlr.v4.runtime.Token.EOF) break;
            String name = vocabulary.getSymbolicName(token.getType());
            char kind = 'X';
            if ("STRING_LITERAL".equals(name) && token.getStopIndex() > token.getStartIndex()
                    && Character.isLetter(points[token.getStartIndex()])) {
                // R'…': the prefix letter is code, as in the planner's reading (X'…', N'…').
                int stop = Math.min(token.getStopIndex(), classes.length - 1);
                classes[token.getStartIndex()] = 'X';
                for (int i = token.getStartIndex() + 1; i <= stop; i++) classes[i] = 'S';
                continue;
            }
            if ("STRING_LITERAL".equals(name) || "DOUBLEQUOTED_STRING".equals(name)
                    || "BEGIN_DOLLAR_QUOTED_STRING".equals(name)
                    || "DOLLAR_QUOTED_STRING_BODY".equals(name)
                    || "END_DOLLAR_QUOTED_STRING".equals(name)) {
                kind = 'S';
            } else if ("BACKQUOTED_IDENTIFIER".equals(name)) {
                kind = 'Q';
            } else if ("SIMPLE_COMMENT".equals(name) || "BRACKETED_COMMENT".equals(name)
                    || "WS".equals(name)) {
                kind = 'H';
            }
            int stop = Math.min(token.getStopIndex(), classes.length - 1);
            for (int i = Math.max(token.getStartIndex(), 0); i <= stop; i++) classes[i] = kind;
        }
        return new String(classes);
    }

    private void ref(StringBuilder out, Object value, java.util.ArrayList pending) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof org.apache.spark.unsafe.types.UTF8String) {
            string(out, value.toString());
        } else if (value instanceof Boolean) {
            out.append(((Boolean) value).booleanValue() ? "true" : "false");
        } else {
            if (pending.size() >= maxNodes) {
                throw new IllegalStateException(
                    "The statement has more than " + maxNodes + " parts to check.");
            }
            out.append("{\"#\":").append(pending.size()).append('}');
            pending.add(value);
        }
    }

    private void node(StringBuilder out, Object value, java.util.ArrayList pending) {
        if (value instanceof Number || value instanceof Character) {
            out.append("{\"k\":\"num\",\"v\":");
            string(out, value.toString());
            out.append('}');
        } else if (value instanceof org.apache.spark.sql.types.DataType) {
            out.append("{\"k\":\"type\",\"v\":");
            string(out, ((org.apache.spark.sql.types.DataType) value).sql());
            out.append('}');
        } else if (value instanceof scala.Option) {
            // Some(x) is x itself, None is null: one node kind fewer for the guard.
            scala.Option option = (scala.Option) value;
            out.append("{\"k\":\"seq\",\"items\":[");
            if (!option.isEmpty()) ref(out, option.get(), pending);
            out.append("]}");
        } else if (value instanceof java.util.Map) {
            // CaseInsensitiveStringMap (relation options) and other Java maps.
            out.append("{\"k\":\"map\",\"items\":[");
            java.util.Iterator entries = ((java.util.Map) value).entrySet().iterator();
            boolean first = true;
            while (entries.hasNext()) {
                java.util.Map.Entry entry = (java.util.Map.Entry) entries.next();
                if (!first) out.append(',');
                first = false;
                out.append('[');
                ref(out, entry.getKey(), pending);
                out.append(',');
                ref(out, entry.getValue(), pending);
                out.append(']');
            }
            out.append("]}");
        } else if (value instanceof scala.collection.Map) {
            out.append("{\"k\":\"map\",\"items\":[");
            scala.collection.Iterator entries = ((scala.collection.Map) value).iterator();
            boolean first = true;
            while (entries.hasNext()) {
                scala.Tuple2 entry = (scala.Tuple2) entries.next();
                if (!first) out.append(',');
                first = false;
                out.append('[');
                ref(out, entry._1(), pending);
                out.append(',');
                ref(out, entry._2(), pending);
                out.append(']');
            }
            out.append("]}");
        } else if (value instanceof org.apache.spark.sql.catalyst.trees.TreeNode) {
            String kind = "tree";
            if (value instanceof org.apache.spark.sql.catalyst.plans.logical.LogicalPlan) {
                kind = "plan";
            } else if (value instanceof org.apache.spark.sql.catalyst.expressions.Expression) {
                kind = "expr";
            }
            product(out, kind, (scala.Product) value, pending);
        } else if (value instanceof scala.collection.Iterable) {
            out.append("{\"k\":\"seq\",\"items\":[");
            scala.collection.Iterator items = ((scala.collection.Iterable) value).iterator();
            boolean first = true;
            while (items.hasNext()) {
                if (!first) out.append(',');
                first = false;
                ref(out, items.next(), pending);
            }
            out.append("]}");
        } else if (value instanceof java.util.Collection) {
            out.append("{\"k\":\"seq\",\"items\":[");
            java.util.Iterator items = ((java.util.Collection) value).iterator();
            boolean first = true;
            while (items.hasNext()) {
                if (!first) out.append(',');
                first = false;
                ref(out, items.next(), pending);
            }
            out.append("]}");
        } else if (value instanceof Object[]) {
            Object[] items = (Object[]) value;
            out.append("{\"k\":\"seq\",\"items\":[");
            for (int i = 0; i < items.length; i++) {
                if (i > 0) out.append(',');
                ref(out, items[i], pending);
            }
            out.append("]}");
        } else if (value instanceof java.lang.Enum) {
            out.append("{\"k\":\"enum\",\"c\":");
            string(out, value.getClass().getName());
            out.append(",\"v\":");
            string(out, ((java.lang.Enum) value).name());
            out.append('}');
        } else if (value.getClass().getName().endsWith("$")) {
            out.append("{\"k\":\"object\",\"c\":");
            string(out, value.getClass().getName());
            out.append('}');
        } else if (value instanceof scala.Product) {
            product(out, "product", (scala.Product) value, pending);
        } else {
            out.append("{\"k\":\"opaque\",\"c\":");
            string(out, value.getClass().getName());
            out.append('}');
        }
    }

    private void product(
            StringBuilder out, String kind, scala.Product value, java.util.ArrayList pending) {
        out.append("{\"k\":\"").append(kind).append("\",\"c\":");
        string(out, value.getClass().getName());
        out.append(",\"f\":[");
        int arity = value.productArity();
        for (int i = 0; i < arity; i++) {
            if (i > 0) out.append(',');
            out.append('[');
            string(out, value.productElementName(i));
            out.append(',');
            ref(out, value.productElement(i), pending);
            out.append(']');
        }
        out.append("]}");
    }

    private static void string(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || (c >= 0xD800 && c <= 0xDFFF) || c == 0x2028 || c == 0x2029) {
                String hex = Integer.toHexString(c);
                out.append("\\u");
                for (int k = hex.length(); k < 4; k++) out.append('0');
                out.append(hex);
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
