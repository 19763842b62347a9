"""Minimal Vulkan compute runner in pure Python (ctypes over libvulkan.so.1).

Runs compiler-emitted SPIR-V compute shaders on a GPU (the target is an NVIDIA H200); the
runtime's Vulkan device (`coopdialect.runtime.vulkan`) is built on it. Every struct and function
used is declared here with ctypes.

Why ctypes and not a binding (checked 2026-11): the maintained `vulkan` package (realitix,
1.3.275.1, Feb 2024) is generated from headers that predate VK_NV_cooperative_matrix2 (its structs
came with Vulkan-Headers 1.3.30x), so it cannot enable the coopmat2 features or query the
flexible-dimension table; `vulkan_py` 1.1.0 (2026) is generated from a current vk.xml and has
them, but it is a months-old single-author project under GPL-3.0-or-later, which this package
cannot depend on. So the declarations stay here, each taken from vulkan_core.h.

Public API
----------
``run_compute(spirv, buffers, grid, entry="main", ...)``
    One-shot: create a context, run one dispatch, destroy the context.
``VulkanContext()``
    Instance + device created once, reused for many dispatches (``.run_compute``,
    ``.benchmark``, ``.device_info``, ``.close``; also a context manager).
``device_info()``
    Device name, driver version, API version, limits, enabled extensions/features and the
    cooperative-matrix tables (KHR, NV v1, NV2 flexible dimensions).
``VulkanError``
    Raised on any failing VkResult; ``.result`` is the integer, ``.name`` the VkResult name.

Binding model: ``buffers[i]`` is bound as a storage buffer at descriptor set 0, binding i.
Optional push constants are given as raw bytes (``push_constants=``), visible to the compute
stage at offset 0.

Structure-type values and struct layouts not in Vulkan 1.0 were taken from the Khronos
registry header (KhronosGroup/Vulkan-Headers include/vulkan/vulkan_core.h):
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR   = 1000506000
  VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR                 = 1000506001
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR = 1000506002
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV    = 1000249000
  VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV                  = 1000249001
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV  = 1000593000
  VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV = 1000593001
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV = 1000593002
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR      = 1000141000
  VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO = 1000225001
  VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR = 1000269000
  VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR                                 = 1000269001
  VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR                = 1000269002
  VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR                      = 1000269003
  VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR                 = 1000269004
  VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR                       = 0x00000040

Environment: ``VK_RUNNER_VALIDATION=1`` enables VK_LAYER_KHRONOS_validation when present
(same as ``VulkanContext(validation=True)``).  The loader is found as libvulkan.so.1 (or
``VK_RUNNER_LIBVULKAN``); docs/gpu.md says what a machine needs.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import sys
from functools import partial
from ctypes import (POINTER, Structure, byref, c_char, c_char_p, c_float, c_int32, c_size_t,
                    c_uint8, c_uint32, c_uint64, c_void_p, cast, pointer, sizeof)
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["VulkanError", "VulkanContext", "run_compute", "device_info", "COMPONENT_TYPE_NAMES",
           "SCOPE_NAMES"]

# --------------------------------------------------------------------------------------------
# Constants
# --------------------------------------------------------------------------------------------

VK_RESULT_NAMES = {
    0: "VK_SUCCESS", 1: "VK_NOT_READY", 2: "VK_TIMEOUT", 3: "VK_EVENT_SET", 4: "VK_EVENT_RESET",
    5: "VK_INCOMPLETE",
    -1: "VK_ERROR_OUT_OF_HOST_MEMORY", -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
    -3: "VK_ERROR_INITIALIZATION_FAILED", -4: "VK_ERROR_DEVICE_LOST",
    -5: "VK_ERROR_MEMORY_MAP_FAILED", -6: "VK_ERROR_LAYER_NOT_PRESENT",
    -7: "VK_ERROR_EXTENSION_NOT_PRESENT", -8: "VK_ERROR_FEATURE_NOT_PRESENT",
    -9: "VK_ERROR_INCOMPATIBLE_DRIVER", -10: "VK_ERROR_TOO_MANY_OBJECTS",
    -11: "VK_ERROR_FORMAT_NOT_SUPPORTED", -12: "VK_ERROR_FRAGMENTED_POOL",
    -13: "VK_ERROR_UNKNOWN",
    -1000069000: "VK_ERROR_OUT_OF_POOL_MEMORY", -1000072003: "VK_ERROR_INVALID_EXTERNAL_HANDLE",
    -1000161000: "VK_ERROR_FRAGMENTATION", -1000257000: "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
    1000297000: "VK_PIPELINE_COMPILE_REQUIRED", -1000011001: "VK_ERROR_VALIDATION_FAILED_EXT",
    -1000012000: "VK_ERROR_INVALID_SHADER_NV", -1000174001: "VK_ERROR_NOT_PERMITTED_KHR",
}

# VkComponentTypeKHR
COMPONENT_TYPE_NAMES = {
    0: "f16", 1: "f32", 2: "f64", 3: "s8", 4: "s16", 5: "s32", 6: "s64",
    7: "u8", 8: "u16", 9: "u32", 10: "u64",
    1000141000: "bf16", 1000491000: "s8packed", 1000491001: "u8packed",
    1000491002: "e4m3", 1000491003: "e5m2",
}
# VkScopeKHR
SCOPE_NAMES = {1: "device", 2: "workgroup", 3: "subgroup", 5: "queue_family"}

# sTypes (core values are from the Vulkan spec; extension values: see module docstring)
ST_APPLICATION_INFO = 0
ST_INSTANCE_CREATE_INFO = 1
ST_DEVICE_QUEUE_CREATE_INFO = 2
ST_DEVICE_CREATE_INFO = 3
ST_SUBMIT_INFO = 4
ST_MEMORY_ALLOCATE_INFO = 5
ST_FENCE_CREATE_INFO = 8
ST_QUERY_POOL_CREATE_INFO = 11
ST_BUFFER_CREATE_INFO = 12
ST_SHADER_MODULE_CREATE_INFO = 16
ST_PIPELINE_SHADER_STAGE_CREATE_INFO = 18
ST_COMPUTE_PIPELINE_CREATE_INFO = 29
ST_PIPELINE_LAYOUT_CREATE_INFO = 30
ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO = 32
ST_DESCRIPTOR_POOL_CREATE_INFO = 33
ST_DESCRIPTOR_SET_ALLOCATE_INFO = 34
ST_WRITE_DESCRIPTOR_SET = 35
ST_COMMAND_POOL_CREATE_INFO = 39
ST_COMMAND_BUFFER_ALLOCATE_INFO = 40
ST_COMMAND_BUFFER_BEGIN_INFO = 42
ST_MEMORY_BARRIER = 46
ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES = 49
ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES = 51
ST_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES = 53
ST_PHYSICAL_DEVICE_FEATURES_2 = 1000059000
ST_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001
ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES = 1000094000
ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES = 1000196000
ST_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO = 1000225001
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV = 1000249000
ST_COOPERATIVE_MATRIX_PROPERTIES_NV = 1000249001
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR = 1000506000
ST_COOPERATIVE_MATRIX_PROPERTIES_KHR = 1000506001
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV = 1000593000
ST_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV = 1000593001
ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV = 1000593002
ST_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR = 1000141000

VK_API_VERSION_1_3 = (1 << 22) | (3 << 12)
VK_QUEUE_COMPUTE_BIT = 0x2
VK_BUFFER_USAGE_TRANSFER_SRC_BIT = 0x1
VK_BUFFER_USAGE_TRANSFER_DST_BIT = 0x2
VK_BUFFER_USAGE_STORAGE_BUFFER_BIT = 0x20
VK_SHARING_MODE_EXCLUSIVE = 0
VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT = 0x1
VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT = 0x2
VK_MEMORY_PROPERTY_HOST_COHERENT_BIT = 0x4
VK_DESCRIPTOR_TYPE_STORAGE_BUFFER = 7
VK_SHADER_STAGE_COMPUTE_BIT = 0x20
VK_PIPELINE_BIND_POINT_COMPUTE = 1
VK_COMMAND_BUFFER_LEVEL_PRIMARY = 0
VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT = 0x2
VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT = 0x1
VK_PIPELINE_STAGE_TRANSFER_BIT = 0x1000
VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT = 0x800
VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT = 0x2000
VK_PIPELINE_STAGE_HOST_BIT = 0x4000
VK_ACCESS_SHADER_READ_BIT = 0x20
VK_ACCESS_SHADER_WRITE_BIT = 0x40
VK_ACCESS_TRANSFER_READ_BIT = 0x800
VK_ACCESS_TRANSFER_WRITE_BIT = 0x1000
VK_ACCESS_HOST_READ_BIT = 0x2000
VK_QUERY_TYPE_TIMESTAMP = 2
VK_QUERY_RESULT_64_BIT = 0x1
VK_QUERY_RESULT_WAIT_BIT = 0x2
VK_WHOLE_SIZE = 0xFFFFFFFFFFFFFFFF
VK_PIPELINE_SHADER_STAGE_CREATE_ALLOW_VARYING_SUBGROUP_SIZE_BIT = 0x1
VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT = 0x2

# Device extensions enabled when the device offers them.
WANTED_DEVICE_EXTENSIONS = (
    "VK_KHR_cooperative_matrix",
    "VK_NV_cooperative_matrix",
    "VK_NV_cooperative_matrix2",
    "VK_KHR_shader_bfloat16",
    "VK_KHR_pipeline_executable_properties",  # pipeline_statistics(): registers, memory, ...
)
# VK_KHR_pipeline_executable_properties (vulkan_core.h; listed in the module docstring)
ST_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR = 1000269000
ST_PIPELINE_INFO_KHR = 1000269001
ST_PIPELINE_EXECUTABLE_PROPERTIES_KHR = 1000269002
ST_PIPELINE_EXECUTABLE_INFO_KHR = 1000269003
ST_PIPELINE_EXECUTABLE_STATISTIC_KHR = 1000269004
VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR = 0x40
# VkPipelineExecutableStatisticFormatKHR: BOOL32, INT64, UINT64, FLOAT64 -> the value union's member
_STATISTIC_FORMATS = {0: "b32", 1: "i64", 2: "u64", 3: "f64"}

# Features never enabled even when supported (they change behaviour or need special setup).
_FEATURE_DENYLIST = {
    "robustBufferAccess", "robustImageAccess", "protectedMemory",
    "bufferDeviceAddressCaptureReplay", "bufferDeviceAddressMultiDevice",
    "cooperativeMatrixRobustBufferAccess",
}


class VulkanError(RuntimeError):
    """A Vulkan call failed.  ``.result`` is the VkResult integer, ``.name`` its name
    (e.g. ``"VK_ERROR_DEVICE_LOST"``), ``.call`` the failing function."""

    def __init__(self, call: str, result: int, detail: str = ""):
        self.call = call
        self.result = int(result)
        self.name = VK_RESULT_NAMES.get(self.result, f"VkResult({self.result})")
        msg = f"{call} failed: {self.name}"
        if detail:
            msg += f" ({detail})"
        super().__init__(msg)


# --------------------------------------------------------------------------------------------
# ctypes structs
# --------------------------------------------------------------------------------------------

VkBool32 = c_uint32
VkFlags = c_uint32
VkDeviceSize = c_uint64
Handle = c_uint64          # non-dispatchable handle (64-bit)
Dispatchable = c_void_p    # VkInstance, VkPhysicalDevice, VkDevice, VkQueue, VkCommandBuffer


def _s(name, fields):
    return type(name, (Structure,), {"_fields_": fields})


VkApplicationInfo = _s("VkApplicationInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("pApplicationName", c_char_p),
    ("applicationVersion", c_uint32), ("pEngineName", c_char_p), ("engineVersion", c_uint32),
    ("apiVersion", c_uint32)])
VkInstanceCreateInfo = _s("VkInstanceCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags),
    ("pApplicationInfo", POINTER(VkApplicationInfo)),
    ("enabledLayerCount", c_uint32), ("ppEnabledLayerNames", POINTER(c_char_p)),
    ("enabledExtensionCount", c_uint32), ("ppEnabledExtensionNames", POINTER(c_char_p))])
VkExtensionProperties = _s("VkExtensionProperties", [
    ("extensionName", c_char * 256), ("specVersion", c_uint32)])
VkLayerProperties = _s("VkLayerProperties", [
    ("layerName", c_char * 256), ("specVersion", c_uint32), ("implementationVersion", c_uint32),
    ("description", c_char * 256)])

_LIMITS_FIELDS = [
    ("maxImageDimension1D", c_uint32), ("maxImageDimension2D", c_uint32),
    ("maxImageDimension3D", c_uint32), ("maxImageDimensionCube", c_uint32),
    ("maxImageArrayLayers", c_uint32), ("maxTexelBufferElements", c_uint32),
    ("maxUniformBufferRange", c_uint32), ("maxStorageBufferRange", c_uint32),
    ("maxPushConstantsSize", c_uint32), ("maxMemoryAllocationCount", c_uint32),
    ("maxSamplerAllocationCount", c_uint32), ("bufferImageGranularity", VkDeviceSize),
    ("sparseAddressSpaceSize", VkDeviceSize), ("maxBoundDescriptorSets", c_uint32),
    ("maxPerStageDescriptorSamplers", c_uint32), ("maxPerStageDescriptorUniformBuffers", c_uint32),
    ("maxPerStageDescriptorStorageBuffers", c_uint32),
    ("maxPerStageDescriptorSampledImages", c_uint32),
    ("maxPerStageDescriptorStorageImages", c_uint32),
    ("maxPerStageDescriptorInputAttachments", c_uint32), ("maxPerStageResources", c_uint32),
    ("maxDescriptorSetSamplers", c_uint32), ("maxDescriptorSetUniformBuffers", c_uint32),
    ("maxDescriptorSetUniformBuffersDynamic", c_uint32),
    ("maxDescriptorSetStorageBuffers", c_uint32),
    ("maxDescriptorSetStorageBuffersDynamic", c_uint32),
    ("maxDescriptorSetSampledImages", c_uint32), ("maxDescriptorSetStorageImages", c_uint32),
    ("maxDescriptorSetInputAttachments", c_uint32), ("maxVertexInputAttributes", c_uint32),
    ("maxVertexInputBindings", c_uint32), ("maxVertexInputAttributeOffset", c_uint32),
    ("maxVertexInputBindingStride", c_uint32), ("maxVertexOutputComponents", c_uint32),
    ("maxTessellationGenerationLevel", c_uint32), ("maxTessellationPatchSize", c_uint32),
    ("maxTessellationControlPerVertexInputComponents", c_uint32),
    ("maxTessellationControlPerVertexOutputComponents", c_uint32),
    ("maxTessellationControlPerPatchOutputComponents", c_uint32),
    ("maxTessellationControlTotalOutputComponents", c_uint32),
    ("maxTessellationEvaluationInputComponents", c_uint32),
    ("maxTessellationEvaluationOutputComponents", c_uint32),
    ("maxGeometryShaderInvocations", c_uint32), ("maxGeometryInputComponents", c_uint32),
    ("maxGeometryOutputComponents", c_uint32), ("maxGeometryOutputVertices", c_uint32),
    ("maxGeometryTotalOutputComponents", c_uint32), ("maxFragmentInputComponents", c_uint32),
    ("maxFragmentOutputAttachments", c_uint32), ("maxFragmentDualSrcAttachments", c_uint32),
    ("maxFragmentCombinedOutputResources", c_uint32), ("maxComputeSharedMemorySize", c_uint32),
    ("maxComputeWorkGroupCount", c_uint32 * 3), ("maxComputeWorkGroupInvocations", c_uint32),
    ("maxComputeWorkGroupSize", c_uint32 * 3), ("subPixelPrecisionBits", c_uint32),
    ("subTexelPrecisionBits", c_uint32), ("mipmapPrecisionBits", c_uint32),
    ("maxDrawIndexedIndexValue", c_uint32), ("maxDrawIndirectCount", c_uint32),
    ("maxSamplerLodBias", c_float), ("maxSamplerAnisotropy", c_float),
    ("maxViewports", c_uint32), ("maxViewportDimensions", c_uint32 * 2),
    ("viewportBoundsRange", c_float * 2), ("viewportSubPixelBits", c_uint32),
    ("minMemoryMapAlignment", c_size_t), ("minTexelBufferOffsetAlignment", VkDeviceSize),
    ("minUniformBufferOffsetAlignment", VkDeviceSize),
    ("minStorageBufferOffsetAlignment", VkDeviceSize), ("minTexelOffset", c_int32),
    ("maxTexelOffset", c_uint32), ("minTexelGatherOffset", c_int32),
    ("maxTexelGatherOffset", c_uint32), ("minInterpolationOffset", c_float),
    ("maxInterpolationOffset", c_float), ("subPixelInterpolationOffsetBits", c_uint32),
    ("maxFramebufferWidth", c_uint32), ("maxFramebufferHeight", c_uint32),
    ("maxFramebufferLayers", c_uint32), ("framebufferColorSampleCounts", VkFlags),
    ("framebufferDepthSampleCounts", VkFlags), ("framebufferStencilSampleCounts", VkFlags),
    ("framebufferNoAttachmentsSampleCounts", VkFlags), ("maxColorAttachments", c_uint32),
    ("sampledImageColorSampleCounts", VkFlags), ("sampledImageIntegerSampleCounts", VkFlags),
    ("sampledImageDepthSampleCounts", VkFlags), ("sampledImageStencilSampleCounts", VkFlags),
    ("storageImageSampleCounts", VkFlags), ("maxSampleMaskWords", c_uint32),
    ("timestampComputeAndGraphics", VkBool32), ("timestampPeriod", c_float),
    ("maxClipDistances", c_uint32), ("maxCullDistances", c_uint32),
    ("maxCombinedClipAndCullDistances", c_uint32), ("discreteQueuePriorities", c_uint32),
    ("pointSizeRange", c_float * 2), ("lineWidthRange", c_float * 2),
    ("pointSizeGranularity", c_float), ("lineWidthGranularity", c_float),
    ("strictLines", VkBool32), ("standardSampleLocations", VkBool32),
    ("optimalBufferCopyOffsetAlignment", VkDeviceSize),
    ("optimalBufferCopyRowPitchAlignment", VkDeviceSize), ("nonCoherentAtomSize", VkDeviceSize)]
VkPhysicalDeviceLimits = _s("VkPhysicalDeviceLimits", _LIMITS_FIELDS)
VkPhysicalDeviceSparseProperties = _s("VkPhysicalDeviceSparseProperties", [
    (n, VkBool32) for n in ("residencyStandard2DBlockShape",
                            "residencyStandard2DMultisampleBlockShape",
                            "residencyStandard3DBlockShape", "residencyAlignedMipSize",
                            "residencyNonResidentStrict")])
VkPhysicalDeviceProperties = _s("VkPhysicalDeviceProperties", [
    ("apiVersion", c_uint32), ("driverVersion", c_uint32), ("vendorID", c_uint32),
    ("deviceID", c_uint32), ("deviceType", c_int32), ("deviceName", c_char * 256),
    ("pipelineCacheUUID", c_uint8 * 16), ("limits", VkPhysicalDeviceLimits),
    ("sparseProperties", VkPhysicalDeviceSparseProperties)])
assert sizeof(VkPhysicalDeviceProperties) == 824, sizeof(VkPhysicalDeviceProperties)
VkPhysicalDeviceProperties2 = _s("VkPhysicalDeviceProperties2", [
    ("sType", c_int32), ("pNext", c_void_p), ("properties", VkPhysicalDeviceProperties)])
VkPhysicalDeviceDriverProperties = _s("VkPhysicalDeviceDriverProperties", [
    ("sType", c_int32), ("pNext", c_void_p), ("driverID", c_int32),
    ("driverName", c_char * 256), ("driverInfo", c_char * 256),
    ("conformanceVersion", c_uint8 * 4)])
VkPhysicalDeviceSubgroupProperties = _s("VkPhysicalDeviceSubgroupProperties", [
    ("sType", c_int32), ("pNext", c_void_p), ("subgroupSize", c_uint32),
    ("supportedStages", VkFlags), ("supportedOperations", VkFlags),
    ("quadOperationsInAllStages", VkBool32)])
VkPhysicalDeviceCooperativeMatrix2PropertiesNV = _s(
    "VkPhysicalDeviceCooperativeMatrix2PropertiesNV", [
        ("sType", c_int32), ("pNext", c_void_p),
        ("cooperativeMatrixWorkgroupScopeMaxWorkgroupSize", c_uint32),
        ("cooperativeMatrixFlexibleDimensionsMaxDimension", c_uint32),
        ("cooperativeMatrixWorkgroupScopeReservedSharedMemory", c_uint32)])

_CORE_FEATURE_NAMES = [
    "robustBufferAccess", "fullDrawIndexUint32", "imageCubeArray", "independentBlend",
    "geometryShader", "tessellationShader", "sampleRateShading", "dualSrcBlend", "logicOp",
    "multiDrawIndirect", "drawIndirectFirstInstance", "depthClamp", "depthBiasClamp",
    "fillModeNonSolid", "depthBounds", "wideLines", "largePoints", "alphaToOne", "multiViewport",
    "samplerAnisotropy", "textureCompressionETC2", "textureCompressionASTC_LDR",
    "textureCompressionBC", "occlusionQueryPrecise", "pipelineStatisticsQuery",
    "vertexPipelineStoresAndAtomics", "fragmentStoresAndAtomics",
    "shaderTessellationAndGeometryPointSize", "shaderImageGatherExtended",
    "shaderStorageImageExtendedFormats", "shaderStorageImageMultisample",
    "shaderStorageImageReadWithoutFormat", "shaderStorageImageWriteWithoutFormat",
    "shaderUniformBufferArrayDynamicIndexing", "shaderSampledImageArrayDynamicIndexing",
    "shaderStorageBufferArrayDynamicIndexing", "shaderStorageImageArrayDynamicIndexing",
    "shaderClipDistance", "shaderCullDistance", "shaderFloat64", "shaderInt64", "shaderInt16",
    "shaderResourceResidency", "shaderResourceMinLod", "sparseBinding", "sparseResidencyBuffer",
    "sparseResidencyImage2D", "sparseResidencyImage3D", "sparseResidency2Samples",
    "sparseResidency4Samples", "sparseResidency8Samples", "sparseResidency16Samples",
    "sparseResidencyAliased", "variableMultisampleRate", "inheritedQueries"]
VkPhysicalDeviceFeatures = _s("VkPhysicalDeviceFeatures",
                              [(n, VkBool32) for n in _CORE_FEATURE_NAMES])


def _feature_struct(name, bools):
    return _s(name, [("sType", c_int32), ("pNext", c_void_p)] + [(b, VkBool32) for b in bools])


VkPhysicalDeviceFeatures2 = _s("VkPhysicalDeviceFeatures2", [
    ("sType", c_int32), ("pNext", c_void_p), ("features", VkPhysicalDeviceFeatures)])
VkPhysicalDeviceVulkan11Features = _feature_struct("VkPhysicalDeviceVulkan11Features", [
    "storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess", "storagePushConstant16",
    "storageInputOutput16", "multiview", "multiviewGeometryShader",
    "multiviewTessellationShader", "variablePointersStorageBuffer", "variablePointers",
    "protectedMemory", "samplerYcbcrConversion", "shaderDrawParameters"])
VkPhysicalDeviceVulkan12Features = _feature_struct("VkPhysicalDeviceVulkan12Features", [
    "samplerMirrorClampToEdge", "drawIndirectCount", "storageBuffer8BitAccess",
    "uniformAndStorageBuffer8BitAccess", "storagePushConstant8", "shaderBufferInt64Atomics",
    "shaderSharedInt64Atomics", "shaderFloat16", "shaderInt8", "descriptorIndexing",
    "shaderInputAttachmentArrayDynamicIndexing", "shaderUniformTexelBufferArrayDynamicIndexing",
    "shaderStorageTexelBufferArrayDynamicIndexing", "shaderUniformBufferArrayNonUniformIndexing",
    "shaderSampledImageArrayNonUniformIndexing", "shaderStorageBufferArrayNonUniformIndexing",
    "shaderStorageImageArrayNonUniformIndexing", "shaderInputAttachmentArrayNonUniformIndexing",
    "shaderUniformTexelBufferArrayNonUniformIndexing",
    "shaderStorageTexelBufferArrayNonUniformIndexing",
    "descriptorBindingUniformBufferUpdateAfterBind",
    "descriptorBindingSampledImageUpdateAfterBind",
    "descriptorBindingStorageImageUpdateAfterBind",
    "descriptorBindingStorageBufferUpdateAfterBind",
    "descriptorBindingUniformTexelBufferUpdateAfterBind",
    "descriptorBindingStorageTexelBufferUpdateAfterBind",
    "descriptorBindingUpdateUnusedWhilePending", "descriptorBindingPartiallyBound",
    "descriptorBindingVariableDescriptorCount", "runtimeDescriptorArray", "samplerFilterMinmax",
    "scalarBlockLayout", "imagelessFramebuffer", "uniformBufferStandardLayout",
    "shaderSubgroupExtendedTypes", "separateDepthStencilLayouts", "hostQueryReset",
    "timelineSemaphore", "bufferDeviceAddress", "bufferDeviceAddressCaptureReplay",
    "bufferDeviceAddressMultiDevice", "vulkanMemoryModel", "vulkanMemoryModelDeviceScope",
    "vulkanMemoryModelAvailabilityVisibilityChains", "shaderOutputViewportIndex",
    "shaderOutputLayer", "subgroupBroadcastDynamicId"])
VkPhysicalDeviceVulkan13Features = _feature_struct("VkPhysicalDeviceVulkan13Features", [
    "robustImageAccess", "inlineUniformBlock", "descriptorBindingInlineUniformBlockUpdateAfterBind",
    "pipelineCreationCacheControl", "privateData", "shaderDemoteToHelperInvocation",
    "shaderTerminateInvocation", "subgroupSizeControl", "computeFullSubgroups",
    "synchronization2", "textureCompressionASTC_HDR", "shaderZeroInitializeWorkgroupMemory",
    "dynamicRendering", "shaderIntegerDotProduct", "maintenance4"])
VkPhysicalDeviceCooperativeMatrixFeaturesKHR = _feature_struct(
    "VkPhysicalDeviceCooperativeMatrixFeaturesKHR",
    ["cooperativeMatrix", "cooperativeMatrixRobustBufferAccess"])
VkPhysicalDeviceCooperativeMatrixFeaturesNV = _feature_struct(
    "VkPhysicalDeviceCooperativeMatrixFeaturesNV",
    ["cooperativeMatrix", "cooperativeMatrixRobustBufferAccess"])
# Vulkan 1.4.309 headers, VK_NV_cooperative_matrix2.
VkPhysicalDeviceCooperativeMatrix2FeaturesNV = _feature_struct(
    "VkPhysicalDeviceCooperativeMatrix2FeaturesNV", [
        "cooperativeMatrixWorkgroupScope", "cooperativeMatrixFlexibleDimensions",
        "cooperativeMatrixReductions", "cooperativeMatrixConversions",
        "cooperativeMatrixPerElementOperations", "cooperativeMatrixTensorAddressing",
        "cooperativeMatrixBlockLoads"])
# VK_KHR_shader_bfloat16 (Vulkan 1.4.311 headers)
VkPhysicalDeviceShaderBfloat16FeaturesKHR = _feature_struct(
    "VkPhysicalDeviceShaderBfloat16FeaturesKHR",
    ["shaderBFloat16Type", "shaderBFloat16DotProduct", "shaderBFloat16CooperativeMatrix"])

VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR = _feature_struct(
    "VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR", ["pipelineExecutableInfo"])
VkPipelineInfoKHR = _s("VkPipelineInfoKHR", [
    ("sType", c_int32), ("pNext", c_void_p), ("pipeline", Handle)])
VkPipelineExecutablePropertiesKHR = _s("VkPipelineExecutablePropertiesKHR", [
    ("sType", c_int32), ("pNext", c_void_p), ("stages", VkFlags), ("name", c_char * 256),
    ("description", c_char * 256), ("subgroupSize", c_uint32)])
VkPipelineExecutableInfoKHR = _s("VkPipelineExecutableInfoKHR", [
    ("sType", c_int32), ("pNext", c_void_p), ("pipeline", Handle), ("executableIndex", c_uint32)])


class VkPipelineExecutableStatisticValueKHR(ctypes.Union):
    _fields_ = [("b32", VkBool32), ("i64", ctypes.c_int64), ("u64", c_uint64),
                ("f64", ctypes.c_double)]


VkPipelineExecutableStatisticKHR = _s("VkPipelineExecutableStatisticKHR", [
    ("sType", c_int32), ("pNext", c_void_p), ("name", c_char * 256),
    ("description", c_char * 256), ("format", c_int32),
    ("value", VkPipelineExecutableStatisticValueKHR)])

VkCooperativeMatrixPropertiesKHR = _s("VkCooperativeMatrixPropertiesKHR", [
    ("sType", c_int32), ("pNext", c_void_p), ("MSize", c_uint32), ("NSize", c_uint32),
    ("KSize", c_uint32), ("AType", c_int32), ("BType", c_int32), ("CType", c_int32),
    ("ResultType", c_int32), ("saturatingAccumulation", VkBool32), ("scope", c_int32)])
VkCooperativeMatrixPropertiesNV = _s("VkCooperativeMatrixPropertiesNV", [
    ("sType", c_int32), ("pNext", c_void_p), ("MSize", c_uint32), ("NSize", c_uint32),
    ("KSize", c_uint32), ("AType", c_int32), ("BType", c_int32), ("CType", c_int32),
    ("DType", c_int32), ("scope", c_int32)])
VkCooperativeMatrixFlexibleDimensionsPropertiesNV = _s(
    "VkCooperativeMatrixFlexibleDimensionsPropertiesNV", [
        ("sType", c_int32), ("pNext", c_void_p), ("MGranularity", c_uint32),
        ("NGranularity", c_uint32), ("KGranularity", c_uint32), ("AType", c_int32),
        ("BType", c_int32), ("CType", c_int32), ("ResultType", c_int32),
        ("saturatingAccumulation", VkBool32), ("scope", c_int32),
        ("workgroupInvocations", c_uint32)])

VkQueueFamilyProperties = _s("VkQueueFamilyProperties", [
    ("queueFlags", VkFlags), ("queueCount", c_uint32), ("timestampValidBits", c_uint32),
    ("minImageTransferGranularity", c_uint32 * 3)])
VkDeviceQueueCreateInfo = _s("VkDeviceQueueCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags),
    ("queueFamilyIndex", c_uint32), ("queueCount", c_uint32),
    ("pQueuePriorities", POINTER(c_float))])
VkDeviceCreateInfo = _s("VkDeviceCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags),
    ("queueCreateInfoCount", c_uint32), ("pQueueCreateInfos", POINTER(VkDeviceQueueCreateInfo)),
    ("enabledLayerCount", c_uint32), ("ppEnabledLayerNames", POINTER(c_char_p)),
    ("enabledExtensionCount", c_uint32), ("ppEnabledExtensionNames", POINTER(c_char_p)),
    ("pEnabledFeatures", c_void_p)])
VkMemoryType = _s("VkMemoryType", [("propertyFlags", VkFlags), ("heapIndex", c_uint32)])
VkMemoryHeap = _s("VkMemoryHeap", [("size", VkDeviceSize), ("flags", VkFlags)])
VkPhysicalDeviceMemoryProperties = _s("VkPhysicalDeviceMemoryProperties", [
    ("memoryTypeCount", c_uint32), ("memoryTypes", VkMemoryType * 32),
    ("memoryHeapCount", c_uint32), ("memoryHeaps", VkMemoryHeap * 16)])
VkBufferCreateInfo = _s("VkBufferCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("size", VkDeviceSize),
    ("usage", VkFlags), ("sharingMode", c_int32), ("queueFamilyIndexCount", c_uint32),
    ("pQueueFamilyIndices", POINTER(c_uint32))])
VkMemoryRequirements = _s("VkMemoryRequirements", [
    ("size", VkDeviceSize), ("alignment", VkDeviceSize), ("memoryTypeBits", c_uint32)])
VkMemoryAllocateInfo = _s("VkMemoryAllocateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("allocationSize", VkDeviceSize),
    ("memoryTypeIndex", c_uint32)])
VkShaderModuleCreateInfo = _s("VkShaderModuleCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("codeSize", c_size_t),
    ("pCode", POINTER(c_uint32))])
VkDescriptorSetLayoutBinding = _s("VkDescriptorSetLayoutBinding", [
    ("binding", c_uint32), ("descriptorType", c_int32), ("descriptorCount", c_uint32),
    ("stageFlags", VkFlags), ("pImmutableSamplers", c_void_p)])
VkDescriptorSetLayoutCreateInfo = _s("VkDescriptorSetLayoutCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("bindingCount", c_uint32),
    ("pBindings", POINTER(VkDescriptorSetLayoutBinding))])
VkPushConstantRange = _s("VkPushConstantRange", [
    ("stageFlags", VkFlags), ("offset", c_uint32), ("size", c_uint32)])
VkPipelineLayoutCreateInfo = _s("VkPipelineLayoutCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("setLayoutCount", c_uint32),
    ("pSetLayouts", POINTER(Handle)), ("pushConstantRangeCount", c_uint32),
    ("pPushConstantRanges", POINTER(VkPushConstantRange))])
VkSpecializationMapEntry = _s("VkSpecializationMapEntry", [
    ("constantID", c_uint32), ("offset", c_uint32), ("size", c_size_t)])
VkSpecializationInfo = _s("VkSpecializationInfo", [
    ("mapEntryCount", c_uint32), ("pMapEntries", POINTER(VkSpecializationMapEntry)),
    ("dataSize", c_size_t), ("pData", c_void_p)])
VkPipelineShaderStageRequiredSubgroupSizeCreateInfo = _s(
    "VkPipelineShaderStageRequiredSubgroupSizeCreateInfo", [
        ("sType", c_int32), ("pNext", c_void_p), ("requiredSubgroupSize", c_uint32)])
VkPipelineShaderStageCreateInfo = _s("VkPipelineShaderStageCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("stage", VkFlags),
    ("module", Handle), ("pName", c_char_p),
    ("pSpecializationInfo", POINTER(VkSpecializationInfo))])
VkComputePipelineCreateInfo = _s("VkComputePipelineCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags),
    ("stage", VkPipelineShaderStageCreateInfo), ("layout", Handle),
    ("basePipelineHandle", Handle), ("basePipelineIndex", c_int32)])
VkDescriptorPoolSize = _s("VkDescriptorPoolSize", [("type", c_int32),
                                                   ("descriptorCount", c_uint32)])
VkDescriptorPoolCreateInfo = _s("VkDescriptorPoolCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("maxSets", c_uint32),
    ("poolSizeCount", c_uint32), ("pPoolSizes", POINTER(VkDescriptorPoolSize))])
VkDescriptorSetAllocateInfo = _s("VkDescriptorSetAllocateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("descriptorPool", Handle),
    ("descriptorSetCount", c_uint32), ("pSetLayouts", POINTER(Handle))])
VkDescriptorBufferInfo = _s("VkDescriptorBufferInfo", [
    ("buffer", Handle), ("offset", VkDeviceSize), ("range", VkDeviceSize)])
VkWriteDescriptorSet = _s("VkWriteDescriptorSet", [
    ("sType", c_int32), ("pNext", c_void_p), ("dstSet", Handle), ("dstBinding", c_uint32),
    ("dstArrayElement", c_uint32), ("descriptorCount", c_uint32), ("descriptorType", c_int32),
    ("pImageInfo", c_void_p), ("pBufferInfo", POINTER(VkDescriptorBufferInfo)),
    ("pTexelBufferView", c_void_p)])
VkCommandPoolCreateInfo = _s("VkCommandPoolCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags),
    ("queueFamilyIndex", c_uint32)])
VkCommandBufferAllocateInfo = _s("VkCommandBufferAllocateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("commandPool", Handle), ("level", c_int32),
    ("commandBufferCount", c_uint32)])
VkCommandBufferBeginInfo = _s("VkCommandBufferBeginInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags),
    ("pInheritanceInfo", c_void_p)])
VkMemoryBarrier = _s("VkMemoryBarrier", [
    ("sType", c_int32), ("pNext", c_void_p), ("srcAccessMask", VkFlags),
    ("dstAccessMask", VkFlags)])
VkBufferCopy = _s("VkBufferCopy", [("srcOffset", VkDeviceSize), ("dstOffset", VkDeviceSize),
                                   ("size", VkDeviceSize)])
VkFenceCreateInfo = _s("VkFenceCreateInfo", [("sType", c_int32), ("pNext", c_void_p),
                                             ("flags", VkFlags)])
VkSubmitInfo = _s("VkSubmitInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("waitSemaphoreCount", c_uint32),
    ("pWaitSemaphores", c_void_p), ("pWaitDstStageMask", c_void_p),
    ("commandBufferCount", c_uint32), ("pCommandBuffers", POINTER(Dispatchable)),
    ("signalSemaphoreCount", c_uint32), ("pSignalSemaphores", c_void_p)])
VkQueryPoolCreateInfo = _s("VkQueryPoolCreateInfo", [
    ("sType", c_int32), ("pNext", c_void_p), ("flags", VkFlags), ("queryType", c_int32),
    ("queryCount", c_uint32), ("pipelineStatistics", VkFlags)])


def _bools(struct) -> Dict[str, bool]:
    return {n: bool(getattr(struct, n)) for n, t in struct._fields_
            if n not in ("sType", "pNext") and t is VkBool32}


# --------------------------------------------------------------------------------------------
# Function table
# --------------------------------------------------------------------------------------------

_VkResult = c_int32
_P = POINTER
# name: (restype, argtypes)
_PROTOS: Dict[str, Tuple[Any, List[Any]]] = {
    # global
    "vkCreateInstance": (_VkResult, [_P(VkInstanceCreateInfo), c_void_p, _P(Dispatchable)]),
    "vkEnumerateInstanceLayerProperties": (_VkResult, [_P(c_uint32), _P(VkLayerProperties)]),
    "vkEnumerateInstanceExtensionProperties": (
        _VkResult, [c_char_p, _P(c_uint32), _P(VkExtensionProperties)]),
    # instance
    "vkDestroyInstance": (None, [Dispatchable, c_void_p]),
    "vkEnumeratePhysicalDevices": (_VkResult, [Dispatchable, _P(c_uint32), _P(Dispatchable)]),
    "vkGetPhysicalDeviceProperties2": (None, [Dispatchable, _P(VkPhysicalDeviceProperties2)]),
    "vkGetPhysicalDeviceFeatures2": (None, [Dispatchable, _P(VkPhysicalDeviceFeatures2)]),
    "vkGetPhysicalDeviceQueueFamilyProperties": (
        None, [Dispatchable, _P(c_uint32), _P(VkQueueFamilyProperties)]),
    "vkGetPhysicalDeviceMemoryProperties": (
        None, [Dispatchable, _P(VkPhysicalDeviceMemoryProperties)]),
    "vkEnumerateDeviceExtensionProperties": (
        _VkResult, [Dispatchable, c_char_p, _P(c_uint32), _P(VkExtensionProperties)]),
    "vkCreateDevice": (_VkResult, [Dispatchable, _P(VkDeviceCreateInfo), c_void_p,
                                   _P(Dispatchable)]),
    "vkGetDeviceProcAddr": (c_void_p, [Dispatchable, c_char_p]),
    "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR": (
        _VkResult, [Dispatchable, _P(c_uint32), _P(VkCooperativeMatrixPropertiesKHR)]),
    "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV": (
        _VkResult, [Dispatchable, _P(c_uint32), _P(VkCooperativeMatrixPropertiesNV)]),
    "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV": (
        _VkResult, [Dispatchable, _P(c_uint32),
                    _P(VkCooperativeMatrixFlexibleDimensionsPropertiesNV)]),
    # device
    "vkDestroyDevice": (None, [Dispatchable, c_void_p]),
    "vkDeviceWaitIdle": (_VkResult, [Dispatchable]),
    "vkGetDeviceQueue": (None, [Dispatchable, c_uint32, c_uint32, _P(Dispatchable)]),
    "vkCreateBuffer": (_VkResult, [Dispatchable, _P(VkBufferCreateInfo), c_void_p, _P(Handle)]),
    "vkDestroyBuffer": (None, [Dispatchable, Handle, c_void_p]),
    "vkGetBufferMemoryRequirements": (None, [Dispatchable, Handle, _P(VkMemoryRequirements)]),
    "vkAllocateMemory": (_VkResult, [Dispatchable, _P(VkMemoryAllocateInfo), c_void_p,
                                     _P(Handle)]),
    "vkFreeMemory": (None, [Dispatchable, Handle, c_void_p]),
    "vkBindBufferMemory": (_VkResult, [Dispatchable, Handle, Handle, VkDeviceSize]),
    "vkMapMemory": (_VkResult, [Dispatchable, Handle, VkDeviceSize, VkDeviceSize, VkFlags,
                                _P(c_void_p)]),
    "vkUnmapMemory": (None, [Dispatchable, Handle]),
    "vkCreateShaderModule": (_VkResult, [Dispatchable, _P(VkShaderModuleCreateInfo), c_void_p,
                                         _P(Handle)]),
    "vkDestroyShaderModule": (None, [Dispatchable, Handle, c_void_p]),
    "vkCreateDescriptorSetLayout": (_VkResult, [Dispatchable, _P(VkDescriptorSetLayoutCreateInfo),
                                                c_void_p, _P(Handle)]),
    "vkDestroyDescriptorSetLayout": (None, [Dispatchable, Handle, c_void_p]),
    "vkCreatePipelineLayout": (_VkResult, [Dispatchable, _P(VkPipelineLayoutCreateInfo),
                                           c_void_p, _P(Handle)]),
    "vkDestroyPipelineLayout": (None, [Dispatchable, Handle, c_void_p]),
    "vkCreateComputePipelines": (_VkResult, [Dispatchable, Handle, c_uint32,
                                             _P(VkComputePipelineCreateInfo), c_void_p,
                                             _P(Handle)]),
    "vkDestroyPipeline": (None, [Dispatchable, Handle, c_void_p]),
    "vkGetPipelineExecutablePropertiesKHR": (
        _VkResult, [Dispatchable, _P(VkPipelineInfoKHR), _P(c_uint32),
                    _P(VkPipelineExecutablePropertiesKHR)]),
    "vkGetPipelineExecutableStatisticsKHR": (
        _VkResult, [Dispatchable, _P(VkPipelineExecutableInfoKHR), _P(c_uint32),
                    _P(VkPipelineExecutableStatisticKHR)]),
    "vkCreateDescriptorPool": (_VkResult, [Dispatchable, _P(VkDescriptorPoolCreateInfo),
                                           c_void_p, _P(Handle)]),
    "vkDestroyDescriptorPool": (None, [Dispatchable, Handle, c_void_p]),
    "vkAllocateDescriptorSets": (_VkResult, [Dispatchable, _P(VkDescriptorSetAllocateInfo),
                                             _P(Handle)]),
    "vkUpdateDescriptorSets": (None, [Dispatchable, c_uint32, _P(VkWriteDescriptorSet),
                                      c_uint32, c_void_p]),
    "vkCreateCommandPool": (_VkResult, [Dispatchable, _P(VkCommandPoolCreateInfo), c_void_p,
                                        _P(Handle)]),
    "vkDestroyCommandPool": (None, [Dispatchable, Handle, c_void_p]),
    "vkAllocateCommandBuffers": (_VkResult, [Dispatchable, _P(VkCommandBufferAllocateInfo),
                                             _P(Dispatchable)]),
    "vkFreeCommandBuffers": (None, [Dispatchable, Handle, c_uint32, _P(Dispatchable)]),
    "vkBeginCommandBuffer": (_VkResult, [Dispatchable, _P(VkCommandBufferBeginInfo)]),
    "vkEndCommandBuffer": (_VkResult, [Dispatchable]),
    "vkResetCommandBuffer": (_VkResult, [Dispatchable, VkFlags]),
    "vkCmdBindPipeline": (None, [Dispatchable, c_int32, Handle]),
    "vkCmdBindDescriptorSets": (None, [Dispatchable, c_int32, Handle, c_uint32, c_uint32,
                                       _P(Handle), c_uint32, c_void_p]),
    "vkCmdPushConstants": (None, [Dispatchable, Handle, VkFlags, c_uint32, c_uint32, c_void_p]),
    "vkCmdDispatch": (None, [Dispatchable, c_uint32, c_uint32, c_uint32]),
    "vkCmdPipelineBarrier": (None, [Dispatchable, VkFlags, VkFlags, VkFlags, c_uint32,
                                    _P(VkMemoryBarrier), c_uint32, c_void_p, c_uint32, c_void_p]),
    "vkCmdCopyBuffer": (None, [Dispatchable, Handle, Handle, c_uint32, _P(VkBufferCopy)]),
    "vkCmdResetQueryPool": (None, [Dispatchable, Handle, c_uint32, c_uint32]),
    "vkCmdWriteTimestamp": (None, [Dispatchable, VkFlags, Handle, c_uint32]),
    "vkCreateQueryPool": (_VkResult, [Dispatchable, _P(VkQueryPoolCreateInfo), c_void_p,
                                      _P(Handle)]),
    "vkDestroyQueryPool": (None, [Dispatchable, Handle, c_void_p]),
    "vkGetQueryPoolResults": (_VkResult, [Dispatchable, Handle, c_uint32, c_uint32, c_size_t,
                                          c_void_p, VkDeviceSize, VkFlags]),
    "vkCreateFence": (_VkResult, [Dispatchable, _P(VkFenceCreateInfo), c_void_p, _P(Handle)]),
    "vkDestroyFence": (None, [Dispatchable, Handle, c_void_p]),
    "vkResetFences": (_VkResult, [Dispatchable, c_uint32, _P(Handle)]),
    "vkWaitForFences": (_VkResult, [Dispatchable, c_uint32, _P(Handle), VkBool32, c_uint64]),
    "vkQueueSubmit": (_VkResult, [Dispatchable, c_uint32, _P(VkSubmitInfo), Handle]),
}
_GLOBAL_FUNCS = ("vkCreateInstance", "vkEnumerateInstanceLayerProperties",
                 "vkEnumerateInstanceExtensionProperties")

_lib = None


def _load_library():
    global _lib
    if _lib is None:
        names = [os.environ.get("VK_RUNNER_LIBVULKAN"), "libvulkan.so.1", "libvulkan.so",
                 ctypes.util.find_library("vulkan")]
        names = list(dict.fromkeys(n for n in names if n))
        errs = []
        for n in names:
            try:
                _lib = ctypes.CDLL(n)
                break
            except OSError as e:
                errs.append(str(e))
        if _lib is None:  # the first reason names the library and what the linker said
            raise OSError(f"{', '.join(names)} cannot be loaded: {errs[0]}")
        _lib.vkGetInstanceProcAddr.restype = c_void_p
        _lib.vkGetInstanceProcAddr.argtypes = [Dispatchable, c_char_p]
    return _lib


def _proto(name):
    restype, argtypes = _PROTOS[name]
    return ctypes.CFUNCTYPE(restype, *argtypes)


def _get_instance_fn(instance, name, required=True):
    lib = _load_library()
    addr = lib.vkGetInstanceProcAddr(instance, name.encode())
    if not addr:
        if required:
            raise VulkanError(f"vkGetInstanceProcAddr({name})", -7, "function not found")
        return None
    return _proto(name)(addr)


def _check(call: str, res: int, ok=(0,)):
    if res not in ok:
        raise VulkanError(call, res)
    return res


def _enumerate(fn, call, *args, struct=None):
    """Two-call enumeration idiom; returns a ctypes array (retries on VK_INCOMPLETE)."""
    for _ in range(8):
        n = c_uint32(0)
        res = fn(*args, byref(n), None)
        if res is not None:
            _check(call, res)
        arr = (struct * max(n.value, 1))()
        res = fn(*args, byref(n), arr)
        if res is None or res == 0:
            return arr[:n.value]
        if res != 5:  # VK_INCOMPLETE
            _check(call, res)
    raise VulkanError(call, 5)


def _enumerate_typed(fn, call, pd, struct, stype):
    n = c_uint32(0)
    _check(call, fn(pd, byref(n), None), ok=(0, 5))
    arr = (struct * max(n.value, 1))()
    for i in range(n.value):
        arr[i].sType = stype
        arr[i].pNext = None
    _check(call, fn(pd, byref(n), arr), ok=(0, 5))
    return arr[:n.value]


def _version_str(v: int) -> str:
    return f"{(v >> 22) & 0x7F}.{(v >> 12) & 0x3FF}.{v & 0xFFF}"


def _nvidia_driver_str(v: int) -> str:
    return f"{(v >> 22) & 0x3FF}.{(v >> 14) & 0xFF}.{(v >> 6) & 0xFF:02d}"


class _Buffer:
    __slots__ = ("buffer", "memory", "size", "ptr", "host_visible")

    def __init__(self, buffer, memory, size, ptr, host_visible):
        self.buffer, self.memory, self.size, self.ptr = buffer, memory, size, ptr
        self.host_visible = host_visible


class _Pipeline:
    __slots__ = ("module", "dsl", "layout", "pipeline", "nbindings", "push_size")


# --------------------------------------------------------------------------------------------
# Context
# --------------------------------------------------------------------------------------------

class VulkanContext:
    """A Vulkan 1.3 instance + logical device with one compute queue, reusable across many
    dispatches.  Compiled pipelines are cached by (SPIR-V hash, entry, #bindings, push-constant
    size, stage options).

    Args:
        device_index: which physical device (order of vkEnumeratePhysicalDevices); ``None``
            picks the first discrete GPU, else device 0.
        validation: enable VK_LAYER_KHRONOS_validation if installed (default: env
            ``VK_RUNNER_VALIDATION=1``).  Messages go to the layer's default output (stdout).
        memory: default buffer placement for ``run_compute``: ``"host"`` (host-visible,
            coherent memory, mapped; the shader reads/writes it directly) or ``"device"``
            (device-local buffers filled/read through host-visible staging buffers and
            vkCmdCopyBuffer; use this for benchmarks).
        timeout_s: fence wait limit per submission (seconds); exceeding it raises
            VulkanError("vkWaitForFences", VK_TIMEOUT).

    Raises:
        OSError if libvulkan.so.1 cannot be loaded; VulkanError for failing Vulkan calls
        (e.g. VK_ERROR_INCOMPATIBLE_DRIVER when no ICD is found).
    """

    def __init__(self, device_index: Optional[int] = None, validation: Optional[bool] = None,
                 memory: str = "host", timeout_s: float = 120.0):
        if memory not in ("host", "device"):
            raise ValueError("memory must be 'host' or 'device'")
        self.memory = memory
        self.timeout_ns = int(timeout_s * 1e9)
        self.instance = None
        self.device = None
        self._pipelines: Dict[Any, _Pipeline] = {}
        self._cmd_pool = None
        self._fence = None
        self._closed = False
        if validation is None:
            validation = os.environ.get("VK_RUNNER_VALIDATION", "") not in ("", "0")
        lib = _load_library()
        g = {n: _get_instance_fn(None, n) for n in _GLOBAL_FUNCS}

        layers: List[bytes] = []
        self.validation = False
        if validation:
            avail = [l.layerName for l in _enumerate(g["vkEnumerateInstanceLayerProperties"],
                                                     "vkEnumerateInstanceLayerProperties",
                                                     struct=VkLayerProperties)]
            if b"VK_LAYER_KHRONOS_validation" in avail:
                layers.append(b"VK_LAYER_KHRONOS_validation")
                self.validation = True
            else:
                print("vk_runner: VK_LAYER_KHRONOS_validation not installed; running without",
                      file=sys.stderr)

        app = VkApplicationInfo(ST_APPLICATION_INFO, None, b"coopdialect-vk_runner", 1,
                                b"coopdialect", 1, VK_API_VERSION_1_3)
        layer_arr = (c_char_p * max(len(layers), 1))(*layers)
        ici = VkInstanceCreateInfo(ST_INSTANCE_CREATE_INFO, None, 0, pointer(app),
                                   len(layers), layer_arr, 0, None)
        inst = Dispatchable()
        _check("vkCreateInstance", g["vkCreateInstance"](byref(ici), None, byref(inst)))
        self.instance = inst
        try:
            self._init_instance_fns()
            self._pick_physical_device(device_index)
            self._create_device()
        except BaseException:
            self.close()
            raise

    # ---- setup -------------------------------------------------------------------------

    def _init_instance_fns(self):
        self._ifn = {}
        for name in _PROTOS:
            if name in _GLOBAL_FUNCS:
                continue
            optional = "CooperativeMatrix" in name or "PipelineExecutable" in name
            fn = _get_instance_fn(self.instance, name, required=not optional)
            self._ifn[name] = fn
        self.vk = self._ifn  # replaced by device-level pointers after device creation

    def _pick_physical_device(self, device_index):
        f = self._ifn
        pds = _enumerate(f["vkEnumeratePhysicalDevices"], "vkEnumeratePhysicalDevices",
                         self.instance, struct=Dispatchable)
        if not pds:
            raise VulkanError("vkEnumeratePhysicalDevices", -3, "no physical devices")
        props = []
        for pd in pds:
            p2 = VkPhysicalDeviceProperties2(ST_PHYSICAL_DEVICE_PROPERTIES_2, None)
            f["vkGetPhysicalDeviceProperties2"](pd, byref(p2))
            props.append(p2.properties)
        if device_index is None:
            device_index = next((i for i, p in enumerate(props) if p.deviceType == 2), 0)
        if not 0 <= device_index < len(pds):
            raise ValueError(f"device_index {device_index} out of range ({len(pds)} devices)")
        self.physical_device = Dispatchable(pds[device_index])
        self.all_device_names = [p.deviceName.decode() for p in props]

        pd = self.physical_device
        # properties with chained extension structs
        self._driver_props = VkPhysicalDeviceDriverProperties(ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
                                                              None)
        self._subgroup_props = VkPhysicalDeviceSubgroupProperties(
            ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, cast(pointer(self._driver_props), c_void_p))
        ext_names = [e.extensionName.decode() for e in _enumerate(
            f["vkEnumerateDeviceExtensionProperties"], "vkEnumerateDeviceExtensionProperties",
            pd, None, struct=VkExtensionProperties)]
        self.available_extensions = sorted(ext_names)
        self._cm2_props = VkPhysicalDeviceCooperativeMatrix2PropertiesNV(
            ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV,
            cast(pointer(self._subgroup_props), c_void_p))
        head = (self._cm2_props if "VK_NV_cooperative_matrix2" in ext_names
                else self._subgroup_props)
        p2 = VkPhysicalDeviceProperties2(ST_PHYSICAL_DEVICE_PROPERTIES_2,
                                         cast(pointer(head), c_void_p))
        f["vkGetPhysicalDeviceProperties2"](pd, byref(p2))
        self._props = p2.properties
        self.has_cm2_props = head is self._cm2_props

        qf = _enumerate(f["vkGetPhysicalDeviceQueueFamilyProperties"],
                        "vkGetPhysicalDeviceQueueFamilyProperties", pd,
                        struct=VkQueueFamilyProperties)
        # prefer a compute-capable family (graphics+compute family 0 is fine on NVIDIA)
        cands = [i for i, q in enumerate(qf) if q.queueFlags & VK_QUEUE_COMPUTE_BIT]
        if not cands:
            raise VulkanError("vkGetPhysicalDeviceQueueFamilyProperties", -3,
                              "no compute queue family")
        self.queue_family = cands[0]
        self.timestamp_valid_bits = qf[self.queue_family].timestampValidBits

        self._mem_props = VkPhysicalDeviceMemoryProperties()
        f["vkGetPhysicalDeviceMemoryProperties"](pd, byref(self._mem_props))

    def _create_device(self):
        f = self._ifn
        pd = self.physical_device
        exts = [e for e in WANTED_DEVICE_EXTENSIONS if e in self.available_extensions]
        self.enabled_extensions = exts

        # Query supported features through the same chain we will enable.
        def make_chain():
            f11 = VkPhysicalDeviceVulkan11Features(ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES)
            f12 = VkPhysicalDeviceVulkan12Features(ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)
            f13 = VkPhysicalDeviceVulkan13Features(ST_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES)
            structs = {"vulkan11": f11, "vulkan12": f12, "vulkan13": f13}
            if "VK_KHR_cooperative_matrix" in exts:
                structs["cooperative_matrix_khr"] = VkPhysicalDeviceCooperativeMatrixFeaturesKHR(
                    ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR)
            if "VK_NV_cooperative_matrix" in exts:
                structs["cooperative_matrix_nv"] = VkPhysicalDeviceCooperativeMatrixFeaturesNV(
                    ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV)
            if "VK_NV_cooperative_matrix2" in exts:
                structs["cooperative_matrix2_nv"] = VkPhysicalDeviceCooperativeMatrix2FeaturesNV(
                    ST_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV)
            if "VK_KHR_shader_bfloat16" in exts:
                structs["shader_bfloat16_khr"] = VkPhysicalDeviceShaderBfloat16FeaturesKHR(
                    ST_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR)
            if "VK_KHR_pipeline_executable_properties" in exts:
                structs["pipeline_executable_properties"] = \
                    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR(
                        ST_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR)
            lst = list(structs.values())
            for a, b in zip(lst, lst[1:]):
                a.pNext = cast(pointer(b), c_void_p)
            feats2 = VkPhysicalDeviceFeatures2(ST_PHYSICAL_DEVICE_FEATURES_2,
                                               cast(pointer(lst[0]), c_void_p))
            return feats2, structs

        sup2, sup = make_chain()
        f["vkGetPhysicalDeviceFeatures2"](pd, byref(sup2))
        self.supported_features = {"core": _bools(sup2.features)}
        self.supported_features.update({k: _bools(v) for k, v in sup.items()})

        en2, en = make_chain()
        enabled: Dict[str, Dict[str, bool]] = {}
        for key, src, dst in [("core", sup2.features, en2.features)] + \
                [(k, sup[k], en[k]) for k in sup]:
            d = {}
            for name, val in _bools(src).items():
                on = val and name not in _FEATURE_DENYLIST
                setattr(dst, name, 1 if on else 0)
                if on:
                    d[name] = True
            enabled[key] = d
        self.enabled_features = enabled
        # The features the coopdialect code generator relies on: fail loudly if missing.
        required = {
            "vulkan12": ["vulkanMemoryModel", "vulkanMemoryModelDeviceScope", "shaderFloat16",
                         "shaderInt8", "storageBuffer8BitAccess",
                         "uniformAndStorageBuffer8BitAccess", "bufferDeviceAddress"],
            "vulkan11": ["storageBuffer16BitAccess"],
            "vulkan13": ["subgroupSizeControl", "computeFullSubgroups"],
            "core": ["shaderInt16", "shaderInt64"],
        }
        self.missing_features = [f"{k}.{n}" for k, ns in required.items() for n in ns
                                 if not enabled[k].get(n)]
        # (not fatal here: coopdialect.runtime.vulkan names the feature a module needs)

        prio = c_float(1.0)
        qci = VkDeviceQueueCreateInfo(ST_DEVICE_QUEUE_CREATE_INFO, None, 0, self.queue_family, 1,
                                      pointer(prio))
        ext_arr = (c_char_p * max(len(exts), 1))(*[e.encode() for e in exts])
        dci = VkDeviceCreateInfo(ST_DEVICE_CREATE_INFO, cast(pointer(en2), c_void_p), 0, 1,
                                 pointer(qci), 0, None, len(exts), ext_arr, None)
        dev = Dispatchable()
        _check("vkCreateDevice", f["vkCreateDevice"](pd, byref(dci), None, byref(dev)))
        self.device = dev

        # device-level function pointers
        gdpa = f["vkGetDeviceProcAddr"]
        vk = dict(self._ifn)
        for name in _PROTOS:
            if name in _GLOBAL_FUNCS or "PhysicalDevice" in name or name in (
                    "vkDestroyInstance", "vkCreateDevice", "vkGetDeviceProcAddr"):
                continue
            addr = gdpa(dev, name.encode())
            if addr:
                vk[name] = _proto(name)(addr)
        self.vk = vk

        q = Dispatchable()
        vk["vkGetDeviceQueue"](dev, self.queue_family, 0, byref(q))
        self.queue = q
        cpi = VkCommandPoolCreateInfo(ST_COMMAND_POOL_CREATE_INFO, None,
                                      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                      self.queue_family)
        pool = Handle()
        _check("vkCreateCommandPool", vk["vkCreateCommandPool"](dev, byref(cpi), None,
                                                                byref(pool)))
        self._cmd_pool = pool
        fci = VkFenceCreateInfo(ST_FENCE_CREATE_INFO, None, 0)
        fence = Handle()
        _check("vkCreateFence", vk["vkCreateFence"](dev, byref(fci), None, byref(fence)))
        self._fence = fence

    # ---- info --------------------------------------------------------------------------

    def cooperative_matrix_properties(self) -> List[Dict[str, Any]]:
        """Rows of vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR as dicts with keys
        M, N, K (ints), A, B, C, Result (component-type names such as "f16", "f32", "s8",
        "bf16"), saturatingAccumulation (bool), scope ("subgroup", "workgroup", ...).
        Empty if VK_KHR_cooperative_matrix is absent."""
        fn = self._ifn.get("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR")
        if fn is None or "VK_KHR_cooperative_matrix" not in self.available_extensions:
            return []
        rows = _enumerate_typed(fn, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
                                self.physical_device, VkCooperativeMatrixPropertiesKHR,
                                ST_COOPERATIVE_MATRIX_PROPERTIES_KHR)
        ct = lambda v: COMPONENT_TYPE_NAMES.get(v, str(v))  # noqa: E731
        return [dict(M=r.MSize, N=r.NSize, K=r.KSize, A=ct(r.AType), B=ct(r.BType),
                     C=ct(r.CType), Result=ct(r.ResultType),
                     saturatingAccumulation=bool(r.saturatingAccumulation),
                     scope=SCOPE_NAMES.get(r.scope, str(r.scope))) for r in rows]

    def cooperative_matrix_properties_nv(self) -> List[Dict[str, Any]]:
        """Rows of vkGetPhysicalDeviceCooperativeMatrixPropertiesNV (VK_NV_cooperative_matrix)
        with keys M, N, K, A, B, C, D, scope; empty if the extension is absent."""
        fn = self._ifn.get("vkGetPhysicalDeviceCooperativeMatrixPropertiesNV")
        if fn is None or "VK_NV_cooperative_matrix" not in self.available_extensions:
            return []
        rows = _enumerate_typed(fn, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
                                self.physical_device, VkCooperativeMatrixPropertiesNV,
                                ST_COOPERATIVE_MATRIX_PROPERTIES_NV)
        ct = lambda v: COMPONENT_TYPE_NAMES.get(v, str(v))  # noqa: E731
        return [dict(M=r.MSize, N=r.NSize, K=r.KSize, A=ct(r.AType), B=ct(r.BType),
                     C=ct(r.CType), D=ct(r.DType), scope=SCOPE_NAMES.get(r.scope, str(r.scope)))
                for r in rows]

    def cooperative_matrix_flexible_dimensions(self) -> List[Dict[str, Any]]:
        """Rows of vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV
        (VK_NV_cooperative_matrix2): MGranularity, NGranularity, KGranularity, A, B, C, Result,
        saturatingAccumulation, scope, workgroupInvocations.  Empty if absent."""
        fn = self._ifn.get("vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV")
        if fn is None or "VK_NV_cooperative_matrix2" not in self.available_extensions:
            return []
        rows = _enumerate_typed(
            fn, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV",
            self.physical_device, VkCooperativeMatrixFlexibleDimensionsPropertiesNV,
            ST_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV)
        ct = lambda v: COMPONENT_TYPE_NAMES.get(v, str(v))  # noqa: E731
        return [dict(MGranularity=r.MGranularity, NGranularity=r.NGranularity,
                     KGranularity=r.KGranularity, A=ct(r.AType), B=ct(r.BType), C=ct(r.CType),
                     Result=ct(r.ResultType), saturatingAccumulation=bool(r.saturatingAccumulation),
                     scope=SCOPE_NAMES.get(r.scope, str(r.scope)),
                     workgroupInvocations=r.workgroupInvocations) for r in rows]

    def device_info(self) -> Dict[str, Any]:
        """Describe the device.  Returns a dict with:
        name, vendor_id, device_id, api_version ("1.4.312"), driver_version (decoded NVIDIA
        style "580.159.04" for vendor 0x10DE, else raw Vulkan-version decoding),
        driver_version_raw, driver_name, driver_info, subgroup_size, timestamp_period_ns
        (ns per timestamp tick), timestamp_valid_bits, limits (a few compute limits),
        extensions (enabled device extensions), cooperative_matrix_extensions (those present),
        features (enabled features per struct), missing_features,
        cooperative_matrix_khr (see cooperative_matrix_properties), cooperative_matrix_nv,
        cooperative_matrix_flexible_nv, cooperative_matrix2_properties (NV2 limits or None).
        """
        p = self._props
        lim = p.limits
        raw = p.driverVersion
        drv = _nvidia_driver_str(raw) if p.vendorID == 0x10DE else _version_str(raw)
        cm2 = None
        if self.has_cm2_props:
            c = self._cm2_props
            cm2 = dict(
                workgroupScopeMaxWorkgroupSize=c.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize,
                flexibleDimensionsMaxDimension=c.cooperativeMatrixFlexibleDimensionsMaxDimension,
                workgroupScopeReservedSharedMemory=(
                    c.cooperativeMatrixWorkgroupScopeReservedSharedMemory))
        return dict(
            name=p.deviceName.decode(), vendor_id=p.vendorID, device_id=p.deviceID,
            api_version=_version_str(p.apiVersion), driver_version=drv, driver_version_raw=raw,
            driver_name=self._driver_props.driverName.decode(),
            driver_info=self._driver_props.driverInfo.decode(),
            subgroup_size=self._subgroup_props.subgroupSize,
            timestamp_period_ns=float(lim.timestampPeriod),
            timestamp_valid_bits=self.timestamp_valid_bits,
            limits=dict(maxComputeSharedMemorySize=lim.maxComputeSharedMemorySize,
                        maxComputeWorkGroupInvocations=lim.maxComputeWorkGroupInvocations,
                        maxComputeWorkGroupSize=list(lim.maxComputeWorkGroupSize),
                        maxComputeWorkGroupCount=list(lim.maxComputeWorkGroupCount),
                        maxStorageBufferRange=lim.maxStorageBufferRange,
                        maxPushConstantsSize=lim.maxPushConstantsSize),
            extensions=list(self.enabled_extensions),
            cooperative_matrix_extensions=[e for e in self.available_extensions
                                           if "cooperative_matrix" in e],
            features={k: sorted(v) for k, v in self.enabled_features.items()},
            missing_features=list(self.missing_features),
            validation=self.validation,
            cooperative_matrix_khr=self.cooperative_matrix_properties(),
            cooperative_matrix_nv=self.cooperative_matrix_properties_nv(),
            cooperative_matrix_flexible_nv=self.cooperative_matrix_flexible_dimensions(),
            cooperative_matrix2_properties=cm2,
        )

    # ---- resources ---------------------------------------------------------------------

    def _find_memory_type(self, type_bits: int, want: int, avoid: int = 0) -> Optional[int]:
        mp = self._mem_props
        for i in range(mp.memoryTypeCount):
            fl = mp.memoryTypes[i].propertyFlags
            if type_bits & (1 << i) and (fl & want) == want and not (fl & avoid):
                return i
        return None

    def _create_buffer(self, size: int, host_visible: bool) -> _Buffer:
        vk, dev = self.vk, self.device
        size = max(int(size), 4)
        size = (size + 3) & ~3
        usage = (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT
                 | VK_BUFFER_USAGE_TRANSFER_DST_BIT)
        bci = VkBufferCreateInfo(ST_BUFFER_CREATE_INFO, None, 0, size, usage,
                                 VK_SHARING_MODE_EXCLUSIVE, 0, None)
        buf = Handle()
        _check("vkCreateBuffer", vk["vkCreateBuffer"](dev, byref(bci), None, byref(buf)))
        mem = Handle()
        try:
            req = VkMemoryRequirements()
            vk["vkGetBufferMemoryRequirements"](dev, buf, byref(req))
            if host_visible:
                hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                # prefer plain system memory for staging/host buffers (no small BAR heap)
                idx = self._find_memory_type(req.memoryTypeBits, hv,
                                             avoid=VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
                if idx is None:
                    idx = self._find_memory_type(req.memoryTypeBits, hv)
            else:
                idx = self._find_memory_type(req.memoryTypeBits,
                                             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
            if idx is None:
                raise VulkanError("vkAllocateMemory", -2, "no suitable memory type")
            mai = VkMemoryAllocateInfo(ST_MEMORY_ALLOCATE_INFO, None, req.size, idx)
            _check("vkAllocateMemory", vk["vkAllocateMemory"](dev, byref(mai), None,
                                                              byref(mem)))
            _check("vkBindBufferMemory", vk["vkBindBufferMemory"](dev, buf, mem, 0))
            ptr = None
            if host_visible:
                p = c_void_p()
                _check("vkMapMemory", vk["vkMapMemory"](dev, mem, 0, VK_WHOLE_SIZE, 0, byref(p)))
                ptr = p.value
        except BaseException:
            vk["vkDestroyBuffer"](dev, buf, None)
            if mem.value:
                vk["vkFreeMemory"](dev, mem, None)
            raise
        return _Buffer(buf, mem, size, ptr, host_visible)

    def _destroy_buffer(self, b: _Buffer):
        vk, dev = self.vk, self.device
        if b.ptr is not None:
            vk["vkUnmapMemory"](dev, b.memory)
        vk["vkDestroyBuffer"](dev, b.buffer, None)
        vk["vkFreeMemory"](dev, b.memory, None)

    def pipeline_statistics(self, spirv: bytes, entry: str = "main", nbindings: int = 1,
                            spec_constants: Optional[Dict[int, Any]] = None
                            ) -> List[Dict[str, Any]]:
        """What the driver reports about the compiled pipeline of `entry` (with `nbindings`
        storage-buffer bindings), through VK_KHR_pipeline_executable_properties: per executable
        its name, description, subgroup size and statistics ({name: value}; on NVIDIA e.g.
        register count, shared and local memory bytes). Raises VulkanError when the device
        lacks the extension or its pipelineExecutableInfo feature, as the other calls."""
        if not self.enabled_features.get("pipeline_executable_properties", {}).get(
                "pipelineExecutableInfo"):
            raise VulkanError("pipeline_statistics", -7,
                              "VK_KHR_pipeline_executable_properties is not available")
        pl = self._get_pipeline(spirv, entry, nbindings, 0, None, False, spec_constants,
                                capture=True)
        vk, dev = self.vk, self.device
        info = VkPipelineInfoKHR(ST_PIPELINE_INFO_KHR, None, pl.pipeline)
        props = _enumerate_typed(partial(vk["vkGetPipelineExecutablePropertiesKHR"], dev),
                                 "vkGetPipelineExecutablePropertiesKHR", byref(info),
                                 VkPipelineExecutablePropertiesKHR,
                                 ST_PIPELINE_EXECUTABLE_PROPERTIES_KHR)
        out = []
        for i, prop in enumerate(props):
            ei = VkPipelineExecutableInfoKHR(ST_PIPELINE_EXECUTABLE_INFO_KHR, None, pl.pipeline, i)
            stats = _enumerate_typed(partial(vk["vkGetPipelineExecutableStatisticsKHR"], dev),
                                     "vkGetPipelineExecutableStatisticsKHR", byref(ei),
                                     VkPipelineExecutableStatisticKHR,
                                     ST_PIPELINE_EXECUTABLE_STATISTIC_KHR)
            values = {st.name.decode(errors="replace"):
                      getattr(st.value, _STATISTIC_FORMATS.get(st.format, "u64")) for st in stats}
            out.append({"name": prop.name.decode(errors="replace"),
                        "description": prop.description.decode(errors="replace"),
                        "subgroup_size": prop.subgroupSize, "statistics": values})
        return out

    def _get_pipeline(self, spirv: bytes, entry: str, nbindings: int, push_size: int,
                      required_subgroup_size: Optional[int], full_subgroups: bool,
                      spec_constants: Optional[Dict[int, Any]], capture: bool = False
                      ) -> _Pipeline:
        spirv = bytes(spirv)
        if len(spirv) % 4 or len(spirv) < 20 or spirv[:4] != b"\x03\x02\x23\x07":
            raise ValueError("spirv is not a little-endian SPIR-V binary (magic 0x07230203)")
        spec_key = tuple(sorted((int(k), np.asarray(v).tobytes(), np.asarray(v).dtype.str)
                                for k, v in (spec_constants or {}).items()))
        key = (hashlib.sha256(spirv).hexdigest(), entry, nbindings, push_size,
               required_subgroup_size, full_subgroups, spec_key, capture)
        pl = self._pipelines.get(key)
        if pl is not None:
            return pl
        vk, dev = self.vk, self.device
        pl = _Pipeline()
        pl.module = pl.dsl = pl.layout = pl.pipeline = None
        pl.nbindings, pl.push_size = nbindings, push_size
        try:
            code = (c_uint32 * (len(spirv) // 4)).from_buffer_copy(spirv)
            smci = VkShaderModuleCreateInfo(ST_SHADER_MODULE_CREATE_INFO, None, 0, len(spirv),
                                            cast(code, POINTER(c_uint32)))
            h = Handle()
            _check("vkCreateShaderModule", vk["vkCreateShaderModule"](dev, byref(smci), None,
                                                                      byref(h)))
            pl.module = h
            binds = (VkDescriptorSetLayoutBinding * max(nbindings, 1))()
            for i in range(nbindings):
                binds[i] = VkDescriptorSetLayoutBinding(i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                                        VK_SHADER_STAGE_COMPUTE_BIT, None)
            dslci = VkDescriptorSetLayoutCreateInfo(ST_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, None,
                                                    0, nbindings, binds)
            h = Handle()
            _check("vkCreateDescriptorSetLayout",
                   vk["vkCreateDescriptorSetLayout"](dev, byref(dslci), None, byref(h)))
            pl.dsl = h
            pcr = VkPushConstantRange(VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size)
            dsl_arr = (Handle * 1)(pl.dsl)
            plci = VkPipelineLayoutCreateInfo(ST_PIPELINE_LAYOUT_CREATE_INFO, None, 0, 1, dsl_arr,
                                              1 if push_size else 0,
                                              pointer(pcr) if push_size else None)
            h = Handle()
            _check("vkCreatePipelineLayout",
                   vk["vkCreatePipelineLayout"](dev, byref(plci), None, byref(h)))
            pl.layout = h

            spec_ptr = None
            keep = []
            if spec_constants:
                entries, blob, off = [], b"", 0
                for cid, v in sorted(spec_constants.items()):
                    a = np.asarray(v)
                    if a.dtype == np.bool_:
                        a = a.astype(np.uint32)  # VkBool32
                    data = a.tobytes()
                    entries.append(VkSpecializationMapEntry(int(cid), off, len(data)))
                    blob += data
                    off += len(data)
                ent_arr = (VkSpecializationMapEntry * len(entries))(*entries)
                data_buf = ctypes.create_string_buffer(blob, len(blob))
                spec = VkSpecializationInfo(len(entries), ent_arr, len(blob),
                                            cast(data_buf, c_void_p))
                keep += [ent_arr, data_buf, spec]
                spec_ptr = pointer(spec)
            stage_pnext = None
            flags = 0
            if required_subgroup_size:
                rss = VkPipelineShaderStageRequiredSubgroupSizeCreateInfo(
                    ST_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO, None,
                    int(required_subgroup_size))
                keep.append(rss)
                stage_pnext = cast(pointer(rss), c_void_p)
            if full_subgroups:
                flags |= VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT
            entry_b = entry.encode()
            stage = VkPipelineShaderStageCreateInfo(ST_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                    stage_pnext, flags,
                                                    VK_SHADER_STAGE_COMPUTE_BIT, pl.module,
                                                    entry_b, spec_ptr)
            cpci = VkComputePipelineCreateInfo(
                ST_COMPUTE_PIPELINE_CREATE_INFO, None,
                VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR if capture else 0, stage,
                pl.layout, 0, -1)
            h = Handle()
            _check("vkCreateComputePipelines",
                   vk["vkCreateComputePipelines"](dev, 0, 1, byref(cpci), None, byref(h)))
            pl.pipeline = h
        except BaseException:
            self._destroy_pipeline(pl)
            raise
        self._pipelines[key] = pl
        return pl

    def _destroy_pipeline(self, pl: _Pipeline):
        vk, dev = self.vk, self.device
        if pl.pipeline is not None:
            vk["vkDestroyPipeline"](dev, pl.pipeline, None)
        if pl.layout is not None:
            vk["vkDestroyPipelineLayout"](dev, pl.layout, None)
        if pl.dsl is not None:
            vk["vkDestroyDescriptorSetLayout"](dev, pl.dsl, None)
        if pl.module is not None:
            vk["vkDestroyShaderModule"](dev, pl.module, None)

    # ---- dispatch ----------------------------------------------------------------------

    def _barrier(self, cmd, src_stage, dst_stage, src_access, dst_access):
        mb = VkMemoryBarrier(ST_MEMORY_BARRIER, None, src_access, dst_access)
        self.vk["vkCmdPipelineBarrier"](cmd, src_stage, dst_stage, 0, 1, byref(mb), 0, None, 0,
                                        None)

    def _execute(self, spirv, buffers, grid, entry, push_constants, memory, repeat, warmup,
                 required_subgroup_size, full_subgroups, spec_constants, timing):
        if self._closed:
            raise RuntimeError("VulkanContext is closed")
        memory = memory or self.memory
        if memory not in ("host", "device"):
            raise ValueError("memory must be 'host' or 'device'")
        grid = tuple(int(g) for g in grid)
        if len(grid) != 3 or min(grid) < 0:
            raise ValueError("grid must be three non-negative group counts")
        lim = self._props.limits.maxComputeWorkGroupCount
        for g, m in zip(grid, lim):
            if g > m:
                raise ValueError(f"grid {grid} exceeds maxComputeWorkGroupCount {list(lim)}")
        arrays = [np.ascontiguousarray(b) for b in buffers]
        pc = bytes(push_constants) if push_constants is not None else b""
        if len(pc) % 4:
            pc += b"\0" * (4 - len(pc) % 4)
        if len(pc) > self._props.limits.maxPushConstantsSize:
            raise ValueError("push constants larger than maxPushConstantsSize")
        if timing and self.timestamp_valid_bits == 0:
            raise VulkanError("vkCmdWriteTimestamp", -8, "queue has no timestamp support")
        pl = self._get_pipeline(spirv, entry, len(arrays), len(pc), required_subgroup_size,
                                full_subgroups, spec_constants)
        vk, dev = self.vk, self.device
        host_bufs: List[_Buffer] = []
        dev_bufs: List[_Buffer] = []
        pool = Handle()
        qpool = Handle()
        cmd = Dispatchable()
        nts = 2 * (warmup + repeat)
        try:
            for a in arrays:
                hb = self._create_buffer(a.nbytes, host_visible=True)
                host_bufs.append(hb)
                if a.nbytes:
                    ctypes.memmove(hb.ptr, a.ctypes.data, a.nbytes)
                if memory == "device":
                    dev_bufs.append(self._create_buffer(a.nbytes, host_visible=False))
            bound = dev_bufs if memory == "device" else host_bufs

            n = len(arrays)
            if n:
                psize = VkDescriptorPoolSize(VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n)
                dpci = VkDescriptorPoolCreateInfo(ST_DESCRIPTOR_POOL_CREATE_INFO, None, 0, 1, 1,
                                                  pointer(psize))
                _check("vkCreateDescriptorPool",
                       vk["vkCreateDescriptorPool"](dev, byref(dpci), None, byref(pool)))
                dsl_arr = (Handle * 1)(pl.dsl)
                dsai = VkDescriptorSetAllocateInfo(ST_DESCRIPTOR_SET_ALLOCATE_INFO, None, pool,
                                                   1, dsl_arr)
                dset = Handle()
                _check("vkAllocateDescriptorSets",
                       vk["vkAllocateDescriptorSets"](dev, byref(dsai), byref(dset)))
                infos = (VkDescriptorBufferInfo * n)(
                    *[VkDescriptorBufferInfo(b.buffer, 0, VK_WHOLE_SIZE) for b in bound])
                writes = (VkWriteDescriptorSet * n)()
                for i in range(n):
                    writes[i] = VkWriteDescriptorSet(
                        ST_WRITE_DESCRIPTOR_SET, None, dset, i, 0, 1,
                        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, None,
                        ctypes.pointer(infos[i]), None)
                vk["vkUpdateDescriptorSets"](dev, n, writes, 0, None)
            if timing:
                qpci = VkQueryPoolCreateInfo(ST_QUERY_POOL_CREATE_INFO, None, 0,
                                             VK_QUERY_TYPE_TIMESTAMP, nts, 0)
                _check("vkCreateQueryPool",
                       vk["vkCreateQueryPool"](dev, byref(qpci), None, byref(qpool)))

            cbai = VkCommandBufferAllocateInfo(ST_COMMAND_BUFFER_ALLOCATE_INFO, None,
                                               self._cmd_pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1)
            _check("vkAllocateCommandBuffers",
                   vk["vkAllocateCommandBuffers"](dev, byref(cbai), byref(cmd)))
            cbbi = VkCommandBufferBeginInfo(ST_COMMAND_BUFFER_BEGIN_INFO, None,
                                            VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, None)
            _check("vkBeginCommandBuffer", vk["vkBeginCommandBuffer"](cmd, byref(cbbi)))
            if timing:
                vk["vkCmdResetQueryPool"](cmd, qpool, 0, nts)
            if memory == "device":
                for hb, db, a in zip(host_bufs, dev_bufs, arrays):
                    cp = VkBufferCopy(0, 0, hb.size)
                    vk["vkCmdCopyBuffer"](cmd, hb.buffer, db.buffer, 1, byref(cp))
                self._barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT)
            vk["vkCmdBindPipeline"](cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl.pipeline)
            if n:
                ds_arr = (Handle * 1)(dset)
                vk["vkCmdBindDescriptorSets"](cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl.layout, 0,
                                              1, ds_arr, 0, None)
            if pc:
                pcb = ctypes.create_string_buffer(pc, len(pc))
                vk["vkCmdPushConstants"](cmd, pl.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, len(pc),
                                         pcb)
            total = warmup + repeat
            for it in range(total):
                if it:
                    # serialise consecutive dispatches (each sees the previous one's writes)
                    self._barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  VK_ACCESS_SHADER_WRITE_BIT,
                                  VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT)
                if timing:
                    vk["vkCmdWriteTimestamp"](cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qpool,
                                              2 * it)
                vk["vkCmdDispatch"](cmd, *grid)
                if timing:
                    vk["vkCmdWriteTimestamp"](cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qpool,
                                              2 * it + 1)
            if memory == "device":
                self._barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                              VK_ACCESS_TRANSFER_READ_BIT)
                for hb, db in zip(host_bufs, dev_bufs):
                    cp = VkBufferCopy(0, 0, hb.size)
                    vk["vkCmdCopyBuffer"](cmd, db.buffer, hb.buffer, 1, byref(cp))
                self._barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                              VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT)
            else:
                self._barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                              VK_ACCESS_HOST_READ_BIT)
            _check("vkEndCommandBuffer", vk["vkEndCommandBuffer"](cmd))

            cmds = (Dispatchable * 1)(cmd)
            si = VkSubmitInfo(ST_SUBMIT_INFO, None, 0, None, None, 1, cmds, 0, None)
            fences = (Handle * 1)(self._fence)
            _check("vkResetFences", vk["vkResetFences"](dev, 1, fences))
            _check("vkQueueSubmit", vk["vkQueueSubmit"](self.queue, 1, byref(si), self._fence))
            _check("vkWaitForFences", vk["vkWaitForFences"](dev, 1, fences, 1, self.timeout_ns))

            outs = []
            for a, hb in zip(arrays, host_bufs):
                o = np.empty_like(a)
                if a.nbytes:
                    ctypes.memmove(o.ctypes.data, hb.ptr, a.nbytes)
                outs.append(o)
            times = None
            if timing:
                res = (c_uint64 * nts)()
                _check("vkGetQueryPoolResults",
                       vk["vkGetQueryPoolResults"](dev, qpool, 0, nts, sizeof(res), res, 8,
                                                   VK_QUERY_RESULT_64_BIT
                                                   | VK_QUERY_RESULT_WAIT_BIT))
                bits = self.timestamp_valid_bits
                mask = (1 << bits) - 1 if bits < 64 else (1 << 64) - 1
                period = float(self._props.limits.timestampPeriod)
                times = [((res[2 * i + 1] - res[2 * i]) & mask) * period
                         for i in range(warmup, total)]
            return outs, times
        finally:
            # after a failed wait the GPU may still use the objects: drain before freeing
            try:
                vk["vkDeviceWaitIdle"](dev)
            except Exception:  # pragma: no cover
                pass
            if cmd.value:
                vk["vkFreeCommandBuffers"](dev, self._cmd_pool, 1, byref(cmd))
            if qpool.value:
                vk["vkDestroyQueryPool"](dev, qpool, None)
            if pool.value:
                vk["vkDestroyDescriptorPool"](dev, pool, None)
            for b in host_bufs + dev_bufs:
                self._destroy_buffer(b)

    def run_compute(self, spirv: bytes, buffers: Sequence[np.ndarray],
                    grid: Tuple[int, int, int], entry: str = "main", *,
                    push_constants: Optional[bytes] = None, timing: bool = False,
                    memory: Optional[str] = None, required_subgroup_size: Optional[int] = None,
                    full_subgroups: bool = False,
                    spec_constants: Optional[Dict[int, Any]] = None):
        """Run one compute dispatch.

        Args:
            spirv: SPIR-V module (bytes, little-endian words) with a GLCompute entry point.
            buffers: numpy arrays; ``buffers[i]`` is bound as a storage buffer at descriptor
                set 0, binding i.  Contents (C-order bytes) are copied in before the dispatch
                and read back after it.  Inputs are not modified.  Zero-sized arrays get a
                4-byte buffer.
            grid: (x, y, z) workgroup counts for vkCmdDispatch.
            entry: entry-point name.
            push_constants: raw bytes for a push-constant block at offset 0 (padded to a
                multiple of 4), e.g. ``np.array([M, N, K], np.uint32).tobytes()``.
            timing: also measure the dispatch with timestamp queries.
            memory: ``"host"`` or ``"device"``; default is the context's (see class doc).
            required_subgroup_size: chain VkPipelineShaderStageRequiredSubgroupSizeCreateInfo.
            full_subgroups: set VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT.
            spec_constants: {constant_id: numpy scalar / Python int(uint32) / bool} for
                specialization constants (value bytes taken from ``np.asarray(v)``).

        Returns:
            A list of new arrays, same dtype/shape as ``buffers``, holding the buffers'
            contents after the dispatch.  With ``timing=True`` returns
            ``(arrays, gpu_time_ns)`` where gpu_time_ns is a float: ticks between two
            timestamps around the dispatch times VkPhysicalDeviceLimits::timestampPeriod.

        Raises:
            VulkanError: a Vulkan call failed (``.name`` is the VkResult name, e.g.
                VK_ERROR_DEVICE_LOST; VK_TIMEOUT if the dispatch outlives ``timeout_s``).
            ValueError: malformed SPIR-V, grid or push constants.
        """
        outs, times = self._execute(spirv, buffers, grid, entry, push_constants, memory, 1, 0,
                                    required_subgroup_size, full_subgroups, spec_constants,
                                    timing)
        if timing:
            return outs, times[0]
        return outs

    def benchmark(self, spirv: bytes, buffers: Sequence[np.ndarray],
                  grid: Tuple[int, int, int], entry: str = "main", *, repeat: int = 20,
                  warmup: int = 3, push_constants: Optional[bytes] = None,
                  memory: str = "device", required_subgroup_size: Optional[int] = None,
                  full_subgroups: bool = False,
                  spec_constants: Optional[Dict[int, Any]] = None):
        """Time ``warmup + repeat`` back-to-back dispatches in one command buffer (each pair
        separated by a compute->compute memory barrier, each bracketed by timestamps).

        Buffers are uploaded once (device-local by default).  Returns
        ``(arrays, times_ns)``: the buffer contents after the last dispatch, and a list of
        ``repeat`` per-dispatch GPU times in nanoseconds (warm-up dispatches excluded).
        Note the dispatches run on the same buffers, so a kernel that accumulates into its
        output will have applied itself ``warmup + repeat`` times.  Raises as run_compute.
        """
        if repeat < 1 or warmup < 0:
            raise ValueError("repeat must be >= 1 and warmup >= 0")
        return self._execute(spirv, buffers, grid, entry, push_constants, memory, repeat,
                             warmup, required_subgroup_size, full_subgroups, spec_constants,
                             True)

    # ---- teardown ----------------------------------------------------------------------

    def close(self):
        """Destroy every Vulkan object this context created (pipelines, pools, fence, device,
        instance).  Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self.device is not None and self.device.value:
            vk, dev = self.vk, self.device
            vk["vkDeviceWaitIdle"](dev)
            for pl in self._pipelines.values():
                self._destroy_pipeline(pl)
            self._pipelines.clear()
            if self._fence is not None:
                vk["vkDestroyFence"](dev, self._fence, None)
            if self._cmd_pool is not None:
                vk["vkDestroyCommandPool"](dev, self._cmd_pool, None)
            vk["vkDestroyDevice"](dev, None)
            self.device = None
        if self.instance is not None and self.instance.value:
            _get_instance_fn(self.instance, "vkDestroyInstance")(self.instance, None)
            self.instance = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):  # best effort
        try:
            self.close()
        except Exception:
            pass


# --------------------------------------------------------------------------------------------
# Module-level helpers
# --------------------------------------------------------------------------------------------

def run_compute(spirv: bytes, buffers: List[np.ndarray], grid: Tuple[int, int, int],
                entry: str = "main", **kwargs) -> List[np.ndarray]:
    """Run one compute dispatch in a fresh VulkanContext (created and destroyed here).

    buffers[i] is bound as a storage buffer at descriptor set 0, binding i (host-visible,
    coherent memory; contents copied in before and read back after the dispatch; the
    returned arrays have the same dtype/shape).  grid = vkCmdDispatch group counts.
    Keyword arguments are those of VulkanContext.run_compute (push_constants, timing, ...);
    with timing=True the result is (arrays, gpu_time_ns).
    Raises VulkanError with the VkResult name on failure.
    """
    with VulkanContext() as ctx:
        return ctx.run_compute(spirv, buffers, grid, entry, **kwargs)


def device_info(device_index: Optional[int] = None) -> Dict[str, Any]:
    """Return VulkanContext.device_info() for a freshly created context: device name, driver
    version, API version, enabled extensions/features and the cooperative-matrix tables
    (``cooperative_matrix_khr``: list of {M, N, K, A, B, C, Result, saturatingAccumulation,
    scope}).  Raises VulkanError/OSError if no Vulkan device can be opened."""
    with VulkanContext(device_index=device_index) as ctx:
        return ctx.device_info()


def format_coopmat_table(rows: List[Dict[str, Any]]) -> str:
    """Format cooperative_matrix_khr rows as a Markdown table."""
    out = ["| M | N | K | A | B | C | Result | sat | scope |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['M']} | {r['N']} | {r['K']} | {r['A']} | {r['B']} | {r['C']} | "
                   f"{r['Result']} | {int(r['saturatingAccumulation'])} | {r['scope']} |")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover
    import json
    info = device_info()
    rows = info.pop("cooperative_matrix_khr")
    print(json.dumps(info, indent=1))
    print(format_coopmat_table(rows))
