#!/usr/bin/env bash
# Regenerates flightsql/proto/FlightSql_pb2.py(i) from flightsql/proto/FlightSql.proto (Apache
# Arrow's format/FlightSql.proto, copied as is). grpcio-tools is not a dependency of Tessera:
# it is installed into a throw-away venv of its own, with the protobuf the project pins.
set -euo pipefail
cd "$(dirname "$0")/.."
GEN=${GEN_VENV:-var/protoc-venv}
PROTOBUF=$(grep -i '^protobuf==' constraints.txt | cut -d= -f3)
if [[ ! -x $GEN/bin/python ]]; then
    python3 -m venv "$GEN"
    "$GEN/bin/pip" install -q "grpcio-tools==1.85.1" "protobuf==$PROTOBUF"
fi
cd flightsql/proto
"../../$GEN/bin/python" -m grpc_tools.protoc -I. --python_out=. --pyi_out=. Flight.proto FlightSql.proto
