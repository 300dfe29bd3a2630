"""Figures for prices and configuration: cost() per call, and load_config() per call with two real files.

Run: .venv/bin/python bench/prices_config.py [--smoke]   (``--smoke``, CI's size: a hundredth of the calls)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from orchestrator.config.model import load_config
from sessions.accounting.prices import cost, default_price_book
from sessions.wire.messages import Usage


def per_call(fn: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="CI's smoke size: a hundredth of the calls")
    scale = 100 if parser.parse_args().smoke else 1
    t0 = time.perf_counter()
    default_price_book()
    print(f"price data load (first call): {(time.perf_counter() - t0) * 1e3:.2f} ms")

    usage = Usage(prompt_tokens=374, completion_tokens=61, prompt_cache_hit_tokens=256, prompt_cache_miss_tokens=118)
    at = datetime(2026, 9, 14, 3, 59, 59, tzinfo=UTC)
    each = per_call(lambda: cost(usage, "deepseek-v4-flash", at), 20000 // scale)
    print(f"cost() per call, peak table: {each * 1e6:.1f} µs")
    ats = [at + timedelta(minutes=7 * i) for i in range(2000 // scale)]
    start = time.perf_counter()
    for a in ats:
        cost(usage, "deepseek-v4-pro", a)
    print(f"cost() per call, varying time: {(time.perf_counter() - start) / len(ats) * 1e6:.1f} µs")

    with tempfile.TemporaryDirectory() as tmp:
        ws, user = Path(tmp) / "ws", Path(tmp) / "user"
        ws.mkdir()
        user.mkdir()
        (user / "config.toml").write_text('[models]\nflash = "deepseek-flash"\n[client]\ndeadline_s = 300\n')
        (ws / "reasonix.toml").write_text('reasoning_effort = "max"\n[prices.families.pro]\nhit=1\nmiss=2\noutput=3\n')
        env = {"DEEPSEEK_API_KEY": "sk-bench"}
        secs = per_call(lambda: load_config(workspace=ws, user_config_dir=user, env=env), 2000 // scale)
        print(f"load_config() with two files: {secs * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
