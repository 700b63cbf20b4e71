"""Flight SQL's protobuf messages, generated from Apache Arrow's ``format/FlightSql.proto``
by ``scripts/gen_flightsql.sh`` (do not edit ``FlightSql_pb2.py`` by hand)."""
