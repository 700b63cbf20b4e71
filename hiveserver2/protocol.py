"""The TCLIService protocol: the Thrift code generated from Hive's IDL
(``service-rpc/if/TCLIService.thrift``, protocol versions V1-V10) as PyHive ships it, the one
place this room names it (ADR 0013)."""

from __future__ import annotations

from TCLIService import TCLIService, ttypes  # type: ignore[import-untyped]

__all__ = ["NEWEST", "TCLIService", "ttypes"]

# The newest protocol version served: V10, as Spark's Thrift server speaks it.
NEWEST: int = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10
