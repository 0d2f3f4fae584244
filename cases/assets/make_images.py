"""Draw the small local images the multimodal cases (B2-MM, Q1-MM) send to the agent.

The seeds point at remote photos (or only describe them); the cases ship these drawings instead, each
showing exactly what the seed describes. They are drawn with Pillow from shapes and text, with no
randomness, so running this script again gives the same pixels:

    python cases/assets/make_images.py          # writes cases/assets/*.png

Text uses Noto Sans CJK (Debian package fonts-noto-cjk, /usr/share/fonts/opentype/noto/); the committed
PNGs were made with it. Without a CJK font the script falls back to DejaVu Sans and draws the Chinese
labels as their pinyin/English equivalents, and says so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageFont

HERE = Path(__file__).resolve().parent
CJK_FONTS = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
]
LATIN_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def font(size: int) -> tuple[Font, bool]:
    """A font of ``size`` px and whether it can draw Chinese."""
    for path in CJK_FONTS:
        if Path(path).exists():
            return ImageFont.truetype(path, size), True
    if Path(LATIN_FONT).exists():
        return ImageFont.truetype(LATIN_FONT, size), False
    return ImageFont.load_default(), False


def text(draw: ImageDraw.ImageDraw, xy: tuple[int, int], chinese: str, fallback: str, size: int,
         fill: str | tuple[int, ...] = "black", anchor: str = "la") -> None:
    """Draw ``chinese`` (or ``fallback`` when no CJK font is installed)."""
    face, cjk = font(size)
    draw.text(xy, chinese if cjk else fallback, font=face, fill=fill, anchor=anchor)


def red_running_shoe() -> Image.Image:
    """B2-MM-01: a red Nike running shoe, side view."""
    image = Image.new("RGB", (320, 200), (236, 238, 240))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((30, 138, 292, 162), radius=12, fill="white", outline=(150, 150, 150), width=2)
    draw.polygon([(38, 140), (56, 92), (120, 80), (150, 60), (190, 62), (240, 96), (288, 116), (290, 140)],
                 fill=(206, 24, 36), outline=(120, 10, 20))
    draw.polygon([(56, 92), (70, 60), (112, 56), (120, 80)], fill=(176, 18, 30), outline=(120, 10, 20))
    for x in range(150, 210, 12):
        draw.line((x, 66, x + 10, 74), fill="white", width=3)
    draw.arc((90, 70, 260, 150), start=20, end=160, fill="white", width=7)  # the swoosh
    text(draw, (64, 104), "NIKE", "NIKE", 12, fill="white")
    return image


def price_tag_299() -> Image.Image:
    """B2-MM-02 and Q1-MM-03: a clear shelf price tag reading ¥299."""
    image = Image.new("RGB", (320, 200), (205, 210, 214))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((20, 24, 300, 176), radius=10, fill=(255, 236, 64), outline=(80, 80, 80), width=3)
    draw.rectangle((20, 24, 300, 58), fill=(200, 20, 30))
    text(draw, (160, 41), "商品价格标签", "PRICE TAG", 18, fill="white", anchor="mm")
    text(draw, (34, 68), "ikbc C87 机械键盘 87键 红轴", "ikbc C87 Mechanical Keyboard 87 keys", 15)
    text(draw, (160, 122), "¥299", "¥299", 58, fill=(200, 20, 30), anchor="mm")
    text(draw, (34, 156), "规格：87键  产地：东莞", "Spec: 87 keys  Made in Dongguan", 12, fill=(60, 60, 60))
    for i, x in enumerate(range(210, 292, 3)):  # a barcode
        draw.line((x, 150, x, 170), fill="black", width=1 + (i % 3 == 0))
    return image


def wangfujing_map() -> Image.Image:
    """B2-MM-03: a street-map crop of Wangfujing Street with a 王府井 street sign."""
    image = Image.new("RGB", (360, 260), (244, 241, 232))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 360, 260), fill=(244, 241, 232))
    draw.rectangle((40, 20, 140, 100), fill=(214, 232, 204))  # blocks and a park
    draw.rectangle((220, 150, 340, 240), fill=(226, 222, 214))
    for y in (70, 140, 210):
        draw.line((0, y, 360, y), fill="white", width=12)
    draw.line((180, 0, 180, 260), fill=(255, 214, 120), width=20)  # the main street
    draw.line((300, 0, 300, 260), fill="white", width=10)
    text(draw, (186, 30), "王府井大街", "Wangfujing Dajie", 14, fill=(90, 60, 0))
    text(draw, (10, 128), "东安门大街", "Dong'anmen Dajie", 13, fill=(80, 80, 80))
    text(draw, (200, 60), "金鱼胡同", "Jinyu Hutong", 13, fill=(80, 80, 80))
    text(draw, (10, 198), "灯市口大街", "Dengshikou Dajie", 13, fill=(80, 80, 80))
    draw.rectangle((196, 160, 296, 204), fill=(20, 70, 160), outline="white", width=3)  # the street sign
    text(draw, (246, 174), "王府井", "Wangfujing", 18, fill="white", anchor="mm")
    text(draw, (246, 194), "Wangfujing St", "Wangfujing St", 10, fill="white", anchor="mm")
    draw.ellipse((172, 132, 188, 148), fill=(220, 40, 40), outline="white", width=2)  # you are here
    return image


def sony_headphones() -> Image.Image:
    """B2-MM-04: black Sony WH-1000XM5 over-ear headphones, front view, product-listing style."""
    image = Image.new("RGB", (300, 300), "white")
    draw = ImageDraw.Draw(image)
    draw.arc((60, 30, 240, 230), start=180, end=360, fill=(30, 30, 32), width=16)  # headband
    for x0 in (46, 194):
        draw.rounded_rectangle((x0 + 12, 120, x0 + 48, 150), radius=8, fill=(45, 45, 48))  # sliders
        draw.ellipse((x0, 140, x0 + 60, 250), fill=(24, 24, 26), outline=(70, 70, 74), width=3)  # cups
    text(draw, (150, 46), "SONY", "SONY", 14, fill=(200, 200, 200), anchor="mm")
    text(draw, (150, 278), "SONY WH-1000XM5", "SONY WH-1000XM5", 16, fill=(30, 30, 32), anchor="mm")
    return image


def blurry_photo() -> Image.Image:
    """B2-MM-05: an extremely blurred, overexposed photo in which no product can be made out."""
    image = Image.new("RGB", (300, 220), (190, 180, 170))
    draw = ImageDraw.Draw(image)
    draw.ellipse((70, 50, 210, 170), fill=(120, 90, 70))
    draw.rectangle((150, 90, 260, 150), fill=(90, 100, 120))
    image = image.filter(ImageFilter.GaussianBlur(28))
    return ImageEnhance.Brightness(image).enhance(1.9)


def foggy_shrine() -> Image.Image:
    """Q1-MM-01: vermilion torii gates of a Japanese shrine in thick fog, hard to identify."""
    image = Image.new("RGB", (320, 220), (225, 228, 230))
    draw = ImageDraw.Draw(image)
    for depth, x in enumerate((40, 110, 170, 215)):
        scale = 1 - depth * 0.2
        width, height = int(120 * scale), int(150 * scale)
        top = 40 + depth * 14
        colour = (200, 70 + depth * 30, 40 + depth * 30)
        draw.rectangle((x, top, x + width, top + int(12 * scale)), fill=colour)  # kasagi
        draw.rectangle((x + 8, top + int(26 * scale), x + width - 8, top + int(34 * scale)), fill=colour)
        for post in (x + int(16 * scale), x + width - int(26 * scale)):
            draw.rectangle((post, top + 10, post + int(10 * scale), top + height), fill=colour)
    fog = Image.new("RGB", image.size, (236, 238, 240))
    return Image.blend(image.filter(ImageFilter.GaussianBlur(4)), fog, 0.55)


def restaurant_facade() -> Image.Image:
    """Q1-MM-02: a restaurant front (sign and building only); no opening hours anywhere."""
    image = Image.new("RGB", (320, 240), (176, 206, 232))
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 50, 300, 240), fill=(150, 70, 50))  # building
    draw.rectangle((40, 62, 280, 100), fill=(40, 30, 25), outline=(212, 170, 60), width=3)  # sign board
    text(draw, (160, 81), "福满楼饭庄", "FU MAN LOU", 24, fill=(230, 190, 70), anchor="mm")
    draw.rectangle((130, 150, 190, 240), fill=(90, 40, 30), outline=(212, 170, 60), width=2)  # door
    for x in (40, 220):
        draw.rectangle((x, 130, x + 60, 190), fill=(250, 226, 160), outline=(212, 170, 60), width=2)
    for x in (110, 200):
        draw.ellipse((x, 108, x + 16, 130), fill=(220, 30, 30))  # lanterns
    return image


IMAGES = {
    "b2_mm01_red_running_shoe.png": red_running_shoe,
    "price_tag_299.png": price_tag_299,
    "b2_mm03_wangfujing_map.png": wangfujing_map,
    "b2_mm04_sony_headphones.png": sony_headphones,
    "b2_mm05_blurry_photo.png": blurry_photo,
    "q1_foggy_shrine.png": foggy_shrine,
    "q1_restaurant_facade.png": restaurant_facade,
}


def main(out: Path = HERE) -> None:
    """Write every image into ``out``."""
    if not font(12)[1]:
        print("no CJK font found: Chinese labels are drawn in pinyin/English", file=sys.stderr)
    for name, draw_image in IMAGES.items():
        draw_image().save(out / name, optimize=True)
        print(out / name)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
