"""Reasonix from Python: one task through the sync wrapper, its events printed as they come, then the result.

    python examples/api_task.py --workspace path/to/repo "what does src/app.py do?"
    python examples/api_task.py --base-url http://127.0.0.1:PORT ...   # a `reasonix emulate` server, no key needed

The CI runs it against the emulator (tests/orchestrator/headless/test_api_example.py).
"""

from __future__ import annotations

import argparse

from orchestrator import api


def show(event: api.StreamJsonEvent) -> None:
    if isinstance(event, api.AssistantLine):
        for block in event.message.content:
            if block.type == "tool_use":
                print(f"tool  {block.name} {block.input}")
        print(f"usage {event.message.usage.cache_read_input_tokens} cached of {event.message.usage.prompt_tokens}")
    elif isinstance(event, api.UserLine):
        print(f"result {event.message.content[0].content.splitlines()[0][:60]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("prompt")
    parser.add_argument("--workspace", default=".")
    parser.add_argument("--base-url")
    args = parser.parse_args()
    result = api.run_task_sync(args.prompt, args.workspace, base_url=args.base_url, on_event=show)
    print(f"answer {result.result}")
    print(f"cost ${result.total_cost_usd:.6f} · cache {result.cache_hit_ratio or 0:.1%} · session {result.session_id}")
    return 1 if result.is_error else 0


if __name__ == "__main__":
    raise SystemExit(main())
