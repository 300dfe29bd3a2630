"""URL slugs."""

import re
import unicodedata


def slugify(text):
    """Lower-case words joined by hyphens, accents stripped."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
