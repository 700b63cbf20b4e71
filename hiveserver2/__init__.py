"""HiveServer2: Tessera's statements and catalog over the TCLIService Thrift protocol (JDBC,
ODBC, PyHive, dbt-spark), beside the REST API and never around it (docs/api.md, "HiveServer2";
ADR 0013)."""
