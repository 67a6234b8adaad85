"""The chart: completion per arm, a bar each, with its 95 % Wilson interval (Pillow)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

WIDTH, HEIGHT = 720, 460
MARGIN_LEFT, MARGIN_RIGHT, MARGIN_TOP, MARGIN_BOTTOM = 70, 30, 76, 70
# One colour per arm for the six named arms (plan, noplan, planmode, noreminder, nogate, a cadence).
BAR_COLOURS = (
    (46, 110, 184),
    (214, 120, 40),
    (60, 150, 90),
    (150, 80, 160),
    (40, 150, 160),
    (120, 120, 120),
)
INK, GRID, WARN = (30, 30, 30), (225, 225, 225), (190, 30, 30)


def completion_chart(summary: dict[str, Any], path: Path) -> Path:
    """Draw `summary["perArm"]` as bars with interval whiskers into a PNG at `path`."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=15)
    small = ImageFont.load_default(size=13)
    big = ImageFont.load_default(size=18)

    title = "Completion per arm (95 % Wilson interval)"
    draw.text((MARGIN_LEFT, 14), title, fill=INK, font=big)
    models = ", ".join(summary["models"])
    subtitle = f"{models} · {summary['date'][:10]} · {summary['attempts']} attempts"
    if summary["source"] == "replay":
        subtitle = "REPLAY, NOT A MEASUREMENT · " + subtitle
    colour = WARN if summary["source"] == "replay" else INK
    draw.text((MARGIN_LEFT, 40), subtitle, fill=colour, font=small)

    top, bottom = MARGIN_TOP, HEIGHT - MARGIN_BOTTOM
    left, right = MARGIN_LEFT, WIDTH - MARGIN_RIGHT

    def y_of(rate: float) -> float:
        return bottom - rate * (bottom - top)

    for tick in range(0, 101, 20):
        y = y_of(tick / 100)
        draw.line([(left, y), (right, y)], fill=GRID, width=1)
        label = f"{tick} %"
        width = draw.textlength(label, font=small)
        draw.text((left - 8 - width, y - 8), label, fill=INK, font=small)
    draw.line([(left, top), (left, bottom), (right, bottom)], fill=INK, width=1)

    arms = list(summary["perArm"].items())
    slot = (right - left) / max(1, len(arms))
    bar_width = min(120.0, slot * 0.5)
    for i, (arm, figures) in enumerate(arms):
        centre = left + slot * (i + 0.5)
        rate = figures["completion"]
        colour = BAR_COLOURS[i % len(BAR_COLOURS)]
        draw.rectangle(
            [(centre - bar_width / 2, y_of(rate["estimate"])), (centre + bar_width / 2, bottom)],
            fill=colour,
        )
        low, high = y_of(rate["low"]), y_of(rate["high"])
        draw.line([(centre, low), (centre, high)], fill=INK, width=2)
        for y in (low, high):
            draw.line([(centre - 12, y), (centre + 12, y)], fill=INK, width=2)
        value = f"{100 * rate['estimate']:.0f} % ({figures['passed']}/{figures['attempts']})"
        for line, (text, face) in enumerate(((arm, big), (value, font))):
            width = draw.textlength(text, font=face)
            draw.text((centre - width / 2, bottom + 8 + 24 * line), text, fill=INK, font=face)
    image.save(path, "PNG")
    return path
