"""The current figures of docs/performance.md, rendered from benchmarks/results/*.json.

    python benchmarks/render_results.py            # rewrite the figures section of the doc
    python benchmarks/render_results.py --check    # exit 1 when the doc is not what the JSON says

The section lies between `<!-- figures: begin -->` and `<!-- figures: end -->`; everything else
in the doc is prose. The JSON files are what the benchmarks write (`bench_ptx.py` -> ptx.json,
`bench_shapes.py` -> shapes.json,
`vk_gemm_bench.py` -> vulkan.json, its variant rows -> vulkan_variants.json); their keys are
described in those scripts' docstrings.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- figures: begin -->", "<!-- figures: end -->"

DTYPES = {"dense_f16": "f16", "dense_bf16": "bf16", "sparse24_f16": "f16",
          "sparse24_f16_vs_dense": "f16", "sparse24_e4m3": "e4m3", "sparse24_s8": "s8"}


def _load(name: str) -> list[dict]:
    return json.loads((RESULTS / name).read_text())


def _f(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _sustained(row: dict) -> str:
    if "sustained_ratio" not in row:
        return "–"
    return (f"{row['sustained_tflops']:.1f} @ {row['sustained_clock_mhz']:.0f} MHz / "
            f"{row['sustained_baseline_tflops']:.1f} @ {row['sustained_baseline_clock_mhz']:.0f} "
            f"MHz = {row['sustained_ratio']:.3f}")


def _group(rows: list[dict], key) -> OrderedDict:
    out: OrderedDict = OrderedDict()
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def _header(rows: list[dict]) -> str:
    devices = sorted({r["device"] for r in rows if "device" in r})
    dates = sorted({r["date"] for r in rows if "date" in r})
    return f"{', '.join(devices) or 'device not recorded'}, {', '.join(dates) or 'date not recorded'}"


def ptx_tables(rows: list[dict]) -> list[str]:
    dense = [r for r in rows if r["name"].startswith("dense_")]
    sparse = [r for r in rows if r["name"].startswith("sparse24_")]
    out = [f"PTX, dense (`benchmarks/results/ptx.json`; {_header(rows)}); TFLOP/s, interleaved "
           "protocol; sustained at 8192³: ours @ clock / cuBLAS @ clock = ratio:", "",
           "| dtype | N | coop PTX | cuBLAS | ratio | Triton | ratio | sustained vs cuBLAS | exact |",
           "|---|---|---|---|---|---|---|---|---|"]
    for (name, n), group in _group(dense, lambda r: (r["name"], r["m"])).items():
        by = {("cublas" if "cuBLAS" in r["baseline"] else "triton"): r for r in group}
        c, t = by.get("cublas"), by.get("triton")
        first = c or t
        out.append(f"| {DTYPES[name]} | {n} | {first['tflops']:.1f} | "
                   f"{_f(c and c['baseline_tflops'])} | {_f(c and c['ratio'], 3)} | "
                   f"{_f(t and t['baseline_tflops'])} | {_f(t and t['ratio'], 3)} | "
                   f"{_sustained(c) if c else '–'} | {'yes' if first['exact'] else 'NO'} |")
    out += ["", "PTX, 2:4 sparse A (dense-equivalent TFLOP/s, 2N³; same run):", "",
            "| dtype | N | coop PTX | baseline | baseline TFLOP/s | ratio | sustained | exact |",
            "|---|---|---|---|---|---|---|---|"]
    for r in sparse:
        out.append(f"| {DTYPES[r['name']]} | {r['m']} | {r['tflops']:.1f} | {r['baseline']} | "
                   f"{r['baseline_tflops']:.1f} | {r['ratio']:.3f} | {_sustained(r)} | "
                   f"{'yes' if r['exact'] else 'NO'} |")
    return out


def vulkan_tables(rows: list[dict], variants: list[dict]) -> list[str]:
    out = [f"Vulkan (`benchmarks/results/vulkan.json`; {_header(rows)}); TFLOP/s (s8: TOP/s):", "",
           "| row | dtype | N | coop SPIR-V | torch | ratio | exact |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['dtype']} | {r['m']} | {r['tflops']:.1f} | "
                   f"{r['baseline_tflops']:.1f} | {r['ratio']:.3f} | {'yes' if r['exact'] else 'NO'} |")
    out += ["", "Vulkan variants (`benchmarks/results/vulkan_variants.json`: other forms and "
            "pipelines of the same GEMMs; each row's example and pipeline are in the file):", "",
            "| variant | dtype | N | coop SPIR-V | torch | ratio | exact |",
            "|---|---|---|---|---|---|---|"]
    for r in variants:
        out.append(f"| {r['variant']} | {r['dtype']} | {r['m']} | {r['tflops']:.1f} | "
                   f"{r['baseline_tflops']:.1f} | {r['ratio']:.3f} | {'yes' if r['exact'] else 'NO'} |")
    return out


def shapes_tables(rows: list[dict]) -> list[str]:
    import math

    static = [r for r in rows if r["baseline"].startswith("Workgroup-tile")]
    rows = [r for r in rows if r not in static]
    plain = [r for r in rows if not r["name"].startswith("gemm_bias")]
    epi = [r for r in rows if r["name"].startswith("gemm_bias")]
    cub = [r for r in plain if "cuBLAS" in r["baseline"]]
    tri = [r for r in plain if r["baseline"].startswith("triton")]

    def geo(rs):
        return math.exp(sum(math.log(r["ratio"]) for r in rs) / len(rs)) if rs else float("nan")
    out = [f"PTX, any shape (`benchmarks/results/shapes.json`; {_header(rows)}): one compiled "
           "kernel per dtype and config, sizes as arguments, the config picked from the "
           "target's coop-tune table; TFLOP/s, interleaved protocol. Geometric mean over the "
           f"rows: {geo(cub):.3f}x cuBLAS (lowest {min(r['ratio'] for r in cub):.3f}), "
           f"{geo(tri):.3f}x Triton (lowest {min(r['ratio'] for r in tri):.3f}); "
           f"{sum(r['exact'] for r in plain)} of {len(plain)} rows bit-exact against torch.", "",
           "| dtype | M x N x K | config | coop PTX | cuBLAS | ratio | Triton (best) | ratio | exact |",
           "|---|---|---|---|---|---|---|---|---|"]
    for (dt, m, n, k), group in _group(plain, lambda r: (r["dtype"], r["m"], r["n"], r["k"])).items():
        c = next((r for r in group if "cuBLAS" in r["baseline"]), None)
        t = next((r for r in group if r["baseline"].startswith("triton")), None)
        first = c or t
        out.append(f"| {dt} | {m} x {n} x {k} | {first.get('config', '–')} | {first['tflops']:.1f} | "
                   f"{_f(c and c['baseline_tflops'])} | {_f(c and c['ratio'], 3)} | "
                   f"{_f(t and t['baseline_tflops'])} | {_f(t and t['ratio'], 3)} | "
                   f"{'yes' if first['exact'] else 'NO'} |")
    if static:
        out += ["", "The any-shape kernel against the Workgroup-tile kernel with static sizes "
                "(`coopdialect.kernels.gemm_tiles`) at the same shape, in the same rounds: " +
                "; ".join(f"{r['dtype']} {r['m']}³ {r['tflops']:.1f} vs {r['baseline_tflops']:.1f} "
                          f"TFLOP/s ({r['ratio']:.3f})" for r in static) + "."]
    if epi:
        out += ["", "Fused bias + GELU epilogue against the faster of eager PyTorch and "
                "torch.compile (error: max |D - ref| / (|ref| + 1) against float64):", "",
                "| dtype | M x N x K | coop PTX | baseline | TFLOP/s | ratio | error (bound) |",
                "|---|---|---|---|---|---|---|"]
        for r in epi:
            out.append(f"| {r['dtype']} | {r['m']} x {r['n']} x {r['k']} | {r['tflops']:.1f} | "
                       f"{r['baseline']} | {r['baseline_tflops']:.1f} | {r['ratio']:.3f} | "
                       f"{r.get('max_rel_error', 0):.1e} ({r.get('error_bound', 0):.1e}) |")
    return out


def attention_tables(rows: list[dict]) -> list[str]:
    """The attention forward rows: ours per backend against the fastest torch SDPA backend."""
    out = [f"Attention forward (`benchmarks/results/attention.json`; {_header(rows)}): "
           "the kernels of `coopdialect.kernels.attention` (PTX: the tiles and stages of "
           "`PTX_TUNED`, op by op after `pipeline-coop-loads`; Vulkan: the tiles of "
           "`examples/attention.mlir`, 48 KB of shared memory) against torch's "
           "scaled_dot_product_attention, the fastest of its backends; TFLOP/s "
           "(4·B·H·S²·D, halved when causal); error: the worst |error| / bound over O and LSE."]
    steps = list(dict.fromkeys(r.get("lowering", "") for r in rows))
    if len(steps) > 1:  # rows measured with different tiles or lowerings say which
        out[0] += " The lowering column gives each row's tiles and staging."
    out += ["", "| dtype | B x H x S | D | causal | backend | coop | torch (fastest) | TFLOP/s | ratio "
            "| error / bound |" + (" lowering |" if len(steps) > 1 else ""),
            "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if len(steps) > 1 else "")]
    for r in rows:
        out.append(f"| {r['dtype']} | {r['batch']} x {r['heads']} x {r['m']} | {r['n']} | "
                   f"{'yes' if r['causal'] else 'no'} | {r['backend']} | {r['tflops']:.1f} | "
                   f"{r['baseline']} | {r['baseline_tflops']:.1f} | {r['ratio']:.3f} | "
                   f"{r['error_bound_ratio']:.2f} |"
                   + (f" {r.get('lowering', '')} |" if len(steps) > 1 else ""))
    return out


def render() -> str:
    """The figures section (between the markers), from the JSON files as they are."""
    lines = ptx_tables(_load("ptx.json")) + [""]
    if (RESULTS / "shapes.json").exists():
        lines += shapes_tables(_load("shapes.json")) + [""]
    lines += vulkan_tables(_load("vulkan.json"), _load("vulkan_variants.json"))
    if (RESULTS / "attention.json").exists():
        lines += [""] + attention_tables(_load("attention.json"))
    return "\n".join([BEGIN, "", *lines, "", END])


def replace_section(doc: str, section: str) -> str:
    if doc.count(BEGIN) != 1 or doc.count(END) != 1:
        raise ValueError(f"{DOC.name} needs one '{BEGIN}' and one '{END}'")
    head, rest = doc.split(BEGIN)
    return head + section + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 when docs/performance.md is not current")
    args = ap.parse_args(argv)
    doc = DOC.read_text()
    new = replace_section(doc, render())
    if args.check:
        if new != doc:
            print(f"{DOC.relative_to(ROOT)} is not current: run python benchmarks/render_results.py")
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
