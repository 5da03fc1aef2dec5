"""cc_fuzz_target: a libFuzzer fuzz target (LLVMFuzzerTestOneInput), built with --config=fuzz.

Tagged `manual`, so `bazel build //...` and `bazel test //...` with the default gcc toolchain
(which has no -fsanitize=fuzzer) skip it; tools/fuzz/run_fuzzers.sh builds every target by
label, in its own output base, with `--config=fuzz` (clang-14, ASan + UBSan, see .bazelrc).
Its seed corpus is testdata/fuzz/<name>/ (tools/fuzz/make_seeds.py).
"""

def cc_fuzz_target(name, srcs, deps = [], data = [], tags = [], **kwargs):
    native.cc_binary(
        name = name,
        srcs = srcs,
        deps = deps,
        data = data,
        testonly = True,
        # libFuzzer's main; every object already carries -fsanitize=fuzzer-no-link.
        linkopts = ["-fsanitize=fuzzer"],
        tags = tags + ["manual", "fuzz_target"],
        **kwargs
    )
