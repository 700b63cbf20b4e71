package tessera.jdbc;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Drives Apache Hive's JDBC driver for tests/hiveserver2/test_jdbc.py.
 *
 * <p>Usage: {@code java -cp ... tessera.jdbc.JdbcHarness URL USER PASSWORD}, then one command a
 * line on stdin, all on the one connection (so one HiveServer2 session):
 *
 * <ul>
 *   <li>{@code sql STATEMENT}: Statement.execute; the result set's columns and rows, if any.
 *   <li>{@code catalogs}, {@code schemas CATALOG SCHEMA_PATTERN}, {@code tables CATALOG
 *       SCHEMA_PATTERN TABLE_PATTERN}, {@code columns CATALOG SCHEMA_PATTERN TABLE_PATTERN}:
 *       DatabaseMetaData calls ({@code -} for null).
 *   <li>{@code cancel SECONDS STATEMENT}: runs the statement in a thread, calls
 *       Statement.cancel after SECONDS, reports how the execute ended.
 * </ul>
 *
 * <p>Every answer is one JSON line on stdout: {@code {"columns": [...], "types": [...], "rows":
 * [[...], ...]}}, or {@code {"error": MESSAGE, "sqlstate": STATE}}. A failed connect is one
 * {@code {"connect_error": MESSAGE}} line and exit status 2.
 */
public final class JdbcHarness {
  private JdbcHarness() {}

  public static void main(String[] args) throws Exception {
    Class.forName("org.apache.hive.jdbc.HiveDriver");
    Connection conn;
    try {
      conn = DriverManager.getConnection(args[0], args[1], args[2]);
    } catch (SQLException e) {
      System.out.println("{\"connect_error\": " + quote(String.valueOf(e.getMessage())) + "}");
      System.exit(2);
      return;
    }
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      String answer;
      try {
        answer = run(conn, line);
      } catch (SQLException e) {
        answer =
            "{\"error\": "
                + quote(String.valueOf(e.getMessage()))
                + ", \"sqlstate\": "
                + quote(e.getSQLState())
                + "}";
      }
      System.out.println(answer);
      System.out.flush();
    }
    conn.close();
  }

  private static String run(Connection conn, String line) throws Exception {
    String[] words = line.split(" ", 2);
    String rest = words.length > 1 ? words[1] : "";
    DatabaseMetaData meta = conn.getMetaData();
    switch (words[0]) {
      case "sql":
        try (Statement stmt = conn.createStatement()) {
          if (stmt.execute(rest)) {
            try (ResultSet rs = stmt.getResultSet()) {
              return table(rs);
            }
          }
          return "{\"columns\": [], \"types\": [], \"rows\": []}";
        }
      case "catalogs":
        return table(meta.getCatalogs());
      case "schemas":
        {
          String[] a = args(rest, 2);
          return table(meta.getSchemas(a[0], a[1]));
        }
      case "tables":
        {
          String[] a = args(rest, 3);
          return table(meta.getTables(a[0], a[1], a[2], null));
        }
      case "columns":
        {
          String[] a = args(rest, 3);
          return table(meta.getColumns(a[0], a[1], a[2], null));
        }
      case "cancel":
        return cancel(conn, rest);
      default:
        throw new IllegalArgumentException("unknown command " + words[0]);
    }
  }

  private static String cancel(Connection conn, String rest) throws Exception {
    String[] parts = rest.split(" ", 2);
    long waitMillis = (long) (Double.parseDouble(parts[0]) * 1000);
    Statement stmt = conn.createStatement();
    AtomicReference<String> outcome = new AtomicReference<>("finished");
    long start = System.nanoTime();
    Thread runner =
        new Thread(
            () -> {
              try {
                stmt.execute(parts[1]);
              } catch (SQLException e) {
                outcome.set("error: " + e.getMessage());
              }
            });
    runner.start();
    Thread.sleep(waitMillis);
    stmt.cancel();
    runner.join(120_000);
    double seconds = (System.nanoTime() - start) / 1e9;
    stmt.close();
    return "{\"outcome\": "
        + quote(runner.isAlive() ? "still running" : outcome.get())
        + ", \"seconds\": "
        + seconds
        + "}";
  }

  private static String[] args(String rest, int n) {
    String[] a = rest.split(" ", n);
    String[] out = new String[n];
    for (int i = 0; i < n; i++) {
      out[i] = i < a.length && !a[i].equals("-") ? a[i] : null;
    }
    return out;
  }

  private static String table(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    int n = md.getColumnCount();
    List<String> columns = new ArrayList<>();
    List<String> types = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      columns.add(quote(md.getColumnLabel(i)));
      types.add(quote(md.getColumnTypeName(i)));
    }
    StringBuilder rows = new StringBuilder("[");
    boolean first = true;
    while (rs.next()) {
      rows.append(first ? "[" : ", [");
      first = false;
      for (int i = 1; i <= n; i++) {
        if (i > 1) {
          rows.append(", ");
        }
        Object value = rs.getObject(i);
        if (value == null) {
          rows.append("null");
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long
            || value instanceof Short || value instanceof Byte) {
          rows.append(value);
        } else {
          // Decimals, doubles, dates and text as their text, compared exactly by the test.
          rows.append(quote(value.toString()));
        }
      }
      rows.append("]");
    }
    rows.append("]");
    rs.close();
    return "{\"columns\": "
        + columns
        + ", \"types\": "
        + types
        + ", \"rows\": "
        + rows
        + "}";
  }

  private static String quote(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        case '\r':
          b.append("\\r");
          break;
        case '\t':
          b.append("\\t");
          break;
        default:
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
      }
    }
    return b.append('"').toString();
  }
}
