"""Build settings shared by the Highway kernel packages (//kernels, //cpu)."""

# HWY_WANT_AVX3_DL: Highway 1.0.3 compiles the AVX3_DL target (AVX-512 + VNNI, VBMI2, BITALG,
# VPCLMULQDQ, VAES) only on request. This machine's best target is AVX3_DL. The f32 kernels gain
# nothing from it over AVX3, but the quantized dot products (kernels/quant*) need VNNI, and every
# kernels/ and cpu/ translation unit must compile the same target set so that ggml_cpu_target_name() names
# what each family really dispatches to. Cost: one more target (about +20% compile time per file).
#
# HWY_COMPILE_ALL_ATTAINABLE: by default Highway compiles only the targets at or above the
# baseline, which on x86-64 includes SCALAR but on aarch64 starts at NEON. With it, SCALAR is
# compiled on every architecture, as the tests (HWY_IS_TEST) compile it, so a test's SCALAR case
# really runs the kernels' scalar code, and GGML_CPU_TARGET=scalar works on Arm too.
KERNEL_DEFINES = [
    "HWY_WANT_AVX3_DL",
    "HWY_COMPILE_ALL_ATTAINABLE",
]

# Tests also define HWY_IS_TEST (Highway's convention: compile all attainable targets) and link
# statically, as Highway's own BUILD does.
TEST_DEFINES = KERNEL_DEFINES + ["HWY_IS_TEST"]

HWY = "@com_github_google_highway//:hwy"

HWY_CONTRIB = "@com_github_google_highway//:hwy_contrib"

