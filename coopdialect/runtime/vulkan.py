"""The Vulkan device: SPIR-V from convert-coop-to-spirv, dispatched with the ctypes runner.

The j-th memref argument of a kernel is bound as the storage buffer at descriptor set 0, binding
j; its scalar arguments are pushed as one push-constant block (`vkCmdPushConstants`, with a
`VkPushConstantRange` in the pipeline layout), laid out and packed by
`coopdialect.spirv.push_constants` as convert-coop-to-spirv declared it (the kernel convention).
Before a module is dispatched, every SPIR-V capability and extension it declares is
checked against what the device enabled, so that a missing feature is one line naming the
Vulkan feature (`VkPhysicalDeviceCooperativeMatrix2FeaturesNV::cooperativeMatrixReductions`)
rather than a validation-layer message or a driver crash.

Buffers live on the host between launches: `launch` copies them into host-visible device
memory, dispatches and reads them back (the runner's "host" memory mode); `time` uploads once
into device-local memory and times back-to-back dispatches with timestamp queries (VkQueryPool,
`timestampPeriod` ns per tick).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from coopdialect.runtime.device import Device, DeviceError, Program, lower

# SPIR-V capability -> (feature struct key in VulkanContext.enabled_features, feature name), from
# the Vulkan spec's "SPIR-V Environment" appendix (capability table). The struct key names the
# C struct in messages through STRUCT_NAMES.
CAPABILITY_FEATURES = {
    "Float16": ("vulkan12", "shaderFloat16"),
    "Int8": ("vulkan12", "shaderInt8"),
    "Int16": ("core", "shaderInt16"),
    "Int64": ("core", "shaderInt64"),
    "Float64": ("core", "shaderFloat64"),
    "StorageBuffer16BitAccess": ("vulkan11", "storageBuffer16BitAccess"),
    "StorageBuffer8BitAccess": ("vulkan12", "storageBuffer8BitAccess"),
    "StoragePushConstant16": ("vulkan11", "storagePushConstant16"),
    "StoragePushConstant8": ("vulkan12", "storagePushConstant8"),
    "VulkanMemoryModel": ("vulkan12", "vulkanMemoryModel"),
    "PhysicalStorageBufferAddresses": ("vulkan12", "bufferDeviceAddress"),
    "CooperativeMatrixKHR": ("cooperative_matrix_khr", "cooperativeMatrix"),
    "CooperativeMatrixNV": ("cooperative_matrix_nv", "cooperativeMatrix"),
    "TensorAddressingNV": ("cooperative_matrix2_nv", "cooperativeMatrixTensorAddressing"),
    "CooperativeMatrixTensorAddressingNV": ("cooperative_matrix2_nv",
                                            "cooperativeMatrixTensorAddressing"),
    "CooperativeMatrixReductionsNV": ("cooperative_matrix2_nv", "cooperativeMatrixReductions"),
    "CooperativeMatrixConversionsNV": ("cooperative_matrix2_nv", "cooperativeMatrixConversions"),
    "CooperativeMatrixPerElementOperationsNV": ("cooperative_matrix2_nv",
                                                "cooperativeMatrixPerElementOperations"),
    "CooperativeMatrixBlockLoadsNV": ("cooperative_matrix2_nv", "cooperativeMatrixBlockLoads"),
    # the names newer grammars give two of them (the NV ones stay aliases)
    "CooperativeMatrixReductionsEXT": ("cooperative_matrix2_nv", "cooperativeMatrixReductions"),
    "CooperativeMatrixPerElementOperationsEXT": ("cooperative_matrix2_nv",
                                                 "cooperativeMatrixPerElementOperations"),
    "BFloat16TypeKHR": ("shader_bfloat16_khr", "shaderBFloat16Type"),
    "BFloat16DotProductKHR": ("shader_bfloat16_khr", "shaderBFloat16DotProduct"),
    "BFloat16CooperativeMatrixKHR": ("shader_bfloat16_khr", "shaderBFloat16CooperativeMatrix"),
}
STRUCT_NAMES = {
    "core": "VkPhysicalDeviceFeatures",
    "vulkan11": "VkPhysicalDeviceVulkan11Features",
    "vulkan12": "VkPhysicalDeviceVulkan12Features",
    "vulkan13": "VkPhysicalDeviceVulkan13Features",
    "cooperative_matrix_khr": "VkPhysicalDeviceCooperativeMatrixFeaturesKHR",
    "cooperative_matrix_nv": "VkPhysicalDeviceCooperativeMatrixFeaturesNV",
    "cooperative_matrix2_nv": "VkPhysicalDeviceCooperativeMatrix2FeaturesNV",
    "shader_bfloat16_khr": "VkPhysicalDeviceShaderBfloat16FeaturesKHR",
}
# SPIR-V extension -> the Vulkan device extension that allows it (Vulkan spec, same appendix);
# SPV_NV_tensor_addressing is allowed by VK_NV_cooperative_matrix2.
EXTENSION_DEVICE_EXTENSIONS = {
    "SPV_KHR_cooperative_matrix": "VK_KHR_cooperative_matrix",
    "SPV_NV_cooperative_matrix": "VK_NV_cooperative_matrix",
    "SPV_NV_cooperative_matrix2": "VK_NV_cooperative_matrix2",
    "SPV_NV_tensor_addressing": "VK_NV_cooperative_matrix2",
    "SPV_ARM_cooperative_matrix_layouts": "VK_ARM_cooperative_matrix_layouts",
    "SPV_KHR_bfloat16": "VK_KHR_shader_bfloat16",
}


def missing_features(capabilities: Sequence[str], extensions: Sequence[str],
                     enabled_features: dict[str, dict[str, bool]],
                     enabled_extensions: Sequence[str]) -> list[str]:
    """What the device lacks for a module declaring `capabilities` and `extensions`: one text
    per missing device extension or feature (`VK_NV_cooperative_matrix2 (for
    SPV_NV_tensor_addressing)`, `VkPhysicalDeviceVulkan12Features::shaderInt8 (for capability
    Int8)`). Capabilities the table above does not list are left to the driver."""
    out = []
    for ext in extensions:
        dev_ext = EXTENSION_DEVICE_EXTENSIONS.get(ext)
        if dev_ext is not None and dev_ext not in enabled_extensions:
            out.append(f"device extension {dev_ext} (for {ext})")
    for cap in capabilities:
        if cap in CAPABILITY_FEATURES:
            struct, feature = CAPABILITY_FEATURES[cap]
            if not enabled_features.get(struct, {}).get(feature):
                out.append(f"Vulkan feature {STRUCT_NAMES[struct]}::{feature} "
                           f"(for capability {cap})")
    return list(dict.fromkeys(out))


class VulkanDevice(Device):
    """Vulkan 1.3 on the first discrete GPU (see the module docstring).

    Raises DeviceError `no Vulkan loader found (...)`, `no Vulkan driver found (...)` or `no
    Vulkan GPU found (...)` when it cannot open one; the parentheses say what was tried (the
    loader's path, the ICD manifests and whether their libraries load, the missing GL dispatch
    libraries: `vulkan_setup.diagnose`)."""

    name = "vulkan"
    default_pipeline = "convert-coop-to-spirv"

    def __init__(self, validation: bool | None = None):
        from coopdialect.runtime import vulkan_ctypes as vk

        self._vk = vk
        try:
            self.ctx = vk.VulkanContext(validation=validation)
        except OSError as e:
            raise DeviceError(f"no Vulkan loader found ({e}; install libvulkan1: docs/gpu.md, "
                              "tools/fetch_vulkan_loader.sh)") from None
        except vk.VulkanError as e:
            from coopdialect.runtime.vulkan_setup import diagnose

            if e.name == "VK_ERROR_INCOMPATIBLE_DRIVER":
                raise DeviceError(f"no Vulkan driver found ({e}; {diagnose()})") from None
            if e.call == "vkEnumeratePhysicalDevices":
                raise DeviceError(f"no Vulkan GPU found ({e}; {diagnose()})") from None
            raise DeviceError(f"cannot open a Vulkan device: {e}") from None

    def compile(self, module: ModuleOp, pipeline: str | None = None) -> Program:
        from xdsl.dialects import func

        from coopdialect.spirv.requirements import derive_requirements
        from coopdialect.spirv.target import emit_spirv, find_spirv_module
        from coopdialect.spirv.writer import verified_by_caller

        lowered = lower(module, pipeline, self.default_pipeline)
        smod = find_spirv_module(lowered)
        req = derive_requirements(smod)
        lacks = missing_features(req.capabilities, req.extensions, self.ctx.enabled_features,
                                 self.ctx.enabled_extensions)
        if lacks:
            raise DeviceError(f"the Vulkan device ({self.ctx.device_info()['name']}) lacks "
                              + "; ".join(lacks))
        self._check_shared_memory(smod)
        with verified_by_caller():  # lower() verified the module after each pass
            program = self.load(emit_spirv(lowered))
        for fn in module.ops:  # the kernels' argument types: which are buffers, which scalars
            if isinstance(fn, func.FuncOp):
                program.kernels[fn.sym_name.data] = list(fn.function_type.inputs.data)
        return program

    def _check_shared_memory(self, smod) -> None:
        """DeviceError when the module's Workgroup variables need more than the device's
        maxComputeSharedMemorySize (VkPhysicalDeviceLimits): a pipeline over the limit is
        invalid usage, which a driver need not report (the H200's accepts it and loses the
        device at the dispatch)."""
        from coopdialect.dialects import spirv

        used = sum(_natural_bytes(op.type.pointee) for op in smod.walk()
                   if isinstance(op, spirv.GlobalVariableOp)
                   and op.type.storage_class.data == "Workgroup")
        limit = self.ctx.device_info()["limits"]["maxComputeSharedMemorySize"]
        if used > limit:
            raise DeviceError(f"the module's Workgroup variables take {used} bytes, more than the "
                              f"device's maxComputeSharedMemorySize of {limit}")

    def load(self, spirv: bytes) -> Program:
        """A program of SPIR-V built elsewhere (glslang's binaries, tests/data/*.spv); its
        features are the driver's to check, and its kernels take buffers only (push constants
        need the layout of a program compiled here)."""
        return Program("vulkan", bytes(spirv), {})

    def upload(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, order="C", copy=True)

    def download(self, buffer: np.ndarray, like: np.ndarray) -> np.ndarray:
        return buffer.view(like.dtype).reshape(like.shape).copy()

    def _split(self, program: Program, kernel: str,
               args: Sequence[object]) -> tuple[list[np.ndarray], bytes | None]:
        """(buffers in binding order, push-constant bytes or None) of a launch's arguments."""
        from xdsl.dialects.builtin import MemRefType

        from coopdialect.spirv import push_constants

        types = program.kernels.get(kernel)
        if types is None:  # a loaded binary: every argument is a buffer
            if not all(isinstance(a, np.ndarray) for a in args):
                raise DeviceError(f"kernel '{kernel}' of a loaded SPIR-V binary takes buffers "
                                  "only (scalar arguments need a program compiled by this device)")
            return list(args), None
        if len(args) != len(types):
            raise DeviceError(f"kernel '{kernel}' takes {len(types)} arguments, got {len(args)}")
        buffers = [a for a, t in zip(args, types) if isinstance(t, MemRefType)]
        scalars = [(a, t) for a, t in zip(args, types) if not isinstance(t, MemRefType)]
        if not scalars:
            return buffers, None
        members = push_constants.layout([t for _, t in scalars])
        try:
            return buffers, push_constants.pack(members, [a for a, _ in scalars])
        except ValueError as e:
            raise DeviceError(f"kernel '{kernel}': {e}") from None

    def launch(self, program: Program, kernel: str, args: Sequence[object],
               grid: tuple[int, int, int]) -> None:
        buffers, push = self._split(program, kernel, args)
        outs = self._call(self.ctx.run_compute, program.binary, buffers, tuple(grid),
                          entry=kernel, push_constants=push)
        for b, o in zip(buffers, outs):
            b[...] = o

    def time(self, program: Program, kernel: str, args: Sequence[object],
             grid: tuple[int, int, int], reps: int) -> list[float]:
        buffers, push = self._split(program, kernel, args)
        _, times_ns = self._call(self.ctx.benchmark, program.binary, buffers, tuple(grid),
                                 entry=kernel, repeat=reps, warmup=1, push_constants=push)
        return [t * 1e-9 for t in times_ns]

    def _call(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except self._vk.VulkanError as e:
            raise DeviceError(str(e)) from None

    def close(self) -> None:
        self.ctx.close()


def _natural_bytes(t) -> int:
    """Bytes of a Workgroup variable of type `t` (scalars, vectors, arrays and structs laid out
    without padding beyond their components': a lower bound of what the driver allocates)."""
    from xdsl.dialects.builtin import AnyFloat, IntegerType, VectorType

    from coopdialect.dialects import spirv_types as st

    if isinstance(t, IntegerType):
        return max(1, t.width.data // 8)
    if isinstance(t, AnyFloat):
        return t.bitwidth // 8
    if isinstance(t, VectorType):
        return _natural_bytes(t.element_type) * t.get_shape()[0]
    if isinstance(t, st.ArrayType):
        return t.length.data * max(t.stride.data, _natural_bytes(t.element_type))
    if isinstance(t, st.StructType):
        return sum(_natural_bytes(m) for m in t.members)
    return 0
