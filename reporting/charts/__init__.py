"""The report's chart types, on plain data: a row chart (text columns beside interval and bar
lanes: leaderboards and forest plots), a heatmap, a line chart and a labelled scatter plane.

Every data mark carries `class="mark"` and a tooltip (<title>), so a reader can hover for the exact
figure and a test can count what was drawn.

One module per chart type: `rows` (the row chart with its interval and bar lanes), `heatmaps`,
`line_charts` and `planes` (the scatter plane with its point labels), on `common` (palette,
padding, `Series`, the value axis).
"""

from reporting.charts.common import AXIS, GRID, MUTED, PAD, STRIPE, Series
from reporting.charts.heatmaps import ColorKey, Heatmap, heatmap
from reporting.charts.line_charts import LineChart, line_chart
from reporting.charts.planes import LABEL_SIZE, Box, Plane, PlanePath, PlanePoint, plane
from reporting.charts.rows import BarLane, Interval, IntervalLane, TextColumn, row_chart

__all__ = [
    "AXIS",
    "GRID",
    "LABEL_SIZE",
    "MUTED",
    "PAD",
    "STRIPE",
    "BarLane",
    "Box",
    "ColorKey",
    "Heatmap",
    "Interval",
    "IntervalLane",
    "LineChart",
    "Plane",
    "PlanePath",
    "PlanePoint",
    "Series",
    "TextColumn",
    "heatmap",
    "line_chart",
    "plane",
    "row_chart",
]
