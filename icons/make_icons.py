"""Draws the Keiri Studio app icon (the same glyph as ui/public/icon.svg) at the sizes the
Linux and Windows builds need: a rounded indigo square with a three-node plan graph in white.
(No .icns: macOS bundles are not built yet, and Pillow's .icns is ~300 KB.)

Run with Pillow installed: `python3 icons/make_icons.py`. The outputs are committed, so the
build never needs Python; rerun this only when the glyph changes.
"""

from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
# Drawn once large and scaled down, which anti-aliases the edges.
CANVAS = 1024
UNIT = CANVAS / 64  # the SVG's 64-unit grid
TOP = (0x42, 0x63, 0xEB)
BOTTOM = (0x2B, 0x3F, 0xA8)
WHITE = (255, 255, 255, 255)


def u(value: float) -> float:
    return value * UNIT


def master() -> Image.Image:
    # Diagonal gradient, masked by a rounded square.
    gradient = Image.new("RGBA", (CANVAS, CANVAS))
    pixels = gradient.load()
    for y in range(CANVAS):
        for x in range(CANVAS):
            t = (x + y) / (2 * (CANVAS - 1))
            pixels[x, y] = tuple(round(a + (b - a) * t) for a, b in zip(TOP, BOTTOM)) + (255,)
    mask = Image.new("L", (CANVAS, CANVAS), 0)
    ImageDraw.Draw(mask).rounded_rectangle((u(2), u(2), u(62), u(62)), radius=u(14), fill=255)
    icon = Image.new("RGBA", (CANVAS, CANVAS), (0, 0, 0, 0))
    icon.paste(gradient, (0, 0), mask)

    draw = ImageDraw.Draw(icon)
    width = round(u(4))
    for end in ((44, 19), (44, 45)):
        draw.line((u(20), u(32), u(end[0]), u(end[1])), fill=WHITE, width=width)
        # Round caps, as in the SVG.
        for cx, cy in ((20, 32), end):
            r = width / 2
            draw.ellipse((u(cx) - r, u(cy) - r, u(cx) + r, u(cy) + r), fill=WHITE)
    draw.ellipse((u(20 - 7.5), u(32 - 7.5), u(20 + 7.5), u(32 + 7.5)), fill=WHITE)
    draw.ellipse((u(44 - 6), u(19 - 6), u(44 + 6), u(19 + 6)), fill=WHITE)
    draw.rounded_rectangle((u(38), u(39), u(50), u(51)), radius=u(3), fill=WHITE)
    return icon


def main() -> None:
    big = master()
    sizes = {"32x32.png": 32, "128x128.png": 128, "128x128@2x.png": 256, "icon.png": 512}
    for name, size in sizes.items():
        big.resize((size, size), Image.LANCZOS).save(HERE / name, optimize=True)
    big.resize((256, 256), Image.LANCZOS).save(
        HERE / "icon.ico", sizes=[(16, 16), (24, 24), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)]
    )


if __name__ == "__main__":
    main()
