-- The SQL guard's corpus (tests/engine/spark/test_spark_guard.py): one statement per paragraph.
-- Relations and functions are placeholders: the test allows every one-part name, so
-- what is judged is the syntax Spark builds. Written for Tessera; not from Spark.
-- Spark 4.3's UNNEST … WITH ORDINALITY, JSON_TABLE and BIN BY are not Spark 4.2's grammar:
-- they come back with a pin on 4.3 (docs/adr/0018-delta-lake-and-spark-4-2.md).

-- @allowed
SELECT /*/**/*/ 1

SELECT /* a /* nested */ comment */ 1 /* and /* another */ */

SELECT a, b AS c, t.* FROM r1 t WHERE a > 1 AND b IS NOT NULL OR c LIKE 'x%' ORDER BY a DESC NULLS LAST LIMIT 10 OFFSET 5

SELECT DISTINCT a FROM r1

SELECT a, count(*), sum(b) FILTER (WHERE b > 0) FROM r1 GROUP BY a HAVING count(*) > 1

SELECT a, b, sum(c) FROM r1 GROUP BY GROUPING SETS ((a, b), (a), ())

SELECT a, b, sum(c) FROM r1 GROUP BY ROLLUP (a, b)

SELECT a, b, sum(c) FROM r1 GROUP BY CUBE (a, b)

SELECT a, sum(c) FROM r1 GROUP BY ALL ORDER BY ALL

SELECT a, grouping(a), grouping_id(a) FROM r1 GROUP BY a WITH ROLLUP

SELECT * FROM r1 JOIN r2 ON r1.a = r2.a LEFT JOIN r3 USING (b) RIGHT OUTER JOIN r4 ON true FULL JOIN r5 ON 1 = 1 CROSS JOIN r6

SELECT * FROM r1 LEFT SEMI JOIN r2 ON r1.a = r2.a LEFT ANTI JOIN r3 ON r1.a = r3.a

SELECT * FROM r1 NATURAL JOIN r2

SELECT * FROM r1, LATERAL (SELECT r1.a + 1 AS x)

SELECT * FROM r1 JOIN LATERAL (SELECT * FROM r2 WHERE r2.a = r1.a) s ON true

SELECT a FROM r1 UNION SELECT a FROM r2 UNION ALL SELECT a FROM r3 INTERSECT SELECT a FROM r4 EXCEPT SELECT a FROM r5 MINUS SELECT a FROM r6

SELECT a FROM r1 INTERSECT ALL SELECT a FROM r2 EXCEPT ALL SELECT a FROM r3

SELECT (SELECT max(a) FROM r2), a IN (SELECT a FROM r3), EXISTS (SELECT 1 FROM r4 WHERE r4.a = r1.a), NOT EXISTS (SELECT 1 FROM r5) FROM r1

SELECT * FROM r1 WHERE (a, b) IN (SELECT a, b FROM r2)

WITH c1 AS (SELECT * FROM r1), c2 AS (SELECT * FROM c1) SELECT * FROM c2

WITH c1 (x, y) AS (SELECT a, b FROM r1) SELECT x FROM c1

WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10) SELECT * FROM c

SELECT a, row_number() OVER (PARTITION BY b ORDER BY c ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), lag(a, 1) OVER w, sum(a) OVER (ORDER BY c RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM r1 WINDOW w AS (PARTITION BY b ORDER BY c)

SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a), listagg(b, ',') WITHIN GROUP (ORDER BY b) FROM r1

SELECT * FROM (SELECT a, b, c FROM r1) PIVOT (sum(c) FOR b IN ('x' AS x, 'y' AS y))

SELECT * FROM r1 UNPIVOT (val FOR name IN (a, b))

SELECT * FROM r1 UNPIVOT INCLUDE NULLS ((v1, v2) FOR name IN ((a, b) AS ab, (c, d) AS cd))

SELECT a, e FROM r1 LATERAL VIEW explode(arr) t AS e

SELECT a, e FROM r1 LATERAL VIEW OUTER posexplode(arr) t AS pos, e

SELECT explode(array(1, 2)), posexplode(array(1,2)), inline(array(struct(1, 'a'))), stack(2, 1, 2, 3, 4)

SELECT * FROM range(10)

SELECT * FROM range(0, 10, 2, 4) AS t(id)

SELECT * FROM explode(array(1, 2, 3))

SELECT * FROM json_tuple('{"a":1}', 'a')

SELECT /*+ BROADCAST(r2), MERGE(r1), SHUFFLE_HASH(r1), SHUFFLE_REPLICATE_NL(r2), COALESCE(3), REPARTITION(3, a), REPARTITION_BY_RANGE(a), REBALANCE */ * FROM r1 JOIN r2 ON r1.a = r2.a

SELECT * FROM r1 TABLESAMPLE (10 PERCENT)

SELECT * FROM r1 TABLESAMPLE (5 ROWS)

SELECT * FROM r1 TABLESAMPLE (BUCKET 1 OUT OF 4) REPEATABLE (42)

SELECT * FROM r1 DISTRIBUTE BY a SORT BY b

SELECT * FROM r1 CLUSTER BY a

SELECT transform(arr, x -> x + 1), filter(arr, x -> x > 0), aggregate(arr, 0, (acc, x) -> acc + x), exists(arr, x -> x = 1), reduce(arr, 0, (a, b) -> a + b) FROM r1

SELECT struct(1 AS a, 'b' AS b), named_struct('a', 1), array(1, 2)[0], map('k', 1)['k'], s.field, s.`weird name` FROM r1

SELECT CAST(a AS DECIMAL(10, 2)), a::string, TRY_CAST(a AS INT), CAST('1' AS INTERVAL DAY) FROM r1

SELECT CASE WHEN a > 1 THEN 'x' WHEN a < 0 THEN 'y' ELSE 'z' END, CASE a WHEN 1 THEN 'one' END, IF(a > 1, 1, 0), coalesce(a, b), nvl(a, 0) FROM r1

SELECT DATE '2020-01-01', TIMESTAMP '2020-01-01 00:00:00', TIMESTAMP_NTZ '2020-01-01 00:00:00', INTERVAL '1' DAY, INTERVAL 1 YEAR 2 MONTHS, INTERVAL '1 2:03:04' DAY TO SECOND, X'CAFE', 1L, 1S, 1Y, 1.5D, 1.5BD, 1e10, -1, +1, 'a' 'b', "double", r'raw\n', TRUE, NULL

SELECT a BETWEEN 1 AND 2, a NOT BETWEEN 1 AND 2, a IN (1, 2), a NOT IN (1, 2), a RLIKE 'x', a REGEXP 'x', a ILIKE 'x', a LIKE ANY ('a', 'b'), a NOT LIKE ALL ('a'), a <=> b, a != b, a <> b, !(a = b), ~a, a & b, a | b, a ^ b, a DIV b, a % b, a || b FROM r1

SELECT a IS TRUE, a IS NOT FALSE, a IS UNKNOWN, a IS DISTINCT FROM b, a IS NOT DISTINCT FROM b FROM r1

SELECT extract(YEAR FROM d), date_part('month', d), trim(BOTH 'x' FROM s), trim(LEADING FROM s), substring(s FROM 1 FOR 2), position('a' IN s), overlay(s PLACING 'x' FROM 1 FOR 2), current_date, current_timestamp, current_user() FROM r1

SELECT count(DISTINCT a), first(a) IGNORE NULLS, last(a, true), any_value(a) RESPECT NULLS FROM r1

SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, name)

VALUES (1, 'a'), (2, 'b')

VALUES (1, abs(-1))

TABLE r1

FROM r1 SELECT a WHERE a > 1

FROM r1 |> WHERE a > 1 |> SELECT a, b |> AGGREGATE sum(b) GROUP BY a |> ORDER BY a |> LIMIT 3

SELECT * FROM r1 WHERE a = (SELECT max(a) FROM r2 WHERE r2.b = r1.b)

SELECT `weird``name`, a AS `x y` FROM r1 AS `t t`

SELECT * EXCEPT (a) FROM r1

SELECT a FROM r1 ORDER BY 1

SELECT a FROM r1 GROUP BY 1

SELECT a, b FROM r1 QUALIFY row_number() OVER (ORDER BY a) = 1

SELECT (a, b) FROM r1

SELECT a COLLATE UTF8_LCASE, collation(a) FROM r1

SELECT try_divide(a, 0), try_add(a, 1), try_to_number('1', '9') FROM r1

SELECT from_json(j, 'a INT'), to_json(struct(a)), schema_of_json('{}'), from_csv(c, 'a INT'), parse_json('{}'), variant_get(parse_json('{}'), '$.a', 'int') FROM r1

SELECT xpath_string('<a>b</a>', 'a'), from_xml('<a>1</a>', 'a INT') FROM r1

SELECT * FROM r1 WHERE a IN (SELECT a FROM r2 UNION SELECT a FROM r3)

SELECT max_by(a, b), min_by(a, b), approx_count_distinct(a), percentile_approx(a, 0.5), collect_list(a), collect_set(a) FROM r1

SELECT a FROM r1 LIMIT ALL

SELECT * FROM (SELECT * FROM r1) AS s(x, y)

SELECT named_struct('a', 1).a

SELECT `__tessera_f1`(a), __tessera_f2(b) FROM `__tessera_r1` AS `orders`

SELECT array_sort(arr, (l, r) -> CASE WHEN l < r THEN -1 ELSE 1 END) FROM r1

SELECT window(ts, '1 minute'), session_window(ts, '5 minutes') FROM r1 GROUP BY 1, 2

SELECT sum(a) OVER (), rank() OVER (ORDER BY a), ntile(4) OVER (ORDER BY a), nth_value(a, 2) IGNORE NULLS OVER (ORDER BY a ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) FROM r1

SELECT mode() WITHIN GROUP (ORDER BY a) FROM r1

SELECT a.b.c.d FROM r1 a

SELECT * FROM r1 LIMIT (SELECT 1)

SELECT a FROM r1 SORT BY a

SELECT format_string('%s', a), printf('%d', 1), sha2(a, 256), md5(a), aes_encrypt(a, 'k'), base64(a), uuid(), rand(42), randn() FROM r1

SELECT to_date(a), to_timestamp(a, 'yyyy'), date_format(a, 'y'), make_interval(1), make_date(2020, 1, 1), unix_timestamp(), from_unixtime(0) FROM r1

SELECT sql_keywords()

SELECT * FROM sql_keywords()

EXPLAIN SELECT 1

EXPLAIN EXTENDED SELECT * FROM r1

EXPLAIN FORMATTED SELECT 1

EXPLAIN CODEGEN SELECT 1

EXPLAIN COST SELECT 1

SELECT * FROM IDENTIFIER('r1')

FROM r1 |> EXTEND a + 1 AS b |> SET b = b * 2 |> DROP b |> AS t

SELECT from_xml('<r><a>1</a></r>', 'a INT', map('rowTag', 'r', 'mode', 'PERMISSIVE')) AS x

SELECT schema_of_xml('<r><a>1</a></r>'), to_xml(named_struct('a', 1), map('rowTag', 'r'))

SELECT from_json('{"a": 1}', 'a INT', map('mode', 'FAILFAST')), from_csv('1', 'a INT', str_to_map('sep:,'))

SELECT * FROM range(0, 10, 1, 4)

SELECT /*+ REPARTITION(8, a), COALESCE(2), REBALANCE(a) */ * FROM r1

SELECT a, e FROM r1 LATERAL VIEW explode(arr) t AS e

SELECT a << 2 FROM t

SELECT a >> 2 FROM t

SELECT a >>> 2 FROM t

SELECT j:a.b[0], j:['k']::INT FROM t

SELECT DATEADD(DAY, 1, d), TIMESTAMPADD(HOUR, 2, ts) FROM t

SELECT DATEDIFF(DAY, d, ts), TIMESTAMPDIFF(MONTH, d, ts) FROM t

SELECT first(a), first(b IGNORE NULLS) FROM t

SELECT last(a), last(b IGNORE NULLS) FROM t

SELECT s ILIKE ANY ('a%', 'B%'), s NOT ILIKE ALL ('x%') FROM t

SELECT CURRENT_PATH

SELECT a IS NOT UNKNOWN FROM t

SELECT * FROM t JOIN u EXACT NEAREST 3 BY DISTANCE abs(t.a - u.a)

SELECT * FROM explode(TABLE(t) PARTITION BY a ORDER BY b)

SELECT * FROM t WATERMARK ts DELAY OF INTERVAL 1 MINUTE

SELECT a IS NOT UNKNOWN, a IS UNKNOWN FROM r1

SELECT first(a), last(a) FROM r1

-- @refused
SELECT a FROM r1 WHERE b = :param

SELECT a FROM r1 WHERE b = ?

SELECT * FROM IDENTIFIER(concat('r', '1'))

SELECT IDENTIFIER('abs')(-1)

SELECT TRANSFORM(a) USING 'cat' AS (x) FROM r1

INSERT OVERWRITE DIRECTORY '/tmp/x' USING parquet SELECT 1

INSERT INTO r1 SELECT 1

WITH c AS (SELECT 1) INSERT INTO r1 SELECT * FROM c

SET spark.sql.shuffle.partitions = 1

SET VAR x = 1

DECLARE v INT

EXECUTE IMMEDIATE 'SELECT 1'

BEGIN SELECT 1; END

CACHE TABLE r1

ADD JAR '/tmp/x.jar'

SELECT * FROM text.`/etc/passwd`

SELECT * FROM parquet.`/tmp`

SELECT * FROM spark_catalog.default.t

SELECT * FROM global_temp.v

SELECT java_method('java.lang.System', 'getenv', 'HOME'), reflect('a', 'b'), try_reflect('a', 'b')

SELECT system.builtin.abs(-1), builtin.abs(-1), session.abs(-1)

SELECT * FROM r1 WITH ('path' = '/etc')

SELECT * FROM STREAM r1

SELECT * FROM python_worker_logs()

SELECT * FROM json.`/etc`

SELECT * FROM csv.`file:///etc/passwd`

SELECT * FROM orc.`/tmp`

SELECT * FROM binaryFile.`/etc`

SELECT * FROM `text`.`/etc/passwd`

SELECT * FROM TEXT.`/etc/passwd`

SELECT * FROM spark_catalog.default.t

SELECT * FROM a.b

SELECT * FROM a.b.c

SELECT reflect('java.lang.System', 'getenv', 'HOME')

SELECT REFLECT('java.lang.Runtime', 'getRuntime')

SELECT try_reflect('java.lang.System', 'exit', 0)

SELECT JaVa_MeThOd('java.lang.System', 'getenv')

SELECT java_method
('java.lang.System', 'getenv', 'HOME')

SELECT java_method/**/('a', 'b')

SELECT /*+ REPARTITION(java_method('java.lang.System', 'exit', 0)) */ * FROM orders

SELECT /*+ BROADCAST(t), COALESCE(reflect('a', 'b')) */ * FROM orders t

SELECT IDENTIFIER('java_method')('java.lang.System', 'getenv', 'HOME')

SELECT * FROM IDENTIFIER('text.`/etc/passwd`')

SELECT * FROM IDENTIFIER(:t)

SELECT builtin.reflect('a', 'b')

SELECT session.java_method('a', 'b')

SELECT * FROM orders WITH ('fs.defaultFS' = 'file:///')

SELECT TRANSFORM(*) USING 'id' FROM orders

SELECT TRANSFORM(a) USING "touch /tmp/x" AS (b) FROM orders

FROM orders SELECT TRANSFORM(a) USING 'cat'

SELECT * FROM (SELECT TRANSFORM(a) USING 'cat' FROM orders)

WITH c AS (SELECT * FROM text.`/etc/passwd`) SELECT * FROM c

WITH `text, /etc/passwd` AS (SELECT 1) SELECT * FROM text.`/etc/passwd`

SELECT (SELECT max(value) FROM text.`/etc/passwd`)

SELECT * FROM orders WHERE EXISTS (SELECT 1 FROM parquet.`/tmp`)

SELECT * FROM orders, LATERAL (SELECT * FROM text.`/etc/passwd`)

VALUES (1, java_method('a', 'b'))

SELECT * FROM range(3) |> EXTEND java_method('a', 'b') AS x

SELECT transform(array(1), x -> reflect('a', 'b'))

INSERT OVERWRITE DIRECTORY '/tmp/out' USING parquet SELECT 1

INSERT OVERWRITE LOCAL DIRECTORY '/tmp/out' STORED AS TEXTFILE SELECT 1

CREATE TABLE t USING parquet LOCATION '/tmp/t' AS SELECT 1

DROP TABLE orders

LOAD DATA INPATH '/etc/passwd' INTO TABLE orders

REFRESH TABLE orders

MSCK REPAIR TABLE orders

ANALYZE TABLE orders COMPUTE STATISTICS

USE spark_catalog

SET spark.sql.variable.substitute = true

RESET

ADD FILE '/etc/passwd'

LIST JAR

SHOW TABLES

DESCRIBE orders

CREATE TEMPORARY FUNCTION f AS 'java.lang.System'

CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1

CREATE GLOBAL TEMPORARY VIEW v AS SELECT 1

UNCACHE TABLE orders

CLEAR CACHE

EXPLAIN INSERT OVERWRITE DIRECTORY '/tmp/out' SELECT 1

EXPLAIN SELECT * FROM text.`/etc/passwd`

SELECT * FROM orders WHERE a = ?

SELECT * FROM orders WHERE a = :name

SELECT * FROM STREAM orders

SELECT * FROM STREAM(orders)

SELECT * FROM python_worker_logs()

SELECT 1 AS a -- \
, java_method('java.lang.System', 'getenv', 'HOME') AS b

SELECT $$ ' $$, 1

SELECT from_xml('<r>1</r>', 'r INT', map('rowValidationXSDPath', 'http://127.0.0.1:1/evil.xsd'))

SELECT from_xml('<r>1</r>', 'r INT', map('ROWVALIDATIONXSDPATH', '/etc/passwd'))

SELECT from_xml('<r>1</r>', 'r INT', str_to_map('rowValidationXSDPath:/etc/passwd'))

SELECT from_xml('<r>1</r>', 'r INT', map_from_arrays(array('rowValidationXSDPath'), array('/etc/passwd')))

SELECT from_xml('<r>1</r>', 'r INT', map(concat('rowValidation', 'XSDPath'), '/etc/passwd'))

SELECT schema_of_xml('<r>1</r>', map('rowValidationXSDPath', '/etc/passwd'))

SELECT from_avro(b, '{"type": "int"}', map('avroSchemaUrl', 'http://x'))

SELECT to_avro(a)

SELECT * FROM range(0, 1, 1, 2000000000)

SELECT * FROM range(0, 1, 1, a)

SELECT /*+ REPARTITION(2000000000) */ * FROM range(10)

SELECT /*+ COALESCE(100000) */ * FROM r1

SELECT /*+ REPARTITION_BY_RANGE(20000, a) */ * FROM r1

SELECT a, x FROM r1 LATERAL VIEW reflect('java.lang.System', 'getenv', 'HOME') t AS x

SELECT a, x FROM r1 LATERAL VIEW OUTER java_method('java.lang.System', 'getenv', 'HOME') t AS x

SELECT * FROM t, UNNEST((SELECT arr FROM text.`/etc/passwd`))

SELECT j:a.b FROM t WHERE reflect('a', 'b') IS NULL

SELECT * FROM t JOIN text.`/etc/passwd` EXACT NEAREST 3 BY DISTANCE abs(t.a - 1)

SELECT * FROM explode(TABLE(text.`/etc/passwd`))

SELECT DATEADD(DAY, java_method('a', 'b'), d) FROM t
