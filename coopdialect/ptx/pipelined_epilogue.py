"""The consumers' epilogue in a staged kernel (`pipelined.py`): tensor-addressed loads and stores
of accumulator tiles through plain box layouts (`box_access.py`: whole rows with immediate
offsets when the tile is inside the tensor, element by element at its edges; a bias row loaded
by a 1-D layout), after the products in flight are done. Other tensor loads and stores go to the
generic rules (element by element, `tensor_rules.py`).
"""

from __future__ import annotations

from coopdialect.dialects import coop_nv2 as nv2
from coopdialect.dialects import ptx
from coopdialect.dialects.coop import Scope, Use
from coopdialect.ptx.box_access import load_box, plain_box, store_box
from coopdialect.ptx.kernel_lowering import RULES, Frag
from coopdialect.ptx.pipelined_roles import CONSUMER_RULES, RoleLowering


def _c_store_tensor(lw: RoleLowering, op: nv2.StoreTensorOp) -> None:
    t = op.object.type
    layout = lw.vmap[op.layout]
    if t.scope_value != Scope.Workgroup or op.view is not None or \
            not plain_box(layout, t.rows, t.columns):
        return RULES[nv2.StoreTensorOp](lw, op)
    _wgmma_done(lw)
    store_box(lw, op, lw.vmap[op.pointer], layout, t, lw.workgroup_acc_positions(op, t),
              list(lw.vmap[op.object].regs))


def _c_load_tensor(lw: RoleLowering, op: nv2.LoadTensorOp) -> None:
    t = op.result.type
    layout = lw.vmap[op.layout]
    if t.scope_value != Scope.Workgroup or t.use_value != Use.MatrixAcc or op.view is not None \
            or op.decode_func is not None or not plain_box(layout, t.rows, t.columns, load=True):
        return RULES[nv2.LoadTensorOp](lw, op)
    lw.comment(f"{op.name} -> {t.rows}x{t.columns} accumulator tile, clamp {layout.mode.value}")
    regs = load_box(lw, lw.vmap[op.pointer], layout, t, lw.workgroup_acc_positions(op, t),
                    list(lw.vmap[op.object].regs))
    lw.vmap[op.result] = Frag(t, regs)


def _wgmma_done(lw: RoleLowering) -> None:
    if lw.wgmma_in_flight:
        lw.emit(ptx.WgmmaWaitGroupOp(0))
        lw.wgmma_in_flight = False


CONSUMER_RULES[nv2.StoreTensorOp] = _c_store_tensor
CONSUMER_RULES[nv2.LoadTensorOp] = _c_load_tensor
