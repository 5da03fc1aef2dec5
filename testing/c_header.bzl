"""c_header_test: a public `extern "C"` header compiles alone as C11 (pedantic, warnings as errors)."""

def c_header_test(name, header, deps):
    """One C translation unit that includes only `header`, built and run as a test.

    Args:
      name: the test's name.
      header: the header's workspace path, as it is #included ("ggml/types.h").
      deps: the library that exports the header (for its include path).
    """
    src = name + ".c"
    native.genrule(
        name = name + "_src",
        outs = [src],
        cmd = "printf '#include \"%s\"\\nint main(void) { return 0; }\\n' > $@" % header,
        testonly = True,
    )
    native.cc_test(
        name = name,
        srcs = [src],
        copts = ["-std=c11", "-pedantic-errors", "-Wall", "-Wextra", "-Werror"],
        deps = deps,
        size = "small",
    )
