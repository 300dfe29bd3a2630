"""The opt-in ``web_fetch`` tool (``[tools] web_fetch``): one URL's page as bounded text, under ``web(HOST)`` rules,
and the HTML-to-text reduction it stands on.
"""

from sessions.tools.web.fetch import WebFetchArgs, WebFetchTool

__all__ = [
    "WebFetchArgs",
    "WebFetchTool",
]
