"""Views and functions: create, read, patch, delete, and their validation."""

from __future__ import annotations

import pytest

from catalog.models import Column, Function, Table
from tests.conftest import API, assert_error

pytestmark = pytest.mark.django_db

VIEWS = f"{API}/catalogs/demo/databases/default/views"
FUNCTIONS = f"{API}/catalogs/demo/databases/default/functions"


@pytest.fixture
def demo(make):
    make.catalog("demo")


# --- views -----------------------------------------------------------------------------------


def test_view_with_a_declared_schema(alice_api, demo, analyzer):
    # The declared schema must match the one Spark derives (types); its names win.
    body = {
        "name": "Recent",
        "query": "SELECT CAST(7 AS BIGINT) AS n, now() - INTERVAL 1 DAY AS at",
        "comment": "last day",
        "schema": {
            "columns": [
                {"name": "id", "data_type": "BIGINT"},
                {"name": "ts", "data_type": "TIMESTAMP"},
            ]
        },
    }
    response = alice_api.post(VIEWS, body)
    assert response.status_code == 201, response.content
    view = response.json()
    assert view == alice_api.get(f"{VIEWS}/recent").json()
    assert view["kind"] == "view"
    assert (view["catalog"], view["database"], view["name"]) == ("demo", "default", "Recent")
    assert view["query"] == body["query"]
    assert view["expanded_query"] is None  # the planner expands it
    assert view["comment"] == "last day"
    assert view["created_by"] == "alice"
    assert view["schema"]["columns"] == [
        {"name": "id", "kind": "physical", "data_type": "BIGINT"},
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP"},
    ]
    assert view["resolved_schema"]["columns"] == [
        {"name": "id", "kind": "physical", "data_type": "BIGINT", "nullable": True},
        {"name": "ts", "kind": "physical", "data_type": "TIMESTAMP", "nullable": True},
    ]
    assert "options" not in view and "managed" not in view
    assert list(Column.objects.values_list("name", flat=True)) == ["id", "ts"]


def test_view_without_a_schema_gets_the_one_spark_derives(alice_api, demo, analyzer):
    response = alice_api.post(VIEWS, {"name": "v", "query": "SELECT 1 AS one, 'x' AS s"})
    assert response.status_code == 201, response.content
    view = response.json()
    assert view["schema"]["columns"] == [
        {"name": "one", "kind": "physical", "data_type": "INT NOT NULL"},
        {"name": "s", "kind": "physical", "data_type": "STRING NOT NULL"},
    ]
    assert view["resolved_schema"]["expressions_resolved"] is True
    assert list(Column.objects.values_list("name", "data_type")) == [
        ("one", "INT NOT NULL"),
        ("s", "STRING NOT NULL"),
    ]


def test_patch_view(alice_api, make, demo, analyzer):
    make.view("demo", "default", "v", comment="old")
    response = alice_api.patch(
        f"{VIEWS}/V",
        {
            "query": "SELECT 2 AS two",
            "comment": "new",
            "schema": {"columns": [{"name": "two", "data_type": "INT"}]},
        },
    )
    assert response.status_code == 200, response.content
    view = response.json()
    assert view["query"] == "SELECT 2 AS two"
    assert view["comment"] == "new"
    assert view["resolved_schema"]["columns"][0]["name"] == "two"
    assert view == alice_api.get(f"{VIEWS}/v").json()
    assert list(Column.objects.values_list("name", flat=True)) == ["two"]


def test_list_and_delete_views(alice_api, make, demo, analyzer):
    make.view("demo", "default", "b")
    make.view("demo", "default", "A")
    make.table("demo", "default", "t")
    listed = alice_api.get(VIEWS).json()
    assert [v["name"] for v in listed["items"]] == ["A", "b"]
    assert all(v["kind"] == "view" for v in listed["items"])

    assert alice_api.delete(f"{VIEWS}/a").status_code == 204
    assert_error(alice_api.get(f"{VIEWS}/a"), 404, "NOT_FOUND", "View `demo`.`default`.`a`")
    # A table is not a view: it cannot be fetched or dropped through /views.
    assert_error(alice_api.get(f"{VIEWS}/t"), 404, "NOT_FOUND", "is a table")
    assert_error(alice_api.delete(f"{VIEWS}/t"), 404, "NOT_FOUND")
    assert sorted(Table.objects.values_list("name", flat=True)) == ["b", "t"]


@pytest.mark.parametrize(
    ("body", "fragment", "field"),
    [
        ({"name": "v", "query": "   "}, "A view needs a query.", "query"),
        ({"name": "", "query": "SELECT 1"}, "A view name must not be empty.", None),
        (
            {
                "name": "v",
                "query": "SELECT 1",
                "schema": {"columns": [{"name": "c", "kind": "computed", "expression": "1"}]},
            },
            "View column `c` must be a plain column",
            "schema.columns[0]",
        ),
        (
            {
                "name": "v",
                "query": "SELECT 1",
                "schema": {"columns": [{"name": "c", "data_type": "NUMBER"}]},
            },
            "Unknown data type 'NUMBER'",
            "schema.columns[0].data_type",
        ),
        (
            {
                "name": "v",
                "query": "SELECT 1",
                "schema": {
                    "columns": [
                        {"name": "c", "data_type": "INT"},
                        {"name": "C", "data_type": "INT"},
                    ]
                },
            },
            "Column `c` is declared twice",
            "schema.columns[1].name",
        ),
    ],
)
def test_invalid_views_are_refused(alice_api, demo, body, fragment, field):
    error = assert_error(alice_api.post(VIEWS, body), 400, "VALIDATION_ERROR", fragment)
    if field:
        assert error["details"]["field"] == field
    assert not Table.objects.exists()
    assert not Column.objects.exists()


def test_view_name_clash_with_a_table(alice_api, make, demo):
    make.table("demo", "default", "T")
    response = alice_api.post(VIEWS, {"name": "t", "query": "SELECT 1"})
    assert_error(response, 409, "ALREADY_EXISTS", "Table `demo`.`default`.`T` already exists.")


def test_bob_cannot_change_alices_view(bob_api, make, demo, analyzer):
    make.view("demo", "default", "v")
    assert_error(bob_api.patch(f"{VIEWS}/v", {"comment": "x"}), 403, "PERMISSION_DENIED")
    assert_error(bob_api.delete(f"{VIEWS}/v"), 403, "PERMISSION_DENIED")
    assert Table.objects.filter(name="v").exists()


# --- functions -------------------------------------------------------------------------------


def test_python_function(alice_api, demo):
    response = alice_api.post(
        FUNCTIONS,
        {
            "name": "Upper",
            "language": "python",
            "implementation": "  tessera_udfs.text.upper ",
            "comment": "upper-case",
        },
    )
    assert response.status_code == 201, response.content
    function = response.json()
    assert function == alice_api.get(f"{FUNCTIONS}/UPPER").json()
    assert function["kind"] == "function"
    assert function["name"] == "Upper"
    assert function["language"] == "python"
    assert function["implementation"] == "tessera_udfs.text.upper"
    assert function["comment"] == "upper-case"
    assert function["parameters"] == []
    assert function["return_type"] == ""
    assert function["created_by"] == "alice"


@pytest.mark.parametrize(
    "implementation", ["upper", "os.system('rm -rf /')", "pkg..mod", "1pkg.mod", ""]
)
def test_python_function_needs_a_dotted_name(alice_api, demo, implementation):
    response = alice_api.post(
        FUNCTIONS, {"name": "f", "language": "python", "implementation": implementation}
    )
    error = assert_error(response, 400, "VALIDATION_ERROR", "dotted path")
    assert error["details"] == {"field": "implementation"}
    assert not Function.objects.exists()


def test_sql_function_parses_parameters_and_return_type(alice_api, demo):
    response = alice_api.post(
        FUNCTIONS,
        {
            "name": "net",
            "language": "sql",
            "implementation": "price * (1 - rate)",
            "parameters": [
                {"name": "price", "data_type": "decimal(10,2)"},
                {"name": "rate", "data_type": "double not null"},
            ],
            "return_type": "numeric(12, 2)",
        },
    )
    assert response.status_code == 201, response.content
    function = response.json()
    assert function["language"] == "sql"
    assert function["implementation"] == "price * (1 - rate)"
    assert function["parameters"] == [
        {"name": "price", "data_type": "DECIMAL(10, 2)"},
        {"name": "rate", "data_type": "DOUBLE NOT NULL"},
    ]
    assert function["return_type"] == "DECIMAL(12, 2)"


@pytest.mark.parametrize(
    ("change", "fragment", "field"),
    [
        (
            {"parameters": [{"name": "x", "data_type": "INTEGR"}]},
            "Unknown data type 'INTEGR'",
            "parameters[0].data_type",
        ),
        (
            {"parameters": [{"name": "x", "data_type": "INT"}, {"name": "y"}]},
            "must be a data type",
            "parameters[1].data_type",
        ),
        ({"return_type": "DECIMAL(10,"}, "'DECIMAL(10,'", "return_type"),
        ({"return_type": ""}, "needs a return type", "return_type"),
        ({"implementation": " "}, "needs a body expression", "implementation"),
        (
            {"parameters": [{"name": "x", "data_type": "INT"}, {"name": "X", "data_type": "INT"}]},
            "Parameter `X` is declared twice.",
            "parameters[1]",
        ),
        ({"parameters": ["x INT"]}, '{"name", "data_type"}', "parameters[0]"),
        ({"language": "java"}, "Unknown function language 'java'", "language"),
    ],
)
def test_invalid_sql_functions_are_refused_naming_the_field(
    alice_api, demo, change, fragment, field
):
    body = {
        "name": "f",
        "language": "sql",
        "implementation": "x + 1",
        "parameters": [{"name": "x", "data_type": "INT"}],
        "return_type": "INT",
        **change,
    }
    error = assert_error(alice_api.post(FUNCTIONS, body), 400, "VALIDATION_ERROR", fragment)
    assert error["details"]["field"] == field
    assert not Function.objects.exists()


def test_patch_and_delete_function(alice_api, make, demo):
    make.function(
        "demo",
        "default",
        "inc",
        language="sql",
        implementation="x + 1",
        parameters=[{"name": "x", "data_type": "INT"}],
        return_type="INT",
    )
    response = alice_api.patch(
        f"{FUNCTIONS}/INC",
        {"implementation": "x + 2", "return_type": "bigint", "comment": "by two"},
    )
    assert response.status_code == 200, response.content
    function = response.json()
    assert function["implementation"] == "x + 2"
    assert function["return_type"] == "BIGINT"
    assert function["comment"] == "by two"
    assert function["parameters"] == [{"name": "x", "data_type": "INT"}]
    assert alice_api.get(f"{FUNCTIONS}/inc").json() == function

    bad = alice_api.patch(f"{FUNCTIONS}/inc", {"return_type": "BIGNUM"})
    assert_error(bad, 400, "VALIDATION_ERROR", "BIGNUM")
    assert Function.objects.get().return_type == "BIGINT"

    assert alice_api.delete(f"{FUNCTIONS}/inc").status_code == 204
    assert_error(alice_api.get(f"{FUNCTIONS}/inc"), 404, "NOT_FOUND", "`demo`.`default`.`inc`")
    assert not Function.objects.exists()


def test_function_names_are_their_own_namespace(alice_api, make, demo):
    make.table("demo", "default", "f")
    make.function("demo", "default", "f")
    clash = alice_api.post(FUNCTIONS, {"name": "F", "language": "python", "implementation": "a.b"})
    assert_error(clash, 409, "ALREADY_EXISTS", "Function `demo`.`default`.`F` already exists.")
    assert Function.objects.count() == 1


def test_list_functions_and_permissions(alice_api, bob_api, make, demo):
    for name in ("zeta", "Alpha", "mid"):
        make.function("demo", "default", name)
    listed = alice_api.get(FUNCTIONS).json()
    assert [f["name"] for f in listed["items"]] == ["Alpha", "mid", "zeta"]
    assert listed["next_page_token"] is None
    assert_error(bob_api.patch(f"{FUNCTIONS}/mid", {"comment": "x"}), 403, "PERMISSION_DENIED")
    assert_error(bob_api.delete(f"{FUNCTIONS}/mid"), 403, "PERMISSION_DENIED")
    assert Function.objects.count() == 3


def test_patched_python_function_name_is_stored_as_checked(alice_api, make, demo):
    make.function("demo", "default", "f", implementation="a.b")
    response = alice_api.patch(f"{FUNCTIONS}/f", {"implementation": "  pkg.mod.func\n"})
    assert response.status_code == 200
    assert response.json()["implementation"] == "pkg.mod.func"
    assert Function.objects.get().implementation == "pkg.mod.func"
