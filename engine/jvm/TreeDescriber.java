// Spark's reading of a text, for Tessera's SQL guard (jobs/executor/sqlguard.py, judged by
// core/planner/spark_guard.py): what its lexer makes of each character, and its parse tree.
//
// Compiled inside the worker's driver JVM by Janino (which Spark ships for code generation), so
// it needs no JDK and no jar of ours. Janino reads Java 1.5-style source: no generics, lambdas
// or diamonds here.
//
// Every case class is walked through scala.Product (its constructor fields, by name), every
// collection element by element: nothing Spark parsed can hide in a field this walker does not
// know. What it cannot take apart it names ("opaque") and the guard refuses unknown names.
// Trees are not recursed into: the JVM and Python both walk any depth without a deep stack.
//
// Results are StringBuilders that Python reads in chunks (py4j answers over ~8 KB wait ~40 ms
// for a delayed ACK), and all text is ASCII.
//
// The tree: {"root": ref, "classes": [name, ...], "fields": [name, ...], "nodes": [node, ...]}.
// Nodes are numbered in the order they are found. A ref is a node's number (a JSON integer),
// a JSON string, true, false or null. A node is a JSON array:
//   ["p"|"e"|"t"|"o", class, field, ref, field, ref, ...]   logical plan, expression, other
//                                                             tree node, other case class
//   ["s", ref, ...]             Scala/Java sequences and sets, Java arrays, Options (0 or 1)
//   ["m", key, value, ...]      Scala maps, Java maps (relation options)
//   ["n", "123"]                numbers and characters, as text
//   ["y", "DECIMAL(10,2)"]      Spark data types, as SQL
//   ["j", class]                Scala objects (case objects: Inner$, ...)
//   ["u", class, "NAME"]        Java enums
//   ["q", class]                anything else (opaque)
// where class and field are numbers into "classes" and "fields".
package tessera.guard;

public class TreeDescriber {

    // What Spark's lexer makes of each character of a text, one character per code point:
    // S (inside a string literal, quotes included), Q (a backquoted identifier), H (a comment or
    // whitespace) or X (other code; a string's prefix letter such as R'…' too, as the planner
    // reads it). The lexer is driven exactly as Spark's parser drives it (AbstractParser.parse:
    // SqlBaseLexer over an UpperCaseCharStream); it takes no settings.
    public StringBuilder lexClasses(String text) {
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
            int start = Math.max(token.getStartIndex(), 0);
            int stop = Math.min(token.getStopIndex(), classes.length - 1);
            for (int i = start; i <= stop; i++) classes[i] = kind;
            if ("STRING_LITERAL".equals(name) && stop > start
                    && Character.isLetter(points[start])) {
                classes[start] = 'X';
            }
        }
        return new StringBuilder(classes.length).append(classes);
    }

    // Everything the guard needs in one call from Python (each py4j round trip costs):
    // {"substitute": <the session's spark.sql.variable.substitute>, "lex": <lexClasses>,
    //  "tree": <described parse>}. A text Spark cannot parse throws Spark's ParseException.
    public StringBuilder inspect(
            org.apache.spark.sql.classic.SparkSession session, String text, boolean expression,
            int maxNodes) throws Exception {
        String substitute = session.conf().get("spark.sql.variable.substitute", "true");
        StringBuilder lex = lexClasses(text);
        StringBuilder tree = parse(
            session.sessionState().sqlParser(), text, expression, maxNodes);
        StringBuilder out = new StringBuilder(lex.length() + tree.length() + 64);
        out.append("{\"substitute\":");
        string(out, substitute);
        out.append(",\"lex\":\"").append(lex).append("\",\"tree\":").append(tree).append('}');
        return out;
    }

    // Spark's parse of a statement (or an expression), described.
    public StringBuilder parse(
            org.apache.spark.sql.catalyst.parser.ParserInterface parser, String text,
            boolean expression, int maxNodes) throws Exception {
        Object tree = expression ? (Object) parser.parseExpression(text) : parser.parsePlan(text);
        return describe(tree, maxNodes);
    }

    public StringBuilder describe(Object root, int maxNodes) {
        return new Description(maxNodes).write(root);
    }

    // One description: its own node list and name tables (the describer is shared by threads).
    private static final class Description {
        private final int maxNodes;
        private final java.util.ArrayList pending = new java.util.ArrayList();
        private final java.util.HashMap classIndex = new java.util.HashMap();
        private final java.util.ArrayList classNames = new java.util.ArrayList();
        private final java.util.HashMap fieldIndex = new java.util.HashMap();
        private final java.util.ArrayList fieldNames = new java.util.ArrayList();

        Description(int maxNodes) {
            this.maxNodes = maxNodes;
        }

        StringBuilder write(Object root) {
            StringBuilder nodes = new StringBuilder(4096);
            StringBuilder rootRef = new StringBuilder();
            ref(rootRef, root);
            for (int i = 0; i < pending.size(); i++) {
                if (i > 0) nodes.append(',');
                node(nodes, pending.get(i));
            }
            StringBuilder out = new StringBuilder(nodes.length() + 1024);
            out.append("{\"root\":").append(rootRef).append(",\"classes\":[");
            names(out, classNames);
            out.append("],\"fields\":[");
            names(out, fieldNames);
            out.append("],\"nodes\":[").append(nodes).append("]}");
            return out;
        }

        private static void names(StringBuilder out, java.util.ArrayList names) {
            for (int i = 0; i < names.size(); i++) {
                if (i > 0) out.append(',');
                string(out, (String) names.get(i));
            }
        }

        private static int intern(
                String name, java.util.HashMap index, java.util.ArrayList names) {
            Integer found = (Integer) index.get(name);
            if (found != null) return found.intValue();
            index.put(name, Integer.valueOf(names.size()));
            names.add(name);
            return names.size() - 1;
        }

        private int className(Object value) {
            return intern(value.getClass().getName(), classIndex, classNames);
        }

        private void ref(StringBuilder out, Object value) {
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
                out.append(pending.size());
                pending.add(value);
            }
        }

        private void node(StringBuilder out, Object value) {
            if (value instanceof Number || value instanceof Character) {
                out.append("[\"n\",");
                string(out, value.toString());
                out.append(']');
            } else if (value instanceof org.apache.spark.sql.types.DataType) {
                out.append("[\"y\",");
                string(out, ((org.apache.spark.sql.types.DataType) value).sql());
                out.append(']');
            } else if (value instanceof scala.Option) {
                // Some(x) is a sequence of x, None an empty one: one node kind fewer.
                scala.Option option = (scala.Option) value;
                out.append("[\"s\"");
                if (!option.isEmpty()) {
                    out.append(',');
                    ref(out, option.get());
                }
                out.append(']');
            } else if (value instanceof java.util.Map) {
                // CaseInsensitiveStringMap (relation options) and other Java maps.
                out.append("[\"m\"");
                java.util.Iterator entries = ((java.util.Map) value).entrySet().iterator();
                while (entries.hasNext()) {
                    java.util.Map.Entry entry = (java.util.Map.Entry) entries.next();
                    out.append(',');
                    ref(out, entry.getKey());
                    out.append(',');
                    ref(out, entry.getValue());
                }
                out.append(']');
            } else if (value instanceof scala.collection.Map) {
                out.append("[\"m\"");
                scala.collection.Iterator entries = ((scala.collection.Map) value).iterator();
                while (entries.hasNext()) {
                    scala.Tuple2 entry = (scala.Tuple2) entries.next();
                    out.append(',');
                    ref(out, entry._1());
                    out.append(',');
                    ref(out, entry._2());
                }
                out.append(']');
            } else if (value instanceof org.apache.spark.sql.catalyst.trees.TreeNode) {
                String kind = "t";
                if (value instanceof org.apache.spark.sql.catalyst.plans.logical.LogicalPlan) {
                    kind = "p";
                } else if (value instanceof org.apache.spark.sql.catalyst.expressions.Expression) {
                    kind = "e";
                }
                product(out, kind, (scala.Product) value);
            } else if (value instanceof scala.collection.Iterable) {
                out.append("[\"s\"");
                scala.collection.Iterator items = ((scala.collection.Iterable) value).iterator();
                while (items.hasNext()) {
                    out.append(',');
                    ref(out, items.next());
                }
                out.append(']');
            } else if (value instanceof java.util.Collection) {
                out.append("[\"s\"");
                java.util.Iterator items = ((java.util.Collection) value).iterator();
                while (items.hasNext()) {
                    out.append(',');
                    ref(out, items.next());
                }
                out.append(']');
            } else if (value instanceof Object[]) {
                Object[] items = (Object[]) value;
                out.append("[\"s\"");
                for (int i = 0; i < items.length; i++) {
                    out.append(',');
                    ref(out, items[i]);
                }
                out.append(']');
            } else if (value instanceof java.lang.Enum) {
                out.append("[\"u\",").append(className(value)).append(',');
                string(out, ((java.lang.Enum) value).name());
                out.append(']');
            } else if (value.getClass().getName().endsWith("$")) {
                out.append("[\"j\",").append(className(value)).append(']');
            } else if (value instanceof scala.Product) {
                product(out, "o", (scala.Product) value);
            } else {
                out.append("[\"q\",").append(className(value)).append(']');
            }
        }

        private void product(StringBuilder out, String kind, scala.Product value) {
            out.append("[\"").append(kind).append("\",").append(className(value));
            int arity = value.productArity();
            for (int i = 0; i < arity; i++) {
                out.append(',').append(intern(value.productElementName(i), fieldIndex, fieldNames));
                out.append(',');
                ref(out, value.productElement(i));
            }
            out.append(']');
        }
    }

    private static void string(StringBuilder out, String text) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7E) {  // ASCII only: one byte per character on the wire
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
