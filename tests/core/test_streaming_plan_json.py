"""The streaming fields of a plan's table relation (contract of issue 17): in the JSON only
when set, read back as written."""

from __future__ import annotations

import json

from core.planner import Action, Plan, RelationPlan


def _relation(**fields: object) -> RelationPlan:
    return RelationPlan(
        alias="__tessera_r1",
        identifier=("c", "d", "events"),
        kind="table",
        format="parquet",
        path="/data/events",
        physical_schema="id BIGINT, ts TIMESTAMP",
        **fields,  # type: ignore[arg-type]
    )


def test_batch_relations_carry_no_streaming_keys() -> None:
    data = _relation().to_dict()
    assert "streaming" not in data and "watermark" not in data
    assert RelationPlan.from_dict(data) == _relation()


def test_streaming_relation_round_trips() -> None:
    relation = _relation(streaming=True, watermark={"column": "ts", "delay": "5 seconds"})
    plan = Plan.of(
        Action.CTAS,
        needs_spark=True,
        sql="SELECT * FROM `__tessera_r1`",
        relations=(relation,),
        target=("c", "d", "t"),
        args={"streaming": {"trigger_ms": 1000}, "atomic": False},
    )
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["relations"][0]["streaming"] is True
    assert data["relations"][0]["watermark"] == {"column": "ts", "delay": "5 seconds"}
    assert Plan.from_dict(data) == plan
    assert Plan.from_dict(data).to_dict() == data
