"""`coop-layout`: draw a layout as SVG (or PNG) — which lane holds which element of a fragment,
which memory element each matrix element reads.

    coop-layout mma [--operand A|B|C] [--element f16|bf16|s8|u8]        # mma.sync m16n8k16 / m16n8k32
    coop-layout wgmma-acc [--n 256] [--cols 0:16,248:256]             # wgmma 64xN accumulator
    coop-layout sparse [--element f16] [--rows 4] [--meta META.npy]   # 2:4 metadata selection
    coop-layout tensor [--dimension 6,10] [--offset=-1,-1] [--clamp ClampToEdge] ...
    coop-layout arm [--layout RowBlockedInterleavedARM] [--stride 2] [--element f16] ...

The SVG goes to stdout, or to `-o FILE` (`.png` needs the `png` extra, cairosvg:
`pip install '.[png]'`). The grids come from the compiler's and the interpreter's own layout code
(`coopdialect.layouts`). A bad flag is one line, `<command line>: error: ...`, exit status 1.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from coopdialect import layouts
from coopdialect.tools.output_files import write_file


def _ints(n: int):
    def parse(text: str) -> tuple[int, ...]:
        try:
            vals = tuple(int(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {n} comma-separated integers, got "
                                             f"'{text}'") from None
        if len(vals) != n:
            raise argparse.ArgumentTypeError(f"expected {n} comma-separated integers, got "
                                             f"'{text}'")
        return vals
    return parse


def _ranges(text: str) -> list[tuple[int, int]]:
    try:
        return [tuple(int(v) for v in part.split(":")) for part in text.split(",")]  # type: ignore[misc]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START:STOP,... column ranges, got '{text}'") from None


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error of the other tools (exit status 1)."""

    def error(self, message: str):
        self.exit(1, f"<command line>: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="coop-layout", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", metavar="FILE",
                    help="write the drawing here (.svg, or .png with cairosvg) instead of stdout")
    sub = ap.add_subparsers(dest="what", required=True, metavar="LAYOUT")

    p = sub.add_parser("mma", help="mma.sync fragment: lane and register of each element")
    p.add_argument("--operand", choices=("A", "B", "C"), default="C",
                   help="A (16xK), B (Kx8) or the 16x8 accumulator C (default C)")
    p.add_argument("--element", choices=("f16", "bf16", "s8", "u8"), default="f16",
                   help="A/B element type: 16-bit -> m16n8k16, 8-bit -> m16n8k32 (default f16)")

    p = sub.add_parser("wgmma-acc", help="wgmma 64xN accumulator: thread and register")
    p.add_argument("--n", type=int, default=256, help="N, a multiple of 8 in 8..256 (default 256)")
    p.add_argument("--cols", type=_ranges, metavar="A:B,...",
                   help="column ranges to draw (default 0:16 and the last 8 when N > 24)")

    p = sub.add_parser("sparse", help="2:4 (tf32 1:2) sparse A: the elements the metadata selects")
    p.add_argument("--element", choices=("f16", "bf16", "f32", "s8", "u8", "e4m3"), default="f16",
                   help="A's element type (f32 = tf32; default f16)")
    p.add_argument("--rows", type=int, default=4, help="rows to draw (default 4)")
    p.add_argument("--meta", metavar="META.npy",
                   help="logical metadata, rows x K/4 (tf32: K/2) (default: every valid value)")

    p = sub.add_parser("tensor", help="tensor-addressed load/store: the memory element of each "
                                      "matrix element, clamped ones hatched")
    p.add_argument("--rows", type=int, default=8, help="matrix rows (default 8)")
    p.add_argument("--cols", type=int, default=8, help="matrix columns (default 8)")
    p.add_argument("--dimension", type=_ints(2), default=(6, 10), metavar="R,C",
                   help="the tensor's layoutDimension (default 6,10)")
    p.add_argument("--offset", type=_ints(2), default=(-1, -1), metavar="R,C",
                   help="slice offset (default -1,-1)")
    p.add_argument("--span", type=_ints(2), metavar="R,C", help="slice span (default: the matrix)")
    p.add_argument("--block-size", type=_ints(2), default=(1, 1), metavar="R,C",
                   help="blockSize (default 1,1)")
    p.add_argument("--clamp", default="ClampToEdge",
                   help="clamp mode: Undefined, Constant, ClampToEdge (default), Repeat, "
                        "RepeatMirrored")
    p.add_argument("--view-dimension", type=_ints(2), metavar="R,C",
                   help="a view with these dimensions (default: no view, or one without)")
    p.add_argument("--permutation", type=_ints(2), default=(0, 1), metavar="P0,P1",
                   help="the view's permutation (1,0 transposes; default 0,1)")
    p.add_argument("--clip", type=_ints(4), metavar="RO,RS,CO,CS",
                   help="the view's clip: row offset, row span, column offset, column span")
    p.add_argument("--store", action="store_true", help="a store (out of bounds is dropped)")

    p = sub.add_parser("arm", help="Arm blocked-interleaved layout: the memory element of each "
                                   "matrix element")
    p.add_argument("--rows", type=int, default=8, help="matrix rows (default 8)")
    p.add_argument("--cols", type=int, default=16, help="matrix columns (default 16)")
    p.add_argument("--element", choices=("s8", "u8", "f16", "bf16", "f32", "s32"), default="f16",
                   help="component type (default f16)")
    p.add_argument("--layout", choices=("RowBlockedInterleavedARM", "ColumnBlockedInterleavedARM"),
                   default="RowBlockedInterleavedARM", help="block order (default Row...)")
    p.add_argument("--stride", type=int, default=2, help="Stride: 1, 2 or 4 (default 2)")
    return ap


def drawing(args: argparse.Namespace) -> str:
    """The SVG text the parsed command line asks for. Raises ValueError for a bad layout."""
    if args.what == "mma":
        grid = layouts.mma_fragment(args.operand, args.element)
    elif args.what == "wgmma-acc":
        grid = layouts.wgmma_accumulator(args.n, args.cols)
    elif args.what == "sparse":
        meta = None
        if args.meta:
            try:
                meta = np.load(args.meta, allow_pickle=False)
            except (OSError, ValueError) as e:
                raise ValueError(f"{args.meta}: {e}") from None
        grid = layouts.sparse_selection(args.element, args.rows, meta)
    elif args.what == "tensor":
        grid = layouts.tensor_view(args.rows, args.cols, args.dimension, args.offset, args.span,
                                   args.block_size, args.clamp, args.view_dimension,
                                   args.permutation, args.clip, args.store)
    else:
        grid = layouts.arm_blocked(args.rows, args.cols, args.element, args.layout, args.stride)
    return grid.to_svg()


def _png(svg: str) -> bytes:
    try:
        import cairosvg
    except ImportError:
        raise ValueError("PNG output needs cairosvg: pip install '.[png]' (or write .svg)") from None
    return cairosvg.svg2png(bytestring=svg.encode())


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `coop-layout` console script."""
    args = _parser().parse_args(argv)
    try:
        svg = drawing(args)
        if args.output is None:
            sys.stdout.write(svg)
            return
        data = _png(svg) if args.output.lower().endswith(".png") else svg.encode()
        write_file(args.output, data)
    except ValueError as e:
        print(f"<command line>: error: {e}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f"{e.filename or args.output}: error: {e.strerror or e}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
