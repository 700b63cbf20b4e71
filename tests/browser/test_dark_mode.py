"""Dark mode (prefers-color-scheme: dark) is readable: every text of the editor page (SQL
tokens, the result grid's header and cells, the run status, the side panel) has a WCAG
contrast of at least 4.5:1 against what is behind it (on the job page too), and the grid's
lines are subdued."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.browser.conftest import UI
from tests.browser.test_editor import pane, run_and_wait, set_sql

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SQL = (
    "-- the biggest orders first\n"
    "SELECT id, qty, CAST(price AS DOUBLE) AS `price usd`, 'x' AS s, NULL AS nothing\n"
    "FROM demo.sales.orders WHERE qty > 1 ORDER BY qty DESC LIMIT 20"
)

# For each visible element with text of its own under `root`: its colour and the colour
# behind it (the element's and its ancestors' backgrounds composited, alpha included).
CONTRASTS = """(root) => {
  const parse = (css) => {
    const m = css.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, below) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + below[i] * (1 - a)).concat([1]);
  };
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const behind = (el) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      const bg = parse(getComputedStyle(node).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] >= 1) break;
    }
    let colour = [255, 255, 255, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const out = [];
  for (const el of root.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.getClientRects().length === 0) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden") continue;
    if (el.closest(":disabled, .visually-hidden, .sr-only")) continue;
    const bg = behind(el);
    const fg = over(parse(style.color), bg);
    out.push({
      tag: el.tagName.toLowerCase(),
      cls: String(el.className),
      text: el.textContent.trim().slice(0, 30),
      ratio: Math.round(ratio(fg, bg) * 100) / 100,
      fg: style.color,
      bg: `rgb(${bg.slice(0, 3).map(Math.round).join(", ")})`,
    });
  }
  return out;
}"""


def contrasts(locator: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = locator.evaluate(CONTRASTS)
    return found


def test_dark_mode_text_has_contrast_and_grid_lines_are_subdued(
    ui: UI, page: Any, demo: User
) -> None:
    page.emulate_media(color_scheme="dark")
    ui.login(page, "alice")
    set_sql(page, SQL)
    run_and_wait(page)
    grid = pane(page).get_by_test_id("result-grid")
    expect(grid).to_be_visible()
    expect(grid.locator(".rv-cell .null").first).to_be_visible()
    page.mouse.move(0, 0)  # no hover highlight on a row

    editor_text = contrasts(pane(page).locator(".cm-content"))
    keywords = [item for item in editor_text if item["text"] in ("SELECT", "FROM", "WHERE")]
    assert len(keywords) == 3, editor_text
    tokens = [item["text"] for item in editor_text]
    for kind in ("'x'", "`price usd`", "-- the biggest orders first", "NULL", "20"):
        assert kind in tokens, tokens
    header = contrasts(grid.locator(".rv-header"))
    assert any(item["text"] == "price usd" for item in header), header
    cells = contrasts(grid.locator(".rv-body"))
    assert len(cells) > 20, cells
    side = contrasts(pane(page).locator(".side-panel"))
    assert side, "the side panel shows text"
    run_area = contrasts(pane(page).get_by_test_id("run-area"))

    everything = editor_text + header + cells + side + run_area
    # Every text of the editor page, the tab strip and gutters included.
    everything += contrasts(page.locator(".editor-page"))
    low = {
        f"{item['tag']}.{item['cls']} {item['text']!r}: {item['ratio']}"
        f" ({item['fg']} on {item['bg']})"
        for item in everything
        if item["ratio"] < 4.5
    }
    assert not low, "\n".join(sorted(low))

    # Grid lines separate cells without glaring: close to the panel behind them.
    lines = grid.locator(".rv-body .rv-cell").first.evaluate(
        """(cell) => {
          const lum = (css) => {
            const [r, g, b] = css.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map((v) => {
              v = Number(v) / 255;
              return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
            });
            return 0.2126 * r + 0.7152 * g + 0.0722 * b;
          };
          const panel = getComputedStyle(cell.closest('.rv-scroll')).backgroundColor;
          const row = getComputedStyle(cell.parentElement).borderBottomColor;
          const right = getComputedStyle(cell).borderRightColor;
          const r = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
          return [r(row, panel), r(right, panel)];
        }"""
    )
    assert all(ratio < 1.6 for ratio in lines), lines
    ui.screenshot(page, "editor-dark-results")

    # The job page shows the same result grid, with the job's facts around it.
    pane(page).get_by_role("link", name="job details").click()
    job_page = page.get_by_test_id("job-page")
    expect(job_page.get_by_test_id("result-grid")).to_be_visible()
    page.mouse.move(0, 0)
    low = {
        f"{item['tag']}.{item['cls']} {item['text']!r}: {item['ratio']}"
        f" ({item['fg']} on {item['bg']})"
        for item in contrasts(job_page)
        if item["ratio"] < 4.5
    }
    assert not low, "\n".join(sorted(low))
