"""The TCLIService protocol: the Thrift code generated from Hive's IDL
(``service-rpc/if/TCLIService.thrift``, protocol versions V1-V10) as PyHive ships it, the one
place this room names it (ADR 0013)."""

from __future__ import annotations

from TCLIService import TCLIService, ttypes  # type: ignore[import-untyped]
from thrift.protocol.TBinaryProtocol import TBinaryProtocol  # type: ignore[import-untyped]
from thrift.Thrift import TType  # type: ignore[import-untyped]

__all__ = ["NEWEST", "BinaryProtocol", "TCLIService", "ttypes"]

# The newest protocol version served: V10, as Spark's Thrift server speaks it.
NEWEST: int = ttypes.TProtocolVersion.HIVE_CLI_SERVICE_PROTOCOL_V10


class BinaryProtocol(TBinaryProtocol):  # type: ignore[misc]
    """Thrift's binary protocol, skipping a string as bytes: Thrift's own ``skip`` decodes it
    as UTF-8, so a call this server does not know whose arguments hold a binary handle (impyla
    tries Impala's ``CloseImpalaOperation`` first) would end the connection instead of being
    answered ``UNKNOWN_METHOD``, which is what the client falls back on."""

    def skip(self, ttype: int, max_depth: int = 64) -> None:
        if ttype == TType.STRING:
            self.readBinary()
            return
        super().skip(ttype, max_depth)
