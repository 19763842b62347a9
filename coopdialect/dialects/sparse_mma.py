"""The `sparse_mma` dialect: 2:4 structured-sparse warpgroup MMA (PTX `wgmma.mma_async.sp`, sm_90a).

Spec: PTX ISA 9.7.15.6 "Asynchronous Warpgroup Level Multiply-and-Accumulate Operation using
wgmma.mma_async.sp"; docs/sparse.md gives the metadata and fragment facts the lowering uses.

Operands are workgroup-scope cooperative matrices (`!coop.matrix<RxCxT, Workgroup, Use>`), so one
warpgroup (128 invocations) owns each product and `coop.load`/`coop.store` move them:

* compressed A: `!coop.matrix<64x(K/2)xT, Workgroup, MatrixA>` — the kept values of each row in
  column order (``Acomp[m][2c+i] = A[m][4c+idx_i]``; tf32: ``Acomp[m][c] = A[m][2c+idx]``);
* metadata: `!coop.matrix<64xGxui8, Workgroup, MatrixA>` (any 8-bit integer type), the LOGICAL
  format, one element per chunk of the row: G = K/4 for 2:4 (f16, bf16, fp8, s8/u8), each element
  the 4-bit value ``idx0 | idx1 << 2`` with ``idx0 < idx1`` (0x4={0,1}, 0x8={0,2}, 0xC={0,3},
  0x9={1,2}, 0xD={1,3}, 0xE={2,3}); G = K/2 for tf32 (1:2), each element 0x4 (element 0 kept) or
  0xE (element 1 kept). Any other value (0x0, 0x5, 0xA, 0xF, unsorted pairs such as 0x1, bits
  above the nibble) is invalid: the interpreter raises (the PTX ISA calls it undefined behavior).
  The lowering gathers the per-thread hardware words from this format;
* B: `!coop.matrix<KxNxT, Workgroup, MatrixB>` (or NxK with `imm_trans_b = 1`, see below);
* C and the result: `!coop.matrix<64xNxD, Workgroup, MatrixAcc>`; M may be any multiple of 64
  (rows 64j..64j+63 are one .m64 product each; the staged wgmma pipeline gives each 64 rows to
  a consumer warpgroup), with A and the metadata M rows too.

K is a multiple of the instruction's K (32 for f16/bf16, 16 for tf32, 64 for 8-bit types): the
op is that many `wgmma.mma_async.sp` chained on one accumulator. Element types: f16, bf16, f32
(meaning `.tf32`: the low 13 mantissa bits are ignored), f8E4M3FN (`.e4m3`), f8E5M2 (`.e5m2`),
si8/i8 (`.s8`), ui8 (`.u8`); accumulators f16/f32 (f16, fp8), f32 (bf16, tf32), i32/si32 (8-bit
integers).

Properties, named after the instruction's operands (all optional, PTX defaults):
`sp_sel` (sparsity selector, default 0), `scale_d` (i1, default true: D = A*B + C; false: D = A*B
for the first instruction of the chain), `imm_scale_a`/`imm_scale_b` (1 or -1: negate, float types
only), `imm_trans_a`/`imm_trans_b` (0 or 1, f16/bf16 only; 1 means the operand VALUE is given
transposed: compressed A as (K/2)x64, B as NxK — the lowering then keeps it MN-major in shared
memory and sets the immediate), `satfinite` (unit, integer only), `a_registers` (unit: the RS form,
A from registers; excludes `imm_trans_a`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    Signedness,
    UnitAttr,
    i1,
    i32,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from coopdialect.dialects.coop import MatrixType, Scope, Use

# ---------------------------------------------------------------------------------------------
# Type families of wgmma.mma_async.sp (9.7.15.6.3 "Syntax")
# ---------------------------------------------------------------------------------------------

VALID_META_24 = (0x4, 0x8, 0xC, 0x9, 0xD, 0xE)
"""Valid 2:4 metadata values `idx0 | idx1<<2`, idx0 < idx1 (9.7.15.6.1)."""
VALID_META_TF32 = (0x4, 0xE)
"""Valid tf32 1:2 metadata values: element 0 kept / element 1 kept (9.7.15.6.1)."""

N_FLOAT = tuple(range(8, 257, 8))
"""N of .m64nNk{16,32,64} for floating point types: 8, 16, ..., 256."""
N_INT = (8, 16, 24) + tuple(range(32, 257, 16))
"""N of .m64nNk64 for integer types: 8, 16, 24, 32, 48, 64, 80, ..., 256 (no 40, 56, ...)."""


def ptx_type(t: Attribute) -> str | None:
    """PTX name of an A/B element type (`f16`, `bf16`, `tf32` for f32, `e4m3`, `e5m2`, `s8`, `u8`)."""
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, BFloat16Type):
        return "bf16"
    if isinstance(t, Float32Type):
        return "tf32"
    if isinstance(t, Float8E4M3FNType):
        return "e4m3"
    if isinstance(t, Float8E5M2Type):
        return "e5m2"
    if isinstance(t, IntegerType) and t.width.data == 8:
        return "u8" if t.signedness.data == Signedness.UNSIGNED else "s8"
    return None


def acc_ptx_type(t: Attribute) -> str | None:
    if isinstance(t, Float16Type):
        return "f16"
    if isinstance(t, Float32Type):
        return "f32"
    if isinstance(t, IntegerType) and t.width.data == 32 and t.signedness.data != Signedness.UNSIGNED:
        return "s32"
    return None


@dataclass(frozen=True)
class Family:
    """One row of the syntax table: instruction K, element bits, accumulators, immediates."""

    name: str
    k: int
    bits: int
    accs: tuple[str, ...]
    n_list: tuple[int, ...]
    sel_max: int
    has_scale: bool
    has_trans: bool
    group: int  # elements per metadata chunk (4 for 2:4, 2 for tf32 1:2)

    @property
    def valid_meta(self) -> tuple[int, ...]:
        return VALID_META_TF32 if self.group == 2 else VALID_META_24


FAMILIES = {
    "f16": Family("f16", 32, 16, ("f16", "f32"), N_FLOAT, 1, True, True, 4),
    "bf16": Family("bf16", 32, 16, ("f32",), N_FLOAT, 1, True, True, 4),
    "tf32": Family("tf32", 16, 32, ("f32",), N_FLOAT, 1, True, False, 2),
    "fp8": Family("fp8", 64, 8, ("f16", "f32"), N_FLOAT, 0, True, False, 4),
    "int": Family("int", 64, 8, ("s32",), N_INT, 0, False, False, 4),
}


def family_of(at: str, bt: str) -> Family | None:
    """The family of an .atype/.btype pair, None when the instruction has no such pair."""
    if at in ("e4m3", "e5m2") and bt in ("e4m3", "e5m2"):
        return FAMILIES["fp8"]
    if at in ("s8", "u8") and bt in ("s8", "u8"):
        return FAMILIES["int"]
    if at == bt and at in FAMILIES:
        return FAMILIES[at]
    return None


def meta_group(t: Attribute) -> int:
    """Chunk width of the sparsity of element type `t`: 2 for f32 (tf32, 1:2), else 4 (2:4)."""
    return 2 if isinstance(t, Float32Type) else 4


def _int_prop(op: IRDLOperation, name: str, default: int) -> int:
    a = op.properties.get(name)
    return default if a is None else a.value.data


def _workgroup_matrix(v: SSAValue, what: str, use: Use) -> MatrixType:
    t = v.type
    if not isinstance(t, MatrixType) or t.scope_value != Scope.Workgroup or t.use_value != use:
        raise VerifyException(f"{what} must be a !coop.matrix<..., Workgroup, {use.value}> "
                              f"(one warpgroup runs wgmma.mma_async.sp), got {t}")
    return t


def _meta_element(t: MatrixType, what: str) -> None:
    et = t.element_type
    if not (isinstance(et, IntegerType) and et.width.data == 8):
        raise VerifyException(f"{what} elements must be an 8-bit integer type (one metadata value "
                              f"per chunk), got {et}")


# ---------------------------------------------------------------------------------------------
# Ops
# ---------------------------------------------------------------------------------------------


def _check_compressed_pair(dense: MatrixType, vals: MatrixType, meta: MatrixType) -> None:
    g = meta_group(dense.element_type)
    r, k = dense.get_shape()
    if k % g:
        raise VerifyException(f"the dense matrix needs a column count that is a multiple of the "
                              f"chunk width {g} (9.7.15.6.1 Sparse matrix storage), got {k}")
    if vals.element_type != dense.element_type:
        raise VerifyException(f"compressed values must have the dense element type "
                              f"{dense.element_type}, got {vals.element_type}")
    kept = k // 2
    if vals.get_shape() != (r, kept):
        raise VerifyException(f"compressed values of a {r}x{k} matrix are {r}x{kept} "
                              f"(K/2 kept per row), got {vals.rows}x{vals.columns}")
    if meta.get_shape() != (r, k // g):
        raise VerifyException(f"metadata of a {r}x{k} matrix is {r}x{k // g} (one value per "
                              f"{g}-chunk), got {meta.rows}x{meta.columns}")
    _meta_element(meta, "metadata")
    for t in (vals, meta):
        if t.scope_value != dense.scope_value:
            raise VerifyException("compressed values and metadata must have the dense matrix's scope")


@irdl_op_definition
class CompressOp(IRDLOperation):
    """Compress a structured-sparse matrix: dense RxK -> values Rx(K/2) and metadata.

    `%v, %e = sparse_mma.compress %a : !coop.matrix<64x32xf16, Workgroup, MatrixA> ->
    !coop.matrix<64x16xf16, Workgroup, MatrixA>, !coop.matrix<64x8xui8, Workgroup, MatrixA>`

    Per chunk (4 elements; 2 for f32 = tf32) the non-zero positions are kept, in increasing order;
    a chunk with fewer non-zeros than kept slots is padded with its lowest zero positions. A
    chunk with more non-zeros (3 or 4 of 4; 2 of 2 for tf32) is not structured-sparse and the
    interpreter raises. Metadata format: module docstring.
    """

    name = "sparse_mma.compress"
    dense = operand_def(MatrixType)
    values = result_def(MatrixType)
    meta = result_def(MatrixType)
    assembly_format = "$dense attr-dict `:` type($dense) `->` type($values) `,` type($meta)"

    def __init__(self, dense: SSAValue, values_type: MatrixType, meta_type: MatrixType):
        super().__init__(operands=[dense], result_types=[values_type, meta_type])

    def verify_(self) -> None:
        _check_compressed_pair(self.dense.type, self.values.type, self.meta.type)


@irdl_op_definition
class DecompressOp(IRDLOperation):
    """Expand compressed values + metadata back to the dense matrix (zeros elsewhere).

    `%a = sparse_mma.decompress %v, %e : !v, !e -> !coop.matrix<64x32xf16, Workgroup, MatrixA>`.
    Invalid metadata values raise in the interpreter (module docstring).
    """

    name = "sparse_mma.decompress"
    values = operand_def(MatrixType)
    meta = operand_def(MatrixType)
    result = result_def(MatrixType)
    assembly_format = ("$values `,` $meta attr-dict `:` type($values) `,` type($meta) `->` "
                       "type($result)")

    def __init__(self, values: SSAValue, meta: SSAValue, result_type: MatrixType):
        super().__init__(operands=[values, meta], result_types=[result_type])

    def verify_(self) -> None:
        _check_compressed_pair(self.result.type, self.values.type, self.meta.type)


@irdl_op_definition
class MmaSpOp(IRDLOperation):
    """`wgmma.mma_async.sp` chain: D = (sa*A)(sb*B) + (scale_d ? C : 0), A 2:4 sparse (module docstring).

    `%d = sparse_mma.mma_sp %a, %e, %b, %c {sp_sel = 1 : i32} : !a, !e, !b, !c -> !c`

    Shapes (K = k * steps, k the instruction K of the type): A values 64x(K/2) ((K/2)x64 with
    imm_trans_a), metadata 64x(K/4) (64x(K/2) for tf32), B KxN (NxK with imm_trans_b), C and
    result 64xN, N in the type's N list. PTX ISA 9.7.15.6.3.
    """

    name = "sparse_mma.mma_sp"
    a = operand_def(MatrixType)
    meta = operand_def(MatrixType)
    b = operand_def(MatrixType)
    c = operand_def(MatrixType)
    result = result_def(MatrixType)
    sp_sel = opt_prop_def(IntegerAttr)
    scale_d = opt_prop_def(IntegerAttr)
    imm_scale_a = opt_prop_def(IntegerAttr)
    imm_scale_b = opt_prop_def(IntegerAttr)
    imm_trans_a = opt_prop_def(IntegerAttr)
    imm_trans_b = opt_prop_def(IntegerAttr)
    satfinite = opt_prop_def(UnitAttr)
    a_registers = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = ("$a `,` $meta `,` $b `,` $c attr-dict `:` type($a) `,` type($meta) `,` "
                       "type($b) `,` type($c) `->` type($result)")

    def __init__(self, a: SSAValue, meta: SSAValue, b: SSAValue, c: SSAValue, *,
                 sp_sel: int = 0, scale_d: bool = True, imm_scale_a: int = 1,
                 imm_scale_b: int = 1, imm_trans_a: int = 0, imm_trans_b: int = 0,
                 satfinite: bool = False, a_registers: bool = False):
        props: dict[str, Attribute] = {}
        if sp_sel:
            props["sp_sel"] = IntegerAttr(sp_sel, i32)
        if not scale_d:
            props["scale_d"] = IntegerAttr(0, i1)
        for name, v in (("imm_scale_a", imm_scale_a), ("imm_scale_b", imm_scale_b)):
            if v != 1:
                props[name] = IntegerAttr(v, i32)
        for name, v in (("imm_trans_a", imm_trans_a), ("imm_trans_b", imm_trans_b)):
            if v:
                props[name] = IntegerAttr(v, i32)
        if satfinite:
            props["satfinite"] = UnitAttr()
        if a_registers:
            props["a_registers"] = UnitAttr()
        super().__init__(operands=[a, meta, b, c], result_types=[c.type], properties=props)

    # -- accessors (PTX defaults when absent) ----------------------------------------------------

    @property
    def sel(self) -> int:
        return _int_prop(self, "sp_sel", 0)

    @property
    def accumulate(self) -> bool:
        """scale-d: True = D = A*B + C."""
        a = self.scale_d
        return True if a is None else bool(a.value.data)

    @property
    def scale_a(self) -> int:
        return _int_prop(self, "imm_scale_a", 1)

    @property
    def scale_b(self) -> int:
        return _int_prop(self, "imm_scale_b", 1)

    @property
    def trans_a(self) -> int:
        return _int_prop(self, "imm_trans_a", 0)

    @property
    def trans_b(self) -> int:
        return _int_prop(self, "imm_trans_b", 0)

    def types(self) -> tuple[str, str, str]:
        """(.dtype, .atype, .btype) in PTX spelling (valid after verification)."""
        return (acc_ptx_type(self.c.type.element_type), ptx_type(self.a.type.element_type),
                ptx_type(self.b.type.element_type))

    def family(self) -> Family:
        _, at, bt = self.types()
        return family_of(at, bt)

    def dims(self) -> tuple[int, int, int]:
        """(N, K, steps): K the dense K of the whole chain, steps = K / instruction k."""
        n = self.c.type.columns
        kk = self.b.type.columns if self.trans_b else self.b.type.rows
        return n, kk, kk // self.family().k

    # -- verifier ----------------------------------------------------------------------------

    def verify_(self) -> None:
        ta = _workgroup_matrix(self.a, "A (compressed values)", Use.MatrixA)
        te = _workgroup_matrix(self.meta, "the sparsity metadata", Use.MatrixA)
        tb = _workgroup_matrix(self.b, "B", Use.MatrixB)
        tc = _workgroup_matrix(self.c, "C", Use.MatrixAcc)
        if self.result.type != tc:
            raise VerifyException(f"the result type must equal C's type {tc} (d is both the "
                                  f"accumulator and the destination), got {self.result.type}")
        at, bt = ptx_type(ta.element_type), ptx_type(tb.element_type)
        fam = family_of(at or "?", bt or "?")
        if fam is None:
            raise VerifyException(
                f".atype/.btype {at or ta.element_type}/{bt or tb.element_type} is not a "
                "wgmma.mma_async.sp type pair: f16/f16, bf16/bf16, tf32/tf32 (f32), "
                "e4m3|e5m2 / e4m3|e5m2, s8|u8 / s8|u8 (9.7.15.6.3 Syntax)")
        dt = acc_ptx_type(tc.element_type)
        if dt not in fam.accs:
            raise VerifyException(f".dtype {dt or tc.element_type} is not allowed with .atype "
                                  f".{at}: .dtype must be one of "
                                  f"{', '.join('.' + x for x in fam.accs)} (9.7.15.6.3 Syntax)")
        # immediates that exist only for some types
        if not fam.has_scale and (self.imm_scale_a is not None or self.imm_scale_b is not None):
            raise VerifyException("imm-scale-a/imm-scale-b do not exist for integer "
                                  "wgmma.mma_async.sp (9.7.15.6.3 Syntax)")
        for name in ("imm_scale_a", "imm_scale_b"):
            v = getattr(self, name)
            if v is not None and v.value.data not in (1, -1):
                raise VerifyException(f"{name.replace('_', '-')} must be -1 or 1, got "
                                      f"{v.value.data} (9.7.15.6.3 Description)")
        for name in ("imm_trans_a", "imm_trans_b"):
            v = getattr(self, name)
            if v is None:
                continue
            if not fam.has_trans:
                raise VerifyException(f"{name.replace('_', '-')} exists only for .f16/.bf16 "
                                      "wgmma.mma_async.sp (9.7.15.6.3 Description)")
            if v.value.data not in (0, 1):
                raise VerifyException(f"{name.replace('_', '-')} must be 0 or 1, got "
                                      f"{v.value.data} (9.7.15.6.3 Description)")
        if self.a_registers is not None and self.trans_a:
            raise VerifyException("imm-trans-a needs A in shared memory (a matrix descriptor); "
                                  "the register form (a_registers) has no imm-trans-a "
                                  "(9.7.15.6.3 Syntax)")
        if self.satfinite is not None and fam.name != "int":
            raise VerifyException(".satfinite exists only for the integer (.s32) "
                                  "wgmma.mma_async.sp (9.7.15.6.3 Syntax)")
        if self.scale_d is not None and not (isinstance(self.scale_d.type, IntegerType)
                                             and self.scale_d.type.width.data == 1):
            raise VerifyException("scale_d must be an i1 (true: D = A*B + D, false: D = A*B)")
        sel = self.sel
        if not 0 <= sel <= fam.sel_max:
            allowed = "0 (threads T0, T1) or 1 (threads T2, T3)" if fam.sel_max else \
                "0 (all threads contribute)"
            raise VerifyException(f"sp-sel of .{at} must be {allowed}, got {sel} "
                                  "(9.7.15.6.3 valid values of sp-sel)")
        # shapes
        m = tc.rows
        if m % 64 or m == 0:
            raise VerifyException(f"the accumulator must have M = 64 rows (.m64nNk{fam.k}) or a "
                                  f"multiple of 64 (one .m64 product per 64 rows), got {m}")
        n = tc.columns
        if n not in fam.n_list:
            raise VerifyException(
                f"N = {n} is not a valid .m64nNk{fam.k} shape for .{at}: N must be one of "
                f"{_ranges(fam.n_list)} (9.7.15.6.3 Syntax .shape)")
        kk, bn = (tb.columns, tb.rows) if self.trans_b else (tb.rows, tb.columns)
        if bn != n:
            raise VerifyException(f"B has N = {bn} but the accumulator has N = {n}")
        if kk % fam.k or kk == 0:
            raise VerifyException(f"K = {kk} must be a multiple of the instruction K {fam.k} "
                                  f"(.m64nNk{fam.k} for .{at})")
        a_shape = (kk // 2, m) if self.trans_a else (m, kk // 2)
        if ta.get_shape() != a_shape:
            raise VerifyException(
                f"compressed A must be {a_shape[0]}x{a_shape[1]} (M x K/2"
                f"{', transposed by imm-trans-a' if self.trans_a else ''}; 9.7.15.6.1), got "
                f"{ta.rows}x{ta.columns}")
        _meta_element(te, "the sparsity metadata")
        g = meta_group(ta.element_type)
        if te.get_shape() != (m, kk // g):
            raise VerifyException(f"the sparsity metadata must be {m}x{kk // g} (one value per "
                                  f"{g}-chunk of each row of A), got {te.rows}x{te.columns}")


def _ranges(ns: tuple[int, ...]) -> str:
    if ns == N_FLOAT:
        return "8, 16, ..., 256 (multiples of 8)"
    return "8, 16, 24, 32, 48, 64, ..., 256 (multiples of 16 from 32)"


SparseMma = Dialect("sparse_mma", [CompressOp, DecompressOp, MmaSpOp], [])
