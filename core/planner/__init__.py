"""The SQL planner: statement text in, a plan (JSON) out; pure Python (stdlib + sqlglot).

See docs/statements.md for the contract: the reader protocol, the plan JSON, the guard
and the errors.
"""

from core.planner.classify import plan_function_body, plan_statement, statement_kind
from core.planner.errors import (
    ForbiddenSql,
    ParseError,
    TemporaryObjectExists,
    UnsupportedStatement,
)
from core.planner.model import (
    CatalogReader,
    FunctionDef,
    PlanContext,
    Relation,
    TableVersionRef,
    TimeTravel,
    UploadLookup,
    UploadRef,
)
from core.planner.plan import (
    ACTION_KINDS,
    QUERY_ACTIONS,
    ROW_CHANGE_ACTIONS,
    TABLE_CHANGE_ACTIONS,
    WRITE_ACTIONS,
    Action,
    ColumnPlan,
    FunctionPlan,
    Plan,
    PlanKind,
    RelationPlan,
)
from core.planner.tokens import split_script, split_script_spans

__all__ = [
    "ACTION_KINDS",
    "QUERY_ACTIONS",
    "ROW_CHANGE_ACTIONS",
    "TABLE_CHANGE_ACTIONS",
    "WRITE_ACTIONS",
    "Action",
    "CatalogReader",
    "ColumnPlan",
    "ForbiddenSql",
    "FunctionDef",
    "FunctionPlan",
    "ParseError",
    "Plan",
    "PlanContext",
    "PlanKind",
    "Relation",
    "RelationPlan",
    "TableVersionRef",
    "TemporaryObjectExists",
    "TimeTravel",
    "UnsupportedStatement",
    "UploadLookup",
    "UploadRef",
    "plan_function_body",
    "plan_statement",
    "split_script",
    "split_script_spans",
    "statement_kind",
]
