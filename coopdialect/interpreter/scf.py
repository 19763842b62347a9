"""`scf` impls that accept uniform lane vectors as loop bounds and conditions.

A lane vector whose lanes all agree acts as its value; one that differs between invocations
(divergent control flow) raises InterpreterError: the interpreter runs a subgroup in lock-step.
`run_kernel` runs scf.if/for/while/index_switch itself (`coopdialect.interpreter.lockstep`,
which also lets these differ between subgroups); these impls serve a bare xDSL `Interpreter`.
A step that is not positive, or more than MAX_LOOP_ITERATIONS iterations, is an InterpreterError
on the loop.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.scf import ScfFunctions

from coopdialect.interpreter.common import fail, uniform

MAX_LOOP_ITERATIONS = 1 << 16
"""Most iterations one loop may run in the interpreter (a K loop of a GEMM runs K/16): a runaway
bound is an error naming the loop, not a run that never ends."""


@register_impls
class CoopScfFunctions(ScfFunctions):
    """xDSL's scf impls, with bounds and conditions made uniform first."""

    @impl(scf.IfOp)
    def run_if(self, interpreter: Interpreter, op: scf.IfOp, args: PythonValues):
        cond = uniform(op, args[0], "the scf.if condition")
        region = op.true_region if cond else op.false_region
        return interpreter.run_ssacfg_region(region, ())

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues):
        lb, ub, step = (uniform(op, v, what) for v, what in
                        zip(args[:3], ("the lower bound", "the upper bound", "the step")))
        loop_args = tuple(args[3:])
        if step <= 0:  # MLIR: the step of scf.for must be positive
            raise fail(op, f"the step must be positive, got {step}")
        if (ub - lb + step - 1) // step > MAX_LOOP_ITERATIONS:
            raise fail(op, f"{(ub - lb + step - 1) // step} iterations exceed the interpreter's limit "
                           f"of {MAX_LOOP_ITERATIONS} per loop (MAX_LOOP_ITERATIONS)")
        for i in range(lb, ub, step):
            loop_args = interpreter.run_ssacfg_region(op.body, (i, *loop_args), "for_loop")
        return loop_args

    @impl(scf.WhileOp)
    def run_while(self, interpreter: Interpreter, op: scf.WhileOp, args: PythonValues):
        loop_args = args
        for _ in range(MAX_LOOP_ITERATIONS + 1):
            cond, *fwd = interpreter.run_ssacfg_region(op.before_region, loop_args, "while")
            if not uniform(op, cond, "the scf.while condition"):
                return tuple(fwd)
            loop_args = interpreter.run_ssacfg_region(op.after_region, tuple(fwd), "while")
        raise fail(op, f"more than {MAX_LOOP_ITERATIONS} iterations, the interpreter's limit per loop "
                       "(MAX_LOOP_ITERATIONS)")
