"""The catalog's ``Reach`` (``catalog.bodies``): a stored body planned in the web process with
a given user's rights, as a statement of theirs would be, before the catalog stores it or
hands its object to another owner. Planning only: nothing reaches a worker."""

from __future__ import annotations

from typing import Any

from catalog.bodies import install
from core.errors import CoreError
from core.identifiers import ObjectIdentifier
from core.planner import Action, plan_function_body, plan_statement
from sessions.analysis import view_context
from sessions.catalog_reader import DjangoCatalogReader


class PlannedReach:
    """``catalog.bodies.Reach`` backed by the planner and the catalog reader of ``user``."""

    def view_query(self, catalog: str, database: str, query: str, *, user: Any) -> None:
        reader = DjangoCatalogReader(user=user)
        plan = plan_statement(query, reader, view_context(catalog, database))
        if plan.action != Action.QUERY:
            raise CoreError(
                "A view's query must be a query (SELECT, WITH, VALUES or TABLE).",
                details={"field": "query"},
            )

    def function_body(
        self, catalog: str, database: str, name: str, body: str, *, user: Any
    ) -> None:
        reader = DjangoCatalogReader(user=user)
        ident = ObjectIdentifier(catalog, database, name)
        plan_function_body(body, ident, reader, view_context(catalog, database))


def install_reach() -> None:
    """Called by ``JobsConfig.ready``: the catalog plans bodies through the planner."""
    install(PlannedReach())
